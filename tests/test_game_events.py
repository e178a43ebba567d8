"""The game's events say what changed, not the whole game: a long evening's events stay the size of one round, and
still carry enough for a phone to show the change at once (the round, the totals, who won)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.config import Config
from launcher.daemon import Daemon
from launcher.events import Event
from launcher.game.standings import RoundReplay
from launcher.table import games
from tests.conftest import MakeDaemon, joined_client

THREE = ["Ann", "Bob", "Cy"]
ROUNDS = "/api/games/current/rounds"
LONG_EVENING = 60  # rounds; each gives Ann one point, so that the default target of 500 is never reached
EVENT_BYTES = 4096  # the promise: an event of a game stays under 4 KB however many rounds it has had


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(Config().replace("state", dir=str(tmp_path)).replace("web", port=0))


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def send(client: FlaskClient, method: str, path: str, body: Any = None) -> dict[str, Any]:
    reply = client.open(path, method=method, json=body)
    assert reply.status_code in (200, 201), reply.get_json()
    return reply.get_json()["game"]


def events(daemon: Daemon, type: str) -> list[Event]:
    return [e for e in daemon.bus.events_after(0, limit=100_000) if e.type == type]


def scores_of(game: dict[str, Any]) -> dict[str, Any]:
    """What an event's `scores` holds: the scoreboard without the list of rounds (and the places kept per round)."""
    board = {key: value for key, value in game["scoreboard"].items() if key != "rounds"}
    board["statistics"] = {
        player: {key: value for key, value in stats.items() if key != "places"}
        for player, stats in board["statistics"].items()
    }
    return board


def test_a_round_scored_event_carries_the_round_and_the_scores_and_stays_small_all_evening(daemon, client) -> None:
    send(client, "POST", "/api/games", {"players": THREE})
    for _ in range(LONG_EVENING):
        game = send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    scored = events(daemon, "round.scored")
    assert len(scored) == LONG_EVENING
    last = scored[-1].data
    assert last["round"] == LONG_EVENING - 1 and last["winner"] == "Ann"
    assert last["result"] == game["scoreboard"]["rounds"][-1]  # the new round, as GET /api/game lists it
    assert last["scores"] == scores_of(game)
    assert last["scores"]["totals"] == {"Ann": LONG_EVENING, "Bob": 0, "Cy": 0}
    sizes = [len(e.json_text.encode()) for e in scored]
    assert max(sizes) < EVENT_BYTES
    assert sizes[-1] <= sizes[0] + 16  # a few more digits in the totals, not a round more per round


def test_a_correction_and_an_undo_say_which_round_and_carry_the_scores_after_them(daemon, client) -> None:
    send(client, "POST", "/api/games", {"players": THREE})
    for _ in range(LONG_EVENING):
        send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    game = send(client, "PUT", f"{ROUNDS}/3", {"winner": "Bob", "hands": {"Ann": 10, "Cy": 0}})
    edited = events(daemon, "round.edited")[-1]
    assert edited.data == {"round": 3, "scores": scores_of(game)}
    assert edited.data["scores"]["totals"] == {"Ann": LONG_EVENING - 1, "Bob": 10, "Cy": 0}
    game = send(client, "DELETE", f"{ROUNDS}/last")
    undone = events(daemon, "round.undone")[-1]
    assert undone.data == {"round": LONG_EVENING - 1, "scores": scores_of(game)}
    assert max(len(e.json_text.encode()) for e in (edited, undone)) < EVENT_BYTES


def test_the_game_finished_event_names_winners_and_losers_with_the_final_scores(daemon, client) -> None:
    send(client, "POST", "/api/games", {"players": THREE, "target": 100})
    send(client, "POST", ROUNDS, {"winner": "Bob", "hands": {"Ann": 60, "Cy": 0}})
    game = send(client, "POST", ROUNDS, {"winner": "Bob", "hands": {"Ann": 40, "Cy": 5}})
    (finished,) = events(daemon, "game.finished")
    assert finished.data == {"winners": ["Bob"], "losers": [], "scores": scores_of(game)}
    assert finished.data["scores"]["over"] is True and finished.data["scores"]["totals"]["Bob"] == 105


