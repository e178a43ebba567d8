"""launcher/connections.py and launcher/channel.py: waitress guarded so that no party holds the connections. In-process,
on loopback: the test drives waitress's loop itself, pass by pass, and moves the guard's virtual clock."""

from __future__ import annotations

import errno
import json
import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from waitress import wasyncore

from launcher.access import session_digest
from launcher.channel import DRAIN_S, FIRST_BYTES_S, MARK_JOINED, REQUEST_DEADLINE_S, party
from launcher.connections import MOST_WAITING, PER_ADDRESS, PER_SESSION, guarded_server
from tests.conftest import joined_client, local_daemon
from tests.guarded_loop import (
    BIG,
    HALF_HEADERS,
    LIMIT,
    SMALL_BODY,
    WHOLE_GET,
    Served,
    answer,
    app,
    closed_by_server,
    serving,
)
from tests.virtual_clock import VirtualClock
from webui.access import COOKIE


@pytest.fixture
def served() -> Iterator[Served]:
    with serving() as running:
        yield running


def test_one_address_keeps_at_most_its_share_and_its_newcomer_is_never_the_one_refused(served: Served) -> None:
    mine = [served.connect("127.0.3.1") for _ in range(PER_ADDRESS + 8)]
    served.settle()
    assert served.accepted() == PER_ADDRESS
    assert [closed_by_server(s) for s in mine] == [True] * 8 + [False] * PER_ADDRESS  # the oldest gave way
    other = served.connect("127.0.3.2", WHOLE_GET)
    served.settle()
    assert served.accepted() == PER_ADDRESS + 1
    assert answer(other).startswith(b"HTTP/1.1 200")


def _join(served: Served, source: str, session: str) -> socket.socket:
    sock = served.connect(source, WHOLE_GET.replace(b"GET /", f"GET /join/{session}".encode()))
    served.settle()
    assert answer(sock).startswith(b"HTTP/1.1 200")
    return sock


def test_nine_phones_behind_one_address_keep_every_connection_while_a_guest_there_opens_many(served: Served) -> None:
    """Nine phones behind one NAT, six connections each (a browser's most), and a guest joined from the same
    address who opens connection after connection: every newcomer gets in, the guest keeps its session's share,
    its idlest giving way, and the phones keep all theirs."""
    family = [_join(served, "127.0.3.9", f"phone-{n}") for n in range(9) for _ in range(6)]
    served.clock.advance(1.0)
    guest = []
    for _ in range(3 * PER_SESSION):
        guest.append(_join(served, "127.0.3.9", "guest"))
        served.clock.advance(0.1)
    newcomer = served.connect("127.0.3.9", WHOLE_GET)
    served.settle()
    assert answer(newcomer).startswith(b"HTTP/1.1 200")
    assert not any(closed_by_server(s) for s in family)
    assert [closed_by_server(s) for s in guest] == [True] * 2 * PER_SESSION + [False] * PER_SESSION


def test_a_sessions_share_is_bounded_and_its_idlest_connection_gives_way(served: Served) -> None:
    held = [_join(served, f"127.0.8.{1 + n}", "guest") for n in range(PER_SESSION + 5)]
    served.maintain()
    served.settle()
    assert [closed_by_server(s) for s in held] == [True] * 5 + [False] * PER_SESSION


def test_an_answer_not_read_by_its_deadline_is_cut_off_joined_or_not(served: Served) -> None:
    """A stranger's answer and a joined guest's, left unread, are cut at DRAIN_S and not before (a guest's
    answers left unread would otherwise hold its party's threads for good); a phone that reads keeps its own."""
    served.connect("127.0.3.10", WHOLE_GET.replace(b"GET /", b"GET /big"), slow_reader=True)
    served.connect("127.0.3.11", WHOLE_GET.replace(b"GET /", b"GET /join/p/big"), slow_reader=True)
    reader = served.connect("127.0.3.12", WHOLE_GET.replace(b"GET /", b"GET /big"))
    served.run_until(lambda: served.unsent("127.0.3.10") and served.unsent("127.0.3.11"))
    reader.settimeout(5)
    got = 0
    while got < BIG:  # a phone reads its answer at once
        got += len(reader.recv(65536))
        served.settle()
    served.maintain()
    served.clock.advance(DRAIN_S - 0.5)
    served.maintain()
    assert served.held("127.0.3.10") == served.held("127.0.3.11") == 1
    served.clock.advance(1.0)
    served.maintain()
    served.settle()
    assert served.held("127.0.3.10") == served.held("127.0.3.11") == 0, "an answer still unsent after DRAIN_S"
    assert served.held("127.0.3.12") == 1


