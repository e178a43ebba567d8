"""Team play scored as winner collects, from the Chinese rule sheets' words: team play needs a scoring game;
partners sit apart; once any player has played out their cards the score is counted per team, each team's score
being the points of all its members' hands together; and in the scoring game the points left in the others' hands
all go to the winner. So the team of whoever went out collects every member's hand of every other team, and the
winner's partners' hands are their own team's, not the others'. Expected values are worked out by hand."""

import pytest

from launcher.game.cards import GameError
from launcher.game.rulesets import HouseRules
from launcher.game.scoring import Game, Mode
from tests.saved_game import round_trip

FOUR = ["Ann", "Bob", "Cy", "Dee"]
SIX = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]


def test_whichever_partner_goes_out_the_team_collects_every_hand_of_the_other_team():
    game = Game(FOUR, Mode.WINNER_COLLECTS, 300, {"Red": ["Ann", "Cy"], "Blue": ["Bob", "Dee"]})
    # Cy goes out: Blue's score is Bob's 30 and Dee's 50 + 7 + 7; Ann's 12 is Red's own, collected by nobody.
    first = game.score_round("Cy", {"Ann": 12, "Bob": 30, "Dee": {"wild": 1, "7": 2}})
    assert first.points == {"Red": 94, "Blue": 0}
    # Ann goes out the next round: the same team collects again, counted per team.
    second = game.score_round("Ann", {"Bob": {"skip": 1}, "Cy": 40, "Dee": 9})
    assert second.points == {"Red": 29, "Blue": 0}
    assert game.totals == {"Red": 123, "Blue": 0}
    stats = game.statistics()
    assert (stats["Ann"].rounds_won, stats["Cy"].rounds_won) == (1, 1)
    round_trip(game)


def test_with_three_teams_the_winning_team_collects_both_other_teams_totals():
    teams = {"Red": ["Ann", "Dee"], "Blue": ["Bob", "Eve"], "Gold": ["Cy", "Fay"]}
    game = Game(SIX, Mode.WINNER_COLLECTS, 500, teams)
    result = game.score_round("Eve", {"Ann": 10, "Bob": 99, "Cy": 20, "Dee": 5, "Fay": {"wild_all_hit": 1}})
    # Red 10 + 5, Gold 20 + 50; Bob's 99 is Eve's partner's.
    assert result.points == {"Red": 0, "Blue": 85, "Gold": 0}
    assert result.values == {"Ann": 10, "Bob": 99, "Cy": 20, "Dee": 5, "Fay": 50}


def test_teams_of_three_sum_all_three_hands_and_the_first_team_to_the_target_wins_together():
    teams = {"Red": ["Ann", "Cy", "Eve"], "Blue": ["Bob", "Dee", "Fay"]}
    game = Game(SIX, Mode.WINNER_COLLECTS, 100, teams)
    assert game.score_round("Bob", {"Ann": 20, "Cy": 30, "Dee": 60, "Eve": 40, "Fay": 1}).points == {
        "Red": 0,
        "Blue": 90,
    }
    assert not game.over
    game.score_round("Fay", {"Ann": 4, "Bob": 0, "Cy": 3, "Dee": 0, "Eve": 3})
    assert game.totals == {"Red": 0, "Blue": 100}
    assert game.over and game.winners == ("Blue",) and game.losers == ()
    with pytest.raises(GameError, match="already over"):
        game.score_round("Ann", {"Bob": 1, "Cy": 0, "Dee": 0, "Eve": 0, "Fay": 0})


def test_a_reshuffled_round_doubles_what_the_team_collects():
    game = Game(
        FOUR,
        Mode.WINNER_COLLECTS,
        500,
        {"Red": ["Ann", "Cy"], "Blue": ["Bob", "Dee"]},
        house_rules=HouseRules(reshuffle_doubles=True),
    )
    assert game.score_round("Dee", {"Ann": 8, "Bob": 70, "Cy": 2}, reshuffled=True).points == {"Red": 0, "Blue": 20}
