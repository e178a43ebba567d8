"""The partner rotation of a tournament, and its rounds and standings: pure, no I/O.

Four players at one table: each of the other three sits opposite (is the partner of) the first in turn, four rounds
a partner, twelve rounds in a cycle. Eight players at two tables: each player partners each of the other seven in
turn, four rounds a partner, 28 rounds in a cycle at each table. In general 4·t players at t tables play n - 1
stages of four rounds, each stage a pairing of everyone (the circle method: one player stays, the others turn), so
that every pair partners in exactly one stage. Partners sit opposite: seats 0 and 2 are one team, 1 and 3 the other.
Every round's points are kept per player; the standings add them up (docs/GAME.md#tournaments).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from launcher.errors import LauncherError

ROUNDS_PER_PARTNER = 4
SEATS = 4  # two teams of two partners at each table
MAX_TABLES = 4
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


def _pairings(count: int) -> list[list[tuple[int, int]]]:
    """count - 1 pairings of players 0..count-1; every pair in exactly one. Player 0 partners 1, 2, 3, … in turn."""
    turning = count - 1
    stages = []
    for stage in range(turning):
        pairs = [(0, 1 + stage)]
        for k in range(1, count // 2):
            pairs.append((1 + (stage + k) % turning, 1 + (stage - k) % turning))
        stages.append(pairs)
    return stages


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

    def seating(self, number: int) -> tuple[Seating, ...]:
        """Every table's seats for round `number` (1 to rounds): the stage it falls in decides."""
        if not 1 <= number <= self.rounds:
            raise TournamentError("bad_round", f"round {number} is not in 1 to {self.rounds}")
        pairs = _pairings(len(self.players))[(number - 1) // ROUNDS_PER_PARTNER]
        names = self.players
        return tuple(
            Seating(table, (names[a[0]], names[b[0]], names[a[1]], names[b[1]]))
            for table, (a, b) in zip(self.tables, zip(pairs[0::2], pairs[1::2], strict=True), strict=True)
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
        """The first round `table` has not scored yet, or None when its cycle is over."""
        self.rotation.seats_at(table, 1)  # a table of this tournament
        for number in range(1, self.rotation.rounds + 1):
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
