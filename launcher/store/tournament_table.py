"""The tournament tables: each tournament's setup, its rounds (the newest version of each, as JSON text), the keys
this table holds, and the tournament its admin chose."""

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


def put_round(conn: sqlite3.Connection, tournament: str, round_id: str, result: str) -> None:
    """Keep a round's newest version (a correction replaces the version before)."""
    with transaction(conn):
        conn.execute(
            "INSERT INTO tournament_rounds (tournament, round, result) VALUES (?, ?, ?) "
            "ON CONFLICT (tournament, round) DO UPDATE SET result = excluded.result",
            (tournament, round_id, result),
        )


def all_setups(conn: sqlite3.Connection) -> list[tuple[str, str, float]]:
    """(id, setup, created_ts) of every tournament, oldest first."""
    rows = conn.execute("SELECT id, setup, created_ts FROM tournaments ORDER BY created_ts, id").fetchall()
    return [(str(r[0]), str(r[1]), float(r[2])) for r in rows]


def rounds(conn: sqlite3.Connection, tournament: str) -> list[str]:
    """The results kept for one tournament, in the order they were first kept."""
    rows = conn.execute(
        "SELECT result FROM tournament_rounds WHERE tournament = ? ORDER BY rowid", (tournament,)
    ).fetchall()
    return [str(r[0]) for r in rows]


def add_key(conn: sqlite3.Connection, tournament: str, key: str) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO tournament_keys (tournament, key) VALUES (?, ?) ON CONFLICT (tournament) DO NOTHING",
            (tournament, key),
        )


def keys(conn: sqlite3.Connection) -> dict[str, str]:
    """Every tournament's key this table holds (hex), by id."""
    return {str(r[0]): str(r[1]) for r in conn.execute("SELECT tournament, key FROM tournament_keys").fetchall()}


def choose(conn: sqlite3.Connection, tournament: str) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT INTO tournament_choice (id, tournament) VALUES (1, ?) "
            "ON CONFLICT (id) DO UPDATE SET tournament = excluded.tournament",
            (tournament,),
        )


def chosen(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT tournament FROM tournament_choice WHERE id = 1").fetchone()
    return None if row is None else str(row[0])


def first_ask(conn: sqlite3.Connection, nonce: str, kept: int) -> bool:
    """Keep an ask's nonce among the newest `kept`; False if it was kept already (the same ask heard again)."""
    with transaction(conn):
        cursor = conn.execute("INSERT INTO tournament_asks (nonce) VALUES (?) ON CONFLICT (nonce) DO NOTHING", (nonce,))
        conn.execute("DELETE FROM tournament_asks WHERE rowid <= (SELECT max(rowid) FROM tournament_asks) - ?", (kept,))
    return cursor.rowcount == 1
