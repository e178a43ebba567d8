"""How a press ended, told to the table (the event every phone shows, the cue the launcher plays), and the FAULT
latch that a failure sets."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

from launcher.events import EventBus, EventType
from launcher.fairplay.schedule import Outcome
from launcher.game import Demand
from launcher.hardware.base import Cues, DispenseResult, StopReason
from launcher.press.hopper import HopperCount


class FaultCause(StrEnum):
    """Why the launcher stopped to be safe, for the page to say in plain words (docs/API.md)."""

    BOARD = "board"  # the launcher's board stopped answering
    MOTOR = "motor"  # the motor ran too long without finishing
    DISPENSER = "dispenser"  # the dispenser reported an error or could not run
    RECORD = "record"  # the press could not be saved


class Trouble(StrEnum):
    """What stops the table from playing on, as every phone's prompt tells it (docs/API.md, `trouble`)."""

    JAM = "jam"  # no card came out: open the lid, take it out, close it
    STUCK = "stuck"  # a card stayed at the exit
    EMPTY = "empty"  # the hopper ran out before a card came out: refill
    SHORT = "short"  # the hopper ran out in the middle of a fire: some cards are still owed; refill
    LID_OPEN = "lid_open"
    FAULT = "fault"  # latched: the admin resets it
    BOARD_LOST = "board_lost"  # the launcher's board stopped answering; clears by itself when it is back


def trouble_of(outcome: Outcome, result: DispenseResult, hopper: HopperCount) -> tuple[Trouble, int] | None:
    """The trouble a fire's end leaves at the table, with the cards it still owes (a short fire's), or None."""
    short = outcome.cards - result.dispensed
    if result.stop in (StopReason.COUNT, StopReason.JAM) and hopper.remaining == 0 and short > 0:
        return (Trouble.SHORT, short) if result.dispensed else (Trouble.EMPTY, 0)
    if result.stop is StopReason.JAM:
        return Trouble.JAM, 0
    if result.stop is StopReason.STUCK:
        return Trouble.STUCK, 0
    return None


def announce(
    bus: EventBus,
    cues: Cues,
    outcome: Outcome,
    result: DispenseResult,
    hopper: HopperCount,
    deal: Demand | None,
    *,
    player: str | None = None,
) -> tuple[FaultCause, str] | None:
    """Publish the fire's end and play its cue. Returns the FAULT to latch (its cause and message), if the fire ended
    in one. `player`: who a fire that brought out nothing was pressed for (told, though it costs them nothing)."""
    data: dict[str, object] = {"press": outcome.press, "requested": result.requested, "dispensed": result.dispensed}
    trouble = trouble_of(outcome, result, hopper)
    if trouble is not None and trouble[0] is Trouble.SHORT and deal is None:
        data["owed"] = trouble[1]  # the hopper ran out: the cards the schedule drew that did not come out
    if not result.dispensed and player is not None and deal is None:
        data["player"] = player
    if deal is not None and result.stop in (StopReason.COUNT, StopReason.JAM, StopReason.STUCK):
        # Exact cards: what was owed and what came out; a short deal stays owed on the table.
        owed = {"player": deal.player or None, "cause": deal.cause.value}  # "": turns not tracked
        bus.publish(EventType.LAUNCHER_DEALT, {**owed, **data, "press": None})
    elif result.stop is StopReason.COUNT:
        if outcome.jackpot:
            cues.jackpot(result.dispensed)
        else:
            cues.fired(result.dispensed)
        bus.publish(
            EventType.LAUNCHER_FIRED, {**data, "ms": result.ms, "tension": outcome.tension, "jackpot": outcome.jackpot}
        )
    elif result.stop is StopReason.JAM and hopper.remaining == 0:
        bus.publish(EventType.LAUNCHER_EMPTY, data)
    elif result.stop in (StopReason.JAM, StopReason.STUCK):
        reason = "no_card" if result.stop is StopReason.JAM else "stuck_at_exit"
        bus.publish(EventType.LAUNCHER_JAMMED, {**data, "reason": reason})
    elif result.stop in (StopReason.LID, StopReason.ABORTED):
        bus.publish(EventType.LAUNCHER_STOPPED, {**data, "reason": str(result.stop)})
    elif result.stop is StopReason.TIMEOUT:
        return FaultCause.MOTOR, f"the motor ran {result.ms} ms without finishing; watchdog stopped it"
    elif result.stop is StopReason.ERROR:
        return FaultCause.DISPENSER, "the dispenser reported an error"
    return None


def announce_no_fire(bus: EventBus, outcome: Outcome, misses_in_row: int, *, player: str | None = None) -> None:
    """A press that ran no motor: the schedule's miss, or a fire the empty hopper could not give (for `player`)."""
    if outcome.fired:
        empty = {"press": outcome.press, "requested": outcome.cards, "dispensed": 0}
        bus.publish(EventType.LAUNCHER_EMPTY, empty if player is None else {**empty, "player": player})
    else:
        data = {"press": outcome.press, "tension": outcome.tension, "misses_in_row": misses_in_row}
        bus.publish(EventType.LAUNCHER_MISSED, data)


class FaultLatch:
    """FAULT: latched by the first failure, which it names; the motor is stopped at every latch. Only `clear()`
    leaves it, or `link_back()` for a FAULT the board's lost link latched. The caller serialises the calls."""

    def __init__(self, *, stop_motor: Callable[[], None], cues: Cues, bus: EventBus) -> None:
        self._stop_motor = stop_motor
        self._cues = cues
        self._bus = bus
        self.message: str | None = None
        self.cause: FaultCause | None = None
        self._from_link = False  # cleared by itself when the board is back

    def latch(
        self, cause: FaultCause, message: str, *, from_link: bool = False, fire: dict[str, int] | None = None
    ) -> None:
        """Motor off, FAULT latched (the first cause and message stay), everyone told. `fire`: the press it cut
        short, `{press, requested, dispensed}`, so that every phone says how many cards came out."""
        self._stop_motor()
        if self.message is None:
            self.message, self.cause = message, cause
            self._from_link = from_link
            self._cues.fault()
            self._bus.publish(EventType.HARDWARE_FAULT, {"message": message, "cause": cause.value, **(fire or {})})

    def clear(self) -> str | None:
        """Leave FAULT; returns what it was."""
        was, self.message, self.cause, self._from_link = self.message, None, None, False
        return was

    def link_back(self) -> bool:
        """The board is back: a FAULT its lost link latched clears. True if it did."""
        if not self._from_link:
            return False
        self.clear()
        return True
