"""Cost per press against the length of the game: instructions of one press on every thread of the daemon, with
20 phones following the stream, in a game of 10 scored rounds and in one of 500.

Each game is made as bench_instructions.py's replay makes its game (4 players, lowest total, a target no round
reaches, the rounds scored over the API), then the daemon is started on that store under callgrind and pressed as
bench_instructions.py's "one press, every thread, 20 phones" is (instruction_probe.py's press-all: the big button
of the simulated header, each card passed, the idle rate taken off). A press is attributed to whoever the table
asks, so it changes the game and the game is saved: what a press costs with a long game is what this shows.

    .venv/bin/python benchmarks/bench_press_cost.py [--rounds 10 500]

Target: a press at the larger game within 1.5x of a press at the smaller. Needs valgrind and a C compiler, as
bench_instructions.py does.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench_instructions import IDLE_S, PREPARE_REPLAY, build_marks, every_thread_press, native, write_config
from measure import exit_code, parse

TARGET = 1.5  # a press at the larger game against one at the smaller


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", nargs=2, type=int, default=[10, 500], metavar=("SMALL", "LARGE"))
    parser.add_argument("--presses", type=int, default=0, help="measured presses (default: the probe's)")
    parser.add_argument("--idle-s", default=IDLE_S, help="real seconds of each idle and settling window")
    args = parse(parser, rounds=[1, 5], presses=2, idle_s="0.5")
    if shutil.which("valgrind") is None:
        raise SystemExit("bench_press_cost: valgrind is not installed (apt-get install valgrind)")
    per_press: dict[int, int] = {}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        marks = build_marks(tmp)
        for rounds in args.rounds:
            config = write_config(tmp / f"game-{rounds}")
            native(tmp, "-c", PREPARE_REPLAY, str(config), str(rounds))  # the game, its PINs and bytecode made
            per_press[rounds] = every_thread_press(tmp, marks, config, args.idle_s, args.presses)
            print(f"{rounds} rounds: {per_press[rounds]:,} instructions per press", flush=True)
    small, large = args.rounds
    ratio = per_press[large] / per_press[small]
    print(f"\n{'game':<12}{'instructions per press':>24}")
    for rounds, count in per_press.items():
        print(f"{f'{rounds} rounds':<12}{count:>24,}")
    print(f"ratio {large}/{small} rounds: {ratio:.2f}x (target <= {TARGET}x)")
    print("PASS" if ratio <= TARGET else "FAIL")
    return exit_code(ratio <= TARGET, args)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
