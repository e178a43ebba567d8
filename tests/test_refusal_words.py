"""Every refusal a player can meet carries a stable reason (or code) and its parameters, which the page words in
the player's language; the English message stays for logs. Expected values come from the rules in docs/GAME.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.daemon import Daemon
from launcher.fairplay.mixing import REVEAL_S
from launcher.fairplay.sealing import commitment_of
from launcher.press.controller import PressRefused
from launcher.press.outcomes import FaultCause
from launcher.refusals import Refusal
from tests.conftest import MakeDaemon, joined_client, local_config
from tests.test_fairness_api import value

STATIC = Path(__file__).resolve().parent.parent / "webui" / "static"
LANGS = ["en", "zh-Hans", "zh-Hant"]


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path), virtual=True)


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def new_game(client: FlaskClient, **body: Any) -> None:
    reply = client.post("/api/games", json=body)
    assert reply.status_code == 201, reply.get_json()


def refused(client: FlaskClient, method: str, path: str, body: Any = None) -> dict[str, Any]:
    reply = client.open(path, method=method, json=body)
    assert 400 <= reply.status_code < 500, reply.get_json()
    error: dict[str, Any] = reply.get_json()["error"]
    assert error["message"]  # the English words stay, for logs and the CLI
    return error


def declare(client: FlaskClient, body: dict[str, Any]) -> dict[str, Any]:
    reply = client.post("/api/attacks", json=body)
    assert reply.status_code == 200, reply.get_json()
    return reply.get_json()["game"]


def press_for(client: FlaskClient, player: str) -> None:
    reply = client.post("/api/press", json={"player": player})
    assert reply.status_code == 200, reply.get_json()


def test_a_card_declared_while_someone_owes_names_who_owes_what_for_which_card(client: FlaskClient) -> None:
    """Attacks hold play: after Ann's Hit 2, Bob must press twice before any card is declared."""
    new_game(client, players=["Ann", "Bob", "Cy", "Dee"], dealer="Dee")
    declare(client, {"kind": "hit2", "by": "Ann"})
    error = refused(client, "POST", "/api/attacks", {"kind": "skip", "by": "Bob"})
    assert error["code"] == "bad_declaration"  # the code clients already know stays
    owed = {"reason": "owes", "player": "Bob", "card": "hit_2", "presses": 2, "cards": 0, "until_fire": False}
    assert error | owed == error
    assert error["started"] is False
    press_for(client, "Bob")
    error = refused(client, "POST", "/api/attacks", {"kind": "skip", "by": "Bob"})
    assert (error["presses"], error["started"]) == (1, True)


def test_stacking_refusals_name_the_player_who_was_hit(client: FlaskClient) -> None:
    """Stacking: only the player hit may answer, and only before their first press."""
    new_game(client, players=["Ann", "Bob", "Cy"], house_rules={"stacking": True})
    declare(client, {"kind": "hit2", "by": "Ann"})  # Bob is hit
    error = refused(client, "POST", "/api/attacks", {"kind": "hit2", "by": "Cy"})
    assert (error["reason"], error["player"]) == ("stack_not_hit", "Bob")
    press_for(client, "Bob")
    error = refused(client, "POST", "/api/attacks", {"kind": "hit2", "by": "Bob"})
    assert (error["reason"], error["player"]) == ("stack_too_late", "Bob")


def test_knock_out_refuses_a_player_already_out_and_the_last_two(client: FlaskClient) -> None:
    new_game(client, players=["Ann", "Bob", "Cy"], mode="knock_out")
    declare(client, {"kind": "went_out", "player": "Ann"})
    error = refused(client, "POST", "/api/attacks", {"kind": "went_out", "player": "Ann"})
    assert (error["reason"], error["player"]) == ("went_out", "Ann")
    error = refused(client, "POST", "/api/attacks", {"kind": "went_out", "player": "Bob"})
    assert (error["reason"], error["player"]) == ("last_two", "Bob")


def test_round_refusals(client: FlaskClient) -> None:
    new_game(client, players=["Ann", "Bob"])
    error = refused(client, "DELETE", "/api/games/current/rounds/last")
    assert (error["code"], error["reason"]) == ("bad_round", "no_round_to_undo")
    error = refused(client, "POST", "/api/games/current/rounds", {"winner": "Ann", "hands": {"Ann": {"7": 1}}})
    assert (error["reason"], error["player"]) == ("winner_holds_cards", "Ann")


