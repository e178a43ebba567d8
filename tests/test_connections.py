"""launcher/connections.py: waitress guarded against connections that never finish a request. In-process, on
loopback: the test drives waitress's loop itself, pass by pass, and moves the guard's virtual clock."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from waitress import wasyncore

from launcher.connections import (
    FIRST_BYTES_S,
    MARK_JOINED,
    MOST_WAITING,
    PER_ADDRESS,
    REQUEST_DEADLINE_S,
    GuardedServer,
    guarded_server,
)
from tests.conftest import joined_client, local_daemon
from tests.virtual_clock import VirtualClock

LIMIT = MOST_WAITING + 40  # connection_limit here: a full server is quick to reach
HALF_HEADERS = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
WHOLE_GET = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
PASSES = 400  # of the loop, at most, for what a test waits on


def _app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
    if environ["PATH_INFO"] == "/join":  # as the page does for a request with a known session
        environ[MARK_JOINED]()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]


@dataclass
class Served:
    server: GuardedServer
    clock: VirtualClock
    address: tuple[str, int]
    map: dict[int, Any]
    clients: list[socket.socket] = field(default_factory=list)

    def connect(self, source: str, first_bytes: bytes = b"") -> socket.socket:
        sock = socket.create_connection(self.address, timeout=5, source_address=(source, 0))
        self.clients.append(sock)
        if first_bytes:
            sock.sendall(first_bytes)
        return sock

    def run_until(self, done: Callable[[], bool]) -> None:
        """Passes of waitress's loop (each waits at most 10 ms for a socket) until `done()`."""
        for _ in range(PASSES):
            if done():
                return
            wasyncore.loop(timeout=0.01, map=self.map, use_poll=True, count=1)
        raise AssertionError(f"not done within {PASSES} passes of the loop")

    def settle(self) -> None:
        """Every connection made so far accepted and its bytes read."""
        before = -1
        while before != self.accepted():
            before = self.accepted()
            for _ in range(5):
                wasyncore.loop(timeout=0.01, map=self.map, use_poll=True, count=1)

    def accepted(self) -> int:
        return len(self.server.active_channels)

    def maintain(self) -> None:
        """waitress's maintenance pass, which it makes every second."""
        self.server.maintenance(time.time())


