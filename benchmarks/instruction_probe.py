"""One measurement of bench_instructions.py, run under callgrind: the work to count is marked with callgrind's
client requests (benchmarks/callgrind_marks.c, through ctypes), so nothing else the probe does is counted.

    instruction_probe.py MARKS_LIB PROBE [ARGS...]

Start-up probes count the whole process from its first instruction to the mark (an interpreter that loads ctypes
and the marks is the baseline, `bare`); the others count only between marks. This module imports nothing at the top
but what loading the marks needs, so that the start-up probes count the daemon's imports and not the probe's.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

_marks = ctypes.CDLL(sys.argv[1])
_marks.marks_dump.argtypes = [ctypes.c_char_p]
PRESSES = 10  # measured presses; with 2 warm-up ones, fewer than the profile's fires in a row (every one fires)
PHONES = 20  # following the stream, four to a session (as many as webui/stream.py lets one session open)
PHONES_SCRIPT = """
import sys
from tests.sse_client import SseClient
url, cookies = sys.argv[1], sys.argv[2:]
clients = [SseClient(url, cookie=cookie) for cookie in cookies for _ in range(4)]
print("following", flush=True)
sys.stdin.read()  # until the probe closes the pipe
"""


def dump(label: str) -> None:
    _marks.marks_dump(label.encode())


def probe_bare() -> None:
    dump("bare")


def probe_help() -> None:
    from launcher.cli import main

    main(["--help"])
    dump("help")


def probe_start(config: str) -> None:
    """`uno-launcher run` until it tells systemd READY, the moment it answers (its socket listens already)."""
    from launcher.cli import main
    from launcher.system import sdnotify

    def ready(status: str) -> bool:
        dump("ready")
        os._exit(0)

    sdnotify.ready = ready
    main(["run", "--config", config, "--port", "0"])


def _daemon(config_path: str, marked: type) -> tuple[object, object, object, object]:
    from launcher.config import load
    from launcher.daemon import Daemon
    from launcher.hardware.sim import SimulatedHardware

    config = load(Path(config_path))
    hardware = SimulatedHardware(config, pin_class=marked)
    daemon = Daemon(config, hardware=hardware)
    factory, pins = hardware.pin_factory, config.pins
    return daemon, factory.pin(pins.button), factory.pin(pins.exit_beam), factory.pin(pins.motor_forward)


def _marked_pin(on_motor: object) -> type:
    from launcher.hardware.sim import SimPin

    class MarkedPin(SimPin):
        """Calls `on_motor` when the motor's forward pin goes from off to on."""

        forward: object = None

        def _change_state(self, value: float) -> bool:
            if value and not self._state and self is MarkedPin.forward:
                on_motor()  # type: ignore[operator]
            return bool(super()._change_state(value))

    return MarkedPin


class _Presses:
    """Presses on the button's pin of the simulated header (the firmware on mock pins, armed by the daemon with
    each next press), each counted from the edge to the motor's forward pin going on, on every thread: the
    firmware's handler on the pressing thread, then its loop's pass that starts the motor."""

    def __init__(self) -> None:
        import threading

        self.counting = False
        self.fired = 0
        self._on = threading.Event()

    def motor_on(self) -> None:
        if self.counting:
            _marks.marks_toggle()
            self.counting = False
            self.fired += 1
        self._on.set()

    def press(self, daemon: object, button: object, *, count: bool) -> None:
        """Press once the board is armed (a shuffle's first press, which the host decides, only after a second;
        `daemon` None: a bare program, never armed)."""
        import time

        deadline = time.monotonic() + 1
        # The arm is no longer readable from outside (the next press is secret): the probe looks inside the link.
        while daemon is not None and not daemon.hardware._board._fires.armed:  # type: ignore[attr-defined]
            if time.monotonic() > deadline:
                if count:
                    raise RuntimeError("the board was not armed: is the profile's every press a fire?")
                break
            time.sleep(0.002)
        self._on.clear()
        if count:
            self.counting = True
            _marks.marks_toggle()
        button.drive_low()  # type: ignore[attr-defined]
        if not self._on.wait(30):  # callgrind runs about 50 times slower than native
            raise RuntimeError("a press did not start the motor")
        button.drive_high()  # type: ignore[attr-defined]


def _pass_the_card(daemon: object, beam: object, pressed: int) -> None:
    """The card leaves through the beam; wait until the controller has counted the press (its shuffle had
    `pressed` presses before it: a press the board fired from its arm reaches the controller a little later) and
    the launcher is free again (woken by its events, no polling)."""
    import time

    beam.drive_low()  # type: ignore[attr-defined]
    beam.drive_high()  # type: ignore[attr-defined]
    bus, controller = daemon.bus, daemon.controller  # type: ignore[attr-defined]
    seen = bus.last_id
    while (snapshot := controller.snapshot())["busy"] or snapshot["presses"] == pressed:  # (0 in a new shuffle)
        if not bus.wait(seen, 0.05):
            time.sleep(0.005)
        seen = bus.last_id


