"""SD card wear: the bytes the launcher writes for an hour of a family's game, against a bare SQLite writer.

The daemon runs in this process (`Daemon` on the simulator, a virtual clock, Flask's test client in place of the
phones) with its state directory on the disk the benchmark is started from (`--dir`, default a new temporary
directory: on this machine ext4). An hour of play, on the virtual clock:

- a press every `--press-every` seconds (8), for whoever the table asks (`POST /api/press`);
- a declaration every third press (`POST /api/attacks`, a Hit 2 by the player whose turn it is: the next owes two
  presses; a declaration the rules refuse then is skipped and not counted);
- a round scored every `--round-every` seconds (600: six rounds an hour), its open attacks carried;
- the hopper refilled with 108 cards whenever fewer than 10 are left (`POST /api/hopper`).

What is measured is the process's `write_bytes` in /proc/self/io from the end of the start (a new store made, the
PINs, the first game) to the end of the hour: the bytes this process made the kernel send to the block device (file
pages written back, which the store's syncs force at every commit), the nearest a program can see to what the card
is asked to write. The start is printed on its own line: it is made once, not an hour. `wchar` (the bytes handed to
write() and pwrite()) is printed beside it. The file system's own journal is not in either; on the Pi's ext4 it
adds its commits. Where the bytes go is read from the write-ahead log as it grows (`wal_tail.py`): the commits, the
frames of each table, the 4 KiB blocks the commits' frames touched, and the log's restarts after a checkpoint; the
rest of `write_bytes` is the checkpoints' copies into the database file and the shared-memory index.

The baseline, measured alike in the same run and the same directory: a bare SQLite writer with the store's
pragmas (WAL, `synchronous=FULL`) writing the same rows the hour left in the daemon's store (every event, the
game's state and rounds, the hopper's count), one transaction per press: each press's events with the game's
state and the hopper's count, the fewest commits that keep every press on the disk as it happens. The ratio is
daemon / baseline. The goal (docs/BENCHMARKS.md): at most 5 MB an hour.

    .venv/bin/python benchmarks/bench_wear.py [--minutes 60] [--press-every 8] [--dir DIR]

Exit code 1 when the hour writes more than 5 MB (a `--quick` run of 5 minutes always passes).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sqlite3
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from measure import exit_code, parse
from wal_tail import BLOCK, WalTail

from launcher.config import Config
from launcher.daemon import Daemon
from launcher.store import STORE_FILE
from tests.conftest import TESTS_LIMITS
from tests.virtual_clock import VirtualClock

PLAYERS = ["Ann", "Bob", "Cy", "Dee"]
GOAL_MB_PER_HOUR = 5.0
MB = 1_000_000


def io_counters() -> dict[str, int]:
    """This process's I/O counters (/proc/self/io)."""
    pairs = (line.split(":") for line in Path("/proc/self/io").read_text().splitlines())
    return {key: int(value) for key, value in pairs}


@contextlib.contextmanager
def written() -> Iterator[dict[str, int]]:
    """The counters' growth over the block, filled in at its end."""
    before, grown = io_counters(), {}
    yield grown
    after = io_counters()
    grown.update({key: after[key] - before[key] for key in ("write_bytes", "wchar")})


@dataclass
class Watch:
    """The process's writes at the start and over the play, and the store's write-ahead log as it grows."""

    store: Path
    begun: dict[str, int] = field(default_factory=io_counters)
    start: dict[str, int] = field(default_factory=dict)  # what the start wrote
    hour: dict[str, int] = field(default_factory=dict)  # what the play wrote, to the end of the daemon's stop
    tail: WalTail | None = None

    def started(self) -> None:
        self.at_play = io_counters()
        self.start = {key: self.at_play[key] - self.begun[key] for key in ("write_bytes", "wchar")}
        self.tail = WalTail(self.store.with_name(self.store.name + "-wal"))
        self.tail.read()  # the start's frames are the start's
        self.tail.pages.clear()
        self.tail.frames = self.tail.commits = self.tail.blocks = self.tail.restarts = 0

    def step(self) -> None:
        assert self.tail is not None
        self.tail.read()

    def ended(self) -> None:
        now = io_counters()
        self.hour = {key: now[key] - self.at_play[key] for key in ("write_bytes", "wchar")}


def play(state: Path, minutes: float, press_every: float, round_every: float, watch: Watch) -> dict[str, int]:
    """An hour (`minutes`) of a family's game on the daemon; the counts of what was played."""
    config = Config().replace("state", dir=str(state)).replace("web", port=0).replace("limits", **TESTS_LIMITS)
    config = config.replace("sim", cards_per_second=300.0)
    clock = VirtualClock()
    daemon = Daemon(config, clock=clock)
    played = {"presses": 0, "declarations": 0, "rounds": 0, "refills": 0}
    try:
        phone = daemon.app.test_client()
        assert daemon.new_pins is not None and daemon.new_pins.table is not None
        assert phone.post("/api/session", json={"pin": daemon.new_pins.table}).status_code == 201
        assert phone.post("/api/games", json={"players": PLAYERS, "mode": "lowest_total"}).status_code == 201
        assert phone.post("/api/hopper", json={"cards": 108}).status_code == 200
        watch.started()
        start = clock.now()
        next_round = start + round_every
        while clock.now() - start < minutes * 60:
            if played["presses"] % 3 == 2:
                turn = phone.get("/api/game").get_json()["game"]["table"]["current"]
                if phone.post("/api/attacks", json={"kind": "hit2", "by": turn}).status_code == 200:
                    played["declarations"] += 1
                watch.step()
            assert phone.post("/api/press", json={}).status_code == 200
            clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=60)
            played["presses"] += 1
            watch.step()
            if daemon.controller.snapshot()["hopper"]["remaining"] < 10:
                assert phone.post("/api/hopper", json={"cards": 108}).status_code == 200
                played["refills"] += 1
            if clock.now() >= next_round:
                winner, *others = PLAYERS[played["rounds"] % 4 :] + PLAYERS[: played["rounds"] % 4]
                body = {"winner": winner, "hands": {p: 5 + i for i, p in enumerate(others)}, "carry_open_attacks": True}
                reply = phone.post("/api/games/current/rounds", json=body)
                assert reply.status_code == 201, reply.get_json()
                played["rounds"] += 1
                next_round += round_every
            clock.advance(press_every)
            watch.step()
    finally:
        daemon.close()
        clock.close()
    watch.ended()
    return played


