"""Tournaments: the partner rotation (launcher/game/rotation.py) kept in the store and shared by tables.

One table's phone sets a tournament up, with a secret key (launcher/home/tournament_wire.py) that only its tables hold:
the other tables' admins join it by typing its code. The current tournament is the one this table chose (set up or
joined here), kept in the store, never one a broker names. Every table scores, corrects and takes back its own
rounds; each round has a version, counted up by the table that scored it, and the highest version wins on every
table, so the tables converge whatever order the messages come in. Each change is published on the event bus with
`origin`, the table it was made at: phones see it live, and the MQTT bridge sends this table's own changes to the
broker, signed (launcher/home/tournament_post.py takes what comes back).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from launcher.events import EventBus, EventType
from launcher.game.rotation import MAX_CYCLES, Rotation, RoundScore, Tournament, TournamentError
from launcher.home.tournament_wire import join_code, key_of, new_key, tournament_id
from launcher.store import Store, tournament_table

log = logging.getLogger(__name__)

NONCES_KEPT = 4096  # asks remembered, so one heard again (even after a restart) is not answered again
CSV_COLUMNS = ("tournament", "table", "round", "player", "points", "total")


@dataclass(frozen=True, slots=True)
class Version:
    """A round as its table last told it: `points` None once it was taken back."""

    version: int
    points: Mapping[str, int] | None


@dataclass
class _Kept:
    setup: dict[str, Any]
    created: float
    tournament: Tournament
    versions: dict[tuple[str, int], Version]


class TournamentBook:
    def __init__(self, store: Store, bus: EventBus, *, table: str, wall: Callable[[], float] = time.time) -> None:
        """`table`: this table's name (its [mqtt] table)."""
        self._store = store
        self._bus = bus
        self.table = table
        self._wall = wall
        self._lock = threading.RLock()
        self._kept: dict[str, _Kept] = {}
        self._joined: list[Callable[[str], None]] = []
        with store.connect() as conn:
            self._keys = {id: bytes.fromhex(key) for id, key in tournament_table.keys(conn).items()}
            self._chosen = tournament_table.chosen(conn)
            for id, setup, created in tournament_table.all_setups(conn):
                versions = {}
                for text in tournament_table.rounds(conn, id):
                    data = json.loads(text)
                    versions[(data["table"], data["number"])] = Version(data.get("version", 1), data["points"])
                self._kept[id] = _Kept(
                    json.loads(setup), created, _tournament(id, setup_rotation(json.loads(setup)), versions), versions
                )

    # --- from this table's phones -------------------------------------------------------------------------

    def set_up(self, players: list[str], tables: list[str]) -> dict[str, Any]:
        """A new tournament this table plays in, with a key of its own; it becomes this table's choice."""
        if self.table not in tables:
            raise TournamentError("unknown_table", f"this table, {self.table!r}, must be one of the tables")
        rotation = Rotation.of(players, tables)
        key = new_key()
        id = tournament_id(key)
        self._hold(id, key)
        self.apply_setup(id, {**setup_fields(rotation), "created_ts": self._wall()}, origin=self.table)
        return self.view()

    def join(self, code: str) -> dict[str, Any]:
        """Another table's tournament, by its code: held and chosen here; its setup and rounds come over the broker."""
        key = key_of(code)
        id = tournament_id(key)
        self._hold(id, key)
        for listener in list(self._joined):
            listener(id)
        return self.view()

    def on_join(self, listener: Callable[[str], None]) -> None:
        """`listener(id)` is told each tournament joined with a code (the bridge asks the broker for it)."""
        self._joined.append(listener)

    def code(self) -> str | None:
        """The join code of the current tournament, for the admin to give another table; None without one."""
        with self._lock:
            key = self._keys.get(self._chosen or "")
            return None if key is None else join_code(key)

    def score(self, number: int, points: Mapping[str, int]) -> dict[str, Any]:
        """This table's next round of the current tournament, scored."""
        with self._lock:
            kept = self._mine()
            expected = kept.tournament.next_round(self.table)
            if number != expected:
                raise TournamentError("not_next_round", f"the next round to score here is {expected}, not {number}")
            self._tell(kept, number, dict(points))
        return self.view()

    def correct(self, number: int, points: Mapping[str, int] | None) -> dict[str, Any]:
        """This table's round `number` given other points, or taken back (None): a new version every table takes."""
        with self._lock:
            kept = self._mine()
            told = kept.versions.get((self.table, number))
            if told is None or told.points is None:
                raise TournamentError("no_round", f"round {number} is not scored at this table")
            self._tell(kept, number, None if points is None else dict(points))
        return self.view()

    # --- what phones read -----------------------------------------------------------------------------------

    def view(self) -> dict[str, Any]:
        """This table's name and its current tournament as phones show it (None before the first); `awaiting` the
        id of one joined whose setup has not come yet."""
        with self._lock:
            kept = self._kept.get(self._chosen or "")
            awaiting = self._chosen if kept is None and self._chosen in self._keys else None
            view = None if kept is None else _view(kept, self.table)
            return {"table": self.table, "tournament": view, "awaiting": awaiting}

    def export(self) -> list[dict[str, Any]]:
        """Every tournament kept, oldest first, with its rounds and standings (the history's export)."""
        with self._lock:
            ordered = sorted(self._kept.values(), key=lambda kept: kept.created)
            return [{**_view(kept, self.table), "created_ts": kept.created} for kept in ordered]

    def export_csv(self) -> str:
        """Every tournament's rounds, a row per player per round, for a spreadsheet (UTF-8 with a BOM, as the
        history's CSV: launcher/table/export.py)."""
        from launcher.table.export import text_cell  # the exports are no part of the start

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

    # --- for the broker's side (launcher/home/tournament_post.py) ---------------------------------------------------

    def key(self, id: str) -> bytes | None:
        with self._lock:
            return self._keys.get(id)

    def held(self) -> list[str]:
        """The ids of every tournament this table holds the key of."""
        with self._lock:
            return list(self._keys)

    def first_ask(self, nonce: str) -> bool:
        """Whether an ask with this nonce is heard here for the first time (kept in the store, over restarts)."""
        with self._lock, self._store.connect() as conn:
            return tournament_table.first_ask(conn, nonce, NONCES_KEPT)

    def setup(self, id: str) -> dict[str, Any] | None:
        with self._lock:
            kept = self._kept.get(id)
            return None if kept is None else dict(kept.setup)

    def told(self, id: str, table: str) -> dict[int, Version]:
        """Every round of `table` in tournament `id`, by number, as its newest version."""
        with self._lock:
            kept = self._kept.get(id)
            if kept is None:
                return {}
            return {number: v for (at, number), v in kept.versions.items() if at == table}

    def apply_setup(self, id: str, data: dict[str, Any], *, origin: str | None) -> bool:
        """Keep a setup (players, tables, created_ts) of a tournament whose key is held; True if it was new."""
        rotation = setup_rotation(data)
        fields = {**setup_fields(rotation), "created_ts": data["created_ts"]}
        with self._lock:
            kept = self._kept.get(id)
            if kept is not None:
                if setup_fields(kept.tournament.rotation) != setup_fields(rotation):
                    raise TournamentError("setup_differs", f"tournament {id} was set up with other players or tables")
                return False
            with self._store.connect() as conn:
                tournament_table.add(conn, id, json.dumps(fields, ensure_ascii=False), fields["created_ts"])
            self._kept[id] = _Kept(fields, fields["created_ts"], Tournament(id, rotation), {})
        self._bus.publish(EventType.TOURNAMENT_SET_UP, {"tournament": id, **fields, "origin": origin})
        return True

    def apply_round(self, id: str, table: str, number: int, told: Version, *, origin: str | None) -> bool:
        """Keep a version of a round if it is newer than the one kept; True if it changed anything. The same
        version with other points is refused (only the table that scores a round counts its versions)."""
        with self._lock:
            kept = self._kept.get(id)
            if kept is None:
                raise TournamentError("no_setup", f"tournament {id}'s setup has not come yet")
            before = kept.versions.get((table, number))
            if before is not None and told.version <= before.version:
                if told.version == before.version and told.points != before.points:
                    raise TournamentError("round_scored", f"round {number} at {table} is scored already")
                return False
            versions = {**kept.versions, (table, number): told}
            tournament = _tournament(id, kept.tournament.rotation, versions)  # checks the points
            data = {"tournament": id, "table": table, "number": number, "points": told.points, "version": told.version}
            with self._store.connect() as conn:
                tournament_table.put_round(conn, id, f"{table}.{number}", json.dumps(data, ensure_ascii=False))
            kept.versions, kept.tournament = versions, tournament
            standings = _standings(tournament)
        self._bus.publish(EventType.TOURNAMENT_ROUND, {**data, "origin": origin, "standings": standings})
        return True

    # --- internals ----------------------------------------------------------------------------------------

    def _hold(self, id: str, key: bytes) -> None:
        with self._lock, self._store.connect() as conn:
            tournament_table.add_key(conn, id, key.hex())
            tournament_table.choose(conn, id)
            self._keys[id] = key
            self._chosen = id

    def _mine(self) -> _Kept:
        """With the lock held: the current tournament, if this table plays in it."""
        kept = self._kept.get(self._chosen or "")
        if kept is None:
            raise TournamentError("no_tournament", "there is no tournament at this table")
        if self.table not in kept.tournament.rotation.tables:
            raise TournamentError("not_playing", f"this table, {self.table!r}, plays no round in this tournament")
        return kept

    def _tell(self, kept: _Kept, number: int, points: dict[str, int] | None) -> None:
        before = kept.versions.get((self.table, number))
        version = Version(1 if before is None else before.version + 1, points)
        self.apply_round(kept.tournament.id, self.table, number, version, origin=self.table)


