"""The `events` table: the log of everything that happened, by id (launcher/events.py numbers them)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from launcher.store.transactions import transaction

StoredEvent = tuple[int, float, str, str]  # (id, ts, type, data as JSON text)


def append(conn: sqlite3.Connection, events: Iterable[StoredEvent], reserve: int | None = None) -> None:
    """Save events and, if given, the new reserved id (see `reserved_ids`), in one transaction."""
    with transaction(conn):
        conn.executemany("INSERT INTO events (id, ts, type, data) VALUES (?, ?, ?, ?)", events)
        if reserve is not None:
            conn.execute("UPDATE event_ids SET reserved = ?", (reserve,))


def after(conn: sqlite3.Connection, last_id: int, *, limit: int, max_bytes: int | None = None) -> list[StoredEvent]:
    """The events after `last_id` in order: at most `limit`, and no more once `max_bytes` of data are read (the
    first one always), so that a page of an old log of large events stays small."""
    rows = conn.execute("SELECT id, ts, type, data FROM events WHERE id > ? ORDER BY id LIMIT ?", (last_id, limit))
    page: list[StoredEvent] = []
    size = 0
    for row in rows:  # the cursor reads on only as far as asked
        page.append(row)
        size += len(row[3])
        if max_bytes is not None and size >= max_bytes:
            break
    return page


def last_id(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0])


def reserved_ids(conn: sqlite3.Connection) -> int:
    """No event id above this was handed out: the next run numbers on past it."""
    return int(conn.execute("SELECT reserved FROM event_ids").fetchone()[0])


def reserve_ids(conn: sqlite3.Connection, up_to: int) -> None:
    with transaction(conn):
        conn.execute("UPDATE event_ids SET reserved = ?", (up_to,))


def count_after(conn: sqlite3.Connection, type: str, after_id: int) -> int:
    row = conn.execute("SELECT count(*) FROM events WHERE type = ? AND id > ?", (type, after_id)).fetchone()
    return int(row[0])


def forget_before(conn: sqlite3.Connection, ts: float) -> int:
    """Delete the events older than `ts` (seconds since the epoch), but never the newest one, nor any from the
    start of a shuffle still open on (a restart replays that shuffle's presses from the log). How many went.

    Events are numbered in the order they happened, so the first one young enough bounds what goes by its id."""
    with transaction(conn):
        (keep_from,) = conn.execute(
            "SELECT min(coalesce((SELECT id FROM events WHERE ts >= ? ORDER BY id LIMIT 1), "
            "                    (SELECT max(id) FROM events)), "
            "           coalesce((SELECT min(started_event) FROM shuffles WHERE ended_ts IS NULL), "
            "                    (SELECT max(id) FROM events)))",
            (ts,),
        ).fetchone()
        if keep_from is None:  # no event at all
            return 0
        return conn.execute("DELETE FROM events WHERE id < ?", (keep_from,)).rowcount
