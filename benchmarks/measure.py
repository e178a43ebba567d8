"""Small helpers shared by the benchmarks: percentiles and what /proc says about a process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

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