def test_a_round_scored_while_someone_owes_names_the_first_demand(client: FlaskClient) -> None:
    """close_round: refused while anyone still owes the launcher (docs/GAME.md, End of a round)."""
    new_game(client, players=["Ann", "Bob", "Cy"])
    declare(client, {"kind": "hit2", "by": "Ann"})  # Bob owes 2 presses
    error = refused(client, "POST", "/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": 5, "Cy": 5}})
    assert error["code"] == "attacks_open" and "Bob" in error["owed"]  # the English words stay too
    assert (error["player"], error["card"], error["presses"], error["started"]) == ("Bob", "hit_2", 2, False)


def test_a_game_won_refuses_more_rounds(client: FlaskClient) -> None:
    """Winner collects, to 500 by default: one round worth 500 ends it."""
    new_game(client, players=["Ann", "Bob"])
    reply = client.post("/api/games/current/rounds", json={"winner": "Ann", "hands": {"Bob": 500}})
    assert reply.status_code == 201, reply.get_json()
    error = refused(client, "POST", "/api/games/current/rounds", {"winner": "Bob", "hands": {"Ann": 5}})
    assert error["code"] == "game_over"


@pytest.mark.parametrize(
    ("players", "expected"),
    [
        (["Ann", "ann"], {"reason": "names_differ", "first": "Ann", "second": "ann"}),  # distinct ignoring case
        (["A" * 41, "Bob"], {"reason": "name_too_long", "max": 40}),  # each 1–40 characters
        ([f"P{i}" for i in range(10)], {"reason": "player_count", "count": 10, "low": 2, "high": 9}),  # UNO Attack
    ],
)
def test_player_names_are_refused_with_their_rule(
    client: FlaskClient, players: list[str], expected: dict[str, Any]
) -> None:
    error = refused(client, "POST", "/api/games", {"players": players})
    assert error["code"] == "bad_game"
    assert error | expected == error


def test_a_press_with_the_lid_open_is_refused_by_code(daemon: Daemon, client: FlaskClient) -> None:
    daemon.hardware.set_lid(True)  # type: ignore[attr-defined]
    error = refused(client, "POST", "/api/press", {})
    assert error["code"] == "lid_open"


def test_a_fault_carries_its_cause_and_refuses_presses_by_code(daemon: Daemon, client: FlaskClient) -> None:
    """The launcher's board lost: the launcher stops to be safe, says why, and takes no press until reset."""
    daemon.controller.link_changed(False, "unplugged")
    state = client.get("/api/state").get_json()
    assert state["fault"] and state["fault_cause"] == "board"
    faults = [e.data for e in daemon.bus.events_after(0) if e.type == "hardware.fault"]
    assert faults == [{"message": state["fault"], "cause": "board"}]
    assert refused(client, "POST", "/api/press", {})["code"] == "fault"


CONTRIBUTE = "/api/shuffles/current/contributions"
REVEAL = "/api/shuffles/current/reveals"


def test_contribution_refusals_name_the_shuffle_they_were_sent_for(daemon: Daemon, client: FlaskClient) -> None:
    """docs/FAIRNESS.md: one commitment a phone while commitments are open, its bytes once they closed, to the
    shuffle in play."""
    number = client.get("/api/state").get_json()["shuffle"]["number"]
    mine = value()
    assert client.post(CONTRIBUTE, json={"shuffle": number, "commitment": commitment_of(mine)}).status_code == 201
    error = refused(client, "POST", CONTRIBUTE, {"shuffle": number, "commitment": commitment_of(value())})
    assert (error["code"], error["shuffle"]) == ("already_contributed", number)
    error = refused(client, "POST", CONTRIBUTE, {"shuffle": number + 1, "commitment": commitment_of(value())})
    assert error | {"code": "not_found", "reason": "shuffle_not_started", "shuffle": number + 1} == error
    error = refused(client, "POST", REVEAL, {"shuffle": number, "value": mine})
    assert (error["code"], error["shuffle"]) == ("reveal_early", number)
    with pytest.raises(PressRefused) as sealing:  # the button, while the phones reveal (a phone's press waits)
        daemon.controller.press("button")
    assert sealing.value.code == "shuffle_sealing"
    error = refused(client, "POST", REVEAL, {"shuffle": number, "value": value()})
    assert (error["code"], error["shuffle"]) == ("reveal_mismatch", number)
    late = joined_client(daemon)
    error = refused(late, "POST", CONTRIBUTE, {"shuffle": number, "commitment": commitment_of(value())})
    assert (error["code"], error["shuffle"]) == ("contributions_closed", number)
    daemon.clock.sleep(REVEAL_S)
    assert daemon.controller.press("web").wait(10)
    error = refused(client, "POST", REVEAL, {"shuffle": number, "value": mine})
    assert (error["code"], error["shuffle"]) == ("reveals_closed", number)
    daemon.controller.new_shuffle()
    error = refused(late, "POST", CONTRIBUTE, {"shuffle": number, "commitment": commitment_of(value())})
    assert error | {"code": "shuffle_over", "shuffle": number, "playing": number + 1} == error