def test_a_stream_whose_reader_falls_behind_is_cut_off_joined_or_not(served: Served) -> None:
    served.connect("127.0.3.13", WHOLE_GET.replace(b"GET /", b"GET /stream/p/big"), slow_reader=True)
    served.run_until(lambda: served.unsent("127.0.3.13"))
    served.maintain()
    served.clock.advance(DRAIN_S)
    served.maintain()
    served.settle()
    assert served.held("127.0.3.13") == 0


def test_a_request_not_whole_by_its_deadline_is_cut_off_however_it_trickles(served: Served) -> None:
    slow = served.connect("127.0.3.3", HALF_HEADERS)
    slow_body = served.connect("127.0.3.4", b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    answered = served.connect("127.0.3.5", WHOLE_GET)
    silent = served.connect("127.0.3.6")
    served.settle()
    assert answer(answered).startswith(b"HTTP/1.1 200")
    for _ in range(int(REQUEST_DEADLINE_S) - 1):  # a byte a second: never idle to waitress
        served.clock.advance(1.0)
        slow.sendall(b"a")
        slow_body.sendall(b" ")
        served.settle()
        served.maintain()
    served.clock.advance(0.9)
    served.maintain()
    assert not closed_by_server(slow) and not closed_by_server(slow_body)
    served.clock.advance(0.2)  # past the deadline from the first byte
    served.maintain()
    served.settle()
    assert closed_by_server(slow) and closed_by_server(slow_body)
    assert not closed_by_server(answered) and not closed_by_server(silent)  # waitress's idle limit is theirs


def test_strangers_waiting_are_bounded_slowest_first_and_a_joined_phones_connection_is_kept(served: Served) -> None:
    joined = served.connect("127.0.3.7", WHOLE_GET.replace(b"GET /", b"GET /join/a"))
    answered = served.connect("127.0.3.8", WHOLE_GET)
    served.settle()
    assert answer(joined).startswith(b"HTTP/1.1 200") and answer(answered).startswith(b"HTTP/1.1 200")
    served.clock.advance(1.0)
    slow = []
    for n in range(MOST_WAITING + 10):
        slow.append(served.connect(f"127.0.4.{1 + n}", HALF_HEADERS))
        served.settle()
        served.clock.advance(0.01)  # each began later than the one before
    served.maintain()
    served.settle()
    closed = [closed_by_server(s) for s in slow]
    assert closed == [True] * 11 + [False] * (MOST_WAITING - 1)  # the stranger answered idles, so it waits too
    assert not closed_by_server(joined) and not closed_by_server(answered)
    assert served.accepted() == MOST_WAITING + 1  # the joined phone's is not counted


def test_a_strangers_answer_is_sent_before_its_connection_is_closed_to_make_room(served: Served) -> None:
    # What the 200 strangers' event streams meet (tests/test_hostile_clients.py): each has its answer, a 503 there.
    many = [served.connect(f"127.0.5.{1 + n}", WHOLE_GET) for n in range(MOST_WAITING + 30)]
    served.settle()
    served.run_until(lambda: not any(c.requests or c.total_outbufs_len for c in served.server.active_channels.values()))
    served.clock.advance(FIRST_BYTES_S)
    served.maintain()
    served.settle()  # those cut off are closed as the loop polls them
    assert [answer(s)[:12] for s in many] == [b"HTTP/1.1 200"] * len(many)
    assert served.accepted() == MOST_WAITING


def test_a_new_connection_is_silent_only_for_a_moment_and_a_full_server_still_takes_phones(served: Served) -> None:
    silent = [served.connect(f"127.0.6.{1 + n}") for n in range(LIMIT)]
    served.settle()
    assert served.accepted() == LIMIT  # all new: none of them can be told from a phone yet
    phone = served.connect("127.0.7.1", WHOLE_GET)
    served.settle()
    assert answer(phone).startswith(b"HTTP/1.1 200"), "the server never stops accepting"
    assert closed_by_server(silent[0]) and not closed_by_server(silent[1])  # the oldest gave its place
    served.clock.advance(FIRST_BYTES_S)
    served.maintain()
    served.settle()
    assert served.accepted() == MOST_WAITING  # no longer new: strangers, the longest silent first
    assert [closed_by_server(s) for s in silent[-MOST_WAITING + 1 :]] == [False] * (MOST_WAITING - 1)


def test_a_request_with_a_known_session_marks_its_connection_a_joined_phones(tmp_path: Path) -> None:
    marked: list[tuple[str, str]] = []
    with local_daemon(tmp_path) as daemon:
        joined = joined_client(daemon)
        stranger = daemon.app.test_client()
        for client, who in ((joined, "joined"), (stranger, "stranger")):
            reply = client.get("/api/state", environ_base={MARK_JOINED: lambda s, who=who: marked.append((who, s))})
            assert reply.status_code == 200
    assert [who for who, _ in marked] == ["joined"]
    assert marked[0][1] == session_digest(joined.get_cookie(COOKIE).value)  # type: ignore[union-attr]


def test_an_ipv6_64_is_one_party_as_for_pin_guesses() -> None:
    assert party("2001:db8::1") == party("2001:db8::ffff:abcd:1") == "2001:db8::/64"
    assert party("2001:db8:0:1::1") != party("2001:db8::1")
    assert party("::ffff:192.168.1.20") == "192.168.1.20"
    assert party("fe80::1%wlan0") == "fe80::/64"
    assert party("192.168.1.20") == "192.168.1.20"


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (
            f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {SMALL_BODY + 1}\r\n\r\n".encode(),
            413,
            "request_entity_too_large",
        ),
        (b"GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, "bad_request"),
    ],
    ids=["body too large", "bad header line"],
)
def test_waitress_own_refusals_are_answered_in_the_apis_json_shape(
    served: Served, request_bytes: bytes, status: int, code: str
) -> None:
    sock = served.connect("127.0.3.20", request_bytes)
    got: list[bytes] = []
    served.run_until(lambda: got.append(_peek(sock)) or b"".join(got).endswith(b"}}"))
    head, body = b"".join(got).split(b"\r\n\r\n", 1)
    assert head.split(b" ")[1] == str(status).encode() and b"Content-Type: application/json" in head
    error = json.loads(body)["error"]
    assert error["code"] == code and error["message"]