def _closed_by_server(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(4096, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False  # open, nothing to read
    except ConnectionResetError:
        return True
    finally:
        sock.settimeout(5)


def _answer(sock: socket.socket) -> bytes:
    sock.settimeout(5)
    return sock.recv(4096)


@pytest.fixture
def served() -> Iterator[Served]:
    clock = VirtualClock()
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    sockets: dict[int, Any] = {}
    server = guarded_server(
        _app, listener, sockets, clock=clock, threads=2, connection_limit=LIMIT, asyncore_use_poll=True
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


def test_one_address_keeps_at_most_its_share_and_another_address_still_gets_in(served: Served) -> None:
    mine = [served.connect("127.0.3.1") for _ in range(PER_ADDRESS + 8)]
    served.settle()
    assert served.accepted() == PER_ADDRESS
    assert [_closed_by_server(s) for s in mine] == [False] * PER_ADDRESS + [True] * 8
    other = served.connect("127.0.3.2", WHOLE_GET)
    served.settle()
    assert served.accepted() == PER_ADDRESS + 1
    assert _answer(other).startswith(b"HTTP/1.1 200")


def test_joined_phones_behind_one_address_do_not_use_up_its_share(served: Served) -> None:
    """A household (or a test's loopback) behind one address: its joined phones' connections, an event stream each,
    never count against the strangers' share, so a new phone from there still gets in."""
    joined = []
    for _ in range(PER_ADDRESS + 8):  # one after another, as phones join
        joined.append(served.connect("127.0.3.9", WHOLE_GET.replace(b"GET /", b"GET /join")))
        served.settle()
        assert _answer(joined[-1]).startswith(b"HTTP/1.1 200")
    newcomer = served.connect("127.0.3.9", WHOLE_GET)
    served.settle()
    assert _answer(newcomer).startswith(b"HTTP/1.1 200")
    assert not any(_closed_by_server(s) for s in joined)


def test_a_request_not_whole_by_its_deadline_is_cut_off_however_it_trickles(served: Served) -> None:
    slow = served.connect("127.0.3.3", HALF_HEADERS)
    slow_body = served.connect("127.0.3.4", b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    answered = served.connect("127.0.3.5", WHOLE_GET)
    silent = served.connect("127.0.3.6")
    served.settle()
    assert _answer(answered).startswith(b"HTTP/1.1 200")
    for _ in range(int(REQUEST_DEADLINE_S) - 1):  # a byte a second: never idle to waitress
        served.clock.advance(1.0)
        slow.sendall(b"a")
        slow_body.sendall(b" ")
        served.settle()
        served.maintain()
    served.clock.advance(0.9)
    served.maintain()
    assert not _closed_by_server(slow) and not _closed_by_server(slow_body)
    served.clock.advance(0.2)  # past the deadline from the first byte
    served.maintain()
    served.settle()
    assert _closed_by_server(slow) and _closed_by_server(slow_body)
    assert not _closed_by_server(answered) and not _closed_by_server(silent)  # waitress's idle limit is theirs


def test_strangers_waiting_are_bounded_slowest_first_and_a_joined_phones_connection_is_kept(served: Served) -> None:
    joined = served.connect("127.0.3.7", WHOLE_GET.replace(b"GET /", b"GET /join"))
    answered = served.connect("127.0.3.8", WHOLE_GET)
    served.settle()
    assert _answer(joined).startswith(b"HTTP/1.1 200") and _answer(answered).startswith(b"HTTP/1.1 200")
    served.clock.advance(1.0)
    slow = []
    for n in range(MOST_WAITING + 10):
        slow.append(served.connect(f"127.0.4.{1 + n}", HALF_HEADERS))
        served.settle()
        served.clock.advance(0.01)  # each began later than the one before
    served.maintain()
    served.settle()
    closed = [_closed_by_server(s) for s in slow]
    assert closed == [True] * 11 + [False] * (MOST_WAITING - 1)  # the stranger answered idles, so it waits too
    assert not _closed_by_server(joined) and not _closed_by_server(answered)
    assert served.accepted() == MOST_WAITING + 1  # the joined phone's is not counted


def test_a_strangers_answer_is_sent_before_its_connection_is_closed_to_make_room(served: Served) -> None:
    # What the 200 strangers' event streams meet (tests/test_hostile_clients.py): each has its answer, a 503 there.
    many = [served.connect(f"127.0.5.{1 + n}", WHOLE_GET) for n in range(MOST_WAITING + 30)]
    served.settle()
    served.run_until(lambda: not any(c.requests or c.total_outbufs_len for c in served.server.active_channels.values()))
    served.clock.advance(FIRST_BYTES_S)
    served.maintain()
    assert [_answer(s)[:12] for s in many] == [b"HTTP/1.1 200"] * len(many)
    assert served.accepted() == MOST_WAITING


def test_a_new_connection_is_silent_only_for_a_moment_and_a_full_server_still_takes_phones(served: Served) -> None:
    silent = [served.connect(f"127.0.6.{1 + n}") for n in range(LIMIT)]
    served.settle()
    assert served.accepted() == LIMIT  # all new: none of them can be told from a phone yet
    phone = served.connect("127.0.7.1", WHOLE_GET)
    served.settle()
    assert _answer(phone).startswith(b"HTTP/1.1 200"), "the server never stops accepting"
    assert _closed_by_server(silent[0]) and not _closed_by_server(silent[1])  # the oldest gave its place
    served.clock.advance(FIRST_BYTES_S)
    served.maintain()
    served.settle()
    assert served.accepted() == MOST_WAITING  # no longer new: strangers, the longest silent first
    assert [_closed_by_server(s) for s in silent[-MOST_WAITING + 1 :]] == [False] * (MOST_WAITING - 1)


def test_a_request_with_a_known_session_marks_its_connection_a_joined_phones(tmp_path: Path) -> None:
    marked: list[str] = []
    with local_daemon(tmp_path) as daemon:
        joined = joined_client(daemon)
        stranger = daemon.app.test_client()
        for client, who in ((joined, "joined"), (stranger, "stranger")):
            reply = client.get("/api/state", environ_base={MARK_JOINED: lambda who=who: marked.append(who)})
            assert reply.status_code == 200
    assert marked == ["joined"]
