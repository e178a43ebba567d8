"""The simulator's board, for the tests that drive a host link themselves.

`SimBoard` is what `uno-launcher run --sim` runs behind its link (launcher/hardware/sim.py): firmware/main.py on
`header_board.HeaderMachine` over gpiozero mock pins (`SimulatedBoard`), with `SimulatedWorld` (hopper, roller,
beam, lid, button) acting on the same pins. It is plugged in by a wire: a `MemoryWire` on its clock (a
`VirtualClock` included), or `PtyWire`, the master end of a pty pair whose slave end the host opens through a
symlink like /dev/serial/by-id/usb-..., on real time. On the way, every line is logged, and `Tamper` may drop or
duplicate lines.
"""

from __future__ import annotations

import contextlib
import os
import pty
import random
import select
import sys
import threading
import time
import tty
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import Config, DispenseConfig, SimConfig
from launcher.hardware import header_board
from launcher.hardware.sim import BoardWire, MemoryWire, SimPin, SimulatedBoard, SimulatedWorld
from tests.virtual_clock import VirtualClock

SETTLE_S = 5.0
firmware = header_board.load_firmware()  # firmware/main.py, as the simulator loads it
board = sys.modules["board"]  # and firmware/board.py, a Pico's wiring, which it imports


class Tamper:
    """Drops or duplicates whole lines on one direction of the wire: by rule (the next `times` lines that
    contain `pattern`) or at random."""

    def __init__(self, *, seed: int | None = None, drop: float = 0.0, duplicate: float = 0.0) -> None:
        self._rules: list[list[Any]] = []
        self._random = random.Random(seed)
        self._drop = drop
        self._duplicate = duplicate
        self.log: list[tuple[str, bytes]] = []  # (what was done, line)
        self.block = False  # drop everything

    def drop(self, pattern: bytes, times: int = 1) -> None:
        self._rules.append([pattern, "drop", times])

    def duplicate(self, pattern: bytes, times: int = 1) -> None:
        self._rules.append([pattern, "duplicate", times])

    def __call__(self, line: bytes) -> list[bytes]:
        action = "pass"
        if self.block:
            action = "drop"
        else:
            for rule in self._rules:
                if rule[2] > 0 and rule[0] in line:
                    rule[2] -= 1
                    action = rule[1]
                    break
            else:
                roll = self._random.random()
                if roll < self._drop:
                    action = "drop"
                elif roll < self._drop + self._duplicate:
                    action = "duplicate"
        self.log.append((action, line))
        return {"pass": [line], "drop": [], "duplicate": [line, line]}[action]


def point(link: Path, target: str) -> None:
    """`link` made to point at `target` at once, as udev swaps /dev/serial/by-id links."""
    tmp = link.with_name(link.name + ".new")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    tmp.replace(link)  # atomic


class PtyWire:
    """The board's end of a pty pair; the host opens the slave end through the symlink `link`, on real time."""

    def __init__(self, link: Path) -> None:
        self.link = link
        self._master, self._slave = pty.openpty()
        tty.setraw(self._slave)  # no echo, no line discipline: bytes as a USB CDC port passes them
        os.set_blocking(self._master, False)
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        point(link, os.ttyname(self._slave))

    def receive(self, timeout: float) -> bytes:
        try:
            ready, _, _ = select.select([self._master, self._wake_read], [], [], timeout)
            if self._wake_read in ready:
                os.read(self._wake_read, 4096)
            return os.read(self._master, 4096) if self._master in ready else b""
        except (OSError, ValueError):  # unplugged meanwhile
            return b""

    def send(self, data: bytes) -> None:
        os.write(self._master, data)

    def wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake-up is pending anyway) or unplugged
            os.write(self._wake_write, b"!")

    def unplug(self) -> None:
        for fd in (self._master, self._slave, self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):  # already closed
                os.close(fd)
        self._master = self._slave = self._wake_read = self._wake_write = -1
        self.link.unlink(missing_ok=True)


class _Logged:
    """The board's end of `wire` as a test sees it: every line logged, through its board's `to_board`/`to_host`."""

    def __init__(self, wire: BoardWire, board: SimBoard) -> None:
        self._wire = wire
        self._board = board
        self._incoming = b""

    def receive(self, timeout: float) -> bytes:
        self._incoming += self._wire.receive(timeout)
        *lines, self._incoming = self._incoming.split(b"\n")
        passed = []
        for line in lines:
            tamper = self._board.to_board
            for piece in tamper(line + b"\n") if tamper else [line + b"\n"]:
                self._board.received.append(piece)
                passed.append(piece)
        return b"".join(passed)

    def send(self, data: bytes) -> None:
        self._board.sent.append(data)
        tamper = self._board.to_host
        for line in tamper(data) if tamper else [data]:
            self._wire.send(line)

    def wake(self) -> None:
        self._wire.wake()

    def unplug(self) -> None:
        self._wire.unplug()


class NotedPin(SimPin):
    """A mock pin that tells its factory's `note` of each change (the board's motor log)."""

    def _change_state(self, value: float) -> bool:
        changed = super()._change_state(value)
        note: Callable[[NotedPin, float], None] | None = getattr(self.factory, "note", None)
        if changed and note is not None:
            note(self, value)
        return changed


