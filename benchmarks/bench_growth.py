"""History growth: what a long game costs against a short one, through the real daemon as a table uses it.

Two runs of the daemon (`python -m launcher run --sim --port 0`), each on a fresh state directory, each with one
game of 4 players scored in winner-collects: SMALL (10 scored rounds, 1,000 presses in all) and LARGE (500 rounds,
100,000 presses). Each run, over HTTP as a phone would, with the admin PIN the first start prints:

1. starts the game (`POST /api/games`, winner collects, a target no round reaches before the last one);
2. presses (`POST /api/press`, body `{}`: for whoever the table asks, that is whose turn it is), presses/rounds
   presses per round, one at a time from one client on one kept-alive connection (a press is refused as `busy`
   while another is concluded, even a miss, so more clients would only add refused presses to the log; a refused
   one is retried and counted); the hopper is refilled (`POST /api/hopper`) when 400 cards have come out;
3. scores each round (`POST /api/games/current/rounds`: a winner, rotating, and the other three hands as card
   counts); near the end it undoes the second-to-last round and scores it again (`round.undone`), corrects round
   0 to another hand of the same points (`round.edited`), and the last round reaches the target
   (`game.finished`), so every event that carries the game is there at its largest;
4. times the last round's presses (the press cost at the end of the history: the game's whole state is saved on
   every press), then 50 GETs each of `/api/state` and `/api/game`, and reads VmRSS and VmHWM of the daemon;
5. stops it (SIGTERM), reads the store `launcher.sqlite3` read-only with `sqlite3`: the largest event's JSON bytes,
   and the largest of round.scored, round.undone, round.edited, game.finished, attack.progress, the game's saved
   state; the store's size (the file plus `-wal`);
6. starts it again on the same state directory: the time until it prints its URL and until `/api/state` answers;
7. replays the whole log as a phone that reconnects with `Last-Event-ID: 0` (`GET /api/events`) until the last id:
   the time and the bytes; VmHWM after it.

The config is FAST_SIM_TOML's (tests/conftest.py) with `min_rest_ms = 0`, no soft start or reverse pulse, and a
custom profile of hazard 0.05 (about one press in 19 fires, one card each). The table shows small, large and
large/small. The machine's load moves the times; the sizes do not.

    .venv/bin/python benchmarks/bench_growth.py [--rounds 10 500] [--presses 1000 100000]

`--rounds SMALL LARGE` and `--presses SMALL LARGE` set both sizes, e.g. `--rounds 10 20 --presses 1000 2000` for a
quick look. Exit code 0.

The default run is long: each press answers once the game's state is on the disk (`synchronous=FULL`), and presses
cannot overlap. On this 2-core machine `--rounds 10 500 --presses 1000 5000` took 50 s (code of 8bbd05e, load 2),
so the default should take roughly 10 to 15 minutes on a quiet machine (an estimate); the one default run recorded
took 114 minutes beside a test series, on code whose press still rebuilt the game from its rounds
(docs/BENCHMARKS.md, History growth).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from measure import ROOT, parse, peak_rss_mb, percentile, rss_mb

from tests.conftest import TESTS_LIMITS_TOML

PLAYERS = ["Ann", "Bob", "Cy", "Dee"]
# FAST_SIM_TOML's values (tests/conftest.py), with no rest after a fire, no soft start or reverse pulse, and a
# schedule that mostly misses: hazard 0.05 until the 49th miss in a row, one card a fire.
CONFIG = (
    """
[dispense]
min_rest_ms = 0
jam_ms = 400
hopper_cards = 500
ramp_ms = 0
reverse_ms = 0

[sim]
cards_per_second = 250.0
card_block_ms = 2.0

[web]
heartbeat_s = 0.5

[schedule]
profile = "custom"

