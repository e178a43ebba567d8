"""How a game ends: elimination played to the last player standing (beside the head-to-head final), and the loser
named in the modes where reaching the target means having busted. Expected values are worked out from the rules."""

import pytest

from launcher.game.cards import GameError
from launcher.game.rulesets import HouseRules
from launcher.game.scoring import Game, Mode
from tests.saved_game import round_trip

THREE = ["Ann", "Bob", "Cy"]
FOUR = ["Ann", "Bob", "Cy", "Dee"]


# --- elimination to the last player standing ---------------------------------------------------------------------


def test_elimination_to_the_last_standing_plays_on_with_two_left():
    game = Game(FOUR, Mode.ELIMINATION, 100, final="last_standing")
    game.score_round("Ann", {"Bob": 40, "Cy": 10, "Dee": 120})
    assert game.eliminated == {"Dee": 0}
    game.score_round("Cy", {"Ann": 20, "Bob": 70})
    assert game.eliminated == {"Dee": 0, "Bob": 1} and game.active_sides == ("Ann", "Cy")
    assert not game.final  # no head-to-head final: the two play on
    game.score_round("Cy", {"Ann": 5})  # with the next-round final, Cy would have won here
    assert not game.over and game.totals["Ann"] == 25
    game.score_round("Ann", {"Cy": 95})
    assert game.eliminated == {"Dee": 0, "Bob": 1, "Cy": 3}
    assert game.over and game.winners == ("Ann",)
    board = game.scoreboard()
    assert (board["final_rule"], board["final"], board["losers"]) == ("last_standing", False, [])
    assert round_trip(game).final_rule == "last_standing"


def test_with_two_left_whoever_reaches_the_target_is_out_and_the_other_wins_whatever_won_the_round():
    game = Game(THREE, Mode.ELIMINATION, 100, final="last_standing")
    game.score_round("Ann", {"Bob": 10, "Cy": 100})
    game.score_round("Bob", {"Ann": 100})  # Ann 100: out
    assert game.over and game.winners == ("Bob",)
    game.undo_last()
    game.score_round("Ann", {"Bob": 95})  # Bob 105: out, Ann is the last standing
    assert game.winners == ("Ann",)


def test_the_last_one_standing_is_the_default_ending_and_a_stored_game_keeps_its_own():
    # The seeds: "剩下的人再繼續比賽，直至最後一人勝出為止"; "先到约定分数者淘汰，最后剩下的人获胜".
    game = Game(FOUR, Mode.ELIMINATION, 100)
    assert game.final_rule == "last_standing" and game.to_dict()["final"] == "last_standing"
    assert game.scoreboard()["final_rule"] == "last_standing"
    head_to_head = Game(FOUR, Mode.ELIMINATION, 100, final="next_round")  # the final stays a choice
    assert Game.from_dict(head_to_head.to_dict()).final_rule == "next_round"
    data = game.to_dict()
    del data["final"]  # a game stored before the choice existed was played to the head-to-head final
    assert Game.from_dict(data).final_rule == "next_round"
    assert Game(FOUR, Mode.LOWEST_TOTAL).to_dict()["final"] is None
    lowest = Game(FOUR, Mode.LOWEST_TOTAL).to_dict()
    del lowest["final"]
    assert Game.from_dict(lowest).final_rule is None


@pytest.mark.parametrize(
    ("mode", "final", "message"),
    [
        (Mode.LOWEST_TOTAL, "last_standing", "final = 'last_standing' is a setting of elimination; this game is"),
        (Mode.WINNER_COLLECTS, "next_round", "final = 'next_round' is a setting of elimination"),
        (Mode.ELIMINATION, "sudden_death", "final = 'sudden_death' is not accepted; expected one of next_round, last"),
        (Mode.ELIMINATION, 1, "final = 1 is not accepted"),
    ],
)
def test_the_final_setting_is_refused_by_name_outside_elimination_or_unknown(mode, final, message):
    with pytest.raises(GameError) as caught:
        Game(FOUR, mode, 100, final=final)
    assert message in str(caught.value)


# --- the loser of a game where reaching the target means busting ----------------------------------------------------


def test_lowest_total_names_who_reached_the_target_the_loser():
    game = Game(THREE, Mode.LOWEST_TOTAL, 100)
    game.score_round("Ann", {"Bob": 50, "Cy": 6})
    assert game.losers == () and game.scoreboard()["losers"] == []
    game.score_round("Cy", {"Ann": 30, "Bob": 60})
    assert game.winners == ("Cy",) and game.losers == ("Bob",)
    game.undo_last()
    game.score_round("Ann", {"Bob": 50, "Cy": 94})  # both reach 100 in the same round
    assert game.winners == ("Ann",) and game.losers == ("Bob", "Cy")
    round_trip(game)


def test_sides_that_bust_together_with_equal_lowest_totals_win_and_nobody_is_the_loser():
    teams = {"Red": ["Ann", "Cy"], "Blue": ["Bob", "Dee"]}
    game = Game(FOUR, Mode.LOWEST_TOTAL, 50, teams)
    game.score_round("Ann", {"Bob": 60, "Cy": 60, "Dee": 0})
    assert game.totals == {"Red": 60, "Blue": 60}
    assert game.winners == ("Red", "Blue") and game.losers == ()


def test_winner_collects_and_elimination_name_no_loser():
    collects = Game(THREE, Mode.WINNER_COLLECTS, 50)
    collects.score_round("Ann", {"Bob": 30, "Cy": 30})
    assert collects.over and collects.losers == ()
    elimination = Game(THREE, Mode.ELIMINATION, 50, final="next_round")
    elimination.score_round("Ann", {"Bob": 60, "Cy": 0})
    elimination.score_round("Cy", {"Ann": 10})
    assert elimination.over and elimination.losers == ()


def test_with_the_house_rule_only_the_highest_of_those_who_bust_together_loses():
    # Seed rule sheets: "先暴500分者為輸家" — one loser; when two pass the target in one round, the higher total.
    one = Game(FOUR, Mode.LOWEST_TOTAL, 100, house_rules=HouseRules(highest_bust_loses=True))
    one.score_round("Ann", {"Bob": 120, "Cy": 150, "Dee": 10})
    assert one.winners == ("Ann",) and one.losers == ("Cy",)
    tied = Game(FOUR, Mode.KNOCK_OUT, 100, house_rules=HouseRules(highest_bust_loses=True))
    tied.score_round(None, {"Dee": 130}, order=["Ann", "Bob", "Cy", "Dee"])
    assert tied.losers == ("Dee",)
    every = Game(FOUR, Mode.LOWEST_TOTAL, 100)
    every.score_round("Ann", {"Bob": 120, "Cy": 150, "Dee": 10})
    assert every.losers == ("Bob", "Cy")  # without the rule, everyone who reached the target
