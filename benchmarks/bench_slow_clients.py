"""Slow clients: a new phone opening the page and joining, and a joined phone pressing, while strangers hold
connections that never finish a request; and how soon the daemon is back once they stop.

Each attack runs against a fresh daemon (fast simulated hardware, default `[web]`, loopback): none; 2,000 slow
connections from one address; 1,000 from 250 addresses. For `--seconds` the attacker keeps its connections: each
sends the start of a request (headers never finished, a body never finished, or nothing), then a byte more every
second, and any the daemon closed is opened again. Meanwhile, every `--every-s`, a new phone from an address of its
own opens the page (`GET /`) and joins (`POST /api/session`, the table PIN), and the phone joined before the attack
presses (`POST /api/press`, 200 or 409 `busy`) and reads the state. Then the attacker closes everything: the time
until a new phone's `GET /api/state` is answered, and until the daemon holds no more sockets than before.

Targets (docs/RELIABILITY.md, "Threat model: connections"): every new phone joined within 2 s, every joined phone's
call answered within 2 s, the daemon answering within 1 s of the attack's end.

    .venv/bin/python benchmarks/bench_slow_clients.py [--seconds 20] [--every-s 0.5]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import resource
import socket
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Event as EventType
from pathlib import Path

from measure import exit_code, parse, percentile

from tests.conftest import FAST_SIM_TOML, RunningDaemon, start_daemon
from tests.test_hostile_clients import SLOW_STARTS, phone_call, slow_connection

ATTACKS = {
    "none": [],
    "2,000 from one address": ["127.0.5.1"] * 2000,
    "1,000 from 250 addresses": [f"127.0.6.{1 + n % 250}" for n in range(1000)],
}
JOIN_WITHIN_S = 2.0
CALL_WITHIN_S = 2.0
RECOVER_WITHIN_S = 1.0
SOCKETS_BACK_WITHIN_S = 30.0  # how long to wait for the daemon's sockets to be as before, at most


def attack(url: str, sources: list[str], stop: EventType, opened: Synchronized[int]) -> None:
    """In a process of its own (the measuring one must not wait for it): a slow connection from each source,
    trickling, opened again whenever the daemon closed it."""
    held: list[socket.socket | None] = [None] * len(sources)
    while not stop.is_set():
        for n, source in enumerate(sources):
            sock = held[n]
            if sock is not None:
                try:
                    sock.send(b"a")
                    continue
                except OSError:  # closed by the daemon: open another
                    sock.close()
            held[n] = slow_connection(url, source, SLOW_STARTS[n % len(SLOW_STARTS)])
            opened.value += 1
        stop.wait(1.0)
    for sock in held:
        if sock is not None:
            sock.close()


@dataclass
class Run:
    joins: list[float] = field(default_factory=list)  # a new phone: the page and the join, seconds
    calls: list[float] = field(default_factory=list)  # the joined phone: a press or a state read, seconds
    most_sockets: int = 0
    opened: int = 0  # connections the attacker opened, again and again
    answered_after_s: float = 0.0
    sockets_back_s: float = 0.0


def sockets(daemon: RunningDaemon) -> int:
    """The daemon's open sockets: its connections, its listener and a few of its own."""
    count = 0
    for fd in Path(f"/proc/{daemon.process.pid}/fd").iterdir():
        with contextlib.suppress(FileNotFoundError):  # closed since it was listed
            count += os.readlink(fd).startswith("socket:")
    return count


def joined_phone_calls(daemon: RunningDaemon) -> list[float]:
    """The joined phone presses and reads the state: the seconds each took."""
    began = time.monotonic()
    status, answer = daemon.post("/api/press", {})
    pressed = time.monotonic()
    assert status in (200, 409), answer  # 409: busy with the press before
    status, answer = daemon.request("GET", "/api/state")
    assert status == 200, answer
    return [pressed - began, time.monotonic() - pressed]


def measure(sources: list[str], seconds: float, every_s: float) -> Run:
    run = Run()
    with tempfile.TemporaryDirectory() as tmp:
        daemon = start_daemon(Path(tmp), FAST_SIM_TOML)
        try:
            join = json.dumps({"pin": daemon.table_pin}).encode()
            assert phone_call(daemon.url, "127.0.8.1", "POST", "/api/session", join) == 201
            joined_phone_calls(daemon)  # the daemon's first join and press, before the attack
            before = sockets(daemon)
            stop, opened = multiprocessing.Event(), multiprocessing.Value("i", 0)
            attacker = multiprocessing.Process(target=attack, args=(daemon.url, sources, stop, opened))
            attacker.start()
            ends = time.monotonic() + seconds
            phone = 0
            while time.monotonic() < ends:
                phone += 1
                source = f"127.0.{9 + phone // 250}.{1 + phone % 250}"
                began = time.monotonic()
                assert phone_call(daemon.url, source, "GET", "/") == 200
                assert phone_call(daemon.url, source, "POST", "/api/session", join) == 201
                run.joins.append(time.monotonic() - began)
                run.calls.extend(joined_phone_calls(daemon))
                run.most_sockets = max(run.most_sockets, sockets(daemon))
                time.sleep(every_s)
            stop.set()
            attacker.join()
            run.opened = opened.value
            ended = time.monotonic()
            assert phone_call(daemon.url, "127.0.8.2", "GET", "/api/state") == 200
            run.answered_after_s = time.monotonic() - ended
            while sockets(daemon) > before and time.monotonic() - ended < SOCKETS_BACK_WITHIN_S:
                time.sleep(0.01)
            run.sockets_back_s = time.monotonic() - ended
        finally:
            daemon.close()
    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long each attack lasts")
    parser.add_argument("--every-s", type=float, default=0.5, help="between one new phone and the next")
    args = parse(parser, seconds=2.0)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4096)), hard))  # the attacker's connections

    runs = {name: measure(sources, args.seconds, args.every_s) for name, sources in ATTACKS.items()}
    print(f"each attack {args.seconds:g} s, a new phone every {args.every_s:g} s; seconds")
    print(
        f"{'attack':<26}{'opened':>8}{'phones':>8}{'join p50':>10}{'join max':>10}{'call p50':>10}{'call max':>10}"
        f"{'sockets max':>13}{'answered':>10}{'sockets back':>14}"
    )
    for name, run in runs.items():
        print(
            f"{name:<26}{run.opened:>8}{len(run.joins):>8}{percentile(run.joins, 50):>10.3f}{max(run.joins):>10.3f}"
            f"{percentile(run.calls, 50):>10.3f}{max(run.calls):>10.3f}{run.most_sockets:>13}"
            f"{run.answered_after_s:>10.3f}{run.sockets_back_s:>14.3f}"
        )
    attacked = [run for name, run in runs.items() if name != "none"]
    worst = max(max(run.joins) for run in attacked)
    passed = (
        worst < JOIN_WITHIN_S
        and max(max(run.calls) for run in attacked) < CALL_WITHIN_S
        and max(run.answered_after_s for run in attacked) < RECOVER_WITHIN_S
    )
    print(
        f"targets: joined within {JOIN_WITHIN_S:g} s, calls within {CALL_WITHIN_S:g} s, answered within "
        f"{RECOVER_WITHIN_S:g} s of the end: {'PASS' if passed else 'FAIL'}"
    )
    print(f"ratio slowest join under attack / slowest with none: {worst / max(runs['none'].joins):.2f}x")
    return exit_code(passed, args)


if __name__ == "__main__":
    raise SystemExit(main())
