"""One thread writes every event stream, so that a stream costs a place in a list, not a server thread.

A stream's request thread sends the stream's start (and what the phone missed, from the log if need be) and hands
its connection over (launcher/access/channel.py, `HAND_OVER`). From then on this writer, woken once per event published
(`EventBus.listen`), writes each stream what it has not seen: the events' bytes are made once when they are
published (`Event.frame`), read from the bus's memory by position, and joined once per pass for all the streams
that have seen the same (nearly always all of them), so a press's events that came together leave in one write.
Writes never wait: a stream is handed at most what `BEHIND_BYTES` leaves beside its unsent output (one event at
least), the rest in later passes as it drains, so a stream never read holds no more than that and one event of the
server's memory; the server's guard cuts it off if it does not drain within `DRAIN_S`
(launcher/access/connections.py), and the page comes back with Last-Event-ID. A stream so far behind that memory no
longer holds what it missed is ended at once for the same reason: this thread never reads the disk. A phone that
hung up, a stream that gave way (`StreamGate`) and the shutdown end a stream within one pass; a pass runs at least
every `PASS_S`, and a quiet stream gets a heartbeat.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.events import Event, EventBus
from launcher.threads import StoppableThread

if TYPE_CHECKING:  # webui/stream.py hands streams over
    from webui.stream_gate import StreamGate, StreamTicket

log = logging.getLogger(__name__)

PASS_S = 1.0  # a stream's place is free again this soon after its phone hung up or it gave way
BEHIND_BYTES = 64 * 1024  # below waitress's high watermark, past which a write would wait for the phone
HEARTBEAT = b": heartbeat\n\n"


class StreamPipe(Protocol):
    """A connection handed over (launcher/access/channel.py's `GuardedChannel`)."""

    chunked: bool  # HTTP/1.1: the body goes on in chunks
    total_outbufs_len: int  # unsent bytes

    def stream_open(self) -> bool: ...

    def write_stream(self, data: bytes) -> bool: ...

    def end_stream(self) -> None: ...


@dataclass(eq=False, slots=True)
class _Follower:
    pipe: StreamPipe
    ticket: StreamTicket
    seen: int  # the id of the last event written
    written_at: float  # for the heartbeat


class StreamHub:
    """The streams handed over, and the thread that writes them (started with the first)."""

    def __init__(self, bus: EventBus, gate: StreamGate, heartbeat_s: float, *, clock: Clock = REAL_CLOCK) -> None:
        self._bus = bus
        self._gate = gate
        self._heartbeat_s = heartbeat_s
        self._clock = clock
        self._wake = clock.event()
        self._lock = threading.Lock()
        self._arriving: list[_Follower] = []
        self._thread: StoppableThread | None = None
        bus.listen(self._wake.set)

    def follow(self, pipe: StreamPipe, ticket: StreamTicket, seen: int) -> None:
        """Write `pipe` every event after `seen` from now on; its ticket is left when the stream ends."""
        with self._lock:
            self._arriving.append(_Follower(pipe, ticket, seen, self._clock.now()))
            if self._thread is None:
                self._thread = StoppableThread(self._run, "event-streams", clock=self._clock, wake=self._wake.set)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        followers: list[_Follower] = []
        while True:
            self._wake.wait(PASS_S)
            self._wake.clear()
            with self._lock:
                followers += self._arriving
                self._arriving.clear()
            if self._bus.streams_ended:
                with self._lock:
                    followers += self._arriving
                    self._arriving.clear()
                    self._thread = None  # a stream arriving later starts a writer that ends it at once
                for follower in followers:
                    self._end(follower)
                return
            followers = self._pass(followers)

    def _pass(self, followers: list[_Follower]) -> list[_Follower]:
        """Write each stream what it has not seen (or a heartbeat); the streams still open."""
        now = self._clock.now()
        pages = _Pages(self._bus)
        kept = []
        for follower in followers:
            try:
                going_on = self._write(follower, now, pages)
            except Exception:  # one stream's trouble must not stop every other's
                log.exception("a stream to %s failed; it is ended", follower.ticket.party)
                going_on = False
            if going_on:
                kept.append(follower)
            else:
                self._end(follower)
        if pages.cut_short:
            self._wake.set()  # a page of a long catch-up: the next one in the next pass
        return kept

    def _write(self, follower: _Follower, now: float, pages: _Pages) -> bool:
        """Write `follower` what it has not seen, or a heartbeat when quiet; False when it ends."""
        pipe = follower.pipe
        if follower.ticket.given_way.is_set() or not pipe.stream_open():
            return False
        room = BEHIND_BYTES - pipe.total_outbufs_len
        if room <= 0:
            return True  # behind: nothing more until it drains, or the guard cuts it off
        if follower.seen < pages.newest:
            found = pages.page(follower.seen, room, pipe.chunked)
            if found is None or not pipe.write_stream(found[0]):
                return False  # out of memory's reach (the page replays from the log), or gone
            follower.seen, follower.written_at = found[1], now
        elif now - follower.written_at >= self._heartbeat_s:
            if not pipe.write_stream(_chunk(HEARTBEAT) if pipe.chunked else HEARTBEAT):
                return False
            follower.written_at = now
        return True

    def _end(self, follower: _Follower) -> None:
        self._gate.leave(follower.ticket)
        with contextlib.suppress(OSError):  # the server is closing already: the connection goes with it
            follower.pipe.end_stream()


@dataclass(slots=True)
class _Pages:
    """One pass's pages: memory's events after each place streams have reached, read once, and their frames joined
    once for each cut the streams there have room for (every caught-up stream with room: one join, one write)."""

    bus: EventBus
    newest: int = field(init=False)
    cut_short: bool = False  # a page ended before the newest event
    _missed: dict[int, tuple[list[Event], list[int]] | None] = field(default_factory=dict)  # seen → events, ends
    _joined: dict[tuple[int, int, bool], bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.newest = self.bus.last_id

    def page(self, seen: int, room: int, chunked: bool) -> tuple[bytes, int] | None:
        """The frames after `seen` that fit in `room` bytes (the first always, so a stream moves on), and the last's
        id; None when memory no longer holds what follows `seen`."""
        if seen not in self._missed:
            events = self.bus.recent_after(seen)
            ends = list(itertools.accumulate(len(event.frame) for event in events or ()))
            self._missed[seen] = (events, ends) if events else None
        missed = self._missed[seen]
        if missed is None:
            return None
        events, ends = missed
        count = max(1, bisect.bisect_right(ends, room))
        key = (seen, count, chunked)
        if key not in self._joined:
            data = b"".join(event.frame for event in events[:count])
            self._joined[key] = _chunk(data) if chunked else data
        last = events[count - 1].id
        self.cut_short |= last < self.newest
        return self._joined[key], last


def _chunk(data: bytes) -> bytes:
    """`data` as one chunk of an HTTP/1.1 chunked body."""
    return b"%X\r\n%s\r\n" % (len(data), data)
