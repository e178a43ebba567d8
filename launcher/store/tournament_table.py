"""The `tournaments` and `tournament_rounds` tables: each tournament's setup and its scored rounds, as JSON text."""

from __future__ import annotations

import sqlite3

from launcher.store.transactions import transaction


def add(conn: sqlite3.Connection, tournament: str, setup: str, created_ts: float) -> bool:
    """Keep a tournament's setup; False if it was kept already (the same id arrives again over the broker)."""
    with transaction(conn):
        cursor = conn.execute(
            "INSERT INTO tournaments (id, setup, created_ts) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
            (tournament, setup, created_ts),
        )
    return cursor.rowcount == 1


def add_round(conn: sqlite3.Connection, tournament: str, round_id: str, result: str) -> bool:
    """Keep a scored round; False if it was kept already."""
    with transaction(conn):
        cursor = conn.execute(
            "INSERT INTO tournament_rounds (tournament, round, result) VALUES (?, ?, ?) "
            "ON CONFLICT (tournament, round) DO NOTHING",
            (tournament, round_id, result),
        )
    return cursor.rowcount == 1


def all_setups(conn: sqlite3.Connection) -> list[tuple[str, str, float]]:
    """(id, setup, created_ts) of every tournament, oldest first."""
    rows = conn.execute("SELECT id, setup, created_ts FROM tournaments ORDER BY created_ts, id").fetchall()
    return [(str(r[0]), str(r[1]), float(r[2])) for r in rows]


def rounds(conn: sqlite3.Connection, tournament: str) -> list[str]:
    """The results kept for one tournament, in the order they were kept."""
    rows = conn.execute(
        "SELECT result FROM tournament_rounds WHERE tournament = ? ORDER BY rowid", (tournament,)
    ).fetchall()
    return [str(r[0]) for r in rows]
