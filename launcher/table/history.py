"""The history of games: every ended game summarized once, so that the list of past games, the players and the
leaderboards read a few rows whatever the number of games (docs/HISTORY.md).

A game ends when it is finished by its rules, or abandoned when a new game replaces it before it ended. `settle()`
keeps the summary true to the game: written when it ends, written again when a finished game is corrected, taken
away when an undo makes it unfinished. Each player's sums per mode and period (`player_totals`) are added to as a
game ends; a correction counts that game's players again from their lines. At start, `catch_up()` summarizes the
games kept before the history existed, or that a power cut kept from being summarized.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any

from launcher.access.text import scrubbed
from launcher.errors import LauncherError
from launcher.game import Game, GameError, Mode
from launcher.store import Store, game_table, transaction
from launcher.table.summaries import GameSummary, Outcome, summarize

log = logging.getLogger(__name__)

ALL = "*"  # player_totals.mode of every mode together, and the API's "no mode given"
ALL_TIME = "all"  # player_totals.period of all time
EVENING_S = 6 * 3600  # "this evening": games started at most this long before the latest game's start
MAX_PAGE = 100
CATCH_UP_BATCH = 200  # games summarized in one transaction by catch_up()


class Period(StrEnum):
    EVENING = "evening"
    MONTH = "month"
    ALL = "all"


class UnknownGame(LauncherError, LookupError):
    """No ended game has this id (it was never played, or it is still being played)."""


class UnreadableGame(LauncherError, ValueError):
    """An ended game whose summary or rounds the store holds but cannot be read: edited or damaged since."""


def month_of(ts: float) -> str:
    """The month of a moment in the launcher's local time, as player_totals.period keeps it."""
    return time.strftime("%Y-%m", time.localtime(ts))


# What reading a stored game's state can raise when an edited or damaged database holds it (RecursionError: JSON
# nested past Python's limit).
UNREADABLE = (GameError, ValueError, KeyError, TypeError, RecursionError)


def read_state(text: str) -> dict[str, Any]:
    """A game's stored state as a mapping (an older version may have stored bad text); raises one of UNREADABLE."""
    state: dict[str, Any] = scrubbed(json.loads(text))
    return state


def load_game(state: str) -> Game:
    """The game of a stored state."""
    return Game.from_dict(read_state(state)["game"])


def load_ended_game(game_id: int, state: str) -> Game:
    """The game of an ended game's stored state (`History.ended_game`); UnreadableGame if it cannot be read."""
    try:
        return load_game(state)
    except UNREADABLE as e:
        raise UnreadableGame(f"game {game_id}'s rounds cannot be read from the store: {str(e)[:200]}") from None


_SUMMARY_FIELDS = ("game", "started_ts", "ended_ts", "outcome", "mode", "ruleset", "target", "rounds", "players",
                   "winners", "totals")  # fmt: skip
_SUMMARY_COLUMNS = ", ".join(_SUMMARY_FIELDS)
_SUMS = (
    "count(*), sum(won), sum(rounds), sum(rounds_won), sum(hand_points), sum(presses), sum(cards), max(longest_drought)"
)
_TOTALS_COLUMNS = "name, games, wins, rounds, rounds_won, hand_points, presses, cards, longest_drought"


