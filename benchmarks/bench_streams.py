"""Many event streams: the daemon against the project's stdlib baseline (a thread per stream), in one run.

Each server on loopback, one after the other, its streams opened in steps (20, 100, 200, 500 by default) and kept
open from one step to the next; at each step: its threads and RSS, the time from sending POST /api/press to the
press's `button.pressed` event arriving at every stream, over all (stream, press) pairs, and its CPU time per
press. Presses go one at a time: the next is sent once every stream has the last one. The CPU per press grows with
the streams; its slope (least squares over the steps) is what a stream costs a press. The daemon's next press is
sent once its launcher is free again (a stream has the outcome, and the rest is over), as a player presses: a press
sent while the last still fires waits for it (`PRESS_WAIT_S`), which would time the fire, not the streams.

The daemon runs on fast simulated hardware with its default `[web] threads`, its streams joined as phones are (a
session for each four streams, StreamGate.PER_SESSION). The baseline is benchmarks/baseline_sse_server.py (no Flask,
no gate, no heartbeat, one event per press); the one-thread server (benchmarks/one_thread_sse_server.py, stdlib
`selectors`) is measured at the largest step for reference. The client reads every stream from one thread with
`selectors` too, so it is not hundreds of threads itself. Targets (issue 48): p99 ≤ 1.5x the baseline's at 20, 100
and 200 streams, the CPU slope ≤ 1.5x the baseline's, and 500 streams held.

It is a measurement, not a test: exit 0, or 1 if a stream failed to connect or missed an event.

    .venv/bin/python benchmarks/bench_streams.py [--steps 20 100 200 500] [--presses 100]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import selectors
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from bench_sse_fanout import start_baseline
from measure import ROOT, cpu_seconds, parse, percentile, rss_mb, threads

from launcher.access.book import MOST_SESSIONS
from launcher.config import WebConfig
from tests.conftest import FAST_SIM_TOML, http_json, join, start_daemon
from webui.stream_gate import StreamGate

BATCH = 64  # streams connecting at once: below the listen backlog (128 for the daemon and the one-thread server)
CONNECT_S = 60.0  # for all the streams of one step to connect
EVENT_WAIT_S = 10.0  # for a press's event to reach every stream
SETTLE_S = 1.0  # after the streams connect, before the presses
REST_S = 0.05  # after a press's outcome: the launcher's rest (min_rest_ms = 10 in FAST_SIM_TOML) and its events
REFERENCE = ROOT / "benchmarks" / "one_thread_sse_server.py"
ONE_THREAD = "one thread (selectors)"
THREADED = "stdlib thread per stream"


class Failure(Exception):
    """A stream that could not connect, or missed an event."""


@dataclass(eq=False)
class Stream:
    sock: socket.socket
    raw: bytes = b""  # received, not yet decoded (a head or a chunk in parts)
    head_done: bool = False
    chunked: bool = False
    chunk_left: int = 0  # payload bytes of the current chunk still to come
    skip: int = 0  # bytes of the CRLF after a chunk still to skip
    body: bytes = b""  # the event stream, not yet split into events
    connected: bool = False  # its first comment arrived
    ended: bool = False
    pressed: dict[int, float] = field(default_factory=dict)  # press -> when its `button.pressed` arrived
    # press -> seconds from the event's publishing (its `ts`, the wall clock) to its arrival: the fan-out alone
    fanned: dict[int, float] = field(default_factory=dict)
    events: int = 0  # events of any type received


class Streams:
    """GET /api/events streams, all read by one thread with `selectors`."""

    def __init__(self, url: str, batch: int = BATCH) -> None:
        parts = urlsplit(url)
        self._batch = batch
        self._address = (parts.hostname or "127.0.0.1", parts.port or 80)
        self._host = parts.netloc
        self._selector = selectors.DefaultSelector()
        self.all: list[Stream] = []
        self._to_open: deque[str] = deque()  # cookies of streams still to open
        self._connected = 0
        self._failures: list[str] = []
        self._counts: Counter[int] = Counter()  # press -> streams that have its event
        self._ended: set[int] = set()  # presses whose outcome (launcher.fired, missed, …) a stream received
        self._cond = threading.Condition()
        self._stopping = False
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="streams", daemon=True)
        self._thread.start()

    def connect(self, cookies: list[str]) -> None:
        """Open one more stream for each cookie; returns once all of them are connected."""
        with self._cond:
            target = len(self.all) + len(self._to_open) + len(cookies)
            self._to_open.extend(cookies)
            done = self._cond.wait_for(
                lambda: self._connected >= target or self._failures or self._error, timeout=CONNECT_S
            )
        if self._error is not None:
            raise Failure(f"the client's reader failed: {self._error!r}")
        if self._failures:
            raise Failure(f"{len(self._failures)} stream(s) failed to connect; the first: {self._failures[0]}")
        if not done:
            raise Failure(f"only {self._connected} of {target} streams connected within {CONNECT_S:g} s")

    def wait_outcome(self, press: int) -> bool:
        """Whether a stream has the press's outcome within EVENT_WAIT_S: the launcher is free once it has rested."""
        with self._cond:
            return self._cond.wait_for(lambda: press in self._ended, timeout=EVENT_WAIT_S)

    def wait_press(self, press: int) -> bool:
        """Whether every open stream has the press's event within EVENT_WAIT_S."""
        with self._cond:
            return self._cond.wait_for(lambda: self._counts[press] >= len(self.all), timeout=EVENT_WAIT_S)

    def close(self) -> None:
        self._stopping = True
        self._thread.join(5)
        for stream in self.all:
            stream.sock.close()
        self._selector.close()

    def _run(self) -> None:
        try:
            while not self._stopping:
                self._open_some()
                for key, _ in self._selector.select(0.05):
                    self._read(key.data)
        except BaseException as e:  # reported to the main thread, which fails the run
            self._error = e
            with self._cond:
                self._cond.notify_all()

    def _open_some(self) -> None:
        while self._to_open and len(self.all) - self._connected - len(self._failures) < self._batch:
            cookie = self._to_open.popleft()
            sock = socket.create_connection(self._address, timeout=10)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            request = f"GET /api/events HTTP/1.1\r\nHost: {self._host}\r\nAccept: text/event-stream\r\n"
            sock.sendall(f"{request}Cookie: {cookie}\r\n\r\n".encode())
            sock.setblocking(False)
            stream = Stream(sock)
            self.all.append(stream)
            self._selector.register(sock, selectors.EVENT_READ, stream)

    def _read(self, stream: Stream) -> None:
        try:
            data = stream.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        at, wall = time.perf_counter(), time.time()
        if not data:
            self._end(stream, "closed by the server before its first comment")
            return
        if not stream.head_done:
            stream.raw += data
            end = stream.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head, data, stream.raw = stream.raw[:end], stream.raw[end + 4 :], b""
            status = head.split(b" ", 2)[1]
            if status != b"200":
                self._end(stream, (head.split(b"\r\n", 1)[0] + b" " + data[:300]).decode("latin-1"))
                return
            stream.head_done = True
            stream.chunked = b"transfer-encoding: chunked" in head.lower()
        stream.body += self._dechunk(stream, data) if stream.chunked else data
        self._events(stream, at, wall)

    @staticmethod
    def _dechunk(stream: Stream, data: bytes) -> bytes:
        raw, pos, out = stream.raw + data, 0, []
        while pos < len(raw):
            if stream.skip:
                step = min(stream.skip, len(raw) - pos)
                stream.skip -= step
            elif stream.chunk_left:
                step = min(stream.chunk_left, len(raw) - pos)
                out.append(raw[pos : pos + step])
                stream.chunk_left -= step
                stream.skip = 0 if stream.chunk_left else 2
            else:
                eol = raw.find(b"\r\n", pos)
                if eol < 0:
                    break
                stream.chunk_left = int(raw[pos:eol].split(b";")[0], 16)
                step = eol + 2 - pos
                if not stream.chunk_left:  # the last chunk: the stream ended
                    pos = len(raw)
                    break
            pos += step
        stream.raw = raw[pos:]
        return b"".join(out)

    def _events(self, stream: Stream, at: float, wall: float) -> None:
        start, body, complete = 0, stream.body, []
        while (end := body.find(b"\n\n", start)) >= 0:
            block, start = body[start:end], end + 2
            if block.startswith(b":"):
                if not stream.connected:
                    stream.connected = True
                    with self._cond:
                        self._connected += 1
                        self._cond.notify_all()
                continue
            stream.events += 1
            if b'"button.pressed"' in block:  # parse only what is measured: the client's time counts too
                event = _event(block)
                press = event["data"]["press"]
                stream.pressed[press] = at
                if "ts" in event:  # the daemon's (the baseline's events carry no time)
                    stream.fanned[press] = wall - event["ts"]
                self._counts[press] += 1
                complete.append(press)
            elif b'"type":"launcher.' in block and not self._ended.issuperset(stream.pressed):
                ended = _event(block)["data"].get("press")
                if isinstance(ended, int):
                    self._ended.add(ended)
                    complete.append(ended)
        stream.body = body[start:]
        if complete:
            with self._cond:
                self._cond.notify_all()

    def _end(self, stream: Stream, why: str) -> None:
        self._selector.unregister(stream.sock)
        stream.ended = True
        if not stream.connected:
            with self._cond:
                self._failures.append(why)
                self._cond.notify_all()


