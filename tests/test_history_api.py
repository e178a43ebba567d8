"""The history over HTTP, on the daemon with simulated hardware: finished and abandoned games in the list and in
full, paging, the players and the leaderboards, a restart, the exports and who may take them, and bad queries
answered 400 or 404 with their code (docs/HISTORY.md)."""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.cli import main
from launcher.config import Config
from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, joined_client


def config(tmp_path: Path) -> Config:
    base = Config().replace("state", dir=str(tmp_path)).replace("web", port=0)
    return base.replace("sim", cards_per_second=400.0, card_block_ms=1.0).replace("dispense", min_rest_ms=0)


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(config(tmp_path))


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def ok(reply: Any, status: int = 200) -> Any:
    assert reply.status_code == status, reply.get_json()
    return reply.get_json()


def refused(reply: Any, status: int, code: str) -> dict[str, Any]:
    body = reply.get_json()
    assert (reply.status_code, body["error"]["code"]) == (status, code), body
    assert body["error"]["message"]
    return body["error"]


def win(client: FlaskClient, players: list[str], winner: str, **settings: Any) -> int:
    """A game of `players` that `winner` wins in one round; its id."""
    game = ok(client.post("/api/games", json={"players": players, "target": 50, **settings}), 201)["game"]
    hands = {p: 50 for p in players if p != winner}
    ok(client.post("/api/games/current/rounds", json={"winner": winner, "hands": hands}), 201)
    return int(game["id"])


def test_a_finished_game_is_in_the_history_with_its_rounds_rules_and_final_scores(client: FlaskClient) -> None:
    game_id = win(client, ["Ann", "Bob", "Cy"], "Bob", house_rules={"stacking": True})
    listed = ok(client.get("/api/history/games"))
    assert [g["id"] for g in listed["games"]] == [game_id] and listed["next_before"] is None
    assert listed["games"][0]["winners"] == ["Bob"] and listed["games"][0]["outcome"] == "finished"
    past = ok(client.get(f"/api/history/games/{game_id}"))
    assert (past["mode"], past["target"], past["house_rules"]["stacking"]) == ("winner_collects", 50, True)
    assert past["scoreboard"]["totals"] == {"Ann": 0, "Bob": 100, "Cy": 0}
    assert past["scoreboard"]["rounds"][0]["winner"] == "Bob"
    assert set(past["longest_droughts"]) == {"Ann", "Bob", "Cy"}


def test_a_game_replaced_before_it_ended_is_abandoned_and_the_game_in_play_is_not_history(client: FlaskClient) -> None:
    first = ok(client.post("/api/games", json={"players": ["Ann", "Bob"]}), 201)["game"]["id"]
    ok(client.post("/api/games/current/rounds", json={"winner": "Ann", "hands": {"Bob": 12}}), 201)
    refused(client.get(f"/api/history/games/{first}"), 404, "no_such_game")  # still being played
    second = ok(client.post("/api/games", json={"players": ["Cy", "Dee"]}), 201)["game"]["id"]
    games = ok(client.get("/api/history/games"))["games"]
    assert [(g["id"], g["outcome"]) for g in games] == [(first, "abandoned")]
    refused(client.get(f"/api/history/games/{second}"), 404, "no_such_game")


def test_pages_go_newest_first_and_next_before_asks_for_the_next(client: FlaskClient) -> None:
    ids = [win(client, ["Ann", "Bob"], "Ann") for _ in range(5)]
    first = ok(client.get("/api/history/games?limit=2"))
    assert [g["id"] for g in first["games"]] == ids[::-1][:2]
    second = ok(client.get(f"/api/history/games?limit=2&before={first['next_before']}"))
    assert [g["id"] for g in second["games"]] == ids[::-1][2:4]
    last = ok(client.get(f"/api/history/games?limit=2&before={second['next_before']}"))
    assert [g["id"] for g in last["games"]] == ids[:1] and last["next_before"] is None


def test_the_players_and_the_leaderboards_follow_the_games(client: FlaskClient) -> None:
    win(client, ["Ann", "Bob"], "Ann")
    win(client, [" ann"[1:], "Cy"], "Cy", mode="lowest_total")
    win(client, ["ANN", "Bob"], "ANN")
    players = {p["player"]: p for p in ok(client.get("/api/history/players"))["players"]}
    assert set(players) == {"ANN", "Bob", "Cy"} and (players["ANN"]["games"], players["ANN"]["wins"]) == (3, 2)
    for period in ("evening", "month", "all"):
        board = ok(client.get(f"/api/history/leaderboard?period={period}"))
        top = board["players"][0]
        assert (top["rank"], top["player"], top["wins"]) == (1, "ANN", 2), period
    lowest = ok(client.get("/api/history/leaderboard?period=all&mode=lowest_total"))
    assert [(p["player"], p["wins"]) for p in lowest["players"]] == [("Cy", 1), ("ann", 0)]
    assert lowest["mode"] == "lowest_total" and lowest["period"] == "all"


