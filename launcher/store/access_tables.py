"""The `pins` and `sessions` tables: the PINs' salted hashes and the signed-in phones (launcher/access.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from launcher.store.transactions import transaction


def pin_hashes(conn: sqlite3.Connection) -> list[tuple[str, bytes, bytes]]:
    """(role, salt, hash) of each PIN set."""
    return conn.execute("SELECT role, salt, hash FROM pins").fetchall()


def save_pin_hash(conn: sqlite3.Connection, role: str, salt: bytes, digest: bytes, ts: float) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO pins (role, salt, hash, changed_ts) VALUES (?, ?, ?, ?) ON CONFLICT (role) DO UPDATE "
            "SET salt = excluded.salt, hash = excluded.hash, changed_ts = excluded.changed_ts",
            (role, salt, digest, ts),
        )


def forget_pin_hashes(conn: sqlite3.Connection, roles: Iterable[str]) -> None:
    with transaction(conn):
        conn.executemany("DELETE FROM pins WHERE role = ?", [(role,) for role in roles])


def sessions(conn: sqlite3.Connection) -> list[tuple[str, int, float]]:
    """(digest, role, seen_ts) of every session."""
    return conn.execute("SELECT digest, role, seen_ts FROM sessions").fetchall()


def open_session(conn: sqlite3.Connection, digest: str, role: int, ts: float, *, ended: Iterable[str]) -> None:
    with transaction(conn):
        conn.executemany("DELETE FROM sessions WHERE digest = ?", [(d,) for d in ended])
        conn.execute(
            "INSERT INTO sessions (digest, role, created_ts, seen_ts) VALUES (?, ?, ?, ?)", (digest, role, ts, ts)
        )


def session_seen(conn: sqlite3.Connection, digest: str, ts: float) -> None:
    with transaction(conn):
        conn.execute("UPDATE sessions SET seen_ts = ? WHERE digest = ?", (ts, digest))


def end_sessions(conn: sqlite3.Connection, digests: Iterable[str]) -> None:
    with transaction(conn):
        conn.executemany("DELETE FROM sessions WHERE digest = ?", [(d,) for d in digests])


def forget_sessions_seen_before(conn: sqlite3.Connection, ts: float) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM sessions WHERE seen_ts < ?", (ts,))