def _event(block: bytes) -> dict:
    """The event in `block`."""
    line = next(line for line in block.split(b"\n") if line.startswith(b"data: "))
    event: dict = json.loads(line[6:])
    return event


@dataclass
class Server:
    name: str
    url: str
    pid: int
    press_cookie: str
    rest_s: float = 0.0  # > 0: a launcher, free this long after a press's outcome (FAST_SIM_TOML's min_rest_ms)


@dataclass
class Figures:
    server: Server
    streams: int
    threads: int
    rss: float
    samples: list[float] = field(default_factory=list)
    fanned: list[float] = field(default_factory=list)  # from the event's publishing to its arrival (the daemon's)
    cpu_ms_per_press: float = 0.0
    events_per_press: float = 0.0  # all the events a stream received for a press

    @property
    def p50_ms(self) -> float:
        return percentile(self.samples, 50) * 1e3

    @property
    def p99_ms(self) -> float:
        return percentile(self.samples, 99) * 1e3


def measure(server: Server, streams: Streams, cookies: list[str], presses: int) -> Figures:
    """Connect a stream more for each cookie, then the presses, with every stream open."""
    began = time.monotonic()
    streams.connect(cookies)
    connect_s = time.monotonic() - began
    time.sleep(SETTLE_S)
    figures = Figures(server=server, streams=len(streams.all), threads=threads(server.pid), rss=rss_mb(server.pid))
    sent: dict[int, float] = {}
    events_before = sum(s.events for s in streams.all)
    cpu_before = cpu_seconds(server.pid)
    for _ in range(presses):
        at = time.perf_counter()
        status, reply = http_json(server.url + "/api/press", "POST", {}, cookie=server.press_cookie)
        if status != 200:
            raise Failure(f"{server.name}: a press was answered {status} {reply}")
        sent[reply["press"]] = at
        if not streams.wait_press(reply["press"]):
            missing = sum(reply["press"] not in s.pressed for s in streams.all)
            raise Failure(f"{server.name}: {missing} stream(s) missed press {reply['press']}")
        if server.rest_s:  # the next press finds the launcher free, as a player's does: no wait for a fire timed
            if not streams.wait_outcome(reply["press"]):
                raise Failure(f"{server.name}: no outcome of press {reply['press']}")
            time.sleep(server.rest_s)
    figures.cpu_ms_per_press = (cpu_seconds(server.pid) - cpu_before) * 1e3 / presses
    figures.samples = [s.pressed[p] - sent_at for p, sent_at in sent.items() for s in streams.all]
    figures.fanned = [s.fanned[p] for p in sent for s in streams.all if p in s.fanned]
    figures.events_per_press = (sum(s.events for s in streams.all) - events_before) / len(streams.all) / presses
    print(f"  {server.name}: {figures.streams} streams connected in {connect_s:.1f} s; {presses} presses", flush=True)
    return figures


