"""What players owe the launcher: the causes, the demands they make and the presses that serve them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from launcher.game.cards import GameError, exact_keys
from launcher.refusals import Refusal


class Cause(StrEnum):
    """Why a player presses or takes cards."""

    PLAIN = "plain"  # a press outside any demand
    DECLINED = "declined"
    HIT_2 = "hit_2"
    WILD_ALL_HIT = "wild_all_hit"
    WILD_HIT_FIRE = "wild_hit_fire"
    UNO_PENALTY = "uno_penalty"
    SUGGESTION_PENALTY = "suggestion_penalty"
    PARTY_PENALTY = "party_penalty"
    DEAL = "deal"
    DRAW_TWO = "draw_two"
    WILD_DRAW_FOUR = "wild_draw_four"
    CHALLENGE_FAILED = "challenge_failed"  # the Wild Draw Four was legal: the challenger takes 6
    ILLEGAL_WILD_DRAW_FOUR = "illegal_wild_draw_four"  # it was not: whoever played it takes 4
    FORGOT_UNO = "forgot_uno"
    FALSE_UNO = "false_uno"
    WRONG_ACCUSATION = "wrong_accusation"
    WRONG_CARD = "wrong_card"

    @property
    def label(self) -> str:
        return _LABELS.get(self, self.value.replace("_", " "))


_LABELS = {
    Cause.DECLINED: "declined play",
    Cause.HIT_2: "Hit 2",
    Cause.WILD_ALL_HIT: "Wild All Hit",
    Cause.WILD_HIT_FIRE: "Wild Hit-Fire",
    Cause.UNO_PENALTY: "UNO penalty",
    Cause.DRAW_TWO: "Draw Two",
    Cause.WILD_DRAW_FOUR: "Wild Draw Four",
    Cause.CHALLENGE_FAILED: "failed challenge",
    Cause.ILLEGAL_WILD_DRAW_FOUR: "illegal Wild Draw Four",
    Cause.FORGOT_UNO: "forgotten UNO",
    Cause.FALSE_UNO: "false UNO call",
}

# Play waits for these: the official rules let no card cancel an attack, so no card is declared meanwhile.
# Penalties and declined plays do not hold up play.
HOLDS_PLAY = frozenset(
    {
        Cause.DEAL,
        Cause.HIT_2,
        Cause.WILD_ALL_HIT,
        Cause.WILD_HIT_FIRE,
        Cause.DRAW_TWO,
        Cause.WILD_DRAW_FOUR,
        Cause.CHALLENGE_FAILED,
    }
)


class OpenAttacks(GameError):
    """A round cannot be scored yet: someone still owes the launcher. The message names who owes what; the params
    are the first demand's (Demand.owed)."""


class NotYourPress(GameError):
    """A press for a player the table does not ask; `asked` is who it asks (the page offers to press for them)."""

    def __init__(self, message: str, *, asked: str | None) -> None:
        super().__init__(message, Refusal.NOT_YOUR_PRESS, asked=asked)
        self.asked = asked


@dataclass(frozen=True, slots=True)
class Demand:
    """What one player still owes the launcher: presses, presses until it fires, or cards (classic)."""

    player: str
    cause: Cause
    presses: int = 0  # UNO Attack: presses left
    until_fire: bool = False  # UNO Attack: press until the launcher fires
    cards: int = 0  # classic: cards the dispenser still owes
    by: str | None = None  # who played the card (None for a penalty or the first card): stacking and challenges
    started: bool = False  # a press was counted: too late to stack on it or challenge it
    stacked: bool = False  # several cards added up: a stacked Wild Draw Four cannot be challenged
    carried: bool = False  # owed from the round before, which was scored: nobody may stack on it or challenge it

    def describe(self) -> str:
        """E.g. "press 2 more times", for messages and the page."""
        if self.until_fire:
            return "press until the launcher fires"
        if self.presses:
            more = " more" if self.started else ""
            return f"press {self.presses}{more} time{'s' if self.presses != 1 else ''}"
        more = " more" if self.started else ""
        return f"take {self.cards}{more} card{'s' if self.cards != 1 else ''}"

    def owed(self) -> dict[str, Any]:
        """The parameters of a refusal naming this demand (Refusal.OWES): who, for which card, and what is left."""
        return {
            "player": self.player,
            "card": self.cause.value,
            "presses": self.presses,
            "cards": self.cards,
            "until_fire": self.until_fire,
            "started": self.started,
        }

    def to_dict(self) -> dict[str, Any]:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "cause": self.cause.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], players: Sequence[str]) -> Demand:
        data = {"carried": False, **data}  # demands stored before rounds could carry them
        exact_keys("a demand", data, [f.name for f in fields(cls)])
        if data["player"] not in players or (data["by"] is not None and data["by"] not in players):
            raise GameError(f"a demand names a player who is not at the table: {data!r:.80}")
        try:
            cause = Cause(data["cause"])
        except ValueError:
            raise GameError(f"a demand has an unknown cause {data['cause']!r:.40}") from None
        for key in ("presses", "cards"):
            if not isinstance(data[key], int) or isinstance(data[key], bool) or data[key] < 0:
                raise GameError(f"a demand's {key} must be a whole number of 0 or more, not {data[key]!r:.40}")
        for key in ("until_fire", "started", "stacked", "carried"):
            if not isinstance(data[key], bool):
                raise GameError(f"a demand's {key} must be true or false, not {data[key]!r:.40}")
        if [data["presses"] > 0, data["until_fire"], data["cards"] > 0].count(True) != 1:
            raise GameError(f"a demand owes exactly one of presses, until_fire or cards: {data!r:.80}")
        return cls(**{**data, "cause": cause})


@dataclass(frozen=True, slots=True)
class Press:
    """One press of the launcher, attributed."""

    player: str | None  # None: no demand and turn tracking off
    cause: Cause
    fired: bool
    cards: int
    closed: bool  # this press settled its demand (a plain press always does)
