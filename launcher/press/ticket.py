"""A press as the controller answers it: what it became (`PressTicket`, which its caller may wait on) or why it was
not taken (`PressRefused`); and the game at the table, which says whom a press is for (`Attribution`)."""

from __future__ import annotations

from typing import Any, Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.errors import LauncherError
from launcher.fairplay.schedule import Outcome
from launcher.game import Demand
from launcher.hardware.base import DispenseResult
from launcher.refusals import Refusal


class PressRefused(LauncherError, RuntimeError):
    """A press or command that the launcher did not take; `code` is Refusal.BUSY, FAULT, LID_OPEN or SHUFFLE_SEALING."""

    def __init__(self, code: Refusal, message: str) -> None:
        super().__init__(message)
        self.code = code


class Attribution(Protocol):
    """Who owes the launcher, from the game at the table (launcher/table/games.py)."""

    def cards_owed(self, player: str | None) -> Demand | None:
        """Classic UNO: the demand whose exact cards a press for `player` (None: whoever is asked) deals; None: the
        schedule decides."""
        ...

    def pressed(self, fired: bool, cards: int, player: str | None) -> str | None:
        """A press for `player` (None: whoever is asked) ended; returns the player it was attributed to."""
        ...

    def credited(self, player: str | None) -> str | None:
        """Who a press for `player` (None: whoever is asked) is told as, without using it up (a jammed press)."""
        ...


class PressTicket:
    """What a press became; `wait()` returns once any fire it started is over and the motor has rested."""

    def __init__(
        self,
        outcome: Outcome,
        deal: Demand | None = None,
        *,
        for_player: str | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.outcome = outcome
        self.deal = deal  # classic UNO: exact cards for this demand, not a schedule outcome
        self.for_player = for_player  # who a phone pressed for; None: whoever the table asks (the launcher's button)
        self.player: str | None = None  # who the press was attributed to
        self.result: DispenseResult | None = None
        self.counted = 0  # cards of its fire already added to the hopper's count as they left
        self._done = clock.event()

    def finish(self, result: DispenseResult | None) -> None:
        self.result = result
        self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    def as_dict(self) -> dict[str, Any]:
        return {
            "press": None if self.deal else self.outcome.press,
            "cards": self.outcome.cards,
            "dispensed": self.result.dispensed if self.result else 0,
            "tension": self.outcome.tension,
            "jackpot": self.outcome.jackpot,
            "player": self.player,
        }
