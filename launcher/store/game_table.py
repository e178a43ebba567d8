"""The `games` table: each game's state as JSON; the newest is the current game."""

from __future__ import annotations

import sqlite3
from typing import Any

from launcher.store.transactions import transaction


def new(conn: sqlite3.Connection, state: str, ts: float) -> int:
    """A new current game (the newest is current); its id."""
    with transaction(conn):
        return conn.execute("INSERT INTO games (state, started_ts) VALUES (?, ?)", (state, ts)).lastrowid or 0


def save(conn: sqlite3.Connection, game_id: int, state: str) -> None:
    with transaction(conn):
        conn.execute("UPDATE games SET state = ? WHERE id = ?", (state, game_id))


def current(conn: sqlite3.Connection) -> tuple[int, str] | None:
    row = conn.execute("SELECT id, state FROM games ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def listed_from(conn: sqlite3.Connection, first: int, limit: int) -> list[tuple[int, Any, str]]:
    """(id, started_ts, state) of up to `limit` games from id `first` on, in order; the start as stored, which only
    a damaged store holds as anything but a number."""
    rows = conn.execute(
        "SELECT id, started_ts, state FROM games WHERE id >= ? ORDER BY id LIMIT ?", (first, limit)
    ).fetchall()
    return [(int(i), ts, str(state)) for i, ts, state in rows]
