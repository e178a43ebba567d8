"""The partner rotation, from the rule's own words: four players at one table, each of the other three opposite
you in turn, four rounds a partner, twelve rounds a cycle; eight players at two tables, each player partnering each
of the other seven in turn, four rounds a partner, 28 rounds a cycle; every round's score kept per player."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from launcher.game.rotation import MAX_CYCLES, Rotation, RoundScore, Tournament, TournamentError

FOUR = ["Ann", "Bo", "Cy", "Di"]
EIGHT = [*FOUR, "Ed", "Flo", "Gus", "Hu"]


def partners_by_round(rotation: Rotation) -> list[set[frozenset[str]]]:
    return [
        {frozenset(team) for seating in rotation.seating(n) for team in seating.teams}
        for n in range(1, rotation.rounds + 1)
    ]


@pytest.mark.parametrize(("players", "tables", "rounds"), [(FOUR, ["kitchen"], 12), (EIGHT, ["kitchen", "garden"], 28)])
def test_each_pair_partners_exactly_once_per_cycle_for_four_rounds(
    players: list[str], tables: list[str], rounds: int
) -> None:
    rotation = Rotation.of(players, tables)
    assert rotation.rounds == rounds
    by_round = partners_by_round(rotation)
    rounds_together = Counter(pair for teams in by_round for pair in teams)
    assert set(rounds_together) == {frozenset(p) for p in itertools.combinations(players, 2)}
    assert set(rounds_together.values()) == {4}
    for start in range(0, rounds, 4):  # the partner changes only every four rounds
        assert all(by_round[start + i] == by_round[start] for i in range(4))


def test_four_players_the_other_three_sit_opposite_the_first_in_turn() -> None:
    rotation = Rotation.of(FOUR, ["kitchen"])
    opposite_ann = [rotation.seats_at("kitchen", n).seats[2] for n in (1, 5, 9)]
    assert opposite_ann == ["Bo", "Cy", "Di"]
    for n in range(1, 13):
        (seating,) = rotation.seating(n)
        assert sorted(seating.seats) == sorted(FOUR)


def test_eight_players_everyone_plays_every_round_at_one_of_the_two_tables() -> None:
    rotation = Rotation.of(EIGHT, ["kitchen", "garden"])
    for n in range(1, 29):
        seated = [p for seating in rotation.seating(n) for p in seating.seats]
        assert sorted(seated) == sorted(EIGHT)
        assert [s.table for s in rotation.seating(n)] == ["kitchen", "garden"]


def test_every_rounds_points_are_kept_per_player_and_summed() -> None:
    tournament = Tournament("t1", Rotation.of(FOUR, ["kitchen"]))
    for n in range(1, 13):
        seats = tournament.rotation.seats_at("kitchen", n).seats
        assert tournament.next_round("kitchen") == n
        # The first seat's team wins every round: it collects 10 points each.
        tournament.add(RoundScore("kitchen", n, {seats[0]: 10, seats[2]: 10, seats[1]: 0, seats[3]: 0}))
    assert tournament.next_round("kitchen") == 13  # the next cycle starts (tests/test_rotation_design.py)
    table = {s.player: (s.points, s.rounds) for s in tournament.standings()}
    assert table["Ann"] == (120, 12)  # Ann sits in seat 0 every round
    assert sum(points for points, _ in table.values()) == 12 * 20
    assert tournament.standings()[0].player == "Ann"


def test_a_round_is_kept_once_by_its_id_and_another_result_for_it_is_refused() -> None:
    tournament = Tournament("t1", Rotation.of(FOUR, ["kitchen"]))
    score = RoundScore("kitchen", 1, {"Ann": 5, "Bo": 5, "Cy": 0, "Di": 0})
    assert tournament.add(score) is True
    assert tournament.add(RoundScore("kitchen", 1, dict(score.points))) is False
    with pytest.raises(TournamentError) as refused:
        tournament.add(RoundScore("kitchen", 1, {"Ann": 6, "Bo": 5, "Cy": 0, "Di": 0}))
    assert refused.value.code == "round_scored"
    assert len(tournament.rounds) == 1


@pytest.mark.parametrize(
    ("score", "code"),
    [
        (RoundScore("kitchen", 1, {"Ann": 1, "Bo": 1, "Cy": 1, "Ed": 1}), "wrong_players"),
        (RoundScore("kitchen", 12 * MAX_CYCLES + 1, {"Ann": 1, "Bo": 1, "Cy": 1, "Di": 1}), "bad_round"),
        (RoundScore("kitchen", 0, {"Ann": 1, "Bo": 1, "Cy": 1, "Di": 1}), "bad_round"),
        (RoundScore("garden", 1, {"Ann": 1, "Bo": 1, "Cy": 1, "Di": 1}), "unknown_table"),
        (RoundScore("kitchen", 1, {"Ann": True, "Bo": 1, "Cy": 1, "Di": 1}), "bad_points"),
        (RoundScore("kitchen", 1, {"Ann": 10**9, "Bo": 1, "Cy": 1, "Di": 1}), "bad_points"),
    ],
)
def test_a_round_that_does_not_fit_the_rotation_is_refused_by_code(score: RoundScore, code: str) -> None:
    tournament = Tournament("t1", Rotation.of(FOUR, ["kitchen"]))
    with pytest.raises(TournamentError) as refused:
        tournament.add(score)
    assert refused.value.code == code
    assert tournament.rounds == []


@pytest.mark.parametrize(
    ("players", "tables", "code"),
    [
        (FOUR[:3], ["kitchen"], "seat_count"),
        (FOUR, ["kitchen", "garden"], "seat_count"),
        (["Ann", "ann", "Cy", "Di"], ["kitchen"], "same_name"),
        (["Ann", " ", "Cy", "Di"], ["kitchen"], "bad_name"),
        (FOUR, [], "bad_tables"),
        (EIGHT, ["kitchen", "kitchen"], "bad_tables"),
    ],
)
def test_a_setup_that_cannot_be_seated_is_refused_by_code(players: list[str], tables: list[str], code: str) -> None:
    with pytest.raises(TournamentError) as refused:
        Rotation.of(players, tables)
    assert refused.value.code == code
