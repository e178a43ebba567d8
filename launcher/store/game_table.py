"""The `games` table, each game's state but its rounds as JSON (the newest game is the current one), and
`game_rounds`, each round of a game as entered, a row written when it is scored: a change saves what it changed,
so that a press costs the same at the 500th round as at the first.

Readers get the whole state back as one JSON text, the rounds in their place (`$.game.rounds`), as it was stored
before the rounds had their table; a state an edit or damage made unreadable is given as it is stored."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from launcher.store.transactions import transaction

# The whole state of the `games` row in the query, assembled by SQLite (a reader never parses a row twice). A round
# that is not JSON comes as a string, which reading the game refuses by name.
STATE = """
    CASE WHEN NOT json_valid(games.state) THEN games.state
         WHEN json_type(games.state, '$.game') IS NOT 'object' THEN games.state
         WHEN json_type(games.state, '$.game.rounds') IS NOT NULL THEN games.state
         ELSE json_set(games.state, '$.game.rounds', json((
             SELECT json_group_array(CASE WHEN json_valid(entry) THEN json(entry) ELSE entry END)
             FROM (SELECT entry FROM game_rounds WHERE game = games.id ORDER BY round))))
    END"""


def new(conn: sqlite3.Connection, state: str, rounds: Sequence[str], ts: float) -> int:
    """A new current game (the newest is current): its state but the rounds, and each round's entry; its id."""
    with transaction(conn):
        game_id = conn.execute("INSERT INTO games (state, started_ts) VALUES (?, ?)", (state, ts)).lastrowid or 0
        conn.executemany(
            "INSERT INTO game_rounds (game, round, entry) VALUES (?, ?, ?)",
            [(game_id, number, entry) for number, entry in enumerate(rounds)],
        )
        return game_id


def save(conn: sqlite3.Connection, game_id: int, state: str, rounds: int, changed: Mapping[int, str]) -> None:
    """The game's state but its rounds; it has `rounds` rounds, of which those `changed` (number from 0 → entry)
    are new or corrected: the others are stored already."""
    with transaction(conn):
        conn.execute("UPDATE games SET state = ? WHERE id = ?", (state, game_id))
        conn.execute("DELETE FROM game_rounds WHERE game = ? AND round >= ?", (game_id, rounds))
        conn.executemany(
            "INSERT OR REPLACE INTO game_rounds (game, round, entry) VALUES (?, ?, ?)",
            [(game_id, number, entry) for number, entry in changed.items()],
        )


def current(conn: sqlite3.Connection) -> tuple[int, str] | None:
    """(id, whole state) of the current game."""
    row = conn.execute(f"SELECT id, {STATE} FROM games ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def listed_from(conn: sqlite3.Connection, first: int, limit: int) -> list[tuple[int, Any, str]]:
    """(id, started_ts, whole state) of up to `limit` games from id `first` on, in order; the start as stored,
    which only a damaged store holds as anything but a number."""
    rows = conn.execute(
        f"SELECT id, started_ts, {STATE} FROM games WHERE id >= ? ORDER BY id LIMIT ?", (first, limit)
    ).fetchall()
    return [(int(i), ts, str(state)) for i, ts, state in rows]
