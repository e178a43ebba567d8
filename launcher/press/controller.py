"""The controller: the one place that decides and commands the dispenser.

A press (the physical button or a phone) draws the next outcome of the shuffle's schedule and, when it fires, the
motor starts before anything is written anywhere; the finisher (`PressFinisher`) then takes it to its end on the
worker thread. Presses that arrive while the launcher is busy are ignored, as on the real launcher. Any failure in
the dispense path stops the motor and latches FAULT: only a status read and `reset()` are accepted until then.

A backend with a reflex (a board on USB) is armed, whenever the launcher waits for a press the shuffle's schedule
draws, with that press's outcome, looked up and not drawn, a miss's too (docs/FAIRNESS.md, "The next press is
secret"); anything else that decides here first takes the arm back. The arm's protocol is `BoardArm` (arm.py); what
to arm for and what a fire from the arm becomes are decided here. Its other parts: the shuffle in play
(`ShuffleInPlay`), the fire under way (`Firing`) and what stops the table (`TableTrouble`).
"""

from __future__ import annotations

import logging
import threading
from contextlib import AbstractContextManager
from typing import Any

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import SHUFFLE_PRESSES
from launcher.events import EventBus, EventType
from launcher.fairplay.schedule import Outcome, Profile
from launcher.fairplay.shuffles import Shuffle, ShuffleBook
from launcher.hardware.base import FireJob, Hardware, Reflexes
from launcher.press.arm import BoardArm
from launcher.press.finisher import PressFinisher
from launcher.press.firing import Firing
from launcher.press.hopper import Hopper
from launcher.press.outcomes import FaultCause, FaultLatch
from launcher.press.shuffle_in_play import ShuffleInPlay
from launcher.press.table_trouble import TableTrouble
from launcher.press.ticket import Attribution, PressTicket
from launcher.press.ticket import PressRefused as PressRefused  # where the web layer and the tests import it
from launcher.press.wear import Wear
from launcher.refusals import Refusal

log = logging.getLogger(__name__)


Claimed = tuple[PressTicket, FireJob]  # a press the board made from its arm, taken here


