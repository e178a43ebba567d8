"""Safety nets at the table: the last declaration undone exactly while nothing was pressed since, and "Cancel what
is owed" dropping one demand, not a Wild All Hit in progress."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.config import Config
from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, joined_client
from tests.virtual_clock import VirtualClock

UNDO = "/api/game/undo-declaration"
FOUR = ["Ann", "Bob", "Cy", "Dee"]


@pytest.fixture
def config(tmp_path: Path) -> Config:
    config = Config().replace("state", dir=str(tmp_path)).replace("web", port=0)
    return config.replace("sim", cards_per_second=400.0, card_block_ms=1.0).replace("dispense", min_rest_ms=0)


@pytest.fixture
def daemon(make_daemon: MakeDaemon, config: Config, clock: VirtualClock) -> Daemon:
    return make_daemon(config, clock=clock)


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def post(client: FlaskClient, path: str, body: Any = None) -> dict[str, Any]:
    reply = client.post(path, json=body if body is not None else {})
    assert reply.status_code in (200, 201), reply.get_json()
    return reply.get_json()["game"]


def refused(client: FlaskClient, code: str) -> str:
    reply = client.post(UNDO, json={})
    assert reply.status_code == 409 and reply.get_json()["error"]["code"] == code, reply.get_json()
    return reply.get_json()["error"]["message"]


def test_undo_after_a_hit_2_restores_the_table_exactly(daemon: Daemon, client: FlaskClient) -> None:
    before = post(client, "/api/games", {"players": FOUR})["table"]
    declared = post(client, "/api/attacks", {"kind": "hit2", "by": "Ann"})["table"]
    assert declared["pending"]["player"] == "Bob" and declared["current"] == "Cy"
    game = post(client, UNDO)
    assert game["table"] == before  # nothing owed, Ann's turn again
    assert client.get("/api/game").get_json()["game"]["table"] == before
    undone = [e for e in daemon.bus.events_after(0) if e.type == "attack.undone"]
    assert len(undone) == 1 and '"kind":"hit2"' in undone[0].data_text  # every phone is told
    assert "nothing to undo" in refused(client, "nothing_to_undo")  # one step: the last declaration only


def test_only_the_last_declaration_is_undone(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR})
    after_play = post(client, "/api/attacks", {"kind": "played", "by": "Ann"})["table"]
    post(client, "/api/attacks", {"kind": "wild_all_hit", "by": "Bob"})
    assert post(client, UNDO)["table"] == after_play


def test_undo_after_a_press_for_it_is_refused(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR})
    post(client, "/api/attacks", {"kind": "hit2", "by": "Ann"})
    assert daemon.controller.press("web").wait(10)
    message = refused(client, "undo_too_late")
    assert "pressed" in message
    table = client.get("/api/game").get_json()["game"]["table"]
    assert table["pending"]["player"] == "Bob" and table["pending"]["presses"] == 1  # left as it was


def test_nothing_to_undo_in_a_new_game(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR})
    refused(client, "nothing_to_undo")


def test_undo_survives_a_restart(config: Config, clock: VirtualClock) -> None:
    first = Daemon(config, clock=clock)
    try:
        client = joined_client(first)  # the session is kept in the store: the same client is joined after it
        before = post(client, "/api/games", {"players": FOUR})["table"]
        post(client, "/api/attacks", {"kind": "wild_hit_fire", "by": "Ann"})
    finally:
        first.close()
    again = Daemon(config, clock=clock)
    try:
        client.application = again.app
        assert post(client, UNDO)["table"] == before
    finally:
        again.close()


def test_cancel_drops_the_newest_demand_and_keeps_a_wild_all_hit_in_progress(
    daemon: Daemon, client: FlaskClient
) -> None:
    post(client, "/api/games", {"players": FOUR})
    post(client, "/api/attacks", {"kind": "wild_all_hit", "by": "Ann"})
    assert daemon.controller.press("web").wait(10)  # Bob pressed: the Wild All Hit is under way
    post(client, "/api/attacks", {"kind": "uno_penalty", "player": "Ann"})
    game = post(client, "/api/attacks", {"kind": "cancel"})
    assert [(d["player"], d["cause"]) for d in game["table"]["demands"]] == [
        ("Cy", "wild_all_hit"),
        ("Dee", "wild_all_hit"),
    ]
