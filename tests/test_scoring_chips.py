"""Chip mode: the losers of a round pay the winner in chips, each their own hand's points, and the chips are counted
over the rounds. The ledger is zero-sum. A side whose balance falls to minus the target is bust: the game ends, the
highest balance wins and the bust side is named the loser. Expected values are worked out from the rule."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.game.cards import UNO_ATTACK, GameError
from launcher.game.rulesets import HouseRules
from launcher.game.scoring import Game, Mode

THREE = ["Ann", "Bob", "Cy"]
FOUR = ["Ann", "Bob", "Cy", "Dee"]


def test_each_loser_pays_the_winner_their_hand_until_one_is_bust():
    game = Game(THREE, Mode.CHIPS, 100)
    first = game.score_round("Ann", {"Bob": 30, "Cy": {"hit_2": 1}})
    assert first.points == {"Ann": 50, "Bob": -30, "Cy": -20}
    game.score_round("Bob", {"Ann": 10, "Cy": 85})
    assert game.totals == {"Ann": 40, "Bob": 65, "Cy": -105}
    assert game.over and game.winners == ("Bob",) and game.losers == ("Cy",)
    board = game.scoreboard()
    assert (board["mode"], board["winners"], board["losers"]) == ("chips", ["Bob"], ["Cy"])
    restored = Game.from_dict(json.loads(json.dumps(game.to_dict())))
    assert restored.scoreboard() == board


def test_a_balance_of_exactly_minus_the_target_is_bust():
    game = Game(THREE, Mode.CHIPS, 50)
    game.score_round("Ann", {"Bob": 49, "Cy": 0})
    assert not game.over and game.totals["Bob"] == -49
    game.score_round("Cy", {"Ann": 0, "Bob": 1})
    assert game.over and game.losers == ("Bob",) and game.winners == ("Ann",)  # Ann 49, Cy 1


def test_several_bust_at_once_and_the_highest_balances_share_the_win():
    game = Game(FOUR, Mode.CHIPS, 50)
    game.score_round("Ann", {"Bob": 60, "Cy": 55, "Dee": 0})
    assert game.losers == ("Bob", "Cy") and game.winners == ("Ann",)
    game.undo_last()
    game.score_round("Ann", {"Bob": 30, "Cy": 0, "Dee": 0})
    game.score_round("Cy", {"Ann": 0, "Bob": 30, "Dee": 0})
    assert game.totals == {"Ann": 30, "Bob": -60, "Cy": 30, "Dee": 0}
    assert game.losers == ("Bob",) and game.winners == ("Ann", "Cy")


def test_teams_pay_as_teams_and_the_winners_partners_cards_count_for_nothing():
    game = Game(FOUR, Mode.CHIPS, 100, {"Red": ["Ann", "Cy"], "Blue": ["Bob", "Dee"]})
    result = game.score_round("Ann", {"Bob": 30, "Cy": 25, "Dee": 40})
    assert result.points == {"Red": 70, "Blue": -70}
    game.score_round("Dee", {"Ann": 20, "Bob": 5, "Cy": 20})
    assert game.totals == {"Red": 30, "Blue": -30}
    game.score_round("Bob", {"Ann": 80, "Cy": 50, "Dee": 0})
    assert game.totals == {"Red": -100, "Blue": 100}
    assert game.losers == ("Red",) and game.winners == ("Blue",)


def test_a_reshuffled_round_doubles_both_sides_of_the_ledger():
    game = Game(THREE, Mode.CHIPS, 500, house_rules=HouseRules(reshuffle_doubles=True))
    assert game.score_round("Ann", {"Bob": 30, "Cy": 20}, True).points == {"Ann": 100, "Bob": -60, "Cy": -40}


def test_a_refused_round_changes_no_balance():
    game = Game(THREE, Mode.CHIPS)
    game.score_round("Ann", {"Bob": 30, "Cy": 20})
    before = game.to_dict()
    with pytest.raises(GameError, match="Ann won the round, so Ann's hand must be empty"):
        game.score_round("Ann", {"Ann": 5, "Bob": 30, "Cy": 20})
    assert game.to_dict() == before


# --- the ledger is zero-sum, whatever is scored, undone or corrected -------------------------------------------------

CARDS = [kind.id for kind in UNO_ATTACK.kinds for _ in range(kind.count)]
POINTS = {kind.id: kind.points for kind in UNO_ATTACK.kinds}


@st.composite
def rounds(draw):
    winner = draw(st.sampled_from(FOUR))
    others = [p for p in FOUR if p != winner]
    picks = draw(st.lists(st.integers(0, len(CARDS) - 1), unique=True, max_size=12))
    hands: dict[str, dict[str, int] | int] = {p: {} for p in others}
    for n, card in enumerate(picks):
        hand = hands[others[n % 3]]
        hand[CARDS[card]] = hand.get(CARDS[card], 0) + 1
    for player in others:
        if draw(st.booleans()):
            hands[player] = draw(st.integers(0, 100))
    return winner, hands, draw(st.booleans())


def value(hand) -> int:
    return hand if isinstance(hand, int) else sum(POINTS[k] * n for k, n in hand.items())


OPERATIONS = st.one_of(
    st.tuples(st.just("score"), rounds()),
    st.tuples(st.just("undo"), st.none()),
    st.tuples(st.just("edit"), st.tuples(st.integers(0, 20), rounds())),
)


@settings(max_examples=120, deadline=None)
@given(doubling=st.booleans(), ops=st.lists(OPERATIONS, max_size=15))
def test_the_chips_always_sum_to_zero_and_equal_the_replay_of_the_rounds(doubling, ops):
    game = Game(FOUR, Mode.CHIPS, 100_000, house_rules=HouseRules(reshuffle_doubles=doubling))
    played = []
    for name, arg in ops:
        if name == "score":
            game.score_round(*arg)
            played.append(arg)
        elif name == "undo" and played:
            game.undo_last()
            played.pop()
        elif name == "edit" and played:
            index = arg[0] % len(played)
            game.edit_round(index, *arg[1])
            played[index] = arg[1]
        expected = dict.fromkeys(FOUR, 0)
        for winner, hands, reshuffled in played:
            factor = 2 if doubling and reshuffled else 1
            for player, hand in hands.items():
                expected[player] -= factor * value(hand)
                expected[winner] += factor * value(hand)
        assert game.totals == expected
        assert sum(game.totals.values()) == 0
        assert all(sum(r.points.values()) == 0 for r in game.rounds)


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(rounds(), max_size=12))
def test_a_chip_game_ends_at_the_first_bust_and_the_bust_never_wins(ops):
    game = Game(FOUR, Mode.CHIPS, 120)
    for entry in ops:
        if game.over:
            break
        game.score_round(*entry)
        busted = [p for p, total in game.totals.items() if total <= -120]
        assert game.over == bool(busted)
        assert list(game.losers) == busted
        assert not set(game.losers) & set(game.winners)
        if game.over:
            top = max(game.totals.values())
            assert list(game.winners) == [p for p in FOUR if game.totals[p] == top]
