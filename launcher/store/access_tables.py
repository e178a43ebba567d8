"""The `pins`, `join_token` and `sessions` tables: the PINs' salted hashes, the invite's token, and the signed-in
phones (launcher/access/book.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from launcher.store.transactions import transaction


def pin_hashes(conn: sqlite3.Connection) -> list[tuple[str, bytes, bytes]]:
    """(role, salt, hash) of each PIN set."""
    return conn.execute("SELECT role, salt, hash FROM pins").fetchall()


def pin_digits(conn: sqlite3.Connection, role: str) -> int | None:
    """How many digits the PIN of `role` has; None if it is not set or its length is not known."""
    row = conn.execute("SELECT digits FROM pins WHERE role = ?", (role,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def save_pin_hash(conn: sqlite3.Connection, role: str, salt: bytes, digest: bytes, ts: float, digits: int) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO pins (role, salt, hash, changed_ts, digits) VALUES (?, ?, ?, ?, ?) ON CONFLICT (role) DO "
            "UPDATE SET salt = excluded.salt, hash = excluded.hash, changed_ts = excluded.changed_ts, "
            "digits = excluded.digits",
            (role, salt, digest, ts, digits),
        )


def forget_pin_hashes(conn: sqlite3.Connection, roles: Iterable[str]) -> None:
    with transaction(conn):
        conn.executemany("DELETE FROM pins WHERE role = ?", [(role,) for role in roles])


def join_token(conn: sqlite3.Connection) -> str | None:
    """The invite's token, which joins as the table PIN does; None until one is made."""
    row = conn.execute("SELECT token FROM join_token").fetchone()
    return None if row is None else str(row[0])


def save_join_token(conn: sqlite3.Connection, token: str, ts: float, *, only_if_none: bool = False) -> None:
    """The invite's token from now on (the one before no longer joins); `only_if_none`: unless one exists."""
    on_conflict = "NOTHING" if only_if_none else "UPDATE SET token = excluded.token, made_ts = excluded.made_ts"
    with transaction(conn):
        conn.execute(
            f"INSERT INTO join_token (id, token, made_ts) VALUES (1, ?, ?) ON CONFLICT (id) DO {on_conflict}",
            (token, ts),
        )


def forget_join_token(conn: sqlite3.Connection) -> None:
    with transaction(conn):
        conn.execute("DELETE FROM join_token")


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