def test_undo_refusals_say_why_by_code(client: FlaskClient) -> None:
    """docs/GAME.md, Undo: nothing declared leaves nothing to undo; a press after the declaration makes it too late."""
    new_game(client, players=["Ann", "Bob", "Cy"])
    assert refused(client, "POST", "/api/game/undo-declaration", {})["code"] == "nothing_to_undo"
    declare(client, {"kind": "hit2", "by": "Ann"})
    press_for(client, "Bob")
    assert refused(client, "POST", "/api/game/undo-declaration", {})["code"] == "undo_too_late"


# --- words a player can read ----------------------------------------------------------------------------------------

COLOUR = re.compile(r"--(bg|surface|ring|warn|gold|muted): (#[0-9a-f]{6})")


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("theme", ["dark", "light"])
def test_coloured_small_text_reads_at_4_5_to_1_on_the_page_in_both_themes(theme: str) -> None:
    css = (STATIC / "app.css").read_text(encoding="utf-8")
    dark, light = css.split("@media (prefers-color-scheme: light)", 1)
    colours = dict(COLOUR.findall(dark))
    if theme == "light":
        colours |= dict(COLOUR.findall(light.split("\n}", 1)[0]))
    weak = {
        (text, ground): round(contrast(colours[text], colours[ground]), 2)
        for text in ("ring", "warn", "gold", "muted")
        for ground in ("bg", "surface")
        if contrast(colours[text], colours[ground]) < 4.5
    }
    assert weak == {}


# --- words for every code ------------------------------------------------------------------------------------------


def catalogue(lang: str) -> dict[str, str]:
    return json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", LANGS)
def test_every_refusal_the_daemon_can_send_has_words_in_every_language(lang: str) -> None:
    words = catalogue(lang)
    assert sorted(r.value for r in Refusal if f"refused.{r.value}" not in words) == []


@pytest.mark.parametrize("lang", LANGS)
def test_every_fault_cause_has_words_in_every_language(lang: str) -> None:
    words = catalogue(lang)
    assert sorted(c.value for c in FaultCause if f"fault.cause_{c.value}" not in words) == []


def table_entries(script: str, table: str) -> set[str]:
    """The keys of a script's `const TABLE = { key: ... }` wording table."""
    text = (STATIC / script).read_text(encoding="utf-8").split(f"const {table} = {{", 1)[1].split("\n};", 1)[0]
    return set(re.findall(r"^  (\w+): ", text, re.M))


def test_the_page_words_every_refusal_and_fault_cause_from_its_tables() -> None:
    """api.js's REFUSALS and gamestate.js's FAULT_CAUSES have an entry for each: a new one without words fails."""
    assert sorted(r.value for r in Refusal if r.value not in table_entries("api.js", "REFUSALS")) == []
    assert sorted(c.value for c in FaultCause if c.value not in table_entries("gamestate.js", "FAULT_CAUSES")) == []


# --- the round entry, the declarations and a new game's settings: each refusal a person can meet has a reason ------


