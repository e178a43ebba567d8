"""A launcher played for a long time: the memory its shuffles hold, with shuffles that end by themselves against one
shuffle that never ends, in the same run.

Two in-process daemons on simulated hardware timed by a virtual clock (so the fires take no real time), each on a
fresh state directory, each pressed PRESSES times through `Controller.press` (for whoever the table asks; no game):

- **bounded**: `[schedule] shuffle_presses` at its default (500): the shuffle ends every 500 presses;
- **one shuffle**: `shuffle_presses` at its highest (100,000): the shuffle never ends, as before it could end by
  itself (a table that never starts one by hand).

For each: the Python memory the process holds after the presses (tracemalloc, after a full collection), less
what it held when the daemon had started, and the time a restart takes to resume the open shuffle (it replays
the open shuffle's presses from the event log). Prints both and the ratio one-shuffle / bounded.

    .venv/bin/python benchmarks/bench_shuffle_memory.py [--presses 20000]
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from measure import parse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from launcher.config import SHUFFLE_PRESSES, Config
from launcher.daemon import Daemon
from tests.virtual_clock import VirtualClock


def held() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def run(presses: int, shuffle_presses: int) -> tuple[int, float, int]:
    """(bytes held after the presses beyond those at start, seconds to resume, the shuffle in play)."""
    with tempfile.TemporaryDirectory() as state:
        config = (
            Config()
            .replace("state", dir=state)
            .replace("web", port=0)
            .replace("dispense", min_rest_ms=0, hopper_cards=500)
            .replace("sim", cards_per_second=1000.0, card_block_ms=0.5)
            .replace("schedule", shuffle_presses=shuffle_presses)
        )
        clock = VirtualClock()
        daemon = Daemon(config, clock=clock)
        try:
            start = held()
            for _ in range(presses):
                if daemon.controller.snapshot()["hopper"]["remaining"] < 50:
                    daemon.controller.reload_hopper(500)
                assert daemon.controller.press("bench").wait(30)
            grown = held() - start
        finally:
            daemon.close()
        began = time.perf_counter()
        resumed = Daemon(config, clock=clock)
        resume_s = time.perf_counter() - began
        number = resumed.controller.snapshot()["shuffle"]["number"]
        resumed.close()
        clock.close()
        return grown, resume_s, number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--presses", type=int, default=20_000)
    args = parse(parser, presses=200)
    tracemalloc.start()
    rows = {
        "bounded": run(args.presses, SHUFFLE_PRESSES),
        "one shuffle": run(args.presses, 100_000),
    }
    print(f"{args.presses} presses | memory held after them (MB) | restart to resume (s) | shuffle in play")
    for name, (grown, resume_s, number) in rows.items():
        print(f"{name:12} | {grown / 1e6:8.2f} | {resume_s:6.3f} | {number}")
    bounded, single = rows["bounded"], rows["one shuffle"]
    memory, resume = single[0] / max(bounded[0], 1), single[1] / bounded[1]
    print(f"ratio one shuffle / bounded: memory {memory:.1f}x, resume {resume:.1f}x")


if __name__ == "__main__":
    main()
