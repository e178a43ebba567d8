"""The firmware under the real MicroPython interpreter (the unix port), for tests/test_firmware_micropython.py.

`MicroPythonBoard` runs firmware/main.py's own `run()` in a `micropython` process: its USB serial is the process's
stdin and stdout (the master end of a pty whose slave the host opens through a /dev/serial/by-id-like symlink, or
two pipes the test reads and writes itself), and its pins are tests/micropython_machine.py, driven and read over
two more file descriptors. The launcher around the board (the roller, the hopper, the exit beam, the lid and the
button) is the simulator's `SimulatedWorld`, here in the test process on mock pins that mirror what the board's
pins report, its beam, lid and button sent back to the board's pins.

The interpreter: UNO_MICROPYTHON if set, else the one scripts/lab-micropython fetched into the lab's cache
(scripts/test fetches it), else a `micropython` on PATH. Without one the tests skip and say why, or fail when CI is
set: CI must run them.
"""

from __future__ import annotations

import contextlib
import os
import pty
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from launcher.clock import REAL_CLOCK
from launcher.config import Config, DispenseConfig, PinsConfig, SimConfig
from launcher.hardware import framing
from launcher.hardware.framing import Frame, Parser
from launcher.hardware.header_board import FIRMWARE
from launcher.hardware.sim import SimPin, SimulatedWorld
from tests.conftest import wait_until
from tests.sim_board import board, point

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
# The stand-in replaces the port's own `machine` before the firmware imports it; then the firmware's own loop runs.
# A board whose loop has not been seen to pass for this long is kept waiting by the OS (a real board's loop passes
# every millisecond or so): the simulated roller waits for it.
STALLED_S = 0.02
ENABLE, LIGHT, BUZZER = 2, 3, 4  # pins the world wants that a Pico's wiring leaves free
BOOT = "import sys\nimport micropython_machine\nsys.modules['machine'] = micropython_machine\nimport main\nmain.run()\n"


def lab_cache() -> Path:
    """Where scripts/lab-lib.sh's lab_cache_dir puts the lab's downloads."""
    if os.environ.get("UNO_LAB_CACHE"):
        return Path(os.environ["UNO_LAB_CACHE"])
    if os.geteuid() == 0:
        return Path("/var/cache/uno-lab")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "uno-lab"


def find_micropython() -> tuple[Path | None, str]:
    """(the interpreter, "") or (None, why there is none)."""
    if os.environ.get("UNO_MICROPYTHON"):
        return Path(os.environ["UNO_MICROPYTHON"]), ""
    fetched = lab_cache() / "micropython" / "micropython"
    if os.access(fetched, os.X_OK):
        return fetched, ""
    on_path = shutil.which("micropython")
    if on_path:
        return Path(on_path), ""
    unavailable = lab_cache() / "micropython.unavailable"
    if unavailable.exists():
        return None, "the real MicroPython could not be fetched: " + unavailable.read_text().strip()
    return None, f"the real MicroPython is not fetched yet ({fetched}): run scripts/lab-micropython (scripts/test does)"