def test_what_the_log_stores_of_an_event_is_what_the_phones_were_sent(daemon, client) -> None:
    send(client, "POST", "/api/games", {"players": THREE})
    send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    live = events(daemon, "round.scored")[-1]
    daemon.bus.close()  # everything written
    with daemon.store.connect() as conn:
        (stored,) = conn.execute("SELECT data FROM events WHERE id = ?", (live.id,)).fetchone()
    assert json.loads(stored) == live.data


def test_a_press_in_a_long_game_replays_none_of_its_rounds(
    daemon: Daemon, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A press changes the table and the launcher's counts, never a round: its cost must not grow with the evening
    (it replayed and re-checked every round of the game, twice, at every press)."""
    send(client, "POST", "/api/games", {"players": THREE})
    for _ in range(30):
        send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    replayed: list[int] = []
    play_round = RoundReplay._play_round

    def counted(self: RoundReplay, state: Any, index: int, entry: Any) -> Any:
        replayed.append(index)
        return play_round(self, state, index, entry)

    monkeypatch.setattr(RoundReplay, "_play_round", counted)
    before = client.get("/api/game").get_json()["game"]["scoreboard"]["statistics"]["Bob"]["presses"]
    replayed.clear()
    assert daemon.games.pressed(False, 0, None) == "Bob"  # Ann won the last round and deals: Bob plays first
    assert replayed == []
    after = client.get("/api/game").get_json()["game"]["scoreboard"]["statistics"]["Bob"]["presses"]
    assert after == before + 1


def test_scoring_a_round_in_a_long_game_plays_that_round_alone(
    daemon: Daemon, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scoring the next round must cost the same at the 30th round as at the first (it replayed and re-checked
    every round before it, so a long evening's scoring held the daemon for longer and longer)."""
    send(client, "POST", "/api/games", {"players": THREE})
    for _ in range(30):
        send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    played: list[int] = []
    play_round = RoundReplay._play_round

    def counted(self: RoundReplay, state: Any, index: int, entry: Any) -> Any:
        played.append(index)
        return play_round(self, state, index, entry)

    monkeypatch.setattr(RoundReplay, "_play_round", counted)
    answer = send(client, "POST", ROUNDS, {"winner": "Bob", "hands": {"Ann": 2, "Cy": 3}})
    assert played == [30]
    totals = answer["scoreboard"]["totals"]
    assert totals == {"Ann": 30 * (0 + 1), "Bob": 2 + 3, "Cy": 0}  # the winner collects the hands' points


def test_the_phones_reading_the_game_after_a_change_cost_one_view(
    daemon: Daemon, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every phone reads the whole game after each press; at a long game's end that view is its largest answer.
    It is made once per change of the game, not once per phone."""
    send(client, "POST", "/api/games", {"players": THREE})
    send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    built: list[int] = []
    real = games.game_view
    monkeypatch.setattr(games, "game_view", lambda *args: (built.append(1), real(*args))[1])
    daemon.games.pressed(False, 0, None)
    answers = [client.get("/api/game").get_json()["game"] for _ in range(4)]  # four phones
    assert len(built) == 1 and all(a == answers[0] for a in answers)
    assert answers[0]["scoreboard"]["statistics"]["Bob"]["presses"] == 1
    daemon.games.pressed(False, 0, None)  # the next change is seen
    assert client.get("/api/game").get_json()["game"]["scoreboard"]["statistics"]["Cy"]["presses"] == 1
    assert len(built) == 2


def test_presses_and_rounds_save_the_game_through_one_kept_connection(
    daemon: Daemon, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every press and every round is saved before it is answered; opening an SQLite connection and reading the
    schema for each save cost more than the save itself (a Pi Zero feels it at every press)."""
    send(client, "POST", "/api/games", {"players": THREE})
    send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    opened: list[str] = []
    real_connect = sqlite3.connect
    saving = threading.get_ident()  # the saves are made on the pressing thread; others (the PIN hashing) may open

    def connect(*a: Any, **k: Any) -> sqlite3.Connection:
        if threading.get_ident() == saving:
            opened.append(str(a[0]))
        return real_connect(*a, **k)

    monkeypatch.setattr(sqlite3, "connect", connect)
    for _ in range(5):
        daemon.games.pressed(False, 0, None)
    send(client, "POST", ROUNDS, {"winner": "Bob", "hands": {"Ann": 2, "Cy": 1}})
    assert opened == []
    daemon.close()  # and the kept connection is closed with the daemon: the saves are in the store
    with contextlib.closing(real_connect(daemon.store.path)) as conn:
        (state,) = conn.execute("SELECT state FROM games ORDER BY id DESC LIMIT 1").fetchone()
        assert conn.execute("SELECT count(*) FROM game_rounds").fetchone() == (2,)
    assert sum(counts["presses"] for counts in json.loads(state)["game"]["launcher"].values()) == 5


def store_rows(daemon: Daemon, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn:
        return conn.execute(sql).fetchall()


def test_a_press_saves_what_it_changed_the_same_at_the_first_round_as_at_the_sixtieth(
    daemon: Daemon, client: FlaskClient
) -> None:
    """A round is stored once, when it is scored; a press saves the table and the counts, whose size does not
    grow with the game (the whole game saved at every press cost a long game's presses more and more)."""
    send(client, "POST", "/api/games", {"players": THREE})
    saved = []
    for number in range(1, LONG_EVENING + 1):
        send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
        if number in (1, LONG_EVENING):
            daemon.games.pressed(True, 1, None)
            saved.append(store_rows(daemon, "SELECT length(state) FROM games")[0][0])
    rounds = store_rows(daemon, "SELECT rowid, * FROM game_rounds ORDER BY round")
    assert [r[2] for r in rounds] == list(range(LONG_EVENING))
    daemon.games.pressed(True, 1, None)
    assert store_rows(daemon, "SELECT rowid, * FROM game_rounds ORDER BY round") == rounds  # not one written again
    assert saved[1] - saved[0] < 16  # a few more digits in the press counts at most


def test_the_phones_reading_the_game_after_a_change_cost_one_encoding(
    daemon: Daemon, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Encoding a long game as JSON is the largest piece of work an answer does, in one call that keeps every other
    thread waiting, a press included: it is done once per change, not once per phone."""
    send(client, "POST", "/api/games", {"players": THREE})
    send(client, "POST", ROUNDS, {"winner": "Ann", "hands": {"Bob": 0, "Cy": 1}})
    client.get("/api/game")
    encoded: list[Any] = []
    real = daemon.app.json.dumps
    monkeypatch.setattr(daemon.app.json, "dumps", lambda obj, **kw: (encoded.append(obj), real(obj, **kw))[1])
    daemon.games.pressed(False, 0, None)
    answers = [client.get("/api/game") for _ in range(4)]  # four phones
    assert [a.status_code for a in answers] == [200] * 4 and answers[0].mimetype == "application/json"
    assert all(a.get_json() == answers[0].get_json() for a in answers)
    assert answers[0].get_json()["game"]["scoreboard"]["statistics"]["Bob"]["presses"] == 1
    assert answers[0].get_json()["rules"]["rulesets"]  # the choices the page offers come with it, as before
    assert len(encoded) == 1
    daemon.games.pressed(False, 0, None)  # the next change is seen, and encoded once more
    assert client.get("/api/game").get_json()["game"]["scoreboard"]["statistics"]["Cy"]["presses"] == 1
    assert len(encoded) == 2