def setup_rotation(data: Mapping[str, Any]) -> Rotation:
    return Rotation.of(_names(data.get("players")), _names(data.get("tables")))


def _names(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TournamentError("bad_message", "players and tables must be lists of names")
    return value


def setup_fields(rotation: Rotation) -> dict[str, Any]:
    return {"players": list(rotation.players), "tables": list(rotation.tables)}


def _tournament(id: str, rotation: Rotation, versions: Mapping[tuple[str, int], Version]) -> Tournament:
    """The rotation with the rounds not taken back, in their order (a correction replaces its round)."""
    tournament = Tournament(id, rotation)
    for (table, number), told in versions.items():
        if told.points is not None:
            tournament.add(RoundScore(table, number, told.points))
    return tournament


def _standings(tournament: Tournament) -> list[dict[str, Any]]:
    return [{"player": s.player, "points": s.points, "rounds": s.rounds} for s in tournament.standings()]


def _round_view(score: RoundScore, rotation: Rotation, version: int) -> dict[str, Any]:
    cycle, within = rotation.cycle_of(score.number)
    return {
        "table": score.table,
        "number": score.number,
        "cycle": cycle,
        "cycle_round": within,
        "points": dict(score.points),
        "version": version,
    }


def _view(kept: _Kept, table: str) -> dict[str, Any]:
    tournament = kept.tournament
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
            _round_view(r, rotation, kept.versions[(r.table, r.number)].version)
            for r in sorted(tournament.rounds, key=lambda r: (r.number, rotation.tables.index(r.table)))
        ],
        "standings": _standings(tournament),
    }