def steps(server: Server, cookies: list[str], counts: list[int], presses: int, batch: int = BATCH) -> list[Figures]:
    """The server measured at each count of streams, opened in steps and kept open."""
    streams = Streams(server.url, batch=batch)
    results = []
    try:
        for count in counts:
            results.append(measure(server, streams, cookies[len(streams.all) : count], presses))
    finally:
        streams.close()
    return results


def start_reference(heartbeat_s: float, stack: contextlib.ExitStack) -> Server:
    process = subprocess.Popen(
        [sys.executable, str(REFERENCE), "--heartbeat-s", str(heartbeat_s)], stdout=subprocess.PIPE, text=True
    )

    def stop() -> None:
        process.kill()
        process.wait(10)
        assert process.stdout is not None
        process.stdout.close()

    stack.callback(stop)
    assert process.stdout is not None
    match = re.search(r"Open (http://\S+?)/? (?:on a phone|in a browser)", process.stdout.readline())
    if match is None:
        raise Failure("the one-thread server did not start")
    return Server(ONE_THREAD, match.group(1), process.pid, press_cookie="uno_session=-")


def run(args: argparse.Namespace) -> list[Figures]:
    counts = sorted(args.steps)
    most = counts[-1]
    sessions = math.ceil(most / StreamGate.PER_SESSION)
    assert sessions + 2 <= MOST_SESSIONS, "more sessions than the daemon keeps"
    assert most <= StreamGate.MOST, "more streams than the daemon admits"
    results: list[Figures] = []
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        config = FAST_SIM_TOML.replace("heartbeat_s = 0.5", f"heartbeat_s = {args.heartbeat_s}")
        daemon = start_daemon(tmp, config)
        stack.callback(daemon.close)
        began = time.monotonic()
        cookies = [join(daemon.url, daemon.table_pin) for _ in range(sessions)]
        per_stream = [c for c in cookies for _ in range(StreamGate.PER_SESSION)][:most]
        print(f"  daemon: {sessions} sessions joined in {time.monotonic() - began:.1f} s", flush=True)
        name = f"daemon ({WebConfig().threads} threads)"
        server = Server(name, daemon.url, daemon.process.pid, daemon.joined.table_cookie, rest_s=REST_S)
        results += steps(server, per_stream, counts, args.presses)
        daemon.close()  # before the next server starts: they do not share the cores

        bare = start_baseline()
        stack.callback(bare.close)
        threaded = Server(THREADED, bare.url, bare.process.pid, press_cookie="uno_session=-")
        batch = ThreadingHTTPServer.request_queue_size - 1  # its backlog is 5
        results += steps(threaded, ["uno_session=-"] * most, counts, args.presses, batch)
        bare.close()

        reference = start_reference(args.heartbeat_s, stack)
        results += steps(reference, ["uno_session=-"] * most, [most], args.presses)
    return results


