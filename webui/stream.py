"""Server-Sent Events: every phone follows the table live.

Each open stream holds one server thread (DESIGN.md §12), so the stream sends a comment at once (the browser
then knows it is connected) and a heartbeat comment regularly (a phone that vanished is noticed on the next
write and its thread freed). `Last-Event-ID` replays exactly what the phone missed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, request

from launcher.events import Event, EventBus

bp = Blueprint("stream", __name__)


class StreamCounter:
    """How many phones are following right now (shown on the status page)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0

    def add(self, n: int) -> None:
        with self._lock:
            self.count += n


def format_event(event: Event) -> str:
    return f"id: {event.id}\ndata: {json.dumps(event.as_dict(), ensure_ascii=False, separators=(',', ':'))}\n\n"


def _last_event_id(bus: EventBus) -> int:
    """Where to resume: the browser's Last-Event-ID on a reconnect, else `?last_event_id=` (the id the page
    read in /api/state, so nothing falls between the snapshot and the stream), else from now on."""
    raw = request.headers.get("Last-Event-ID") or request.args.get("last_event_id")
    try:
        return max(0, int(raw)) if raw else bus.last_id
    except ValueError:
        return bus.last_id  # garbled: follow from now rather than fail the stream


def _events(bus: EventBus, counter: StreamCounter, last_id: int, heartbeat_s: float) -> Iterator[str]:
    counter.add(1)
    try:
        yield ": connected\n\n"
        if last_id > bus.last_id:
            last_id = bus.last_id  # the phone remembers a newer log (the state was reset): follow from now
        while not bus.streams_ended:
            events = bus.events_after(last_id)
            if events:
                last_id = events[-1].id
                yield "".join(format_event(e) for e in events)
            elif not bus.wait(last_id, heartbeat_s):
                yield ": heartbeat\n\n"
    finally:
        counter.add(-1)


@bp.get("/api/events")
def events() -> Response:
    bus: EventBus = current_app.extensions["launcher.bus"]
    counter: StreamCounter = current_app.extensions["launcher.streams"]
    heartbeat_s: float = current_app.config["HEARTBEAT_S"]
    body = _events(bus, counter, _last_event_id(bus), heartbeat_s)
    return Response(
        body,
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
