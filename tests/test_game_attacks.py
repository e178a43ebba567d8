"""Turns and attacks: who presses how often, whose turn it is, classic draws, first cards, and the JSON round trip."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.game.attacks import Cause, ClassicTable, Demand, OpenAttacks, Press, Table, UnoAttackTable
from launcher.game.cards import GameError
from launcher.game.rulesets import HouseRules, Ruleset

FOUR = ["Ann", "Bob", "Cy", "Dee"]
SIX = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]
STACKING = HouseRules(stacking=True)


def attack_table(players=FOUR, **rules) -> Table:
    return Table(players, Ruleset.UNO_ATTACK, HouseRules(**rules))


def classic_table(players=FOUR, **rules) -> Table:
    return Table(players, Ruleset.CLASSIC, HouseRules(**rules))


def press_order(table: Table, misses_before_fire: int = 0) -> list[str | None]:
    """Press until no demand is open; each until-fire demand misses `misses_before_fire` times first."""
    pressed = []
    while (demand := table.pending()) is not None:
        fire = not demand.until_fire or sum(p == demand.player for p in pressed) >= misses_before_fire
        pressed.append(table.on_press(fire, 1 if fire else 0).player)
    return pressed


# --- a new table ---------------------------------------------------------------------------------------------------


def test_play_starts_left_of_the_dealer_clockwise():
    table = attack_table()
    assert (table.dealer, table.current, table.direction, table.pending()) == ("Ann", "Bob", 1, None)
    assert Table(FOUR, dealer="Cy").current == "Dee"


def test_unknown_players_are_named():
    table = attack_table()
    with pytest.raises(GameError, match="unknown player 'Zed'; the players are Ann, Bob, Cy, Dee"):
        table.hit2("Zed")
    with pytest.raises(GameError, match="unknown player 'Zed'"):
        Table(FOUR, dealer="Zed")


# --- Hit 2 ---------------------------------------------------------------------------------------------------------


def test_hit2_clockwise_the_next_player_presses_twice_and_loses_the_turn():
    table = attack_table()
    table.hit2("Ann")
    assert table.pending() == Demand("Bob", Cause.HIT_2, presses=2, by="Ann")
    assert table.current == "Cy"
    assert table.on_press(False, 0) == Press("Bob", Cause.HIT_2, False, 0, closed=False)
    assert table.pending().presses == 1 and table.pending().describe() == "press 1 more time"
    assert table.on_press(True, 3) == Press("Bob", Cause.HIT_2, True, 3, closed=True)
    assert table.pending() is None and table.current == "Cy"


def test_hit2_counter_clockwise_after_a_reverse():
    table = attack_table()
    table.reverse("Ann")
    assert (table.direction, table.current) == (-1, "Dee")
    table.hit2("Dee")
    assert table.pending() == Demand("Cy", Cause.HIT_2, presses=2, by="Dee")
    assert table.current == "Bob"
    assert press_order(table) == ["Cy", "Cy"]


def test_hit2_wraps_round_the_table_both_ways():
    table = attack_table()
    table.hit2("Dee")
    assert (table.pending().player, table.current) == ("Ann", "Bob")
    press_order(table)
    table.reverse("Bob")
    table.hit2("Ann")
    assert (table.pending().player, table.current) == ("Dee", "Cy")


def test_the_winners_last_hit2_is_still_pressed_by_the_next_player():
    table = attack_table()
    table.hit2("Cy")  # Cy goes out on it
    assert press_order(table) == ["Dee", "Dee"]


# --- Wild All Hit --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "order", "next_up"),
    [
        (["Ann", "Bob"], ["Bob"], "Bob"),
        (["Ann", "Bob", "Cy"], ["Bob", "Ann"], "Bob"),
        (SIX, ["Eve", "Dee", "Cy", "Bob", "Ann"], "Eve"),
    ],
)
def test_wild_all_hit_after_a_reverse_walks_every_other_player_in_the_new_direction(players, order, next_up):
    table = attack_table(players)
    table.reverse("Ann")
    by = table.current  # two players: Reverse acts as Skip, so Ann again; else the last seat
    assert by == ("Ann" if len(players) == 2 else players[-1])
    table.wild_all_hit(by)
    assert [d.player for d in table.demands] == order
    assert all(d.presses == 1 and d.cause is Cause.WILD_ALL_HIT for d in table.demands)
    assert table.current == next_up
    assert press_order(table) == order


def test_wild_all_hit_clockwise_starts_with_the_next_player():
    table = attack_table(SIX)
    table.wild_all_hit("Cy")
    assert [d.player for d in table.demands] == ["Dee", "Eve", "Fay", "Ann", "Bob"]
    assert table.current == "Dee"  # nobody loses a turn


def test_wild_all_hit_one_press_each_whether_it_fires_or_not():
    table = attack_table()
    table.wild_all_hit("Ann")
    assert [table.on_press(fired, n).player for fired, n in [(True, 4), (False, 0), (True, 1)]] == ["Bob", "Cy", "Dee"]
    assert table.pending() is None


# --- Wild Hit-Fire -------------------------------------------------------------------------------------------------


def test_wild_hit_fire_ends_on_the_first_fire():
    table = attack_table()
    table.wild_hit_fire("Bob")
    assert table.pending() == Demand("Cy", Cause.WILD_HIT_FIRE, until_fire=True, by="Bob")
    assert table.pending().describe() == "press until the launcher fires"
    assert table.current == "Dee"
    for _ in range(6):
        assert table.on_press(False, 0).closed is False
    assert table.pending().player == "Cy"
    assert table.on_press(True, 5) == Press("Cy", Cause.WILD_HIT_FIRE, True, 5, closed=True)
    assert table.pending() is None
    assert table.on_press(True, 2).cause is Cause.PLAIN  # the next press is outside the attack


def test_wild_hit_fire_that_fires_at_once_takes_one_press():
    table = attack_table()
    table.wild_hit_fire("Ann")
    assert press_order(table) == ["Bob"]


# --- stacking ------------------------------------------------------------------------------------------------------


def test_without_stacking_no_card_is_declared_while_an_attack_is_open():
    table = attack_table()
    table.hit2("Ann")
    for declare in (lambda: table.hit2("Bob"), lambda: table.skip("Cy"), lambda: table.wild_all_hit("Cy")):
        with pytest.raises(GameError, match="Bob must first press 2 times for the Hit 2"):
            declare()
    assert table.demands == (Demand("Bob", Cause.HIT_2, presses=2, by="Ann"),)


def test_stacked_hit2_passes_the_sum_on():
    table = attack_table(stacking=True)
    table.hit2("Ann")
    table.hit2("Bob")
    assert table.pending() == Demand("Cy", Cause.HIT_2, presses=4, by="Bob", stacked=True)
    assert table.current == "Dee"
    table.hit2("Cy")
    assert table.pending().player == "Dee" and table.pending().presses == 6
    assert press_order(table) == ["Dee"] * 6
    assert table.current == "Ann"


def test_stacking_is_too_late_after_the_first_press_and_only_for_the_player_hit():
    table = attack_table(stacking=True)
    table.hit2("Ann")
    # Said as a stacking rule, not as if stacking were off.
    with pytest.raises(GameError, match=r"only Bob, who is hit, may stack on the Hit 2.*Bob must first press 2 times"):
        table.hit2("Cy")
    table.on_press(False, 0)
    with pytest.raises(GameError, match=r"too late to stack: Bob has started pressing.*1 more time for the Hit 2"):
        table.hit2("Bob")


def test_wild_attacks_do_not_stack_on_hit2():
    table = attack_table(stacking=True)
    table.hit2("Ann")
    with pytest.raises(GameError, match="Bob must first press 2 times"):
        table.wild_hit_fire("Bob")


def test_stacking_in_two_player_games_bounces_back():
    table = attack_table(["Ann", "Bob"], stacking=True)
    table.hit2("Ann")
    table.hit2("Bob")
    assert table.pending().player == "Ann" and table.pending().presses == 4
    assert table.current == "Bob"


def test_classic_draw_two_stacks_and_wild_draw_four_goes_on_draw_two_not_the_reverse():
    table = classic_table(stacking=True)
    table.draw_two("Ann")
    table.draw_two("Bob")
    assert table.pending() == Demand("Cy", Cause.DRAW_TWO, cards=4, by="Bob", stacked=True)
    table.wild_draw_four("Cy")
    assert table.pending() == Demand("Dee", Cause.WILD_DRAW_FOUR, cards=8, by="Cy", stacked=True)
    with pytest.raises(GameError, match="a Draw Two does not stack on a Wild Draw Four"):
        table.draw_two("Dee")
    table.wild_draw_four("Dee")  # Wild Draw Four on Wild Draw Four adds up too, as many tables play it
    assert table.pending().player == "Ann" and table.pending().cards == 12
    assert table.current == "Bob"


# --- Skip, Reverse, two players ------------------------------------------------------------------------------------


def test_skip_passes_over_the_next_player_in_either_direction():
    table = attack_table()
    table.skip("Ann")
    assert table.current == "Cy"
    table.reverse("Cy")
    table.skip("Bob")
    assert table.current == "Dee"


def test_two_players_reverse_acts_as_skip_and_the_player_plays_again():
    table = attack_table(["Ann", "Bob"])
    table.reverse("Bob")
    assert (table.current, table.direction) == ("Bob", -1)
    table.skip("Bob")
    assert table.current == "Bob"
    table.hit2("Bob")
    assert table.pending().player == "Ann" and table.current == "Bob"
    press_order(table)
    table.wild_hit_fire("Bob")
    assert table.pending().player == "Ann" and table.current == "Bob"


def test_multiple_identical_cards_need_the_house_rule():
    with pytest.raises(GameError, match="need the house rule multiple_identical"):
        attack_table().skip("Ann", count=2)


def test_multiple_identical_skips_reverses_and_hit2s():
    table = attack_table(SIX, multiple_identical=True)
    table.skip("Ann", count=2)
    assert table.current == "Dee"
    table.reverse("Dee", count=2)  # an even number keeps the direction
    assert (table.direction, table.current) == (1, "Eve")
    table.reverse("Eve", count=3)
    assert (table.direction, table.current) == (-1, "Dee")
    table.skip("Dee", count=8)  # never skips round to the player who played
    assert table.current == "Dee"
    table.hit2("Dee", count=2)
    assert table.pending() == Demand("Cy", Cause.HIT_2, presses=4, by="Dee")
    with pytest.raises(GameError, match="number of Hit 2 cards = 9 is not accepted"):
        attack_table(multiple_identical=True).hit2("Ann", count=9)


def test_played_passes_the_turn_from_whoever_played():
    table = attack_table()
    table.played("Bob")
    assert table.current == "Cy"
    table.played("Ann")  # a jump-in, or a correction: play goes on from Ann
    assert table.current == "Bob"


# --- declined plays, penalties, plain presses ----------------------------------------------------------------------


def test_declined_is_one_press_and_the_turn_ends():
    table = attack_table()
    table.declined("Bob")
    assert table.pending() == Demand("Bob", Cause.DECLINED, presses=1)
    assert table.current == "Cy"
    assert table.on_press(True, 2) == Press("Bob", Cause.DECLINED, True, 2, closed=True)


def test_uno_and_suggestion_penalties_wait_their_turn_without_holding_play():
    table = attack_table()
    table.played("Bob")
    table.uno_penalty("Bob")
    table.suggestion_penalty("Ann")
    table.played("Cy")  # penalties do not stop play
    assert [(d.player, d.presses) for d in table.demands] == [("Bob", 2), ("Ann", 4)]
    assert press_order(table) == ["Bob"] * 2 + ["Ann"] * 4


def test_party_penalty_takes_the_configured_count_when_on():
    with pytest.raises(GameError, match="party penalties are not among this table's house rules"):
        attack_table().party_penalty("Ann")
    attack = attack_table(party_penalties=True, party_penalty=3)
    attack.party_penalty("Cy")
    assert attack.pending() == Demand("Cy", Cause.PARTY_PENALTY, presses=3)
    classic = classic_table(party_penalties=True)
    classic.party_penalty("Cy")
    assert classic.pending() == Demand("Cy", Cause.PARTY_PENALTY, cards=2)


def test_a_press_outside_any_attack_is_a_plain_hit_by_the_current_player_and_ends_the_turn():
    table = attack_table()
    assert table.on_press(False, 0) == Press("Bob", Cause.PLAIN, False, 0, closed=True)
    assert table.current == "Cy"


def test_without_turn_tracking_a_plain_press_is_unassigned_but_attacks_still_name_the_player():
    table = Table(FOUR, track_turns=False)
    assert table.current is None
    assert table.on_press(True, 2) == Press(None, Cause.PLAIN, True, 2, closed=True)
    table.reverse("Cy")  # declared anyway, so attacks go the right way
    table.hit2("Cy")
    assert table.pending().player == "Bob" and table.current is None
    with pytest.raises(GameError, match="turn tracking is off"):
        table.set_turn("Ann")


def test_set_turn_and_cancel_correct_mistakes():
    table = attack_table()
    table.wild_all_hit("Ann")
    table.uno_penalty("Ann")
    dropped = table.cancel()  # the newest only: the Wild All Hit stays
    assert dropped is not None and (dropped.player, dropped.cause) == ("Ann", Cause.UNO_PENALTY)
    assert [d.player for d in table.demands] == ["Bob", "Cy", "Dee"]
    table.set_turn("Dee")
    assert table.current == "Dee"


@pytest.mark.parametrize(
    ("ruleset", "card"),
    [("uno_attack", "hit2"), ("uno_attack", "wild_hit_fire"), ("classic", "draw_two"), ("classic", "wild_draw_four")],
)
def test_cancelling_what_a_card_made_owed_gives_its_player_the_turn_it_cost_them(ruleset, card):
    """Issue #47: Ann's card on Bob, declared by mistake, cost Bob his turn too (it went to Cy). "Cancel what is owed"
    takes the whole card's effect back: Bob owes nothing and it is his turn, as it was before it."""
    table = Table(FOUR, Ruleset(ruleset))
    table.set_turn("Ann")
    getattr(table, card)("Ann")
    assert table.pending().player == "Bob" and table.current == "Cy"
    dropped = table.cancel()
    assert dropped is not None and dropped.player == "Bob"
    assert table.pending() is None and table.current == "Bob"