def test_a_restart_keeps_the_history_and_resumes_the_game_in_play(tmp_path: Path) -> None:
    running = Daemon(config(tmp_path))
    try:
        client = joined_client(running)
        done = win(client, ["Ann", "Bob"], "Bob")
        ok(client.post("/api/games", json={"players": ["Ann", "Bob", "Cy"]}), 201)
        ok(client.post("/api/games/current/rounds", json={"winner": "Cy", "hands": {"Ann": 3, "Bob": 4}}), 201)
    finally:
        running.close()
    again = Daemon(config(tmp_path))
    try:
        client = again.app.test_client()
        current = ok(client.get("/api/game"))["game"]
        assert current["players"] == ["Ann", "Bob", "Cy"] and len(current["scoreboard"]["rounds"]) == 1
        assert [g["id"] for g in ok(client.get("/api/history/games"))["games"]] == [done]
    finally:
        again.close()


def test_an_undo_after_the_end_takes_the_game_back_out_of_the_history(client: FlaskClient) -> None:
    game_id = win(client, ["Ann", "Bob"], "Ann")
    ok(client.delete("/api/games/current/rounds/last"))
    assert ok(client.get("/api/history/games"))["games"] == []
    refused(client.get(f"/api/history/games/{game_id}"), 404, "no_such_game")
    ok(client.post("/api/games/current/rounds", json={"winner": "Bob", "hands": {"Ann": 50}}), 201)
    assert ok(client.get("/api/history/games"))["games"][0]["winners"] == ["Bob"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("/api/history/games?limit=0", "limit"),
        ("/api/history/games?limit=101", "limit"),
        ("/api/history/games?limit=ten", "limit"),
        ("/api/history/games?limit=-1", "limit"),
        ("/api/history/games?before=0", "before"),
        ("/api/history/games?before=99999999999999999999", "before"),
        ("/api/history/games?limit=2&limit=3", "limit"),
        ("/api/history/games?page=2", "page"),
        ("/api/history/leaderboard?period=week", "period"),
        ("/api/history/leaderboard?mode=poker", "mode"),
        ("/api/history/leaderboard?period=", "period"),
        ("/api/history/players?x=1", "x"),
        ("/api/history/export?format=xlsx", "format"),
        ("/api/history/export?game=abc", "game"),
    ],
)
def test_a_bad_query_is_refused_naming_the_parameter(client: FlaskClient, query: str, field: str) -> None:
    error = refused(client.get(query), 400, "bad_query")
    assert error["field"] == field and field in error["message"]


@pytest.mark.parametrize("game_id", ["7", "9223372036854775807", "9223372036854775808", "10" * 20])
def test_an_unknown_game_is_not_found(client: FlaskClient, game_id: str) -> None:
    refused(client.get(f"/api/history/games/{game_id}"), 404, "no_such_game")
    in_range = int(game_id) < 2**63  # SQLite's integers; a larger one is refused as a query, naming it
    refused(
        client.get(f"/api/history/export?game={game_id}"), *(404, "no_such_game") if in_range else (400, "bad_query")
    )


def test_an_ended_game_whose_stored_rounds_are_damaged_is_refused_saying_so_and_the_list_keeps_it(
    daemon: Daemon, client: FlaskClient
) -> None:
    """A damaged store gets an answer that names what is wrong, never a 500; what can still be read stays readable."""
    damaged = win(client, ["Ann", "Bob"], "Ann")
    kept = win(client, ["Ann", "Bob"], "Bob")
    with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn, conn:
        conn.execute("UPDATE games SET state = ? WHERE id = ?", ('{"game": {"players": 5}}', damaged))
    error = refused(client.get(f"/api/history/games/{damaged}"), 409, "game_unreadable")
    assert f"game {damaged}" in error["message"]
    assert [g["id"] for g in ok(client.get("/api/history/games"))["games"]] == [kept, damaged]
    assert ok(client.get(f"/api/history/games/{kept}"))["scoreboard"]["totals"] == {"Ann": 0, "Bob": 50}


@pytest.mark.parametrize("column", ["players", "winners", "totals"])
def test_a_damaged_summary_is_left_out_of_the_list_and_refused_alone(
    daemon: Daemon, client: FlaskClient, column: str, caplog: pytest.LogCaptureFixture
) -> None:
    damaged = win(client, ["Ann", "Bob"], "Ann")
    kept = win(client, ["Ann", "Bob"], "Bob")
    with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn, conn:
        conn.execute(f"UPDATE game_summaries SET {column} = 'garbage' WHERE game = ?", (damaged,))
    assert [g["id"] for g in ok(client.get("/api/history/games"))["games"]] == [kept]
    assert f"game {damaged} is left out of the list" in caplog.text
    error = refused(client.get(f"/api/history/games/{damaged}"), 409, "game_unreadable")
    assert f"game {damaged}" in error["message"]
    ok(client.get("/api/history/leaderboard"))


