"""The daemon's side of the header board (header_board.py): the process, and the launcher made with it.

`HeaderProcess` starts the board's process and is the `Port` of a serial link to it: its stdin and stdout are the
wire. When the process ends, the link is lost like a board unplugged, and the link's keeper starts a new one.
`HeaderHardware` is the launcher on the Pi's header with its button, lid, exit beam and motor in that process,
driven as a board on USB is (serial_link.py), and its light, buzzer and aiming servo here, since nothing waits on
them.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
from collections.abc import Callable

from gpiozero import AngularServo
from gpiozero.pins import Factory

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import DispenseConfig, PinsConfig
from launcher.hardware.base import Closing
from launcher.hardware.cues import GpioCues
from launcher.hardware.serial_link import SerialHardware
from launcher.hardware.serial_port import READ_TIMEOUT_S, WRITE_TIMEOUT_S, Opener, Port

START_S = 20.0  # from starting the process to its first word: its imports take seconds on a Pi Zero
END_S = 2.0
RETRY_MAX_S = 60.0  # for the process to stop its motor and end once its stdin is closed, before it is killed
READ_BYTES = 4096
NAME = "the header process"


def wiring(pins: PinsConfig) -> dict[str, int | None]:
    """The pins the firmware drives on the header, by the names header_board.pin_map takes."""
    return {
        "button": pins.button,
        "beam": pins.exit_beam,
        "lid": pins.lid,
        "forward": pins.motor_forward,
        "backward": pins.motor_backward,
        "enable": pins.motor_enable,
    }


def board_command(pins: PinsConfig, *, max_run_ms: int, priority: int) -> list[str]:
    """The command line of the header board for these pins."""
    settings = {"pins": wiring(pins), "max_run_ms": max_run_ms, "priority": priority}
    return [sys.executable, "-m", "launcher.hardware.header_board", json.dumps(settings)]


class PipePort:
    """A `Port` on two pipes: `commands` written, `replies` read. Closing closes both."""

    def __init__(self, *, commands: int, replies: int) -> None:
        self._commands = commands
        self._replies = replies
        self._cancel_read, self._cancel_write = os.pipe()
        os.set_blocking(self._cancel_write, False)
        self._unread = b""  # read before the link's keeper asked

    def read(self) -> bytes:
        if self._unread:
            data, self._unread = self._unread, b""
            return data
        ready, _, _ = select.select([self._replies, self._cancel_read], [], [], READ_TIMEOUT_S)
        if self._cancel_read in ready:
            os.read(self._cancel_read, READ_BYTES)
            return b""
        if not ready:
            return b""
        data = os.read(self._replies, READ_BYTES)
        if not data:
            raise OSError(f"{NAME} has ended: {self.ended()}")
        return data

    def write(self, data: bytes) -> None:
        while data:
            _, ready, _ = select.select([], [self._commands], [], WRITE_TIMEOUT_S)
            if not ready:
                raise OSError(f"{NAME} has not read what was sent for {WRITE_TIMEOUT_S} s")
            data = data[os.write(self._commands, data) :]

    def cancel_read(self) -> None:
        with contextlib.suppress(BlockingIOError):
            os.write(self._cancel_write, b"!")

    def ended(self) -> str:
        """Why the replies ended."""
        return "its output is closed"

    def end_commands(self) -> None:
        """Close the commands' end: the other side reads its end. Safe to call twice."""
        if self._commands >= 0:
            os.close(self._commands)
            self._commands = -1

    def close(self) -> None:
        self.end_commands()
        for fd in (self._replies, self._cancel_read, self._cancel_write):
            os.close(fd)