def test_cancelling_keeps_the_turn_where_play_has_moved_on_or_the_card_cost_no_turn():
    table = attack_table()
    table.set_turn("Ann")
    table.hit2("Ann")
    table.set_turn("Dee")  # the table moved on (corrected by hand) before the cancel
    table.cancel()
    assert table.current == "Dee"
    table.wild_all_hit("Dee")  # costs nobody a turn: the newest press is dropped, Ann still plays next
    table.cancel()
    assert table.current == "Ann" and [d.player for d in table.demands] == ["Ann", "Bob"]
    table.uno_penalty("Dee")  # a penalty takes no turn either
    table.cancel()
    assert table.current == "Ann"


@pytest.mark.parametrize(("outcome_fired", "cards"), [(1, 0), (True, -1), (True, 1.0), (True, 113)])
def test_press_reports_are_checked(outcome_fired, cards):
    with pytest.raises(GameError, match="is not accepted"):
        attack_table().on_press(outcome_fired, cards)


def test_each_ruleset_has_a_table_of_its_own_plays():
    classic, attack = classic_table(), attack_table()
    assert isinstance(classic, ClassicTable) and isinstance(attack, UnoAttackTable)
    for only_attack in ("hit2", "wild_all_hit", "wild_hit_fire", "uno_penalty", "suggestion_penalty"):
        assert hasattr(attack, only_attack) and not hasattr(classic, only_attack)
    for only_classic in ("deal", "draw_two", "wild_draw_four", "challenge", "forgot_uno", "false_uno", "wrong_card"):
        assert hasattr(classic, only_classic) and not hasattr(attack, only_classic)
    assert type(Table.from_dict(classic.to_dict())) is ClassicTable
    assert type(attack.next_round("Bob")) is UnoAttackTable


