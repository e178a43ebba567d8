"""A fake Raspberry Pi Pico for running firmware/main.py under CPython.

- `FakeClock`: MicroPython's ticks functions (wrapping at 2**30), on a manual clock or on a `Clock`.
- `FakeMachine`: the parts of MicroPython's `machine` module the firmware uses (Pin with irq, PWM, WDT), with
  hooks for the test: `line(id).drive(level)` is the outside world on an input pin, `pwm(id)` records duty.
- `FakeMicropython`: `micropython.kbd_intr`.
- `Mechanics`: the launcher around the board: cards leave the hopper and cross the beam while the motor runs.
- `FakeBoard`: all of that running `Launcher` in a thread at about 1 kHz, plugged in by a wire: `PtyWire`, the
  master end of a pty pair whose slave end is reachable through a symlink like /dev/serial/by-id/usb-..., on real
  time; or `MemoryWire`, bytes in memory whose host end is a `Port` that waits on the clock, so that the board
  and the host both run on a `VirtualClock`. `Tamper` drops or duplicates lines on the wire.

Interrupt handlers run at once in the thread that drives the pin, under the board's lock, like a soft IRQ that
runs between two steps of the main loop.
"""

from __future__ import annotations

import contextlib
import importlib.util
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
from typing import Any, Protocol

from launcher.clock import REAL_CLOCK, Clock, VirtualClock
from launcher.hardware.sim import MemoryWire

FIRMWARE = Path(__file__).resolve().parent.parent / "firmware"
TICKS_PERIOD = 1 << 30