def slope(figures: list[Figures]) -> float:
    """CPU ms per press per stream: the least-squares slope of CPU per press against the streams."""
    xs = [f.streams for f in figures]
    ys = [f.cpu_ms_per_press for f in figures]
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread if spread else 0.0


def report(args: argparse.Namespace, results: list[Figures]) -> None:
    print()
    print(f"command: {shlex.join(sys.orig_argv)}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {load}; {time.strftime('%Y-%m-%d %H:%M')}"
    )
    print(f"{args.presses} presses one at a time per step; latency over every (stream, press); CPU in clock ticks")
    print()
    print(
        f"{'server':<26}{'streams':>8}{'threads':>8}{'RSS MB':>8}{'ev/press':>9}{'CPU ms/press':>13}"
        f"{'p50 ms':>9}{'p99 ms':>9}"
    )
    for f in results:
        print(
            f"{f.server.name:<26}{f.streams:>8}{f.threads:>8}{f.rss:>8.1f}{f.events_per_press:>9.1f}"
            f"{f.cpu_ms_per_press:>13.3f}{f.p50_ms:>9.2f}{f.p99_ms:>9.2f}"
        )
    ours = [f for f in results if f.server.name.startswith("daemon")]
    theirs = {f.streams: f for f in results if f.server.name == THREADED}
    for f in ours:
        base = theirs[f.streams]
        p50, p99 = f.p50_ms / base.p50_ms, f.p99_ms / base.p99_ms
        fan50, fan99 = (percentile(f.fanned, q) * 1e3 for q in (50, 99))
        print(
            f"ratio daemon / stdlib at {f.streams} streams: p50 {p50:.2f}x, p99 {p99:.2f}x; the daemon's fan-out "
            f"alone (publish -> arrival) p50 {fan50:.2f} / p99 {fan99:.2f} ms, p99 {fan99 / base.p99_ms:.2f}x the "
            "stdlib's whole press"
        )
    if len(ours) > 1:
        mine, base_slope = slope(ours), slope(list(theirs.values()))
        print(
            f"ratio CPU per press per stream, daemon / stdlib: {mine:.4f} / {base_slope:.4f} ms = "
            f"{mine / base_slope if base_slope > 0 else float('nan'):.2f}x"
        )
    print(f"held: {max(f.streams for f in ours)} streams on the daemon, with {max(f.threads for f in ours)} threads")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[20, 100, 200, 500], help="streams at each step")
    parser.add_argument("--presses", type=int, default=100)
    parser.add_argument("--heartbeat-s", type=float, default=WebConfig().heartbeat_s)
    args = parse(parser, steps=[2, 5], presses=3)
    if min(args.steps) < 1 or args.presses < 1:
        parser.error("--steps and --presses must be at least 1")
    try:
        results = run(args)
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    report(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