class Motor:
    """The motor's forward input as the firmware drove it: `duty` (as `duty_u16` set it), `history` [(ms, duty)]
    at every change, `starts` (off to on), `turned_on` and `on_perf` (time.perf_counter() of the last start)."""

    def __init__(self) -> None:
        self.duty = 0
        self.history: list[tuple[int, int]] = []
        self.starts = 0
        self.on_perf = 0.0
        self.turned_on = threading.Event()

    def changed(self, ms: int, value: float) -> None:
        duty = round(value * 65535)
        if duty and not self.duty:
            self.starts += 1
            self.on_perf = time.perf_counter()
            self.turned_on.set()
        self.history.append((ms, duty))
        self.duty = duty


class SimBoard:
    """The simulator's board and world, plugged in by `link`: a path (a pty behind that symlink, on real time) or
    a MemoryWire (on its clock). `hopper` cards, coming out at `cards_per_second` at full duty; no fire runs longer
    than `max_run_ms`; `jammed`: none until `world.jam(False)`. `to_board` and `to_host` are Tamper-like callables
    applied to every line on the wire."""

    def __init__(
        self,
        link: Path | MemoryWire,
        *,
        clock: Clock = REAL_CLOCK,
        boot_id: str = "B0A7D001",
        hopper: int = 100,
        cards_per_second: float = 50.0,
        max_run_ms: int = 20000,
        jammed: bool = False,
        to_board: Callable[[bytes], list[bytes]] | None = None,
        to_host: Callable[[bytes], list[bytes]] | None = None,
    ) -> None:
        self.clock = clock
        self.config = Config(
            sim=SimConfig(cards_per_second=cards_per_second),
            dispense=DispenseConfig(hopper_cards=hopper, max_run_ms=max_run_ms),
        )
        self.to_board = to_board
        self.to_host = to_host
        self.received: list[bytes] = []  # lines that reached the firmware
        self.sent: list[bytes] = []  # what the firmware wrote
        self.motor = Motor()
        self._t0 = clock.now()
        self.factory = MockFactory(pin_class=NotedPin)
        self.factory.note = self._pin_changed
        self.world = SimulatedWorld(self.config, self.factory, clock=clock)
        self.world.jam(jammed)
        self._wire = _Logged(PtyWire(link) if isinstance(link, Path) else link, self)
        self._forward = self.factory.pin(self.config.pins.motor_forward)
        self.board = self._boot(boot_id)

    def _boot(self, boot_id: str) -> SimulatedBoard:
        """The firmware started, and the lid closed and settled (the inputs' pull-ups, set at the start, open it)."""
        board = SimulatedBoard(
            pins=self.config.pins,
            max_run_ms=self.config.dispense.max_run_ms,
            pin_factory=self.factory,
            wire=self._wire,
            clock=self.clock,
            boot_id=boot_id,
        )
        self.world.close_lid()
        deadline = self.clock.now() + SETTLE_S
        while board.launcher.lid_open:
            if self.clock.now() > deadline:
                board.close()
                raise AssertionError(f"the board's lid did not settle closed in {SETTLE_S} s")
            self.clock.sleep(0.005)
        return board

    def _pin_changed(self, pin: NotedPin, value: float) -> None:
        if pin is self._forward:
            self.motor.changed(self.now_ms(), value)

    def now_ms(self) -> int:
        """The board's time, in ms since it was made."""
        return round((self.clock.now() - self._t0) * 1000)

    @property
    def launcher(self) -> Any:
        """The firmware's `Launcher`."""
        return self.board.launcher

    def reset(self, boot_id: str) -> None:
        """Power-cycle the board (a watchdog reset, a brown-out): fresh firmware on the same wire and world, and a
        fresh log of its motor."""
        self.board.close()
        self.motor = Motor()
        self.board = self._boot(boot_id)

    def press(self) -> None:
        self.world.button_down()

    def release(self) -> None:
        self.world.button_up()

    def click(self, hold_s: float = 0.02) -> None:
        self.press()
        self.clock.sleep(hold_s)
        self.release()

    def events(self, name: bytes) -> list[bytes]:
        return [line for line in list(self.sent) if line.startswith(b"E " + name + b" ")]

    def unplug(self) -> None:
        """Pull the cable: the board stops (its motor off) and its port disappears. Safe to call twice."""
        self.board.close()
        self._wire.unplug()
        self.world.close()
        self.factory.close()

    close = unplug

    def __enter__(self) -> SimBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def older_firmware(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    """The boards made from now on say they run firmware `version`."""
    load = header_board.load_firmware

    def older() -> types.ModuleType:
        firmware = load()
        firmware.VERSION = version
        return firmware

    monkeypatch.setattr(header_board, "load_firmware", older)


def on_clock(clock: VirtualClock, call: Callable[[], object], within: float = 60.0) -> None:
    """Make a blocking call (a close, which joins threads) while virtual time moves on for the threads it waits for.

    The call runs on a thread the clock does not know, so that its joins do not hold time still.
    """
    thread = threading.Thread(target=call, name="on-clock")
    thread.start()
    clock.run_until(lambda: not thread.is_alive(), within=within)
    thread.join()
