"""The partner rotation of a tournament, and its rounds and standings: pure, no I/O.

4·t players at t tables (t = 1 to 4) play n - 1 stages of four rounds, each stage a game of two partners against
two at every table. The stages are a whist tournament (`DESIGNS`, a table found once, offline, shipped as data):
every pair partners in exactly one stage and sits as opponents in exactly two, so nobody is matched against the same
people more than anyone else. The first player partners the second, third, … in turn, as seed 000 plays it with
four: each of the other three opposite you, four rounds a partner. A cycle is every stage once (12 rounds for four
players, 28 for eight); cycles follow one another with the totals carried on, and the champion is the most points
over the rounds played. Partners sit opposite: seats 0 and 2 are one team, 1 and 3 the other (docs/GAME.md#tournaments).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from launcher.errors import LauncherError

ROUNDS_PER_PARTNER = 4
SEATS = 4  # two teams of two partners at each table
MAX_TABLES = 4
MAX_CYCLES = 10  # bounds a round's number, from a phone or the broker
MAX_NAME = 24
MAX_POINTS = 100_000  # a round's points for one player, either sign


class TournamentError(LauncherError, ValueError):
    """A tournament input refused; `code` is stable for clients, the message names what was wrong."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Seating:
    """Who sits where at one table for one stage: seats 0 and 2 partner, so do 1 and 3."""

    table: str
    seats: tuple[str, str, str, str]

    @property
    def teams(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.seats[0], self.seats[2]), (self.seats[1], self.seats[3])


# Each stage, a game per table: "01v23" is players 0 and 1 (partners) against 2 and 3; players are hexadecimal
# digits in entry order. Eight players are issue #46's table; 12 and 16 were developed from a base stage over the
# integers mod n - 1 and one fixed player (tests/test_rotation_design.py checks every property).
DESIGNS: dict[int, tuple[str, ...]] = {
    4: ("01v23", "02v13", "03v12"),
    8: (
        "01v23|45v67", "02v46|13v57", "03v47|12v56", "04v15|26v37", "05v27|14v36", "06v35|17v24", "07v16|25v34",
    ),
    12: (
        "01v52|94v37|bav68", "02v63|a5v48|1bv79", "03v74|b6v59|21v8a", "04v85|17v6a|32v9b", "05v96|28v7b|43va1",
        "06va7|39v81|54vb2", "07vb8|4av92|65v13", "08v19|5bva3|76v24", "09v2a|61vb4|87v35", "0av3b|72v15|98v46",
        "0bv41|83v26|a9v57",
    ),
    16: (
        "01v6b|54vd2|f8vec|a7v93", "02v7c|65ve3|19vfd|b8va4", "03v8d|76vf4|2av1e|c9vb5", "04v9e|87v15|3bv2f|davc6",
        "05vaf|98v26|4cv31|ebvd7", "06vb1|a9v37|5dv42|fcve8", "07vc2|bav48|6ev53|1dvf9", "08vd3|cbv59|7fv64|2ev1a",
        "09ve4|dcv6a|81v75|3fv2b", "0avf5|edv7b|92v86|41v3c", "0bv16|fev8c|a3v97|52v4d", "0cv27|1fv9d|b4va8|63v5e",
        "0dv38|21vae|c5vb9|74v6f", "0ev49|32vbf|d6vca|85v71", "0fv5a|43vc1|e7vdb|96v82",
    ),
}  # fmt: skip


def stage_games(count: int, stage: int) -> list[tuple[int, int, int, int]]:
    """Stage `stage` (0 to count - 2) of `count` players: a game per table, as seats (partners at 0 and 2)."""
    games = []
    for game in DESIGNS[count][stage].split("|"):
        (a, b), (c, d) = (tuple(int(digit, 16) for digit in team) for team in game.split("v"))
        games.append((a, c, b, d))
    return games


