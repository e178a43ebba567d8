"""Small helpers shared by the benchmarks: percentiles and what /proc says about a process."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python benchmarks/x.py` from a checkout
    sys.path.insert(0, str(ROOT))

TICKS = os.sysconf("SC_CLK_TCK")


def percentile(samples: list[float], p: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def peak_rss_mb(pid: int) -> float:
    return _status_mb(pid, "VmHWM")


def rss_mb(pid: int) -> float:
    """Resident memory right now (peak_rss_mb is the most it ever was)."""
    return _status_mb(pid, "VmRSS")


def _status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} in /proc status")


def threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def parse(parser: argparse.ArgumentParser, argv: list[str] | None = None, **quick: Any) -> argparse.Namespace:
    """The command line, with `--quick`: the short run CI makes of every script (tests/test_benchmarks.py), to check
    that it still works, not its figures; `quick` gives that run's defaults (an argument given still wins), and
    `exit_code()` lets it pass whatever its figures."""
    parser.add_argument("--quick", action="store_true", help="a short run that checks the script works, not figures")
    if parser.parse_known_args(argv)[0].quick:
        parser.set_defaults(**quick)
    return parser.parse_args(argv)


def exit_code(passed: bool, args: argparse.Namespace) -> int:
    """0 when the targets are met, or in a `--quick` run, whose figures are too few to judge; 1 otherwise."""
    return 0 if passed or args.quick else 1
