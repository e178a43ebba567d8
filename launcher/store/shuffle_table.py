"""The `shuffles` table: each shuffle of the schedule, its seed and commitment, and its record once revealed."""

from __future__ import annotations

import sqlite3

from launcher.store.transactions import transaction


def start(
    conn: sqlite3.Connection, number: int, profile: str, seed: str, commitment: str, event_id: int, ts: float
) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO shuffles (number, profile, seed, commitment, started_event, started_ts) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (number, profile, seed, commitment, event_id, ts),
        )


def end(conn: sqlite3.Connection, number: int, record: str, ts: float) -> None:
    with transaction(conn):
        conn.execute("UPDATE shuffles SET record = ?, ended_ts = ? WHERE number = ?", (record, ts, number))


def unended(conn: sqlite3.Connection) -> tuple[int, str, str, int, str] | None:
    """(number, profile, seed, started_event, restarts) of the shuffle not ended yet, if any."""
    row: tuple[int, str, str, int, str] | None = conn.execute(
        "SELECT number, profile, seed, started_event, restarts FROM shuffles WHERE ended_ts IS NULL "
        "ORDER BY number DESC"
    ).fetchone()
    return row


def set_restarts(conn: sqlite3.Connection, number: int, restarts: str) -> None:
    with transaction(conn):
        conn.execute("UPDATE shuffles SET restarts = ? WHERE number = ?", (restarts, number))


def last_number(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(number), 0) FROM shuffles").fetchone()[0])


def played_between(conn: sqlite3.Connection, start_ts: float, end_ts: float) -> list[int]:
    """The numbers of the shuffles played at some time from `start_ts` to `end_ts`, in order."""
    rows = conn.execute(
        "SELECT number FROM shuffles WHERE started_ts <= ? AND coalesce(ended_ts, ?) >= ? ORDER BY number",
        (end_ts, end_ts, start_ts),
    )
    return [int(number) for (number,) in rows]


def record(conn: sqlite3.Connection, number: int) -> tuple[str, bool] | None:
    """(record, ended) of a shuffle, or None."""
    row = conn.execute("SELECT record, ended_ts IS NOT NULL FROM shuffles WHERE number = ?", (number,)).fetchone()
    return None if row is None else (row[0], bool(row[1]))