class History:
    def __init__(self, store: Store, *, now: Callable[[], float] = time.time) -> None:
        self._store = store
        self._now = now  # the wall clock: when a game ended, and which month is this month

    @property
    def store(self) -> Store:
        return self._store

    # --- writing --------------------------------------------------------------------------------------------

    def settle(self, game_id: int, game: Game, *, replaced: bool = False) -> None:
        """After game `game_id` changed: finished, it is summarized (again); no longer finished, its summary goes;
        `replaced` (a new game takes its place), an unfinished game is summarized as abandoned."""
        outcome = Outcome.FINISHED if game.over else Outcome.ABANDONED if replaced else None
        with self._store.connect() as conn, transaction(conn):
            old = conn.execute("SELECT ended_ts FROM game_summaries WHERE game = ?", (game_id,)).fetchone()
            if old is None and outcome is None:
                return
            started = conn.execute("SELECT started_ts FROM games WHERE id = ?", (game_id,)).fetchone()[0]
            forgotten = self._forget(conn, game_id) if old is not None else set()
            if outcome is None:
                self._recount(conn, forgotten)
                return
            summary = summarize(game, outcome)
            self._write(conn, game_id, started, self._now() if old is None else old[0], summary)
            if old is None:
                self._add(conn, game_id)
            else:
                self._recount(conn, forgotten | {line.key for line in summary.lines})

    def catch_up(self) -> int:
        """Summarize every game but the newest that has no summary (games kept before the history existed, or a
        power cut between saving a game and summarizing it); their end is taken as the next game's start.
        Returns how many were summarized. The newest game is the desk's: it settles it as it loads it."""
        done = 0
        with self._store.connect() as conn:
            missing = [
                int(i)
                for (i,) in conn.execute(
                    "SELECT id FROM games WHERE id < (SELECT max(id) FROM games) "
                    "AND id NOT IN (SELECT game FROM game_summaries) ORDER BY id"
                )
            ]
            # A transaction per batch, not per game: each commit waits for the disk (`synchronous=FULL`), and a
            # family's years of games summarized one commit each took minutes. A batch cut short is done again.
            for first in range(0, len(missing), CATCH_UP_BATCH):
                with transaction(conn):
                    for game_id in missing[first : first + CATCH_UP_BATCH]:
                        done += self._catch_up_one(conn, game_id)
        return done

    def _catch_up_one(self, conn: sqlite3.Connection, game_id: int) -> bool:
        """In a transaction: summarize one game; False if its stored state cannot be read as a game."""
        (started, state), next_start = (
            conn.execute(f"SELECT started_ts, {game_table.STATE} FROM games WHERE id = ?", (game_id,)).fetchone(),
            conn.execute("SELECT min(started_ts) FROM games WHERE id > ?", (game_id,)).fetchone()[0],
        )
        try:
            game = load_game(state)
        except UNREADABLE as e:  # kept, but not readable as a game
            log.warning("game %d is left out of the history: its stored state cannot be read (%s)", game_id, e)
            return False
        outcome = Outcome.FINISHED if game.over else Outcome.ABANDONED
        self._write(conn, game_id, started, max(started, next_start), summarize(game, outcome))
        self._add(conn, game_id)
        return True

    @staticmethod
    def _write(conn: sqlite3.Connection, game_id: int, started: float, ended: float, summary: GameSummary) -> None:
        conn.execute(
            f"INSERT INTO game_summaries ({_SUMMARY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                game_id, started, ended, summary.outcome.value, summary.mode, summary.ruleset, summary.target,
                summary.rounds, _json(summary.players), _json(summary.winners), _json(summary.totals),
            ),
        )  # fmt: skip
        conn.executemany(
            "INSERT INTO player_games (game, player, name, mode, started_ts, month, won, rounds, rounds_won, "
            "hand_points, presses, cards, longest_drought) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    game_id, line.key, line.name, summary.mode, started, month_of(started), int(line.won),
                    line.rounds, line.rounds_won, line.hand_points, line.presses, line.cards, line.longest_drought,
                )
                for line in summary.lines
            ],
        )  # fmt: skip

    @staticmethod
    def _forget(conn: sqlite3.Connection, game_id: int) -> set[str]:
        """Take a game's summary away; the keys of its players, whose sums must be counted again."""
        keys = {k for (k,) in conn.execute("SELECT player FROM player_games WHERE game = ?", (game_id,))}
        conn.execute("DELETE FROM player_games WHERE game = ?", (game_id,))
        conn.execute("DELETE FROM game_summaries WHERE game = ?", (game_id,))
        return keys

    @staticmethod
    def _add(conn: sqlite3.Connection, game_id: int) -> None:
        """Add a newly summarized game's lines to its players' sums."""
        conn.execute(
            f"""
            INSERT INTO player_totals (mode, period, player, last_ts, {_TOTALS_COLUMNS})
            SELECT g.mode_key, g.period, l.player, l.started_ts, l.name, 1, l.won, l.rounds, l.rounds_won,
                   l.hand_points, l.presses, l.cards, l.longest_drought
            FROM player_games AS l, (
                SELECT mode AS mode_key, '{ALL_TIME}' AS period FROM player_games WHERE game = :game
                UNION SELECT mode, month FROM player_games WHERE game = :game
                UNION SELECT '{ALL}', '{ALL_TIME}'
                UNION SELECT '{ALL}', month FROM player_games WHERE game = :game
            ) AS g
            WHERE l.game = :game
            ON CONFLICT (mode, period, player) DO UPDATE SET
                name = CASE WHEN excluded.last_ts >= last_ts THEN excluded.name ELSE name END,
                last_ts = max(last_ts, excluded.last_ts),
                games = games + 1, wins = wins + excluded.wins, rounds = rounds + excluded.rounds,
                rounds_won = rounds_won + excluded.rounds_won, hand_points = hand_points + excluded.hand_points,
                presses = presses + excluded.presses, cards = cards + excluded.cards,
                longest_drought = CASE WHEN longest_drought IS NULL THEN excluded.longest_drought
                                       WHEN excluded.longest_drought IS NULL THEN longest_drought
                                       ELSE max(longest_drought, excluded.longest_drought) END
            """,
            {"game": game_id},
        )

    @staticmethod
    def _recount(conn: sqlite3.Connection, keys: Iterable[str]) -> None:
        """Count these players' sums again from their lines (after a correction of a game already counted)."""
        for key in keys:
            conn.execute("DELETE FROM player_totals WHERE player = ?", (key,))
            conn.execute(
                f"""
                INSERT INTO player_totals (mode, period, player, last_ts, {_TOTALS_COLUMNS})
                SELECT mode_key, period, player, max(started_ts), min(latest), {_SUMS}
                FROM (
                    SELECT *, first_value(name) OVER (
                        PARTITION BY mode_key, period ORDER BY started_ts DESC, game DESC) AS latest
                    FROM (
                        SELECT mode AS mode_key, '{ALL_TIME}' AS period, * FROM player_games WHERE player = :key
                        UNION ALL SELECT mode, month, * FROM player_games WHERE player = :key
                        UNION ALL SELECT '{ALL}', '{ALL_TIME}', * FROM player_games WHERE player = :key
                        UNION ALL SELECT '{ALL}', month, * FROM player_games WHERE player = :key
                    )
                )
                GROUP BY mode_key, period
                """,
                {"key": key},
            )

    # --- reading --------------------------------------------------------------------------------------------

    def page(self, limit: int, before: int | None = None) -> dict[str, Any]:
        """Up to `limit` ended games, newest first, older than game `before`; `next_before` asks for the next page."""
        with self._store.connect() as conn:
            rows = conn.execute(
                f"SELECT {_SUMMARY_COLUMNS} FROM game_summaries WHERE game < ? ORDER BY game DESC LIMIT ?",
                (2**63 - 1 if before is None else before, limit + 1),
            ).fetchall()
        games = []
        for row in rows[:limit]:
            try:
                games.append(_summary(row))
            except UNREADABLE as e:  # the rest of the page is still worth showing
                log.warning("game %s is left out of the list: its summary cannot be read (%s)", row[0], e)
        next_before = rows[limit - 1][0] if len(rows) > limit else None
        return {"games": games, "next_before": next_before}

    def ended_game(self, game_id: int) -> tuple[dict[str, Any], str]:
        """An ended game's summary and its stored state; UnknownGame if there is none."""
        with self._store.connect() as conn:
            row = conn.execute(
                f"SELECT {', '.join(f's.{c}' for c in _SUMMARY_FIELDS)}, {game_table.STATE} "
                "FROM game_summaries AS s JOIN games ON games.id = s.game WHERE s.game = ?",
                (game_id,),
            ).fetchone()
        if row is None:
            raise UnknownGame(f"there is no ended game {game_id}: it was never played, or it is still being played")
        try:
            return _summary(row[:-1]), str(row[-1])
        except UNREADABLE as e:
            raise UnreadableGame(f"game {game_id}'s summary cannot be read from the store: {str(e)[:200]}") from None

    def ends(self, first: int, last: int) -> dict[int, tuple[Any, str]]:
        """(ended_ts, outcome) of the ended games with ids from `first` to `last`; the end as stored, which only a
        damaged store holds as anything but a number."""
        with self._store.connect() as conn:
            rows = conn.execute(
                "SELECT game, ended_ts, outcome FROM game_summaries WHERE game BETWEEN ? AND ?", (first, last)
            ).fetchall()
        return {int(game): (ended, str(outcome)) for game, ended, outcome in rows}

    def players(self) -> list[dict[str, Any]]:
        """Every known player with their sums over every ended game, the last seen first."""
        with self._store.connect() as conn:
            rows = conn.execute(
                f"SELECT {_TOTALS_COLUMNS}, last_ts FROM player_totals WHERE mode = ? AND period = ? "
                "ORDER BY last_ts DESC, player",
                (ALL, ALL_TIME),
            ).fetchall()
        return [{**_sums(row[:-1]), "last_played_ts": row[-1]} for row in rows if _readable(row[:-1])]

    def leaderboard(self, period: Period, mode: Mode | None = None) -> dict[str, Any]:
        """The players ranked over the period, in one mode or all: most wins, then most rounds won, then the fewest
        points left in hand per round (docs/HISTORY.md)."""
        mode_key = ALL if mode is None else mode.value
        with self._store.connect() as conn:
            since = None
            if period is Period.EVENING:
                latest = conn.execute("SELECT started_ts FROM game_summaries ORDER BY game DESC LIMIT 1").fetchone()
                since = None if latest is None else latest[0] - EVENING_S
                rows = [] if since is None else self._evening(conn, since, mode_key)
            else:
                key = ALL_TIME if period is Period.ALL else month_of(self._now())
                rows = conn.execute(
                    f"SELECT {_TOTALS_COLUMNS} FROM player_totals WHERE mode = ? AND period = ?", (mode_key, key)
                ).fetchall()
        board = sorted((_sums(row) for row in rows if _readable(row)), key=_rank)
        return {
            "period": period.value,
            "mode": None if mode is None else mode.value,
            "since_ts": since,
            "players": [{"rank": place, **entry} for place, entry in enumerate(board, 1)],
        }

    @staticmethod
    def _evening(conn: sqlite3.Connection, since: float, mode_key: str) -> list[tuple[Any, ...]]:
        return conn.execute(
            f"""
            SELECT min(latest), {_SUMS}
            FROM (
                SELECT *, first_value(name) OVER (PARTITION BY player ORDER BY started_ts DESC, game DESC) AS latest
                FROM player_games WHERE started_ts >= :since AND (:mode = '{ALL}' OR mode = :mode)
            )
            GROUP BY player
            """,
            {"since": since, "mode": mode_key},
        ).fetchall()


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _summary(row: tuple[Any, ...]) -> dict[str, Any]:
    game, started, ended, outcome, mode, ruleset, target, rounds, players, winners, totals = row
    return {
        "id": game,
        "started_ts": started,
        "ended_ts": ended,
        "outcome": outcome,
        "mode": mode,
        "ruleset": ruleset,
        "target": target,
        "rounds": rounds,
        "players": json.loads(players),
        "winners": json.loads(winners),
        "totals": json.loads(totals),
    }


def _readable(row: tuple[Any, ...]) -> bool:
    """False, and logged, for a player's sums that are not whole numbers: only an edited or damaged store has them."""
    if isinstance(row[0], str) and all(type(n) is int for n in row[1:8]) and type(row[8]) in (int, type(None)):
        return True
    log.warning("%s's totals are left out: the store holds sums that are not whole numbers", str(row[0])[:40])
    return False


def _sums(row: tuple[Any, ...]) -> dict[str, Any]:
    name, games, wins, rounds, rounds_won, hand_points, presses, cards, drought = row
    return {
        "player": name,
        "games": games,
        "wins": wins,
        "rounds": rounds,
        "rounds_won": rounds_won,
        "points_per_round": None if not rounds else round(hand_points / rounds, 1),
        "presses": presses,
        "cards": cards,
        "longest_drought": drought,
    }


def _rank(entry: dict[str, Any]) -> tuple[Any, ...]:
    per_round = entry["points_per_round"]
    return (-entry["wins"], -entry["rounds_won"], per_round is None, per_round or 0, entry["player"].casefold())