def baseline(source: Path, dest: Path) -> None:
    """The same rows, written by a bare SQLite writer with the store's pragmas: one transaction per press."""
    with contextlib.closing(sqlite3.connect(source)) as read:
        events = read.execute("SELECT id, ts, type, data FROM events ORDER BY id").fetchall()
        state = read.execute("SELECT state FROM games ORDER BY id DESC").fetchone()[0]
        rounds = read.execute("SELECT game, round, entry FROM game_rounds").fetchall()
    conn = sqlite3.connect(dest, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.executescript(
            "CREATE TABLE events (id INTEGER PRIMARY KEY, ts REAL, type TEXT, data TEXT);"
            "CREATE TABLE game (id INTEGER PRIMARY KEY, state TEXT);"
            "CREATE TABLE rounds (game INTEGER, round INTEGER, entry TEXT, PRIMARY KEY (game, round));"
            "CREATE TABLE hopper (id INTEGER PRIMARY KEY, loaded INTEGER, dispensed INTEGER);"
        )
        batch: list[tuple[Any, ...]] = []
        dispensed = 0
        for event in events:
            batch.append(event)
            if event[2] != "button.pressed":
                continue
            dispensed += 1
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?)", batch)
            conn.execute("INSERT OR REPLACE INTO game VALUES (1, ?)", (state,))
            conn.execute("INSERT OR REPLACE INTO hopper VALUES (1, 108, ?)", (dispensed,))
            conn.execute("COMMIT")
            batch = []
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany("INSERT INTO events VALUES (?, ?, ?, ?)", batch)
        conn.executemany("INSERT OR REPLACE INTO rounds VALUES (?, ?, ?)", rounds)
        conn.execute("COMMIT")
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="of play on the virtual clock")
    parser.add_argument("--press-every", type=float, default=8.0, help="seconds between presses")
    parser.add_argument("--round-every", type=float, default=600.0, help="seconds between scored rounds")
    parser.add_argument("--dir", type=Path, help="where the store goes (default: a new temporary directory)")
    args = parse(parser, argv, minutes=5.0)
    logging.basicConfig(level=logging.ERROR)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="bench-wear-") as where:
        state, bare = Path(where) / "state", Path(where) / "bare.sqlite3"
        watch = Watch(state / STORE_FILE)
        played = play(state, args.minutes, args.press_every, args.round_every, watch)
        assert watch.tail is not None
        tables = watch.tail.tables(state / STORE_FILE)
        with written() as base:
            baseline(state / STORE_FILE, bare)
        size = sum(p.stat().st_size for p in state.iterdir() if p.name.startswith(STORE_FILE))
    hour, tail = 60 / args.minutes, watch.tail
    print(f"played {args.minutes:g} min: " + ", ".join(f"{n} {what}" for what, n in played.items()))
    print(f"{'':36} {'write_bytes':>14} {'wchar':>14} {'MB an hour':>11}")
    print(f"{'start (new store, PINs, a game)':36} {watch.start['write_bytes']:>14,} {watch.start['wchar']:>14,}")
    for name, grown in (("daemon, the play", watch.hour), ("baseline (bare SQLite)", base)):
        per_hour = grown["write_bytes"] * hour / MB
        print(f"{name:36} {grown['write_bytes']:>14,} {grown['wchar']:>14,} {per_hour:>11.2f}")
    print(f"store at the end: {size:,} bytes")
    presses = max(1, played["presses"])
    print(
        f"the play's commits: {tail.commits} ({tail.commits / presses:.2f} a press), {tail.frames} frames "
        f"({tail.frames / max(1, tail.commits):.2f} a commit), the log restarted {tail.restarts} times (checkpoints)"
    )
    log_bytes = tail.blocks * BLOCK
    print(f"the log's 4 KiB blocks the commits wrote: {tail.blocks:,} ({log_bytes * hour / MB:.2f} MB an hour)")
    rest = watch.hour["write_bytes"] - log_bytes
    print(f"the rest (checkpoints into the database, the shared-memory index): {rest * hour / MB:.2f} MB an hour")
    print("the log's frames by table: " + ", ".join(f"{name} {n}" for name, n in tables.most_common()))
    print(f"baseline's transactions: {played['presses'] + 1} (one per press, and the rounds)")
    ratio = watch.hour["write_bytes"] / max(1, base["write_bytes"])
    print(f"ratio daemon/baseline (write_bytes): {ratio:.2f}")
    mb_hour = watch.hour["write_bytes"] * hour / MB
    met = mb_hour <= GOAL_MB_PER_HOUR
    print(f"goal: at most {GOAL_MB_PER_HOUR:g} MB an hour: {'met' if met else 'NOT met'} ({mb_hour:.2f})")
    return exit_code(met, args)


if __name__ == "__main__":
    sys.exit(main())
