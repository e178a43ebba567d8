"""Seed house rules answering a Draw Two (「在+2後出同色的Skip，將+2跳給下下家」,
「在+2後出同色的Reverse，將+2還給上家」): the player hit by a Draw Two may answer it with a Skip, which passes it
over the next player to the one after, or with a Reverse, which hands it back to the player before. Whoever takes
it loses the turn, as after any Draw Two."""

import pytest

from launcher.game.attacks import Cause, Demand, Table
from launcher.game.cards import GameError
from launcher.game.rulesets import HOUSE_RULE_RULESETS, HouseRules, Ruleset

FOUR = ["Ann", "Bob", "Cy", "Dee"]


def classic_table(players=FOUR, **rules) -> Table:
    return Table(players, Ruleset.CLASSIC, HouseRules(**rules), dealer=players[-1])


def test_a_skip_on_a_draw_two_passes_it_over_the_next_player():
    table = classic_table(skip_passes_draw_two=True)
    table.draw_two("Ann")  # Bob is hit
    table.skip("Bob")  # a Skip of the same colour: Cy is skipped, Dee takes the 2
    assert table.demands == (Demand("Dee", Cause.DRAW_TWO, cards=2, by="Bob", stacked=True),)
    assert table.current == "Ann" and table.out_of_turn is None


def test_a_reverse_on_a_draw_two_hands_it_back_to_the_player_before():
    table = classic_table(reverse_returns_draw_two=True)
    table.draw_two("Ann")
    table.reverse("Bob")
    assert table.demands == (Demand("Ann", Cause.DRAW_TWO, cards=2, by="Bob", stacked=True),)
    assert (table.direction, table.current) == (-1, "Dee")  # Ann loses the turn; play goes on the other way
    two = classic_table(["Ann", "Bob"], reverse_returns_draw_two=True)
    two.draw_two("Ann")
    two.reverse("Bob")
    assert two.pending() == Demand("Ann", Cause.DRAW_TWO, cards=2, by="Bob", stacked=True)
    assert two.current == "Bob"


def test_a_stacked_draw_two_goes_on_whole():
    table = classic_table(stacking=True, skip_passes_draw_two=True)
    table.draw_two("Ann")
    table.draw_two("Bob")  # Cy owes 4
    table.skip("Cy")
    assert table.demands == (Demand("Ann", Cause.DRAW_TWO, cards=4, by="Cy", stacked=True),)


@pytest.mark.parametrize("card", ["skip", "reverse"])
def test_without_the_rule_or_too_late_the_draw_two_is_taken(card):
    official = classic_table()
    official.draw_two("Ann")
    with pytest.raises(GameError, match="Bob must first take 2 cards for the Draw Two"):
        getattr(official, card)("Bob")
    rules = {"skip_passes_draw_two": True, "reverse_returns_draw_two": True}
    started = classic_table(**rules)
    started.draw_two("Ann")
    started.on_press(True, 1)  # Bob took a card: too late to answer
    with pytest.raises(GameError, match="Bob must first take 1 more card"):
        getattr(started, card)("Bob")
    other = classic_table(**rules)
    other.draw_two("Ann")
    with pytest.raises(GameError, match="Bob must first take 2 cards"):
        getattr(other, card)("Cy")  # only the player hit answers
    wild = classic_table(**rules)
    wild.wild_draw_four("Ann")
    with pytest.raises(GameError, match="Bob must first take 4 cards for the Wild Draw Four"):
        getattr(wild, card)("Bob")  # a Wild Draw Four is answered only by another


def test_the_answers_are_house_rules_of_classic_uno():
    for key in ("skip_passes_draw_two", "reverse_returns_draw_two"):
        assert HOUSE_RULE_RULESETS[key] == {Ruleset.CLASSIC}
        assert HouseRules.from_mapping({key: True}).to_dict()[key] is True


def test_with_the_house_rule_a_draw_two_turned_up_is_the_dealers_to_take():
    # Seed rule sheets: "如果为"+2"，则庄家罚抽两张" (officially the player left of the dealer takes it).
    table = classic_table(first_draw_two_dealer=True)  # Dee deals
    assert table.first_card("draw_two") is True
    assert table.demands == (Demand("Dee", Cause.DRAW_TWO, cards=2),)
    assert table.current == "Ann"  # the dealer loses the turn: play starts at the dealer's left as ever
    official = classic_table(first_player="left_of_dealer")
    official.first_card("draw_two")
    assert official.demands == (Demand("Ann", Cause.DRAW_TWO, cards=2),) and official.current == "Bob"


def test_with_the_house_rule_a_pair_goes_down_together_with_the_effect_of_one():
    # Seed rule sheets: "若有一對牌……則可以一對一起出，下家不受一對的影響".
    table = classic_table(pairs_one_effect=True)
    table.draw_two("Ann", count=2)  # a pair of Draw Twos: Bob takes 2, not 4
    assert table.demands == (Demand("Bob", Cause.DRAW_TWO, cards=2, by="Ann"),)
    attack = Table(FOUR, Ruleset.UNO_ATTACK, HouseRules(pairs_one_effect=True), dealer="Dee")
    attack.skip("Ann", count=2)  # a pair of Skips skips one player
    assert attack.current == "Cy"
    with pytest.raises(GameError, match="several identical cards at once need the house rule multiple_identical"):
        attack.skip("Cy", count=3)  # a pair is two
