"""launcher/turns.py: whose request a free thread serves next. The queue on its own (connections stood in for,
virtual time), then the guarded waitress in-process (tests/guarded_loop.py) with a reader that never reads."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from launcher.channel import DRAIN_S
from launcher.daemon import OUTBUF_HIGH_WATERMARK
from launcher.fair import MEMORY_S
from launcher.turns import Turns
from tests.guarded_loop import BIG, WHOLE_GET, Served, answer, closed_by_server, serving
from tests.virtual_clock import VirtualClock

THREADS = 8  # a quarter of them, 2, is a party's share


@dataclass(eq=False)
class Conn:
    party: str
    connected: bool = True
    total_outbufs_len: int = 0

    def service(self) -> None:
        raise AssertionError("the queue never serves a connection itself")


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    running = VirtualClock()
    try:
        yield running
    finally:
        running.close()


def _served_in_order(turns: Turns, *, limit: int = 100) -> list[str]:
    """The parties served, one after another, each request done before the next is taken."""
    order = []
    while turns and len(order) < limit:
        channel = turns.popleft()
        order.append(channel.party)
        turns.done(channel)
    return order


def test_a_new_party_is_served_before_a_flood_that_came_first(clock: VirtualClock) -> None:
    turns = Turns(THREADS, OUTBUF_HIGH_WATERMARK, clock)
    flood = [Conn(f"10.0.0.{n}") for n in range(64)]
    for _ in range(3):  # 64 addresses, each already served a few times
        for channel in flood:
            turns.append(channel)
        _served_in_order(turns)
        clock.advance(0.1)
    for channel in flood:
        turns.append(channel)
    turns.append(Conn("10.0.1.1"))  # the new phone, last in
    assert turns.popleft().party == "10.0.1.1"


def test_flooding_parties_take_turns_and_a_new_phone_waits_at_most_one_turn(clock: VirtualClock) -> None:
    turns = Turns(THREADS, OUTBUF_HIGH_WATERMARK, clock)
    heavy, light = Conn("10.0.0.1"), Conn("10.0.0.2")
    for _ in range(20):  # heavy sends 20 requests in a row; light one now and then
        turns.append(heavy)
        _served_in_order(turns)
    turns.append(heavy)
    turns.append(light)
    assert _served_in_order(turns) == ["10.0.0.2", "10.0.0.1"]
    phone = Conn("10.0.1.1")
    for round_ in range(4):  # both flood on; the phone's first and second request come in the middle
        turns.append(heavy)
        turns.append(light)
        if round_ in (1, 3):
            turns.append(phone)
        order = _served_in_order(turns)
        assert order[0] == "10.0.1.1" if round_ in (1, 3) else "10.0.1.1" not in order, order


def test_a_party_that_flooded_long_ago_is_new_again(clock: VirtualClock) -> None:
    turns = Turns(THREADS, OUTBUF_HIGH_WATERMARK, clock)
    old, recent = Conn("10.0.0.1"), Conn("10.0.0.2")
    for _ in range(50):
        turns.append(old)
        _served_in_order(turns)
    clock.advance(10 * MEMORY_S)
    for _ in range(3):
        turns.append(recent)
        _served_in_order(turns)
    turns.append(recent)
    turns.append(old)
    assert turns.popleft() is old


def test_a_party_is_served_by_at_most_its_share_of_the_threads_streams_aside(clock: VirtualClock) -> None:
    turns = Turns(THREADS, OUTBUF_HIGH_WATERMARK, clock)
    assert turns.share == THREADS // 4
    mine = [Conn("10.0.0.1") for _ in range(5)]
    for channel in mine:
        turns.append(channel)
    first, second = turns.popleft(), turns.popleft()
    assert not turns and len(turns) == 0, "a third thread for the same party"
    other = Conn("10.0.0.2")
    turns.append(other)
    assert turns.popleft() is other  # another party is served meanwhile
    turns.streaming(first)  # an event stream: its thread is held, its party's share is not
    third = turns.popleft()
    assert third.party == "10.0.0.1" and not turns
    turns.done(second)
    assert turns.popleft().party == "10.0.0.1"
    turns.done(first)  # the stream ends: no second give-back
    assert not turns


def test_a_connection_whose_reader_has_not_taken_its_answers_waits_on_no_thread(clock: VirtualClock) -> None:
    turns = Turns(THREADS, OUTBUF_HIGH_WATERMARK, clock)
    unread = Conn("10.0.0.1", total_outbufs_len=OUTBUF_HIGH_WATERMARK + 1)
    other = Conn("10.0.0.1")  # the same party's next connection is not held up behind it
    turns.append(unread)
    turns.append(other)
    assert turns.popleft() is other
    assert not turns
    unread.total_outbufs_len = OUTBUF_HIGH_WATERMARK  # the reader took some
    assert turns.popleft() is unread
    turns.done(unread)
    unread.total_outbufs_len = 10 * OUTBUF_HIGH_WATERMARK
    turns.append(unread)
    assert not turns
    unread.connected = False  # cut off: served at once, so that waitress closes it
    assert turns.popleft() is unread


def test_a_connection_added_while_it_is_served_waits_for_its_request_to_end(clock: VirtualClock) -> None:
    turns = Turns(THREADS, OUTBUF_HIGH_WATERMARK, clock)
    channel = Conn("10.0.0.1")
    turns.append(channel)
    assert turns.popleft() is channel
    turns.append(channel)  # waitress adds it for its next request before its thread lets go
    turns.append(channel)
    assert not turns
    turns.done(channel)
    assert turns.popleft() is channel and not turns


# --- the guarded waitress, in-process ----------------------------------------------------------------------

PIPELINED = 30  # page requests in one packet: some 6 MB of answers for a reader that reads none


@pytest.fixture
def served() -> Iterator[Served]:
    with serving() as running:
        yield running


@pytest.mark.parametrize("path", ["/big", "/join/guest/big"], ids=["stranger", "joined guest"])
def test_pipelined_requests_never_read_hold_no_thread_and_are_cut_at_the_deadline(served: Served, path: str) -> None:
    """Two connections (the server has two threads), each with many big answers asked in one packet and none
    read: the threads are free for a third address's request, and both are cut off once DRAIN_S has passed."""
    pipelined = WHOLE_GET.replace(b"GET /", f"GET {path}".encode()) * PIPELINED
    for n in (1, 2):
        served.connect(f"127.0.9.{n}", pipelined, slow_reader=True)
    dispatcher = served.server.task_dispatcher
    served.run_until(lambda: served.unsent("127.0.9.1") > OUTBUF_HIGH_WATERMARK < served.unsent("127.0.9.2"))
    served.run_until(lambda: dispatcher.active_count == 0)  # every thread idle, both connections' requests left
    assert all(c.requests for c in served.server.active_channels.values())
    phone = served.connect("127.0.9.3", WHOLE_GET)
    served.settle()
    served.run_until(lambda: not served.unsent("127.0.9.3"))
    assert answer(phone).startswith(b"HTTP/1.1 200")
    served.maintain()
    served.clock.advance(DRAIN_S)
    served.maintain()
    served.settle()
    assert served.held("127.0.9.1") == served.held("127.0.9.2") == 0
    assert not closed_by_server(phone)


def test_a_connection_reading_its_pipelined_answers_gets_every_one(served: Served) -> None:
    """A reader that takes its answers late gets all of them: its next request, waiting on no thread while its
    answers fill the buffer, is served again once it reads them."""
    pipelined = WHOLE_GET.replace(b"GET /", b"GET /big") * PIPELINED
    sock = served.connect("127.0.9.4", pipelined, receive_buffer=1 << 16)
    dispatcher = served.server.task_dispatcher
    served.run_until(lambda: served.unsent("127.0.9.4") > OUTBUF_HIGH_WATERMARK and dispatcher.active_count == 0)
    got = bytearray()
    sock.setblocking(False)

    def read_some() -> bool:
        with contextlib.suppress(BlockingIOError):
            got.extend(sock.recv(1 << 20))
        return len(got) >= PIPELINED * BIG

    served.run_until(read_some)
    assert got.count(b"HTTP/1.1 200") == PIPELINED
    assert not closed_by_server(sock)
