"""The board's firmware on the Pi's own header, in a process of its own: a press reaches the motor at once.

In the daemon a button edge must take Python's interpreter lock from whichever thread holds it (a scoring, a
stream's replay, a save), and waits for the interpreter's switch interval, more than once when it is busy. This
process holds nothing else: it runs firmware/main.py's `Launcher`, the code a Pico runs, with MicroPython's
`machine` API made of gpiozero devices on the header's pins, and speaks the serial protocol on its stdin and
stdout. The daemon starts it (header_link.py), arms it with the next press's fire, and hears what happened after,
as from a board on USB.

What keeps the motor bounded is the firmware's, as on a Pico: every fire's max_ms, the lid, host silence. Besides:
the end of stdin (the daemon has gone) and a main loop stalled for WDT_S stop the motor and end the process.

    python -m launcher.hardware.header_board '{"button": 17, "beam": 27, "lid": 22, "forward": 20, ...}'
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import random
import select
import signal
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpiozero import DigitalInputDevice, Motor
from gpiozero.pins import Factory

from launcher.clock import REAL_CLOCK, Clock
from launcher.hardware.priority import EdgePriority
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

# Installed, the firmware is launcher/firmware/ (pyproject.toml); in a checkout, firmware/ beside launcher/.
_LAUNCHER = Path(__file__).resolve().parents[1]
FIRMWARE = next(
    (d for d in (_LAUNCHER / "firmware", _LAUNCHER.parent / "firmware") if d.is_dir()), _LAUNCHER / "firmware"
)
TICKS_PERIOD = 1 << 30  # MicroPython's ticks_ms wraps here; the firmware reckons with ticks_diff
LOOP_S = 0.001  # while a fire runs, the firmware's loop passes at least this often, as on a Pico
IDLE_LOOP_S = 0.01  # otherwise (an edge or a command wakes it at once): a tenth of the idle processor's cost
WDT_S = 1.0  # a loop stalled this long: motor off and the process ends, as a Pico's watchdog resets it
READ_BYTES = 4096


def load_firmware() -> types.ModuleType:
    """firmware/main.py as a module, with firmware/ on sys.path for its `import board, framing`."""
    if str(FIRMWARE) not in sys.path:
        sys.path.insert(0, str(FIRMWARE))
    spec = importlib.util.spec_from_file_location("firmware_main", FIRMWARE / "main.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"the board's firmware is not at {FIRMWARE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Ticks:
    """MicroPython's `time.ticks_ms` and `ticks_diff`, on a `Clock`."""

    def __init__(self, clock: Clock = REAL_CLOCK) -> None:
        self._clock = clock

    def ticks_ms(self) -> int:
        return round(self._clock.now() * 1000) % TICKS_PERIOD  # nearest: a virtual 0.3 s is 300 ms, not 299

    @staticmethod
    def ticks_diff(a: int, b: int) -> int:
        half = TICKS_PERIOD // 2
        return (a - b + half) % TICKS_PERIOD - half


class _Input:
    """A `machine.Pin` input with the pull-up on: `value()` is the level, `irq()` calls back on an edge."""

    def __init__(self, machine: HeaderMachine, device: DigitalInputDevice) -> None:
        self._machine = machine
        self._device = device

    def value(self) -> int:
        return 0 if self._device.is_active else 1  # active while pulled low

    def irq(self, handler: Callable[[_Input], None], trigger: int) -> None:
        def edge() -> None:
            self._machine.priority.raise_caller()  # the GPIO library's thread, at its first edge
            handler(self)
            self._machine.wake()  # the loop's next pass sees what the handler noted, now rather than in a while

        if trigger & _Pins.IRQ_FALLING:
            self._device.when_activated = edge
        if trigger & _Pins.IRQ_RISING:
            self._device.when_deactivated = edge


class _Pins:
    """`machine.Pin` here. Called: an input with its pull-up, or, for an output, its number, which only
    `machine.PWM` takes (the firmware's only outputs on the header are the motor's two inputs)."""

    IN = 0
    OUT = 1
    PULL_UP = 1
    IRQ_FALLING = 1
    IRQ_RISING = 2

    def __init__(self, machine: HeaderMachine) -> None:
        self._machine = machine

    def __call__(self, id: int, mode: int = IN, pull: int | None = None) -> _Input | int:
        return id if mode == self.OUT else self._machine.input(id)