def probe_bare_press_path(config: str) -> None:
    """The baseline: a bare gpiozero program, `button.when_pressed = motor.forward`, the same pins."""
    from gpiozero import Button, Motor
    from gpiozero.pins.mock import MockFactory

    from launcher.config import load

    pins = load(Path(config)).pins
    presses = _Presses()
    marked = _marked_pin(presses.motor_on)
    factory = MockFactory(pin_class=marked)
    button = Button(pins.button, pull_up=True, bounce_time=None, pin_factory=factory)
    motor = Motor(pins.motor_forward, pins.motor_backward, enable=pins.motor_enable, pin_factory=factory)
    button.when_pressed = motor.forward
    marked.forward = factory.pin(pins.motor_forward)
    for n in range(2 + PRESSES):
        presses.press(None, factory.pin(pins.button), count=n >= 2)
        motor.stop()
    dump(f"press-path {presses.fired}")


def probe_header_press_path(config: str) -> None:
    """The header process's press (launcher/hardware/header_board.py), armed as the daemon arms it: from the
    button's edge, on the thread that brings it (the firmware's handler), through the pass of the firmware's loop
    that starts the motor. The loop's passes are made here, one after the edge, as the process's loop makes its
    next one when the edge wakes it (its select and the read of the wake-up byte are not counted)."""
    import time

    from gpiozero.pins.mock import MockFactory

    from launcher.config import load
    from launcher.hardware import framing
    from launcher.hardware.header_board import HeaderBoard

    pins = load(Path(config)).pins
    wiring = {"button": pins.button, "beam": pins.exit_beam, "lid": pins.lid}
    wiring |= {"forward": pins.motor_forward, "backward": pins.motor_backward, "enable": pins.motor_enable}
    presses = _Presses()
    marked = _marked_pin(presses.motor_on)
    factory = MockFactory(pin_class=marked)
    board_in, commands = os.pipe()
    replies, board_out = os.pipe()
    board = HeaderBoard(pins=wiring, max_run_ms=4000, pin_factory=factory, commands=board_in, replies=board_out)
    launcher, parser = board.launcher, framing.Parser()
    marked.forward = factory.pin(pins.motor_forward)
    factory.pin(pins.lid).drive_low()  # closed
    os.set_blocking(replies, False)

    def until(cmd: str, *sent: tuple[object, ...]) -> None:
        """Send these commands, then pass the loop until the board has said `cmd`."""
        for seq, *words in sent:
            launcher.receive(framing.encode(seq, str(words[0]), tuple(words[1:])))
        while True:
            launcher.poll()
            try:
                if any(f.cmd == cmd for f in parser.feed(os.read(replies, 4096))):
                    return
            except BlockingIOError:
                time.sleep(0.001)

    until("OK", (1, "HELLO"), (2, "CONFIG", "min_rest_ms=0", "debounce_ms=0", "card_gap_ms=0", "ramp_ms=0"))
    while launcher.lid_open:  # the firmware lets the lid settle first
        launcher.poll()
        time.sleep(0.001)
    for n in range(2 + PRESSES):
        until("OK", (3 + n, "ARM", 1, 4000, 80))
        if n >= 2:
            presses.counting = True
            _marks.marks_toggle()
        factory.pin(pins.button).drive_low()  # the GPIO library's thread runs the firmware's handler
        launcher.poll()  # the loop's next pass: the motor on
        if presses.counting:
            raise RuntimeError("the armed press did not start the motor")
        factory.pin(pins.button).drive_high()
        factory.pin(pins.exit_beam).drive_low()
        factory.pin(pins.exit_beam).drive_high()
        until("DONE")
    board.close()
    for fd in (board_in, commands, replies, board_out):
        os.close(fd)
    dump(f"press-path {presses.fired}")


