"""The card the winner went out on: in UNO Attack nobody goes out on a Trade Hands; with the house rule "no action
card to finish", nobody goes out on an action or Wild card, and the card must be given with every round."""

import json

import pytest

from launcher.game.cards import GameError
from launcher.game.rulesets import HouseRules, Ruleset
from launcher.game.scoring import Game, Mode

THREE = ["Ann", "Bob", "Cy"]
HANDS = {"Bob": 10, "Cy": 20}
NOT_ACTION = HouseRules(last_card_not_action=True)


def test_nobody_goes_out_on_a_trade_hands_in_uno_attack():
    game = Game(THREE, Mode.LOWEST_TOTAL)
    with pytest.raises(GameError) as caught:
        game.score_round("Ann", HANDS, last_card="trade_hands")
    assert str(caught.value) == "Ann cannot go out on a Trade Hands: in UNO Attack nobody goes out on a Trade Hands"
    assert game.rounds == ()
    result = game.score_round("Ann", HANDS, last_card="wild_hit_fire")  # an attack card is a way out
    assert result.entry.last_card == "wild_hit_fire"
    assert game.scoreboard()["rounds"][0]["last_card"] == "wild_hit_fire"


@pytest.mark.parametrize("card", ["skip", "reverse", "hit_2", "discard_all", "wild", "wild_all_hit", "wild_hit_fire"])
def test_with_the_house_rule_no_action_or_wild_card_finishes_a_round(card):
    game = Game(THREE, Mode.WINNER_COLLECTS, house_rules=NOT_ACTION)
    with pytest.raises(GameError, match=r"Ann cannot go out on a .+: the house rule no action card to finish"):
        game.score_round("Ann", HANDS, last_card=card)
    assert game.rounds == ()


def test_with_the_house_rule_a_number_finishes_and_the_card_is_required():
    game = Game(THREE, Mode.WINNER_COLLECTS, house_rules=NOT_ACTION)
    with pytest.raises(GameError, match=r"which card Ann went out on \(last_card\) is needed"):
        game.score_round("Ann", HANDS)
    game.score_round("Ann", HANDS, last_card="7")
    with pytest.raises(GameError, match="which card Bob went out on"):
        game.edit_round(0, "Bob", {"Ann": 10, "Cy": 20})
    game.edit_round(0, "Bob", {"Ann": 10, "Cy": 20}, last_card="3")
    assert game.rounds[0].entry.last_card == "3"


def test_classic_uno_cards_and_unknown_cards():
    classic = Game(THREE, Mode.LOWEST_TOTAL, ruleset=Ruleset.CLASSIC, house_rules=NOT_ACTION)
    with pytest.raises(GameError, match="Ann cannot go out on a Wild Draw Four"):
        classic.score_round("Ann", HANDS, last_card="wild_draw_four")
    classic.score_round("Ann", HANDS, last_card="0")
    with pytest.raises(GameError, match="the UNO Attack deck has no card kind 'draw_two'"):
        Game(THREE, Mode.LOWEST_TOTAL).score_round("Ann", HANDS, last_card="draw_two")
    with pytest.raises(GameError, match="the UNO Attack deck has no card kind 7"):
        Game(THREE, Mode.LOWEST_TOTAL).score_round("Ann", HANDS, last_card=7)


def test_without_the_house_rule_any_card_but_trade_hands_finishes_and_the_card_is_optional():
    game = Game(THREE, Mode.LOWEST_TOTAL, ruleset=Ruleset.CLASSIC)
    game.score_round("Ann", HANDS)
    game.score_round("Bob", {"Ann": 1, "Cy": 1}, last_card="wild_draw_four")
    assert [r.entry.last_card for r in game.rounds] == [None, "wild_draw_four"]


def test_rounds_stored_without_a_last_card_load_under_the_house_rule():
    game = Game(THREE, Mode.LOWEST_TOTAL, house_rules=NOT_ACTION)
    game.score_round("Ann", HANDS, last_card="5")
    data = json.loads(json.dumps(game.to_dict()))
    del data["rounds"][0]["last_card"]
    old = Game.from_dict(data)
    assert old.rounds[0].entry.last_card is None and old.totals == {"Ann": 0, "Bob": 10, "Cy": 20}


# Seed rule sheets, "玩法二": the last card may not be a Reverse, a Skip or a Wild; a Draw Two or a Wild Draw Four may
# end the round (its penalty is still taken by the next player).
NOT_SKIP_REVERSE_WILD = HouseRules(last_card_not_skip_reverse_wild=True)


@pytest.mark.parametrize("card", ["skip", "reverse", "wild"])
def test_with_the_seed_variant_no_skip_reverse_or_wild_finishes_a_round(card):
    game = Game(THREE, Mode.LOWEST_TOTAL, ruleset=Ruleset.CLASSIC, house_rules=NOT_SKIP_REVERSE_WILD)
    with pytest.raises(GameError, match=r"Ann cannot go out on a .+: the house rule no Skip, Reverse or Wild to fin"):
        game.score_round("Ann", HANDS, last_card=card)
    assert game.rounds == ()


@pytest.mark.parametrize("card", ["draw_two", "wild_draw_four", "7", "0"])
def test_with_the_seed_variant_a_draw_card_or_a_number_finishes_and_the_card_is_required(card):
    game = Game(THREE, Mode.LOWEST_TOTAL, ruleset=Ruleset.CLASSIC, house_rules=NOT_SKIP_REVERSE_WILD)
    with pytest.raises(GameError, match=r"which card Ann went out on \(last_card\) is needed"):
        game.score_round("Ann", HANDS)
    assert game.score_round("Ann", HANDS, last_card=card).entry.last_card == card