# --- classic UNO on an exact-count dispenser -----------------------------------------------------------------------


class SimulatedDispenser:
    """Dispenses exactly what is asked, except for the jams scripted in `short` (cards short on that request)."""

    def __init__(self, deck: int, short: dict[int, int] | None = None) -> None:
        self.left, self.requests, self.short = deck, 0, short or {}
        self.received: dict[str, int] = {}

    def serve(self, table: Table) -> None:
        while (demand := table.pending()) is not None:
            self.requests += 1
            cards = min(demand.cards - self.short.get(self.requests, 0), self.left)
            self.left -= cards
            press = table.on_press(cards > 0, cards)
            self.received[press.player] = self.received.get(press.player, 0) + cards


def test_classic_deal_7_to_4_players_dispenses_exactly_28_cards():
    table = classic_table()
    assert table.deal() == [("Bob", 7), ("Cy", 7), ("Dee", 7), ("Ann", 7)]
    assert [d.cards for d in table.demands] == [7, 7, 7, 7]
    dispenser = SimulatedDispenser(108)
    dispenser.serve(table)
    assert dispenser.received == {"Bob": 7, "Cy": 7, "Dee": 7, "Ann": 7}
    assert 108 - dispenser.left == 28 and dispenser.requests == 4


def test_a_short_dispense_leaves_the_rest_owed():
    table = classic_table()
    table.deal()
    dispenser = SimulatedDispenser(108, short={1: 4})  # the first request jams after 3 cards
    dispenser.serve(table)
    assert dispenser.received["Bob"] == 7 and 108 - dispenser.left == 28 and dispenser.requests == 5


