"""Idle cost: the daemon with 10 SSE clients connected for 30 s, against a bare interpreter in the same run.

CPU: share of one core used by the process over the window (from /proc). Memory: peak RSS (VmHWM).
Baseline: a Python process that imports the same libraries and sleeps, the floor any daemon of ours pays.
The daemon runs with its default 15 s heartbeat, as on the Pi.

    .venv/bin/python benchmarks/bench_idle.py [--clients 10] [--seconds 30]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import cpu_seconds, exit_code, parse, peak_rss_mb, threads

from tests.conftest import FAST_SIM_TOML, join, start_daemon
from tests.sse_client import SseClient

BASELINE = (
    "import flask, waitress, gpiozero, gpiozero.pins.mock, serial, qrcode, sqlite3, time; "
    "print('ready', flush=True); time.sleep(3600)"
)


def watch(pid: int, seconds: float) -> tuple[float, float]:
    """CPU share of one core over `seconds`, and peak RSS in MB at the end."""
    cpu_before, began = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    share = (cpu_seconds(pid) - cpu_before) / (time.monotonic() - began)
    return share, peak_rss_mb(pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30)
    args = parse(parser, clients=2, seconds=1.0)

    baseline = subprocess.Popen([sys.executable, "-c", BASELINE], stdout=subprocess.PIPE, text=True)
    assert baseline.stdout is not None and baseline.stdout.readline().strip() == "ready"

    with tempfile.TemporaryDirectory() as tmp:
        idle_config = FAST_SIM_TOML.replace("heartbeat_s = 0.5", "heartbeat_s = 15.0")
        daemon = start_daemon(Path(tmp), idle_config)
        clients = [SseClient(daemon.url, cookie=join(daemon.url, daemon.table_pin)) for _ in range(args.clients)]
        for client in clients:
            assert client.connected.wait(10)
        time.sleep(1)  # let start-up settle
        threads_before = threads(daemon.process.pid)
        base_cpu_before = cpu_seconds(baseline.pid)  # both measured over the same window
        ours_cpu, ours_rss = watch(daemon.process.pid, args.seconds)
        base_cpu = (cpu_seconds(baseline.pid) - base_cpu_before) / args.seconds
        base_rss = peak_rss_mb(baseline.pid)
        threads_after = threads(daemon.process.pid)
        alive = daemon.get("/api/state")["connection"]["sse_clients"]
        for client in clients:
            client.close()
        daemon.stop()
        assert daemon.process.stdout is not None
        daemon.process.stdout.close()
    baseline.kill()
    baseline.wait()
    assert baseline.stdout is not None
    baseline.stdout.close()

    print(f"idle for {args.seconds:g} s with {args.clients} SSE clients connected ({alive} seen by the daemon)")
    print(f"{'process':<22}{'CPU % of a core':>17}{'peak RSS MB':>13}")
    print(f"{'bare interpreter':<22}{base_cpu * 100:>17.2f}{base_rss:>13.1f}")
    print(f"{'daemon':<22}{ours_cpu * 100:>17.2f}{ours_rss:>13.1f}")
    print(f"ratio daemon/bare: RSS {ours_rss / base_rss:.2f}x; threads {threads_before} -> {threads_after}")
    ok = ours_cpu < 0.02 and ours_rss < 80
    print(f"targets CPU < 2 % and RSS < 80 MB: {'PASS' if ok else 'FAIL'}")
    return exit_code(ok, args)


if __name__ == "__main__":
    sys.exit(main())
