"""A forgotten UNO is punishable only before the next player plays (seed rules: "輪到下一個玩家出牌之後還沒被發現則不可
追究"; the UNO Attack sheet: "在下一家出牌前被人發現"), and some tables take 3 cards from each player who caught it
("一个人捉到就罚3张牌，如此类推")."""

import pytest

from launcher.game.attacks import Cause, Demand, Table
from launcher.game.cards import GameError
from launcher.game.rulesets import HouseRules, Ruleset
from launcher.refusals import Refusal

FOUR = ["Ann", "Bob", "Cy", "Dee"]


def attack_table(**rules) -> Table:
    return Table(FOUR, Ruleset.UNO_ATTACK, HouseRules(**rules), dealer="Dee")


def classic_table(**rules) -> Table:
    return Table(FOUR, Ruleset.CLASSIC, HouseRules(**rules), dealer="Dee")


def test_a_forgotten_uno_is_caught_right_after_the_play_and_while_the_next_player_is_hit():
    table = attack_table()
    table.hit2("Ann")  # Ann's second-to-last card; Bob presses twice and loses the turn
    table.on_press(False, 0)
    table.uno_penalty("Ann")  # Bob has pressed, not played: still in time
    assert table.demands[-1] == Demand("Ann", Cause.UNO_PENALTY, presses=2)


@pytest.mark.parametrize(
    "next_turn",
    [
        lambda table: table.played("Bob"),
        lambda table: table.skip("Bob"),
        lambda table: table.declined("Bob"),
        lambda table: table.on_press(False, 0),  # Bob could not play and pressed: his turn came and went
    ],
)
def test_a_forgotten_uno_is_not_punishable_once_the_next_player_has_had_their_turn(next_turn):
    table = attack_table()
    table.played("Ann")
    next_turn(table)
    before = table.to_dict()
    with pytest.raises(GameError, match="too late to catch Ann's forgotten UNO") as caught:
        table.uno_penalty("Ann")
    assert caught.value.refusal is Refusal.UNO_TOO_LATE and caught.value.params == {"player": "Ann"}
    assert table.to_dict() == before


def test_only_the_player_who_just_played_can_have_forgotten_uno():
    table = classic_table()
    with pytest.raises(GameError, match="too late to catch Bob's forgotten UNO"):
        table.forgot_uno("Bob")  # nobody has played yet
    table.played("Ann")
    table.played("Bob")
    with pytest.raises(GameError, match="too late to catch Ann's forgotten UNO"):
        table.forgot_uno("Ann")  # a full lap later too
    table.forgot_uno("Bob")
    assert table.pending() == Demand("Bob", Cause.FORGOT_UNO, cards=2)


def test_the_window_survives_the_json_round_trip_and_an_old_table_has_none():
    table = attack_table()
    table.played("Ann")
    again = Table.from_dict(table.to_dict())
    again.uno_penalty("Ann")
    stored = table.to_dict()
    del stored["uno_window"]  # a table saved before the window was kept: nobody is caught on it
    with pytest.raises(GameError, match="too late"):
        Table.from_dict(stored).uno_penalty("Ann")


def test_each_player_who_catches_it_adds_the_penalty_in_one_declaration():
    table = classic_table(forgot_uno_penalty=3)
    table.played("Ann")
    table.forgot_uno("Ann", catchers=2)
    assert table.pending() == Demand("Ann", Cause.FORGOT_UNO, cards=6)
    attack = attack_table()
    attack.played("Ann")
    attack.uno_penalty("Ann", catchers=3)
    assert attack.pending() == Demand("Ann", Cause.UNO_PENALTY, presses=6)
    for catchers in (0, 4, True):  # 1 to the other players' number
        with pytest.raises(GameError, match=f"catchers = {catchers!r} is not accepted"):
            attack.uno_penalty("Ann", catchers=catchers)