def test_deal_is_checked_against_the_deck():
    with pytest.raises(GameError, match="cards per player = 11 is not accepted; expected a whole number from 1 to 10"):
        classic_table([f"P{i}" for i in range(10)]).deal(11)


def test_play_waits_for_the_deal():
    table = classic_table()
    table.deal()
    with pytest.raises(GameError, match="Bob must first take 7 cards for the deal"):
        table.played("Bob")


def test_draw_two_dispenses_exactly_2_and_skips_the_player():
    table = classic_table()
    table.draw_two("Ann")
    assert table.pending() == Demand("Bob", Cause.DRAW_TWO, cards=2, by="Ann")
    assert table.current == "Cy"
    dispenser = SimulatedDispenser(50)
    dispenser.serve(table)
    assert dispenser.received == {"Bob": 2}


def test_wild_draw_four_dispenses_4():
    table = classic_table()
    table.wild_draw_four("Dee")
    assert table.pending() == Demand("Ann", Cause.WILD_DRAW_FOUR, cards=4, by="Dee")
    assert table.current == "Bob"


def test_challenge_of_a_legal_wild_draw_four_costs_the_challenger_6():
    table = classic_table()
    table.wild_draw_four("Ann")
    table.challenge("Bob", legal=True)
    assert table.pending() == Demand("Bob", Cause.CHALLENGE_FAILED, cards=6, by="Ann")
    assert table.current == "Cy"