[schedule.custom]
hazard = [{hazard}]
max_fires_in_row = 2
card_weights = [1.0]
jackpot_probability = 0.0
pause_probability = 0.0
"""
    + TESTS_LIMITS_TOML
)  # the phones all join from this machine
HOPPER = 500
REFILL_AFTER = 400  # cards out since the last refill
TYPES = ("round.scored", "round.undone", "round.edited", "game.finished", "attack.progress")
GETS = 50


# --- the daemon and its API ---------------------------------------------------------------------------------------


class Daemon:
    """`python -m launcher run --sim --port 0 --config CONFIG` in a subprocess; its output read on a thread."""

    def __init__(self, config: Path, cwd: Path) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "launcher", "run", "--sim", "--port", "0", "--config", str(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(ROOT)},
            cwd=cwd,
        )
        self.output: list[str] = []
        self.url = ""
        self.url_at = 0.0  # perf_counter() when the URL line came
        self._url_seen = threading.Event()
        self._pins_seen = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()
        if not self._url_seen.wait(120) or not self.url:
            self.kill()
            raise RuntimeError("the daemon did not print its URL:\n" + "".join(self.output))

    def _pump(self) -> None:  # keep reading, or a full pipe would block the daemon
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                self.output.append(line)
                match = re.search(r"Open (http://\S+?)/? (?:on a phone|in a browser)", line)
                if match and not self.url:
                    self.url, self.url_at = match.group(1), time.perf_counter()
                    self._url_seen.set()
                if line.startswith(("Admin PIN", "Players join", "The PINs made up")):
                    self._pins_seen.set()
        except ValueError:
            pass
        finally:
            self._url_seen.set()
            self._pins_seen.set()

    @property
    def pid(self) -> int:
        return self.process.pid

    def admin_pin(self) -> str:
        self._pins_seen.wait(30)
        text = "".join(self.output)
        where = re.search(r"first start are in (\S+) ", text)  # to a pipe, the PINs go to this file
        found = re.search(r"Admin PIN: (\d+)", Path(where.group(1)).read_text() if where else text)
        if not found:
            raise RuntimeError("the first start did not show the admin PIN:\n" + "".join(self.output))
        return found.group(1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        if self.process.wait(60) != 0:
            raise RuntimeError(f"the daemon exited with {self.process.returncode}:\n" + "".join(self.output[-30:]))

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


class Api:
    """A phone's calls on one kept-alive connection (reopened if the daemon closes it)."""

    def __init__(self, url: str, cookie: str | None = None) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.cookie = cookie
        self._conn: http.client.HTTPConnection | None = None

    def raw(self, method: str, path: str, body: Any = None) -> tuple[int, bytes, http.client.HTTPResponse]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if self.cookie is not None:
            headers["Cookie"] = self.cookie
        data = None if body is None else json.dumps(body).encode()
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
            try:
                self._conn.request(method, path, body=data, headers=headers)
                response = self._conn.getresponse()
                payload = response.read()
            except (ConnectionError, http.client.HTTPException):
                self._conn.close()
                self._conn = None
                if attempt == 2:
                    raise
                continue
            if response.getheader("Connection", "").lower() == "close":
                self._conn.close()
                self._conn = None
            return response.status, payload, response
        raise AssertionError("unreachable")

    def call(self, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        status, payload, _ = self.raw(method, path, body)
        if status != expect:
            raise RuntimeError(f"{method} {path}: {status} {payload[:500]!r}")
        return json.loads(payload)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def join(url: str, pin: str) -> str:
    """Join with a PIN; the session cookie as `name=value`."""
    api = Api(url)
    status, payload, response = api.raw("POST", "/api/session", {"pin": pin})
    api.close()
    if status != 201:
        raise RuntimeError(f"join: {status} {payload!r}")
    return response.getheader("Set-Cookie", "").split(";", 1)[0]


def wait_for_state(url: str, timeout: float = 60) -> float:
    """perf_counter() when /api/state first answers 200."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        api = Api(url)
        try:
            status, _, _ = api.raw("GET", "/api/state")
            if status == 200:
                return time.perf_counter()
        except OSError:
            pass
        finally:
            api.close()
        time.sleep(0.005)
    raise RuntimeError("/api/state did not answer")


# --- the game ----------------------------------------------------------------------------------------------------


def round_body(n: int) -> dict[str, Any]:
    """Round n: the winner rotates; each other hand a 7 and 0 to 2 Hit 2s (7, 27 or 47 points)."""
    winner = PLAYERS[n % 4]
    return {"winner": winner, "hands": {p: {"7": 1, "hit_2": n % 3} for p in PLAYERS if p != winner}}


def points(body: dict[str, Any]) -> int:
    """The points the winner collects (UNO Attack: a 7 is 7, a Hit 2 20, a 3 and a 4 are 3 and 4)."""
    values = {"7": 7, "hit_2": 20, "3": 3, "4": 4}
    return sum(
        hand if isinstance(hand, int) else sum(values[k] * c for k, c in hand.items())
        for hand in body["hands"].values()
    )


def plan(rounds: int) -> tuple[int, dict[str, Any]]:
    """The target and the last round's body: nobody reaches the target before the last round, which reaches it."""
    totals = dict.fromkeys(PLAYERS, 0)
    for n in range(rounds - 1):
        body = round_body(n)
        totals[body["winner"]] += points(body)
    target = max(totals.values()) + 1
    winner = PLAYERS[(rounds - 1) % 4]
    needed = target - totals[winner]
    losers = [p for p in PLAYERS if p != winner]
    share = [
        needed // 3 + (1 if i < needed % 3 else 0) for i in range(3)
    ]  # typed totals, the card calculator's other way
    if target > 100_000 or max(share) > 1000:
        raise SystemExit(f"{rounds} rounds: a target of {target} is beyond what a game takes (100,000)")
    return target, {"winner": winner, "hands": dict(zip(losers, share, strict=True))}


# --- one run -------------------------------------------------------------------------------------------------------


@dataclass
class Run:
    rounds: int
    presses: int
    figures: dict[str, float] = field(default_factory=dict)
    busy: int = 0
    largest_type: str = ""
    load_s: float = 0.0


def file_bytes(*paths: Path) -> int:
    return sum(p.stat().st_size for p in paths if p.exists())


def press(api: Api, run: Run) -> dict[str, Any]:
    """One press for whoever the table asks; a refused (busy) press is retried."""
    while True:
        status, payload, _ = api.raw("POST", "/api/press", {})
        if status == 200:
            return json.loads(payload)  # type: ignore[no-any-return]
        answer = json.loads(payload)
        if status == 409 and answer["error"]["code"] == "busy":
            run.busy += 1
            time.sleep(0.002)
            continue
        raise RuntimeError(f"press: {status} {answer}")


def timed_gets(api: Api, path: str) -> tuple[list[float], int]:
    samples, size = [], 0
    for _ in range(GETS):
        begun = time.perf_counter()
        status, payload, _ = api.raw("GET", path)
        samples.append(time.perf_counter() - begun)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status}")
        size = len(payload)
    return samples, size


