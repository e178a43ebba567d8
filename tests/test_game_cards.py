"""Decks, hand values and hand validation; rulesets, house rules and player names."""

import json

import pytest

from launcher.game.cards import (
    CLASSIC,
    UNO_ATTACK,
    GameError,
    hand_value,
    validate_hand,
    validate_round_hands,
)
from launcher.game.rulesets import (
    HOUSE_RULE_CHOICES,
    HOUSE_RULE_NUMBERS,
    HOUSE_RULE_RULESETS,
    HouseRules,
    Ruleset,
    validate_players,
)

# --- decks ---------------------------------------------------------------------------------------------------------


def test_classic_deck_has_108_cards_with_the_published_counts_and_points():
    assert CLASSIC.total == 108
    assert CLASSIC.max_count("0") == 4 and CLASSIC.points("0") == 0
    for value in range(1, 10):
        assert CLASSIC.max_count(str(value)) == 8 and CLASSIC.points(str(value)) == value
    for kind in ("skip", "reverse", "draw_two"):
        assert CLASSIC.max_count(kind) == 8 and CLASSIC.points(kind) == 20
    for kind in ("wild", "wild_draw_four"):
        assert CLASSIC.max_count(kind) == 4 and CLASSIC.points(kind) == 50
    assert CLASSIC.red_zeros == 1


def test_uno_attack_deck_has_112_cards_no_zeros_and_the_attack_cards():
    assert UNO_ATTACK.total == 112
    assert "0" not in UNO_ATTACK.kind_ids
    expected = {
        "hit_2": (8, 20),
        "reverse": (8, 20),
        "skip": (8, 20),
        "discard_all": (4, 30),
        "trade_hands": (4, 30),
        "wild": (4, 50),
        "wild_all_hit": (2, 50),
        "wild_hit_fire": (2, 50),
    }
    for kind, (count, points) in expected.items():
        assert (UNO_ATTACK.max_count(kind), UNO_ATTACK.points(kind)) == (count, points)
    assert sum(UNO_ATTACK.max_count(str(v)) for v in range(1, 10)) == 72


def test_deck_as_json_lists_every_kind_once():
    data = json.loads(json.dumps(UNO_ATTACK.to_dict()))
    assert data["total"] == 112
    assert sum(k["count"] for k in data["kinds"]) == 112
    assert len({k["id"] for k in data["kinds"]}) == len(data["kinds"])


def test_unknown_kind_is_named():
    with pytest.raises(GameError, match="the UNO Attack deck has no card kind 'draw_two'"):
        UNO_ATTACK.points("draw_two")


# --- hand values ---------------------------------------------------------------------------------------------------


def test_hand_value_sums_card_points():
    assert hand_value(UNO_ATTACK, {"7": 2, "hit_2": 1, "wild_all_hit": 1, "discard_all": 1}) == 14 + 20 + 50 + 30
    assert hand_value(CLASSIC, {}) == 0
    assert hand_value(CLASSIC, {"0": 1, "wild_draw_four": 2}) == 100


def test_red_zero_counts_100_only_with_the_house_rule():
    hand = {"0": 2, "5": 1}
    assert hand_value(CLASSIC, hand, red_zeros=1) == 5
    assert hand_value(CLASSIC, hand, red_zero_100=True, red_zeros=1) == 105
    assert hand_value(CLASSIC, hand, red_zero_100=True) == 5  # the zeros are not red
    assert hand_value(UNO_ATTACK, {"5": 1}, red_zero_100=True) == 5


@pytest.mark.parametrize(
    ("deck", "hand", "red_zeros"),
    [(CLASSIC, {"5": 1}, 1), (CLASSIC, {"0": 2}, 2), (UNO_ATTACK, {"5": 1}, 1), (CLASSIC, {"0": 1}, True)],
)
def test_red_zeros_must_be_zeros_in_the_hand_and_in_the_deck(deck, hand, red_zeros):
    with pytest.raises(GameError, match="red zeros"):
        hand_value(deck, hand, red_zero_100=True, red_zeros=red_zeros)


