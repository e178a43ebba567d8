"""The whole daemon on the serial backend, talking to the firmware on a pty: nothing above the hardware changes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.config import ConfigError, from_mapping
from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, wait_until
from tests.sim_board import SimBoard


@pytest.fixture
def link(tmp_path: Path) -> Path:
    return tmp_path / "usb-Raspberry_Pi_Pico_E6614C311B7A3B2A-if00"


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path, link: Path) -> Daemon:
    config = from_mapping(
        {
            "hardware": {"backend": "serial"},
            "serial": {"port": str(link)},
            "dispense": {"min_rest_ms": 0, "jam_ms": 500},
            "state": {"dir": str(tmp_path / "state")},
            "web": {"port": 0},
        }
    )
    return make_daemon(config)


def event_types(daemon: Daemon) -> list[str]:
    return [e.type for e in daemon.bus.events_after(0)]


def _within(seconds: float, done: Callable[[], bool]) -> bool:
    """Whether `done()` came true within `seconds` (real time: the board is on a pty)."""
    deadline = time.monotonic() + seconds
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_press_on_the_board_fires_cards_through_the_daemon(link: Path, daemon: Daemon) -> None:
    with SimBoard(link, hopper=100) as pico:
        wait_until(lambda: daemon.controller.snapshot()["fault"] is None)
        for _ in range(30):  # the schedule misses about two presses in three
            before = len(event_types(daemon))
            for _ in range(5):  # the board re-arms its button debounce_ms after a release, at its next poll
                time.sleep(0.08)
                pico.click()
                if _within(3.0, lambda b=before: len(event_types(daemon)) > b):
                    break
            wait_until(lambda b=before: not daemon.controller.snapshot()["busy"] and len(event_types(daemon)) > b + 1)
            if "launcher.fired" in event_types(daemon):
                break
        events = daemon.bus.events_after(0)
        pressed = [e.data for e in events if e.type == "button.pressed"]
        fired = [e.data for e in events if e.type == "launcher.fired"]
        assert pressed and all(p["source"] == "button" for p in pressed)
        assert fired and all(f["dispensed"] == f["requested"] for f in fired)
        wait_until(lambda: pico.world.cards_out == sum(f["dispensed"] for f in fired))
        assert daemon.controller.snapshot()["hopper"]["dispensed"] == pico.world.cards_out
        assert daemon.hardware.describe()["backend"] == "serial"


def test_a_replugged_board_is_taken_back_without_a_restart(link: Path, daemon: Daemon) -> None:
    with SimBoard(link):
        wait_until(lambda: daemon.controller.snapshot()["fault"] is None)
    # Unplugged: the phones are told, and presses are refused rather than lost in the cable.
    wait_until(lambda: (daemon.controller.snapshot()["fault"] or "").startswith("launcher board:"))
    assert "hardware.fault" in event_types(daemon)
    with SimBoard(link, boot_id="B0A7D002") as pico:
        wait_until(lambda: daemon.controller.snapshot()["fault"] is None)
        ok = [e.data for e in daemon.bus.events_after(0) if e.type == "hardware.ok"]
        assert ok and "B0A7D002 ready" in ok[-1]["message"]
        ticket = daemon.controller.press("web")
        assert ticket.wait(10)
        assert daemon.hardware.describe()["boot_id"] == "B0A7D002"
        assert pico.launcher is not None


def test_serial_needs_a_port() -> None:
    with pytest.raises(ConfigError, match=r"needs serial\.port"):
        from_mapping({"hardware": {"backend": "serial"}})
