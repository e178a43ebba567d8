"""Per-player statistics: rounds won and hand points from the rounds, presses, fires and cards from the launcher."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from launcher.game.cards import exact_keys, whole_number
from launcher.game.entries import RoundResult
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


class LauncherTally:
    """What the launcher gave each player; a press gives at most `max_cards` (the whole deck)."""

    def __init__(self, players: tuple[str, ...], max_cards: int) -> None:
        self._players = players
        self._max_cards = max_cards
        self._counts = {p: _LauncherCounts() for p in players}

    def record(self, player: str, cards: int) -> None:
        """A press attributed to `player` that gave `cards` cards (0: it did not fire)."""
        known(self._players, player)
        whole_number("cards", cards, 0, self._max_cards)
        counts = self._counts[player]
        self._counts[player] = _LauncherCounts(counts.presses + 1, counts.fires + (cards > 0), counts.cards + cards)

    def statistics(self, results: Sequence[RoundResult]) -> dict[str, PlayerStats]:
        stats = {}
        for player in self._players:
            launcher = self._counts[player]
            stats[player] = PlayerStats(
                rounds_won=sum(r.entry.winner == player for r in results),
                hand_points=sum(r.values.get(player, 0) for r in results),
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
        return {p: asdict(counts) for p, counts in self._counts.items()}

    def load(self, data: Mapping[str, Any]) -> None:
        """The counts as `to_dict()` stored them."""
        exact_keys("launcher statistics", data, self._players)
        for player, counts in data.items():
            exact_keys(f"{player}'s launcher statistics", counts, ("presses", "fires", "cards"))
            presses = whole_number("presses", counts["presses"], 0, 10**9)
            fires = whole_number("fires", counts["fires"], 0, presses)
            cards = whole_number("cards", counts["cards"], 0, 10**9)
            self._counts[player] = _LauncherCounts(presses, fires, cards)