class _MotorInput:
    """One of the H-bridge's two inputs as the firmware drives it (`machine.PWM`)."""

    def __init__(self, machine: HeaderMachine, forward: bool) -> None:
        self._machine = machine
        self._forward = forward

    def freq(self, hz: int) -> None:
        """The PWM frequency stays gpiozero's, as for the motor driven from the daemon itself."""

    def duty_u16(self, duty: int) -> None:
        self._machine.set_duty(self._forward, duty)


class HeaderMachine:
    """The parts of MicroPython's `machine` module the firmware uses, made of gpiozero devices on `pin_factory`:
    inputs with their pull-ups, and the motor's inputs IN1 and IN2 as one gpiozero Motor with its enable pin,
    forward while only IN1 has a duty, backward while only IN2 has one, off otherwise. Closable twice; closing
    stops the motor first."""

    def __init__(
        self, *, motor: tuple[int, int, int], pin_factory: Factory, priority: EdgePriority | None = None
    ) -> None:
        self.priority = priority or EdgePriority(0)
        self.wake: Callable[[], None] = lambda: None  # the loop's: an edge wants a pass now
        self.Pin = _Pins(self)
        self._factory = pin_factory
        self._in1, self._in2, enable = motor
        self._duty = {True: 0, False: 0}
        self._inputs: list[DigitalInputDevice] = []
        self._motor = Motor(self._in1, self._in2, enable=enable, pwm=True, pin_factory=pin_factory)

    def PWM(self, pin: int) -> _MotorInput:  # MicroPython's name
        if pin not in (self._in1, self._in2):
            raise ValueError(f"GPIO{pin} is not one of the motor's inputs")
        return _MotorInput(self, forward=pin == self._in1)

    def input(self, pin: int) -> _Input:
        device = DigitalInputDevice(pin, pull_up=True, pin_factory=self._factory)
        self._inputs.append(device)
        return _Input(self, device)

    def set_duty(self, forward: bool, duty: int) -> None:
        self._duty[forward] = duty
        ahead, back = self._duty[True], self._duty[False]
        if ahead and not back:
            self._motor.forward(ahead / 65535)
        elif back and not ahead:
            self._motor.backward(back / 65535)
        else:
            self._motor.stop()

    def close(self) -> None:
        if not self._motor.closed:
            self._motor.stop()
            self._motor.close()
        for device in self._inputs:
            device.close()


class Watchdog:
    """The firmware feeds it at every pass of its loop; unfed for `timeout` seconds, it calls `on_stall` once."""

    def __init__(self, on_stall: Callable[[], None], *, timeout: float = WDT_S, clock: Clock = REAL_CLOCK) -> None:
        self._on_stall = on_stall
        self._timeout = timeout
        self._clock = clock
        self._fed = clock.now()
        self._thread = StoppableThread(self._run, "header-watchdog", clock=clock)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop()

    def feed(self) -> None:
        self._fed = self._clock.now()

    def _run(self) -> None:
        while not self._thread.stopping.wait(self._timeout / 10):
            if self._clock.now() - self._fed >= self._timeout:
                self._on_stall()
                return


def pin_map(pins: dict[str, int | None], max_run_ms: int) -> types.SimpleNamespace:
    """The firmware's board.py for the header: its names, the daemon's pin numbers."""
    return types.SimpleNamespace(
        BUTTON=pins["button"],
        BEAM=pins["beam"],
        LID=pins["lid"],
        HOPPER=None,
        MOTOR_IN1=pins["forward"],
        MOTOR_IN2=pins["backward"],
        LED=None,  # the light is the daemon's, for its cues
        PWM_FREQ=0,
        MAX_RUN_MS=max_run_ms,
    )


def start_firmware(
    machine: HeaderMachine,
    *,
    pins: dict[str, int | None],
    max_run_ms: int,
    write: Callable[[bytes], None],
    clock: Clock,
    wdt: Watchdog | None = None,
    boot_id: str | None = None,
) -> Any:
    """The firmware's `Launcher` on `machine`, booted (it has written BOOT) with `boot_id`, else a fresh one."""
    firmware = load_firmware()
    boot_id = boot_id or f"{random.getrandbits(32):08X}"
    return firmware.Launcher(machine, Ticks(clock), write, boot_id, wdt=wdt, pins=pin_map(pins, max_run_ms))


