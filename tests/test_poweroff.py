"""Switching off with the big button: the hold timed on a virtual clock from the button's edges, as the link tells
them and through the firmware on a board; what may refuse it (a fire, an attack); and the daemon on simulated
hardware, which announces it, closes its store and exits, and never powers the machine off."""

from __future__ import annotations

import logging
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from launcher.config import DispenseConfig
from launcher.events import EventType
from launcher.hardware.serial_link import SerialHardware, SerialInputs
from launcher.hardware.sim import MemoryWire
from launcher.press.controller import PressRefused
from launcher.system.poweroff import ANNOUNCE_S, ButtonHold, HoldToPowerOff
from tests.conftest import local_daemon
from tests.sim_board import SimBoard, older_firmware, on_clock
from tests.virtual_clock import VirtualClock

HOLD_S = 3.0


class Button:
    """A ButtonHold told the button's edges (True: down), as the link tells them."""

    def __init__(self, clock: VirtualClock, refusal: list[str | None]) -> None:
        self.clock = clock
        self.held_at: list[float] = []
        self.asked_since: list[float] = []
        self._refusal = refusal
        self.hold = ButtonHold(hold_s=HOLD_S, refusal=self._refuse, on_held=self._held, clock=clock)

    def _refuse(self, since: float) -> str | None:
        self.asked_since.append(since)
        return self._refusal.pop(0) if self._refusal else None

    def _held(self) -> None:
        self.held_at.append(self.clock.now())

    def down(self) -> None:
        self.hold.button_changed(True)

    def up(self) -> None:
        self.hold.button_changed(False)

    def close(self) -> None:
        self.hold.close()


@pytest.fixture
def button(clock: VirtualClock) -> Iterator[Button]:
    button = Button(clock, [])
    yield button
    button.close()


def test_a_hold_of_the_configured_time_switches_off_exactly_then(button: Button, clock: VirtualClock) -> None:
    clock.sleep(1)
    button.down()
    clock.sleep(HOLD_S - 0.001)
    assert button.held_at == []
    clock.sleep(0.002)
    assert button.held_at == [pytest.approx(1 + HOLD_S)]
    assert button.asked_since == [1.0]


def test_a_release_before_the_time_is_up_does_nothing(button: Button, clock: VirtualClock) -> None:
    button.down()
    clock.sleep(HOLD_S - 0.1)
    button.up()
    clock.sleep(HOLD_S * 3)
    assert button.held_at == [] and button.asked_since == []


def test_a_release_told_starts_the_timing_again(button: Button, clock: VirtualClock) -> None:
    button.down()
    clock.sleep(1)
    button.up()  # let go for 5 ms (the firmware tells a release only once it has lasted debounce_ms)
    clock.sleep(0.005)
    button.down()
    clock.sleep(HOLD_S - 0.01)
    assert button.held_at == []  # 1 s + 2.99 s since the first edge, but only 2.99 s since the last
    clock.sleep(0.02)
    assert button.held_at == [pytest.approx(1.005 + HOLD_S)]


def test_a_refused_hold_is_logged_and_the_next_hold_asks_again(
    clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    button = Button(clock, ["a fire was under way"])
    try:
        with caplog.at_level(logging.INFO, logger="launcher.system.poweroff"):
            button.down()
            clock.sleep(HOLD_S * 3)  # held on: asked once only
            assert button.held_at == [] and len(button.asked_since) == 1
            assert "not switching off, a fire was under way" in caplog.text
            button.up()
            clock.sleep(1)
            button.down()
            clock.sleep(HOLD_S + 0.01)
        assert button.held_at == [pytest.approx(HOLD_S * 3 + 1 + HOLD_S)]
    finally:
        button.close()


# --- the button on a board (a Pico on USB, or the header process): its press and its release come as words ------


class BoardButton:
    """The firmware on a board at the end of a MemoryWire, the real SerialHardware at the host's, and a ButtonHold
    listening to the edges the link reports, all on the virtual clock."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.presses = 0
        self.held_at: list[float] = []
        wire = MemoryWire(clock)
        self.pico = SimBoard(wire, clock=clock)
        self.hardware = SerialHardware(port="memory", dispense=DispenseConfig(), clock=clock, opener=wire.open)
        self.hardware.inputs.when_pressed = self._pressed
        self.hold = ButtonHold(hold_s=HOLD_S, refusal=lambda since: None, on_held=self._held, clock=clock)
        self.hardware.inputs.when_button_changed = self.hold.button_changed
        clock.run_until(lambda: self.hardware.describe()["link"] == "up", within=10)

    def _pressed(self) -> None:
        self.presses += 1

    def _held(self) -> None:
        self.held_at.append(self.clock.now())

    def close(self) -> None:
        self.hold.close()
        on_clock(self.clock, self.hardware.close)
        on_clock(self.clock, self.pico.close)


@pytest.fixture
def board_button(clock: VirtualClock) -> Iterator[BoardButton]:
    button = BoardButton(clock)
    yield button
    button.close()


def test_a_hold_on_a_board_switches_off_once_the_time_is_up(board_button: BoardButton, clock: VirtualClock) -> None:
    pressed_at = clock.now()
    board_button.pico.press()
    clock.sleep(HOLD_S - 0.1)
    assert board_button.presses == 1 and board_button.held_at == []
    clock.sleep(0.2)
    assert board_button.held_at == [pytest.approx(pressed_at + HOLD_S, abs=0.01)]  # the board's word takes ~1 ms


def test_a_release_on_a_board_before_the_time_is_up_does_nothing(
    board_button: BoardButton, clock: VirtualClock
) -> None:
    board_button.pico.press()
    clock.sleep(HOLD_S - 0.5)
    board_button.pico.release()
    clock.sleep(HOLD_S * 3)
    assert board_button.presses == 1 and board_button.held_at == []


def test_contact_bounce_shorter_than_the_debounce_does_not_break_a_hold_on_a_board(
    board_button: BoardButton, clock: VirtualClock
) -> None:
    """The board tells a release only once the button has rested up for debounce_ms (30 ms by default)."""
    pressed_at = clock.now()
    board_button.pico.press()
    clock.sleep(1)
    board_button.pico.release()  # 5 ms open
    clock.sleep(0.005)
    board_button.pico.press()
    clock.sleep(HOLD_S)
    assert board_button.presses == 1
    assert board_button.held_at == [pytest.approx(pressed_at + HOLD_S, abs=0.01)]


def test_a_hold_ends_when_the_board_is_lost(board_button: BoardButton, clock: VirtualClock) -> None:
    board_button.pico.press()
    clock.sleep(1)
    on_clock(clock, board_button.pico.unplug)  # the cable pulled, or the header process gone: no release will come
    clock.sleep(HOLD_S * 3)
    assert board_button.held_at == []


def test_a_board_whose_firmware_tells_no_release_never_times_a_hold(
    monkeypatch: pytest.MonkeyPatch, clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Firmware 3 and older say nothing when the button is let go: a press could not be told from a hold."""
    older_firmware(monkeypatch, "3")
    with caplog.at_level(logging.WARNING, logger="launcher.hardware.serial_link"):
        button = BoardButton(clock)
    try:
        button.pico.press()
        clock.sleep(HOLD_S * 3)  # held down
        assert button.presses == 1 and button.held_at == []
        assert "firmware 3 does not tell when the button is let go, so holding the button does nothing" in caplog.text
    finally:
        button.close()


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[EventType, dict[str, Any]]] = []

    def publish(self, type: EventType, data: dict[str, Any]) -> None:
        self.events.append((type, data))


