"""Events: what happened, numbered 1, 2, 3, … for ever, kept in memory for the live streams and in SQLite.

`EventBus.publish` only touches memory, so the controller may call it right after starting the motor; a writer
thread appends events to the store in batches (DESIGN.md §9: the event log may batch).
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from launcher.store import Store

log = logging.getLogger(__name__)


class EventType(enum.StrEnum):
    BUTTON_PRESSED = "button.pressed"
    BUTTON_IGNORED = "button.ignored"
    LAUNCHER_MISSED = "launcher.missed"
    LAUNCHER_FIRED = "launcher.fired"
    LAUNCHER_JAMMED = "launcher.jammed"
    LAUNCHER_EMPTY = "launcher.empty"
    LAUNCHER_STOPPED = "launcher.stopped"
    LAUNCHER_LID = "launcher.lid"
    LAUNCHER_DEALT = "launcher.dealt"
    GAME_STARTED = "game.started"
    GAME_FINISHED = "game.finished"
    ATTACK_STARTED = "attack.started"
    ATTACK_PROGRESS = "attack.progress"
    ATTACK_FINISHED = "attack.finished"
    ROUND_SCORED = "round.scored"
    ROUND_UNDONE = "round.undone"
    ROUND_EDITED = "round.edited"
    DECK_CHANGED = "deck.changed"
    DECK_RELOADED = "deck.reloaded"
    ROUND_STARTED = "round.started"
    ROUND_ENDED = "round.ended"
    LAUNCHER_SUSPENSE = "launcher.suspense"
    HARDWARE_FAULT = "hardware.fault"
    HARDWARE_OK = "hardware.ok"
    DAEMON_STARTED = "daemon.started"
    PINS_CHANGED = "pins.changed"


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    ts: float  # seconds since the epoch
    type: str
    data: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "ts": self.ts, "type": self.type, "data": self.data}


class EventBus:
    """Numbers events, keeps the recent ones for streams, and hands them to a writer thread for the store."""

    RECENT = 2048  # events kept in memory for replay; older ones are read back from the store
    # Phones see an event before the writer saves it. After a kill the log ends short of what they saw, so the next
    # run numbers on past this many ids: the writer is never that far behind (it saves each batch in milliseconds).
    UNSAVED_AT_MOST = 10_000

    def __init__(self, store: Store) -> None:
        self._store = store
        with store.connect() as conn:
            self._last_id = store.last_event_id(conn)
            if store.begin_run(conn):  # the last run was killed: ids up to UNSAVED_AT_MOST past the log were shown
                self._last_id += self.UNSAVED_AT_MOST
        self._saved_id = self._last_id
        self._recent: deque[Event] = deque(maxlen=self.RECENT)
        self._changed = threading.Condition()
        self._streams_ended = False
        self._closed = False
        self._pending: queue.SimpleQueue[Event | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_loop, name="event-writer", daemon=True)
        self._writer.start()

    @property
    def last_id(self) -> int:
        return self._last_id

    def publish(self, type: EventType, data: dict[str, Any]) -> Event:
        with self._changed:
            self._last_id += 1
            event = Event(id=self._last_id, ts=time.time(), type=str(type), data=data)
            self._recent.append(event)
            self._pending.put(event)
            self._changed.notify_all()
        return event

    def events_after(self, last_id: int, limit: int = 1000) -> list[Event]:
        """Events with an id above `last_id`, oldest first, at most `limit` of them."""
        with self._changed:
            recent = list(self._recent)
        if not recent or last_id + 1 >= recent[0].id:
            return [e for e in recent if e.id > last_id][:limit]
        with self._changed:  # the store must hold everything older than what memory still has
            self._changed.wait_for(lambda: self._saved_id >= recent[0].id - 1, timeout=10)
        with self._store.connect() as conn:
            older = self._store.events_after(conn, last_id, limit)
        newest = older[-1].id if older else last_id
        return (older + [e for e in recent if e.id > newest])[:limit]

    def wait(self, last_id: int, timeout: float) -> bool:
        """Wait until an event newer than `last_id` exists or the streams end; True if there is one."""
        with self._changed:
            self._changed.wait_for(lambda: self._last_id > last_id or self._streams_ended, timeout)
            return self._last_id > last_id

    @property
    def streams_ended(self) -> bool:
        return self._streams_ended

    def end_streams(self) -> None:
        """Tell every live stream to finish (shutdown); events are still numbered and saved after this."""
        with self._changed:
            self._streams_ended = True
            self._changed.notify_all()

    def close(self) -> None:
        """End the streams, write what is pending and stop the writer. Safe to call twice."""
        self.end_streams()
        with self._changed:
            if self._closed:
                return
            self._closed = True
        self._pending.put(None)
        self._writer.join(timeout=10)
        if not self._writer.is_alive():  # every event is saved: the next run goes on from the log's last id
            with self._store.connect() as conn:
                self._store.end_run(conn)

    def _write_loop(self) -> None:
        with self._store.connect() as conn:
            while True:
                batch = [self._pending.get()]
                while not self._pending.empty():
                    batch.append(self._pending.get())
                done = None in batch
                events = [e for e in batch if e is not None]
                if events:
                    try:
                        self._store.append_events(conn, events)
                    except Exception:  # a full disk must not stop the launcher; the events stay live
                        log.exception("could not save %d events", len(events))
                    with self._changed:
                        self._saved_id = events[-1].id
                        self._changed.notify_all()
                if done:
                    return
