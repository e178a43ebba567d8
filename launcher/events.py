"""Events: what happened, numbered 1, 2, 3, … for ever, kept in memory for the live streams and in SQLite.

`EventBus.publish` only touches memory, so the controller may call it right after starting the motor; a writer
thread appends events to the store in batches (the log may lag the stream by one batch).

Phones see an event before the writer saves it, so the log alone cannot say which ids were shown. The store keeps a
reserved id instead: no id above it is ever handed out, and it is on the disk before any id under it is. A run
reserves RESERVE ids past the last one at its start; the writer moves the reservation on, in a batch's transaction,
whenever fewer than half are left; a clean stop lowers it to the last id. So whatever ends a run (a kill, a power
cut, a full disk, a failed write), the next one numbers on past every id that may have been shown.
"""

from __future__ import annotations

import enum
import json
import logging
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from launcher.store import Store, StoreError, event_table
from launcher.threads import JOIN_S, StoppableThread

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
    ATTACK_UNDONE = "attack.undone"  # the last declaration was undone: the table is as it was before it
    ROUND_SCORED = "round.scored"
    ROUND_UNDONE = "round.undone"
    ROUND_EDITED = "round.edited"
    HOPPER_CHANGED = "hopper.changed"
    HOPPER_RELOADED = "hopper.reloaded"
    SHUFFLE_STARTED = "shuffle.started"
    SHUFFLE_ENDED = "shuffle.ended"
    SHUFFLE_CONTRIBUTED = "shuffle.contributed"  # before format 5: a contribution in the clear (read on resume)
    SHUFFLE_COMMITTED = "shuffle.committed"
    SHUFFLE_SEALED = "shuffle.sealed"  # the commitments closed: the phones reveal
    SHUFFLE_REVEALED = "shuffle.revealed"
    SHUFFLE_FIXED = "shuffle.fixed"  # the key is fixed: withheld lists the commitments never revealed
    LAUNCHER_SUSPENSE = "launcher.suspense"
    HARDWARE_FAULT = "hardware.fault"
    HARDWARE_OK = "hardware.ok"
    DAEMON_STARTED = "daemon.started"
    PINS_CHANGED = "pins.changed"
    POWER_CHANGED = "power.changed"  # the Pi's under-voltage or throttling warnings started or ended
    DAEMON_POWERING_OFF = "daemon.powering_off"  # the big button was held: the Pi is switching off
    TOURNAMENT_SET_UP = "tournament.set_up"  # here or at another table (launcher/tournament.py)
    TOURNAMENT_ROUND = "tournament.round"  # a round scored here or at another table, with the standings


@dataclass(frozen=True, slots=True)
class Event:
    id: int
    ts: float  # seconds since the epoch
    type: str
    # The data as compact JSON, made once when the event is published: the store saves this text, and every phone's
    # stream is sent it inside `json_text`, so fifty phones and the log cost one encoding, and a replay no parsing.
    data_text: str
    json_text: str = field(init=False, repr=False, compare=False)
    frame: bytes = field(init=False, repr=False, compare=False)  # as a stream sends it, the same bytes to every phone

    def __post_init__(self) -> None:
        head = f'{{"id":{self.id},"ts":{json.dumps(self.ts)},"type":{json.dumps(self.type, ensure_ascii=False)}'
        object.__setattr__(self, "json_text", f'{head},"data":{self.data_text}}}')
        object.__setattr__(self, "frame", f"id: {self.id}\ndata: {self.json_text}\n\n".encode())

    @classmethod
    def of(cls, id: int, ts: float, type: str, data: dict[str, Any]) -> Event:
        return cls(id, ts, type, json.dumps(data, ensure_ascii=False, separators=(",", ":")))

    @property
    def data(self) -> dict[str, Any]:
        """The data, parsed from its text at each call."""
        parsed: dict[str, Any] = json.loads(self.data_text)
        return parsed


