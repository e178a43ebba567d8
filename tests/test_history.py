"""The history of games, from its promises (docs/HISTORY.md): ended games are summarized once, the players are
known across games by their name as the game compares names, the leaderboards count the right games for each
period, corrections keep every sum true, games kept before the history are summarized at start, and reading a list
or a leaderboard costs the same with 10 games as with 10,000."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from launcher.game import Game
from launcher.game.statistics import LauncherTally
from launcher.store import STORE_FILE, Store, game_table
from launcher.table.history import EVENING_S, History, Period, UnknownGame

DAY = 24 * 3600
T0 = time.mktime((2031, 5, 10, 20, 0, 0, 0, 0, -1))  # an evening in May, local time


class Wall:
    """The wall clock the history reads, set by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / STORE_FILE)


def finished(players: list[str], winner: str, mode: str = "winner_collects", *, presses: int = 0) -> Game:
    """A game won by `winner` in one round; each player pressed `presses` times without a fire."""
    game = Game(players, mode, 100)
    for player in players:
        for _ in range(presses):
            game.record_press(player, 0)
    losers = [p for p in players if p != winner]
    if mode == "lowest_total":  # the game ends when a loser reaches the target: the lowest total wins
        game.score_round(winner, {losers[0]: 100, **{p: 1 for p in losers[1:]}})
    else:
        game.score_round(winner, {losers[0]: 100, **{p: 0 for p in losers[1:]}})
    assert game.over and game.winners == (winner,)
    return game


def add(store: Store, game: Game, started: float) -> int:
    with store.connect() as conn:
        return game_table.new(
            conn,
            json.dumps({"game": game.to_dict_but_rounds(), "table": {}}),
            [json.dumps(entry.to_dict()) for entry in game.entries],
            started,
        )


def play(store: Store, history: History, game: Game, started: float) -> int:
    game_id = add(store, game, started)
    history.settle(game_id, game)
    return game_id


def by_player(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["player"]: row for row in rows}


# --- droughts -------------------------------------------------------------------------------------------------


def test_the_longest_drought_is_the_most_presses_in_a_row_without_a_fire() -> None:
    tally = LauncherTally(("Ann", "Bob"), 112)
    for cards in (0, 0, 3, 0, 0, 0, 1, 0):
        tally.record("Ann", cards)
    tally.record("Bob", 2)
    assert tally.longest_droughts() == {"Ann": 3, "Bob": 0}
    again = LauncherTally(("Ann", "Bob"), 112)
    again.load(tally.to_dict())
    for _ in range(2):
        again.record("Ann", 0)  # the run in progress (1) goes on after a reload: now 3
    assert again.longest_droughts() == {"Ann": 3, "Bob": 0}
    again.record("Ann", 0)
    assert again.longest_droughts() == {"Ann": 4, "Bob": 0}


def test_a_game_stored_before_droughts_were_kept_loads_and_says_it_does_not_know() -> None:
    game = finished(["Ann", "Bob"], "Ann")
    stored = game.to_dict()
    stored["launcher"] = {"Ann": {"presses": 4, "fires": 1, "cards": 2}, "Bob": {"presses": 0, "fires": 0, "cards": 0}}
    old = Game.from_dict(stored)
    assert old.longest_droughts() is None
    assert old.statistics()["Ann"].presses == 4
    assert Game.from_dict(old.to_dict()).to_dict() == old.to_dict()  # it stays in the old form, unknown


def test_a_drought_longer_than_the_presses_that_missed_is_refused() -> None:
    stored = finished(["Ann", "Bob"], "Ann").to_dict()
    stored["launcher"]["Ann"] = {"presses": 3, "fires": 1, "cards": 2, "misses_in_row": 0, "longest_drought": 3}
    with pytest.raises(ValueError, match="longest_drought"):
        Game.from_dict(stored)


# --- what is kept of a game --------------------------------------------------------------------------------------


def test_a_finished_game_is_listed_with_its_mode_winners_and_final_scores(store: Store) -> None:
    history = History(store, now=Wall(T0 + 3600))
    game_id = play(store, history, finished(["Ann", "Bob", "Cy"], "Bob"), T0)
    page = history.page(10)
    assert page["next_before"] is None
    [listed] = page["games"]
    assert listed == {
        "id": game_id, "started_ts": T0, "ended_ts": T0 + 3600, "outcome": "finished", "mode": "winner_collects",
        "ruleset": "uno_attack", "target": 100, "rounds": 1, "players": ["Ann", "Bob", "Cy"], "winners": ["Bob"],
        "totals": {"Ann": 0, "Bob": 100, "Cy": 0},
    }  # fmt: skip
    summary, state = history.ended_game(game_id)
    assert summary == listed and json.loads(state)["game"]["rounds"][0]["winner"] == "Bob"