def _peek(sock: socket.socket) -> bytes:
    sock.setblocking(False)
    try:
        return sock.recv(65536)
    except BlockingIOError:
        return b""
    finally:
        sock.settimeout(5)


class _Failing:
    """A socket whose peer is gone in a way wasyncore does not know as a hang-up (TCP_USER_TIMEOUT's)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def send(self, data: bytes) -> int:
        raise TimeoutError(errno.ETIMEDOUT, "Connection timed out")

    def recv(self, size: int) -> bytes:
        raise TimeoutError(errno.ETIMEDOUT, "Connection timed out")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def test_a_peers_socket_error_is_one_quiet_line_never_a_traceback(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    served.connect("127.0.3.21")
    served.connect("127.0.3.22")
    served.settle()
    sending, reading = served.server.active_channels.values()
    for channel in (sending, reading):
        channel.socket = _Failing(channel.socket)
    with caplog.at_level(logging.DEBUG):
        assert sending.send(b"answer") == 0
        assert reading.recv(4096) == b""
    assert not sending.connected and not reading.connected and served.accepted() == 0
    logged = [r for r in caplog.records if r.name.startswith(("launcher", "waitress"))]
    assert [(r.levelno, r.exc_info) for r in logged] == [(logging.DEBUG, None)] * 2


def test_a_connection_over_ipv6_counts_against_its_64() -> None:
    clock = VirtualClock()
    listener = socket.create_server(("::1", 0), family=socket.AF_INET6)
    sockets: dict[int, Any] = {}
    server = guarded_server(app, listener, sockets, clock=clock, threads=1)
    client = socket.create_connection(listener.getsockname()[:2], timeout=5)
    try:
        for _ in range(20):
            wasyncore.loop(timeout=0.01, map=sockets, use_poll=True, count=1)
        assert [c.party for c in server.active_channels.values()] == ["::/64"]
    finally:
        client.close()
        for channel in list(sockets.values()):
            channel.close()
        server.task_dispatcher.shutdown()
        clock.close()