def loop_timeout(launcher: Any) -> float:
    """How long the firmware's loop may wait for a command or an edge before its next pass."""
    return LOOP_S if launcher.state == "FIRING" else IDLE_LOOP_S


class HeaderBoard:
    """The firmware's Launcher on the header, served on two file descriptors until the first one ends."""

    def __init__(
        self,
        *,
        pins: dict[str, int | None],
        max_run_ms: int,
        pin_factory: Factory,
        commands: int,
        replies: int,
        priority: EdgePriority | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        enable = pins["enable"]
        assert pins["forward"] is not None and pins["backward"] is not None and enable is not None
        self._commands = commands
        self._replies = replies
        self.dropped = 0  # bytes the daemon did not take in time: the protocol's retransmissions mend the rest
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        os.set_blocking(replies, False)  # a daemon that stops reading must never stall the loop
        self.machine = HeaderMachine(
            motor=(pins["forward"], pins["backward"], enable), pin_factory=pin_factory, priority=priority
        )
        self.machine.wake = self._wake
        try:
            self._watchdog = Watchdog(self._stalled, clock=clock)
            self.launcher = start_firmware(
                self.machine, pins=pins, max_run_ms=max_run_ms, write=self._write, clock=clock, wdt=self._watchdog
            )
        except BaseException:  # re-raised: the pins are released on the way
            self.close()
            raise

    def serve(self) -> None:
        """Until the daemon closes the commands' end: read, and pass the firmware's loop every LOOP_S at least
        while it fires, every IDLE_LOOP_S otherwise, and at once after an edge."""
        self._watchdog.start()
        launcher, commands, wake = self.launcher, self._commands, self._wake_read
        while True:
            ready, _, _ = select.select([commands, wake], [], [], loop_timeout(launcher))
            if wake in ready:
                os.read(wake, READ_BYTES)
            if commands in ready:
                data = os.read(commands, READ_BYTES)
                if not data:
                    return
                launcher.receive(data)
            launcher.poll()

    def close(self) -> None:
        """Motor off, pins released. Safe to call twice."""
        self.machine.close()
        if hasattr(self, "_watchdog"):
            self._watchdog.stop()
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)

    def _write(self, data: bytes) -> None:
        try:
            sent = os.write(self._replies, data)
        except BlockingIOError:
            sent = 0
        except BrokenPipeError:
            return  # the daemon has gone; the end of the commands follows
        self.dropped += len(data) - sent

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.write(self._wake_write, b"!")

    def _stalled(self) -> None:
        log.error("the header process's loop stalled for %.1f s: motor off, ending", WDT_S)
        self.machine.close()
        os._exit(3)


def _stop_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # the loop unwinds through close(): the motor is off before the process ends


def main(argv: list[str] | None = None) -> int:
    """The process the daemon starts: one JSON argument (header_link.board_command); exit status 1 when the header
    cannot be used, with the reason on stderr."""
    from launcher.hardware.factories import pin_factory

    logging.basicConfig(level=logging.INFO, format="header board: %(message)s")
    signal.signal(signal.SIGTERM, _stop_on_signal)  # systemd stops the service's every process at once
    signal.signal(signal.SIGHUP, _stop_on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the daemon too, which then closes our stdin
    settings = json.loads((sys.argv[1:] if argv is None else argv)[0])
    priority = EdgePriority(settings["priority"])
    priority.raise_caller()  # the loop too: it starts the motor
    try:
        board = HeaderBoard(
            pins=settings["pins"],
            max_run_ms=settings["max_run_ms"],
            pin_factory=pin_factory(),
            commands=sys.stdin.fileno(),
            replies=sys.stdout.fileno(),
            priority=priority,
        )
    except Exception as e:  # a pin library's own errors, or the firmware missing: the reason, in one line
        log.error("cannot use the header: %s", e)
        return 1
    try:
        board.serve()
    finally:
        board.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