def test_more_of_a_card_across_the_hands_than_the_deck_holds_names_the_card_its_count_and_who_holds_them(
    client: FlaskClient,
) -> None:
    """The UNO Attack deck holds 2 Wild Hit-Fire (docs/GAME.md, The deck): three in the hands cannot be."""
    new_game(client, players=["Ann", "Bob", "Cy", "Dee"])
    hands = {"Bob": {"wild_hit_fire": 1}, "Cy": {"wild_hit_fire": 1, "7": 1}, "Dee": {"wild_hit_fire": 1}}
    error = refused(client, "POST", "/api/games/current/rounds", {"winner": "Ann", "hands": hands})
    expected = {"code": "bad_round", "reason": "over_deck", "card": "wild_hit_fire", "count": 3, "max": 2}
    assert error | expected == error
    assert error["held"] == [["Bob", 1], ["Cy", 1], ["Dee", 1]]


def test_one_hand_over_the_deck_names_its_player(client: FlaskClient) -> None:
    new_game(client, players=["Ann", "Bob"])
    error = refused(client, "POST", "/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": {"reverse": 9}}})
    expected = {"reason": "over_deck", "card": "reverse", "count": 9, "max": 8, "held": [["Bob", 9]]}
    assert error | expected == error


@pytest.mark.parametrize(
    ("game", "body", "expected"),
    [
        (  # Trade Hands cannot end a round in UNO Attack
            {},
            {"winner": "Ann", "hands": {"Bob": 5, "Cy": 5}, "last_card": "trade_hands"},
            {"reason": "no_finish_on", "player": "Ann", "card": "trade_hands"},
        ),
        (  # the house rule: only a number card finishes a round
            {"house_rules": {"last_card_not_action": True}},
            {"winner": "Ann", "hands": {"Bob": 5, "Cy": 5}, "last_card": "skip"},
            {"reason": "no_finish_on", "player": "Ann", "card": "skip"},
        ),
        (
            {"house_rules": {"last_card_not_action": True}},
            {"winner": "Ann", "hands": {"Bob": 5, "Cy": 5}},
            {"reason": "last_card_needed", "player": "Ann"},
        ),
        (
            {"ruleset": "classic", "house_rules": {"red_zero_100": True}},
            {"winner": "Ann", "hands": {"Bob": {"7": 1}, "Cy": 5}, "red_zero": "Bob"},
            {"reason": "red_zero_not_held", "player": "Bob"},
        ),
        ({}, {"winner": "Ann", "hands": {"Bob": 5}}, {"reason": "hand_missing", "players": ["Cy"]}),
    ],
)
def test_a_round_the_rules_refuse_says_why_by_reason(
    client: FlaskClient, game: dict[str, Any], body: dict[str, Any], expected: dict[str, Any]
) -> None:
    new_game(client, players=["Ann", "Bob", "Cy"], **game)
    error = refused(client, "POST", "/api/games/current/rounds", body)
    assert error | expected == error


def test_a_side_eliminated_in_an_earlier_round_is_named_with_that_round(client: FlaskClient) -> None:
    """Elimination: reaching the target puts a side out (docs/GAME.md); a later round naming them is refused."""
    new_game(client, players=["Ann", "Bob", "Cy", "Dee"], mode="elimination", target=100)
    reply = client.post("/api/games/current/rounds", json={"winner": "Ann", "hands": {"Bob": 100, "Cy": 5, "Dee": 5}})
    assert reply.status_code == 201, reply.get_json()
    error = refused(client, "POST", "/api/games/current/rounds", {"winner": "Bob", "hands": {"Ann": 5, "Cy": 5}})
    assert error | {"reason": "eliminated", "side": "Bob", "round": 1} == error


def test_a_first_card_that_goes_back_and_one_turned_too_late_say_so_by_reason(client: FlaskClient) -> None:
    """docs/GAME.md, The first card: a Trade Hands goes back into the deck; the first card is turned once."""
    new_game(client, players=["Ann", "Bob", "Cy"])
    error = refused(client, "POST", "/api/attacks", {"kind": "first_card", "card": "trade_hands"})
    assert error | {"reason": "first_card_back", "card": "trade_hands"} == error
    declare(client, {"kind": "first_card", "card": "7"})
    error = refused(client, "POST", "/api/attacks", {"kind": "first_card", "card": "5"})
    assert error["reason"] == "first_card_late"


