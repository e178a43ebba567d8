"""Many event streams: today's daemon (a waitress thread per stream) against ONE thread serving every stream.

In one run, each server on loopback: its idle CPU share and RSS with no stream open, then with the streams connected
(idle for --idle-s at the heartbeat the Pi uses), its thread count, and the time from sending POST /api/press to the
press's `button.pressed` event arriving at every stream, over all (stream, press) pairs. Presses go one at a time:
the next is sent once every stream has the last one.

Today's daemon runs on fast simulated hardware with `[web] threads` raised until StreamGate admits the streams,
joined as phones are: a session for each four streams (StreamGate.PER_SESSION). Where the config's most threads
admit fewer streams than asked, both servers are measured at what it admits, and the one-thread server also at the
count asked. The one-thread server is benchmarks/one_thread_sse_server.py (stdlib `selectors`, no session checks).
Between the two, at the count asked, the bare stdlib server of bench_sse_fanout.py (a thread per stream, no
Flask, no gate): what a thread per stream costs in Python, apart from the daemon's own work.
The client reads every stream from one thread with `selectors` too, so it is not hundreds of threads itself.

It is a measurement, not a test: exit 0, or 1 if a stream failed to connect or missed an event.

    .venv/bin/python benchmarks/bench_streams.py [--streams 500] [--idle-s 20] [--presses 50] [--floor-s 5]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
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
from measure import ROOT, TICKS, cpu_seconds, parse, peak_rss_mb, percentile, rss_mb, threads

from launcher.access import MOST_SESSIONS
from launcher.config import WebConfig
from tests.conftest import FAST_SIM_TOML, http_json, join, start_daemon
from webui.stream import StreamGate

BATCH = 64  # streams connecting at once: below the listen backlog (128 for the daemon and the one-thread server)
CONNECT_S = 60.0  # for all the streams of one step to connect
EVENT_WAIT_S = 10.0  # for a press's event to reach every stream
SETTLE_S = 1.0  # after the streams connect, before the idle window
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
        at = time.perf_counter()
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
        self._events(stream, at)

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

    def _events(self, stream: Stream, at: float) -> None:
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
                for line in block.split(b"\n"):
                    if line.startswith(b"data: "):
                        press = json.loads(line[6:])["data"]["press"]
                        stream.pressed[press] = at
                        self._counts[press] += 1
                        complete.append(press)
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


@dataclass
class Server:
    name: str
    url: str
    pid: int
    press_cookie: str
    floor_cpu: float = 0.0  # share of one core, no stream open
    floor_rss: float = 0.0  # MB


@dataclass
class Figures:
    server: Server
    streams: int
    seen: int | None  # streams the server says are open (the stdlib server does not say)
    threads: int
    cpu: float
    rss: float
    peak_rss: float
    samples: list[float]
    events_per_press: float = 0.0  # all the events a stream received for a press

    @property
    def p50_ms(self) -> float:
        return percentile(self.samples, 50) * 1e3

    @property
    def p99_ms(self) -> float:
        return percentile(self.samples, 99) * 1e3


def cpu_share(pid: int, seconds: float) -> float:
    """Share of one core the process used over the next `seconds`."""
    cpu, began = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return (cpu_seconds(pid) - cpu) / (time.monotonic() - began)


def floor(server: Server, seconds: float) -> None:
    server.floor_cpu = cpu_share(server.pid, seconds)
    server.floor_rss = rss_mb(server.pid)


def measure(server: Server, streams: Streams, cookies: list[str], idle_s: float, presses: int) -> Figures:
    """Connect a stream more for each cookie, then the idle window and the presses, with every stream open."""
    began = time.monotonic()
    streams.connect(cookies)
    connect_s = time.monotonic() - began
    time.sleep(SETTLE_S)
    cpu = cpu_share(server.pid, idle_s)
    figures = Figures(
        server=server,
        streams=len(streams.all),
        seen=_state(server).get("connection", {}).get("sse_clients"),
        threads=threads(server.pid),
        cpu=cpu,
        rss=rss_mb(server.pid),
        peak_rss=peak_rss_mb(server.pid),
        samples=[],
    )
    sent: dict[int, float] = {}
    events_before = sum(s.events for s in streams.all)
    for _ in range(presses):
        at = time.perf_counter()
        status, reply = http_json(server.url + "/api/press", "POST", {}, cookie=server.press_cookie)
        if status != 200:
            raise Failure(f"{server.name}: a press was answered {status} {reply}")
        sent[reply["press"]] = at
        if not streams.wait_press(reply["press"]):
            missing = sum(reply["press"] not in s.pressed for s in streams.all)
            raise Failure(f"{server.name}: {missing} stream(s) missed press {reply['press']}")
    figures.samples = [s.pressed[p] - sent_at for p, sent_at in sent.items() for s in streams.all]
    figures.events_per_press = (sum(s.events for s in streams.all) - events_before) / len(streams.all) / presses
    print(
        f"  {server.name}: {figures.streams} streams connected in {connect_s:.1f} s, "
        f"{'?' if figures.seen is None else figures.seen} seen by the server; {presses} presses",
        flush=True,
    )
    return figures


def _state(server: Server) -> dict:
    status, state = http_json(server.url + "/api/state", "GET")
    assert status == 200, state
    return state


def threads_for(streams: int) -> tuple[int, int, int]:
    """(threads to configure, streams they admit, the config's most threads): the default if it is enough."""
    limits = next(f for f in dataclasses.fields(WebConfig) if f.name == "threads")
    most = int(limits.metadata["hi"])
    for count in range(WebConfig().threads, most + 1):
        if StreamGate(count).most >= streams:
            return count, streams, most
    return most, StreamGate(most).most, most


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
    count, admitted, most_threads = threads_for(args.streams)
    common = min(args.streams, admitted)
    if admitted < args.streams:
        print(
            f"note: [web] threads is at most {most_threads} (launcher/config.py), whose StreamGate admits "
            f"{admitted} streams, not {args.streams}: both servers measured at {common}, "
            f"the one-thread server also at {args.streams}"
        )
    sessions = math.ceil(common / StreamGate.PER_SESSION)
    assert sessions + 2 <= MOST_SESSIONS, "more sessions than the daemon keeps"
    results: list[Figures] = []
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        config = FAST_SIM_TOML.replace("heartbeat_s = 0.5", f"heartbeat_s = {args.heartbeat_s}\nthreads = {count}")
        daemon = start_daemon(tmp, config)
        stack.callback(daemon.close)
        began = time.monotonic()
        cookies = [join(daemon.url, daemon.table_pin) for _ in range(sessions)]
        per_stream = [c for c in cookies for _ in range(StreamGate.PER_SESSION)][:common]
        print(
            f"  daemon: threads = {count}, {sessions} sessions joined in {time.monotonic() - began:.1f} s", flush=True
        )
        server = Server(f"daemon ({count} threads)", daemon.url, daemon.process.pid, daemon.joined.table_cookie)
        floor(server, args.floor_s)
        streams = Streams(daemon.url)
        try:
            results.append(measure(server, streams, per_stream, args.idle_s, args.presses))
        finally:
            streams.close()
        daemon.close()  # before the next server starts: they do not share the cores

        bare = start_baseline()
        stack.callback(bare.close)
        threaded = Server(THREADED, bare.url, bare.process.pid, press_cookie="uno_session=-")
        floor(threaded, args.floor_s)
        streams = Streams(bare.url, batch=ThreadingHTTPServer.request_queue_size - 1)  # its backlog is 5
        try:
            results.append(measure(threaded, streams, ["uno_session=-"] * args.streams, args.idle_s, args.presses))
        finally:
            streams.close()
        bare.close()

        reference = start_reference(args.heartbeat_s, stack)
        floor(reference, args.floor_s)
        streams = Streams(reference.url)
        try:
            results.append(measure(reference, streams, ["uno_session=-"] * common, args.idle_s, args.presses))
            if args.streams > common:
                more = ["uno_session=-"] * (args.streams - common)
                results.append(measure(reference, streams, more, args.idle_s, args.presses))
        finally:
            streams.close()
    return results


def report(args: argparse.Namespace, results: list[Figures]) -> None:
    print()
    print(f"command: {shlex.join(sys.orig_argv)}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average {load}; {time.strftime('%Y-%m-%d %H:%M')}"
    )
    print(
        f"idle {args.idle_s:g} s (heartbeat {args.heartbeat_s:g} s; the stdlib server sends none), floor "
        f"{args.floor_s:g} s with no stream; {args.presses} presses one at a time; latency over every (stream, press)"
    )
    print()
    print(
        f"{'server':<26}{'streams':>8}{'threads':>8}{'CPU % 0':>9}{'CPU % N':>9}{'RSS 0':>8}{'RSS N':>8}"
        f"{'peak':>8}{'KB/stream':>10}{'ev/press':>9}{'p50 ms':>9}{'p99 ms':>9}"
    )
    for f in results:
        per_stream_kb = (f.rss - f.server.floor_rss) * 1024 / f.streams
        print(
            f"{f.server.name:<26}{f.streams:>8}{f.threads:>8}{f.server.floor_cpu * 100:>9.2f}{f.cpu * 100:>9.2f}"
            f"{f.server.floor_rss:>8.1f}{f.rss:>8.1f}{f.peak_rss:>8.1f}{per_stream_kb:>10.1f}"
            f"{f.events_per_press:>9.1f}{f.p50_ms:>9.2f}{f.p99_ms:>9.2f}"
        )
    tick = 100 / TICKS / args.idle_s
    print(
        "CPU: % of one core, idle with no stream (0) and with the streams (N), in steps of one clock tick over the "
        f"window ({tick:.3f} %); RSS in MB, now and peak; KB/stream = (RSS N - RSS 0) / streams"
    )
    ours = results[0]
    one = {f.streams: f for f in results if f.server.name == ONE_THREAD}
    theirs = one[ours.streams]
    print(
        f"ratio daemon / one thread at {ours.streams} streams: CPU {ratio(ours.cpu, theirs.cpu, tick / 100)}, "
        f"RSS {ratio(ours.rss, theirs.rss)}, p50 {ratio(ours.p50_ms, theirs.p50_ms)}, "
        f"p99 {ratio(ours.p99_ms, theirs.p99_ms)}"
    )
    for threaded in (f for f in results if f.server.name == THREADED and f.streams in one):
        theirs = one[threaded.streams]
        print(
            f"ratio stdlib thread per stream / one thread at {threaded.streams} streams: "
            f"CPU {ratio(threaded.cpu, theirs.cpu, tick / 100)}, RSS {ratio(threaded.rss, theirs.rss)}, "
            f"p50 {ratio(threaded.p50_ms, theirs.p50_ms)}, p99 {ratio(threaded.p99_ms, theirs.p99_ms)}"
        )


def ratio(ours: float, theirs: float, step: float = 0.0) -> str:
    """ours / theirs; a CPU share of 0 was less than one clock tick (`step`), so the ratio is at least ours / step."""
    if theirs > 0:
        return f"{ours / theirs:.2f}x"
    if step > 0 and ours > 0:
        return f"> {ours / step:.0f}x (the one-thread server used less than one clock tick)"
    return "n/a (both 0)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--idle-s", type=float, default=20.0)
    parser.add_argument("--presses", type=int, default=50)
    parser.add_argument("--floor-s", type=float, default=5.0, help="idle window with no stream open")
    parser.add_argument("--heartbeat-s", type=float, default=WebConfig().heartbeat_s)
    args = parse(parser, streams=5, idle_s=1.0, presses=3, floor_s=1.0)
    if args.streams < 1 or args.presses < 1:
        parser.error("--streams and --presses must be at least 1")
    try:
        results = run(args)
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    report(args, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
