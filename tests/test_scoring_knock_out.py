"""Knock-out play: the round goes on after the first player goes out, until only one holds cards: that player lost
the round, adds their hand, and shuffles and deals the next one. Whoever reaches the target has busted: the game
ends, the lowest total wins and the bust player is named the loser. Expected values are worked out from the rule."""

import json

import pytest

from launcher.game.cards import GameError
from launcher.game.rulesets import HouseRules, Ruleset
from launcher.game.scoring import Game, Mode
from tests.saved_game import round_trip

FOUR = ["Ann", "Bob", "Cy", "Dee"]


def knock_out(target: int = 100, **kwargs) -> Game:
    return Game(FOUR, Mode.KNOCK_OUT, target, **kwargs)


def test_only_the_last_player_holding_cards_scores_and_the_first_to_bust_loses():
    game = knock_out(100)
    # Bob went out first, then Cy, then Ann: Dee is left holding 2 × 7 and a Hit 2 (34 points).
    first = game.score_round(None, {"Dee": {"7": 2, "hit_2": 1}}, order=["Bob", "Cy", "Ann", "Dee"])
    assert first.points == {"Ann": 0, "Bob": 0, "Cy": 0, "Dee": 34}
    assert first.entry.winner == "Bob" and first.entry.order == ("Bob", "Cy", "Ann", "Dee")
    assert game.totals == {"Ann": 0, "Bob": 0, "Cy": 0, "Dee": 34} and not game.over
    assert game.dealer == "Dee"  # the loser shuffles and deals the next round
    game.score_round("Ann", {"Bob": 80}, order=["Ann", "Dee", "Cy", "Bob"])  # winner given: the first out
    assert game.totals == {"Ann": 0, "Bob": 80, "Cy": 0, "Dee": 34} and game.dealer == "Bob"
    assert game.scoreboard()["losers"] == []
    game.score_round(None, {"Dee": 70}, order=["Cy", "Ann", "Bob", "Dee"])
    assert game.totals == {"Ann": 0, "Bob": 80, "Cy": 0, "Dee": 104}
    assert game.over and game.losers == ("Dee",) and game.winners == ("Ann", "Cy")  # the lowest totals share
    board = game.scoreboard()
    assert (board["losers"], board["winners"], board["mode"]) == (["Dee"], ["Ann", "Cy"], "knock_out")
    assert [r["order"] for r in board["rounds"]] == [
        ["Bob", "Cy", "Ann", "Dee"],
        ["Ann", "Dee", "Cy", "Bob"],
        ["Cy", "Ann", "Bob", "Dee"],
    ]
    places = {player: stats["places"] for player, stats in board["statistics"].items()}
    assert places == {"Ann": [3, 1, 2], "Bob": [1, 4, 3], "Cy": [2, 3, 1], "Dee": [4, 2, 4]}
    assert {p: s["rounds_won"] for p, s in board["statistics"].items()} == {"Ann": 1, "Bob": 1, "Cy": 1, "Dee": 0}
    with pytest.raises(GameError, match=r"round 4: the game is already over"):
        game.score_round(None, {"Dee": 1}, order=FOUR)
    round_trip(game)


def test_two_players_knock_out_is_one_out_and_one_left():
    game = Game(["Ann", "Bob"], Mode.KNOCK_OUT, 50)
    game.score_round(None, {"Bob": 60}, order=["Ann", "Bob"])
    assert game.over and game.losers == ("Bob",) and game.winners == ("Ann",)


def test_a_reshuffled_knock_out_round_doubles_the_losers_hand_with_the_house_rule():
    game = knock_out(500, house_rules=HouseRules(reshuffle_doubles=True))
    result = game.score_round(None, {"Cy": 25}, True, order=["Ann", "Bob", "Dee", "Cy"])
    assert result.points["Cy"] == 50


def test_the_red_zero_in_knock_out_is_the_losers():
    game = Game(FOUR, Mode.KNOCK_OUT, 500, ruleset=Ruleset.CLASSIC, house_rules=HouseRules(red_zero_100=True))
    result = game.score_round(None, {"Dee": {"0": 1, "5": 1}}, order=FOUR, red_zero="Dee")
    assert result.points["Dee"] == 105