@pytest.mark.parametrize("column", ["wins", "rounds", "hand_points", "cards"])
def test_a_damaged_player_total_leaves_that_player_out_of_the_boards_not_the_others(
    daemon: Daemon, client: FlaskClient, column: str, caplog: pytest.LogCaptureFixture
) -> None:
    win(client, ["Ann", "Bob"], "Ann")
    with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn, conn:
        conn.execute(f"UPDATE player_totals SET {column} = 'garbage' WHERE name = 'Ann'")
    assert [p["player"] for p in ok(client.get("/api/history/leaderboard"))["players"]] == ["Bob"]
    assert [p["player"] for p in ok(client.get("/api/history/players"))["players"]] == ["Bob"]
    assert "Ann's totals are left out" in caplog.text


def exported_json(client: FlaskClient) -> list[dict[str, Any]]:
    games: list[dict[str, Any]] = ok(client.get("/api/history/export?format=json"))["games"]
    return games


def test_a_damaged_shuffle_record_is_refused_naming_it_and_left_out_of_the_export(
    daemon: Daemon, client: FlaskClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    win(client, ["Ann", "Bob"], "Ann")
    ok(client.post("/api/shuffles", json={}), 201)  # shuffle 1 ends: its record is kept, seed revealed
    assert [s["shuffle"] for s in exported_json(client)[0]["shuffles"]] == [1]
    with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn, conn:
        conn.execute("UPDATE shuffles SET record = 'garbage' WHERE number = 1")
    error = refused(client.get("/api/shuffles/1"), 409, "record_unreadable")
    assert "shuffle 1" in error["message"]
    assert exported_json(client)[0]["shuffles"] == []  # the game is exported all the same
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{daemon.config.state_dir}"\n', encoding="utf-8")
    assert main(["verify", "--shuffle", "1", "--config", str(config)]) == 2
    assert "shuffle 1" in capsys.readouterr().err


def test_a_game_whose_stored_times_are_damaged_is_left_out_of_the_exports(daemon: Daemon, client: FlaskClient) -> None:
    damaged = win(client, ["Ann", "Bob"], "Ann")
    kept = win(client, ["Ann", "Bob"], "Bob")
    with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn, conn:
        conn.execute("UPDATE games SET started_ts = 'garbage' WHERE id = ?", (damaged,))
    assert [g["id"] for g in exported_json(client)] == [kept]
    rows = list(csv.reader(io.StringIO(ok_text(client.get("/api/history/export?format=csv")))))
    assert {row[0] for row in rows[1:]} == {str(kept)}


def ok_text(reply: Any) -> str:
    assert reply.status_code == 200, reply.get_data(as_text=True)[:200]
    text: str = reply.get_data(as_text=True)
    return text.lstrip("\ufeff")


def test_exports_need_the_table_pin_and_reads_do_not(daemon: Daemon) -> None:
    stranger = daemon.app.test_client()
    refused(stranger.get("/api/history/export"), 401, "join_required")
    for path in ("/api/history/games", "/api/history/players", "/api/history/leaderboard"):
        ok(stranger.get(path))


def test_the_csv_export_has_a_bom_a_row_per_player_per_round_and_no_formulas(client: FlaskClient) -> None:
    game_id = win(client, ["=HYPERLINK(1)", "小明", "+1", "@me"], "小明")
    reply = client.get(f"/api/history/export?game={game_id}&format=csv")
    assert reply.status_code == 200 and reply.mimetype == "text/csv"
    assert reply.headers["Content-Disposition"] == f'attachment; filename="uno-game-{game_id}.csv"'
    raw = reply.get_data()
    assert raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [r["player"] for r in rows] == ["'=HYPERLINK(1)", "小明", "'+1", "'@me"]
    assert [r["won_round"] for r in rows] == ["0", "1", "0", "0"] and {r["round"] for r in rows} == {"1"}
    assert rows[1]["won_game"] == "1" and rows[1]["points"] == "150" and rows[0]["hand_points"] == "50"


def test_the_json_export_of_every_game_carries_the_shuffles_played_during_each(
    daemon: Daemon, client: FlaskClient
) -> None:
    first = win(client, ["Ann", "Bob"], "Ann", profile="gentle")  # a new shuffle starts with the game
    daemon.controller.new_shuffle(daemon.profiles["classic"])  # the gentle one ends: its record is revealed
    second = win(client, ["Ann", "Bob"], "Bob")
    reply = client.get("/api/history/export?format=json", headers={"Accept-Encoding": "gzip"})
    assert reply.headers["Content-Encoding"] == "gzip"
    document = json.loads(gzip.decompress(reply.get_data()))
    assert document["format"] == "uno-launcher-history/1"
    assert [(g["id"], g["outcome"]) for g in document["games"]] == [(first, "finished"), (second, "finished")]
    shuffles = document["games"][0]["shuffles"]
    assert shuffles and all("seed" in s for s in shuffles)  # only ended shuffles: their seed is revealed
    assert document["games"][1]["shuffles"] == []  # the shuffle in play keeps its seed secret
    assert document["games"][1]["scoreboard"]["winners"] == ["Bob"]
