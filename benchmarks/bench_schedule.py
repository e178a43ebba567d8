"""How much slower is a simulated press than drawing one random number?

Times 1,000,000 `Schedule.next_outcome()` calls per profile, keyed as a shuffle is
(launcher.fairplay.fairness.shuffle_key),
against two bare loops of 1,000,000 draws in the same run (best of a few repeats each, taking turns):

- the schedule's own source, the HMAC-SHA256 counter stream (`launcher.fairplay.schedule.draw_stream`). Target: a
press at
  most 10 times one of its draws: the schedule's own work stays small beside the randomness it needs;
- `random.random()`, the Mersenne Twister the schedule drew from before the stream (records of the first format
  still replay on it), for comparison with the figures of earlier versions. A cryptographic draw costs several
  Mersenne Twister draws; that ratio is shown, not held to a target.

A press draws more than one value when it fires (the number of cards), pauses or may be a jackpot, so the last
column also compares with a bare loop drawing as many stream values as the schedule did (the bare time scaled).

    .venv/bin/python benchmarks/bench_schedule.py [--presses N] [--repeats R] [--profile NAME ...]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable

from measure import parse

from launcher.fairplay.fairness import shuffle_key
from launcher.fairplay.schedule import PROFILES, Schedule, draw_stream

TARGET_RATIO = 10.0
SEED = "bench"
KEY = shuffle_key(SEED, [])


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


def bare_random(n: int) -> None:
    draw = random.Random(SEED).random
    for _ in range(n):
        draw()


def bare_stream(n: int) -> None:
    draw = draw_stream(KEY)
    for _ in range(n):
        draw()


def schedule_loop(profile_name: str) -> Callable[[int], None]:
    def loop(n: int) -> None:
        press = Schedule(PROFILES[profile_name], KEY).next_outcome
        for _ in range(n):
            press()

    return loop


def draws_made(profile_name: str, n: int) -> int:
    """How many values n presses draw, counted on a schedule whose stream is wrapped by a counter (slower, so only
    for a separate counting run)."""
    stream, drawn = draw_stream(KEY), [0]

    def counting() -> float:
        drawn[0] += 1
        return stream()

    press = Schedule(PROFILES[profile_name], KEY, draw=counting).next_outcome
    for _ in range(n):
        press()
    return drawn[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", choices=list(PROFILES), action="append", help="default: every profile")
    args = parse(parser, argv, presses=1_000, repeats=1)
    names = args.profile or list(PROFILES)
    n = args.presses
    loops = [bare_stream, bare_random, *(schedule_loop(name) for name in names)]
    stream, mersenne, *took = best_times(loops, n, args.repeats)
    print(f"Python {sys.version.split()[0]}, best of {args.repeats}")
    print(f"bare loop: {n:,} stream draws in {stream:.3f} s ({stream / n * 1e9:.0f} ns each)")
    print(f"bare loop: {n:,} random.random() draws in {mersenne:.3f} s ({mersenne / n * 1e9:.0f} ns each)")
    print(
        f"{'profile':8}  {'presses':>10}  {'time':>7}  {'per press':>9}  {'ratio':>6}  {'draws/press':>11}  "
        f"{'ratio per draw':>14}  {'vs random()':>11}"
    )
    for name, seconds in zip(names, took, strict=True):
        per_press = draws_made(name, n) / n
        print(
            f"{name:8}  {n:>10,}  {seconds:6.3f}s  {seconds / n * 1e6:6.2f} µs  {seconds / stream:5.1f}x  "
            f"{per_press:11.2f}  {seconds / (stream * per_press):13.1f}x  {seconds / mersenne:10.1f}x"
        )
    ratios = {name: seconds / stream for name, seconds in zip(names, took, strict=True)}
    met = [name for name, ratio in ratios.items() if ratio <= TARGET_RATIO]
    missed = [f"{name} ({ratio:.1f}x)" for name, ratio in ratios.items() if ratio > TARGET_RATIO]
    print(
        f"target at most {TARGET_RATIO:.0f}x against {n:,} stream draws: met by {', '.join(met) or 'none'}"
        + (f"; missed by {', '.join(missed)}" if missed else "")
    )
    print("ratio to stream draws: " + ", ".join(f"{name} {ratio:.1f}x" for name, ratio in ratios.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
