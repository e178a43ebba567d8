"""Press → motor on when the edge comes from another thread and the daemon is busy, as on a Pi.

On a Pi the button's edge arrives on lgpio's alert thread, blocked in a read until the kernel reports it; before it
can call back into Python it must take the interpreter's lock from whichever thread holds it. Here an edge thread
blocks in `os.read` on a pipe and drives the mock button pin when a byte arrives; the time is taken from the write
to the pipe until the motor's forward pin goes on. The load, the same for every program measured:

- a thread doing CPU work the daemon really does: replaying and scoring a 300-round game and encoding its
  scoreboard as JSON, and compressing the page's
  script;
- 20 phones following the event stream (in a subprocess, so that they are no load on this interpreter), served by
  the daemon itself; for the bare program, by a daemon in another process.

Programs: a bare gpiozero program (a Button whose `when_pressed` is `motor.forward`) at Python's default switch
interval, with the load in its interpreter; the same bare program placed as the header process is (header_probe.py
`bare`: a process of its own, its edge thread at the same real-time priority, the load in this interpreter), the
like-for-like baseline; and the daemon as it is served on a Pi's header: the button, beam, lid and motor in the
header process (launcher/hardware/header_board.py, the firmware, run by header_probe.py on mock pins with its own
edge thread, raised at its first edge to the real-time priority of `[hardware] edge_priority`,
launcher/hardware/priority.py; the benchmark must be allowed to set it: root, or an RLIMIT_RTPRIO), armed by the
daemon with each next press, the load all in the daemon. The verdict is that last row's. Every press fires (a
profile with hazard 1); the header process's first press of a shuffle, and a miss the profile forces, are the host's
and not timed. Each press is timed in two stages: from the write until the edge thread runs again (it waits for the
interpreter's lock), and from there until the motor is on (the press's own code, sharing the interpreter with every
other thread that wants it). Beside them, how much of the load's work got done per second.

    .venv/bin/python benchmarks/bench_press_under_load.py [--fires 300]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gpiozero import Button, Motor
from gpiozero.pins.mock import MockFactory, MockPWMPin
from measure import ROOT, exit_code, parse, percentile

from launcher.config import Config, load
from launcher.daemon import Daemon
from launcher.game import Game, Mode
from launcher.hardware.header_link import HeaderHardware, HeaderProcess
from tests.conftest import TESTS_LIMITS_TOML

CONFIG = (
    """
[dispense]
min_rest_ms = 0
card_gap_ms = 0
hopper_cards = 500
debounce_ms = 0
reverse_ms = 0