def test_challenges_that_cannot_be_made_say_why_by_reason(client: FlaskClient) -> None:
    """Classic UNO: only the player hit by a Wild Draw Four challenges it, and not one stacked on."""
    new_game(client, players=["Ann", "Bob", "Cy"], ruleset="classic", house_rules={"stacking": True})
    error = refused(client, "POST", "/api/attacks", {"kind": "challenge", "player": "Bob", "legal": True})
    assert error | {"reason": "nothing_to_challenge", "player": "Bob"} == error
    declare(client, {"kind": "wild_draw_four", "by": "Ann"})
    declare(client, {"kind": "wild_draw_four", "by": "Bob"})  # stacked: Cy now owes 8
    error = refused(client, "POST", "/api/attacks", {"kind": "challenge", "player": "Cy", "legal": True})
    assert error["reason"] == "challenge_closed"


def test_a_card_that_does_not_stack_on_the_attack_names_both(client: FlaskClient) -> None:
    """Stacking (docs/GAME.md): a Draw Two does not answer a Wild Draw Four."""
    new_game(client, players=["Ann", "Bob", "Cy"], ruleset="classic", house_rules={"stacking": True})
    declare(client, {"kind": "wild_draw_four", "by": "Ann"})
    error = refused(client, "POST", "/api/attacks", {"kind": "draw_two", "by": "Bob"})
    assert error | {"reason": "stack_mismatch", "card": "draw_two", "onto": "wild_draw_four"} == error


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"players": ["Ann", "Bob"], "mode": "elimination"}, "elimination_needs_three"),
        (
            {
                "players": ["Ann", "Bob", "Cy", "Dee"],
                "mode": "knock_out",
                "teams": {"A": ["Ann", "Cy"], "B": ["Bob", "Dee"]},
            },
            "knock_out_teams",
        ),
    ],
)
def test_a_game_whose_settings_do_not_go_together_says_why_by_reason(
    client: FlaskClient, body: dict[str, Any], reason: str
) -> None:
    assert refused(client, "POST", "/api/games", body)["reason"] == reason


def test_a_press_for_a_player_the_table_does_not_ask_is_refused_by_code(client: FlaskClient) -> None:
    new_game(client, players=["Ann", "Bob", "Cy"])
    declare(client, {"kind": "hit2", "by": "Ann"})  # Bob owes 2 presses
    error = refused(client, "POST", "/api/press", {"player": "Cy"})
    assert (error["code"], error["asked"]) == ("not_your_press", "Bob")


def test_the_page_never_shows_the_daemons_english_message() -> None:
    """api.js's refusal(): a reason or code without words in REFUSALS says the status in the reader's language."""
    text = (STATIC / "api.js").read_text(encoding="utf-8").split("export function refusal(", 1)[1].split("\n}\n")[0]
    assert "message" not in text


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        ("/api/games", {"players": ["Ann", "Bob"], "target": 100_001}, {"low": 1, "high": 100_000}),
        ("/api/games", {"players": ["Ann", "Bob"], "house_rules": {"party_penalty": 0}}, {"low": 1}),
    ],
)
def test_a_number_typed_out_of_its_range_is_refused_with_the_range(
    client: FlaskClient, path: str, body: dict[str, Any], expected: dict[str, Any]
) -> None:
    error = refused(client, "POST", path, body)
    assert error | {"reason": "out_of_range", **expected} == error


def test_a_typed_hand_total_over_the_whole_deck_is_refused_with_the_range(client: FlaskClient) -> None:
    new_game(client, players=["Ann", "Bob"])
    error = refused(client, "POST", "/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": 10**6}})
    assert (error["reason"], error["low"]) == ("out_of_range", 0)


def test_every_field_a_refusal_carries_is_in_the_apis_error_schema() -> None:
    """docs/API.md's table names the fields each refusal carries; /api/openapi.json's Error must describe them all,
    or a client validating answers by the API's own description rejects a refusal (the fuzzer met `held`)."""
    from webui.openapi import SPEC

    described = set(SPEC["components"]["schemas"]["Error"]["properties"]["error"]["properties"])
    api = (Path(__file__).parent.parent / "docs/API.md").read_text(encoding="utf-8")
    table = api.split("### Refusals in the player's language", 1)[1].split("\n#", 1)[0]
    carried = set()
    for _code, fields in re.findall(r"^\| `(\w+)` \| ([^|]*) \|", table, flags=re.M):
        carried.update(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", fields)))
    assert {"held", "player", "count"} <= carried  # the table was read
    assert carried - described == set()
