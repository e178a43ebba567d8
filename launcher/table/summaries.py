"""What the history keeps of an ended game, small enough to list and add up without replaying it: one
`GameSummary` per game and one `PlayerLine` per player in it (docs/HISTORY.md). Pure: made from a `Game`.

A player is known across games by `player_key`: the name trimmed and case-folded, as the game itself tells two
names apart (launcher/game/rulesets.py); widths are not folded there, so "Ａｎｎ" and "Ann" are two players here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from launcher.game import Game


class Outcome(StrEnum):
    FINISHED = "finished"  # the game reached its end by its own rules
    ABANDONED = "abandoned"  # a new game replaced it before it ended


def player_key(name: str) -> str:
    return name.strip().casefold()


@dataclass(frozen=True, slots=True)
class PlayerLine:
    """One player's part in one game."""

    key: str
    name: str
    side: str  # the player, or their team
    won: bool  # their side is among the winners of a finished game
    rounds: int  # rounds played (not yet out)
    rounds_won: int
    hand_points: int  # the value of the cards left in their hand, over those rounds
    presses: int
    cards: int  # cards the launcher gave them
    longest_drought: int | None  # None: the game was stored before droughts were recorded


@dataclass(frozen=True, slots=True)
class GameSummary:
    outcome: Outcome
    mode: str
    ruleset: str
    target: int
    rounds: int
    players: tuple[str, ...]  # seat order
    winners: tuple[str, ...]  # sides; empty for an abandoned game
    totals: dict[str, int]  # each side's final score
    lines: tuple[PlayerLine, ...]


def summarize(game: Game, outcome: Outcome) -> GameSummary:
    winners = game.winners if outcome is Outcome.FINISHED else ()
    stats = game.statistics()
    droughts = game.longest_droughts()
    lines = []
    for player in game.players:
        played = [
            r
            for r in game.rounds
            if player == r.entry.winner or player in r.entry.hands or player in (r.entry.order or ())
        ]
        lines.append(
            PlayerLine(
                key=player_key(player),
                name=player,
                side=game.side_of(player),
                won=game.side_of(player) in winners,
                rounds=len(played),
                rounds_won=stats[player].rounds_won,
                hand_points=sum(r.values.get(player, 0) for r in played),
                presses=stats[player].presses,
                cards=stats[player].cards,
                longest_drought=None if droughts is None else droughts[player],
            )
        )
    return GameSummary(
        outcome=outcome,
        mode=game.mode.value,
        ruleset=game.ruleset.value,
        target=game.target,
        rounds=len(game.rounds),
        players=game.players,
        winners=tuple(winners),
        totals=game.totals,
        lines=tuple(lines),
    )