@pytest.fixture(scope="session")
def micropython() -> Path:
    """The interpreter's path, checked to be MicroPython; a skip saying why where there is none (a failure on CI)."""
    path, reason = find_micropython()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    check = subprocess.run(
        [str(path), "-c", "import sys; print(sys.implementation.name, sys.version)"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert check.returncode == 0 and check.stdout.startswith("micropython "), (path, check.stdout, check.stderr)
    return path


def run_script(interpreter: Path, code: str, *, timeout: float = 60) -> str:
    """What `code` prints under MicroPython with firmware/ on its path (fails the test on an error)."""
    done = subprocess.run(
        [str(interpreter), "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=FIRMWARE,
        env={**os.environ, "MICROPYPATH": str(FIRMWARE)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


class RemotePWM:
    """A PWM output of the board as the test sees it: the duties the stand-in reported."""

    def __init__(self) -> None:
        self.duty = 0
        self.starts = 0  # off -> on transitions
        self.history: list[tuple[float, int, int]] = []  # (time.monotonic() here, duty, the board's ticks_ms)
        self.turned_on = threading.Event()


class Mirror(SimPin):
    """A mock pin of the world's: the board's input pins it drives are sent to the board (its `send`)."""

    send: Callable[[Mirror, bool], None] | None = None

    def _change_state(self, value: float) -> bool:
        changed = super()._change_state(value)
        if changed and self.send is not None:
            self.send(self, bool(value))
        return changed


class MicroPythonBoard:
    """A Pico running the firmware under the real MicroPython. `link`: the path of a symlink to a pty that the
    host opens (real time, as tests/sim_board.py's PtyWire); None: the test talks over pipes itself (`write`, `frames`).

    `lid_closed` and `button_held` are the pins' levels at power-up.
    """

    def __init__(
        self,
        interpreter: Path,
        link: Path | None = None,
        *,
        hopper: int = 100,
        cards_per_second: float = 62.5,  # one card every 20 ms at the FIREs' 80 % duty
        lid_closed: bool = True,
        button_held: bool = False,
    ) -> None:
        self.link = link
        self.motor, self.reverse = RemotePWM(), RemotePWM()
        self.outputs: dict[str, int] = {}  # the board's output pins, as last reported
        self.events: list[tuple[float, str]] = []  # (time.monotonic(), line) from the stand-in
        self.frames: list[Frame] = []  # what the firmware wrote, in pipe mode
        self.text = b""  # and the raw bytes
        self._parser = Parser()
        self._pins_lock = threading.Lock()
        self._mirror_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by unplug)
        pins_in_r, self._pins_in = os.pipe()
        self._pins_out, pins_out_w = os.pipe()
        if lid_closed and board.LID is not None:
            self.send_pin(str(board.LID), 0)
        if button_held:
            self.send_pin(str(board.BUTTON), 0)
        self._master = self._slave = -1
        if link is not None:
            self._master, self._slave = pty.openpty()
            tty.setraw(self._slave)  # bytes as a USB CDC port passes them
            stdin: int = self._master
            stdout: int = self._master
            self._host_in = self._host_out = -1
        else:
            stdin, self._host_in = os.pipe()
            self._host_out, stdout = os.pipe()
        self.process = subprocess.Popen(
            [str(interpreter), "-c", BOOT],
            stdin=stdin,
            stdout=stdout,
            stderr=self._stderr,
            pass_fds=(pins_in_r, pins_out_w),
            cwd=FIRMWARE,
            env={
                **os.environ,
                "MICROPYPATH": f"{TESTS}:{FIRMWARE}",
                "UNO_PINS_IN": str(pins_in_r),
                "UNO_PINS_OUT": str(pins_out_w),
            },
        )
        for fd in (pins_in_r, pins_out_w):
            os.close(fd)
        if link is not None:
            os.close(self._master)  # the board's end is the process's now
            self._master = -1
            point(link, os.ttyname(self._slave))
        else:
            os.close(stdin)
            os.close(stdout)
            self._start(self._read_output, "micropython-stdout")
        self._passed_at = 0.0  # time.monotonic() of the board loop's last pass seen
        self._make_world(hopper, cards_per_second, button_held)
        self._start(self._read_pins, "micropython-pins")
        self._stop = threading.Event()
        self._start(self._watch_loop, "micropython-watch")

    def _make_world(self, hopper: int, cards_per_second: float, button_held: bool) -> None:
        """The simulated world on mock pins numbered as the board's: its motor pins follow the board's PWM, and what
        it drives on the beam, lid and button goes to the board's pins."""
        pins = PinsConfig(
            button=board.BUTTON,
            motor_forward=board.MOTOR_IN1,
            motor_backward=board.MOTOR_IN2,
            motor_enable=ENABLE,
            exit_beam=board.BEAM,
            lid=board.LID,
            light=LIGHT,
            buzzer=BUZZER,
        )
        config = Config(
            pins=pins,
            sim=SimConfig(cards_per_second=cards_per_second, card_block_ms=5),
            dispense=DispenseConfig(hopper_cards=hopper),
        )
        self.factory = MockFactory(pin_class=Mirror)
        self.world = SimulatedWorld(config, self.factory, clock=REAL_CLOCK)
        self._forward, backward, enable = (self.factory.pin(n) for n in (board.MOTOR_IN1, board.MOTOR_IN2, ENABLE))
        for pin in (self._forward, backward, enable):
            pin.function = "output"
        enable.state = 1  # the bridge's enable: the Pico has none, its PWM inputs alone drive the motor
        self._mirrored = {str(board.MOTOR_IN1): self._forward, str(board.MOTOR_IN2): backward}
        self.factory.pin(board.BEAM).drive_high()  # clear, as the board's pull-up has it
        if not button_held:
            self.factory.pin(board.BUTTON).drive_high()
        self.world_to_board = {str(board.BEAM), str(board.BUTTON), str(board.LID)}
        for key in self.world_to_board:
            self.factory.pin(int(key)).send = self._world_drove

    def _world_drove(self, pin: Mirror, high: bool) -> None:
        key = pin.info.name.removeprefix("GPIO")
        self.send_pin(key, 1 if high else 0)

    # --- the outside world ---

    def send_pin(self, key: str, level: int | None) -> None:
        with self._pins_lock:
            os.write(self._pins_in, f"{key} {'-' if level is None else level}\n".encode())

    def press(self) -> None:
        self.world.button_down()

    def release(self) -> None:
        self.world.button_up()

    def click(self, hold_s: float = 0.02) -> None:
        self.press()
        time.sleep(hold_s)
        self.release()

    def open_lid(self) -> None:
        self.world.open_lid()

    def close_lid(self) -> None:
        self.world.close_lid()

    def said(self, prefix: str) -> list[str]:
        """The stand-in's reports that start with prefix, e.g. said("wdt")."""
        return [line for _, line in list(self.events) if line.startswith(prefix)]

    # --- pipe mode: the test is the host ---

    def write(self, data: bytes) -> None:
        os.write(self._host_in, data)

    def wait_frames(self, count: int, timeout: float = 10.0) -> list[Frame]:
        wait_until(lambda: len(self.frames) >= count or self.process.poll() is not None, timeout, f"{count} frames")
        assert len(self.frames) >= count, self.diagnosis()
        return self.frames

    def reply(self, seq: int, timeout: float = 10.0) -> Frame:
        """The board's reply to command `seq` (the first one)."""
        found = wait_until(lambda: [f for f in self.frames if f.seq == seq] or self.process.poll() is not None, timeout)
        assert isinstance(found, list), self.diagnosis()
        return found[0]

    def reply_to(self, seq: int, cmd: str, *args: object) -> Frame:
        """Send one command and return the board's reply."""
        self.write(framing.encode(seq, cmd, args))
        return self.reply(seq)

    def diagnosis(self) -> str:
        self._stderr.seek(0)
        return f"micropython exit code {self.process.poll()}; stderr: {self._stderr.read().decode(errors='replace')}"

    # --- threads ---

    def _start(self, target: Any, name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _read_output(self) -> None:
        while True:
            try:
                data = os.read(self._host_out, 4096)
            except OSError:
                return
            if not data:
                return
            self.text += data
            self.frames += self._parser.feed(data)

    def _read_pins(self) -> None:
        pending = b""
        while True:
            try:
                data = os.read(self._pins_out, 4096)
            except OSError:
                return
            if not data:
                return
            *lines, pending = (pending + data).split(b"\n")
            for raw in lines:
                line = raw.decode()
                now = time.monotonic()
                words = line.split(" ")
                if words[0] == "pass":
                    self._passed_at = now
                    continue
                if words[0] == "pwm":
                    pwm = self.motor if words[1] == str(board.MOTOR_IN1) else self.reverse
                    duty = int(words[2])
                    if duty and not pwm.duty:
                        pwm.starts += 1
                        pwm.turned_on.set()
                    pwm.duty = duty
                    pwm.history.append((now, duty, int(words[3])))
                    self._mirror()
                elif words[0] == "out":
                    self.outputs[words[1]] = int(words[2])
                self.events.append((now, line))

    def _mirror(self) -> None:
        """The board's duties onto the world's motor pins; none while the board's loop is not seen to pass. A board
        the OS keeps waiting does not watch its beam, and a real one is never kept waiting: so a loaded test machine
        cannot make a card count overrun (the beam still clears in real time)."""
        with self._mirror_lock:
            stalled = time.monotonic() - self._passed_at > STALLED_S
            for pin, pwm in ((self._forward, self.motor), (self._mirrored[str(board.MOTOR_IN2)], self.reverse)):
                pin.state = 0 if stalled else pwm.duty / 65535

    def _watch_loop(self) -> None:
        while not self._stop.wait(0.001):
            self._mirror()

    # --- the cable ---

    def wait_exit(self, timeout: float = 10.0) -> int:
        code = self.process.wait(timeout)
        for thread in self._threads:
            if thread.name != "micropython-watch":
                thread.join(5)
        return code

    def unplug(self) -> None:
        """Pull the USB cable: the board loses power and the port disappears. Safe to call twice."""
        self._stop.set()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)
        for thread in self._threads:
            thread.join(5)
        self.world.close()
        for key in self.world_to_board:  # the pins are released next: nothing more goes to the board
            self.factory.pin(int(key)).send = None
        self.factory.close()
        for name in ("_slave", "_pins_in", "_pins_out", "_host_in", "_host_out"):
            fd = getattr(self, name)
            if fd != -1:
                with contextlib.suppress(OSError):
                    os.close(fd)
                setattr(self, name, -1)
        if self.link is not None:
            self.link.unlink(missing_ok=True)
        self._stderr.close()

    close = unplug

    def __enter__(self) -> MicroPythonBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


HEARTBEAT_SEQ = 50000  # the heartbeat's own sequence numbers, far from the tests'


@contextlib.contextmanager
def board_on_pipes(interpreter: Path, *, heartbeat: bool = True, **options: Any) -> Iterator[MicroPythonBoard]:
    """A board the test talks to over pipes. With `heartbeat`, a PING every 0.3 s (as the host's link sends them),
    so that a test held up by a busy machine never finds the board latched SAFE by 1.5 s of silence."""
    with MicroPythonBoard(interpreter, None, **options) as pico:
        pico.wait_frames(1)  # E BOOT: the firmware is up
        stop = threading.Event()

        def beat() -> None:
            seq = HEARTBEAT_SEQ
            while not stop.wait(0.3):
                seq += 1
                with contextlib.suppress(OSError):  # the board is gone
                    pico.write(framing.encode(seq, "PING"))

        thread = threading.Thread(target=beat, name="micropython-heartbeat", daemon=True)
        if heartbeat:
            thread.start()
        try:
            yield pico
        finally:
            stop.set()
            if heartbeat:
                thread.join(5)
