"""A fake Raspberry Pi Pico for running firmware/main.py under CPython.

- `FakeClock`: MicroPython's ticks functions (wrapping at 2**30), on a manual clock or on a `Clock`.
- `FakeMachine`: the parts of MicroPython's `machine` module the firmware uses (Pin with irq, PWM, WDT), with
  hooks for the test: `line(id).drive(level)` is the outside world on an input pin, `pwm(id)` records duty.
- `FakeMicropython`: `micropython.kbd_intr`.
- `Mechanics`: the launcher around the board: cards leave the hopper and cross the beam while the motor runs.

Interrupt handlers run at once in the thread that drives the pin, under the board's lock, like a soft IRQ that
runs between two steps of the main loop.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable
from typing import Any

from launcher.clock import Clock
from launcher.hardware.header_board import load_firmware

TICKS_PERIOD = 1 << 30

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