class HeaderProcess(PipePort):
    """The header board's process on its stdin and stdout, opened once it has said its first word (the firmware's
    BOOT): a process that cannot start (its pins taken, no GPIO library) raises OSError here, not at the first read.
    """

    def __init__(self, command: list[str], *, start_s: float = START_S) -> None:
        board_stdin, commands = os.pipe()
        replies, board_stdout = os.pipe()
        try:
            self._process = subprocess.Popen(command, stdin=board_stdin, stdout=board_stdout)
        finally:
            os.close(board_stdin)
            os.close(board_stdout)
        super().__init__(commands=commands, replies=replies)
        try:
            self._unread = self._first_word(start_s)
        except BaseException:  # re-raised: the process is ended on the way
            self.close()
            raise

    def _first_word(self, start_s: float) -> bytes:
        ready, _, _ = select.select([self._replies], [], [], start_s)
        if not ready:
            raise OSError(f"{NAME} said nothing in {start_s:.0f} s after it was started")
        data = os.read(self._replies, READ_BYTES)
        if not data:
            raise OSError(f"{NAME} could not start ({self.ended()})")
        return data

    def ended(self) -> str:
        return f"exit status {self._process.wait()}; its reason is in the log"

    def close(self) -> None:
        """Close its stdin, which stops its motor and ends it; kill it if it has not ended in END_S."""
        self.end_commands()
        try:
            self._process.wait(END_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        super().close()


class Starter:
    """Opens the header process for the link's keeper, waiting longer after each start that failed (1 s, doubling
    to RETRY_MAX_S): a process that cannot start must not be started again and again, at a second of a Pi Zero's
    processor each time."""

    def __init__(self, start: Opener, *, clock: Clock = REAL_CLOCK) -> None:
        self._start = start
        self._clock = clock
        self._wait_s = 0.0
        self._next = 0.0
        self._failure = ""

    def __call__(self) -> Port:
        now = self._clock.now()
        if now < self._next:
            raise OSError(f"{self._failure}; trying again in {self._next - now:.0f} s")
        try:
            port = self._start()
        except OSError as e:
            self._wait_s = min(RETRY_MAX_S, max(1.0, 2 * self._wait_s))
            self._next = now + self._wait_s
            self._failure = str(e)
            raise
        self._wait_s = 0.0
        return port


class SeatServo:
    """The aiming servo, when `seat_angles` are set (none is opened without them): turns to face a seat."""

    def __init__(self, pin: int, seat_angles: tuple[float, ...], *, pin_factory: Factory) -> None:
        self._seat_angles = seat_angles
        self._servo = AngularServo(pin, min_angle=-90, max_angle=90, pin_factory=pin_factory) if seat_angles else None

    @property
    def angle(self) -> float | None:
        return None if self._servo is None or self._servo.closed else self._servo.angle

    def aim_at(self, seat: int) -> None:
        """Turn the launcher to face the player in this seat (0 = the first)."""
        if self._servo is not None and not self._servo.closed and 0 <= seat < len(self._seat_angles):
            self._servo.angle = self._seat_angles[seat]

    def close(self) -> None:
        if self._servo is not None:
            self._servo.close()


class HeaderHardware(Closing):
    """The launcher on the Pi's header with a process of its own for the button, the lid, the beam and the motor.

    `inputs`, `dispenser`, `arm`/`disarm` and the link are those of a SerialHardware whose port is the process
    (opened by `opener`, by default a HeaderProcess running `board_command`). Closable twice; a context manager.
    """

    def __init__(
        self,
        *,
        pins: PinsConfig,
        dispense: DispenseConfig,
        pin_factory: Factory,
        clock: Clock = REAL_CLOCK,
        seat_angles: tuple[float, ...] = (),
        edge_priority: int = 0,
        opener: Opener | None = None,
        backend: str = "gpio",
        name: str = NAME,
    ) -> None:
        """`opener` opens the wire to the firmware, by default a HeaderProcess; `name` says where it runs."""
        command = board_command(pins, max_run_ms=dispense.max_run_ms, priority=edge_priority)
        # For the status page: where the firmware runs the motor (`firmware` is its version, once it has said).
        self._where = {"backend": backend, "runs_on": name}
        self.clock = clock
        with contextlib.ExitStack() as undo:  # a part that fails to open releases the ones before it
            self.cues = GpioCues(light=pins.light, buzzer=pins.buzzer, pin_factory=pin_factory, clock=clock)
            undo.callback(self.cues.close)
            self.servo = SeatServo(pins.servo, seat_angles, pin_factory=pin_factory)
            undo.callback(self.servo.close)
            start = opener or (lambda: HeaderProcess(command))
            self._board = SerialHardware(port=name, dispense=dispense, clock=clock, opener=Starter(start, clock=clock))
            undo.pop_all()
        self.inputs = self._board.inputs
        self.dispenser = self._board.dispenser

    @property
    def when_link_changed(self) -> Callable[[bool, str], None] | None:
        return self._board.when_link_changed

    @when_link_changed.setter
    def when_link_changed(self, callback: Callable[[bool, str], None] | None) -> None:
        self._board.when_link_changed = callback

    def describe(self) -> dict[str, object]:
        board = self._board.describe()
        del board["port"]
        return {**board, **self._where, "cues": self.cues.running, "aim": self.servo.angle}

    def status(self) -> dict[str, str]:
        """The firmware's own reading of its parts (SerialHardware.status)."""
        return self._board.status()

    def aim_at(self, seat: int) -> None:
        self.servo.aim_at(seat)

    def close(self) -> None:
        self._board.close()
        self.cues.close()
        self.servo.close()
