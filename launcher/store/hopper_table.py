"""The `hopper` table: the hopper's count, loaded and dispensed, in one row."""

from __future__ import annotations

import sqlite3

from launcher.store.transactions import transaction


def load(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """(loaded, dispensed) as last saved, or None on a first start."""
    row = conn.execute("SELECT loaded, dispensed FROM hopper WHERE id = 1").fetchone()
    return None if row is None else (int(row[0]), int(row[1]))


def save(conn: sqlite3.Connection, loaded: int, dispensed: int) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO hopper (id, loaded, dispensed) VALUES (1, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET loaded = excluded.loaded, dispensed = excluded.dispensed",
            (loaded, dispensed),
        )