class EventBus:
    """Numbers events, keeps the recent ones for streams, and hands them to a writer thread for the store."""

    # Events kept in memory for replay, at most this many and this much JSON (a game's scoreboard makes some events
    # large: the bound in bytes keeps the daemon's memory flat on a 512 MB Pi); older ones are read from the store.
    RECENT = 2048
    RECENT_BYTES = 512 * 1024
    PAGE_BYTES = 256 * 1024  # of data read from the store for one page of a replay (an old log's events may be large)
    # Ids reserved ahead on the disk (see the module's docstring). The writer saves a batch in milliseconds, so with
    # a working disk it is never this far behind; only a store that refused every write for RESERVE // 2 events
    # (a full disk) can make publish wait for it.
    RESERVE = 10_000
    RETRY_S = 1.0  # a save that failed (a full disk) is tried again this often; the events stay live meanwhile
    # Saved events between two looks for events older than the log keeps (and one look at the start): a look reads
    # a row or two and deletes a range of ids, so a long-running daemon's log stays `keep_days` long.
    FORGET_EVERY = 1000

    def __init__(self, store: Store, *, keep_days: int = 90, wall: Callable[[], float] = time.time) -> None:
        """`keep_days`: how long the log keeps an event (games, rounds and shuffle records are kept for ever in
        their own tables). `wall`: the events' timestamps, seconds since the epoch."""
        self._store = store
        self._keep_s = keep_days * 24 * 3600
        self._wall = wall
        with store.connect() as conn:
            self._last_id = max(event_table.last_id(conn), event_table.reserved_ids(conn))
            self._reserved = self._last_id + self.RESERVE
            event_table.reserve_ids(conn, self._reserved)  # on the disk before any id is handed out
            event_table.forget_before(conn, wall() - self._keep_s)
        self._saved_since_forgetting = 0
        self._saved_id = self._last_id
        self._recent: deque[Event] = deque()
        self._recent_bytes = 0  # the JSON of the events in _recent
        self._changed = threading.Condition()
        self._listeners: list[Callable[[], None]] = []  # told after each event and when the streams end
        self._streams_ended = False
        self._closed = False
        self._pending: queue.SimpleQueue[Event | None] = queue.SimpleQueue()
        # Ended by the None put on the queue at close(), after everything before it is written.
        self._writer = StoppableThread(self._write_loop, "event-writer")
        self._writer.start()

    @property
    def last_id(self) -> int:
        return self._last_id

    def publish(self, type: EventType, data: dict[str, Any]) -> Event:
        with self._changed:
            while self._last_id >= self._reserved:  # an id past the reservation could be given again after a restart
                if self._closed:
                    raise RuntimeError("no event is numbered once the event bus is closed")
                self._changed.wait()
            self._last_id += 1
            event = Event.of(self._last_id, self._wall(), str(type), data)
            self._remember(event)
            self._pending.put(event)
            self._changed.notify_all()
        self._tell()
        return event

    def listen(self, told: Callable[[], None]) -> None:
        """Have `told` called (on the publishing thread, so it must not block) after each event and when the streams
        end: a writer that waits on its own wakes once, whatever else waits on the bus."""
        with self._changed:
            self._listeners.append(told)

    def _tell(self) -> None:
        for told in self._listeners:
            told()

    def _remember(self, event: Event) -> None:
        """Keep the event for replay, forgetting the oldest beyond the bounds (the newest is always kept)."""
        self._recent.append(event)
        self._recent_bytes += len(event.json_text)
        while len(self._recent) > self.RECENT or (self._recent_bytes > self.RECENT_BYTES and len(self._recent) > 1):
            self._recent_bytes -= len(self._recent.popleft().json_text)

    def recent_after(self, last_id: int, limit: int = 1000) -> list[Event] | None:
        """Events with an id above `last_id` from memory, oldest first, at most `limit`; None when memory no longer
        holds the first of them. The newest are read by position, without copying what memory keeps."""
        with self._changed:
            missed = self._last_id - max(0, last_id)
            if missed <= 0:
                return []
            recent = self._recent
            if missed > len(recent):
                return None
            first = len(recent) - missed  # ids are consecutive: the one after `last_id` is this far from the end
            return [recent[i] for i in range(first, first + min(missed, limit))]

    def kept_after(self) -> int:
        """The id after which memory holds every event (a replay from it reads no disk)."""
        with self._changed:
            return self._recent[0].id - 1 if self._recent else self._last_id

    def events_after(self, last_id: int, limit: int = 1000, max_bytes: int | None = None) -> list[Event]:
        """Events with an id above `last_id`, oldest first, at most `limit` of them; of those read from the store,
        no more once `max_bytes` (else PAGE_BYTES) of data are read (the first one always)."""
        max_bytes = max_bytes or self.PAGE_BYTES
        with self._changed:
            recent = list(self._recent)
            numbered = self._last_id
        if last_id >= numbered or (recent and last_id + 1 >= recent[0].id):
            return [e for e in recent if e.id > last_id][:limit]
        if recent:  # the store must hold everything older than what memory still has (at a start, it has it all)
            with self._changed:
                self._changed.wait_for(lambda: self._saved_id >= recent[0].id - 1, timeout=10)
        with self._store.connect() as conn:
            older = [Event(*row) for row in event_table.after(conn, last_id, limit=limit, max_bytes=max_bytes)]
        if len(older) == limit or sum(len(e.data_text) for e in older) >= max_bytes:
            return older  # a full page: the store may hold more before what memory has, read by the next call
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
        self._tell()

    def close(self) -> None:
        """End the streams, write what is pending and stop the writer. Safe to call twice."""
        self.end_streams()
        with self._changed:
            if self._closed:
                return
            self._closed = True
            self._changed.notify_all()
        self._pending.put(None)
        self._writer.join(timeout=JOIN_S)
        with self._changed:  # no id is handed out from now on: the next run may go on right after the last one
            self._reserved = last = self._last_id
        try:
            with self._store.connect() as conn:
                event_table.reserve_ids(conn, last)
        except StoreError as e:  # the reservation on the disk stands: the next run leaves a gap, never reuses an id
            log.error("%s; the next start numbers events past the ids reserved", e)

    def _write_loop(self) -> None:
        unsaved: list[Event] = []  # taken from the queue, not in the store yet: kept and tried again until they are
        closing = failing = False
        while True:
            try:
                with self._store.connect() as conn:
                    while True:
                        closing |= self._take(unsaved, wait=not unsaved and not self._reserve_low())
                        self._save(conn, unsaved)
                        unsaved.clear()
                        if failing:
                            log.warning("the store takes events again")
                            failing = False
                        if closing:
                            return
            except StoreError as e:  # a full disk must not stop the launcher; the events stay live
                if closing:
                    if unsaved:
                        log.error("%s: %d events shown to phones are not in the log", e, len(unsaved))
                    return
                if not failing:
                    log.error("%s; events are kept and saved once it can be written", e)
                    failing = True
                time.sleep(self.RETRY_S)

    def _take(self, into: list[Event], *, wait: bool) -> bool:
        """Move what is queued into `into`, first waiting for something if `wait`; True once the bus is closing."""
        items = [self._pending.get()] if wait else []
        while not self._pending.empty():
            items.append(self._pending.get())
        into.extend(e for e in items if e is not None)
        return None in items

    def _reserve_low(self) -> bool:
        with self._changed:
            return not self._closed and self._reserved - self._last_id < self.RESERVE // 2

    def _save(self, conn: sqlite3.Connection, events: list[Event]) -> None:
        """Append events, with the reservation moved on if it runs low, in one transaction."""
        with self._changed:
            reserve = self._last_id + self.RESERVE if self._reserve_low() else None
        if not events and reserve is None:
            return
        event_table.append(conn, [(e.id, e.ts, e.type, e.data_text) for e in events], reserve)
        self._saved_since_forgetting += len(events)
        if self._saved_since_forgetting >= self.FORGET_EVERY:
            event_table.forget_before(conn, self._wall() - self._keep_s)
            self._saved_since_forgetting = 0
        with self._changed:
            if events:
                self._saved_id = events[-1].id
            if reserve is not None and not self._closed:
                self._reserved = reserve
            self._changed.notify_all()