@pytest.mark.parametrize(
    ("winner", "hands", "order", "message"),
    [
        (None, {"Dee": 5}, ["Ann", "Bob", "Dee"], "the order misses Cy"),
        (None, {"Dee": 5}, ["Ann", "Bob", "Bob", "Dee"], "Bob is twice in the order"),
        (None, {"Dee": 5}, ["Ann", "Bob", "Cy", "Dee", "Zed"], "unknown player 'Zed'"),
        (None, {"Dee": 5}, "Ann, Bob, Cy, Dee", "the order lists every player still in the game"),
        (None, {"Dee": 5}, None, "knock-out play scores a round by its finishing order"),
        (None, {"Dee": 5, "Ann": 3}, FOUR, "a hand for Ann, but in knock-out play only the loser holds cards (Dee"),
        (None, {"Cy": 5}, FOUR, "a hand for Cy, but in knock-out play only the loser holds cards (Dee"),
        (None, {}, FOUR, "no hand for Dee, the loser"),
        ("Bob", {"Dee": 5}, FOUR, "winner = 'Bob', but Ann went out first"),
        ("Zed", {"Dee": 5}, FOUR, "unknown player 'Zed'"),
        (None, {"Dee": {"wild_all_hit": 3}}, FOUR, "Dee: 3 × Wild All Hit"),
    ],
)
def test_an_inconsistent_knock_out_round_is_refused_by_name_and_nothing_stored(winner, hands, order, message):
    game = knock_out()
    with pytest.raises(GameError) as caught:
        game.score_round(winner, hands, order=order)
    assert message in str(caught.value)
    assert game.rounds == () and game.totals == dict.fromkeys(FOUR, 0)


def test_other_modes_take_no_order_and_need_a_winner():
    game = Game(FOUR, Mode.LOWEST_TOTAL)
    with pytest.raises(GameError, match="the finishing order is for knock-out play; this game is scored lowest total"):
        game.score_round("Ann", {"Bob": 1, "Cy": 1, "Dee": 1}, order=FOUR)
    with pytest.raises(GameError, match="unknown player None"):
        game.score_round(None, {"Bob": 1, "Cy": 1, "Dee": 1})


def test_knock_out_is_played_by_players_not_teams():
    with pytest.raises(GameError, match="knock-out play is for players, not teams"):
        knock_out(teams={"Red": ["Ann", "Cy"], "Blue": ["Bob", "Dee"]})


def test_undo_and_correction_replay_the_finishing_orders_and_the_deal():
    game = knock_out(100)
    game.score_round(None, {"Dee": 30}, order=["Ann", "Bob", "Cy", "Dee"])
    game.score_round(None, {"Cy": 90}, order=["Bob", "Ann", "Dee", "Cy"])
    assert game.dealer == "Cy" and not game.over
    # Round 1 was wrong: Cy, not Dee, was left holding the 30 points. Now Cy reaches 120 in round 2 and busts.
    game.edit_round(0, None, {"Cy": 30}, order=["Ann", "Bob", "Dee", "Cy"])
    assert game.totals == {"Ann": 0, "Bob": 0, "Cy": 120, "Dee": 0}
    assert game.over and game.losers == ("Cy",) and game.winners == ("Ann", "Bob", "Dee")
    game.undo_last()
    assert not game.over and game.losers == () and game.dealer == "Cy"
    assert game.statistics()["Cy"].places == (4,)
    round_trip(game)


def test_a_game_stored_before_finishing_orders_and_last_cards_still_loads():
    game = Game(FOUR, Mode.LOWEST_TOTAL, 300)
    game.score_round("Ann", {"Bob": 10, "Cy": 20, "Dee": 5})
    data = json.loads(json.dumps(game.to_dict()))
    for entry in data["rounds"]:
        del entry["order"], entry["last_card"]
    del data["final"]
    old = Game.from_dict(data)
    assert old.totals == {"Ann": 0, "Bob": 10, "Cy": 20, "Dee": 5}
    assert old.scoreboard()["rounds"][0]["order"] is None and old.scoreboard()["rounds"][0]["last_card"] is None
    assert old.to_dict() == game.to_dict()