def test_challenge_of_an_illegal_wild_draw_four_costs_its_player_4_and_the_challenger_plays():
    table = classic_table()
    table.wild_draw_four("Ann")
    table.challenge("Bob", legal=False)
    assert table.demands == (Demand("Ann", Cause.ILLEGAL_WILD_DRAW_FOUR, cards=4, by="Ann"),)
    assert table.current == "Bob"


def test_challenges_that_cannot_be():
    table = classic_table(stacking=True)
    with pytest.raises(GameError, match="Bob has no Wild Draw Four to challenge"):
        table.challenge("Bob", legal=True)
    table.wild_draw_four("Ann")
    with pytest.raises(GameError, match="legal = 'yes' is not accepted"):
        table.challenge("Bob", legal="yes")
    table.on_press(True, 1)
    with pytest.raises(GameError, match="too late to challenge"):
        table.challenge("Bob", legal=False)
    table.cancel()
    table.draw_two("Ann")
    table.wild_draw_four("Bob")
    with pytest.raises(GameError, match="a stacked Wild Draw Four cannot be challenged"):
        table.challenge("Cy", legal=False)


@pytest.mark.parametrize("penalty", ["forgot_uno", "false_uno", "wrong_accusation", "wrong_card"])
def test_classic_penalties_are_2_cards(penalty):
    table = classic_table()
    table.played("Bob")
    getattr(table, penalty)("Bob")
    assert table.pending() == Demand("Bob", Cause(penalty), cards=2)
    assert table.current == "Cy"


def test_classic_declined_draws_one_card():
    table = classic_table()
    table.declined("Bob")
    assert table.pending() == Demand("Bob", Cause.DECLINED, cards=1)
    assert table.pending().describe() == "take 1 card"


# --- first card ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "demands", "current", "direction"),
    [
        ("wild_hit_fire", [("Bob", "until fire")], "Cy", 1),
        ("wild_all_hit", [("Bob", 1), ("Cy", 1), ("Dee", 1)], "Bob", 1),
        ("hit_2", [("Bob", 2)], "Cy", 1),
        ("skip", [], "Cy", 1),
        ("reverse", [], "Ann", -1),
        ("wild", [], "Bob", 1),
        ("discard_all", [], "Bob", 1),
        ("7", [], "Bob", 1),
    ],
)
def test_first_card_in_uno_attack(kind, demands, current, direction):
    table = attack_table()
    assert table.first_card(kind) is True
    assert [(d.player, "until fire" if d.until_fire else d.presses) for d in table.demands] == demands
    assert (table.current, table.direction) == (current, direction)


def test_first_card_reverse_then_play_goes_right():
    table = attack_table()
    table.first_card("reverse")
    table.played("Ann")
    assert table.current == "Dee"


def test_first_card_trade_hands_and_classic_wild_draw_four_go_back():
    for table, kind in ((attack_table(), "trade_hands"), (classic_table(), "wild_draw_four")):
        before = table.to_dict()
        assert table.first_card(kind) is False
        assert table.to_dict() == before


def test_first_card_in_classic_uno():
    table = classic_table(first_player="left_of_dealer")  # the official rules (seed 000 has the dealer start)
    table.deal()
    table.first_card("draw_two")
    assert table.demands[-1] == Demand("Bob", Cause.DRAW_TWO, cards=2)
    assert table.current == "Cy"
    with pytest.raises(GameError, match="the classic UNO deck has no card kind 'hit_2'"):
        classic_table().first_card("hit_2")


def test_the_winner_deals_the_next_round():
    table = attack_table()
    table.reverse("Ann")
    following = table.next_round("Cy")
    assert (following.dealer, following.current, following.direction) == ("Cy", "Dee", 1)
    without_dee = table.next_round("Cy", ["Ann", "Bob", "Cy"])
    assert without_dee.current == "Ann"


# --- persistence ---------------------------------------------------------------------------------------------------


def round_trip(table: Table) -> Table:
    data = json.loads(json.dumps(table.to_dict()))
    restored = Table.from_dict(data)
    assert restored.to_dict() == data == table.to_dict()
    return restored


def test_an_attack_in_progress_survives_a_restart():
    table = attack_table(SIX, stacking=True)
    table.reverse("Ann")
    table.wild_all_hit("Fay")
    table.on_press(False, 0)
    restored = round_trip(table)
    assert press_order(restored) == press_order(table) == ["Dee", "Cy", "Bob", "Ann"]
    assert restored.current == table.current == "Eve"


