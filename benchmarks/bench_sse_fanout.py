"""Press → event received by 20 SSE clients on loopback: the daemon against a bare stdlib SSE server.

For each press, the time from sending POST /api/press to each client receiving that press's `button.pressed`
event. Both servers run as subprocesses on simulated hardware / no hardware, measured by the same clients.

    .venv/bin/python benchmarks/bench_sse_fanout.py [--clients 20] [--presses 200]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from measure import ROOT, exit_code, parse, percentile

from tests.conftest import Joined, RunningDaemon, join, start_daemon
from tests.sse_client import SseClient


def start_baseline() -> RunningDaemon:
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks" / "baseline_sse_server.py")], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    url = process.stdout.readline().split()[1].rstrip("/")
    output: list[str] = []
    reader = threading.Thread(target=output.extend, args=(process.stdout,), daemon=True)  # as start_daemon's does
    reader.start()
    # It checks no session; the presses carry a cookie all the same, so both servers get the same requests.
    unchecked = Joined(table_pin="", admin_pin="", table_cookie="uno_session=-", admin_cookie="uno_session=-")
    return RunningDaemon(process=process, url=url, state_dir=Path(), output=output, joined=unchecked, reader=reader)


def phone_cookie(server: RunningDaemon) -> str:
    """A session of its own for each following phone, as each phone joins on the page (the bare server checks none)."""
    return join(server.url, server.table_pin) if server.table_pin else server.joined.table_cookie


def pressed_at(client: SseClient) -> dict[int, float]:
    """When the client received each press's `button.pressed` event."""
    return {e["data"]["press"]: at for _, e, at in client.events if e["type"] == "button.pressed"}


def measure(server: RunningDaemon, clients: int, presses: int) -> list[float]:
    followers = [SseClient(server.url, cookie=phone_cookie(server)) for _ in range(clients)]
    for follower in followers:
        assert follower.connected.wait(10)
    sent: dict[int, float] = {}
    for _ in range(presses):
        began = time.perf_counter()
        status, reply = server.post("/api/press", {})
        assert status == 200, reply
        sent[reply["press"]] = began
    deadline = time.monotonic() + 10
    samples: list[float] = []
    for follower in followers:
        while time.monotonic() < deadline and len(pressed_at(follower)) < presses:
            time.sleep(0.01)
        follower.close()
        received = pressed_at(follower)
        assert set(received) == set(sent), "a client missed an event"
        samples += [received[p] - sent[p] for p in sent]
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--presses", type=int, default=200)
    args = parse(parser, clients=2, presses=5)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, start in (("bare stdlib SSE", start_baseline), ("daemon", lambda: start_daemon(Path(tmp)))):
            server = start()
            try:
                results[name] = measure(server, args.clients, args.presses)
            finally:
                server.close()
    print(f"press -> event at each of {args.clients} SSE clients, {args.presses} presses, milliseconds")
    print(f"{'server':<17}{'p50':>9}{'p99':>9}")
    for name, samples in results.items():
        print(f"{name:<17}{percentile(samples, 50) * 1e3:>9.2f}{percentile(samples, 99) * 1e3:>9.2f}")
    base, ours = results["bare stdlib SSE"], results["daemon"]
    p99 = percentile(ours, 99) * 1e3
    print(
        f"ratio daemon/bare: p50 {percentile(ours, 50) / percentile(base, 50):.2f}x, "
        f"p99 {percentile(ours, 99) / percentile(base, 99):.2f}x"
    )
    print(f"daemon p99 {p99:.2f} ms (target < 50 ms): {'PASS' if p99 < 50 else 'FAIL'}")
    return exit_code(p99 < 50, args)


if __name__ == "__main__":
    sys.exit(main())
