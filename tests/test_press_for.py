"""Whose press it is. A phone that said who it is presses for that player; pressing for someone else is asked for
by name; the launcher's own button presses for whoever the table asks; one player's penalty never takes another
player's press. Expected values from the rules: a forgotten UNO costs 2 presses, a Hit 2 makes the next player
press twice, and a player who cannot play presses once and the turn ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.config import Config
from launcher.daemon import Daemon
from launcher.game import GameError, Table
from tests.conftest import MakeDaemon, joined_client, local_config


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path).replace("sim", cards_per_second=400.0, card_block_ms=1.0))


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    client = joined_client(daemon)
    reply = client.post("/api/games", json={"players": ["Ann", "Bob", "Cy", "Dee"], "dealer": "Dee"})
    assert reply.status_code == 201, reply.get_json()
    return client


def declare(client: FlaskClient, body: dict[str, Any]) -> dict[str, Any]:
    reply = client.post("/api/attacks", json=body)
    assert reply.status_code == 200, reply.get_json()
    return reply.get_json()["game"]["table"]


def table(client: FlaskClient) -> dict[str, Any]:
    return client.get("/api/game").get_json()["game"]["table"]


def owed(client: FlaskClient) -> list[tuple[str, int]]:
    return [(d["player"], d["presses"]) for d in table(client)["demands"]]


def test_a_queued_penalty_does_not_take_the_press_of_the_player_whose_turn_it_is(client: FlaskClient) -> None:
    declare(client, {"kind": "played", "by": "Ann"})  # Bob's turn
    declare(client, {"kind": "uno_penalty", "player": "Ann"})  # caught: Ann owes 2 presses
    reply = client.post("/api/press", json={"player": "Bob"})  # Bob cannot play, and says so from his phone
    assert reply.status_code == 200, reply.get_json()
    assert reply.get_json()["player"] == "Bob"
    assert owed(client) == [("Ann", 2)]  # Ann still owes both
    assert table(client)["current"] == "Cy"  # Bob's press ended his turn


def test_a_phone_that_said_who_it_is_presses_for_that_player(client: FlaskClient) -> None:
    declare(client, {"kind": "played", "by": "Ann"})
    declare(client, {"kind": "uno_penalty", "player": "Ann"})
    reply = client.post("/api/press", json={"player": "Ann"})
    assert reply.get_json()["player"] == "Ann"
    assert owed(client) == [("Ann", 1)]
    assert table(client)["current"] == "Bob"  # a penalty press is not a turn


def test_a_press_for_nobody_asked_is_refused_before_the_motor_runs(daemon: Daemon, client: FlaskClient) -> None:
    declare(client, {"kind": "hit2", "by": "Cy"})  # Dee must press twice
    presses = daemon.controller.snapshot()["presses"]
    reply = client.post("/api/press", json={"player": "Ann"})  # Ann neither owes nor has the turn
    assert reply.status_code == 409
    error = reply.get_json()["error"]
    assert error["code"] == "not_your_press"
    assert "Dee" in error["message"] and "Ann" in error["message"]
    assert error["asked"] == "Dee"  # the page asks "Press for Dee?" with it
    assert daemon.controller.snapshot()["presses"] == presses  # nothing was drawn, nothing fired
    assert owed(client) == [("Dee", 2)]


def test_pressing_for_the_player_asked_counts_for_them(client: FlaskClient) -> None:
    declare(client, {"kind": "hit2", "by": "Cy"})
    reply = client.post("/api/press", json={"player": "Dee"})  # Ann's phone, after "Press for Dee?"
    assert reply.get_json()["player"] == "Dee"
    assert owed(client) == [("Dee", 1)]


def test_the_launchers_button_presses_for_whoever_is_asked(daemon: Daemon, client: FlaskClient) -> None:
    declare(client, {"kind": "played", "by": "Ann"})
    declare(client, {"kind": "uno_penalty", "player": "Ann"})
    ticket = daemon.controller.press("button")
    assert ticket.wait(10)
    assert ticket.player == "Ann"  # the penalty is asked first
    assert owed(client) == [("Ann", 1)]


def test_in_a_wild_all_hit_each_phone_presses_for_its_own_player(client: FlaskClient) -> None:
    declare(client, {"kind": "wild_all_hit", "by": "Ann"})  # Bob, Cy and Dee press once each
    assert client.post("/api/press", json={"player": "Cy"}).get_json()["player"] == "Cy"
    assert owed(client) == [("Bob", 1), ("Dee", 1)]
    assert client.post("/api/press", json={"player": "Cy"}).status_code == 409  # Cy has pressed his once


@pytest.mark.parametrize(
    ("body", "code", "names"),
    [
        ({"player": "Zed"}, "bad_press", "Zed"),
        ({"player": 7}, "bad_press", "player"),
        ({"player": "Ann", "cards": 3}, "unknown_field", "cards"),
    ],
)
def test_a_bad_press_body_is_refused_by_name(client: FlaskClient, body: Any, code: str, names: str) -> None:
    reply = client.post("/api/press", json=body)
    assert reply.status_code == 400
    assert reply.get_json()["error"]["code"] == code
    assert names in reply.get_json()["error"]["message"]


def test_a_press_for_a_player_needs_a_game(tmp_path: Path) -> None:
    config = Config().replace("state", dir=str(tmp_path)).replace("web", port=0)
    daemon = Daemon(config.replace("dispense", min_rest_ms=0))
    try:
        reply = joined_client(daemon).post("/api/press", json={"player": "Ann"})
        assert reply.status_code == 409
        assert reply.get_json()["error"]["code"] == "no_game"
    finally:
        daemon.close()


# --- the pure model ---------------------------------------------------------------------------------------------


def test_the_table_serves_the_pressing_players_own_demand() -> None:
    table = Table(["Ann", "Bob", "Cy"], dealer="Cy")
    table.wild_all_hit("Ann")  # Bob, then Cy
    press = table.on_press(False, 0, player="Cy")
    assert (press.player, press.closed) == ("Cy", True)
    assert [d.player for d in table.demands] == ["Bob"]


def test_the_table_refuses_a_press_for_a_player_it_does_not_ask() -> None:
    table = Table(["Ann", "Bob", "Cy"], dealer="Cy")  # Ann's turn
    table.check_press("Ann")
    with pytest.raises(GameError, match="Bob"):
        table.check_press("Bob")
    assert table.asked() == "Ann"


def test_without_turns_any_seated_player_may_press() -> None:
    table = Table(["Ann", "Bob", "Cy"], track_turns=False)
    table.check_press("Bob")
    press = table.on_press(True, 2, player="Bob")
    assert press.player == "Bob"


def test_a_play_out_of_turn_is_followed_and_announced(daemon: Daemon, client: FlaskClient) -> None:
    # Ann's turn (Dee deals); Cy plays: without the jump-in house rule the phones say it came out of Ann's turn.
    after = table(client)["current"]
    assert after == "Ann"
    declare(client, {"kind": "played", "by": "Cy"})
    assert table(client)["current"] == "Dee"  # the turn follows whoever played
    started = [e for e in daemon.bus.events_after(0) if e.type == "attack.started"]
    assert started[-1].data["out_of_turn"] == "Ann"
    declare(client, {"kind": "played", "by": "Dee"})
    started = [e for e in daemon.bus.events_after(0) if e.type == "attack.started"]
    assert started[-1].data["out_of_turn"] is None