def test_a_stored_table_is_checked():
    data = attack_table().to_dict()
    with pytest.raises(GameError, match=r"a table: missing \['demands'\], unknown \['extra'\]"):
        Table.from_dict({**{k: v for k, v in data.items() if k != "demands"}, "extra": 1})
    with pytest.raises(GameError, match="direction = 2 is not accepted"):
        Table.from_dict({**data, "direction": 2})
    with pytest.raises(GameError, match="current = None"):
        Table.from_dict({**data, "current": None})
    bad_demand = {**Demand("Bob", Cause.HIT_2, presses=2).to_dict(), "cards": 3}
    with pytest.raises(GameError, match="owes exactly one of"):
        Table.from_dict({**data, "demands": [bad_demand]})
    with pytest.raises(GameError, match="unknown cause 'hit_3'"):
        Table.from_dict({**data, "demands": [{**bad_demand, "cards": 0, "cause": "hit_3"}]})
    with pytest.raises(GameError, match="not at the table"):
        Table.from_dict({**data, "demands": [{**bad_demand, "cards": 0, "player": "Zed"}]})


PLAYERS = st.sampled_from(FOUR)
OPERATIONS = st.one_of(
    st.tuples(st.sampled_from(["hit2", "wild_all_hit", "wild_hit_fire", "skip", "reverse", "played"]), PLAYERS),
    st.tuples(st.sampled_from(["declined", "uno_penalty", "suggestion_penalty", "party_penalty"]), PLAYERS),
    st.tuples(st.just("press"), st.booleans()),
    st.tuples(st.just("first_card"), st.sampled_from(["hit_2", "wild_all_hit", "wild_hit_fire", "reverse", "skip"])),
)


@settings(max_examples=150, deadline=None)
@given(
    ops=st.lists(OPERATIONS, max_size=25),
    stacking=st.booleans(),
    multiple=st.booleans(),
    track_turns=st.booleans(),
)
def test_any_sequence_round_trips_and_keeps_demands_sane(ops, stacking, multiple, track_turns):
    rules = HouseRules(stacking=stacking, multiple_identical=multiple, party_penalties=True)
    table = Table(FOUR, Ruleset.UNO_ATTACK, rules, track_turns=track_turns)
    for name, arg in ops:
        try:
            if name == "press":
                press = table.on_press(arg, 2 if arg else 0)
                assert press.player in (*FOUR, None)
            else:
                getattr(table, name)(arg)
        except GameError:
            pass
        table = round_trip(table)
        assert all(d.presses > 0 or d.until_fire for d in table.demands)
        assert (table.current is None) != track_turns


# --- the table is right every time ---------------------------------------------------------------------------------


def test_uno_attack_seats_2_to_9_players_and_classic_uno_2_to_10():
    nine, ten = [f"P{i}" for i in range(9)], [f"P{i}" for i in range(10)]
    assert Table(nine, Ruleset.UNO_ATTACK).players == tuple(nine)
    with pytest.raises(GameError, match="10 players; UNO Attack is for 2 to 9"):
        Table(ten, Ruleset.UNO_ATTACK)
    assert Table(ten, Ruleset.CLASSIC).players == tuple(ten)


@pytest.mark.parametrize(("kind", "presses"), [("wild_all_hit", ["Bob", "Cy", "Dee"]), ("hit_2", ["Bob", "Bob"])])
def test_the_first_card_is_applied_once(kind, presses):
    table = attack_table()
    table.first_card(kind)
    with pytest.raises(GameError, match="the first card starts the round: once, before any play or press"):
        table.first_card(kind)
    assert press_order(table) == presses  # everyone but the dealer once; Hit 2: twice, not 4 times


@pytest.mark.parametrize(
    "opening",
    [
        lambda table: table.hit2("Ann"),
        lambda table: table.played("Bob"),
        lambda table: table.on_press(False, 0),
        lambda table: table.suggestion_penalty("Cy"),
    ],
)
def test_the_first_card_is_refused_once_the_round_is_under_way(opening):
    table = attack_table()
    opening(table)
    before = table.to_dict()
    with pytest.raises(GameError, match="before any play or press"):
        table.first_card("reverse")
    assert table.to_dict() == before  # a Reverse in mid-round would flip the direction under an open Hit 2


def test_a_first_card_that_goes_back_leaves_the_round_fresh_and_classic_deals_first():
    attack = attack_table()
    assert attack.first_card("trade_hands") is False
    assert attack.first_card("skip") is True and attack.current == "Cy"
    classic = classic_table(first_player="left_of_dealer")
    classic.deal()
    SimulatedDispenser(108).serve(classic)  # the deal is not play: the first card is turned up after it
    assert classic.first_card("wild_draw_four") is False
    assert classic.first_card("draw_two") is True
    assert classic.pending() == Demand("Bob", Cause.DRAW_TWO, cards=2)


