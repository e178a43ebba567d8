"""The scoring modes' arithmetic: what each side scores in a round, and when the game ends, who won, who busted and
who is out. docs/GAME.md gives each mode's rules."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from launcher.game.rulesets import parse_choice


class Mode(StrEnum):
    WINNER_COLLECTS = "winner_collects"  # the round winner gains the sum of the other hands
    LOWEST_TOTAL = "lowest_total"  # everyone adds their own hand; at the target, the lowest total wins
    ELIMINATION = "elimination"  # as lowest total; at the target a side is out; see Final for the last two
    KNOCK_OUT = "knock_out"  # the round plays on until one holds cards: they add their hand; the first to bust loses
    CHIPS = "chips"  # each loser pays the winner their hand in chips; a side at minus the target is bust

    @classmethod
    def parse(cls, value: object) -> Mode:
        return parse_choice(cls, "mode", value)

    @property
    def label(self) -> str:
        return _MODE_LABELS[self]


_MODE_LABELS = {
    Mode.WINNER_COLLECTS: "winner collects",
    Mode.LOWEST_TOTAL: "lowest total",
    Mode.ELIMINATION: "elimination",
    Mode.KNOCK_OUT: "knock-out",
    Mode.CHIPS: "chips",
}


class Final(StrEnum):
    """Elimination: how the game ends once two sides are left."""

    NEXT_ROUND = "next_round"  # the head-to-head final: the winner of the next round wins the game
    LAST_STANDING = "last_standing"  # they play on until one reaches the target too: the last one left wins

    @classmethod
    def parse(cls, value: object) -> Final:
        return parse_choice(cls, "final", value)


DEFAULT_FINAL = Final.LAST_STANDING  # the rule sheets' ending; the head-to-head final is a choice


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a round decided beyond its points."""

    out: tuple[str, ...] = ()  # sides eliminated by this round
    winners: tuple[str, ...] = ()  # the game's winners, once it is over
    losers: tuple[str, ...] = ()  # the sides that busted in the round that ended the game (bust modes)


@dataclass(frozen=True, slots=True)
class ModeRules:
    """One game's mode with its target, its elimination ending and its sides in seat order."""

    mode: Mode
    target: int
    final_rule: Final | None
    sides: tuple[str, ...]
    one_loser: bool = False  # of the sides that bust in one round, only the highest total loses (ties share)

    def points(self, by_side: Mapping[str, int], winning_side: str, factor: int) -> dict[str, int]:
        """What each side still in scores, from the value of each side's hands (`factor` 2: a doubled round)."""
        collected = sum(v for s, v in by_side.items() if s != winning_side)
        if self.mode is Mode.WINNER_COLLECTS:
            return {s: factor * collected if s == winning_side else 0 for s in by_side}
        if self.mode is Mode.CHIPS:  # zero-sum: each losing side pays its own hand to the winning side
            return {s: factor * (collected if s == winning_side else -v) for s, v in by_side.items()}
        return {s: factor * v for s, v in by_side.items()}  # in knock-out play only the loser holds cards

    def decide(self, totals: Mapping[str, int], active: Sequence[str], winning_side: str) -> Verdict:
        """Game over, and who is out, once a round has brought the sides still in (`active`) to `totals`."""
        reached = tuple(s for s in active if totals[s] >= self.target)
        if self.mode is Mode.WINNER_COLLECTS:
            return Verdict(winners=(winning_side,) if reached else ())
        if self.mode in (Mode.LOWEST_TOTAL, Mode.KNOCK_OUT):
            if not reached:
                return Verdict()
            winners = _lowest(totals, self.sides)  # those who reached the target busted: the lowest total wins
            busted = tuple(s for s in reached if s not in winners)
            return Verdict(winners=winners, losers=_highest(totals, busted) if self.one_loser and busted else busted)
        if self.mode is Mode.CHIPS:
            bust = tuple(s for s in active if totals[s] <= -self.target)
            # zero-sum: a bust side never has the highest balance
            return Verdict(winners=_highest(totals, self.sides), losers=bust) if bust else Verdict()
        if len(active) == 2 and self.final_rule is Final.NEXT_ROUND:  # the head-to-head final: its winner wins
            return Verdict(winners=(winning_side,))
        left = [s for s in active if s not in reached]
        if len(left) == 1:
            return Verdict(out=reached, winners=(left[0],))
        if not left:  # everyone left crossed at once: the lowest of them wins
            return Verdict(out=reached, winners=_lowest(totals, reached))
        return Verdict(out=reached)


def _lowest(totals: Mapping[str, int], sides: Sequence[str]) -> tuple[str, ...]:
    low = min(totals[s] for s in sides)
    return tuple(s for s in sides if totals[s] == low)


def _highest(totals: Mapping[str, int], sides: Sequence[str]) -> tuple[str, ...]:
    high = max(totals[s] for s in sides)
    return tuple(s for s in sides if totals[s] == high)
