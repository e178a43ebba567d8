"""The controller: the one place that decides and commands the dispenser.

A press (the physical button or a phone) draws the next outcome of the shuffle's schedule and, when it fires, the
motor starts before anything is written anywhere. A single worker thread then waits for the fire to end, publishes
the outcome and keeps the motor resting before the next fire. An outcome with a suspense pause is held back on the
worker for the pause first. Presses that arrive while the launcher is busy are ignored, as on the real launcher.
Any failure in the dispense path stops the motor and latches FAULT: only a status read and `reset()` are accepted
until then.

A backend with a reflex (a board on USB) is armed, whenever the launcher waits for a press the shuffle's schedule
draws, with that press's outcome (looked up, not drawn): for a fire the board then starts the motor on its own
button and the press is taken here after, exactly as if the host had drawn it; for a miss (0 cards) it tells of the
press and the host decides it. A miss is armed as a fire is, so that nothing outside the board tells them apart
before the press (docs/FAIRNESS.md, "The next press is secret"). Anything else that decides here first (a phone's
press, a new shuffle, a reload, the lid, a new game) takes the arm back, and whatever the board fired first is taken
as the press it was. The arm's protocol is launcher/press/arm.py's `BoardArm`; what to arm for and what a fire from
the arm
becomes are decided here.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import SHUFFLE_PRESSES
from launcher.errors import LauncherError
from launcher.events import EventBus, EventType
from launcher.fairplay.schedule import Outcome, Profile
from launcher.fairplay.shuffles import Shuffle, ShuffleBook, ShuffleSealing
from launcher.game import Demand
from launcher.hardware.base import DispenseResult, FireJob, Hardware, HardwareGone, Reflexes, StopReason
from launcher.press.arm import BoardArm
from launcher.press.hopper import Hopper
from launcher.press.outcomes import FaultCause, FaultLatch, Trouble, announce, announce_no_fire, trouble_of
from launcher.press.wear import Wear
from launcher.refusals import Refusal
from launcher.store import StoreError
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)


class PressRefused(LauncherError, RuntimeError):
    """A press or command that the launcher did not take; `code` is Refusal.BUSY, FAULT or LID_OPEN."""

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


Job = tuple[PressTicket, FireJob | None]  # a press for the worker, with its fire if the motor has started
Claimed = tuple[PressTicket, FireJob]  # a press the board made from its arm, taken here


class Jobs:
    """The worker's queue of presses to finish (None: stop), and since when it holds the one in hand."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._items: deque[Job | None] = deque()
        self._waiting = clock.condition()
        self.in_hand_since: float | None = None  # None while the worker waits for a press

    def put(self, item: Job | None) -> None:
        with self._waiting:
            self._items.append(item)
            self._waiting.notify()

    def take(self) -> Job | None:
        """The next item, waiting for one; from then on the worker counts as holding it."""
        self.in_hand_since = None
        with self._waiting:
            while not self._items:
                self._waiting.wait()
            item = self._items.popleft()
        self.in_hand_since = self._clock.now()
        return item


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
        self._shuffle_presses = shuffle_presses
        self._dispenser = hardware.dispenser
        self._cues = hardware.cues
        self._inputs = hardware.inputs
        self.describe_hardware = hardware.describe  # for the phones: the web layer holds no hardware
        self._shuffles = shuffles
        self._bus = bus
        self._rest_s = min_rest_ms / 1000
        self._hopper = hopper  # counted as each card leaves; the controller closes it
        self._firing: PressTicket | None = None  # the press whose fire is under way, whose cards are counted
        self._game = game
        self._wear = wear  # every fire's end is counted there, off the press's path
        self._lock = threading.Lock()
        self._busy = False
        self._free_since = float("-inf")  # when the launcher last stopped being busy with a press
        self._fault = FaultLatch(stop_motor=self._dispenser.stop, cues=self._cues, bus=bus)
        self._last: PressTicket | None = None
        # What stops the table after the last press (a jam, an empty hopper...): (trouble, its player, its press),
        # and the cards short fires still owe, until the hopper is refilled (docs/GAME.md).
        self._trouble: tuple[Trouble, str | None, int | None] | None = None
        self._owed: list[dict[str, Any]] = []
        self._jam_opened = False  # the lid was opened and shut since the last jam (is the card out? nothing can tell)
        self._shuffle: Shuffle = shuffles.resume_or_start(profile)
        if self._shuffle.schedule.presses >= shuffle_presses:  # left full by the last run, or by a lower setting
            self._next_shuffle(self._shuffle.profile)
        self._jobs = Jobs(clock)
        self._worker = StoppableThread(self._work, "controller", clock=clock, wake=lambda: self._jobs.put(None))
        self._worker.start()
        # The hardware's callbacks come to the controller, and only to it.
        self._inputs.when_pressed = self.press_from_button
        self._inputs.when_lid_changed = self.lid_changed
        self._dispenser.when_card = self._card_out
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
            if refusal is None and deal is None:
                refusal = self._sealing()
            if refusal is None:
                if deal is None:
                    outcome = self._shuffle.draw()
                else:  # exact cards, outside the shuffle's schedule
                    outcome = Outcome(press=self._shuffle.schedule.presses, cards=deal.cards, tension=0.0)
                ticket = self._last = PressTicket(outcome, deal, for_player=for_player, clock=self._clock)
                job, error = (None, None) if outcome.pause_ms else self._start_motor(ticket)
                self._busy = True  # until the press is concluded, a miss too (_conclude_without_fire frees it)
        if refusal is not None:
            self._bus.publish(EventType.BUTTON_IGNORED, {"source": source, "reason": refusal.code})
            raise refusal
        # The motor is running (if it fires); only now do events and logging happen.
        if deal is None:
            self._bus.publish(EventType.BUTTON_PRESSED, {"press": outcome.press, "source": source, **self._for(ticket)})
        else:
            self._bus.publish(
                EventType.BUTTON_PRESSED, {"press": None, "source": source, "deal": deal.cards, **self._for(ticket)}
            )
        self._cues.pressed(outcome.tension)
        if outcome.pause_ms:
            self._bus.publish(EventType.LAUNCHER_SUSPENSE, {"press": outcome.press, "pause_ms": outcome.pause_ms})
            self._cues.suspense(outcome.pause_ms)
            self._jobs.put((ticket, None))
        elif job is not None:
            self._jobs.put((ticket, job))
        else:
            self._conclude_without_fire(ticket, error)
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
                record = self._next_shuffle(profile or self._shuffle.profile)
                self._cues.idle()
                return record, self._shuffle.summary()
        raise PressRefused(Refusal.BUSY, "the launcher is still firing; start the shuffle when it has finished")

    def _next_shuffle(self, profile: Profile) -> dict[str, Any]:
        """With the lock held, between presses: end the shuffle (its record) and start the next, which goes on
        from the run of misses or fires this one ended with if it plays the same profile."""
        ended = self._shuffle
        record = self._shuffles.end(ended)
        self._shuffle = self._shuffles.start(profile, carried=ended.run if profile == ended.profile else (0, 0))
        return record

    def reload_hopper(self, cards: int) -> None:
        """The hopper was refilled with `cards` cards."""
        with self.arming_paused():  # the arm was for what the hopper held before
            count = self._hopper.reload(cards)
            self._hopper.save()
            self._trouble, self._owed = None, []  # whoever was owed took their cards from the refill
            self._bus.publish(EventType.HOPPER_RELOADED, count.as_dict())

    def lid_changed(self, is_open: bool) -> None:
        """The lid opened (the hardware has already stopped the motor) or closed (perhaps after a refill)."""
        if is_open:
            with self._arm.deciding():  # a press the board fired before the lid opened came first
                self._shuffles.lid_opened(self._shuffle)
            self._cues.idle()
        else:
            with self._lock:
                # No sensor sees a card jammed before the exit beam: the jam stays until a press brings no jam,
                # and the phones ask whether the card is out.
                self._jam_opened = self._jam() is not None
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
        if not self._worker.alive or not self._lock.acquire(timeout=timeout):
            return False
        self._lock.release()
        since = self._jobs.in_hand_since
        return since is None or self._clock.now() - since < stuck_after

    def quiet_since(self, since: float) -> bool:
        """No press has kept the launcher busy (a fire, a pause, a rest) at any moment after `since`: holding the
        button from then on may power the Pi off. A miss or a refused press (FAULT, the lid) keeps it quiet."""
        with self._lock:
            return not self._busy and self._free_since <= since

    def close(self) -> None:
        """Stop the motor and the worker. Safe to call twice."""
        self._worker.stopping.set()  # first: a worker in a suspense pause must not start the motor after the stop
        self.emergency_stop()
        self._worker.stop()
        self._hopper.close()

    # --- state -----------------------------------------------------------------------------------------

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
                "trouble": self._trouble_view(),
            }

    # --- internals -------------------------------------------------------------------------------------

    def _trouble_view(self) -> dict[str, Any] | None:
        """With the lock held: what stops the table now, for every phone's prompt (docs/API.md); None: play on."""
        owed = [dict(o) for o in self._owed]
        if self._fault.message is not None:
            code = Trouble.BOARD_LOST if self._fault.cause is FaultCause.BOARD else Trouble.FAULT
            return {"code": code.value, "player": None, "press": None, "owed": owed}
        jam = self._jam()
        if self._inputs.lid_open:
            lid = {"code": Trouble.LID_OPEN.value, "player": None, "press": None, "owed": owed}
            if jam is None or self._trouble is None:
                return lid
            _, player, press = self._trouble  # the card to take out while it is open, and whose press jammed
            return {**lid, "player": player, "press": press, "behind": jam.value}
        if self._trouble is None:
            return None
        code, player, press = self._trouble
        view = {"code": code.value, "player": player, "press": press, "owed": owed}
        return view if jam is None else {**view, "opened": self._jam_opened}

    def _jam(self) -> Trouble | None:
        """With the lock held: the jam or stuck card the last press left, if any."""
        return (
            self._trouble[0] if self._trouble is not None and self._trouble[0] in (Trouble.JAM, Trouble.STUCK) else None
        )

    def _note_trouble(self, ticket: PressTicket, found: tuple[Trouble, int] | None) -> None:
        """The trouble a press ended in, or none: a jam is over with the next press that is not one; an empty
        hopper and the cards a short fire owes stay until the refill."""
        with self._lock:
            if found is None:
                if self._trouble is not None and self._trouble[0] in (Trouble.JAM, Trouble.STUCK):
                    self._trouble = None
                return
            trouble, owed = found
            self._trouble = (trouble, ticket.player, ticket.outcome.press if ticket.deal is None else None)
            self._jam_opened = False
            if trouble is Trouble.SHORT and ticket.deal is None:  # classic UNO: the table keeps what is owed
                self._owed.append({"player": ticket.player, "cards": owed})

    def _for(self, ticket: PressTicket) -> dict[str, str]:
        """Who a press is for, told with it: during a suspense pause every phone can name who pressed. {}: no game."""
        player = self._game.credited(ticket.for_player) if self._game is not None else None
        return {} if player is None else {"player": player}

    def _credit(self, ticket: PressTicket) -> None:
        """Who the press is told as: the game's player for it (its attribution, if it fired, says the same)."""
        if self._game is not None:
            ticket.player = self._game.credited(ticket.for_player)

    def _refusal(self) -> PressRefused | None:
        if self._fault.message is not None:
            return PressRefused(Refusal.FAULT, f"the launcher is in FAULT ({self._fault.message}); reset it first")
        if self._inputs.lid_open:
            return PressRefused(Refusal.LID_OPEN, "the lid is open; close it to play")
        if self._busy:
            return PressRefused(Refusal.BUSY, "the launcher is still firing; press again in a moment")
        return None

    def _sealing(self) -> PressRefused | None:
        """A press that draws waits while the phones reveal their bytes for the shuffle's key
        (launcher/fairplay/mixing.py)."""
        try:
            self._shuffles.ready(self._shuffle)
        except ShuffleSealing as sealing:
            return PressRefused(Refusal.SHUFFLE_SEALING, str(sealing))
        return None

    def _next_press(self) -> tuple[Outcome, int] | None:
        """With the lock held: the next press and the cards the board fires at it by itself, when the launcher waits
        for a press the shuffle's schedule draws (the board is armed for it); 0 cards for a miss, a suspense pause or
        an empty hopper, which the host decides once told of the press. The shuffle must be closed to contributions
        (its key is then fixed). Whether it is armed depends only on what every phone can see, never on the
        outcome."""
        if self._worker.stopping.is_set():
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
        self._firing = ticket
        self._busy = True
        return ticket, job

    def _take(self, claimed: Claimed) -> None:
        """Without the lock: a press the board fired from its arm goes on as any press whose motor has started."""
        ticket, job = claimed
        self._bus.publish(
            EventType.BUTTON_PRESSED, {"press": ticket.outcome.press, "source": "button", **self._for(ticket)}
        )
        self._cues.pressed(ticket.outcome.tension)
        self._jobs.put((ticket, job))

    def _start_motor(self, ticket: PressTicket) -> tuple[FireJob | None, Exception | None]:
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

    def _card_out(self) -> None:
        """The dispenser's callback as each card of a fire leaves (the exit beam's thread): count it now."""
        with self._lock:
            ticket = self._firing
            if ticket is None:
                return
            ticket.counted += 1
        self._hopper.card_out()

    def _conclude_without_fire(self, ticket: PressTicket, error: Exception | None) -> None:
        """A press that did not run the motor: a miss, an empty hopper, or a motor that would not start (FAULT;
        when the board is gone for now, the same FAULT as its lost link's, which clears when it is back)."""
        outcome = ticket.outcome
        if isinstance(error, HardwareGone):
            with self._lock:
                self._fault.latch(FaultCause.BOARD, f"motor did not start: {error}", from_link=True)
        elif error is not None:
            with self._lock:
                self._fault.latch(FaultCause.DISPENSER, f"motor did not start: {error}")
        else:
            self._credit(ticket)
            announce_no_fire(self._bus, outcome, self._shuffle.schedule.misses_in_row, player=ticket.player)
            self._note_trouble(ticket, (Trouble.EMPTY, 0) if outcome.fired else None)
        self._shuffle.came_out_of(outcome, 0, "fault" if error is not None else "empty" if outcome.fired else "miss")
        with self._concluding(ticket):
            self._attribute(ticket, 0)

    @contextmanager
    def _concluding(self, ticket: PressTicket) -> Iterator[None]:
        """The last steps of a press, which save to the store. Whatever they raise (a full disk, a locked database),
        the motor is off, FAULT latches and names it, and the launcher is never left busy for ever."""
        try:
            yield
            with self._lock:
                if self._shuffle.schedule.presses >= self._shuffle_presses:  # a full shuffle: the next begins
                    self._next_shuffle(self._shuffle.profile)
        except StoreError as e:  # a full disk: the press is kept (events, game, count); a new shuffle, next press
            log.error("the shuffle goes on until the store can be written: %s", e)
        except Exception as e:  # a bug: the launcher must stop safe and say why
            self._dispenser.stop()
            log.exception("recording a press failed")
            with self._lock:
                self._fault.latch(FaultCause.RECORD, f"could not record the press: {e}")
        finally:
            with self._lock:
                self._busy = False
                self._free_since = self._clock.now()
                self._arm.refresh()
            ticket.finish(ticket.result)

    def _attribute(self, ticket: PressTicket, dispensed: int) -> None:
        """Tell the game at the table who took this press and what came out. A press that should have fired and
        brought out nothing (a jam, an empty hopper, the lid, a FAULT) uses up nobody's press: what is owed stays
        owed (it is told as the player's all the same: `_credit`)."""
        if self._game is None:
            return
        result = ticket.result
        fired = dispensed > 0 or (result is not None and result.stop is StopReason.COUNT)
        if ticket.outcome.fired and not fired:
            return
        ticket.player = self._game.pressed(fired, dispensed, ticket.for_player)

    def _work(self) -> None:
        while (item := self._jobs.take()) is not None:
            ticket, job = item
            if job is None:  # a suspense pause first
                if self._worker.stopping.wait(ticket.outcome.pause_ms / 1000):
                    continue
                with self._lock:
                    job, error = self._start_motor(ticket)
                if job is None:
                    self._conclude_without_fire(ticket, error)
                    continue
            try:
                result = job.wait()
            except Exception as e:  # the worker must outlive any dispense failure: FAULT latches and names it
                self._dispenser.stop()
                log.exception("dispense failed")
                self._shuffle.came_out_of(ticket.outcome, ticket.counted, "fault")
                fire = {"press": ticket.outcome.press, "requested": ticket.outcome.cards, "dispensed": ticket.counted}
                with self._lock:
                    self._firing = None
                    self._fault.latch(FaultCause.DISPENSER, f"dispense failed: {e}", fire=fire)
                    self._busy = False
                    self._free_since = self._clock.now()
                ticket.finish(None)
                continue
            ticket.result = result
            with self._concluding(ticket):
                self._credit(ticket)
                self._publish_outcome(ticket, result)
                self._attribute(ticket, result.dispensed)
                self._worker.stopping.wait(self._rest_s)  # the motor rests before the next fire can start

    def _publish_outcome(self, ticket: PressTicket, result: DispenseResult) -> None:
        with self._lock:
            self._firing = None
            # The cards were counted as they left; the fire's own count corrects any the callback missed.
            missed = result.dispensed - ticket.counted
        count = self._hopper.settle(missed)
        if self._wear is not None:
            self._wear.fire_ended(result, count)
        outcome = ticket.outcome
        self._shuffle.came_out_of(outcome, result.dispensed, result.stop, empty=count.remaining == 0)
        fault = announce(self._bus, self._cues, outcome, result, count, ticket.deal, player=ticket.player)
        self._note_trouble(ticket, trouble_of(outcome, result, count))
        if fault is not None:
            fire = {"press": outcome.press, "requested": result.requested, "dispensed": result.dispensed}
            with self._lock:
                self._fault.latch(*fault, fire=fire)
        if result.dispensed:
            self._hopper.save()
            self._bus.publish(EventType.HOPPER_CHANGED, count.as_dict())
