"""The `mqtt_outbox` table: how far the broker has acknowledged the event log, and the presses counted for it; the
`mqtt_client` table: the random part of the table's client id."""

from __future__ import annotations

import secrets
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


def client_random(conn: sqlite3.Connection) -> str:
    """The random part of this table's MQTT client id, made at the first call and kept: the broker's persistent
    session finds the table again, and a client that only knows the table's name cannot take its id."""
    with transaction(conn):
        conn.execute(
            "INSERT INTO mqtt_client (id, random) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", (secrets.token_hex(8),)
        )
        row = conn.execute("SELECT random FROM mqtt_client WHERE id = 1").fetchone()
    return str(row[0])