def load_firmware() -> types.ModuleType:
    """firmware/main.py as a module, with firmware/ on sys.path for its `import board, framing`."""
    if str(FIRMWARE) not in sys.path:
        sys.path.insert(0, str(FIRMWARE))
    spec = importlib.util.spec_from_file_location("firmware_main", FIRMWARE / "main.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


firmware = load_firmware()
board = sys.modules["board"]


def pins(**changes: Any) -> types.SimpleNamespace:
    """board.py's pin map with some entries changed, e.g. pins(HOPPER=12)."""
    values = {k: v for k, v in vars(board).items() if k.isupper()}
    return types.SimpleNamespace(**{**values, **changes})


class FakeClock:
    """time.ticks_ms and friends: manual, or read from `source`; `start_ms` near 2**30 tests the wrap-around."""

    def __init__(self, start_ms: int = 0, *, source: Clock | None = None) -> None:
        self._ms = start_ms
        self._source = source
        self._t0 = 0.0 if source is None else source.now()

    def now_ms(self) -> int:
        """Milliseconds since the start, not wrapped."""
        if self._source is not None:
            return self._ms + round((self._source.now() - self._t0) * 1000)
        return self._ms

    def advance(self, ms: int) -> None:
        assert self._source is None
        self._ms += ms

    def ticks_ms(self) -> int:
        return self.now_ms() % TICKS_PERIOD

    @staticmethod
    def ticks_add(ticks: int, delta: int) -> int:
        return (ticks + delta) % TICKS_PERIOD

    @staticmethod
    def ticks_diff(a: int, b: int) -> int:
        half = TICKS_PERIOD // 2
        return (a - b + half) % TICKS_PERIOD - half


class Line:
    """One GPIO line: what the firmware configured on it and what the outside world drives onto it."""

    def __init__(self, clock: FakeClock, lock: threading.RLock) -> None:
        self._clock = clock
        self._lock = lock
        self.mode = -1
        self.pull = -1
        self.output = 0
        self.external: int | None = None  # None: nothing outside drives the line
        self.handler: Callable[[Any], None] | None = None
        self.trigger = 0
        self.pin: FakePin | None = None

    def value(self) -> int:
        if self.mode == FakePin.OUT:
            return self.output
        if self.external is not None:
            return self.external
        return 1 if self.pull == FakePin.PULL_UP else 0

    def drive(self, level: int | None) -> None:
        """The outside world drives the line (None lets go); edges call the interrupt handler."""
        with self._lock:
            before = self.value()
            self.external = level
            after = self.value()
            edge = FakePin.IRQ_FALLING if before > after else FakePin.IRQ_RISING if after > before else 0
            if edge & self.trigger and self.handler is not None:
                self.handler(self.pin)


class FakePin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    machine: FakeMachine  # set on the per-machine subclass

    def __init__(self, id: Any, mode: int = -1, pull: int = -1, value: int | None = None) -> None:
        self.id = id
        self._line = self.machine.line(id)
        if mode != -1:
            self._line.mode = mode
        if pull != -1:
            self._line.pull = pull
        if value is not None:
            self._line.output = value
        self._line.pin = self

    def value(self, v: Any = None) -> int | None:
        if v is None:
            return self._line.value()
        self._line.output = 1 if v else 0
        return None

    def irq(self, handler: Callable[[Any], None] | None = None, trigger: int = IRQ_FALLING | IRQ_RISING) -> None:
        self._line.handler = handler
        self._line.trigger = trigger


class FakePWM:
    def __init__(self, machine: FakeMachine, pin: FakePin) -> None:
        self._clock = machine.clock
        self._freq = 0
        self.duty = 0
        self.history: list[tuple[int, int]] = []  # (ms, duty) at every change
        self.starts = 0  # off -> on transitions
        self.on_perf = 0.0  # time.perf_counter() of the last off -> on
        self.turned_on = threading.Event()
        machine.pwms[pin.id] = self

    def freq(self, value: int | None = None) -> int | None:
        if value is None:
            return self._freq
        self._freq = value
        return None

    def duty_u16(self, value: int | None = None) -> int | None:
        if value is None:
            return self.duty
        assert 0 <= value <= 65535, value
        if value and not self.duty:
            self.starts += 1
            self.on_perf = time.perf_counter()
            self.turned_on.set()
        if value != self.duty:
            self.history.append((self._clock.now_ms(), value))
        self.duty = value
        return None

    def deinit(self) -> None:
        self.duty_u16(0)


class FakeWDT:
    def __init__(self, machine: FakeMachine, id: int = 0, timeout: int = 5000) -> None:
        self.timeout = timeout
        self.feeds = 0
        machine.wdts.append(self)

    def feed(self) -> None:
        self.feeds += 1


class FakeMachine:
    """One board's `machine` module. Its lines outlive Pin objects, as on the chip."""

    def __init__(self, clock: FakeClock, lock: threading.RLock | None = None) -> None:
        self.clock = clock
        self.lock = lock or threading.RLock()
        self.lines: dict[Any, Line] = {}
        self.pwms: dict[Any, FakePWM] = {}
        self.wdts: list[FakeWDT] = []
        self.Pin = type("Pin", (FakePin,), {"machine": self})

    def line(self, id: Any) -> Line:
        if id not in self.lines:
            self.lines[id] = Line(self.clock, self.lock)
        return self.lines[id]

    def PWM(self, pin: FakePin) -> FakePWM:
        return FakePWM(self, pin)

    def WDT(self, id: int = 0, timeout: int = 5000) -> FakeWDT:
        return FakeWDT(self, id, timeout)

    def pwm(self, id: Any) -> FakePWM:
        return self.pwms[id]


class FakeMicropython:
    def __init__(self) -> None:
        self.kbd_intr_char: int | None = 3

    def kbd_intr(self, char: int) -> None:
        self.kbd_intr_char = char


def close_lid(machine: FakeMachine, pin_map: Any = board) -> None:
    if pin_map.LID is not None:
        machine.line(pin_map.LID).drive(0)


class Mechanics:
    """The roller, the hopper and the exit beam. While IN1 drives forward (and IN2 does not), one card leaves
    every `card_ms` of running and blocks the beam for `block_ms`. `jammed` stops cards; `stuck` holds the
    beam blocked. The hopper sensor, if the pin map has one, reads empty with the hopper."""

    def __init__(
        self, machine: FakeMachine, pin_map: Any = board, *, hopper: int = 100, card_ms: int = 40, block_ms: int = 5
    ) -> None:
        self._machine = machine
        self._pins = pin_map
        self.hopper = hopper
        self.card_ms = card_ms
        self.block_ms = block_ms
        self.jammed = False
        self.stuck = False
        self.paused = False  # the roller holds (tests/real_micropython.py: while the board's loop is kept waiting)
        self.cards_out = 0
        self._run_ms = 0
        self._last_ms: int | None = None
        self._unblock_ms: int | None = None
        self.step(machine.clock.now_ms())

    def step(self, now_ms: int) -> None:
        machine = self._machine
        with machine.lock:
            beam = machine.line(self._pins.BEAM)
            if self._unblock_ms is not None and now_ms >= self._unblock_ms and not self.stuck:
                self._unblock_ms = None
                beam.drive(None)
            forward = machine.pwm(self._pins.MOTOR_IN1).duty > 0 and machine.pwm(self._pins.MOTOR_IN2).duty == 0
            elapsed = 0 if self._last_ms is None else now_ms - self._last_ms
            self._last_ms = now_ms
            if forward and not self.jammed and not self.paused and self.hopper > 0:
                self._run_ms += elapsed
                if self._run_ms >= self.card_ms:
                    self._run_ms = 0
                    self.hopper -= 1
                    self.cards_out += 1
                    beam.drive(0)
                    self._unblock_ms = now_ms + self.block_ms
            if self.stuck:
                beam.drive(0)
            if self._pins.HOPPER is not None:
                machine.line(self._pins.HOPPER).drive(0 if self.hopper > 0 else 1)


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


def _point(link: Path, target: str) -> None:
    tmp = link.with_name(link.name + ".new")
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(target)
    tmp.replace(link)  # atomic, as udev swaps /dev/serial/by-id links


class Wire(Protocol):
    """The board's end of a USB cable."""

    def receive(self, timeout: float) -> bytes:
        """What the host sent, waiting up to `timeout` for the first byte."""
        ...

    def send(self, data: bytes) -> None:
        """To the host; OSError when nobody reads (a USB CDC port drops it too)."""
        ...

    def unplug(self) -> None: ...


class PtyWire:
    """The master end of a pty pair; the host opens the slave end through the symlink `link`, on real time."""

    def __init__(self, link: Path) -> None:
        self.link = link
        self._master, self._slave = pty.openpty()
        tty.setraw(self._slave)  # no echo, no line discipline: bytes as a USB CDC port passes them
        os.set_blocking(self._master, False)
        _point(link, os.ttyname(self._slave))

    def receive(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self._master], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self._master, 4096)
        except OSError:
            return b""

    def send(self, data: bytes) -> None:
        os.write(self._master, data)

    def unplug(self) -> None:
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):  # already closed
                os.close(fd)
        self._master = self._slave = -1
        self.link.unlink(missing_ok=True)