@pytest.mark.parametrize(
    ("quiet", "attack", "switched_off"),
    [(True, False, True), (False, False, False), (True, True, False), (False, True, False)],
)
def test_only_a_quiet_launcher_outside_an_attack_switches_off(
    clock: VirtualClock, quiet: bool, attack: bool, switched_off: bool
) -> None:
    inputs = SerialInputs()  # the inputs as the link reports them
    bus, steps = Recorder(), []
    power_off = HoldToPowerOff(
        hold_s=HOLD_S,
        inputs=inputs,
        quiet_since=lambda since: quiet,
        attack_open=lambda: attack,
        bus=bus,
        stop_motor=lambda: steps.append(("motor off", clock.now())),
        shut_down=lambda: steps.append(("shut down", clock.now())),
        clock=clock,
    )
    try:
        assert inputs.when_button_changed is not None
        inputs.when_button_changed(True)  # down, and held
        clock.sleep(HOLD_S + ANNOUNCE_S + 1)
    finally:
        power_off.close()
    assert power_off.requested is switched_off
    if switched_off:  # announced first, the motor off, then the daemon's shutdown after the phones had time
        assert bus.events == [(EventType.DAEMON_POWERING_OFF, {"hold_s": HOLD_S})]
        assert steps == [("motor off", HOLD_S), ("shut down", HOLD_S + ANNOUNCE_S)]
    else:
        assert bus.events == [] and steps == []


def test_the_controller_is_quiet_after_a_miss_or_a_refusal_and_not_after_a_fire(tmp_path: Path) -> None:
    """What a hold's answer rests on: a press that fired keeps the launcher busy past the moment the hold began."""
    with local_daemon(tmp_path) as daemon:
        controller = daemon.controller
        fired = None
        for _ in range(60):  # the schedule decides; classic fires about every third press
            began = daemon.clock.now()
            ticket = controller.press("button")
            ticket.wait(10)
            if ticket.outcome.fired:
                fired = began
                break
            assert controller.quiet_since(daemon.clock.now())  # a miss ends at once: quiet from then on
        assert fired is not None
        assert not controller.quiet_since(fired)  # busy firing after the hold began
        assert controller.quiet_since(daemon.clock.now())
        daemon.hardware.set_lid(True)
        since = daemon.clock.now()
        with pytest.raises(PressRefused):
            controller.press("button")
        assert controller.quiet_since(since)  # a refused press never made it busy


DAEMON_SCRIPT = """
import sys, threading, time
from launcher.config import Config
from launcher.daemon import Daemon

config = Config().replace("state", dir=sys.argv[1]).replace("web", port=0).replace("power", hold_to_poweroff_s=2)
daemon = Daemon(config)
world = daemon.hardware.world
def hold():
    world.open_lid()  # nothing can fire while the lid is open: the press that starts the hold is refused
    time.sleep(0.1)  # the firmware tells the lid once its contact has settled
    world.press_button(hold_s=2.5)
threading.Timer(0.5, hold).start()
daemon.serve()
print("daemon exited", flush=True)
"""


@pytest.mark.slow
def test_the_simulated_daemon_announces_closes_its_store_and_exits(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", DAEMON_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert result.returncode == 0, result.stderr
    assert "daemon exited" in result.stdout
    log = result.stderr
    assert "button held 2 s while the launcher was idle: switching off" in log
    assert "simulated hardware: the Pi would power off now; the daemon exits instead" in log
    assert log.index("switching off") < log.index("would power off")
    with sqlite3.connect(tmp_path / "launcher.sqlite3") as conn:  # written before the exit: the store was closed
        types = [row[0] for row in conn.execute("SELECT type FROM events ORDER BY id")]
    assert types[-1] == "daemon.powering_off"
    assert "button.ignored" in types  # the hold's own press, refused with the lid open