@pytest.mark.parametrize(
    ("table", "kind", "answer"),
    [
        (attack_table(stacking=True), "hit_2", "hit2"),
        (classic_table(stacking=True, first_player="left_of_dealer"), "draw_two", "draw_two"),
        (classic_table(stacking=True, first_player="left_of_dealer"), "draw_two", "wild_draw_four"),
    ],
)
def test_a_first_card_attack_was_played_by_nobody_and_cannot_be_stacked_on(table, kind, answer):
    table.first_card(kind)
    before = table.demands
    with pytest.raises(GameError, match="Bob must first"):
        getattr(table, answer)("Bob")
    assert table.demands == before and len(before) == 1 and before[0].player == "Bob"


def test_several_wild_draw_fours_at_once_add_up():
    table = classic_table(multiple_identical=True)
    table.wild_draw_four("Ann", count=2)
    assert table.pending() == Demand("Bob", Cause.WILD_DRAW_FOUR, cards=8, by="Ann")
    assert table.current == "Cy"
    with pytest.raises(GameError, match="need the house rule multiple_identical"):
        classic_table().wild_draw_four("Ann", count=2)
    with pytest.raises(GameError, match="number of Wild Draw Four cards = 5 is not accepted"):
        classic_table(multiple_identical=True).wild_draw_four("Ann", count=5)


def test_a_challenge_of_several_wild_draw_fours_is_about_all_of_them():
    legal = classic_table(multiple_identical=True)
    legal.wild_draw_four("Ann", count=2)
    legal.challenge("Bob", legal=True)
    assert legal.pending() == Demand("Bob", Cause.CHALLENGE_FAILED, cards=10, by="Ann")  # the 8, and 2 more
    illegal = classic_table(multiple_identical=True)
    illegal.wild_draw_four("Ann", count=2)
    illegal.challenge("Bob", legal=False)
    assert illegal.demands == (Demand("Ann", Cause.ILLEGAL_WILD_DRAW_FOUR, cards=8, by="Ann"),)


def test_the_forgotten_uno_penalty_is_a_house_number():
    default, three, classic = attack_table(), attack_table(forgot_uno_penalty=3), classic_table(forgot_uno_penalty=3)
    for table in (default, three, classic):
        table.played("Cy")
    default.uno_penalty("Cy")
    three.uno_penalty("Cy")
    assert (default.pending().presses, three.pending().presses) == (2, 3)
    classic.forgot_uno("Cy")
    assert classic.pending() == Demand("Cy", Cause.FORGOT_UNO, cards=3)


@pytest.mark.parametrize(
    ("table", "last_card", "owed"),
    [
        (attack_table(), lambda t: t.hit2("Cy"), "Dee must still press 2 times for the Hit 2"),
        (attack_table(), lambda t: t.wild_hit_fire("Cy"), "Dee must still press until the launcher fires"),
        (classic_table(), lambda t: t.draw_two("Cy"), "Dee must still take 2 cards for the Draw Two"),
        (classic_table(), lambda t: t.wild_draw_four("Cy"), "Dee must still take 4 cards for the Wild Draw Four"),
    ],
)
def test_a_round_is_not_closed_while_the_winners_last_attack_is_owed(table, last_card, owed):
    last_card(table)  # Cy goes out on it
    before = table.to_dict()
    with pytest.raises(OpenAttacks, match=owed):
        table.close_round()
    assert table.to_dict() == before


def test_a_carried_penalty_is_served_first_in_the_next_round_and_moves_no_turn():
    table = attack_table()
    table.hit2("Cy")  # Cy goes out on it
    following = table.next_round("Cy", carried=table.close_round(carry=True))
    assert (following.dealer, following.current) == ("Cy", "Dee")  # the winner deals, play starts at their left
    assert following.demands == (Demand("Dee", Cause.HIT_2, presses=2, by="Cy", carried=True),)
    with pytest.raises(GameError, match="Dee must first press 2 times for the Hit 2"):
        following.played("Dee")
    assert [following.on_press(False, 0) for _ in range(2)] == [
        Press("Dee", Cause.HIT_2, False, 0, closed=False),
        Press("Dee", Cause.HIT_2, False, 0, closed=True),
    ]
    assert following.current == "Dee" and following.pending() is None
    assert following.first_card("hit_2") is True  # the carried presses were not play of the new round
    assert following.pending() == Demand("Dee", Cause.HIT_2, presses=2)
    assert round_trip(following).to_dict() == following.to_dict()


def test_a_carried_attack_cannot_be_stacked_on_or_challenged():
    hit = attack_table(stacking=True)
    hit.hit2("Cy")
    following = hit.next_round("Cy", carried=hit.close_round(carry=True))
    with pytest.raises(GameError, match="Dee must first press 2 times"):
        following.hit2("Dee")
    four = classic_table()
    four.wild_draw_four("Cy")
    following = four.next_round("Cy", carried=four.close_round(carry=True))
    with pytest.raises(GameError, match="the round was scored: too late to challenge"):
        following.challenge("Dee", legal=False)


