"""Instruction counts of the launcher's paths: the figure that the machine's other work does not move.

Each measurement runs `benchmarks/instruction_probe.py` under `valgrind --tool=callgrind`, which counts the
instructions the program executes whatever else the machine does (wall-clock benchmarks here move by tens of per
cent with the load; these counts move by well under one). Each is printed with its baseline from the same run:

- press -> motor on, on the pressing thread: the daemon against a bare gpiozero `when_pressed = motor.forward`;
- all the work of one press on every thread (outcome, events, SQLite, cues, 20 phones' streams), the idle rate of
  the same daemon over the same time taken off: against the bare program's press;
- start-up to READY (the daemon listens and answers from then on), a later start and the first one (PINs made up),
  and `uno-launcher --help`: against an interpreter that starts and exits;
- the event stream replayed from id 0 through a 300-round game's log: against reading the same rows and writing
  the same frames with nothing else.

Then an estimate of each on a Pi, from an assumed rate of instructions per nanosecond (printed with its reasons and
checked against a published CPython run on a Pi 4). Needs valgrind and a C compiler (for callgrind's client
requests); perf's hardware counters would be quicker, but virtual machines often lack them (`perf stat -e
instructions true` says "not supported" here).

    .venv/bin/python benchmarks/bench_instructions.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_press_under_load import CONFIG
from measure import ROOT, exit_code, parse

PROBE = ROOT / "benchmarks" / "instruction_probe.py"
MARKS = ROOT / "benchmarks" / "callgrind_marks.c"
IDLE_S = "3"  # real seconds of each idle and settling window under callgrind (about 50 times slower than native)
ROUNDS = 300  # the replayed game, as in bench_press_under_load's busy thread

# Instructions per nanosecond assumed for CPython, counted on x86-64 (AArch64 executes within about 10 % as many
# for the same C code; no correction is made). A Pi 4's Cortex-A72 at 1.5 GHz is out of order, three wide, and
# sustains about one instruction per cycle on an interpreter's branchy code; a Pi Zero 2 W's Cortex-A53 at 1 GHz is
# in order, two wide, with a smaller cache and slower memory, and sustains about half that.
PI_RATES = {"Pi Zero 2 W (Cortex-A53, 1 GHz)": 0.5, "Pi 4 (Cortex-A72, 1.5 GHz)": 1.5}
# The check: a published n-body run (5,000,000 steps of the Benchmarks Game's program, CPython of Raspberry Pi OS
# in 2020) took 158.3 s on a Pi 4 at 1.5 GHz. The same steps are counted here on this CPython; an older CPython
# executes more instructions per step, so the rate this gives is a floor.
NBODY_PI4_S, NBODY_STEPS = 158.3, 5_000_000
START_GOAL_S = 3.0  # start-up to READY on a Pi Zero 2 W: enough for a start once a game night

PREPARE_REPLAY = """
import sys
from pathlib import Path
from launcher.config import load
from launcher.daemon import Daemon
daemon = Daemon(load(Path(sys.argv[1])))
client = daemon.app.test_client()
assert client.post("/api/session", json={"pin": daemon.new_pins.table}).status_code == 201
players = ["Ann", "Bob", "Cy", "Dee"]
reply = client.post("/api/games", json={"players": players, "mode": "lowest_total", "target": 100000})
assert reply.status_code == 201, reply.get_json()
for n in range(int(sys.argv[2])):
    winner = players[n % 4]
    hands = {p: {"7": 1, "hit_2": n % 3} for p in players if p != winner}
    reply = client.post("/api/games/current/rounds", json={"winner": winner, "hands": hands})
    assert reply.status_code in (200, 201), reply.get_json()
daemon.close()
"""


def build_marks(into: Path) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise SystemExit("bench_instructions: no C compiler (cc) for callgrind's client requests")
    lib = into / "marks.so"
    made = subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", lib, MARKS], capture_output=True, text=True)
    if made.returncode:
        raise SystemExit(f"bench_instructions: cannot build {MARKS.name} (valgrind's headers?):\n{made.stderr}")
    return lib


def probe_env(tmp: Path) -> dict[str, str]:
    """Bytecode written once and read after, as `pip install` leaves it on a Pi, in a folder of this run's own (not
    beside the sources, where other work may be editing them)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}


