"""A round scored at one table → shown at the other, over a real Mosquitto on loopback, with 20 phones at each.

Two daemons on simulated hardware (kitchen and garden) share a tournament of eight players; every phone follows its
own daemon's event stream. For each round, the time from sending POST /api/tournament/rounds at one table to each
phone receiving its `tournament.round` event: at the same table (the baseline: the daemon's own stream, measured
in the same run) and at the other (through the outbox, the broker and the other daemon). All 28 rounds of both
tables are scored, alternating, so each side is measured in both directions.

    .venv/bin/python benchmarks/bench_mqtt_relay.py [--phones 20]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from measure import exit_code, parse, percentile

from tests.conftest import RunningDaemon, join, start_daemon
from tests.mosquitto import running_broker
from tests.sse_client import SseClient
from tests.test_mqtt import mqtt_toml, table_dir
from tests.test_tournament import EIGHT, points_for
from tests.test_tournament import join as join_tournament

TABLES = ("kitchen", "garden")
TARGET_MS = 1000  # "a round scored at one table shows at the other within a second"


def received(phone: SseClient) -> dict[tuple[str, int], float]:
    return {
        (e["data"]["table"], e["data"]["number"]): at for _, e, at in phone.events if e["type"] == "tournament.round"
    }


def run(tmp: Path, phones: int) -> tuple[list[float], list[float]]:
    with running_broker(tmp / "broker") as broker:
        daemons = {name: start_daemon(table_dir(tmp, name), mqtt_toml(broker, name)) for name in TABLES}
        followers: dict[str, list[SseClient]] = {}
        try:
            status, answer = daemons["kitchen"].post("/api/tournaments", {"players": EIGHT, "tables": list(TABLES)})
            assert status == 201, answer
            id = answer["tournament"]["id"]
            join_tournament(daemons["garden"], daemons["kitchen"])  # the garden's admin types the kitchen's code
            deadline = time.monotonic() + 10
            while (daemons["garden"].get("/api/tournament")["tournament"] or {}).get("id") != id:
                assert time.monotonic() < deadline, "the garden never heard of the tournament"
                time.sleep(0.01)
            for name, daemon in daemons.items():
                followers[name] = [
                    SseClient(daemon.url, cookie=join(daemon.url, daemon.table_pin)) for _ in range(phones)
                ]
                for phone in followers[name]:
                    assert phone.connected.wait(10)
            sent: dict[tuple[str, int], float] = {}
            for number in range(1, 29):
                for name in TABLES:
                    sent[(name, number)] = score(daemons[name], name)
                    time.sleep(0.05)  # rounds a few seconds apart at a real table; here apart enough to not queue
            deadline = time.monotonic() + 15
            own: list[float] = []
            other: list[float] = []
            for name, phones_here in followers.items():
                for phone in phones_here:
                    while time.monotonic() < deadline and len(received(phone)) < len(sent):
                        time.sleep(0.01)
                    heard = received(phone)
                    assert set(heard) >= set(sent), f"a phone at the {name} missed a round"
                    for key, began in sent.items():
                        (own if key[0] == name else other).append(heard[key] - began)
            return own, other
        finally:
            for phones_here in followers.values():
                for phone in phones_here:
                    phone.close()
            for daemon in daemons.values():
                daemon.close()


def score(daemon: RunningDaemon, table: str) -> float:
    view = daemon.get("/api/tournament")["tournament"]
    (mine,) = [t for t in view["tables"] if t["table"] == table]
    body = {"number": mine["next_round"], "points": points_for(table, mine["next_round"], mine["seats"])}
    began = time.perf_counter()
    status, answer = daemon.post("/api/tournament/rounds", body)
    assert status == 201, answer
    return began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phones", type=int, default=20, help="phones following each table's stream")
    args = parse(parser, phones=2)
    with tempfile.TemporaryDirectory() as tmp:
        own, other = run(Path(tmp), args.phones)
    print(f"round scored -> tournament.round at {args.phones} phones per table, 2 x 28 rounds, milliseconds")
    print(f"{'shown at':<22}{'samples':>8}{'p50':>9}{'p99':>9}{'max':>9}")
    for name, samples in (("the same table", own), ("the other table", other)):
        p50, p99 = percentile(samples, 50) * 1e3, percentile(samples, 99) * 1e3
        print(f"{name:<22}{len(samples):>8}{p50:>9.2f}{p99:>9.2f}{max(samples) * 1e3:>9.2f}")
    p99 = percentile(other, 99) * 1e3
    print(
        f"ratio other/same: p50 {percentile(other, 50) / percentile(own, 50):.2f}x, "
        f"p99 {percentile(other, 99) / percentile(own, 99):.2f}x"
    )
    print(f"other table p99 {p99:.2f} ms (target < {TARGET_MS} ms): {'PASS' if p99 < TARGET_MS else 'FAIL'}")
    return exit_code(p99 < TARGET_MS, args)


if __name__ == "__main__":
    sys.exit(main())
