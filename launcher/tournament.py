"""Tournaments: the partner rotation (launcher/game/rotation.py) kept in the store and shared by tables.

One table's phone sets a tournament up; every table of it scores its own rounds. Each change is published on the
event bus with `origin`, the table it was made at: phones see it live, and the MQTT bridge (launcher/mqtt.py) sends
this table's own changes to the broker, from where every other table's book `receive()`s them. A setup and a round
are kept once by their ids, so a message that comes twice (QoS 1 delivers at least once) changes nothing.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from launcher.events import EventBus, EventType
from launcher.game.rotation import MAX_CYCLES, Rotation, RoundScore, Tournament, TournamentError
from launcher.store import Store, tournament_table

log = logging.getLogger(__name__)

TOURNAMENT_ID = re.compile(r"[0-9a-f]{12}")
MAX_MESSAGE_BYTES = 4096  # a setup of 16 names or a round of 4 scores is far below
MAX_PENDING = 512  # rounds heard before their tournament's setup (a broker sends retained messages in any order)
CSV_COLUMNS = ("tournament", "table", "round", "player", "points", "total")
SETUP = "setup"
ROUND = "round"


class TournamentBook:
    def __init__(self, store: Store, bus: EventBus, *, table: str, wall: Callable[[], float] = time.time) -> None:
        """`table`: this table's name (its [mqtt] table)."""
        self._store = store
        self._bus = bus
        self.table = table
        self._wall = wall
        self._lock = threading.Lock()
        self._tournaments: dict[str, tuple[Tournament, float]] = {}
        self._pending: dict[str, dict[str, RoundScore]] = {}
        with store.connect() as conn:
            for id, setup, created in tournament_table.all_setups(conn):
                tournament = Tournament(id, _rotation(json.loads(setup)))
                for result in tournament_table.rounds(conn, id):
                    tournament.add(_round_score(json.loads(result)))
                self._tournaments[id] = (tournament, created)

    # --- from this table's phones -------------------------------------------------------------------------

    def set_up(self, players: list[str], tables: list[str]) -> dict[str, Any]:
        """A new tournament this table plays in; it becomes the current one."""
        if self.table not in tables:
            raise TournamentError("unknown_table", f"this table, {self.table!r}, must be one of the tables")
        rotation = Rotation.of(players, tables)
        data = {"tournament": secrets.token_hex(6), **_setup_fields(rotation), "created_ts": self._wall()}
        self._apply_setup(data, origin=self.table)
        return self.view()

    def score(self, number: int, points: Mapping[str, int]) -> dict[str, Any]:
        """This table's round `number` of the current tournament, scored."""
        with self._lock:
            current = self._current()
            if current is None:
                raise TournamentError("no_tournament", "there is no tournament at this table")
            expected = current.next_round(self.table)
            if number != expected:
                raise TournamentError("not_next_round", f"the next round to score here is {expected}, not {number}")
        self._apply_round(RoundScore(self.table, number, dict(points)), current.id, origin=self.table)
        return self.view()

    # --- from the broker ------------------------------------------------------------------------------------

    def receive(self, levels: list[str], payload: bytes) -> bool:
        """A message under the tournament topic: `levels` after it, e.g. [id, "setup"] or [id, "round", table, n].
        True if it changed anything; anything malformed or not fitting is refused with a TournamentError."""
        if len(payload) > MAX_MESSAGE_BYTES:
            raise TournamentError("too_large", f"{len(payload)} bytes is more than a tournament message holds")
        try:
            data = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise TournamentError("bad_json", "the payload is not JSON text") from None
        if not isinstance(data, dict) or not levels or data.get("tournament") != levels[0]:
            raise TournamentError("bad_message", "the payload does not name the tournament of its topic")
        if not TOURNAMENT_ID.fullmatch(levels[0]):
            raise TournamentError("bad_message", f"{levels[0]!r} is not a tournament id")
        if levels[1:] == [SETUP]:
            created = data.get("created_ts")
            if isinstance(created, bool) or not isinstance(created, int | float) or not 0 < created < 1e11:
                raise TournamentError("bad_message", "a setup needs created_ts, seconds since the epoch")
            fields = {"tournament": levels[0], **_setup_fields(_rotation(data)), "created_ts": float(created)}
            return self._apply_setup(fields, origin=None)
        if len(levels) == 4 and levels[1] == ROUND:
            score = _round_score(data)
            if [score.table, str(score.number)] != levels[2:]:
                raise TournamentError("bad_message", "the round does not match its topic")
            if score.table == self.table:  # this table scores its own rounds: the broker may only echo them
                if not self._kept(levels[0], score):
                    raise TournamentError("foreign_round", "another publisher sent a round of this table")
                return False
            return self._apply_round(score, levels[0], origin=None)
        raise TournamentError("bad_message", f"no tournament message goes to {'/'.join(levels)!r}")

    # --- what phones read -----------------------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """This table's name and its current tournament as phones show it (None before the first)."""
        with self._lock:
            current = self._current()
            return {"table": self.table, "tournament": None if current is None else _view(current, self.table)}

    def export(self) -> list[dict[str, Any]]:
        """Every tournament kept, oldest first, with its rounds and standings (the history's export)."""
        with self._lock:
            ordered = sorted(self._tournaments.values(), key=lambda kept: kept[1])
            return [{**_view(t, self.table), "created_ts": created} for t, created in ordered]

    def export_csv(self) -> str:
        """Every tournament's rounds, a row per player per round, for a spreadsheet (UTF-8 with a BOM, as the
        history's CSV: launcher/export.py)."""
        from launcher.export import text_cell  # the exports are no part of the start

        buffer = io.StringIO()
        out = csv.writer(buffer, lineterminator="\r\n")
        out.writerow(CSV_COLUMNS)
        for tournament in self.export():
            totals: dict[str, int] = {}
            for r in tournament["rounds"]:
                for player, points in r["points"].items():
                    totals[player] = totals.get(player, 0) + points
                    row = (tournament["id"], r["table"], r["number"], text_cell(player), points, totals[player])
                    out.writerow(row)
        return "\ufeff" + buffer.getvalue()

    # --- internals ----------------------------------------------------------------------------------------

    def _kept(self, id: str, score: RoundScore) -> bool:
        with self._lock:
            kept = self._tournaments.get(id)
            return kept is not None and any(r == score for r in kept[0].rounds)

    def _current(self) -> Tournament | None:
        mine = [(created, t) for t, created in self._tournaments.values() if self.table in t.rotation.tables]
        return max(mine, key=lambda kept: kept[0])[1] if mine else None

    def _apply_setup(self, data: dict[str, Any], *, origin: str | None) -> bool:
        id = data["tournament"]
        with self._lock:
            if id in self._tournaments:
                return False
            tournament = Tournament(id, _rotation(data))
            with self._store.connect() as conn:
                tournament_table.add(conn, id, json.dumps(data, ensure_ascii=False), data["created_ts"])
            self._tournaments[id] = (tournament, data["created_ts"])
            pending = self._pending.pop(id, {})
        self._bus.publish(EventType.TOURNAMENT_SET_UP, {**data, "origin": origin})
        for score in pending.values():
            try:
                self._apply_round(score, id, origin=None)
            except TournamentError as e:
                log.warning("a round heard before tournament %s was set up is refused: %s", id, e)
        return True

    def _apply_round(self, score: RoundScore, id: str, *, origin: str | None) -> bool:
        with self._lock:
            kept = self._tournaments.get(id)
            if kept is None:
                if sum(len(p) for p in self._pending.values()) >= MAX_PENDING:
                    raise TournamentError("too_many_pending", "too many rounds of tournaments never set up")
                self._pending.setdefault(id, {})[score.id] = score
                return False
            tournament = kept[0]
            tournament.check(score)
            if any(r.id == score.id for r in tournament.rounds):
                tournament.add(score)  # heard again: refused if its points differ from those kept
                return False
            data = {"tournament": id, "table": score.table, "number": score.number, "points": dict(score.points)}
            with self._store.connect() as conn:
                tournament_table.add_round(conn, id, score.id, json.dumps(data, ensure_ascii=False))
            tournament.add(score)
            standings = _standings(tournament)
        self._bus.publish(EventType.TOURNAMENT_ROUND, {**data, "origin": origin, "standings": standings})
        return True


