"""Server-Sent Events: every phone follows the table live.

A stream's request sends a comment at once (the browser then knows it is connected) and, on a reconnect,
`Last-Event-ID` replays what the phone missed: from the log on the disk at most `REPLAY_BYTES` (beyond, a `gap`
message skips to what memory holds, so that a flood of streams asking for the whole log holds no thread for long);
then it hands its connection to the streams' writer (webui/stream_hub.py): one thread writes every stream from then
on, so a stream holds no server thread, and a heartbeat comment goes regularly (a phone that vanished without hanging
up is noticed on the next write). A phone that hangs up (a reload, the page closed) is let go within
`stream_hub.PASS_S`.

Streams are admitted by `StreamGate`, at most `StreamGate.MOST` (an audience's phones, well below the server's
connection limit, so that presses and state reads always find room): a few for clients not joined at the table (a
watching phone, or anyone on the Wi-Fi), at most two from one address; the rest for joined phones, at most four per
session, and a joined phone always gets one (another's oldest gives way, see `StreamGate`). A stream whose reader
falls behind is cut off by the server's guard (launcher/access/connections.py: its unsent output must empty within
`DRAIN_S`); the page comes back with Last-Event-ID. Beyond, 503 with `Retry-After`; the page's EventSource tries
again by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from flask import Blueprint, Response, current_app, request

from launcher.access.book import Role
from launcher.access.channel import HAND_OVER, MARK_STREAM
from launcher.events import Event, EventBus
from webui import access
from webui.errors import ApiError
from webui.parts import Parts, parts
from webui.stream_gate import StreamTicket
from webui.stream_hub import HEARTBEAT, StreamPipe

bp = Blueprint("stream", __name__)

RETRY_AFTER_S = 10
# The bytes one stream replays from the log on the disk (what memory holds goes from the writer, as the phone
# reads): well below waitress's high watermark (launcher/daemon.py), so its thread never waits for the phone.
# Beyond, a `gap` message skips to what memory holds; the page reads /api/state on every (re)connection anyway.
REPLAY_BYTES = 64 * 1024


def _last_event_id(bus: EventBus) -> int:
    """Where to resume: the browser's Last-Event-ID on a reconnect, else `?last_event_id=` (the id the page
    read in /api/state, so nothing falls between the snapshot and the stream), else from now on."""
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_event_id")
    try:
        return max(0, int(raw)) if raw else bus.last_id
    except ValueError:
        return bus.last_id  # garbled: follow from now rather than fail the stream


def _from_log(bus: EventBus, last_id: int, replayed: int) -> list[Event]:
    """The next events after `last_id` whose frames fit in what is left of REPLAY_BYTES once `replayed` bytes were
    sent (the first one always at the start: an event larger than the bound is still replayed). A page read from
    the log may run on into memory's events: those that do not fit, the writer sends."""
    room = REPLAY_BYTES - replayed
    fits: list[Event] = []
    for event in bus.events_after(last_id, max_bytes=max(1, room)):
        room -= len(event.frame)
        if room < 0 and (fits or replayed):
            break
        fits.append(event)
    return fits


def _gap(after: int, to: int) -> bytes:
    """The `gap` message: the events after `after` up to `to` are not sent (the page reads /api/state); its id
    makes a reconnect resume after them."""
    return b'id: %d\nevent: gap\ndata: {"after":%d,"to":%d}\n\n' % (to, after, to)


def _events(
    app: Parts,
    ticket: StreamTicket,
    last_id: int,
    hand_over: Callable[[], StreamPipe] | None,
    mark_stream: Callable[[], None] | None,
    heartbeat_s: float,
) -> Iterator[bytes]:
    """The stream's start, on the request's thread: the comment and what the phone missed (from the log too, at
    most REPLAY_BYTES of it, so that the writer never reads the disk and this thread never waits for the phone);
    then the connection is handed over, and the writer leaves the ticket. Until then the request counts against
    its party's share of the threads (launcher/access/turns.py)."""
    bus = app.bus
    handed = False
    try:
        yield b": connected\n\n"
        if last_id > bus.last_id:
            last_id = bus.last_id  # the phone remembers a newer log (the state was reset): follow from now
        replayed = 0
        while bus.recent_after(last_id) is None:  # older than memory holds
            if ticket.given_way.is_set():
                return  # a joined phone took its place: no more of the log for it
            page = _from_log(bus, last_id, replayed)
            if not page:
                skipped_to = bus.kept_after()
                yield _gap(last_id, skipped_to)
                last_id = skipped_to
                continue
            last_id = page[-1].id
            frames = b"".join(event.frame for event in page)
            replayed += len(frames)
            yield frames
        if hand_over is not None:
            if mark_stream is not None:
                mark_stream()  # its thread is free from now on, so its party's share no longer counts it
            app.stream_hub.follow(hand_over(), ticket, last_id)
            handed = True
        else:
            yield from _follow_here(bus, ticket, last_id, heartbeat_s)
    finally:
        if not handed:
            app.streams.leave(ticket)


def _follow_here(bus: EventBus, ticket: StreamTicket, last_id: int, heartbeat_s: float) -> Iterator[bytes]:
    """Under a server that cannot hand a connection over (Flask's test client), this thread writes the stream."""
    while not bus.streams_ended and not ticket.given_way.is_set():
        events = bus.events_after(last_id)
        if events:
            last_id = events[-1].id
            yield b"".join(event.frame for event in events)
        elif not bus.wait(last_id, heartbeat_s):
            yield HEARTBEAT


@bp.get("/api/events")
def events() -> Response:
    app = parts()  # the body runs after the request's context has gone
    joined = access.caller_role() >= Role.TABLE
    ticket = app.streams.admit(access.client(), access.session_token() if joined else None)
    if ticket is None:
        raise ApiError(
            503, "too_many_streams", "too many phones follow the table right now", retry_after_s=RETRY_AFTER_S
        )
    heartbeat_s: float = current_app.config["HEARTBEAT_S"]
    environ = request.environ
    last_id = _last_event_id(app.bus)
    body = _events(app, ticket, last_id, environ.get(HAND_OVER), environ.get(MARK_STREAM), heartbeat_s)
    return Response(
        body,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