def test_an_unfinished_game_is_not_history_until_a_new_game_replaces_it(store: Store) -> None:
    history = History(store, now=Wall(T0 + 60))
    game = Game(["Ann", "Bob"], "lowest_total", 500)
    game.score_round("Ann", {"Bob": 30})
    game_id = add(store, game, T0)
    history.settle(game_id, game)
    assert history.page(10)["games"] == []
    with pytest.raises(UnknownGame):
        history.ended_game(game_id)
    history.settle(game_id, game, replaced=True)
    [listed] = history.page(10)["games"]
    assert (listed["outcome"], listed["winners"], listed["totals"]) == ("abandoned", [], {"Ann": 0, "Bob": 30})
    assert by_player(history.players())["Bob"]["games"] == 1
    assert by_player(history.players())["Ann"]["wins"] == 0  # an abandoned game has no winner


def test_an_undo_takes_a_finished_game_out_of_the_history_and_a_correction_rewrites_it(store: Store) -> None:
    history = History(store, now=Wall(T0))
    game = finished(["Ann", "Bob"], "Ann")
    game_id = play(store, history, game, T0)
    game.undo_last()
    history.settle(game_id, game)
    assert history.page(10)["games"] == [] and history.players() == []
    game.score_round("Bob", {"Ann": 100})
    history.settle(game_id, game)
    assert history.page(10)["games"][0]["winners"] == ["Bob"]
    game.edit_round(0, "Ann", {"Bob": 100})
    history.settle(game_id, game)
    assert history.page(10)["games"][0]["winners"] == ["Ann"]
    players = by_player(history.players())
    assert (players["Ann"]["wins"], players["Bob"]["wins"], players["Ann"]["games"]) == (1, 0, 1)


def test_a_player_is_known_by_the_name_trimmed_and_case_folded_not_by_its_width(store: Store) -> None:
    history = History(store, now=Wall(T0))
    play(store, history, finished(["ann", "Bob"], "ann"), T0)
    play(store, history, finished(["ANN", "Bob"], "Bob"), T0 + 60)
    play(store, history, finished(["Ａｎｎ", "Bob"], "Ａｎｎ"), T0 + 120)  # full-width: the game tells them apart too
    players = by_player(history.players())
    assert set(players) == {"ANN", "Ａｎｎ", "Bob"}  # the latest spelling is shown
    assert (players["ANN"]["games"], players["ANN"]["wins"]) == (2, 1)
    assert (players["Ａｎｎ"]["games"], players["Bob"]["games"]) == (1, 3)
    assert [p["player"] for p in history.players()] == ["Bob", "Ａｎｎ", "ANN"]  # the last seen first


def test_the_players_sums_rounds_points_presses_cards_and_droughts(store: Store) -> None:
    history = History(store, now=Wall(T0))
    game = Game(["Ann", "Bob", "Cy"], "lowest_total", 200)
    for cards in (0, 0, 0, 2, 0):
        game.record_press("Bob", cards)
    game.record_press("Cy", 5)
    game.score_round("Ann", {"Bob": 40, "Cy": 10})
    game.score_round("Cy", {"Ann": 20, "Bob": 60})
    play(store, history, game, T0)
    history.settle(1, game, replaced=True)  # abandoned: no winner, but every round counts
    old = finished(["Bob", "Ann"], "Bob").to_dict()
    old["launcher"] = {p: {"presses": 0, "fires": 0, "cards": 0} for p in ("Bob", "Ann")}  # kept no droughts
    play(store, history, Game.from_dict(old), T0 + 60)
    bob = by_player(history.players())["Bob"]
    assert bob == {
        "player": "Bob", "games": 2, "wins": 1, "rounds": 3, "rounds_won": 1,
        "points_per_round": round((40 + 60 + 0) / 3, 1), "presses": 5, "cards": 2, "longest_drought": 3,
        "last_played_ts": T0 + 60,
    }  # fmt: skip
    assert by_player(history.players())["Ann"]["longest_drought"] == 0
    only_old = History(Store(store.path.with_name("other.sqlite3")), now=Wall(T0))
    play(only_old.store, only_old, Game.from_dict(old), T0)
    assert by_player(only_old.players())["Bob"]["longest_drought"] is None  # not recorded in that game


