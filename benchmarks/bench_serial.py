"""Board button → motor on, through the host over a pty, against a bare reflex host in the same run.

The board is the simulator's (tests/sim_board.py: firmware/main.py on mock pins, with the simulated world) in a
process of its own, its loop on the master end of a pty, woken at once by an edge or a command, as in the header
process. It presses its own button and times the moment its motor's forward input goes on, so both ends of each
sample are on the board's clock. The host, in this
process, is either:

- bare reflex: the lightest possible host, one pyserial thread that answers `E BTN` with a FIRE line;
- SerialHardware: the real host link (reader, dispatcher and link threads; one frame in flight, heartbeats)
  whose `when_pressed` calls `dispenser.start(1)` at once, as the controller does;
- SerialHardware armed: the same link, arming the board with the next fire in advance (`dispenser.arm(1)`), as
  the controller does when the next press fires at once: the board starts the motor on its own button.

The last two run again with the host busy: a thread of pure Python work in the host's process, which holds the
interpreter for its switch interval at a time (the daemon's scoring, replays and encoding are such work).

The difference is what SerialHardware costs on top of the wire and the board's loop. A USB cable to a real
Pico adds its own latency (USB full speed polls every 1 ms), which a pty does not have.

    .venv/bin/python benchmarks/bench_serial.py [--presses 300]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import serial
from bench_press_latency import full_daemon
from measure import parse, percentile

from launcher.config import DispenseConfig
from launcher.hardware.base import FireJob
from launcher.hardware.framing import Parser, encode
from launcher.hardware.serial_link import SerialHardware
from tests.conftest import wait_until
from tests.sim_board import SimBoard

Host = Callable[[Path, list[float]], contextlib.AbstractContextManager[object]]


def board_process(link: Path, presses: int, armed: bool) -> None:
    """The board's side: plug in, wait for the host, press the button `presses` times (each once the host has
    armed the board, with `armed`); print the samples."""
    pico = SimBoard(link, cards_per_second=200, hopper=100_000)
    pico.launcher.settings["reverse_ms"] = 0  # no pull-back pulse: the next press comes sooner
    print("plugged", flush=True)
    wait_until(lambda: pico.launcher.state == "IDLE" and pico.launcher.settings["min_rest_ms"] == 0, 30, "host")
    sys.stdin.readline()  # the host says when it takes presses (its link up): no fixed wait, which load outlasts
    samples = []
    for _ in range(presses):
        if armed:
            wait_until(lambda: pico.launcher._arm is not None, 30, "the host's arm")
        pico.motor.turned_on.clear()
        at = time.monotonic()  # the host notes when it hears the press on the same clock
        pressed = time.perf_counter()
        pico.press()
        if not pico.motor.turned_on.wait(30):
            raise RuntimeError("the motor did not start within 30 s of a press")
        samples.append((at, pico.motor.on_perf - pressed))
        pico.release()
        wait_until(lambda: pico.launcher.state == "IDLE" and pico.launcher._btn_armed, 30, "the next press")
    print(json.dumps(samples), flush=True)
    sys.stdin.readline()  # stay plugged in until the host has let go
    pico.close()


@contextlib.contextmanager
def bare_reflex(link: Path, heard: list[float]) -> Iterator[object]:
    port = serial.Serial(str(link), 115200, timeout=0.05, exclusive=True)
    stop = threading.Event()

    def host() -> None:
        parser, seq = Parser(), 2
        port.write(encode(1, "HELLO") + encode(2, "CONFIG", ("min_rest_ms=0",)))
        while not stop.is_set():
            for frame in parser.feed(port.read(port.in_waiting or 1)):
                if frame.cmd == "BTN":
                    heard.append(time.monotonic())
                    seq += 1
                    port.write(encode(seq, "FIRE", (1, 4000, 80)))

    thread = threading.Thread(target=host)
    thread.start()
    try:
        yield None
    finally:
        stop.set()
        thread.join()
        port.close()


@contextlib.contextmanager
def serial_hardware(link: Path, heard: list[float]) -> Iterator[object]:
    with SerialHardware(port=str(link), dispense=DispenseConfig(jam_ms=500, min_rest_ms=0)) as host:
        jobs: list[FireJob] = []
        wait_until(lambda: host.describe()["link"] == "up", 30, "link up")

        def pressed() -> None:
            heard.append(time.monotonic())
            if jobs:  # a busy host may not have read the end of the fire before yet
                jobs[-1].wait()
            jobs.append(host.dispenser.start(1))

        host.inputs.when_pressed = pressed
        yield host


@contextlib.contextmanager
def armed_serial_hardware(link: Path, heard: list[float]) -> Iterator[object]:
    with SerialHardware(port=str(link), dispense=DispenseConfig(jam_ms=500, min_rest_ms=0)) as host:
        dispenser = host.dispenser

        def fired(job: FireJob) -> None:  # on the dispatcher: the board fired on its own; arm it for the next
            heard.append(time.monotonic())
            job.wait()
            dispenser.arm(1)

        dispenser.when_reflex = fired
        wait_until(lambda: host.describe()["link"] == "up", 30, "link up")
        dispenser.arm(1)
        yield host


@contextlib.contextmanager
def busy(host: Host) -> Iterator[Host]:
    """`host` with a thread of pure Python work beside it in this process."""
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            sum(i * i for i in range(10_000))

    thread = threading.Thread(target=work, name="load")
    thread.start()
    try:
        yield host
    finally:
        stop.set()
        thread.join()


def run(host: Host, presses: int, *, armed: bool = False) -> list[tuple[float, float]]:
    """(press -> host has it, press -> motor on) in seconds, one pair per press."""
    with tempfile.TemporaryDirectory() as tmp:
        link = Path(tmp) / "usb-Raspberry_Pi_Pico-if00"
        board = subprocess.Popen(
            [sys.executable, __file__, "--board", str(link), "--presses", str(presses), *["--armed"] * armed],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert board.stdin is not None and board.stdout is not None
        board.stdout.readline()  # plugged in
        heard: list[float] = []
        with host(link, heard):
            board.stdin.write("go\n")  # the host is ready: the board may press
            board.stdin.flush()
            out = board.stdout.readline()
            # The board's last motor may start before the host has heard that press (armed, it hears of it after
            # the fire): wait for it, or a loaded machine leaves the last sample without its host time.
            wait_until(lambda: len(heard) >= presses, 30, "the host to hear every press")
        board.communicate("bye\n", timeout=30)
        if board.returncode or not out:
            raise RuntimeError(f"the board process failed ({board.returncode})")
    return [(h - at, total) for (at, total), h in zip(json.loads(out), heard, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=300)
    parser.add_argument("--board", type=Path, help=argparse.SUPPRESS)  # internal: be the board process
    parser.add_argument("--armed", action="store_true", help=argparse.SUPPRESS)  # internal: the board is armed
    args = parse(parser, presses=5)
    if args.board:
        board_process(args.board, args.presses, args.armed)
        return 0
    run(serial_hardware, min(20, args.presses))  # warm-up
    runs = {"bare reflex": run(bare_reflex, args.presses), "SerialHardware": run(serial_hardware, args.presses)}
    runs["armed"] = run(armed_serial_hardware, args.presses, armed=True)
    with busy(serial_hardware) as loaded:
        runs["host busy"] = run(loaded, args.presses)
    with busy(armed_serial_hardware) as loaded:
        runs["armed, busy"] = run(loaded, args.presses, armed=True)
    print(f"board press -> motor on over a pty, {args.presses} presses each, milliseconds")
    print(f"{'host':<16}{'p50':>8}{'p99':>8}{'mean':>8}{'max':>8}   {'p50 press->host':>16}")
    figures = {}
    for name, samples in runs.items():
        to_host = [s[0] * 1000 for s in samples]
        total = [s[1] * 1000 for s in samples]
        figures[name] = (percentile(total, 50), percentile(total, 99))
        print(
            f"{name:<16}{figures[name][0]:>8.2f}{figures[name][1]:>8.2f}{statistics.mean(total):>8.2f}"
            f"{max(total):>8.2f}   {percentile(to_host, 50):>16.2f}"
        )
    (b50, b99), (s50, s99) = figures["bare reflex"], figures["SerialHardware"]
    print(f"ratio SerialHardware/bare: p50 {s50 / b50:.2f}x, p99 {s99 / b99:.2f}x")
    print(f"SerialHardware overhead: p50 {s50 - b50:+.2f} ms, p99 {s99 - b99:+.2f} ms")
    (a50, a99), l99, al99 = figures["armed"], figures["host busy"][1], figures["armed, busy"][1]
    print(f"ratio armed/SerialHardware: p50 {a50 / s50:.2f}x, p99 {a99 / s99:.2f}x")
    print(f"host busy: through the host p99 {l99:.2f} ms, armed p99 {al99:.2f} ms ({al99 / l99:.2f}x)")

    # The GPIO header in the same run: the full daemon (controller, schedule, events) on mock pins.
    with tempfile.TemporaryDirectory() as tmp:
        gpio = [s * 1000 for s in full_daemon(args.presses, Path(tmp) / "daemon")]
    g50, g99 = percentile(gpio, 50), percentile(gpio, 99)
    print(f"GPIO header, full daemon on mock pins: p50 {g50:.3f} ms, p99 {g99:.3f} ms")
    print(f"ratio SerialHardware/GPIO: p50 {s50 / g50:.1f}x, p99 {s99 / g99:.1f}x (the pty and the board's loop)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
