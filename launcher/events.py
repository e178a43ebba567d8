"""Events: what happened, numbered 1, 2, 3, … for ever, kept in memory for the live streams and in SQLite.

`EventBus.publish` only touches memory, so the controller may call it right after starting the motor; it hands
each event to the store's write-behind (launcher/store/write_behind.py), which writes it within SAVE_WITHIN_S, in
the next commit made (a game's change after a press) or one of its own: the log may lag the stream by that much.

Phones see an event before the store has it, so the log alone cannot say which ids were shown. The store keeps a
reserved id instead: no id above it is ever handed out, and it is on the disk before any id under it is. A run
reserves RESERVE ids past the last one at its start; the reservation is moved on (handed to the write-behind, due
at once) whenever fewer than half are left, and counts only once written; a clean stop lowers it to the last id.
So whatever ends a run (a kill, a power cut, a full disk, a failed write), the next one numbers on past every id
that may have been shown.
"""

from __future__ import annotations

import contextlib
import enum
import json
import logging
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from launcher.store import Store, StoreError, WriteBehind, event_table

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
    TOURNAMENT_SET_UP = "tournament.set_up"  # here or at another table (launcher/home/tournament.py)
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

    # Events kept in memory for replay, at most this many and this many bytes of their frames, as streams are sent
    # them (a game's scoreboard makes some events large, and a Chinese name takes 3 bytes a character: the bound in
    # bytes keeps the daemon's memory flat on a 512 MB Pi); older ones are read from the store.
    RECENT = 2048
    RECENT_BYTES = 512 * 1024
    PAGE_BYTES = 256 * 1024  # of data read from the store for one page of a replay (an old log's events may be large)
    # Ids reserved ahead on the disk (see the module's docstring). The store writes events within SAVE_WITHIN_S, so
    # with a working disk it is never this far behind; only a store that refused every write for RESERVE // 2 events
    # (a full disk) can make publish wait for it.
    RESERVE = 10_000
    # Each event waits at most this long to be written (the store's write-behind, launcher/store/write_behind.py), so
    # that a press's events go in one commit with the game's change instead of a commit each: the SD card's wear.
    # A kill or a power cut loses at most this much of the log; a failed write is tried again every second.
    SAVE_WITHIN_S = 10.0
    # Saved events between two looks for events older than the log keeps (and one look at the start): a look reads
    # a row or two and deletes a range of ids, so a long-running daemon's log stays `keep_days` long.
    FORGET_EVERY = 1000

    def __init__(
        self,
        store: Store,
        *,
        keep_days: int = 90,
        wall: Callable[[], float] = time.time,
        writes: WriteBehind | None = None,
    ) -> None:
        """`keep_days`: how long the log keeps an event (games, rounds and shuffle records are kept for ever in
        their own tables). `wall`: the events' timestamps, seconds since the epoch. `writes`: the daemon's
        write-behind (shared, so that events go in the commits of the game's changes), else one of its own."""
        self._store = store
        self._keep_s = keep_days * 24 * 3600
        self._wall = wall
        with store.connect() as conn:
            self._last_id = max(event_table.last_id(conn), event_table.reserved_ids(conn))
            self._reserved = self._last_id + self.RESERVE
            event_table.reserve_ids(conn, self._reserved)  # on the disk before any id is handed out
            event_table.forget_before(conn, wall() - self._keep_s)
        self._own_writes = writes is None
        self._writes = WriteBehind(store) if writes is None else writes
        self._reserving = False  # a move of the reservation is handed to the store and not written yet
        self._saved_since_forgetting = 0
        self._saved_id = self._last_id
        self._recent: deque[Event] = deque()
        self._recent_bytes = 0  # the frames of the events in _recent
        self._changed = threading.Condition()
        self._listeners: list[Callable[[], None]] = []  # told after each event and when the streams end
        self._streams_ended = False
        self._closed = False

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
            self._hand_over(event)
            self._changed.notify_all()
        self._tell()
        return event

    def _hand_over(self, event: Event) -> None:
        """With `_changed` held: the event to the store's write-behind, and the reservation moved on if it runs low."""
        row = (event.id, event.ts, event.type, event.data_text)
        self._writes.later(
            f"event {event.id:015d}",  # each its own, in order
            lambda conn: event_table.append(conn, [row]),
            within_s=self.SAVE_WITHIN_S,
            saved=lambda: self._saved(event.id),
        )
        if not self._reserving and self._reserved - self._last_id < self.RESERVE // 2:
            self._reserving = True
            reserve = self._last_id + self.RESERVE
            self._writes.later(
                "event ids",
                lambda conn: event_table.reserve_ids(conn, reserve),
                within_s=0,
                saved=lambda: self._reserved_to(reserve),
            )

    def _forget_old(self, conn: sqlite3.Connection) -> None:
        event_table.forget_before(conn, self._wall() - self._keep_s)

    def _saved(self, event_id: int) -> None:
        with self._changed:
            self._saved_id = max(self._saved_id, event_id)
            self._saved_since_forgetting += 1
            if self._saved_since_forgetting >= self.FORGET_EVERY:
                self._saved_since_forgetting = 0
                self._writes.later("old events", self._forget_old, within_s=self.SAVE_WITHIN_S)
            self._changed.notify_all()

    def _reserved_to(self, reserve: int) -> None:
        with self._changed:
            self._reserving = False
            if not self._closed:
                self._reserved = reserve
            self._changed.notify_all()

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
        self._recent_bytes += len(event.frame)
        while len(self._recent) > self.RECENT or (self._recent_bytes > self.RECENT_BYTES and len(self._recent) > 1):
            self._recent_bytes -= len(self._recent.popleft().frame)

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
        if recent and self._saved_id < recent[0].id - 1:  # the store must hold everything older than memory has
            with contextlib.suppress(StoreError):  # a full disk: the store gives what it has
                self._writes.flush()
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
        """End the streams, write what is pending and lower the reservation. Safe to call twice."""
        self.end_streams()
        with self._changed:
            if self._closed:
                return
            self._closed = True
            self._changed.notify_all()
        try:
            self._writes.flush()
        except StoreError as e:
            with self._changed:
                unsaved = self._last_id - self._saved_id  # numbered in order, saved in order
            log.error("%s: %d events shown to phones are not in the log", e, unsaved)
        with self._changed:  # no id is handed out from now on: the next run may go on right after the last one
            self._reserved = last = self._last_id
        try:
            self._writes.now(lambda conn: event_table.reserve_ids(conn, last))
        except StoreError as e:  # the reservation on the disk stands: the next run leaves a gap, never reuses an id
            log.error("%s; the next start numbers events past the ids reserved", e)
        if self._own_writes:
            self._writes.close()