# --- hand validation -------------------------------------------------------------------------------------------


def test_validate_hand_normalises_to_deck_order_without_zero_counts():
    assert validate_hand(UNO_ATTACK, {"wild": 1, "hit_2": 0, "3": 2}) == {"3": 2, "wild": 1}


@pytest.mark.parametrize(
    ("hand", "message"),
    [
        ({"wild_all_hit": 3}, "Bob: 3 × Wild All Hit, but the UNO Attack deck has only 2"),
        ({"7": 9}, "Bob: 9 × number 7, but the UNO Attack deck has only 8"),
        ({"skip": -1}, "Bob: -1 × Skip: a count cannot be negative"),
        ({"skip": 1.5}, "Bob: the count of Skip must be a whole number, not 1.5"),
        ({"skip": "2"}, "Bob: the count of Skip must be a whole number, not '2'"),
        ({"skip": True}, "Bob: the count of Skip must be a whole number, not True"),
        ({"0": 1}, "Bob: the UNO Attack deck has no card kind '0'"),
        ({"Hit 2": 1}, "Bob: the UNO Attack deck has no card kind 'Hit 2'"),
        ({7: 1}, "Bob: the UNO Attack deck has no card kind 7"),
        ([("7", 1)], "Bob: a hand maps card kinds to counts"),
        (35, "Bob: a hand maps card kinds to counts"),
    ],
)
def test_bad_hands_are_refused_naming_the_player_and_kind(hand, message):
    with pytest.raises(GameError) as caught:
        validate_hand(UNO_ATTACK, hand, player="Bob")
    assert str(caught.value).startswith(message)


def test_huge_kind_names_are_cut_short_in_messages():
    with pytest.raises(GameError) as caught:
        validate_hand(CLASSIC, {"x" * 10_000: 1})
    assert len(str(caught.value)) < 300


def test_counts_across_all_hands_cannot_exceed_the_deck():
    ok = {"Ann": {"wild_all_hit": 1}, "Bob": {"wild_all_hit": 1}}
    assert validate_round_hands(UNO_ATTACK, ok) == ok
    with pytest.raises(GameError) as caught:
        validate_round_hands(UNO_ATTACK, {**ok, "Cy": {"wild_all_hit": 1, "7": 1}})
    assert str(caught.value) == (
        "3 × Wild All Hit across the hands (Ann 1, Bob 1, Cy 1), but the UNO Attack deck has only 2"
    )


def test_round_hands_check_each_hand_first():
    with pytest.raises(GameError, match=r"^Cy: -2 × number 4"):
        validate_round_hands(CLASSIC, {"Ann": {}, "Cy": {"4": -2}})
    with pytest.raises(GameError, match="the hands map each player"):
        validate_round_hands(CLASSIC, [{"4": 1}])


# --- rulesets and house rules ---------------------------------------------------------------------------------------


def test_ruleset_picks_its_deck():
    assert Ruleset.parse("uno_attack").deck is UNO_ATTACK
    assert Ruleset.parse("classic").deck is CLASSIC
    with pytest.raises(GameError, match="ruleset = 'uno' is not accepted; expected one of uno_attack, classic"):
        Ruleset.parse("uno")


def test_house_rules_default_to_the_official_rules():
    rules = HouseRules()
    assert not any(v for k, v in rules.to_dict().items() if k not in HOUSE_RULE_NUMBERS)
    # 2 presses for a forgotten UNO (the UNO Attack rules), 2 cards in classic UNO; a party penalty costs 2
    assert (rules.forgot_uno_penalty, rules.party_penalty) == (2, 2)
    assert {k: (n.low, n.high, n.default) for k, n in HOUSE_RULE_NUMBERS.items()} == {
        "party_penalty": (1, 10, 2),
        "forgot_uno_penalty": (1, 10, 2),
    }


