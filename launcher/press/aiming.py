"""Turns the launcher to face whoever the table asks to press, where an aiming servo is fitted."""

from __future__ import annotations

from collections.abc import Callable

from launcher.game import Game, Table


class SeatAimer:
    """Faces the player who owes the launcher first, else whose turn it is; `aim_at` takes a seat's index."""

    def __init__(self, aim_at: Callable[[int], None]) -> None:
        self._aim_at = aim_at

    def face(self, game: Game, table: Table) -> None:
        player = table.asked()
        if player is not None:
            self._aim_at(game.players.index(player))  # seats as the game began, eliminated players included