def replay(url: str, cookie: str, last_id: int) -> tuple[float, int, int]:
    """A phone reconnecting with Last-Event-ID: 0 reads until `last_id`: (seconds, bytes, events)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=300)
    marker = f"\nid: {last_id}\n".encode()
    begun = time.perf_counter()
    conn.request("GET", "/api/events", headers={"Accept": "text/event-stream", "Cookie": cookie, "Last-Event-ID": "0"})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"GET /api/events: {response.status}")
    total, events, tail = 0, 0, b""
    while True:
        chunk = response.read1(1 << 16)
        if not chunk:
            raise RuntimeError(f"the stream ended before id {last_id}")
        total += len(chunk)
        events += (tail[-4:] + chunk).count(b"\nid: ")  # 4 bytes back: a line split between chunks, counted once
        window = tail + chunk
        if marker in window:
            elapsed = time.perf_counter() - begun
            break
        tail = window[-len(marker) :]
    sock = conn.sock
    if sock is not None:
        sock.shutdown(2)
    conn.close()
    return elapsed, total, events


def largest_type(db: Path) -> str:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT type FROM events ORDER BY length(CAST(data AS BLOB)) DESC LIMIT 1").fetchone()
        return str(row[0])
    finally:
        conn.close()


def read_store(db: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        size = "length(CAST(data AS BLOB))"
        n, total, largest = conn.execute(f"SELECT count(*), sum({size}), max({size}) FROM events").fetchone()
        figures["events"] = n
        figures["events JSON, all (bytes)"] = total
        figures["largest event (bytes)"] = largest
        for t in TYPES:
            row = conn.execute(f"SELECT count(*), max({size}) FROM events WHERE type = ?", (t,)).fetchone()
            figures[f"largest {t} (bytes)"] = row[1] or 0
            figures[f"{t} events"] = row[0]
        figures["saved game state (bytes)"] = conn.execute(
            "SELECT max(length(CAST(state AS BLOB))) FROM games"
        ).fetchone()[0]
        figures["last id"] = conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
    finally:
        conn.close()
    return figures


def one_run(rounds: int, presses: int, where: Path, label: str) -> Run:
    run = Run(rounds, presses)
    f = run.figures
    state = where / "state"
    config = where / "config.toml"
    hazard = ", ".join(["0.05"] * 49 + ["1.0"])
    config.write_text(CONFIG.replace("{hazard}", hazard) + f'\n[state]\ndir = "{state}"\n', encoding="utf-8")
    db, wal = state / "launcher.sqlite3", state / "launcher.sqlite3-wal"
    target, last_round = plan(rounds)

    daemon = Daemon(config, where)
    try:
        cookie = join(daemon.url, daemon.admin_pin())
        api = Api(daemon.url, cookie)
        api.call("POST", "/api/games", {"players": PLAYERS, "mode": "winner_collects", "target": target}, expect=201)
        out_since_refill, press_times = 0, []
        begun = time.perf_counter()
        for n in range(rounds):
            last = n == rounds - 1
            for _ in range(presses // rounds + (1 if n < presses % rounds else 0)):
                t0 = time.perf_counter()
                answer = press(api, run)
                if last:
                    press_times.append(time.perf_counter() - t0)
                out_since_refill += answer["dispensed"]
                if out_since_refill >= REFILL_AFTER:
                    api.call("POST", "/api/hopper", {"cards": HOPPER})
                    out_since_refill = 0
            if last:
                api.call("POST", "/api/games/current/rounds", last_round, expect=201)
                continue
            api.call("POST", "/api/games/current/rounds", round_body(n), expect=201)
            if n == rounds - 2:  # undone and scored again: the same totals
                api.call("DELETE", "/api/games/current/rounds/last")
                api.call("POST", "/api/games/current/rounds", round_body(n), expect=201)
                # round 0 corrected: a 3 and a 4 for each 7, the same points
                body = round_body(0)
                body["hands"] = {p: {"3": 1, "4": 1, "hit_2": h["hit_2"]} for p, h in body["hands"].items()}
                api.call("PUT", "/api/games/current/rounds/0", body)
            if (n + 1) % max(1, rounds // 10) == 0:
                elapsed = time.perf_counter() - begun
                done = (n + 1) * presses // rounds
                print(f"  {label}: round {n + 1}/{rounds}, {done} presses, {elapsed:.0f} s", file=sys.stderr)
        run.load_s = time.perf_counter() - begun
        game = api.call("GET", "/api/game")["game"]
        if not game["scoreboard"]["over"] or len(game["scoreboard"]["rounds"]) != rounds:
            raise RuntimeError(f"the game should be over after {rounds} rounds: {game['scoreboard']['over']}")
        f["press, last round, median (ms)"] = percentile(press_times, 50) * 1e3
        f["press, last round, p95 (ms)"] = percentile(press_times, 95) * 1e3
        for path in ("/api/state", "/api/game"):
            samples, size = timed_gets(api, path)
            f[f"GET {path} median (ms)"] = percentile(samples, 50) * 1e3
            f[f"GET {path} p95 (ms)"] = percentile(samples, 95) * 1e3
            f[f"GET {path} body (bytes)"] = size
        f["VmRSS after the load (MB)"] = rss_mb(daemon.pid)
        f["VmHWM after the load (MB)"] = peak_rss_mb(daemon.pid)
        f["store while running: db + wal (bytes)"] = file_bytes(db, wal)
        api.close()
        daemon.stop()
    finally:
        daemon.kill()

    f["store stopped: db + wal (bytes)"] = file_bytes(db, wal)
    f["store bytes per press"] = file_bytes(db, wal) / presses
    f.update(read_store(db))
    run.largest_type = largest_type(db)

    try:
        restart(config, where, cookie, f)
    except Exception as e:  # the figures of the load are kept; those of the restart are missing, and say why
        print(f"  {label}: the restart or the replay failed: {e!r}", file=sys.stderr)
    return run


def restart(config: Path, where: Path, cookie: str, f: dict[str, float]) -> None:
    """Start again on the same state, time it, and replay the log from id 0."""
    again = Daemon(config, where)
    try:
        f["restart: to the URL (s)"] = again.url_at - again.started
        f["restart: to /api/state (s)"] = wait_for_state(again.url) - again.started
        last_id = Api(again.url).call("GET", "/api/state")["last_event_id"]
        seconds, size, events = replay(again.url, cookie, last_id)
        f["replay from id 0 (s)"] = seconds
        f["replay from id 0 (bytes)"] = size
        f["replay events"] = events
        f["VmHWM after the replay (MB)"] = peak_rss_mb(again.pid)
        again.stop()
    finally:
        again.kill()


# --- the table ------------------------------------------------------------------------------------------------------

ROWS = [
    ("largest event (bytes)", "largest event (bytes)", "{:,.0f}"),
    *[(f"largest {t} (bytes)", f"largest {t} (bytes)", "{:,.0f}") for t in TYPES],
    ("saved game state, written on every press (bytes)", "saved game state (bytes)", "{:,.0f}"),
    ("events in the log", "events", "{:,.0f}"),
    ("events' JSON, all (bytes)", "events JSON, all (bytes)", "{:,.0f}"),
    ("store stopped: db + wal (bytes)", "store stopped: db + wal (bytes)", "{:,.0f}"),
    ("store while running: db + wal (bytes)", "store while running: db + wal (bytes)", "{:,.0f}"),
    ("store bytes per press", "store bytes per press", "{:,.0f}"),
    ("VmRSS after the load (MB)", "VmRSS after the load (MB)", "{:.1f}"),
    ("VmHWM after the load (MB)", "VmHWM after the load (MB)", "{:.1f}"),
    ("restart: to the URL (s)", "restart: to the URL (s)", "{:.2f}"),
    ("restart: to /api/state answering (s)", "restart: to /api/state (s)", "{:.2f}"),
    ("GET /api/state median (ms)", "GET /api/state median (ms)", "{:.2f}"),
    ("GET /api/state p95 (ms)", "GET /api/state p95 (ms)", "{:.2f}"),
    ("GET /api/game median (ms)", "GET /api/game median (ms)", "{:.2f}"),
    ("GET /api/game p95 (ms)", "GET /api/game p95 (ms)", "{:.2f}"),
    ("GET /api/game body (bytes)", "GET /api/game body (bytes)", "{:,.0f}"),
    ("replay from id 0 to the last id (s)", "replay from id 0 (s)", "{:.2f}"),
    ("replay from id 0 (bytes)", "replay from id 0 (bytes)", "{:,.0f}"),
    ("VmHWM after the replay (MB)", "VmHWM after the replay (MB)", "{:.1f}"),
    ("press, last round, median (ms)", "press, last round, median (ms)", "{:.2f}"),
    ("press, last round, p95 (ms)", "press, last round, p95 (ms)", "{:.2f}"),
]


def ratio_text(small: float | None, large: float | None) -> str:
    if small is None or large is None or (not small and not large):
        return "—"
    return f"{large / small:.2f}×" if small else "∞"


def table(small: Run, large: Run) -> str:
    def size(run: Run) -> str:
        return f"{run.rounds} rounds, {run.presses:,} presses"

    lines = [
        f"| metric | small ({size(small)}) | large ({size(large)}) | ratio large/small |",
        "|---|---|---|---|",
    ]
    for title, key, fmt in ROWS:
        a, b = small.figures.get(key), large.figures.get(key)
        ratio = ratio_text(a, b)
        shown = ["failed" if v is None else fmt.format(v) for v in (a, b)]
        lines.append(f"| {title} | {shown[0]} | {shown[1]} | {ratio} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, nargs=2, default=[10, 500], metavar=("SMALL", "LARGE"))
    parser.add_argument("--presses", type=int, nargs=2, default=[1000, 100_000], metavar=("SMALL", "LARGE"))
    args = parse(parser, rounds=[2, 3], presses=[4, 6])
    if min(args.rounds) < 2 or any(p < r for p, r in zip(args.presses, args.rounds, strict=True)):
        parser.error("at least 2 rounds, and at least a press a round")
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-growth-") as tmp:
        for label, rounds, presses in zip(("small", "large"), args.rounds, args.presses, strict=True):
            where = Path(tmp) / label
            where.mkdir()
            runs.append(one_run(rounds, presses, where, label))
    small, large = runs
    print(f"History growth: one game of 4 players, winner collects; load {os.getloadavg()[0]:.2f} at the end")
    for label, run in (("small", small), ("large", large)):
        print(
            f"{label}: load {run.load_s:.0f} s ({run.load_s / run.presses * 1e3:.1f} ms a press with its share of"
            f" scoring), {run.busy} presses refused as busy and retried, largest event: {run.largest_type}"
        )
    print(table(small, large))
    shown = ("press, last round, median (ms)", "GET /api/game median (ms)")
    print(
        "ratio large/small: "
        + ", ".join(f"{key} {ratio_text(small.figures.get(key), large.figures.get(key))}" for key in shown)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
