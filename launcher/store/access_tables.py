"""The `pins`, `invite` and `sessions` tables: the PINs' salted hashes, the table PIN for the invite, and the
signed-in phones (launcher/access.py)."""

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


def table_pin(conn: sqlite3.Connection) -> str | None:
    """The table PIN as set, for the invite; None until it is known (an upgraded store)."""
    row = conn.execute("SELECT table_pin FROM invite").fetchone()
    return None if row is None else str(row[0])


def save_table_pin(conn: sqlite3.Connection, pin: str) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO invite (id, table_pin) VALUES (1, ?) "
            "ON CONFLICT (id) DO UPDATE SET table_pin = excluded.table_pin",
            (pin,),
        )


def forget_table_pin(conn: sqlite3.Connection) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM invite")


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


def end_sessions_of(conn: sqlite3.Connection, role: int, *, keep: str | None) -> None:
    """End every session of `role` but `keep` (a digest), those another process opened too."""
    with transaction(conn):
        conn.execute("DELETE FROM sessions WHERE role = ? AND digest IS NOT ?", (role, keep))


def forget_sessions_seen_before(conn: sqlite3.Connection, ts: float) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM sessions WHERE seen_ts < ?", (ts,))
