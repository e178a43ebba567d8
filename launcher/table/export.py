"""Exporting games, one or all: CSV with one row per player per round, or JSON with each game's settings, rounds,
final scores and the fairness records of the launcher's shuffles played during it (docs/HISTORY.md).

Both are made a game at a time, so that exporting every game holds one game in memory, never the whole store.
CSV is UTF-8 with a byte order mark (spreadsheets then read Chinese names right), and a text cell that starts
like a formula is quoted with an apostrophe, so a name such as "=1+1" is never run by the spreadsheet.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from launcher.errors import LauncherError
from launcher.fairplay.fairness import RecordError
from launcher.fairplay.shuffles import ShuffleOpen, stored_record
from launcher.game import Game
from launcher.store import Store, game_table, shuffle_table
from launcher.table.history import UNREADABLE, History, load_game

log = logging.getLogger(__name__)

FORMATS = ("csv", "json")
JSON_FORMAT = "uno-launcher-history/1"
IN_PLAY = "in_play"  # the outcome of the current game, not ended yet
BATCH = 20  # games read per connection
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may take for the start of a formula
CSV_COLUMNS = (
    "game", "started", "ended", "outcome", "mode", "ruleset", "target", "round", "player", "side", "won_round",
    "hand_points", "points", "total", "out", "reshuffled", "last_card", "place", "won_game",
)  # fmt: skip


class NoSuchGame(LauncherError, LookupError):
    """The store has no game with this id."""


@dataclass(frozen=True, slots=True)
class StoredGame:
    id: int
    started_ts: float
    ended_ts: float | None  # None while it is played
    outcome: str  # finished, abandoned or in_play
    game: Game


def stored_games(store: Store, history: History, only: int | None = None) -> Iterator[StoredGame]:
    """Every game of the store in order, or only game `only` (NoSuchGame if there is none); a game whose state
    cannot be read is left out and logged."""
    first = 1 if only is None else only
    while True:
        with store.connect() as conn:
            rows = game_table.listed_from(conn, first, 1 if only is not None else BATCH)
        if only is not None and (not rows or rows[0][0] != only):
            raise NoSuchGame(f"there is no game {only} in the store")
        if not rows:
            return
        ends = history.ends(rows[0][0], rows[-1][0])
        for game_id, started, state in rows:
            try:
                game = load_game(state)
            except UNREADABLE as e:
                log.warning("game %d is left out of the export: its stored state cannot be read (%s)", game_id, e)
                continue
            ended, outcome = ends.get(game_id, (None, IN_PLAY))
            if not _a_moment(started) or not (ended is None or _a_moment(ended)):
                log.warning("game %d is left out of the export: its stored start or end is not a time", game_id)
                continue
            yield StoredGame(game_id, started, ended, outcome, game)
        if only is not None:
            return
        first = rows[-1][0] + 1


def _a_moment(value: object) -> bool:
    """True for seconds since the epoch that a date can show (to the year 9999); only a damaged store holds others."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 253_402_300_800


def export_chunks(history: History, kind: str, only: int | None, now: float) -> Iterator[str]:
    """The export's text (`kind`: csv or json), a chunk at a time; for an unknown game NoSuchGame at once, before
    any text."""
    games = stored_games(history.store, history, only)
    first = next(games, None)
    chosen = itertools.chain(() if first is None else (first,), games)
    return csv_chunks(chosen) if kind == "csv" else json_chunks(history.store, chosen, now)


def detail(game: Game) -> dict[str, Any]:
    """A game's settings, its scoreboard (rounds, totals, winners, statistics) and the players' longest droughts."""
    settings = {k: v for k, v in game.to_dict().items() if k not in ("rounds", "launcher")}
    return {**settings, "scoreboard": game.scoreboard(), "longest_droughts": game.longest_droughts()}


def json_chunks(store: Store, games: Iterable[StoredGame], now: float) -> Iterator[str]:
    """One JSON document, a game at a time."""
    yield json.dumps({"format": JSON_FORMAT, "exported_ts": now})[:-1] + ', "games": ['
    for index, stored in enumerate(games):
        record = {
            "id": stored.id,
            "started_ts": stored.started_ts,
            "ended_ts": stored.ended_ts,
            "outcome": stored.outcome,
            **detail(stored.game),
            "shuffles": _shuffle_records(store, stored.started_ts, now if stored.ended_ts is None else stored.ended_ts),
        }
        yield ("," if index else "") + "\n" + json.dumps(record, ensure_ascii=False)
    yield "\n]}\n"


def _shuffle_records(store: Store, start: float, end: float) -> list[dict[str, Any]]:
    """The records of the shuffles played during a game; one still being played keeps its seed secret: left out."""
    records = []
    with store.connect() as conn:
        for number in shuffle_table.played_between(conn, start, end):
            try:
                record = stored_record(conn, number)
            except ShuffleOpen:
                continue
            except RecordError as e:
                log.warning("%s: left out of the export", e)
                continue
            if record is not None:
                records.append(record)
    return records


def csv_chunks(games: Iterable[StoredGame]) -> Iterator[str]:
    """The CSV text: a byte order mark and the header, then a game's rows at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC)
    writer.writerow(CSV_COLUMNS)
    yield "\ufeff" + _taken(buffer)
    for stored in games:
        writer.writerows(_rows(stored))
        yield _taken(buffer)


def _rows(stored: StoredGame) -> Iterator[tuple[object, ...]]:
    game = stored.game
    winners = game.winners if stored.outcome == "finished" else ()
    ended = "" if stored.ended_ts is None else _when(stored.ended_ts)
    for result in game.rounds:
        entry = result.entry
        for player in game.players:
            if not (player == entry.winner or player in entry.hands or player in (entry.order or ())):
                continue  # out of the game before this round
            side = game.side_of(player)
            yield (
                stored.id, _when(stored.started_ts), ended, stored.outcome, game.mode.value, game.ruleset.value,
                game.target, result.index + 1, text_cell(player), text_cell(side), int(player == entry.winner),
                result.values.get(player, 0), result.points.get(side, 0), result.totals[side],
                int(side in result.eliminated), int(entry.reshuffled), entry.last_card or "",
                "" if entry.order is None else entry.order.index(player) + 1, int(side in winners),
            )  # fmt: skip


def text_cell(text: str) -> str:
    """A text for a spreadsheet cell: one that could start a formula gets an apostrophe in front."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _when(ts: float) -> str:
    """A moment in the launcher's local time, with its offset from UTC."""
    return datetime.fromtimestamp(ts).astimezone().isoformat(timespec="seconds")


def _taken(buffer: io.StringIO) -> str:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text
