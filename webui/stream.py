"""Server-Sent Events: every phone follows the table live.

Each open stream holds one server thread, so the stream sends a comment at once (the browser then knows it is
connected) and a heartbeat comment regularly (a phone that vanished without hanging up is noticed on the next write
and its thread freed). A phone that hangs up (a reload, the page closed) is let go within `HANG_UP_CHECK_S`: waitress
tells (see `channel_request_lookahead` in launcher/daemon.py). `Last-Event-ID` replays exactly what the phone missed.

Streams are admitted by `StreamGate`, below what the server's threads can serve, so that presses and state reads
always find a free thread: a few for clients not joined at the table (a watching phone, or anyone on the Wi-Fi),
at most two from one address; the rest for joined phones, at most four per session, and a joined phone always gets
one (another's oldest gives way, see `StreamGate`). Beyond, 503 with `Retry-After`; the page's EventSource tries
again by itself.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator

from flask import Blueprint, Response, current_app, request

from launcher.access import Role
from launcher.events import Event, EventBus
from webui import access
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("stream", __name__)

RETRY_AFTER_S = 10
HANG_UP_CHECK_S = 1.0  # a stream's place is free again this soon after its phone hung up


class StreamTicket:
    """One admitted stream; `given_way` is set when a joined phone took its place (the stream then ends)."""

    def __init__(self, joined: bool, who: str) -> None:
        self.joined = joined
        self.who = who
        self.given_way = threading.Event()  # the web server's threads keep real time


class StreamGate:
    """Admits event streams within the server's threads; `count` is how many phones follow right now.

    A joined phone always gets a stream: beyond its session's PER_SESSION its own oldest gives way, and when every
    place is taken, a stranger's oldest, else the oldest of the session holding the most (when it holds two or
    more). So seven sessions opening four streams each cannot keep out the next phone's own one."""

    PER_SESSION = 4  # a phone with a few tabs open
    PER_ADDRESS = 2  # not joined: a watching phone, or a stranger on the Wi-Fi

    def __init__(self, threads: int) -> None:
        reserved = max(4, threads // 4)  # never held by a stream: presses, state reads and joins
        self.most = threads - reserved
        self.most_strangers = max(2, self.most // 4)
        self._lock = threading.Lock()
        self._open: dict[tuple[bool, str], list[StreamTicket]] = {}  # each holder's, the oldest first
        self._strangers = 0
        self.count = 0

    def admit(self, joined: bool, who: str) -> StreamTicket | None:
        """A ticket for a new stream, or None when there is no room for it."""
        with self._lock:
            mine = self._open.get((joined, who), [])
            if joined:
                if len(mine) >= self.PER_SESSION:
                    self._give_way(mine[0])
                elif self.count >= self.most:
                    taken = self._place_to_take()
                    if taken is None:
                        return None
                    self._give_way(taken)
            elif self.count >= self.most or len(mine) >= self.PER_ADDRESS or self._strangers >= self.most_strangers:
                return None
            ticket = StreamTicket(joined, who)
            self._open.setdefault((joined, who), []).append(ticket)
            self._strangers += not joined
            self.count += 1
            return ticket

    def leave(self, ticket: StreamTicket) -> None:
        with self._lock:
            if not ticket.given_way.is_set():
                self._drop(ticket)

    def _place_to_take(self) -> StreamTicket | None:
        """With the lock held, every place taken: a stranger's oldest stream, else the oldest of the session holding
        the most streams if it holds two or more."""
        holders = sorted(self._open.items(), key=lambda item: (item[0][0], -len(item[1])))
        if not holders:
            return None  # no place at all (a server of four threads keeps them all for presses)
        joined, streams = holders[0][0][0], holders[0][1]
        return streams[0] if not joined or len(streams) >= 2 else None

    def _give_way(self, ticket: StreamTicket) -> None:
        """With the lock held: `ticket`'s place is free now; its stream ends within HANG_UP_CHECK_S."""
        self._drop(ticket)
        ticket.given_way.set()

    def _drop(self, ticket: StreamTicket) -> None:
        key = (ticket.joined, ticket.who)
        streams = self._open[key]
        streams.remove(ticket)
        if not streams:
            del self._open[key]
        self._strangers -= not ticket.joined
        self.count -= 1


def format_event(event: Event) -> str:
    return f"id: {event.id}\ndata: {event.json_text}\n\n"


def _last_event_id(bus: EventBus) -> int:
    """Where to resume: the browser's Last-Event-ID on a reconnect, else `?last_event_id=` (the id the page
    read in /api/state, so nothing falls between the snapshot and the stream), else from now on."""
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_event_id")
    try:
        return max(0, int(raw)) if raw else bus.last_id
    except ValueError:
        return bus.last_id  # garbled: follow from now rather than fail the stream


def _events(
    bus: EventBus,
    gate: StreamGate,
    ticket: StreamTicket,
    last_id: int,
    heartbeat_s: float,
    hung_up: Callable[[], bool],
) -> Iterator[str]:
    # Quiet waits are cut into slices of at most HANG_UP_CHECK_S, and the heartbeat goes after as many quiet ones.
    slices = math.ceil(heartbeat_s / HANG_UP_CHECK_S)
    slice_s = heartbeat_s / slices
    try:
        yield ": connected\n\n"
        if last_id > bus.last_id:
            last_id = bus.last_id  # the phone remembers a newer log (the state was reset): follow from now
        quiet = 0
        while not bus.streams_ended and not hung_up() and not ticket.given_way.is_set():
            events = bus.events_after(last_id)
            if events:
                last_id = events[-1].id
                quiet = 0
                yield "".join(format_event(e) for e in events)
            elif not bus.wait(last_id, slice_s):
                quiet += 1
                if quiet == slices:
                    quiet = 0
                    yield ": heartbeat\n\n"
    finally:
        gate.leave(ticket)


def _never() -> bool:
    return False


@bp.get("/api/events")
def events() -> Response:
    bus = parts().bus
    gate = parts().streams
    heartbeat_s: float = current_app.config["HEARTBEAT_S"]
    joined = access.caller_role() >= Role.TABLE
    ticket = gate.admit(joined, (access.session_token() or "") if joined else access.client())
    if ticket is None:
        raise ApiError(
            503, "too_many_streams", "too many phones follow the table right now", retry_after_s=RETRY_AFTER_S
        )
    hung_up = request.environ.get("waitress.client_disconnected", _never)  # not under Flask's test client
    body = _events(bus, gate, ticket, _last_event_id(bus), heartbeat_s, hung_up)
    return Response(
        body,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
