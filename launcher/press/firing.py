"""The fire under way: the motor started for a press when the hopper has cards, and that fire's cards counted as
they leave (the exit beam's callback), so that the hopper's count is right before the fire has ended."""

from __future__ import annotations

import threading

from launcher.hardware.base import Dispenser, DispenseResult, FireJob
from launcher.press.hopper import Hopper, HopperCount
from launcher.press.ticket import PressTicket


class Firing:
    """One fire at a time. `start`, `follow` and `end` are called with `lock` held; `card_out` and `settle` take it."""

    def __init__(self, *, dispenser: Dispenser, hopper: Hopper, lock: threading.Lock) -> None:
        self._dispenser = dispenser
        self._hopper = hopper
        self._lock = lock
        self._firing: PressTicket | None = None  # the press whose fire is under way, whose cards are counted

    def start(self, ticket: PressTicket) -> tuple[FireJob | None, Exception | None]:
        """With the lock held: start the fire this press asks for, if the hopper has cards. (job, error)."""
        outcome = ticket.outcome
        remaining = self._hopper.count.remaining
        if not outcome.fired or remaining == 0:
            return None, None
        self._firing = ticket
        try:
            return self._dispenser.start(min(outcome.cards, remaining)), None
        except Exception as e:  # whatever the driver raised, the motor is stopped and FAULT names it
            self._firing = None
            self._dispenser.stop()
            return None, e

    def follow(self, ticket: PressTicket) -> None:
        """With the lock held: the fire the board started by itself (from its arm) is this press's."""
        self._firing = ticket

    def end(self) -> None:
        """With the lock held: the fire is over; its cards are counted no more."""
        self._firing = None

    def settle(self, ticket: PressTicket, result: DispenseResult) -> HopperCount:
        """The fire ended: the hopper's count after it."""
        with self._lock:
            self._firing = None
            # The cards were counted as they left; the fire's own count corrects any the callback missed.
            missed = result.dispensed - ticket.counted
        return self._hopper.settle(missed)

    def card_out(self) -> None:
        """The dispenser's callback as each card of a fire leaves (the exit beam's thread): count it now."""
        with self._lock:
            ticket = self._firing
            if ticket is None:
                return
            ticket.counted += 1
        self._hopper.card_out()
