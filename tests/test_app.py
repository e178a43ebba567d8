"""`create_app()` is handed every part its views call: the app it gives serves them with nothing added after."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask

from launcher.access.book import PinGuard
from launcher.daemon import Daemon
from tests.conftest import local_daemon
from webui import create_app


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with local_daemon(tmp_path) as running:
        yield running


def _app_of(daemon: Daemon) -> Flask:
    """A second app over the daemon's parts, made by create_app() alone (the daemon's own app is not used)."""
    return create_app(
        controller=daemon.controller,
        bus=daemon.bus,
        shuffles=daemon.shuffles,
        games=daemon.games,
        access=daemon.access,
        doorbell=daemon.doorbell,
        budgets=daemon.budgets,
        pin_guard=PinGuard(clock=daemon.clock.now),
        profiles=daemon.profiles,
        power=daemon.power,
        history=daemon.history,
        wear=daemon.wear,
        tournaments=daemon.tournaments,
        public_urls=["http://127.0.0.1/"],
    )


def test_the_state_is_served_by_an_app_made_by_create_app_alone(daemon: Daemon) -> None:
    reply = _app_of(daemon).test_client().get("/api/state")
    assert reply.status_code == 200, reply.get_json()
    state = reply.get_json()
    assert state["power"] == daemon.power.snapshot()
    assert state["connection"] == {"urls": ["http://127.0.0.1/"], "sse_clients": 0}
    assert state["last_event_id"] == daemon.bus.last_id


def test_every_part_an_app_made_alone_reads_answers(daemon: Daemon) -> None:
    client = _app_of(daemon).test_client()
    assert daemon.new_pins is not None
    assert client.post("/api/session", json={"pin": daemon.new_pins.admin}).status_code == 201
    for path in ("/api/history/games", "/api/history/players", "/api/tournament", "/api/care", "/api/profiles"):
        reply = client.get(path)
        assert reply.status_code == 200, (path, reply.get_json())