def _rotation(data: Mapping[str, Any]) -> Rotation:
    return Rotation.of(_names(data.get("players")), _names(data.get("tables")))


def _names(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TournamentError("bad_message", "players and tables must be lists of names")
    return value


def _setup_fields(rotation: Rotation) -> dict[str, Any]:
    return {"players": list(rotation.players), "tables": list(rotation.tables)}


def _round_score(data: Mapping[str, Any]) -> RoundScore:
    table, number, points = data.get("table"), data.get("number"), data.get("points")
    if not isinstance(table, str) or isinstance(number, bool) or not isinstance(number, int):
        raise TournamentError("bad_message", "a round needs its table and number")
    if not isinstance(points, dict):
        raise TournamentError("bad_points", "a round's points are an object of player: points")
    return RoundScore(table, number, points)


def _standings(tournament: Tournament) -> list[dict[str, Any]]:
    return [{"player": s.player, "points": s.points, "rounds": s.rounds} for s in tournament.standings()]


def _round_view(score: RoundScore, rotation: Rotation) -> dict[str, Any]:
    cycle, within = rotation.cycle_of(score.number)
    return {
        "table": score.table,
        "number": score.number,
        "cycle": cycle,
        "cycle_round": within,
        "points": dict(score.points),
    }


def _view(tournament: Tournament, table: str) -> dict[str, Any]:
    rotation = tournament.rotation
    tables = []
    for name in rotation.tables:
        number = tournament.next_round(name)
        seats = None if number is None else list(rotation.seats_at(name, number).seats)
        cycle, within = (None, None) if number is None else rotation.cycle_of(number)
        tables.append({"table": name, "next_round": number, "cycle": cycle, "cycle_round": within, "seats": seats})
    return {
        "id": tournament.id,
        "players": list(rotation.players),
        "tables": tables,
        "this_table": table,
        "rounds_per_table": rotation.rounds,
        "cycles": MAX_CYCLES,
        "rounds": [
            _round_view(r, rotation)
            for r in sorted(tournament.rounds, key=lambda r: (r.number, rotation.tables.index(r.table)))
        ],
        "standings": _standings(tournament),
    }
