"""A game's rounds have a table of their own, each row written once when its round is scored (corrected or undone
only by a correction or an undo). A store whose games were saved whole, rounds and all, is upgraded without losing
a round, and every reader (the desk, the history, the export) finds the same game as before."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.daemon import Daemon
from launcher.store import MIGRATIONS, STORE_FILE, Store
from launcher.table import game_requests
from launcher.table.export import stored_games
from tests.conftest import joined_client, local_daemon

PLAYERS = ["Ann", "Bob", "Cy"]
ROUNDS = "/api/games/current/rounds"
BEFORE = next(i for i, sql in enumerate(MIGRATIONS) if "CREATE TABLE game_rounds" in sql)


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(sql).fetchall()


def old_state(rounds: int, target: int = 500) -> dict[str, Any]:
    """A game's whole state as the version before saved it at every change: the rounds inside."""
    game, table = game_requests.new_game({"players": PLAYERS, "target": target})
    for n in range(rounds):
        game.score_round(PLAYERS[n % 3], {p: {"7": 1 + n % 2} for p in PLAYERS if p != PLAYERS[n % 3]})
    return {"game": game.to_dict(), "table": table.to_dict(), "undo": None}


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """A store of the schema before: an ended game, a damaged row, and the game in play."""
    path = tmp_path / STORE_FILE
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        for migration in MIGRATIONS[:BEFORE]:
            conn.executescript(migration)
        conn.execute(f"PRAGMA user_version = {BEFORE}")
        states = [json.dumps(old_state(4, target=30)), "{not json", json.dumps(old_state(7))]
        conn.executemany("INSERT INTO games (state, started_ts) VALUES (?, ?)", [(s, 1e9) for s in states])
    return path


def test_the_upgrade_moves_every_round_to_its_own_row_and_loses_none(old_store: Path) -> None:
    before = rows(old_store, "SELECT id, state FROM games ORDER BY id")
    Store(old_store)
    assert rows(old_store, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    after = dict(rows(old_store, "SELECT id, state FROM games"))
    for game_id, text in before:
        if game_id == 2:
            assert after[game_id] == text  # damaged: kept exactly as it was
            continue
        old = json.loads(text)
        kept = json.loads(after[game_id])
        assert "rounds" not in kept["game"]
        assert kept == {**old, "game": {k: v for k, v in old["game"].items() if k != "rounds"}}
        stored = rows(old_store, f"SELECT round, entry FROM game_rounds WHERE game = {game_id} ORDER BY round")
        assert [(n, json.loads(entry)) for n, entry in stored] == list(enumerate(old["game"]["rounds"]))


def test_the_upgraded_games_read_as_they_were_saved(old_store: Path) -> None:
    before = {i: json.loads(text) for i, text in rows(old_store, "SELECT id, state FROM games") if i != 2}
    with local_daemon(old_store.parent) as running:
        exported = {g.id: g.game.to_dict() for g in stored_games(running.store, running.history)}
        assert exported == {i: state["game"] for i, state in before.items()}  # the damaged one left out
        assert running.history.page(10)["games"][0]["rounds"] == 4  # the ended game, summarized at the start
        assert len(running.games.view()["scoreboard"]["rounds"]) == 7  # type: ignore[index]


def test_corrections_and_undos_write_their_rounds_and_a_restart_reads_the_same_game(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        view = _corrected_and_undone(daemon, joined_client(daemon))
    with local_daemon(tmp_path) as restarted:
        assert restarted.games.view() == view


def _corrected_and_undone(daemon: Daemon, client: FlaskClient) -> dict[str, Any] | None:
    assert client.post("/api/games", json={"players": PLAYERS}).status_code == 201
    for n in range(6):
        reply = client.post(
            ROUNDS, json={"winner": PLAYERS[n % 3], "hands": {p: 1 for p in PLAYERS if p != PLAYERS[n % 3]}}
        )
        assert reply.status_code == 201
    written = rows(daemon.store.path, "SELECT rowid, round FROM game_rounds ORDER BY round")
    assert client.put(f"{ROUNDS}/1", json={"winner": "Cy", "hands": {"Ann": 9, "Bob": 0}}).status_code == 200
    assert client.delete(f"{ROUNDS}/last").status_code == 200
    again = rows(daemon.store.path, "SELECT rowid, round FROM game_rounds ORDER BY round")
    assert [r for _, r in again] == [0, 1, 2, 3, 4]
    assert [w for w in written if w[1] != 1][:4] == [a for a in again if a[1] != 1]  # only the corrected one
    return daemon.games.view()