def counted(
    tmp: Path, marks: Path, probe: str, *args: str, from_start: bool = False, main_thread: bool = False
) -> dict[str, list[str]]:
    """Run one probe under callgrind: {label: [instructions, the label's other words...]} for each mark. With
    `main_thread`, a mark's instructions are the main thread's, and "all" holds every thread's to the exit."""
    out = tmp / f"cg-{probe}"
    for old in tmp.glob(f"cg-{probe}.*"):
        old.unlink()
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--collect-atstart={'yes' if from_start else 'no'}",
        f"--separate-threads={'yes' if main_thread else 'no'}",
        f"--callgrind-out-file={out}.%p",
        sys.executable,
        str(PROBE),
        str(marks),
        probe,
        *args,
    ]
    ran = subprocess.run(
        command, cwd=ROOT, env=probe_env(tmp), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if ran.returncode:
        raise RuntimeError(f"probe {probe} failed ({ran.returncode}):\n{ran.stderr[-3000:]}")
    marks_found: dict[str, list[str]] = {}
    if main_thread:
        marks_found["all"] = [re.findall(r"Collected : (\d+)", ran.stderr)[-1]]
    for dump in tmp.glob(f"cg-{probe}.*-01" if main_thread else f"cg-{probe}.*[0-9]"):
        text = dump.read_text(errors="replace")
        label = re.search(r"^desc: Trigger: Client Request: (.*)$", text, re.M)
        total = re.search(r"^totals: (\d+)", text, re.M)
        if label and total:
            words = label.group(1).split()
            marks_found[words[0]] = [total.group(1), *words[1:]]
    return marks_found


def write_config(directory: Path) -> Path:
    directory.mkdir()
    path = directory / "config.toml"
    path.write_text(CONFIG + f'\n[state]\ndir = "{directory / "state"}"\n[hardware]\nbackend = "sim"\n', "utf-8")
    return path


def native(tmp: Path, *args: str) -> None:
    """Run without valgrind, to prepare a measurement (and compile the bytecode it will read)."""
    subprocess.run([sys.executable, *args], cwd=ROOT, env=probe_env(tmp), check=True, stdout=subprocess.DEVNULL)


def every_thread_press(tmp: Path, marks: Path, config: Path, idle_s: str = IDLE_S, presses: int = 0) -> int:
    """Instructions of one press on every thread of the daemon of `config`, 20 phones following (the probe's
    press-all; `presses` 0: the probe's number): the window of presses less the idle rate over as long."""
    found = counted(tmp, marks, "press-all", str(config), idle_s, *([str(presses)] if presses else []), from_start=True)
    idle, idle_window = int(found["idle"][0]), float(found["idle"][1])
    window, window_s, pressed = int(found["presses"][0]), float(found["presses"][1]), int(found["presses"][2])
    print(
        f"(every thread: {window:,} instructions over {window_s:.1f} s for {pressed} presses, idle "
        f"{idle / idle_window:,.0f} per second taken off)"
    )
    return round((window - idle * window_s / idle_window) / pressed)


def nbody_instructions_per_step(tmp: Path, marks: Path) -> float:
    steps = (1000, 3000)
    found = [int(counted(tmp, marks, "nbody", str(n))["nbody"][0]) for n in steps]
    return (found[1] - found[0]) / (steps[1] - steps[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = ("help", "start", "press", "replay", "check")
    parser.add_argument("--only", nargs="*", choices=names, default=list(names), help="measure only these")
    args = parse(parser, only=["help"])
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_instructions: valgrind is not installed (apt-get install valgrind)")
    rows: list[tuple[str, int, str, int]] = []  # (what, instructions, baseline's name, baseline's instructions)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        marks = build_marks(tmp)
        native(tmp, str(PROBE), str(marks), "start", str(write_config(tmp / "warm")))  # the bytecode compiled
        if {"help", "start"} & set(args.only):
            bare = int(counted(tmp, marks, "bare", from_start=True, main_thread=True)["bare"][0])
        if "help" in args.only:
            helped = int(counted(tmp, marks, "help", from_start=True, main_thread=True)["help"][0])
            rows.append(("uno-launcher --help", helped, "bare interpreter", bare))
            print(f"{rows[-1][0]}: {helped:,}", flush=True)
        if "start" in args.only:
            first = counted(tmp, marks, "start", str(write_config(tmp / "first")), from_start=True, main_thread=True)
            later = write_config(tmp / "later")
            native(tmp, "-m", "launcher", "new-pins", "--new-store", "--config", str(later))
            native(tmp, str(PROBE), str(marks), "start", str(later))  # its store made and upgraded once
            again = counted(tmp, marks, "start", str(later), from_start=True, main_thread=True)
            rows += [
                ("start-up to READY, a later start", int(again["ready"][0]), "bare interpreter", bare),
                ("start-up to READY, the first start", int(first["ready"][0]), "bare interpreter", bare),
                ("  the same, every thread (PIN hashing)", int(first["all"][0]), "bare interpreter", bare),
            ]
            for row in rows[-3:]:
                print(f"{row[0]}: {row[1]:,}", flush=True)
        if "press" in args.only:
            native(tmp, str(PROBE), str(marks), "header-press-path", str(write_config(tmp / "warm-press")))
            found = counted(tmp, marks, "bare-press-path", str(write_config(tmp / "bare-press")))["press-path"]
            bare_press = int(found[0]) // int(found[1])
            found = counted(tmp, marks, "header-press-path", str(write_config(tmp / "header")))["press-path"]
            header_press = int(found[0]) // int(found[1])
            every = write_config(tmp / "press-all")
            # PINs set before, so that no first start's hashing runs on its thread during the windows
            native(tmp, "-m", "launcher", "new-pins", "--new-store", "--config", str(every))
            every_thread = every_thread_press(tmp, marks, every)
            rows += [
                ("press -> motor on, header process", header_press, "bare gpiozero press", bare_press),
                ("one press, every thread, 20 phones", every_thread, "bare gpiozero press", bare_press),
            ]
            print(
                f"header process {header_press:,}, bare {bare_press:,}, every thread {every_thread:,}",
                flush=True,
            )
        if "replay" in args.only:
            config = write_config(tmp / "replay")
            native(tmp, "-c", PREPARE_REPLAY, str(config), str(ROUNDS))
            found = counted(tmp, marks, "bare-replay", str(config))["replay"]
            bare_replay, events = int(found[0]), int(found[1])
            found = counted(tmp, marks, "replay", str(config))["replay"]
            rows.append(
                (f"replay from id 0 ({found[1]} events)", int(found[0]), f"bare replay ({events})", bare_replay)
            )
            print(f"{rows[-1][0]}: {rows[-1][1]:,}", flush=True)
        per_step = nbody_instructions_per_step(tmp, marks) if "check" in args.only else None

    print(f"\n{'measured':<44}{'instructions':>15}  {'baseline':<22}{'instructions':>14}{'ratio':>9}")
    for what, count, base_name, base in rows:
        print(f"{what:<44}{count:>15,}  {base_name:<22}{base:>14,}{count / base:>8.2f}x")
    print("ratio to baseline: " + "; ".join(f"{what.strip()} {count / base:.2f}x" for what, count, _, base in rows))
    print("\nEstimates (instructions / assumed rate; single core, no waiting for disk or network):")
    print(f"{'':<44}" + "".join(f"{name.split(' (')[0]:>16}" for name in PI_RATES))
    for what, count, _, _ in rows:
        print(f"{what:<44}" + "".join(f"{_shown(count / rate / 1e9):>16}" for rate in PI_RATES.values()))
    print("Assumed rates: " + ", ".join(f"{name} {rate} instructions/ns" for name, rate in PI_RATES.items()))
    if per_step is not None:
        pi4 = per_step * NBODY_STEPS / (NBODY_PI4_S * 1e9)
        print(
            f"Check: n-body costs {per_step:,.0f} instructions a step here; the published Pi 4 run "
            f"({NBODY_STEPS:,} steps in {NBODY_PI4_S} s) gives at least {pi4:.2f} instructions/ns on a Pi 4"
        )
    starts = [count for what, count, _, _ in rows if what.startswith("start-up")]
    if starts:
        zero = max(starts) / PI_RATES["Pi Zero 2 W (Cortex-A53, 1 GHz)"] / 1e9
        print(f"Start-up to READY on a Pi Zero 2 W, estimated: {zero:.2f} s (goal < {START_GOAL_S:.0f} s)")
        print("PASS" if zero < START_GOAL_S else "FAIL")
        return exit_code(zero < START_GOAL_S, args)
    return 0


def _shown(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