def test_a_game_kept_before_the_history_is_summarized_at_start_ending_when_the_next_began(store: Store) -> None:
    first = add(store, finished(["Ann", "Bob"], "Ann"), T0)
    unfinished = Game(["Ann", "Bob"], "winner_collects", 500)
    second = add(store, unfinished, T0 + 600)
    add(store, Game(["Cy", "Dee"], "winner_collects", 500), T0 + 1200)  # the current game: the desk's
    history = History(store, now=Wall(T0 + 5000))
    assert history.catch_up() == 2
    assert history.catch_up() == 0
    games = history.page(10)["games"]
    assert [(g["id"], g["outcome"], g["ended_ts"]) for g in games] == [
        (second, "abandoned", T0 + 1200),
        (first, "finished", T0 + 600),
    ]


def test_a_game_whose_state_cannot_be_read_is_left_out_and_the_rest_summarized(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    with store.connect() as conn:
        game_table.new(conn, json.dumps({"game": {"players": "nonsense"}, "table": {}}), [], T0)
    add(store, finished(["Ann", "Bob"], "Ann"), T0 + 60)
    add(store, Game(["Ann", "Bob"], "winner_collects"), T0 + 120)
    assert History(store).catch_up() == 1
    assert "game 1 is left out of the history" in caplog.text


# --- leaderboards --------------------------------------------------------------------------------------------


def test_the_evening_is_the_six_hours_before_the_latest_games_start(store: Store) -> None:
    history = History(store, now=Wall(T0 + 10 * DAY))
    play(store, history, finished(["Ann", "Bob"], "Bob"), T0 - EVENING_S - 1)  # the afternoon before: not counted
    play(store, history, finished(["Ann", "Bob"], "Ann"), T0 - EVENING_S)
    play(store, history, finished(["Ann", "Cy"], "Cy", "lowest_total"), T0)
    board = history.leaderboard(Period.EVENING)
    assert board["since_ts"] == T0 - EVENING_S
    # Ann and Cy won one game and one round each; Cy left fewer points in hand per round (0, Ann 50).
    assert [(p["rank"], p["player"], p["games"], p["wins"]) for p in board["players"]] == [
        (1, "Cy", 1, 1),
        (2, "Ann", 2, 1),
        (3, "Bob", 1, 0),
    ]
    lowest = history.leaderboard(Period.EVENING, Game(["a", "b"], "lowest_total").mode)
    assert [(p["player"], p["wins"]) for p in lowest["players"]] == [("Cy", 1), ("Ann", 0)]


def test_this_month_and_all_time_count_their_games_per_mode(store: Store) -> None:
    wall = Wall(T0)
    history = History(store, now=wall)
    last_month = time.mktime((2031, 4, 30, 23, 0, 0, 0, 0, -1))
    play(store, history, finished(["Ann", "Bob"], "Bob"), last_month)
    play(store, history, finished(["Ann", "Bob"], "Ann"), T0)
    play(store, history, finished(["Ann", "Bob"], "Ann", "lowest_total"), T0 + 60)
    month = by_player(history.leaderboard(Period.MONTH)["players"])
    assert (month["Ann"]["wins"], month["Bob"]["wins"], month["Bob"]["games"]) == (2, 0, 2)
    collects = Game(["a", "b"], "winner_collects").mode
    month_collects = by_player(history.leaderboard(Period.MONTH, collects)["players"])
    assert (month_collects["Ann"]["games"], month_collects["Ann"]["wins"]) == (1, 1)
    ever = by_player(history.leaderboard(Period.ALL, collects)["players"])
    assert (ever["Bob"]["wins"], ever["Ann"]["games"]) == (1, 2)
    wall.now = T0 + 40 * DAY  # July: nothing played this month
    assert history.leaderboard(Period.MONTH)["players"] == []


def test_the_ranking_is_wins_then_rounds_won_then_fewest_points_per_round(store: Store) -> None:
    history = History(store, now=Wall(T0))
    game = Game(["Ann", "Bob", "Cy"], "winner_collects", 100)
    game.score_round("Bob", {"Ann": 10, "Cy": 20})
    game.score_round("Cy", {"Ann": 10, "Bob": 30})
    play(store, history, game, T0)
    history.settle(1, game, replaced=True)
    board = history.leaderboard(Period.ALL)["players"]
    # No wins: Bob and Cy won a round each; Cy left fewer points in hand per round (10 vs 15); Ann won none.
    assert [p["player"] for p in board] == ["Cy", "Bob", "Ann"]


def test_an_empty_history_has_empty_boards(store: Store) -> None:
    history = History(store)
    for period in Period:
        assert history.leaderboard(period)["players"] == []
    assert history.page(5) == {"games": [], "next_before": None}


# --- every sum stays true -------------------------------------------------------------------------------------


def test_the_sums_added_game_by_game_equal_the_sums_counted_again_after_any_corrections(store: Store) -> None:
    rng = random.Random(7)
    history = History(store, now=Wall(T0))
    games: list[tuple[int, Game]] = []
    for number in range(40):
        players = rng.sample(["Ann", "Bob", "Cy", "Dee"], rng.randint(2, 4))
        if rng.random() < 0.3:
            players = [p.lower() for p in players]
        game = finished(players, rng.choice(players), rng.choice(["winner_collects", "lowest_total"]))
        started = T0 + number * rng.choice([600, DAY, 20 * DAY])
        games.append((play(store, history, game, started), game))
        if rng.random() < 0.3:  # a correction of an earlier game
            game_id, earlier = rng.choice(games)
            earlier.undo_last()
            history.settle(game_id, earlier)
            winner = rng.choice(earlier.players)
            others = [p for p in earlier.players if p != winner]
            earlier.score_round(winner, {others[0]: 100, **{p: 0 for p in others[1:]}})
            history.settle(game_id, earlier)
    with store.connect() as conn:
        added = sorted(conn.execute("SELECT * FROM player_totals").fetchall())
        keys = {k for (k,) in conn.execute("SELECT DISTINCT player FROM player_games")}
    with store.connect() as conn:
        history._recount(conn, keys)
        counted = sorted(conn.execute("SELECT * FROM player_totals").fetchall())
    assert added == counted
    assert sum(p["games"] for p in history.players()) == sum(len(g.players) for _, g in games)


# --- cost stays flat ----------------------------------------------------------------------------------------


class Cost:
    """What the history's reads cost: SQLite's virtual-machine steps (rows visited, not time), and whether any read
    touched a game's whole state."""

    def __init__(self) -> None:
        self.steps = 0
        self.read_columns: set[tuple[str, str]] = set()

    def watch(self, conn: sqlite3.Connection) -> None:
        def step() -> int:
            self.steps += 1
            return 0

        def authorize(action: int, table: str | None, column: str | None, *_: object) -> int:
            if action == sqlite3.SQLITE_READ and table and column:
                self.read_columns.add((table, column))
            return sqlite3.SQLITE_OK

        conn.set_progress_handler(step, 1)
        conn.set_authorizer(authorize)


def many_games(path: Path, count: int) -> History:
    """`count` finished games of four friends, one a day back in time, the last 10 this evening; a summary each,
    written straight in for speed (the same rows settle() writes)."""
    store = Store(path)
    history = History(store, now=Wall(T0))
    game = finished(["Ann", "Bob", "Cy", "Dee"], "Cy", presses=2)
    state = json.dumps({"game": game.to_dict(), "table": {}})
    with store.connect() as conn:
        conn.execute("BEGIN")
        starts = [T0 - day * DAY for day in range(count - 10, 0, -1)] + [T0 + i * 600 for i in range(10)]
        conn.executemany("INSERT INTO games (state, started_ts) VALUES (?, ?)", [(state, ts) for ts in starts])
        conn.execute("COMMIT")
    assert history.catch_up() == count - 1
    history.settle(count, game)
    return history


@contextmanager
def counted(history: History) -> Iterator[Cost]:
    cost = Cost()
    store = history.store
    opened = store._open

    def watched() -> sqlite3.Connection:
        conn = opened()
        cost.watch(conn)
        return conn

    store._open = watched  # type: ignore[method-assign]
    try:
        yield cost
    finally:
        store._open = opened  # type: ignore[method-assign]


READS = {
    "first page": lambda h: h.page(20),
    "a later page": lambda h: h.page(20, before=h.page(20)["next_before"]),
    "players": lambda h: h.players(),
    "evening": lambda h: h.leaderboard(Period.EVENING),
    "month": lambda h: h.leaderboard(Period.MONTH),
    "all time": lambda h: h.leaderboard(Period.ALL),
    "all time, one mode": lambda h: h.leaderboard(Period.ALL, Game(["a", "b"], "winner_collects").mode),
}


@pytest.mark.slow
def test_lists_players_and_leaderboards_cost_the_same_with_10_or_10000_games(tmp_path: Path) -> None:
    few, lots = many_games(tmp_path / "few.sqlite3", 40), many_games(tmp_path / "lots.sqlite3", 10_000)
    for name, read in READS.items():
        with counted(few) as small, counted(lots) as large:
            answer_few, answer_lots = read(few), read(lots)
        # 250 times the games; the same rows visited: only SQLite's deeper B-trees add a few steps (under 10%).
        assert 0 < small.steps <= large.steps < small.steps * 1.1, (name, small.steps, large.steps)
        assert ("games", "state") not in small.read_columns | large.read_columns, name
        if name in ("evening", "month"):
            assert answer_few == answer_lots, name  # the same evening and month on both
    assert by_player(lots.players())["Cy"]["wins"] == 10_000 and by_player(few.players())["Cy"]["wins"] == 40