[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
card_weights = [1.0]
jackpot_probability = 0.0
pause_probability = 0.0

[web]
port = 0
threads = 48
"""
    + TESTS_LIMITS_TOML
)  # the phones all join from this machine
PHONES = 20
LINE_S = 30  # the longest the header process may take to report, however loaded the machine
PHONES_SCRIPT = """
import sys
from tests.conftest import join
from tests.sse_client import SseClient
url, pin, phones = sys.argv[1], sys.argv[2], int(sys.argv[3])
clients = [SseClient(url, cookie=join(url, pin)) for _ in range(phones)]
print("following", flush=True)
sys.stdin.read()  # until the benchmark closes the pipe
"""


class TimedPin(MockPWMPin):
    """Notes the moment a pin goes from off to on, and says so."""

    on_at: float = 0.0
    went_on: threading.Event | None = None

    def _change_state(self, value: float) -> bool:
        if value and not self._state:
            self.on_at = time.perf_counter()
            if self.went_on is not None:
                self.went_on.set()
        return super()._change_state(value)


class EdgeThread:
    """Stands for lgpio's alert thread: blocked in a read, it drives the button when told through a pipe."""

    def __init__(self, button_pin: MockPWMPin) -> None:
        self._read, self._write = os.pipe()
        self._pin = button_pin
        self.woke_at = 0.0  # when the read of the last press returned: the thread had the interpreter again
        self._thread = threading.Thread(target=self._run, name="edge", daemon=True)
        self._thread.start()

    def press(self) -> float:
        sent = time.perf_counter()
        os.write(self._write, b"p")
        return sent

    def release(self) -> None:
        os.write(self._write, b"r")

    def close(self) -> None:
        os.write(self._write, b"q")
        self._thread.join()
        os.close(self._read)
        os.close(self._write)

    def _run(self) -> None:
        while (byte := os.read(self._read, 1)) != b"q":
            if byte == b"p":
                self.woke_at = time.perf_counter()
                self._pin.drive_low()
            else:
                self._pin.drive_high()


@dataclass
class Timed:
    """One program's presses (write → edge thread running again → motor on, in seconds) and the load's pace."""

    waits: list[float] = field(default_factory=list)
    paths: list[float] = field(default_factory=list)
    work_per_s: float = 0.0

    @property
    def totals(self) -> list[float]:
        return [wait + path for wait, path in zip(self.waits, self.paths, strict=True)]


def busy_work(stop: threading.Event, done: list[int]) -> None:
    """What keeps the daemon's interpreter busy: a long game scored and sent, the page compressed. Counts in
    `done` the times it did it all."""
    players = ["Ann", "Bob", "Cy", "Dee"]
    game = Game(players, Mode.LOWEST_TOTAL, target=100_000)
    for n in range(300):
        winner = players[n % 4]
        game.score_round(winner, {p: {"7": 1, "hit_2": n % 3} for p in players if p != winner})
    stored = game.to_dict()
    page = (ROOT / "webui" / "static" / "app.js").read_bytes()
    while not stop.is_set():
        json.dumps(Game.from_dict(stored).scoreboard())
        gzip.compress(page)
        done[0] += 1


@contextlib.contextmanager
def phones_following(url: str, pin: str) -> Iterator[None]:
    process = subprocess.Popen(
        [sys.executable, "-c", PHONES_SCRIPT, url, pin, str(PHONES)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None and process.stdin is not None
    if process.stdout.readline().strip() != "following":
        raise RuntimeError("the phones did not start following")
    try:
        yield
    finally:
        process.stdin.close()
        process.wait(10)


@contextlib.contextmanager
def loaded(timed: Timed) -> Iterator[None]:
    stop, done = threading.Event(), [0]
    worker = threading.Thread(target=busy_work, args=(stop, done), name="busy", daemon=True)
    began = time.perf_counter()
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join()
        timed.work_per_s = done[0] / (time.perf_counter() - began)


def timed_presses(edge: EdgeThread, forward: TimedPin, fires: int, after: object, timed: Timed) -> Timed:
    """Press until `fires` presses have fired; `after()` passes the card and waits for the launcher to be free.
    A press that does not fire (the profile's limit of fires in a row forces a miss now and then) is not timed."""
    forward.went_on = went_on = threading.Event()
    for _ in range(2 * fires):
        if len(timed.waits) == fires:
            break
        went_on.clear()
        sent = edge.press()
        if went_on.wait(0.5):
            timed.waits.append(edge.woke_at - sent)
            timed.paths.append(forward.on_at - edge.woke_at)
        edge.release()
        after()  # type: ignore[operator]
    if len(timed.waits) < fires:
        raise RuntimeError(f"only {len(timed.waits)} presses of {2 * fires} started the motor")
    return timed


def bare_gpiozero(fires: int, pins: object) -> Timed:
    factory = MockFactory(pin_class=TimedPin)
    button = Button(pins.button, pull_up=True, bounce_time=None, pin_factory=factory)  # type: ignore[attr-defined]
    motor = Motor(
        pins.motor_forward,  # type: ignore[attr-defined]
        pins.motor_backward,  # type: ignore[attr-defined]
        enable=pins.motor_enable,  # type: ignore[attr-defined]
        pin_factory=factory,
    )
    button.when_pressed = motor.forward
    edge = EdgeThread(factory.pin(pins.button))  # type: ignore[attr-defined]
    forward = factory.pin(pins.motor_forward)  # type: ignore[attr-defined]
    try:
        timed = Timed()
        with loaded(timed):
            timed_presses(edge, forward, fires, motor.stop, timed)
        return timed
    finally:
        edge.close()
        button.close()
        motor.close()
        factory.close()


def bare_process(fires: int, config_path: Path, priority: int) -> Timed:
    """The bare program placed as the header process is (its own process, its edge thread at `priority`), the load
    in this interpreter as the daemon carries it beside the header process."""
    probe = HeaderProbe(config_path.parent, load(config_path).pins, priority)
    process = probe.start_bare()
    timed = Timed()
    try:
        with loaded(timed):
            for _ in range(fires):
                probe.timed_press(timed)
        return timed
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(10)
        probe.close()


class HeaderProbe:
    """The header process (header_probe.py) as the daemon's port, with the FIFOs through which the benchmark presses
    its button and hears when its motor went on."""

    def __init__(self, tmp: Path, pins: object, priority: int) -> None:
        edges, report = tmp / "edges", tmp / "report"
        for fifo in (edges, report):
            fifo.unlink(missing_ok=True)
            os.mkfifo(fifo)
        wiring = {
            "button": pins.button,  # type: ignore[attr-defined]
            "beam": pins.exit_beam,  # type: ignore[attr-defined]
            "lid": pins.lid,  # type: ignore[attr-defined]
            "forward": pins.motor_forward,  # type: ignore[attr-defined]
            "backward": pins.motor_backward,  # type: ignore[attr-defined]
            "enable": pins.motor_enable,  # type: ignore[attr-defined]
        }
        probe = str(Path(__file__).parent / "header_probe.py")
        self.command = [sys.executable, probe, json.dumps(wiring), str(edges), str(report), str(priority)]
        self._paths = (edges, report)
        self._edges = self._report = -1
        self._heard = b""  # what the report said past its last whole line

    def start(self) -> HeaderProcess:
        process = HeaderProcess(self.command)
        self._open()
        return process

    def start_bare(self) -> subprocess.Popen[bytes]:
        """The bare gpiozero program in the header process's place (header_probe.py's `bare`)."""
        process = subprocess.Popen([*self.command, "bare"], stdin=subprocess.PIPE)
        self._open()
        return process

    def _open(self) -> None:
        self._edges = os.open(self._paths[0], os.O_WRONLY)  # the probe opens both once it has said BOOT
        self._report = os.open(self._paths[1], os.O_RDONLY)

    def send(self, byte: bytes) -> float:
        sent = time.perf_counter()
        os.write(self._edges, byte)
        return sent

    def line(self) -> str:
        """The report's next line; a benchmark waits for it at most LINE_S, even on a loaded machine."""
        while b"\n" not in self._heard:
            if not select.select([self._report], [], [], LINE_S)[0]:
                raise RuntimeError(f"the header process reported nothing for {LINE_S} s")
            if not (more := os.read(self._report, 4096)):
                raise RuntimeError("the header process closed its report")
            self._heard += more
        said, self._heard = self._heard.split(b"\n", 1)
        return said.decode().strip()

    def timed_press(self, timed: Timed) -> None:
        """Press the button of a board armed to fire, note when the edge thread woke and the motor went on, then
        release it and pass the card."""
        sent = self.send(b"p")
        woke, on = (float(t) for t in self.line().split())
        timed.waits.append(woke - sent)
        timed.paths.append(on - woke)
        self.send(b"r")
        self.send(b"c")

    def heard(self, seconds: float) -> bool:
        """Whether the report has said something, waiting at most `seconds`."""
        return b"\n" in self._heard or bool(select.select([self._report], [], [], seconds)[0])

    def armed(self) -> bool:
        self.send(b"a")
        while (said := self.line()) not in ("armed", "idle"):
            pass  # a motor-on line of a press not timed
        return said == "armed"

    def close(self) -> None:
        for fd in (self._edges, self._report):
            with contextlib.suppress(OSError):
                os.close(fd)


def header_daemon(fires: int, config_path: Path, priority: int, *, under_load: bool = True) -> Timed:
    """The daemon with the header's inputs and motor in a process of their own; the load (unless not
    `under_load`) in the daemon."""
    config = load(config_path)
    probe = HeaderProbe(config_path.parent, config.pins, priority)
    hardware = HeaderHardware(
        pins=config.pins, dispense=config.dispense, pin_factory=MockFactory(pin_class=MockPWMPin), opener=probe.start
    )
    daemon = Daemon(config, hardware=hardware)
    threading.Thread(target=daemon.server.run, name="waitress", daemon=True).start()

    def settle() -> None:  # the fire over, the launcher waiting for the next press
        while daemon.controller.snapshot()["busy"]:
            time.sleep(0.0005)
        if daemon.controller.snapshot()["hopper"]["remaining"] < 20:
            daemon.controller.reload_hopper(500)

    def armed_soon() -> bool:
        # Whether the host arms the board is its choice (not timed); on a loaded machine it may take seconds.
        deadline = time.monotonic() + 3
        while not probe.armed():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def host_press() -> None:
        # The card goes past the beam only once the motor runs: on a loaded machine the host takes its time, and a
        # card before the motor would leave the fire to end in a jam (which stops the arming for good).
        before = daemon.controller.snapshot()["presses"]
        probe.send(b"p")
        probe.send(b"r")
        deadline = time.monotonic() + 10
        while daemon.controller.snapshot()["presses"] == before and time.monotonic() < deadline:
            time.sleep(0.002)
        # Busy is not always a fire: a miss the profile forces plays its cue with the motor off.
        while daemon.controller.snapshot()["busy"]:
            if probe.heard(0.005):
                probe.line()  # the motor went on
                probe.send(b"c")
                break
        settle()

    assert daemon.new_pins is not None
    try:
        deadline = time.monotonic() + 30
        while daemon.hardware.describe()["link"] != "up":
            if time.monotonic() > deadline:
                raise RuntimeError(f"the header process did not link up: {daemon.hardware.describe()}")
            time.sleep(0.01)
        timed = Timed()
        busy = contextlib.ExitStack()
        if under_load:
            busy.enter_context(phones_following(daemon.urls[0], daemon.new_pins.table))
            busy.enter_context(loaded(timed))
        with busy:
            for _ in range(3 * fires):
                if len(timed.waits) == fires:
                    break
                # A shuffle's first press, and a miss the profile forces now and then, are the host's: not timed.
                if not armed_soon():
                    host_press()
                    continue
                probe.timed_press(timed)
                settle()
        if len(timed.waits) < fires:
            trouble, link = daemon.controller.snapshot()["trouble"], daemon.hardware.describe()["message"]
            raise RuntimeError(
                f"only {len(timed.waits)} presses of {3 * fires} were fired by the board (trouble: {trouble}; {link})"
            )
        return timed
    finally:
        daemon.bus.end_streams()
        daemon.close()
        probe.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fires", type=int, default=300)
    args = parse(parser, fires=5)
    default_interval = sys.getswitchinterval()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name in ("warm", "bare", "bare-process", "header"):
            (Path(tmp) / name).mkdir()
            paths[name] = Path(tmp) / name / "config.toml"
            paths[name].write_text(CONFIG + f'\n[state]\ndir = "{Path(tmp) / name / "state"}"\n', encoding="utf-8")
        priority = Config().hardware.edge_priority
        header_daemon(10, paths["warm"], 0, under_load=False)  # imports, the first SQLite file
        # The bare program's phones follow a daemon of their own in another process: the same load on the cores.
        other = Daemon(load(paths["bare"]))
        threading.Thread(target=other.server.run, name="waitress-other", daemon=True).start()
        assert other.new_pins is not None
        with phones_following(other.urls[0], other.new_pins.table):
            rows.append(("bare gpiozero", default_interval, bare_gpiozero(args.fires, load(paths["bare"]).pins)))
            alike = bare_process(args.fires, paths["bare-process"], priority)
            rows.append((f"bare, own process, rt {priority}", default_interval, alike))
        other.bus.end_streams()
        other.close()
        # As served on a Pi's header: the inputs and the motor in a process of their own, the load in the daemon.
        header = header_daemon(args.fires, paths["header"], priority)
        rows.append((f"header process, rt {priority}", default_interval, header))
    print(f"press -> motor on, edge from another thread, under load; {args.fires} fires each, milliseconds")
    print(f"{'':<41}{'waiting for':>19}{'the press':>19}{'write to':>28}{'load':>9}")
    print(f"{'':<41}{'the interpreter':>19}{'to motor on':>19}{'motor on':>28}{'done':>9}")
    print(
        f"{'program':<26}{'switch interval':>15}{'p50':>10}{'p99':>9}{'p50':>10}{'p99':>9}"
        f"{'p50':>10}{'p99':>9}{'max':>9}{'/ s':>9}"
    )
    for name, interval, timed in rows:
        cells = [percentile(s, q) * 1e3 for s in (timed.waits, timed.paths, timed.totals) for q in (50, 99)]
        print(
            f"{name:<26}{interval * 1e3:>12.1f} ms"
            + "".join(f"{c:>{10 if i % 2 == 0 else 9}.3f}" for i, c in enumerate(cells))
            + f"{max(timed.totals) * 1e3:>9.3f}{timed.work_per_s:>9.1f}"
        )
    bare99 = percentile(rows[0][2].totals, 99)
    ours99 = percentile(header.totals, 99)
    ratio = ours99 / bare99
    passed = ours99 < 0.002 and ratio <= 2
    print(
        f"daemon as served (header process): p99 {ours99 * 1e3:.3f} ms (goal < 2 ms), "
        f"{ratio:.2f}x the bare program's (goal <= 2x)"
    )
    print(f"ratio daemon as served (header process) / bare: p99 {ratio:.2f}x")
    alike99 = percentile(alike.totals, 99)
    print(
        f"ratio like for like, header process / bare in its own process at rt {priority}: "
        f"p50 {percentile(header.totals, 50) / percentile(alike.totals, 50):.2f}x, p99 {ours99 / alike99:.2f}x "
        f"(today's, against the bare program under the load in its own interpreter: p99 {ratio:.2f}x)"
    )
    print("PASS" if passed else "FAIL")
    return exit_code(passed, args)


if __name__ == "__main__":
    sys.exit(main())
