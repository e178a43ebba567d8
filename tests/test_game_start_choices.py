"""Who plays first (issue #50 items 4 and 5). Seed 000's classic rules: the dealer plays to the card turned up
(「莊家根據此牌出牌，遊戲開始」), and on a first Skip the dealer's next player starts (「由莊家的下家開始下牌」);
its UNO Attack rules start left of the dealer (「由發牌人左邊開始」). On a first Reverse seeds 000 and 003 have the
dealer start, seeds 001 and 002 the player on the dealer's right (「庄家左边玩家（若是"reverse"则为右边）」). Each
is a house rule, each ruleset defaulting to its seed's way. Ann deals; Ben sits on her left, Dee on her right."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.game import Game, GameError, HouseRules, Mode, Ruleset, Table
from launcher.game.demands import Cause, Demand
from tests.test_game_api import client, daemon, post  # noqa: F401 (fixtures)

PLAYERS = ["Ann", "Ben", "Cai", "Dee"]  # clockwise
OPENERS = {Ruleset.UNO_ATTACK: ("hit_2", "presses"), Ruleset.CLASSIC: ("draw_two", "cards")}


def table(ruleset: Ruleset, **rules: Any) -> Table:
    return Table(PLAYERS, ruleset, HouseRules(**rules), dealer="Ann")


def owed(t: Table) -> list[tuple[str, str, int | str]]:
    return [(d.player, d.cause.value, "until fire" if d.until_fire else d.presses + d.cards) for d in t.demands]


@pytest.mark.parametrize("ruleset", list(Ruleset))
def test_the_issues_first_skip_names_ben_when_the_dealer_plays_first_and_cai_from_the_left(ruleset: Ruleset) -> None:
    dealer_first = table(ruleset, first_player="dealer")
    assert dealer_first.current == "Ann"  # before the card is turned up the phones name the dealer
    dealer_first.first_card("skip")
    assert (dealer_first.current, dealer_first.demands) == ("Ben", ())
    left_first = table(ruleset, first_player="left_of_dealer")
    assert left_first.current == "Ben"
    left_first.first_card("skip")
    assert left_first.current == "Cai"


@pytest.mark.parametrize("ruleset", list(Ruleset))
@pytest.mark.parametrize(
    ("first_player", "taker", "starts"), [("dealer", "Ann", "Ben"), ("left_of_dealer", "Ben", "Cai")]
)
def test_a_first_hit_2_or_draw_two_falls_on_whoever_plays_first(
    ruleset: Ruleset, first_player: str, taker: str, starts: str
) -> None:
    kind, _ = OPENERS[ruleset]
    t = table(ruleset, first_player=first_player)
    assert t.first_card(kind) is True
    assert (owed(t), t.current) == ([(taker, kind, 2)], starts)


@pytest.mark.parametrize("ruleset", list(Ruleset))
@pytest.mark.parametrize(("first_player", "starts"), [("dealer", "Ann"), ("left_of_dealer", "Ben")])
@pytest.mark.parametrize("card", ["7", "wild"])
def test_a_number_or_wild_turned_up_is_played_to_by_whoever_plays_first(
    ruleset: Ruleset, first_player: str, starts: str, card: str
) -> None:
    t = table(ruleset, first_player=first_player)
    t.first_card(card)
    assert (t.current, t.direction, t.demands) == (starts, 1, ())
    t.played(starts)
    assert t.current == {"Ann": "Ben", "Ben": "Cai"}[starts]  # clockwise on


@pytest.mark.parametrize(
    ("first_player", "owes", "starts"),
    [("dealer", "Ann", "Ben"), ("left_of_dealer", "Ben", "Cai")],
)
def test_uno_attack_wild_hit_fire_turned_up_falls_on_whoever_plays_first(first_player: str, owes: str, starts: str):
    t = table(Ruleset.UNO_ATTACK, first_player=first_player)
    t.first_card("wild_hit_fire")
    assert (owed(t), t.current) == ([(owes, "wild_hit_fire", "until fire")], starts)


@pytest.mark.parametrize(("first_player", "starts"), [("dealer", "Ann"), ("left_of_dealer", "Ben")])
def test_uno_attack_wild_all_hit_turned_up_is_everyone_but_the_dealer_then_the_first_player(
    first_player: str, starts: str
) -> None:
    t = table(Ruleset.UNO_ATTACK, first_player=first_player)
    t.first_card("wild_all_hit")
    assert [d.player for d in t.demands] == ["Ben", "Cai", "Dee"]
    assert t.current == starts


@pytest.mark.parametrize("ruleset", list(Ruleset))
@pytest.mark.parametrize("first_player", ["dealer", "left_of_dealer"])
@pytest.mark.parametrize(
    ("reverse_start", "starts", "then"), [("dealer", "Ann", "Dee"), ("right_of_dealer", "Dee", "Cai")]
)
def test_a_first_reverse_starts_with_the_dealer_or_the_player_on_their_right_and_goes_right(
    ruleset: Ruleset, first_player: str, reverse_start: str, starts: str, then: str
) -> None:
    t = table(ruleset, first_player=first_player, reverse_start=reverse_start)
    t.first_card("reverse")
    assert (t.current, t.direction) == (starts, -1)
    t.played(starts)
    assert t.current == then


@pytest.mark.parametrize(
    ("ruleset", "first", "after_skip"),
    [(Ruleset.UNO_ATTACK, "Ben", "Cai"), (Ruleset.CLASSIC, "Ann", "Ben")],
)
def test_each_ruleset_starts_its_seeds_way_unless_the_table_chooses(ruleset: Ruleset, first: str, after_skip: str):
    t = table(ruleset)
    assert t.current == first
    assert (t.house_rules.first_player, t.house_rules.reverse_start) == (ruleset.first_player, "dealer")
    t.first_card("skip")
    assert t.current == after_skip
    reverse = table(ruleset)
    reverse.first_card("reverse")
    assert reverse.current == "Ann"


def test_classic_deals_from_the_dealers_left_and_the_dealer_then_plays_first() -> None:
    t = table(Ruleset.CLASSIC)
    assert [p for p, _ in t.deal()] == ["Ben", "Cai", "Dee", "Ann"]
    assert t.pending() == Demand("Ben", Cause.DEAL, cards=7)
    assert t.current == "Ann"


def test_the_next_round_starts_the_chosen_way_from_its_new_dealer() -> None:
    for rules, first in (({"first_player": "dealer"}, "Cai"), ({"first_player": "left_of_dealer"}, "Dee")):
        following = table(Ruleset.UNO_ATTACK, **rules).next_round("Cai")
        assert (following.dealer, following.current) == ("Cai", first)


def test_the_choice_is_kept_with_the_game_and_a_game_stored_before_it_starts_left_of_the_dealer() -> None:
    game = Game(PLAYERS, Mode.WINNER_COLLECTS, ruleset=Ruleset.CLASSIC)
    assert game.house_rules.first_player == "dealer"  # settled when the game is made: a later default changes nothing
    stored = game.to_dict()
    assert Game.from_dict(stored).house_rules.first_player == "dealer"
    before = {**stored, "house_rules": {k: v for k, v in stored["house_rules"].items() if k != "first_player"}}
    old = Game.from_dict(before)
    assert old.house_rules.first_player == "left_of_dealer"  # what it played when it was stored
    t = Table(PLAYERS, Ruleset.CLASSIC, dealer="Ann")
    t_stored = t.to_dict()
    t_stored["house_rules"] = {k: v for k, v in t_stored["house_rules"].items() if k != "first_player"}
    assert Table.from_dict(t_stored).house_rules.first_player == "left_of_dealer"


@pytest.mark.parametrize(("key", "value"), [("first_player", "right"), ("reverse_start", True), ("first_player", 1)])
def test_a_choice_that_is_not_offered_is_refused_by_name(key: str, value: object) -> None:
    with pytest.raises(GameError, match=f"{key} = .* is not accepted; expected one of"):
        HouseRules.from_mapping({key: value})


@pytest.mark.parametrize(
    ("ruleset", "rules", "current"),
    [
        ("classic", {}, "Ann"),
        ("classic", {"first_player": "left_of_dealer"}, "Ben"),
        ("uno_attack", {}, "Ben"),
        ("uno_attack", {"first_player": "dealer"}, "Ann"),
    ],
)
def test_a_new_game_through_the_api_starts_as_chosen(
    client: FlaskClient,  # noqa: F811
    ruleset: str,
    rules: dict[str, str],
    current: str,
) -> None:
    game = post(client, "/api/games", {"players": PLAYERS, "ruleset": ruleset, "house_rules": rules, "dealer": "Ann"})
    assert game["table"]["current"] == current
    assert game["house_rules"]["reverse_start"] == "dealer"
    assert game["house_rules"]["first_player"] == {"Ann": "dealer", "Ben": "left_of_dealer"}[current]
    choices = {c["name"]: c for c in client.get("/api/game").get_json()["rules"]["house_choices"]}
    assert choices["first_player"]["defaults"] == {"uno_attack": "left_of_dealer", "classic": "dealer"}
    assert choices["reverse_start"]["values"] == ["dealer", "right_of_dealer"]


def test_a_new_game_with_a_choice_not_offered_is_refused_with_a_400_naming_it(client: FlaskClient) -> None:  # noqa: F811
    reply = client.post("/api/games", json={"players": PLAYERS, "house_rules": {"reverse_start": "left"}})
    assert reply.status_code == 400
    assert reply.get_json()["error"]["code"] == "bad_game" and "reverse_start" in reply.get_json()["error"]["message"]
