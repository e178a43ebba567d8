"""Per-player statistics: rounds won and hand points from the rounds, presses, fires and cards from the launcher."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from launcher.game.cards import exact_keys, whole_number
from launcher.game.standings import Standings
from launcher.game.teams import known


@dataclass(frozen=True, slots=True)
class PlayerStats:
    rounds_won: int = 0
    hand_points: int = 0  # the value of the hands left, over all rounds
    presses: int = 0
    fires: int = 0  # presses that gave cards
    cards: int = 0  # cards received from the launcher
    places: tuple[int, ...] = ()  # knock-out play: the place in each round's finishing order (1: first out)


@dataclass(frozen=True, slots=True)
class _LauncherCounts:
    presses: int = 0
    fires: int = 0
    cards: int = 0


@dataclass(frozen=True, slots=True)
class _Drought:
    """The player's presses in a row that did not fire, now and at the longest (docs/GAME.md, "Droughts")."""

    in_row: int = 0
    longest: int = 0

    def after(self, cards: int) -> _Drought:
        in_row = 0 if cards else self.in_row + 1
        return _Drought(in_row, max(self.longest, in_row))


class LauncherTally:
    """What the launcher gave each player; a press gives at most `max_cards` (the whole deck)."""

    def __init__(self, players: tuple[str, ...], max_cards: int) -> None:
        self._players = players
        self._max_cards = max_cards
        self._counts = {p: _LauncherCounts() for p in players}
        # None: a game stored before droughts were recorded, whose earlier presses are unknown: it records none.
        self._droughts: dict[str, _Drought] | None = {p: _Drought() for p in players}

    def copy(self) -> LauncherTally:
        twin = LauncherTally(self._players, self._max_cards)
        twin._counts = dict(self._counts)  # the counts themselves are frozen: a record replaces them
        twin._droughts = None if self._droughts is None else dict(self._droughts)
        return twin

    def record(self, player: str, cards: int) -> None:
        """A press attributed to `player` that gave `cards` cards (0: it did not fire)."""
        known(self._players, player)
        whole_number("cards", cards, 0, self._max_cards)
        counts = self._counts[player]
        self._counts[player] = _LauncherCounts(counts.presses + 1, counts.fires + (cards > 0), counts.cards + cards)
        if self._droughts is not None:
            self._droughts[player] = self._droughts[player].after(cards)

    def longest_droughts(self) -> dict[str, int] | None:
        """Each player's most presses in a row that did not fire; None for a game stored before they were kept."""
        return None if self._droughts is None else {p: d.longest for p, d in self._droughts.items()}

    def statistics(self, standings: Standings, *, places: bool = True) -> dict[str, PlayerStats]:
        """Each player's; the places in each round only if `places` (they grow with the game)."""
        stats = {}
        results = standings.results if places else ()
        for player in self._players:
            launcher = self._counts[player]
            stats[player] = PlayerStats(
                rounds_won=standings.won.get(player, 0),
                hand_points=standings.points.get(player, 0),
                presses=launcher.presses,
                fires=launcher.fires,
                cards=launcher.cards,
                places=tuple(
                    r.entry.order.index(player) + 1
                    for r in results
                    if r.entry.order is not None and player in r.entry.order
                ),
            )
        return stats

    def to_dict(self) -> dict[str, dict[str, int]]:
        if self._droughts is None:
            return {p: asdict(counts) for p, counts in self._counts.items()}
        return {p: {**asdict(counts), **_drought_dict(self._droughts[p])} for p, counts in self._counts.items()}

    def load(self, data: Mapping[str, Any]) -> None:
        """The counts as `to_dict()` stored them."""
        exact_keys("launcher statistics", data, self._players)
        kept = all(isinstance(counts, Mapping) and "longest_drought" in counts for counts in data.values())
        droughts: dict[str, _Drought] = {}
        for player, counts in data.items():
            exact_keys(f"{player}'s launcher statistics", counts, _COUNT_KEYS + (_DROUGHT_KEYS if kept else ()))
            presses = whole_number("presses", counts["presses"], 0, 10**9)
            fires = whole_number("fires", counts["fires"], 0, presses)
            cards = whole_number("cards", counts["cards"], 0, 10**9)
            self._counts[player] = _LauncherCounts(presses, fires, cards)
            if kept:
                longest = whole_number("longest_drought", counts["longest_drought"], 0, presses - fires)
                droughts[player] = _Drought(whole_number("misses_in_row", counts["misses_in_row"], 0, longest), longest)
        self._droughts = droughts if kept else None


_COUNT_KEYS = ("presses", "fires", "cards")
_DROUGHT_KEYS = ("misses_in_row", "longest_drought")


def _drought_dict(drought: _Drought) -> dict[str, int]:
    return {"misses_in_row": drought.in_row, "longest_drought": drought.longest}