def test_house_rules_round_trip_through_a_mapping():
    rules = HouseRules(stacking=True, red_zero_100=True, party_penalties=True, party_penalty=3)
    data = json.loads(json.dumps(rules.to_dict()))
    assert HouseRules.from_mapping(data) == rules
    assert HouseRules.from_mapping({"jump_in": True}) == HouseRules(jump_in=True)


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"stackin": True}, "unknown house rule 'stackin'; the house rules are stacking, jump_in"),
        ({"stacking": "yes"}, "stacking = 'yes' is not accepted; expected true or false"),
        ({"stacking": 1}, "stacking = 1 is not accepted; expected true or false"),
        ({"party_penalty": 0}, "party_penalty = 0 is not accepted; expected a whole number from 1 to 10"),
        ({"party_penalty": 2.0}, "party_penalty = 2.0 is not accepted"),
        ({"party_penalty": True}, "party_penalty = True is not accepted"),
        ({"forgot_uno_penalty": 0}, "forgot_uno_penalty = 0 is not accepted; expected a whole number from 1 to 10"),
        ({"forgot_uno_penalty": 11}, "forgot_uno_penalty = 11 is not accepted; expected a whole number from 1 to 10"),
        ({"forgot_uno_penalty": "3"}, "forgot_uno_penalty = '3' is not accepted"),
        (["stacking"], "house rules map rule names to values"),
    ],
)
def test_bad_house_rules_are_refused_by_name(mapping, message):
    with pytest.raises(GameError) as caught:
        HouseRules.from_mapping(mapping)
    assert str(caught.value).startswith(message)


def test_every_house_rule_toggle_says_where_it_means_something():
    toggles = [k for k in HouseRules().to_dict() if k not in HOUSE_RULE_NUMBERS and k not in HOUSE_RULE_CHOICES]
    assert list(HOUSE_RULE_RULESETS) == toggles
    assert all(rulesets and rulesets <= set(Ruleset) for rulesets in HOUSE_RULE_RULESETS.values())
    # The UNO Attack deck has no zeros (GAME.md): the rules about a 0 are classic UNO's only.
    assert HOUSE_RULE_RULESETS["seven_zero"] == HOUSE_RULE_RULESETS["red_zero_100"] == {Ruleset.CLASSIC}


# --- players -------------------------------------------------------------------------------------------------------


def test_players_keep_seat_order():
    assert validate_players(["Ann", "<b>Bob</b>", "小明", "Zoë 🎲"], Ruleset.UNO_ATTACK) == (
        "Ann",
        "<b>Bob</b>",
        "小明",
        "Zoë 🎲",
    )


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["Ann"], "1 players; classic UNO is for 2 to 10"),
        ([f"P{i}" for i in range(11)], "11 players; classic UNO is for 2 to 10"),
        (["Ann", "ann"], "player names must differ: 'Ann' and 'ann'"),
        (["Ann", ""], "a player name must be a non-empty text"),
        (["Ann", 7], "a player name must be a non-empty text; got 7"),
        (["Ann", " Bob"], "player name ' Bob' is not accepted"),
        (["Ann", "B" * 41], "player name 'BBBB"),
        (["Ann", "Bo\x00b"], "player name 'Bo\\x00b' contains control characters"),
        ("Ann,Bob", "the players must be a list of names"),
    ],
)
def test_bad_player_lists_are_refused(players, message):
    with pytest.raises(GameError) as caught:
        validate_players(players, Ruleset.CLASSIC)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(("ruleset", "most"), [(Ruleset.UNO_ATTACK, 9), (Ruleset.CLASSIC, 10)])
def test_uno_attack_is_for_2_to_9_players_classic_uno_for_2_to_10(ruleset, most):
    assert len(validate_players([f"P{i}" for i in range(most)], ruleset)) == most
    with pytest.raises(GameError, match=f"{most + 1} players; {ruleset.label} is for 2 to {most}"):
        validate_players([f"P{i}" for i in range(most + 1)], ruleset)