def probe_press_all(config: str, idle_s: str, presses: str = str(PRESSES)) -> None:
    """Every thread of the daemon: an idle window first (what it does with no press: the status light breathing,
    the streams' waits), then `presses` presses with PHONES phones following the stream, each
    card passed and the launcher free again, and the same settling time after. bench_instructions.py takes the idle
    rate off."""
    import subprocess
    import threading
    import time

    from launcher.access.book import Role

    pressing = _Presses()
    marked = _marked_pin(pressing.motor_on)
    daemon, button, beam, forward = _daemon(config, marked)
    marked.forward = forward
    threading.Thread(target=daemon.server.run, name="waitress", daemon=True).start()  # type: ignore[attr-defined]
    # Sessions opened here rather than joined: a PIN check under callgrind takes longer than a phone waits.
    cookies = [f"uno_session={daemon.access.open_session(Role.TABLE)}" for _ in range(PHONES // 4)]  # type: ignore[attr-defined]
    with subprocess.Popen(
        [sys.executable, "-c", PHONES_SCRIPT, daemon.urls[0], *cookies],  # type: ignore[attr-defined]
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as phones:
        assert phones.stdout is not None and phones.stdin is not None
        if phones.stdout.readline().strip() != "following":
            raise RuntimeError("the phones did not start following")
        for _ in range(2):
            pressed = daemon.controller.snapshot()["presses"]  # type: ignore[attr-defined]
            pressing.press(daemon, button, count=False)
            _pass_the_card(daemon, beam, pressed)
        time.sleep(float(idle_s))
        _marks.marks_zero()
        started = time.perf_counter()
        time.sleep(float(idle_s))
        dump(f"idle {time.perf_counter() - started:.6f}")
        _marks.marks_zero()
        started = time.perf_counter()
        for _ in range(int(presses)):
            pressed = daemon.controller.snapshot()["presses"]  # type: ignore[attr-defined]
            pressing.press(daemon, button, count=False)
            _pass_the_card(daemon, beam, pressed)
        time.sleep(float(idle_s))
        dump(f"presses {time.perf_counter() - started:.6f} {presses}")
        daemon.bus.end_streams()  # type: ignore[attr-defined]
        phones.stdin.close()
    daemon.close()  # type: ignore[attr-defined]


def probe_replay(config: str) -> None:
    """A phone's stream from Last-Event-ID 0 through the whole log, on the thread that serves it (Flask's test
    client runs the view in the caller's thread)."""
    import json

    from launcher.config import load
    from launcher.daemon import Daemon

    daemon = Daemon(load(Path(config)))
    last = daemon.bus.last_id - 1  # the newest, daemon.started, is this start's
    client = daemon.app.test_client()
    seen = events = 0
    _marks.marks_toggle()
    reply = client.get("/api/events", headers={"Last-Event-ID": "0"}, buffered=False)
    for chunk in reply.response:
        for frame in chunk.decode().split("\n\n"):
            if frame.startswith("id: "):
                seen = json.loads(frame.split("\ndata: ", 1)[1])["id"]
                events += 1
        if seen >= last:
            break
    _marks.marks_toggle()
    reply.close()
    daemon.close()
    dump(f"replay {events}")


def probe_bare_replay(config: str) -> None:
    """The baseline: the same events read from SQLite and written as the same frames, nothing else."""
    import json
    import sqlite3

    from launcher.config import load
    from launcher.store import STORE_FILE

    conn = sqlite3.connect(load(Path(config)).state_dir / STORE_FILE)
    events = 0
    _marks.marks_toggle()
    rows = conn.execute("SELECT id, ts, type, data FROM events ORDER BY id").fetchall()
    frames = []
    for id_, ts, type_, data in rows:
        text = json.dumps({"id": id_, "ts": ts, "type": type_, "data": json.loads(data)}, separators=(",", ":"))
        frames.append(f"id: {id_}\ndata: {text}\n\n")
        events += 1
    "".join(frames)
    _marks.marks_toggle()
    dump(f"replay {events}")


def probe_nbody(steps: str) -> None:
    """The check of the assumed rates: the Benchmarks Game's n-body, whose run on a Pi 4 is published."""
    from itertools import combinations
    from math import pi

    year, days = 365.24, 4 * pi * pi
    bodies = [
        ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0], days),
        (
            [4.84143144246472090e00, -1.16032004402742839e00, -1.03622044471123109e-01],
            [1.66007664274403694e-03 * year, 7.69901118419740425e-03 * year, -6.90460016972063023e-05 * year],
            9.54791938424326609e-04 * days,
        ),
        (
            [8.34336671824457987e00, 4.12479856412430479e00, -4.03523417114321381e-01],
            [-2.76742510726862411e-03 * year, 4.99852801234917238e-03 * year, 2.30417297573763929e-05 * year],
            2.85885980666130812e-04 * days,
        ),
        (
            [1.28943695621391310e01, -1.51111514016986312e01, -2.23307578892655734e-01],
            [2.96460137564761618e-03 * year, 2.37847173959480950e-03 * year, -2.96589568540237556e-05 * year],
            4.36624404335156298e-05 * days,
        ),
        (
            [1.53796971148509165e01, -2.59193146099879641e01, 1.79258772950371181e-01],
            [2.68067772490389322e-03 * year, 1.62824170038242295e-03 * year, -9.51592254519715870e-05 * year],
            5.15138902046611451e-05 * days,
        ),
    ]
    pairs = list(combinations(bodies, 2))
    _marks.marks_toggle()
    dt = 0.01
    for _ in range(int(steps)):
        for ([x1, y1, z1], v1, m1), ([x2, y2, z2], v2, m2) in pairs:
            dx, dy, dz = x1 - x2, y1 - y2, z1 - z2
            mag = dt * ((dx * dx + dy * dy + dz * dz) ** (-1.5))
            b1m, b2m = m1 * mag, m2 * mag
            v1[0] -= dx * b2m
            v1[1] -= dy * b2m
            v1[2] -= dz * b2m
            v2[0] += dx * b1m
            v2[1] += dy * b1m
            v2[2] += dz * b1m
        for r, [vx, vy, vz], _m in bodies:
            r[0] += dt * vx
            r[1] += dt * vy
            r[2] += dt * vz
    _marks.marks_toggle()
    dump("nbody")


if __name__ == "__main__":
    globals()["probe_" + sys.argv[2].replace("-", "_")](*sys.argv[3:])