# --- knock-out play: a player who goes out leaves the round, the others play on -----------------------------------


def test_a_player_who_went_out_gets_no_more_turns_and_no_wild_all_hit() -> None:
    table = Table(["Ann", "Bob", "Cy", "Dee"], dealer="Dee")  # Ann starts
    table.went_out("Ann")  # Ann played her last card
    assert table.out == ("Ann",) and table.in_play == ("Bob", "Cy", "Dee")
    assert table.current == "Bob"
    table.played("Bob")
    table.played("Cy")
    table.played("Dee")
    assert table.current == "Bob"  # round the table without Ann
    table.wild_all_hit("Bob")
    assert [d.player for d in table.demands] == ["Cy", "Dee"]
    with pytest.raises(GameError, match="Ann went out"):
        table.uno_penalty("Ann")


def test_going_out_waits_for_what_the_player_owes_and_stops_at_the_last_two() -> None:
    table = Table(["Ann", "Bob", "Cy"], dealer="Cy")
    table.played("Ann")
    table.uno_penalty("Ann")
    with pytest.raises(GameError, match="Ann must first press 2 times"):
        table.went_out("Ann")
    table.on_press(False, 0, player="Ann")
    table.on_press(False, 0, player="Ann")
    table.went_out("Ann")
    with pytest.raises(GameError, match="last two"):
        table.went_out("Bob")
    assert Table.from_dict(table.to_dict()).to_dict() == table.to_dict()


def test_with_two_left_in_play_a_reverse_acts_as_a_skip() -> None:
    table = Table(["Ann", "Bob", "Cy"], dealer="Cy")
    table.went_out("Ann")
    table.reverse("Bob")
    assert table.current == "Bob"  # two players: the one who reversed plays again


# --- plays out of turn, a Wild Draw Four challenge and the first card, by the house rules ---------------------------


def test_a_play_out_of_turn_is_followed_and_named() -> None:
    table = attack_table()  # Ann deals: Bob's turn
    table.played("Bob")
    assert table.out_of_turn is None
    table.played("Dee")  # Cy's turn: Dee jumped in (house rule) or slipped; the turn follows Dee either way
    assert (table.out_of_turn, table.current) == ("Cy", "Ann")


def test_the_player_whose_press_ended_the_turn_may_play_the_card_it_shot() -> None:
    table = attack_table()
    table.on_press(True, 1)  # Bob cannot play: presses once, his turn ends
    assert table.current == "Cy"
    table.played("Bob")  # he plays the card that came out
    assert (table.out_of_turn, table.current) == (None, "Cy")
    table.played("Bob")  # but only that one
    assert table.out_of_turn == "Cy"


def test_the_player_hit_who_stacks_is_not_out_of_turn() -> None:
    table = attack_table(stacking=True)
    table.hit2("Bob")  # Cy presses twice, unless he stacks
    table.hit2("Cy")
    assert table.out_of_turn is None and table.pending().player == "Dee"


def test_with_the_house_rule_the_challenger_is_skipped_even_when_the_wild_draw_four_was_illegal() -> None:
    # The classic rules: an illegal Wild Draw Four's player takes the 4 and the challenger plays.
    table = classic_table()  # Bob's turn
    table.wild_draw_four("Bob")
    table.challenge("Cy", legal=False)
    assert table.current == "Cy"
    # The house rule: the challenger is skipped either way; the player after them plays.
    table = classic_table(challenger_skipped=True)
    table.wild_draw_four("Bob")
    table.challenge("Cy", legal=False)
    assert (table.pending().player, table.pending().cards, table.current) == ("Bob", 4, "Dee")
    table = classic_table(challenger_skipped=True)
    table.wild_draw_four("Bob")
    table.challenge("Cy", legal=True)
    assert (table.pending().player, table.pending().cards, table.current) == ("Cy", 6, "Dee")


@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_with_the_house_rule_only_a_number_card_starts_the_round(ruleset: Ruleset) -> None:
    kinds = {Ruleset.UNO_ATTACK: ["hit_2", "skip", "wild", "wild_all_hit"], Ruleset.CLASSIC: ["draw_two", "wild"]}
    first = {Ruleset.UNO_ATTACK: "Bob", Ruleset.CLASSIC: "Ann"}[ruleset]  # seed 000: classic UNO's dealer starts
    for kind in kinds[ruleset]:
        table = Table(FOUR, ruleset, HouseRules(number_card_starts=True))
        assert table.first_card(kind) is False, kind  # back into the deck: turn up another
        assert (table.pending(), table.current, table.under_way) == (None, first, False)
    table = Table(FOUR, ruleset, HouseRules(number_card_starts=True))
    assert table.first_card("7") is True and table.current == first
