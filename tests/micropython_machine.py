"""A stand-in for the Pico's `machine` module, for firmware/main.py under the real MicroPython (the unix port).

Runs under MicroPython only (tests/real_micropython.py starts it); the unix port's own `machine` has no Pin, PWM or
WDT. Everything else the firmware uses is MicroPython's own: select.poll on stdin, time.ticks_*, kbd_intr, random.

The board's pins are driven and read by the test over two file descriptors named in the environment:
- UNO_PINS_IN (the test -> the board): lines `<pin> 0`, `<pin> 1` (the outside world drives an input pin low or
  high) and `<pin> -` (it lets go; the pin reads its pull). They are read before the firmware starts and then at
  every WDT.feed(), once per pass of the firmware's loop, where edges call the pin's interrupt handler: like a
  soft IRQ that runs between two steps of the loop.
- UNO_PINS_OUT (the board -> the test): `pwm <pin> <duty_u16> <ticks_ms>` when a duty changes, `out <pin> <0|1>`
  when an output pin changes, `wdt <timeout_ms>` when the watchdog is made, `fed` at its first feed, and
  `pass <ticks_ms>` at a feed PASS_MS or more after the last: the loop has run every step since the one before, so
  the world outside may move on (the test's roller runs on these, never ahead of a board the OS keeps waiting).
"""

import os
import select
import time

STAND_IN = True  # the firmware's boot code checks it got this module, not the port's own


def _fd(name):
    value = os.getenv(name)
    if value is None:
        raise OSError("machine stand-in: " + name + " is not set (run through tests/real_micropython.py)")
    return int(value)


_in = open(_fd("UNO_PINS_IN"), "rb")  # noqa: SIM115 (open for the module's lifetime)
_out = open(_fd("UNO_PINS_OUT"), "wb")  # noqa: SIM115
_poll = select.poll()
_poll.register(_in, select.POLLIN)
_pending = b""
_lines = {}  # pin id -> _Line; lines outlive Pin objects, as on the chip
PASS_MS = 4
_passed_ms = None


def _say(text):
    _out.write(text.encode() + b"\n")


def _key(pin_id):
    return str(pin_id)


class _Line:
    def __init__(self, key):
        self.key = key
        self.mode = -1
        self.pull = -1
        self.output = 0
        self.external = None  # None: nothing outside drives the line
        self.handler = None
        self.trigger = 0
        self.pin = None

    def value(self):
        if self.mode == Pin.OUT:
            return self.output
        if self.external is not None:
            return self.external
        return 1 if self.pull == Pin.PULL_UP else 0

    def drive(self, level):
        before = self.value()
        self.external = level
        after = self.value()
        edge = Pin.IRQ_FALLING if before > after else Pin.IRQ_RISING if after > before else 0
        if edge & self.trigger and self.handler is not None:
            self.handler(self.pin)


def _line(pin_id):
    key = _key(pin_id)
    if key not in _lines:
        _lines[key] = _Line(key)
    return _lines[key]


def _service():
    """Apply what the test drove onto the pins since the last call (one byte per poll: a read of n bytes on a pipe
    waits for all n)."""
    global _pending
    while _poll.poll(0):
        byte = _in.read(1)
        if not byte:
            raise OSError("machine stand-in: the test closed the pins' descriptor")
        if byte != b"\n":
            _pending += byte
            continue
        key, level = _pending.decode().split(" ")
        _pending = b""
        _line(key).drive(None if level == "-" else int(level))


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, id, mode=-1, pull=-1, value=None):
        self.id = id
        self._line = _line(id)
        if mode != -1:
            self._line.mode = mode
        if pull != -1:
            self._line.pull = pull
        if value is not None:
            self.value(value)
        self._line.pin = self

    def value(self, v=None):
        if v is None:
            return self._line.value()
        v = 1 if v else 0
        if v != self._line.output:
            self._line.output = v
            if self._line.mode == Pin.OUT:
                _say("out " + self._line.key + " " + str(v))
        return None

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING):
        self._line.handler = handler
        self._line.trigger = trigger


class PWM:
    def __init__(self, pin):
        self._key = pin._line.key
        self._freq = 0
        self._duty = 0

    def freq(self, value=None):
        if value is None:
            return self._freq
        self._freq = value
        return None

    def duty_u16(self, value=None):
        if value is None:
            return self._duty
        if not 0 <= value <= 65535:
            raise ValueError("duty_u16 out of range: " + str(value))
        if value != self._duty:
            self._duty = value
            _say("pwm " + self._key + " " + str(value) + " " + str(time.ticks_ms()))
        return None

    def deinit(self):
        self.duty_u16(0)


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self._fed = False
        _say("wdt " + str(timeout))

    def feed(self):
        global _passed_ms
        if not self._fed:
            self._fed = True
            _say("fed")
        now = time.ticks_ms()
        if _passed_ms is None or time.ticks_diff(now, _passed_ms) >= PASS_MS:
            _passed_ms = now
            _say("pass " + str(now))
        _service()


_service()  # the levels the test set before the board started (a button held at boot)
