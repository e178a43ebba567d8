"""The `mqtt_outbox` table: how far the broker has acknowledged the event log, and the presses counted for it."""

from __future__ import annotations

import sqlite3

from launcher.store.transactions import transaction


def load(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """(last event id the broker acknowledged, presses counted), or None before MQTT was first used."""
    row = conn.execute("SELECT sent, presses FROM mqtt_outbox WHERE id = 1").fetchone()
    return None if row is None else (int(row[0]), int(row[1]))


def save(conn: sqlite3.Connection, sent: int, presses: int) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO mqtt_outbox (id, sent, presses) VALUES (1, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET sent = excluded.sent, presses = excluded.presses",
            (sent, presses),
        )
