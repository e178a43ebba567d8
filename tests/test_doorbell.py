"""While someone on the Wi-Fi spends the network's PIN-guessing budget, a phone with the right PIN still gets in: it
waits, and a press on the launcher's own button within 30 s lets it in (and fires nothing). A wrong PIN waits
alike, learns nothing, and is never let in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.access import PinGuard
from launcher.daemon import Daemon
from launcher.doorbell import WAIT_S
from tests.conftest import ManualClock, joined_client, local_daemon
from tests.test_pin_guessing import spend_the_budget
from tests.virtual_clock import VirtualClock


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with local_daemon(tmp_path) as running:
        yield running


def _phone(daemon: Daemon, address: str) -> FlaskClient:
    phone = daemon.app.test_client()
    phone.environ_base["REMOTE_ADDR"] = address
    return phone


def _spent(daemon: Daemon) -> FlaskClient:
    """The table with a phone already joined, which pressed until the board is armed (the next press fires at
    once, from the board itself), and the network's budget spent by a guesser; that joined phone."""
    table = joined_client(daemon)
    for _ in range(50):
        assert table.post("/api/press").status_code == 200
        _settle(daemon)
        if daemon.controller._arm.armed is not None:
            break
    else:
        pytest.fail("the board was never armed")
    guard = daemon.app.extensions["launcher.pin_guard"] = PinGuard(clock=ManualClock())
    spend_the_budget(guard)
    return table


def _settle(daemon: Daemon) -> None:
    clock = daemon.clock
    assert isinstance(clock, VirtualClock)
    clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=5.0)


def _types(daemon: Daemon, after: int) -> list[str]:
    return [event.type for event in daemon.bus.events_after(after)]


def _press_the_button(daemon: Daemon) -> None:
    daemon.hardware.world.press_button()  # type: ignore[attr-defined]
    clock = daemon.clock
    assert isinstance(clock, VirtualClock)
    clock.advance(0.5)  # the firmware's debounce and the link
    _settle(daemon)


def _wait(phone: FlaskClient, pin: str) -> dict[str, Any]:
    reply = phone.post("/api/session", json={"pin": pin})
    assert reply.status_code == 202, reply.get_json()
    body: dict[str, Any] = reply.get_json()
    assert body.keys() == {"role", "waiting", "wait_s"} and body["role"] == "none"
    return body


def test_the_button_lets_in_a_right_pin_waiting_and_fires_nothing(daemon: Daemon) -> None:
    _spent(daemon)
    assert daemon.new_pins is not None and daemon.new_pins.table is not None
    phone = _phone(daemon, "192.168.1.20")
    assert phone.post("/api/press").status_code == 401  # not joined
    waiting = _wait(phone, daemon.new_pins.table)
    assert waiting["wait_s"] == WAIT_S
    again = phone.post("/api/session", json={"waiting": waiting["waiting"]})
    assert again.status_code == 202 and again.get_json()["wait_s"] <= WAIT_S
    before = daemon.bus.last_id
    hopper = daemon.controller.snapshot()["hopper"]
    _press_the_button(daemon)
    assert "button.pressed" not in _types(daemon, before)  # a press that lets in is not a game press
    assert daemon.controller.snapshot()["hopper"] == hopper
    joined = phone.post("/api/session", json={"waiting": waiting["waiting"]})
    assert joined.status_code == 201 and joined.get_json() == {"role": "table"}
    assert phone.get("/api/invite").get_json()["pin"] == daemon.new_pins.table  # it typed the PIN
    assert phone.post("/api/press").status_code == 200
    spent = phone.post("/api/session", json={"waiting": waiting["waiting"]})
    assert spent.status_code == 401 and spent.get_json()["error"]["code"] == "wait_over"  # the ticket is used up


def test_a_wrong_pin_waits_alike_is_never_let_in_and_the_press_plays(daemon: Daemon) -> None:
    _spent(daemon)
    stranger = _phone(daemon, "192.168.1.66")
    waiting = _wait(stranger, "000000")  # the same answer as a right PIN's: the wait tells a guess nothing
    before = daemon.bus.last_id
    _press_the_button(daemon)
    assert "button.pressed" in _types(daemon, before)  # nobody with the right PIN waited: the table's press
    assert stranger.post("/api/session", json={"waiting": waiting["waiting"]}).status_code == 202
    clock = daemon.clock
    assert isinstance(clock, VirtualClock)
    clock.advance(WAIT_S)
    over = stranger.post("/api/session", json={"waiting": waiting["waiting"]})
    assert over.status_code == 401 and over.get_json()["error"]["code"] == "wait_over"
    assert stranger.post("/api/press").status_code == 401


def test_a_press_after_30_s_plays_and_the_phone_types_its_pin_again(daemon: Daemon) -> None:
    _spent(daemon)
    assert daemon.new_pins is not None and daemon.new_pins.table is not None
    phone = _phone(daemon, "192.168.1.21")
    waiting = _wait(phone, daemon.new_pins.table)
    clock = daemon.clock
    assert isinstance(clock, VirtualClock)
    clock.advance(WAIT_S + 0.5)
    before = daemon.bus.last_id
    _press_the_button(daemon)
    assert "button.pressed" in _types(daemon, before)
    over = phone.post("/api/session", json={"waiting": waiting["waiting"]})
    assert over.status_code == 401 and over.get_json()["error"]["code"] == "wait_over"


def test_one_device_still_has_only_its_own_few_tries_this_way(daemon: Daemon) -> None:
    _spent(daemon)
    guesser = _phone(daemon, "192.168.1.67")
    for _ in range(PinGuard.FREE_TRIES):
        _wait(guesser, "000000")
    refused = guesser.post("/api/session", json={"pin": "000000"})
    assert refused.status_code == 429 and refused.get_json()["error"]["code"] == "too_many_tries"


def test_a_ticket_never_given_is_over(daemon: Daemon) -> None:
    reply = _phone(daemon, "192.168.1.68").post("/api/session", json={"waiting": "made-up"})
    assert reply.status_code == 401 and reply.get_json()["error"]["code"] == "wait_over"
