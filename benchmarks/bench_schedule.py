"""How much slower is a simulated press than drawing one random number?

Times 1,000,000 `Schedule.next_outcome()` calls per profile against a bare loop of 1,000,000 `random.random()`
calls in the same run (best of a few repeats each, taking turns). Target: at most 10 times the bare loop.

A press draws more than one value when it fires (the number of cards), pauses or may be a jackpot, so the last
column also compares with a bare loop drawing as many values as the schedule did (the bare time scaled).

    .venv/bin/python benchmarks/bench_schedule.py [--presses N] [--repeats R] [--profile NAME ...]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from unittest import mock

from launcher.schedule import PROFILES, Schedule

TARGET_RATIO = 10.0
SEED = "bench"


def timed(loop: Callable[[int], None], n: int) -> float:
    start = time.perf_counter()
    loop(n)
    return time.perf_counter() - start


def best_times(loops: list[Callable[[int], None]], n: int, repeats: int) -> list[float]:
    """The fastest run of each loop, the least disturbed by the rest of the machine; the loops take turns so
    that a busy spell slows them alike."""
    best = [math.inf] * len(loops)
    for _ in range(repeats):
        best = [min(b, timed(loop, n)) for b, loop in zip(best, loops, strict=True)]
    return best


def bare_loop(n: int) -> None:
    draw = random.Random(SEED).random
    for _ in range(n):
        draw()


def schedule_loop(profile_name: str) -> Callable[[int], None]:
    def loop(n: int) -> None:
        press = Schedule(PROFILES[profile_name], SEED).next_outcome
        for _ in range(n):
            press()

    return loop


class CountingRandom(random.Random):
    """A random.Random that counts its draws; slower, so only for a separate counting run."""

    def __init__(self, seed: object) -> None:
        self.draws = 0
        super().__init__(seed)

    def random(self) -> float:
        self.draws += 1
        return super().random()


def draws_made(profile_name: str, n: int) -> int:
    """How many random() values n presses draw, counted on a schedule built with a CountingRandom."""
    counter = CountingRandom(SEED)
    with mock.patch("random.Random", return_value=counter):
        press = Schedule(PROFILES[profile_name], SEED).next_outcome
    for _ in range(n):
        press()
    return counter.draws


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", choices=list(PROFILES), action="append", help="default: every profile")
    args = parser.parse_args(argv)
    names = args.profile or list(PROFILES)
    n = args.presses
    bare, *took = best_times([bare_loop, *(schedule_loop(name) for name in names)], n, args.repeats)
    print(f"Python {sys.version.split()[0]}, best of {args.repeats}")
    print(f"bare loop: {n:,} random.random() draws in {bare:.3f} s")
    print(f"{'profile':8}  {'presses':>10}  {'time':>7}  {'ratio':>6}  {'draws/press':>11}  {'ratio per draw':>14}")
    for name, seconds in zip(names, took, strict=True):
        per_press = draws_made(name, n) / n
        print(
            f"{name:8}  {n:>10,}  {seconds:6.3f}s  {seconds / bare:5.1f}x  {per_press:11.2f}  "
            f"{seconds / (bare * per_press):13.1f}x"
        )
    ratios = {name: seconds / bare for name, seconds in zip(names, took, strict=True)}
    met = [name for name, ratio in ratios.items() if ratio <= TARGET_RATIO]
    missed = [f"{name} ({ratio:.1f}x)" for name, ratio in ratios.items() if ratio > TARGET_RATIO]
    print(
        f"target at most {TARGET_RATIO:.0f}x against {n:,} draws: met by {', '.join(met) or 'none'}"
        + (f"; missed by {', '.join(missed)}" if missed else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
