"""The randomised firing schedule: which press fires, and how many cards.

Pure: no I/O, no clock. An outcome is a deterministic function of the seed and the presses so far, so a round
can be replayed and checked. The controller only calls `Schedule.next_outcome()`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Outcome:
    press: int  # 1-based press number since the schedule started
    cards: int  # 0 = a miss
    tension: float  # 0..1, how close the next fire feels; drives the cues
    jackpot: bool = False
    pause_ms: int = 0  # suspense pause before the motor starts

    @property
    def fired(self) -> bool:
        return self.cards > 0


@dataclass(frozen=True, slots=True)
class Profile:
    """A firing profile. `hazard[k]` is the fire probability after k misses in a row."""

    name: str
    hazard: tuple[float, ...]
    max_fires_in_row: int
    card_weights: tuple[float, ...]  # card_weights[i] is the weight of firing i + 1 cards

    @property
    def longest_drought(self) -> int:
        """Most misses in a row before a fire is certain."""
        return len(self.hazard) - 1


# About one press in three fires; never more than 4 misses in a row; never 3 fires in a row; mostly 1-6 cards.
CLASSIC = Profile(
    name="classic",
    hazard=(0.22, 0.26, 0.34, 0.5, 1.0),
    max_fires_in_row=2,
    card_weights=(0.2, 0.22, 0.2, 0.16, 0.12, 0.1),
)

PROFILES: dict[str, Profile] = {CLASSIC.name: CLASSIC}


class Schedule:
    """Draws outcomes for one run of presses from a seeded generator."""

    def __init__(self, profile: Profile, seed: int | bytes | str) -> None:
        self.profile = profile
        self._rng = random.Random(seed)
        self._cards = tuple(range(1, len(profile.card_weights) + 1))
        self.presses = 0
        self.misses_in_row = 0
        self.fires_in_row = 0

    @property
    def tension(self) -> float:
        """0 right after a fire, 1 when the next press must fire."""
        return min(1.0, self.misses_in_row / self.profile.longest_drought)

    def next_outcome(self) -> Outcome:
        p = self.profile
        self.presses += 1
        draw = self._rng.random()
        fire = self.fires_in_row < p.max_fires_in_row and draw < p.hazard[self.misses_in_row]
        if not fire:
            self.misses_in_row = min(self.misses_in_row + 1, p.longest_drought)
            self.fires_in_row = 0
            return Outcome(press=self.presses, cards=0, tension=self.tension)
        cards = self._rng.choices(self._cards, weights=p.card_weights)[0]
        self.misses_in_row = 0
        self.fires_in_row += 1
        return Outcome(press=self.presses, cards=cards, tension=self.tension)
