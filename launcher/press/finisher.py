"""Finishing a press. The controller's worker thread waits for each fire to end (after a suspense pause, starting the
motor first), tells the table how it ended, hands it to the wear counters and the game, and rests the motor; a press
that ran no motor is finished at once, on the thread that took it. Whatever fails on the way stops the motor and
latches FAULT, and the launcher is never left busy for ever."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from launcher.clock import REAL_CLOCK, Clock, Event
from launcher.events import EventBus, EventType
from launcher.fairplay.shuffles import Shuffle
from launcher.hardware.base import Cues, Dispenser, DispenseResult, FireJob, HardwareGone, StopReason
from launcher.press.firing import Firing
from launcher.press.hopper import Hopper
from launcher.press.outcomes import FaultCause, FaultLatch, Trouble, announce, announce_no_fire, trouble_of
from launcher.press.shuffle_in_play import ShuffleInPlay
from launcher.press.table_trouble import TableTrouble
from launcher.press.ticket import Attribution, PressTicket
from launcher.press.wear import Wear
from launcher.store import StoreError
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

Job = tuple[PressTicket, FireJob | None]  # a press for the worker, with its fire if the motor has started


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


class PressFinisher:
    """Takes each press the controller decided through to its end (`taken()`); `free()`, called with `lock` held,
    tells the controller a press is over."""

    def __init__(
        self,
        *,
        lock: threading.Lock,
        fault: FaultLatch,
        in_play: ShuffleInPlay,
        firing: Firing,
        trouble: TableTrouble,
        hopper: Hopper,
        dispenser: Dispenser,
        cues: Cues,
        bus: EventBus,
        min_rest_ms: int,
        free: Callable[[], None],
        game: Attribution | None = None,
        wear: Wear | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._clock = clock
        self._lock = lock
        self._fault = fault
        self._in_play = in_play
        self._firing = firing
        self._trouble = trouble
        self._hopper = hopper
        self._dispenser = dispenser
        self._cues = cues
        self._bus = bus
        self._rest_s = min_rest_ms / 1000
        self._free = free
        self._game = game
        self._wear = wear  # every fire's end is counted there, off the press's path
        self._jobs = Jobs(clock)
        self._worker = StoppableThread(self._work, "controller", clock=clock, wake=lambda: self._jobs.put(None))
        self._worker.start()

    @property
    def _shuffle(self) -> Shuffle:
        return self._in_play.current

    @property
    def stopping(self) -> Event:
        """Set once the worker is asked to stop: a press in a suspense pause then starts no motor."""
        return self._worker.stopping

    @property
    def alive(self) -> bool:
        return self._worker.alive

    def held_for(self, seconds: float) -> bool:
        """The worker has held one press for `seconds` or more (the watchdog's stuck worker)."""
        since = self._jobs.in_hand_since
        return since is not None and self._clock.now() - since >= seconds

    def stop(self) -> None:
        self._worker.stop()

    def taken(self, ticket: PressTicket, source: str, job: FireJob | None, error: Exception | None = None) -> None:
        """Without the lock, once the motor is running (if it fires): the press is told to the table and finished;
        `job`: its fire, None for a suspense pause or a press that ran no motor (`error`: why it did not start)."""
        outcome, deal = ticket.outcome, ticket.deal
        if deal is None:
            self._bus.publish(EventType.BUTTON_PRESSED, {"press": outcome.press, "source": source, **self._for(ticket)})
        else:
            self._bus.publish(
                EventType.BUTTON_PRESSED, {"press": None, "source": source, "deal": deal.cards, **self._for(ticket)}
            )
        self._cues.pressed(outcome.tension)
        if job is not None:  # a fire from the board's arm too, whatever its outcome says
            self._jobs.put((ticket, job))
        elif outcome.pause_ms:
            self._bus.publish(EventType.LAUNCHER_SUSPENSE, {"press": outcome.press, "pause_ms": outcome.pause_ms})
            self._cues.suspense(outcome.pause_ms)
            self._jobs.put((ticket, None))
        else:
            self._conclude_without_fire(ticket, error)

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
            with self._lock:
                self._trouble.note(ticket, (Trouble.EMPTY, 0) if outcome.fired else None)
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
                self._in_play.next_if_full()
        except StoreError as e:  # a full disk: the press is kept (events, game, count); a new shuffle, next press
            log.error("the shuffle goes on until the store can be written: %s", e)
        except Exception as e:  # a bug: the launcher must stop safe and say why
            self._dispenser.stop()
            log.exception("recording a press failed")
            with self._lock:
                self._fault.latch(FaultCause.RECORD, f"could not record the press: {e}")
        finally:
            with self._lock:
                self._free()
            ticket.finish(ticket.result)

    def _for(self, ticket: PressTicket) -> dict[str, str]:
        """Who a press is for, told with it: during a suspense pause every phone can name who pressed. {}: no game."""
        player = self._game.credited(ticket.for_player) if self._game is not None else None
        return {} if player is None else {"player": player}

    def _credit(self, ticket: PressTicket) -> None:
        """Who the press is told as: the game's player for it (its attribution, if it fired, says the same)."""
        if self._game is not None:
            ticket.player = self._game.credited(ticket.for_player)

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
                    job, error = self._firing.start(ticket)
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
                    self._firing.end()
                    self._fault.latch(FaultCause.DISPENSER, f"dispense failed: {e}", fire=fire)
                    self._free()
                ticket.finish(None)
                continue
            ticket.result = result
            with self._concluding(ticket):
                self._credit(ticket)
                self._publish_outcome(ticket, result)
                self._attribute(ticket, result.dispensed)
                self._worker.stopping.wait(self._rest_s)  # the motor rests before the next fire can start

    def _publish_outcome(self, ticket: PressTicket, result: DispenseResult) -> None:
        count = self._firing.settle(ticket, result)
        if self._wear is not None:
            self._wear.fire_ended(result, count)
        outcome = ticket.outcome
        self._shuffle.came_out_of(outcome, result.dispensed, result.stop, empty=count.remaining == 0)
        fault = announce(self._bus, self._cues, outcome, result, count, ticket.deal, player=ticket.player)
        with self._lock:
            self._trouble.note(ticket, trouble_of(outcome, result, count))
        if fault is not None:
            fire = {"press": outcome.press, "requested": result.requested, "dispensed": result.dispensed}
            with self._lock:
                self._fault.latch(*fault, fire=fire)
        if result.dispensed:
            self._hopper.save()
            self._bus.publish(EventType.HOPPER_CHANGED, count.as_dict())