class FakeBoard:
    """A Pico running the firmware, plugged in by `link`: a path (a pty behind that symlink, on real time) or a
    MemoryWire (on its clock). A thread runs the main loop at about 1 kHz.

    `to_board` and `to_host` are Tamper-like callables applied to every line on the wire.
    """

    def __init__(
        self,
        link: Path | MemoryWire,
        *,
        clock: Clock = REAL_CLOCK,
        boot_id: str = "B0A7D001",
        hopper: int = 100,
        card_ms: int = 20,
        pin_map: Any = board,
        to_board: Callable[[bytes], list[bytes]] | None = None,
        to_host: Callable[[bytes], list[bytes]] | None = None,
    ) -> None:
        self.wire: Wire = PtyWire(link) if isinstance(link, Path) else link
        self.link = link
        self.clock = FakeClock(source=clock)
        self.to_board = to_board
        self.to_host = to_host
        self._pin_map = pin_map
        self._hopper = hopper
        self._card_ms = card_ms
        self._lock = threading.RLock()
        self._incoming = b""
        self.dropped_writes = 0
        self.received: list[bytes] = []  # lines that reached the firmware
        self.sent: list[bytes] = []  # lines the firmware wrote
        self.reset(boot_id)
        self._stop = clock.event()
        self._thread = clock.thread(self._run, "fake-board")
        self._thread.start()

    def reset(self, boot_id: str) -> None:
        """Power-cycle the chip (a watchdog reset, a brown-out): fresh firmware state on the same port."""
        with self._lock:
            self.machine = FakeMachine(self.clock, self._lock)
            close_lid(self.machine, self._pin_map)
            self.launcher = firmware.Launcher(
                self.machine, self.clock, self._write, boot_id, wdt=self.machine.WDT(timeout=1000), pins=self._pin_map
            )
            self.mechanics = Mechanics(self.machine, self._pin_map, hopper=self._hopper, card_ms=self._card_ms)

    @property
    def motor(self) -> FakePWM:
        return self.machine.pwm(self._pin_map.MOTOR_IN1)

    def press(self) -> None:
        self.machine.line(self._pin_map.BUTTON).drive(0)

    def release(self) -> None:
        self.machine.line(self._pin_map.BUTTON).drive(None)

    def click(self, hold_s: float = 0.02) -> None:
        self.press()
        time.sleep(hold_s)
        self.release()

    def events(self, name: bytes) -> list[bytes]:
        return [line for line in list(self.sent) if line.startswith(b"E " + name + b" ")]

    def _write(self, data: bytes) -> None:
        self.sent.append(data)
        for line in self.to_host(data) if self.to_host else [data]:
            try:
                self.wire.send(line)
            except OSError:  # nobody reading (a full buffer) or unplugged: a USB CDC port drops it too
                self.dropped_writes += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            data = self.wire.receive(0.001)  # the first byte wakes the loop, as select.poll(1) does on the board
            with self._lock:
                for line in self._lines(data):
                    for piece in self.to_board(line) if self.to_board else [line]:
                        self.received.append(piece)
                        self.launcher.receive(piece)
                self.mechanics.step(self.clock.now_ms())
                self.launcher.poll()

    def _lines(self, data: bytes) -> list[bytes]:
        self._incoming += data
        *lines, self._incoming = self._incoming.split(b"\n")
        return [line + b"\n" for line in lines]

    def unplug(self) -> None:
        """Pull the USB cable: the port disappears. Safe to call twice."""
        self._stop.set()
        self._thread.join()
        self.wire.unplug()

    close = unplug

    def __enter__(self) -> FakeBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Poll until predicate() is truthy and return its value; AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        time.sleep(0.002)


def on_clock(clock: VirtualClock, call: Callable[[], object], within: float = 60.0) -> None:
    """Make a blocking call (a close, which joins threads) while virtual time moves on for the threads it waits for.

    The call runs on a thread the clock does not know, so that its joins do not hold time still.
    """
    thread = threading.Thread(target=call, name="on-clock")
    thread.start()
    clock.run_until(lambda: not thread.is_alive(), within=within)
    thread.join()
