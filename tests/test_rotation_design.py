"""The balanced rotation (issue #46 items 5 and 6): for 4, 8, 12 and 16 players at 1 to 4 tables, each pair of
players partners in exactly one stage of a cycle and sits as opponents in exactly two; a stage is four rounds; the
cycles follow one another, numbered on, with every player's points carried from one to the next."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from launcher.game.rotation import MAX_CYCLES, Rotation, RoundScore, Tournament, TournamentError

NAMES = [f"P{i:02}" for i in range(16)]
TABLES = ["kitchen", "garden", "study", "attic"]
SIZES = [(4 * t, TABLES[:t]) for t in range(1, 5)]


def meetings(rotation: Rotation, first: int, last: int) -> tuple[Counter[frozenset[str]], Counter[frozenset[str]]]:
    """Rounds each pair spends as partners and as opponents, from round `first` to `last`."""
    partners: Counter[frozenset[str]] = Counter()
    opponents: Counter[frozenset[str]] = Counter()
    for number in range(first, last + 1):
        for seating in rotation.seating(number):
            (a, c), (b, d) = seating.teams
            partners.update([frozenset((a, c)), frozenset((b, d))])
            opponents.update(frozenset(pair) for pair in itertools.product((a, c), (b, d)))
    return partners, opponents


@pytest.mark.parametrize(("count", "tables"), SIZES, ids=[f"{n}-players" for n, _ in SIZES])
def test_each_pair_partners_in_one_stage_and_opposes_in_two(count: int, tables: list[str]) -> None:
    players = NAMES[:count]
    rotation = Rotation.of(players, tables)
    assert rotation.rounds == 4 * (count - 1)  # n - 1 stages of four rounds
    for number in range(1, rotation.rounds + 1):  # everyone plays every round, once, at the tables in order
        seated = [p for seating in rotation.seating(number) for p in seating.seats]
        assert sorted(seated) == players
        assert [s.table for s in rotation.seating(number)] == tables
    partners, opponents = meetings(rotation, 1, rotation.rounds)
    every_pair = {frozenset(pair) for pair in itertools.combinations(players, 2)}
    assert set(partners) == every_pair and set(partners.values()) == {4}  # one stage of four rounds
    assert set(opponents) == every_pair and set(opponents.values()) == {8}  # two stages of four rounds
    for start in range(1, rotation.rounds + 1, 4):  # the seats change only between stages
        assert all(rotation.seating(start + i) == rotation.seating(start) for i in range(4))


@pytest.mark.parametrize(("count", "tables"), SIZES, ids=[f"{n}-players" for n, _ in SIZES])
def test_the_first_player_partners_the_others_in_turn(count: int, tables: list[str]) -> None:
    rotation = Rotation.of(NAMES[:count], tables)
    partner = [rotation.seats_at(tables[0], 1 + 4 * stage).seats[2] for stage in range(count - 1)]
    assert partner == NAMES[1:count]


def test_eight_players_no_pair_is_kept_apart_nor_meets_more_than_twice() -> None:
    """Issue #46: the circle method left 7 pairs never opposed and had 7 pairs opposed in 16 of 28 rounds."""
    rotation = Rotation.of(NAMES[:8], TABLES[:2])
    _, opponents = meetings(rotation, 1, 28)
    assert len(opponents) == 28 and max(opponents.values()) == 8


@pytest.mark.parametrize(("count", "tables"), SIZES, ids=[f"{n}-players" for n, _ in SIZES])
def test_two_full_cycles_are_played_with_the_totals_carried_on(count: int, tables: list[str]) -> None:
    players = NAMES[:count]
    tournament = Tournament("t1", Rotation.of(players, tables))
    per_cycle = tournament.rotation.rounds
    expected = dict.fromkeys(players, 0)
    for number in range(1, 2 * per_cycle + 1):
        for seating in tournament.rotation.seating(number):
            assert tournament.next_round(seating.table) == number
            # The second seat's team wins rounds whose number is a multiple of three; the sum differs each time.
            won = 10 + number % 7
            winners = seating.teams[number % 3 == 0]
            points = {p: (won if p in winners else 0) for p in seating.seats}
            for p, v in points.items():
                expected[p] += v
            assert tournament.add(RoundScore(seating.table, number, points)) is True
        cycle, within = tournament.rotation.cycle_of(number)
        assert (cycle, within) == (1 + (number - 1) // per_cycle, 1 + (number - 1) % per_cycle)
    assert all(tournament.next_round(t) == 2 * per_cycle + 1 for t in tables)  # the third cycle is next
    assert tournament.rotation.cycle_of(2 * per_cycle + 1) == (3, 1)
    standings = tournament.standings()
    assert {s.player: s.points for s in standings} == expected
    assert {s.rounds for s in standings} == {2 * per_cycle}
    assert [s.points for s in standings] == sorted(expected.values(), reverse=True)
    # The second cycle seats everyone as the first did: over both, each pair partners 8 rounds and opposes 16.
    partners, opponents = meetings(tournament.rotation, 1, 2 * per_cycle)
    assert set(partners.values()) == {8} and set(opponents.values()) == {16}


def test_the_cycles_end_after_the_last_and_a_round_beyond_is_refused() -> None:
    tournament = Tournament("t1", Rotation.of(NAMES[:4], ["kitchen"]))
    last = 12 * MAX_CYCLES
    for number in range(1, last + 1):
        seats = tournament.rotation.seats_at("kitchen", number).seats
        tournament.add(RoundScore("kitchen", number, dict.fromkeys(seats, 1)))
    assert tournament.next_round("kitchen") is None
    assert tournament.rotation.cycle_of(last) == (MAX_CYCLES, 12)
    for number in (0, last + 1, 10**9):
        with pytest.raises(TournamentError) as refused:
            tournament.add(RoundScore("kitchen", number, dict.fromkeys(NAMES[:4], 1)))
        assert refused.value.code == "bad_round"