@dataclass(frozen=True, slots=True)
class Rotation:
    players: tuple[str, ...]
    tables: tuple[str, ...]

    @classmethod
    def of(cls, players: Sequence[str], tables: Sequence[str]) -> Rotation:
        if not 1 <= len(tables) <= MAX_TABLES or len(set(tables)) != len(tables):
            raise TournamentError("bad_tables", f"expected 1 to {MAX_TABLES} different tables, not {list(tables)!r}")
        if len(players) != SEATS * len(tables):
            raise TournamentError(
                "seat_count",
                f"{len(tables)} table(s) seat {SEATS * len(tables)} players, not {len(players)}",
            )
        for name in players:
            if not name.strip() or len(name) > MAX_NAME or name != name.strip():
                raise TournamentError("bad_name", f"a player's name must be 1 to {MAX_NAME} characters: {name!r}")
        if len({p.casefold() for p in players}) != len(players):
            raise TournamentError("same_name", "each player needs a name of their own")
        return cls(tuple(players), tuple(tables))

    @property
    def stages(self) -> int:
        return len(self.players) - 1

    @property
    def rounds(self) -> int:
        """Rounds each table plays in one cycle: 12 for four players, 28 for eight."""
        return self.stages * ROUNDS_PER_PARTNER

    @property
    def last_round(self) -> int:
        return self.rounds * MAX_CYCLES

    def cycle_of(self, number: int) -> tuple[int, int]:
        """Round `number` (counted on over the cycles) as its cycle and its round in that cycle, each from 1."""
        cycle, within = divmod(number - 1, self.rounds)
        return cycle + 1, within + 1

    def seating(self, number: int) -> tuple[Seating, ...]:
        """Every table's seats for round `number` (1 to last_round): the stage it falls in decides."""
        if not 1 <= number <= self.last_round:
            raise TournamentError("bad_round", f"round {number} is not in 1 to {self.last_round}")
        _, within = self.cycle_of(number)
        names = self.players
        return tuple(
            Seating(table, (names[a], names[b], names[c], names[d]))
            for table, (a, b, c, d) in zip(
                self.tables, stage_games(len(names), (within - 1) // ROUNDS_PER_PARTNER), strict=True
            )
        )

    def seats_at(self, table: str, number: int) -> Seating:
        for seating in self.seating(number):
            if seating.table == table:
                return seating
        raise TournamentError("unknown_table", f"{table!r} is not a table of this tournament")


@dataclass(frozen=True, slots=True)
class RoundScore:
    """One round played at one table: each of its four players' points."""

    table: str
    number: int
    points: Mapping[str, int]

    @property
    def id(self) -> str:
        return f"{self.table}.{self.number}"


@dataclass(frozen=True, slots=True)
class Standing:
    player: str
    points: int
    rounds: int


class Tournament:
    """A rotation and the rounds scored so far; a round is kept once by its id, whichever table told it first."""

    def __init__(self, id: str, rotation: Rotation) -> None:
        self.id = id
        self.rotation = rotation
        self._rounds: dict[str, RoundScore] = {}

    @property
    def rounds(self) -> list[RoundScore]:
        return list(self._rounds.values())

    def check(self, score: RoundScore) -> RoundScore:
        """The round if it fits the rotation: its table's four players, whole points in range."""
        seating = self.rotation.seats_at(score.table, score.number)
        if set(score.points) != set(seating.seats):
            raise TournamentError(
                "wrong_players",
                f"round {score.number} at {score.table} is played by {', '.join(seating.seats)}, "
                f"not {', '.join(score.points)}",
            )
        for player, points in score.points.items():
            if isinstance(points, bool) or not isinstance(points, int) or not -MAX_POINTS <= points <= MAX_POINTS:
                raise TournamentError("bad_points", f"{player}'s points must be a whole number up to {MAX_POINTS}")
        return score

    def add(self, score: RoundScore) -> bool:
        """Keep a round; False if the same round was kept already. Another result for a kept round is refused."""
        self.check(score)
        kept = self._rounds.get(score.id)
        if kept is not None:
            if dict(kept.points) != dict(score.points):
                raise TournamentError("round_scored", f"round {score.number} at {score.table} is scored already")
            return False
        self._rounds[score.id] = score
        return True

    def next_round(self, table: str) -> int | None:
        """The first round `table` has not scored yet, counted on over the cycles; None after the last cycle."""
        self.rotation.seats_at(table, 1)  # a table of this tournament
        for number in range(1, self.rotation.last_round + 1):
            if f"{table}.{number}" not in self._rounds:
                return number
        return None

    def standings(self) -> list[Standing]:
        """Every player's points over the rounds scored, most first (ties by name, as entered)."""
        points = dict.fromkeys(self.rotation.players, 0)
        played = dict.fromkeys(self.rotation.players, 0)
        for score in self._rounds.values():
            for player, value in score.points.items():
                points[player] += value
                played[player] += 1
        order = {p: i for i, p in enumerate(self.rotation.players)}
        return sorted(
            (Standing(p, points[p], played[p]) for p in self.rotation.players),
            key=lambda s: (-s.points, order[s.player]),
        )
