"""The harness of tests/test_connections.py and tests/test_turns.py: launcher/connections.py's guarded waitress on
loopback, in-process; the test drives waitress's loop itself, pass by pass, and moves the guard's virtual clock."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from waitress import wasyncore

from launcher.channel import MARK_JOINED, MARK_STREAM
from launcher.connections import MOST_WAITING, GuardedServer, guarded_server
from launcher.daemon import OUTBUF_HIGH_WATERMARK
from tests.virtual_clock import VirtualClock

LIMIT = MOST_WAITING + 40  # connection_limit here: a full server is quick to reach
HALF_HEADERS = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
WHOLE_GET = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
WAIT_S = 10.0  # of the loop's passes, at most, for what a test waits on


SMALL_BODY = 1000  # the server's max_request_body_size here
BIG = 200_000  # bytes of the answer to GET /big: more than the kernel's buffers take at once on loopback


def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    """GET /join/<session> and /stream/<session>: as the page does for a request with a known session (and for its
    event stream); /big: a big answer."""
    path = environ["PATH_INFO"]
    if path.startswith(("/join/", "/stream/")):
        environ[MARK_JOINED](path.rsplit("/", 1)[1])
    if path.startswith("/stream"):
        environ[MARK_STREAM]()
    body = b"x" * BIG if path.endswith("big") else b"ok"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]


@dataclass
class Served:
    server: GuardedServer
    clock: VirtualClock
    address: tuple[str, int]
    map: dict[int, Any]
    clients: list[socket.socket] = field(default_factory=list)

    def connect(
        self, source: str, first_bytes: bytes = b"", *, slow_reader: bool = False, receive_buffer: int = 0
    ) -> socket.socket:
        """A connection from `source`; `slow_reader`: with the small receive buffer and Wi-Fi's segment size of
        a reader that never reads, so that the kernel takes only some 30 KB of an answer and waitress keeps the
        rest; `receive_buffer`: a receive buffer of that size."""
        sock = socket.socket()
        self.clients.append(sock)
        if slow_reader:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1460)
        if receive_buffer:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.settimeout(5)
        sock.bind((source, 0))
        sock.connect(self.address)
        if first_bytes:
            sock.sendall(first_bytes)
        return sock

    def run_until(self, done: Callable[[], bool]) -> None:
        """Passes of waitress's loop (each waits at most 10 ms for a socket) until `done()`; the server's threads
        may be slow to run on a busy machine, so the bound is the passes of WAIT_S, not their count."""
        deadline = time.monotonic() + WAIT_S
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"not done within {WAIT_S} s of the loop's passes")
            wasyncore.loop(timeout=0.01, map=self.map, use_poll=True, count=1)

    def settle(self) -> None:
        """Every connection made so far accepted and its bytes read."""
        before = -1
        while before != self.accepted():
            before = self.accepted()
            for _ in range(5):
                wasyncore.loop(timeout=0.01, map=self.map, use_poll=True, count=1)

    def unsent(self, source: str) -> int:
        """Bytes of answers waitress holds unsent for `source`'s connections."""
        return sum(c.total_outbufs_len for c in self.server.active_channels.values() if c.addr[0] == source)

    def held(self, source: str) -> int:
        """`source`'s connections the server holds."""
        return sum(c.addr[0] == source for c in self.server.active_channels.values())

    def accepted(self) -> int:
        return len(self.server.active_channels)

    def maintain(self) -> None:
        """waitress's maintenance pass, which it makes every second."""
        self.server.maintenance(time.time())


def closed_by_server(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(4096, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False  # open, nothing to read
    except ConnectionResetError:
        return True
    finally:
        sock.settimeout(5)


def answer(sock: socket.socket) -> bytes:
    sock.settimeout(5)
    return sock.recv(4096)


@contextmanager
def serving() -> Iterator[Served]:
    """The guarded server on loopback (2 threads, waitress's buffers as the daemon sets them), its loop driven
    by the test."""
    clock = VirtualClock()
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    sockets: dict[int, Any] = {}
    server = guarded_server(
        app,
        listener,
        sockets,
        clock=clock,
        threads=2,
        connection_limit=LIMIT,
        max_request_body_size=SMALL_BODY,
        outbuf_high_watermark=OUTBUF_HIGH_WATERMARK,
        asyncore_use_poll=True,
    )
    running = Served(server, clock, listener.getsockname(), sockets)
    try:
        yield running
    finally:
        for sock in running.clients:
            sock.close()
        for channel in list(sockets.values()):
            channel.close()
        server.task_dispatcher.shutdown()
        clock.close()
