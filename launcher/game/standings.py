"""The rounds of a game as entered, and the standings that are their replay: adding a round plays that round on
the standings so far; undoing or correcting one replays them all, and a change that would leave a later round
impossible is refused as a whole."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from launcher.game.cards import GameError
from launcher.game.entries import RoundEntry, RoundResult
from launcher.game.modes import ModeRules
from launcher.game.teams import Sides
from launcher.refusals import Refusal

HandValue = Callable[[dict[str, int] | int, bool], int]  # (hand, holds the red 0) → points


@dataclass(slots=True)
class Standings:
    """The state after replaying the rounds."""

    totals: dict[str, int]
    results: list[RoundResult] = field(default_factory=list)
    eliminated: dict[str, int] = field(default_factory=dict)  # side → index of the round that put it out
    winners: tuple[str, ...] = ()  # empty while the game goes on
    losers: tuple[str, ...] = ()  # the sides that busted in the round that ended the game (bust modes)
    # Each player's rounds won and hand points so far, kept as rounds are played: a press's scores read them
    # instead of summing every round.
    won: dict[str, int] = field(default_factory=dict)
    points: dict[str, int] = field(default_factory=dict)

    def copy(self) -> Standings:
        """A copy to play the next round on (the results themselves never change)."""
        return Standings(
            dict(self.totals),
            list(self.results),
            dict(self.eliminated),
            self.winners,
            self.losers,
            dict(self.won),
            dict(self.points),
        )

    def record(self, result: RoundResult) -> None:
        """Add a round played on these standings."""
        self.results.append(result)
        winner = result.entry.winner
        if winner is not None:
            self.won[winner] = self.won.get(winner, 0) + 1
        for player, value in result.values.items():
            self.points[player] = self.points.get(player, 0) + value


class RoundReplay:
    """The rounds entered so far and their standings. `doubles`: a reshuffled round counts double.

    Every change replaces `entries` and `standings`, never changes them in place: a shallow copy is a copy to change.
    """

    def __init__(self, sides: Sides, rules: ModeRules, value: HandValue, *, doubles: bool) -> None:
        self._sides = sides
        self._rules = rules
        self._value = value
        self._factor = 2 if doubles else 1
        self.entries: tuple[RoundEntry, ...] = ()
        self.standings = self._play(())

    def add(self, entry: RoundEntry) -> RoundResult:
        """Play `entry` after the rounds so far: the same as replaying them all with it, at the cost of one round."""
        state = self.standings.copy()
        index = len(self.entries)
        state.record(self._checked(state, index, entry))
        self.standings, self.entries = state, (*self.entries, entry)
        return state.results[-1]

    def undo_last(self) -> RoundEntry:
        if not self.entries:
            raise GameError("there is no round to undo", Refusal.NO_ROUND_TO_UNDO)
        removed = self.entries[-1]
        self._commit(self.entries[:-1])
        return removed

    def replace(self, index: int, entry: RoundEntry) -> RoundResult:
        """Put `entry` in the place of round `index` (checked by the caller to be one of the rounds)."""
        self._commit((*self.entries[:index], entry, *self.entries[index + 1 :]))
        return self.standings.results[index]

    def reset(self, entries: Sequence[RoundEntry]) -> None:
        """The rounds read back from the store, replayed."""
        self._commit(tuple(entries))

    def _commit(self, entries: tuple[RoundEntry, ...]) -> None:
        """Replay `entries`; keep them only if every round still stands."""
        self.standings = self._play(entries)
        self.entries = entries

    def _play(self, entries: Sequence[RoundEntry]) -> Standings:
        state = Standings(totals={side: 0 for side in self._sides.names})
        for index, entry in enumerate(entries):
            state.record(self._checked(state, index, entry))
        return state

    def _checked(self, state: Standings, index: int, entry: RoundEntry) -> RoundResult:
        try:
            return self._play_round(state, index, entry)
        except GameError as error:
            raise GameError(f"round {index + 1}: {error}", error.refusal, **error.params) from None

    def _play_round(self, state: Standings, index: int, entry: RoundEntry) -> RoundResult:
        if state.winners:
            raise GameError(f"the game is already over ({', '.join(state.winners)} won)", Refusal.GAME_OVER)
        side_of = self._sides.side_of
        active = [s for s in self._sides.names if s not in state.eliminated]
        for player in (entry.winner, *entry.hands, *(entry.order or ())):
            side = side_of(player)
            if side in state.eliminated:
                raise GameError(
                    f"{side} was eliminated in round {state.eliminated[side] + 1}",
                    Refusal.ELIMINATED,
                    side=side,
                    round=state.eliminated[side] + 1,
                )
        in_game = [p for p in self._sides.players if side_of(p) in active]
        if entry.order is not None:
            if missing := [p for p in in_game if p not in entry.order]:
                raise GameError(
                    f"the order misses {', '.join(missing)}; it lists every player still in the game, first out first"
                )
        elif missing := [p for p in in_game if p not in (entry.winner, *entry.hands)]:
            raise GameError(
                f"no hand for {', '.join(missing)}; every player still in the game needs one",
                Refusal.HAND_MISSING,
                players=missing,
            )
        values = {p: self._value(h, p == entry.red_zero) for p, h in entry.hands.items()}
        by_side = {s: sum(v for p, v in values.items() if side_of(p) == s) for s in active}
        winning_side = side_of(entry.winner)
        points = self._rules.points(by_side, winning_side, self._factor if entry.reshuffled else 1)
        for side, gained in points.items():
            state.totals[side] += gained
        verdict = self._rules.decide(state.totals, active, winning_side)
        for side in verdict.out:
            state.eliminated[side] = index
        state.winners, state.losers = verdict.winners, verdict.losers
        return RoundResult(index, entry, values, points, dict(state.totals), verdict.out)