class Controller:
    def __init__(
        self,
        *,
        hardware: Hardware,
        shuffles: ShuffleBook,
        profile: Profile,
        bus: EventBus,
        hopper: Hopper,
        min_rest_ms: int,
        game: Attribution | None = None,
        wear: Wear | None = None,
        shuffle_presses: int = SHUFFLE_PRESSES,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._clock = clock
        self._dispenser = hardware.dispenser
        self._cues = hardware.cues
        self._inputs = hardware.inputs
        self.describe_hardware = hardware.describe  # for the phones: the web layer holds no hardware
        self._shuffles = shuffles
        self._bus = bus
        self._hopper = hopper  # counted as each card leaves; the controller closes it
        self._game = game
        self._lock = threading.Lock()
        self._busy = False
        self._free_since = float("-inf")  # when the launcher last stopped being busy with a press
        self._fault = FaultLatch(stop_motor=self._dispenser.stop, cues=self._cues, bus=bus)
        self._last: PressTicket | None = None
        self._trouble = TableTrouble()
        self._in_play = ShuffleInPlay(shuffles, profile, presses=shuffle_presses)
        self._firing = Firing(dispenser=self._dispenser, hopper=hopper, lock=self._lock)
        self._finisher = PressFinisher(
            lock=self._lock,
            fault=self._fault,
            in_play=self._in_play,
            firing=self._firing,
            trouble=self._trouble,
            hopper=hopper,
            dispenser=self._dispenser,
            cues=self._cues,
            bus=bus,
            min_rest_ms=min_rest_ms,
            free=self._free,
            game=game,
            wear=wear,
            clock=clock,
        )
        # The hardware's callbacks come to the controller, and only to it.
        self._inputs.when_pressed = self.press_from_button
        self._inputs.when_lid_changed = self.lid_changed
        self._dispenser.when_card = self._firing.card_out
        self._arm = BoardArm(
            self._dispenser if isinstance(self._dispenser, Reflexes) else None,
            lock=self._lock,
            next_press=self._next_press,
            claim=self._claim,
            take=self._take,
        )

    # --- commands --------------------------------------------------------------------------------------

    def press(self, source: str, *, for_player: str | None = None) -> PressTicket:
        """Take one press, for `for_player` or else for whoever the table asks. Raises PressRefused when the
        launcher is busy or in FAULT."""
        if source != "button":  # a phone's press waits while the phones reveal; the button never blocks its thread
            self._shuffles.await_key(self._shuffle)
        with self._arm.deciding():  # the board's own press, if it came first, makes this one too late
            refusal = self._refusal()
            deal = self._game.cards_owed(for_player) if refusal is None and self._game is not None else None
            if refusal is None and deal is None and (sealing := self._in_play.sealing()) is not None:
                refusal = PressRefused(Refusal.SHUFFLE_SEALING, sealing)
            if refusal is None:
                if deal is None:
                    outcome = self._shuffle.draw()
                else:  # exact cards, outside the shuffle's schedule
                    outcome = Outcome(press=self._shuffle.schedule.presses, cards=deal.cards, tension=0.0)
                ticket = self._last = PressTicket(outcome, deal, for_player=for_player, clock=self._clock)
                job, error = (None, None) if outcome.pause_ms else self._firing.start(ticket)
                self._busy = True  # until the press is concluded, a miss too (the finisher frees it)
        if refusal is not None:
            self._bus.publish(EventType.BUTTON_IGNORED, {"source": source, "reason": refusal.code})
            raise refusal
        self._finisher.taken(ticket, source, job, error)  # the motor is running (if it fires); now the events
        return ticket

    def arming_paused(self) -> AbstractContextManager[None]:
        """The board holds no arm until the end: while a new game is set up (it may deal exact cards, which an arm
        made before knows nothing of), or the hopper is reloaded."""
        return self._arm.paused()

    def press_from_button(self) -> None:
        """The physical button's callback: never blocks, never raises into gpiozero's thread."""
        try:
            self.press("button")
        except PressRefused:
            pass  # already published as button.ignored
        except Exception:  # anything: an exception must never reach gpiozero's callback thread, which would die
            log.exception("press from the button failed")

    def new_shuffle(self, profile: Profile | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """End the shuffle (revealing its seed) and start the next, with another profile if given: (record,
        summary)."""
        with self._arm.deciding():
            if not self._busy:
                record = self._in_play.next(profile or self._shuffle.profile)
                self._cues.idle()
                return record, self._shuffle.summary()
        raise PressRefused(Refusal.BUSY, "the launcher is still firing; start the shuffle when it has finished")

    def reload_hopper(self, cards: int) -> None:
        """The hopper was refilled with `cards` cards."""
        with self.arming_paused():  # the arm was for what the hopper held before
            count = self._hopper.reload(cards)
            self._hopper.save()
            self._trouble.refilled()
            self._bus.publish(EventType.HOPPER_RELOADED, count.as_dict())

    def lid_changed(self, is_open: bool) -> None:
        """The lid opened (the hardware has already stopped the motor) or closed (perhaps after a refill)."""
        if is_open:
            with self._arm.deciding():  # a press the board fired before the lid opened came first
                self._shuffles.lid_opened(self._shuffle)
            self._cues.idle()
        else:
            with self._lock:
                self._trouble.lid_shut()
                self._arm.refresh()
            self._cues.lid_closed()
        self._bus.publish(EventType.LAUNCHER_LID, {"open": is_open})

    def link_changed(self, ok: bool, message: str) -> None:
        """A backend that can lose its hardware (a board on USB) lost or regained it: FAULT while it is gone."""
        with self._lock:
            if not ok:
                self._fault.latch(FaultCause.BOARD, f"launcher board: {message}", from_link=True)
                self._arm.forget()  # a board greeted again holds no arm
                return
            cleared = self._fault.link_back()
            self._arm.refresh()
        if cleared:
            self._cues.idle()
            self._bus.publish(EventType.HARDWARE_OK, {"message": message})

    def reset(self) -> None:
        """Leave FAULT: the one command accepted while latched."""
        with self._arm.deciding():  # the STOP of the fault dropped the arm; the board says whether it fired first
            was = self._fault.clear()
            self._arm.refresh()
        if was is not None:
            self._cues.idle()
            self._bus.publish(EventType.HARDWARE_OK, {})

    def emergency_stop(self) -> None:
        """Motor off now (signal handlers, shutdown). Never raises."""
        self._dispenser.stop()

    def alive(self, *, stuck_after: float, timeout: float = 1.0) -> bool:
        """For the service watchdog: the worker thread runs, has held no press for `stuck_after` seconds or more,
        and the lock comes free within `timeout` seconds."""
        if not self._finisher.alive or not self._lock.acquire(timeout=timeout):
            return False
        self._lock.release()
        return not self._finisher.held_for(stuck_after)

    def quiet_since(self, since: float) -> bool:
        """No press has kept the launcher busy (a fire, a pause, a rest) at any moment after `since`: holding the
        button from then on may power the Pi off. A miss or a refused press (FAULT, the lid) keeps it quiet."""
        with self._lock:
            return not self._busy and self._free_since <= since

    def close(self) -> None:
        """Stop the motor and the worker. Safe to call twice."""
        self._finisher.stopping.set()  # first: a worker in a suspense pause must not start the motor after the stop
        self.emergency_stop()
        self._finisher.stop()
        self._hopper.close()

    # --- state -----------------------------------------------------------------------------------------

    @property
    def _shuffle(self) -> Shuffle:
        return self._in_play.current

    @property
    def profile(self) -> Profile:
        return self._shuffle.profile

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            last = self._last
            schedule = self._shuffle.schedule
            return {
                "presses": schedule.presses,
                "busy": self._busy,
                "fault": self._fault.message,
                "fault_cause": self._fault.cause,
                "hopper": self._hopper.count.as_dict(),
                "tension": schedule.tension,
                "profile": self._shuffle.profile.name,
                "shuffle": self._shuffle.summary(),
                "last_outcome": last.as_dict() if last else None,
                "trouble": self._trouble.view(self._fault, self._inputs.lid_open),
            }

    # --- internals -------------------------------------------------------------------------------------

    def _refusal(self) -> PressRefused | None:
        if self._fault.message is not None:
            return PressRefused(Refusal.FAULT, f"the launcher is in FAULT ({self._fault.message}); reset it first")
        if self._inputs.lid_open:
            return PressRefused(Refusal.LID_OPEN, "the lid is open; close it to play")
        if self._busy:
            return PressRefused(Refusal.BUSY, "the launcher is still firing; press again in a moment")
        return None

    def _next_press(self) -> tuple[Outcome, int] | None:
        """With the lock held: the next press and the cards the board fires at it by itself, when the launcher waits
        for a press the shuffle's schedule draws (the board is armed for it); 0 cards for a miss, a suspense pause or
        an empty hopper, which the host decides once told of the press. The shuffle must be closed to contributions
        (its key is then fixed). Whether it is armed depends only on what every phone can see, never on the
        outcome."""
        if self._finisher.stopping.is_set():
            return None
        if self._busy or self._fault.message is not None or self._inputs.lid_open or not self._shuffle.closed:
            return None
        if self._game is not None and self._game.cards_owed(None) is not None:
            return None  # classic UNO deals exact cards, not a draw of the schedule
        outcome = self._shuffle.peek()
        return outcome, 0 if outcome.pause_ms else min(outcome.cards, self._hopper.count.remaining)

    def _claim(self, armed: Outcome | None, job: FireJob) -> Claimed:
        """With the lock held: the press a fire from the arm (armed for `armed`) was: the schedule's next."""
        outcome = self._shuffle.draw()
        if armed is None or (armed.press, armed.cards) != (outcome.press, outcome.cards) or self._busy:
            log.error("the board fired from an arm for press %s; press %s was drawn", armed, outcome)
        ticket = self._last = PressTicket(outcome, clock=self._clock)
        self._firing.follow(ticket)
        self._busy = True
        return ticket, job

    def _take(self, claimed: Claimed) -> None:
        """Without the lock: a press the board fired from its arm goes on as any press whose motor has started."""
        ticket, job = claimed
        self._finisher.taken(ticket, "button", job)

    def _free(self) -> None:
        """With the lock held: the press is over (the finisher's word); the board is armed for the next."""
        self._busy = False
        self._free_since = self._clock.now()
        self._arm.refresh()
