"""Streams written by one thread (webui/stream_hub.py), against the real daemon over loopback: more phones follow
than the server has threads, each gets every event once and in order, a stream that gives way or is behind is let
go, and a stream's connection serves nothing else."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from launcher.access.channel import HAND_OVER, MARK_STREAM
from launcher.daemon import CHANNEL_TIMEOUT_S
from launcher.events import EventBus, EventType
from launcher.store import Store
from tests.conftest import FAST_SIM_TOML, MakeDaemon, RunningDaemon, local_config, start_daemon, wait_until
from webui.parts import parts
from webui.stream_gate import StreamGate
from webui.stream_hub import BEHIND_BYTES

pytestmark = pytest.mark.slow

STREAM = b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"


@pytest.fixture(scope="module")
def daemon_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    running = start_daemon(tmp_path_factory.mktemp("hub"))  # [web] threads = 32, the default
    try:
        yield running
    finally:
        running.close()


def _open(daemon_process: RunningDaemon, source: str, extra: bytes = b"") -> socket.socket:
    parts = urlsplit(daemon_process.url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=5, source_address=(source, 0))
    sock.sendall(STREAM + extra + b"\r\n")
    return sock


def _read_until(sock: socket.socket, wanted: bytes, within_s: float = 10.0) -> bytes:
    """What the socket received until `wanted` appeared (or it closed, or the time ran out)."""
    got = b""
    deadline = time.monotonic() + within_s
    while wanted not in got and time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        got += chunk
    return got


def _wait_for_no_streams(daemon_process: RunningDaemon) -> None:
    """Until the streams a test closed have left their places (within a pass of the writer, stream_hub.PASS_S)."""
    wait_until(lambda: daemon_process.get("/api/state")["connection"]["sse_clients"] == 0, timeout=5, what="no stream")


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_more_phones_follow_than_the_server_has_threads_and_each_gets_every_event(
    daemon_process: RunningDaemon,
) -> None:
    threads_before = _threads(daemon_process.process.pid)
    # Two strangers' streams per address (StreamGate.PER_ADDRESS) from 60 addresses: 120, with 32 server threads.
    streams = [_open(daemon_process, f"127.0.7.{1 + n // 2}") for n in range(120)]
    try:
        heads = [_read_until(s, b": connected\n\n") for s in streams]
        assert all(h.startswith(b"HTTP/1.1 200 ") and b": connected\n\n" in h for h in heads)
        assert daemon_process.get("/api/state")["connection"]["sse_clients"] == 120
        assert _threads(daemon_process.process.pid) <= threads_before + 2  # the streams' writer; no thread per stream
        status, reply = daemon_process.post("/api/press", {})
        assert status == 200, reply
        marker = f'"press":{reply["press"]}'.encode()
        received = [_read_until(s, marker) for s in streams]
        assert all(marker in r for r in received)
        ids = [[int(line[4:]) for line in r.split(b"\n") if line.startswith(b"id: ")] for r in received]
        assert all(i == sorted(set(i)) and i for i in ids), "each event once, in order"
    finally:
        for sock in streams:
            sock.close()
    _wait_for_no_streams(daemon_process)


def test_a_stream_that_gives_way_is_ended_and_its_place_taken(daemon_process: RunningDaemon) -> None:
    """A fifth tab of one session takes the place of its first (StreamGate.PER_SESSION): that stream ends."""
    _wait_for_no_streams(daemon_process)
    cookie = f"Cookie: {daemon_process.joined.table_cookie}\r\n".encode()
    tabs: list[socket.socket] = []
    try:
        for _ in range(StreamGate.PER_SESSION + 1):  # one after another: the oldest is the first opened
            tabs.append(_open(daemon_process, "127.0.8.1", cookie))
            assert b": connected\n\n" in _read_until(tabs[-1], b": connected\n\n")
        began = time.monotonic()
        _read_until(tabs[0], b"never sent", within_s=5)  # returns when the daemon closes it
        assert time.monotonic() - began < 4, "the stream that gave way is still open"
        assert daemon_process.get("/api/state")["connection"]["sse_clients"] == StreamGate.PER_SESSION
    finally:
        for tab in tabs:
            tab.close()


def test_a_stream_connection_serves_no_request_sent_after_it(daemon_process: RunningDaemon) -> None:
    """Bytes after the stream's request (a pipelined request, or a flood) are never answered inside the stream nor
    read on: the stream ends, and its place is free again (the page would reconnect with Last-Event-ID)."""
    _wait_for_no_streams(daemon_process)
    sock = _open(daemon_process, "127.0.8.2")
    try:
        assert b": connected\n\n" in _read_until(sock, b": connected\n\n")
        assert daemon_process.get("/api/state")["connection"]["sse_clients"] == 1
        sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        began = time.monotonic()
        later = _read_until(sock, b"never sent", within_s=5)  # returns when the daemon closes it
        assert b"HTTP/1.1" not in later and time.monotonic() - began < 4
        _wait_for_no_streams(daemon_process)
    finally:
        sock.close()


def test_recent_events_are_read_by_position_and_an_older_start_is_said(tmp_path: Path) -> None:
    earlier = EventBus(Store(tmp_path / "db.sqlite3"))
    earlier.publish(EventType.DAEMON_STARTED, {})  # in the store only, after a restart
    earlier.close()
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    try:
        first = bus.last_id
        for n in range(10):
            bus.publish(EventType.BUTTON_PRESSED, {"press": n})
        assert [e.data["press"] for e in bus.recent_after(first + 7) or []] == [7, 8, 9]
        assert [e.id for e in bus.recent_after(first, limit=2) or []] == [first + 1, first + 2]
        assert bus.recent_after(bus.last_id) == []
        assert bus.recent_after(first - 1) is None  # not in memory: the store has it
        event = bus.recent_after(first)[0]  # type: ignore[index]
        assert event.frame == f"id: {event.id}\ndata: {event.json_text}\n\n".encode()
    finally:
        bus.close()


def test_under_a_server_that_cannot_hand_over_the_request_thread_writes_the_stream(
    make_daemon: MakeDaemon, tmp_path: Path
) -> None:
    """Flask's test client (or any WSGI server but the daemon's) has no connection to hand over: the stream still
    starts, sends what is published, and leaves its place when it is closed."""
    daemon = make_daemon(local_config(tmp_path))
    client = daemon.app.test_client()
    answer = client.get("/api/events", buffered=False)
    body = iter(answer.response)
    assert next(body) == b": connected\n\n"
    event = daemon.bus.publish(EventType.BUTTON_PRESSED, {"press": 7})
    assert next(body) == event.frame
    with daemon.app.app_context():
        gate = parts().streams
    assert gate.count == 1
    answer.close()
    assert gate.count == 0


def test_a_quiet_stream_outlives_the_servers_idle_timeout(tmp_path: Path) -> None:
    """A handed-over stream has no request under way, which is what waitress's idle timeout (CHANNEL_TIMEOUT_S)
    closes; with a heartbeat longer than that, a stream must still be open and told the next event."""
    running = start_daemon(tmp_path, FAST_SIM_TOML.replace("heartbeat_s = 0.5", "heartbeat_s = 300"))
    try:
        with _open(running, "127.0.8.4") as sock:
            assert b": connected\n\n" in _read_until(sock, b": connected\n\n")
            quiet = _read_until(sock, b"never sent", within_s=CHANNEL_TIMEOUT_S + 3)
            assert b"id: " not in quiet  # nothing happened meanwhile: the stream was quiet for the whole timeout
            status, reply = running.post("/api/press", {})
            assert status == 200, reply
            marker = f'"press":{reply["press"]}'.encode()
            assert marker in _read_until(sock, marker)
    finally:
        running.close()


class _ReadingPipe:
    """A handed-over connection whose phone reads everything between two passes; what each write handed it."""

    chunked = False  # HTTP/1.0: the frames as they are
    total_outbufs_len = 0  # read at once

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def stream_open(self) -> bool:
        return True

    def write_stream(self, data: bytes) -> bool:
        self.writes.append(data)
        return True

    def end_stream(self) -> None:
        pass


def test_a_stream_far_behind_is_sent_what_memory_holds_in_writes_of_at_most_its_allowance(
    make_daemon: MakeDaemon, tmp_path: Path
) -> None:
    """A phone resuming from the oldest id memory holds (some 300 KiB of events behind) gets every event once and in
    order, no write larger than what a stream may have unsent (BEHIND_BYTES), the rest in the following passes."""
    daemon = make_daemon(local_config(tmp_path))
    for n in range(300):
        daemon.bus.publish(EventType.ATTACK_STARTED, {"n": n, "note": "甲乙丙丁" * 80})  # about 1 KB each
    start = daemon.bus.kept_after()
    missed = b"".join(event.frame for event in daemon.bus.events_after(start))
    assert len(missed) > 4 * BEHIND_BYTES
    pipe = _ReadingPipe()
    answer = daemon.app.test_client().get(
        "/api/events",
        headers={"Last-Event-ID": str(start)},
        buffered=False,
        environ_overrides={MARK_STREAM: lambda: None, HAND_OVER: lambda: pipe},
    )
    assert b"".join(answer.response) == b": connected\n\n"
    wait_until(lambda: b"".join(pipe.writes) == missed, what="every event memory holds, in order")
    assert max(len(write) for write in pipe.writes) <= BEHIND_BYTES, [len(write) for write in pipe.writes]
