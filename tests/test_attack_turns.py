"""Attacks on launcher/turns.py and the deadlines that nobody named in issue #45: many parties each new, a reader
that takes its answer a trickle at a time, a half-closed socket, a flood of pipelined HEADs, a body promised
after `Expect: 100-continue` or in chunks and never finished. In-process on loopback (tests/guarded_loop.py: two
threads, so a party's share is one), the loop driven by the test, the guard's clock virtual."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import pytest

from launcher.channel import DRAIN_S, REQUEST_DEADLINE_S
from launcher.daemon import OUTBUF_HIGH_WATERMARK
from launcher.turns import Turns
from tests.guarded_loop import WHOLE_GET, Served, answer, closed_by_server, serving
from tests.test_turns import Conn, _served_in_order
from tests.virtual_clock import VirtualClock

HEAD = b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
PER_CONNECTION = 30


@pytest.fixture
def served() -> Iterator[Served]:
    with serving() as running:
        yield running


def test_parties_never_seen_put_at_most_one_request_each_ahead_of_a_phone() -> None:
    """An attacker who can take a fresh party at will (many /64s over IPv6) is as new as the phone: each of its
    parties may go before the phone once, never twice, however many requests each has queued."""
    clock = VirtualClock()
    try:
        turns = Turns(8, OUTBUF_HIGH_WATERMARK, clock)
        fresh = [Conn(f"2001:db8:{n:x}::/64") for n in range(100) for _ in range(3)]  # three connections each
        for channel in fresh:
            turns.append(channel)
        turns.append(Conn("192.168.1.20"))
        order = _served_in_order(turns, limit=400)
        assert order.index("192.168.1.20") <= 100
        phone = Conn("192.168.1.21")  # once each is served, a new phone goes before all of them
        for channel in fresh:
            turns.append(channel)
        turns.append(phone)
        assert turns.popleft() is phone
    finally:
        clock.close()


def test_an_answer_read_a_trickle_at_a_time_is_cut_at_the_deadline_joined_or_not(served: Served) -> None:
    """Slowloris on the answer side: a reader that takes a kilobyte a second never lets its answer empty, so the
    deadline counts from its first unsent byte, not from the last byte read."""
    trickling = [
        served.connect("127.0.10.1", WHOLE_GET.replace(b"GET /", b"GET /big"), slow_reader=True),
        served.connect("127.0.10.2", WHOLE_GET.replace(b"GET /", b"GET /join/guest/big"), slow_reader=True),
    ]
    served.run_until(lambda: bool(served.unsent("127.0.10.1") and served.unsent("127.0.10.2")))
    served.maintain()
    for _ in range(int(DRAIN_S) - 1):
        for sock in trickling:
            sock.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                sock.recv(1024)
        served.settle()
        served.clock.advance(1.0)
        served.maintain()
    assert served.held("127.0.10.1") == served.held("127.0.10.2") == 1, "cut before its deadline"
    served.clock.advance(1.0)
    served.maintain()
    served.settle()
    assert served.held("127.0.10.1") == served.held("127.0.10.2") == 0


def test_a_half_closed_connection_with_requests_holds_no_thread(served: Served) -> None:
    """Requests sent, the sending side shut, nothing read: waitress takes the end of input for a hang-up, so its
    answers are dropped and the connection closed; the threads serve a phone."""
    for n in (1, 2):
        sock = served.connect(f"127.0.10.{2 + n}", WHOLE_GET.replace(b"GET /", b"GET /big") * 20, slow_reader=True)
        sock.shutdown(socket.SHUT_WR)
    served.run_until(lambda: served.held("127.0.10.3") == served.held("127.0.10.4") == 0)
    phone = served.connect("127.0.10.5", WHOLE_GET)
    served.settle()
    assert answer(phone).startswith(b"HTTP/1.1 200")


def test_a_flood_of_pipelined_heads_from_one_party_lets_a_phone_be_served(served: Served) -> None:
    """Small answers never wait for the reader, so a party can keep its share of the threads busy with HEADs sent
    by the hundred on each of many connections: another party's request is served while the flood has most of its
    requests left, and the flood's connections are kept (it reads its answers)."""
    flood = [served.connect("127.0.10.6", HEAD * PER_CONNECTION, receive_buffer=1 << 20) for _ in range(20)]
    for sock in flood:
        sock.setblocking(False)
    answered = bytearray()

    def flood_served(at_least: int) -> bool:
        for sock in flood:
            with contextlib.suppress(BlockingIOError):
                answered.extend(sock.recv(1 << 20))
        return answered.count(b"HTTP/1.1 200") >= at_least

    served.run_until(lambda: flood_served(40))
    phone = served.connect("127.0.10.7", WHOLE_GET)
    phone.setblocking(False)
    got = bytearray()

    def phone_answered() -> bool:
        flood_served(0)
        with contextlib.suppress(BlockingIOError):
            got.extend(phone.recv(4096))
        return got.startswith(b"HTTP/1.1 200")

    served.run_until(phone_answered)
    assert answered.count(b"HTTP/1.1 200") < 20 * PER_CONNECTION // 2, "the phone was served after most of the flood"
    assert not any(closed_by_server(s) for s in flood)


@pytest.mark.parametrize(
    "unfinished",
    [
        b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 500\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n",
    ],
    ids=["expect-100-continue", "chunked"],
)
def test_a_body_promised_and_never_finished_is_cut_at_the_request_deadline(served: Served, unfinished: bytes) -> None:
    sock = served.connect("127.0.10.8", unfinished)
    served.settle()
    served.clock.advance(REQUEST_DEADLINE_S - 0.5)
    served.maintain()
    served.settle()
    assert not closed_by_server(sock)
    served.clock.advance(1.0)
    served.maintain()
    served.settle()
    assert served.held("127.0.10.8") == 0
