"""One thread writes every event stream, so that a stream costs a place in a list, not a server thread.

A stream's request thread sends the stream's start (and what the phone missed, from the log if need be) and hands
its connection over (launcher/access/channel.py, `HAND_OVER`). From then on this writer, woken once per event published
(`EventBus.listen`), writes each stream what it has not seen: the events' bytes are made once when they are
published (`Event.frame`), read from the bus's memory by position, and joined once per pass for all the streams
that have seen the same (nearly always all of them), so a press's events that came together leave in one write.
Writes never wait: a stream whose unsent output is past `BEHIND_BYTES` gets nothing more until it drains, and the
server's guard cuts it off if it does not within `DRAIN_S` (launcher/access/connections.py); the page comes back with
Last-Event-ID. A stream so far behind that memory no longer holds what it missed is ended at once for the same
reason: this thread never reads the disk. A phone that hung up, a stream that gave way (`StreamGate`) and the
shutdown end a stream within one pass; a pass runs at least every `PASS_S`, and a quiet stream gets a heartbeat.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.events import EventBus
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
        newest = self._bus.last_id
        made: dict[tuple[int, bool], tuple[bytes, int] | None] = {}  # (seen, chunked) → (bytes, last id)
        kept = []
        for follower in followers:
            try:
                going_on = self._write(follower, now, newest, made)
            except Exception:  # one stream's trouble must not stop every other's
                log.exception("a stream to %s failed; it is ended", follower.ticket.party)
                going_on = False
            if going_on:
                kept.append(follower)
            else:
                self._end(follower)
        if any(found is not None and found[1] < newest for found in made.values()):
            self._wake.set()  # a page of a long catch-up: the next one in the next pass
        return kept

    def _write(
        self, follower: _Follower, now: float, newest: int, made: dict[tuple[int, bool], tuple[bytes, int] | None]
    ) -> bool:
        """Write `follower` what it has not seen, or a heartbeat when quiet; False when it ends."""
        pipe = follower.pipe
        if follower.ticket.given_way.is_set() or not pipe.stream_open():
            return False
        if pipe.total_outbufs_len >= BEHIND_BYTES:
            return True  # behind: nothing more until it drains, or the guard cuts it off
        if follower.seen < newest:
            key = (follower.seen, pipe.chunked)
            if key not in made:
                made[key] = self._frames(*key)
            found = made[key]
            if found is None or not pipe.write_stream(found[0]):
                return False  # out of memory's reach (the page replays from the log), or gone
            follower.seen, follower.written_at = found[1], now
        elif now - follower.written_at >= self._heartbeat_s:
            if not pipe.write_stream(_chunk(HEARTBEAT) if pipe.chunked else HEARTBEAT):
                return False
            follower.written_at = now
        return True

    def _frames(self, seen: int, chunked: bool) -> tuple[bytes, int] | None:
        events = self._bus.recent_after(seen)
        if not events:
            return None
        data = b"".join(event.frame for event in events)
        return (_chunk(data) if chunked else data), events[-1].id

    def _end(self, follower: _Follower) -> None:
        self._gate.leave(follower.ticket)
        with contextlib.suppress(OSError):  # the server is closing already: the connection goes with it
            follower.pipe.end_stream()


def _chunk(data: bytes) -> bytes:
    """`data` as one chunk of an HTTP/1.1 chunked body."""
    return b"%X\r\n%s\r\n" % (len(data), data)
