"""The fire in progress on the board, as the host follows it: its acknowledgement, its cards, its end.

One fire at a time. It ends with the board's `E DONE`, recovered from STATUS when that line is lost, or with
ERROR when the link or the board fails first. Every method runs with the link's lock held.

A fire is either asked for (FIRE) or the board's own reflex: armed in advance (ARM), the board fires on its button
and says so after (`E BTN <ms> <fire>`, or a DISARM's or heartbeat's fire count when that line was lost). Either
way the host follows one job per fire number, once.

A FIRE's acknowledgement must name a fire the board has not reported before in this session: a reply that
names an old one was meant for another command (the board's memory of an earlier line), and taking it would
report that fire's cards as this one's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from launcher.clock import Clock
from launcher.hardware import framing
from launcher.hardware.base import DispenseResult, StopReason

log = logging.getLogger(__name__)

JOB_SLACK_S = 3.0  # a fire still unreported this long after its max_run_ms is given up (and stopped)

# The board's DONE reasons. An empty hopper is a jam to the controller, which tells the two apart by its hopper
# count; describe() says when the board's hopper sensor reported empty.
REASONS = {
    "count": StopReason.COUNT,
    "timeout": StopReason.TIMEOUT,
    "jam": StopReason.JAM,
    "empty": StopReason.JAM,
    "stuck": StopReason.STUCK,
    "lid": StopReason.LID,
    "stop": StopReason.ABORTED,
    "safe": StopReason.ABORTED,
}


def fields(args: tuple[str, ...]) -> dict[str, str]:
    """The `name=value` arguments of a reply."""
    return dict(a.split("=", 1) for a in args if "=" in a)


class SerialFireJob:
    """One FIRE. Ends with the board's DONE, or ERROR when the link or the board fails before that."""

    def __init__(self, requested: int, started: float, clock: Clock, *, reflex: bool = False) -> None:
        self.requested = requested
        self.started = started
        self.reflex = reflex  # made by the board from its arm, on its own button
        self.fire: int | None = None  # the board's number for it, once acknowledged
        self.cards = 0  # cards the board has reported so far
        self._result: DispenseResult | None = None
        self._done = clock.event()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> DispenseResult:
        """Block until the fire has ended. TimeoutError if `timeout` seconds pass first."""
        if not self._done.wait(timeout):
            raise TimeoutError(f"the fire of {self.requested} cards has not ended after {timeout} s")
        assert self._result is not None
        return self._result

    def _resolve(self, result: DispenseResult) -> None:
        if self._result is None:
            self._result = result
            self._done.set()


class FireTracker:
    """`on_reflex(job)` is called, with the link's lock held, once for each fire the board made from its arm, as
    soon as anything tells of it."""

    def __init__(self, *, clock: Clock, max_run_ms: int, on_reflex: Callable[[SerialFireJob], None]) -> None:
        self._clock = clock
        self._on_reflex = on_reflex
        self._max_run_ms = max_run_ms
        self.job: SerialFireJob | None = None
        self._early_done: tuple[int, int, int, str] | None = None  # a DONE that overtook its FIRE's reply
        self._last_fire = 0  # the highest fire number the board has reported in this session
        # The cards of the board's arm (0: a miss), as far as the host can tell: set as an ARM goes and by its OK,
        # dropped by what drops it on the board (DISARM, FIRE, STOP, a press that did not fire, the lid opening,
        # HELLO), each read in the wire's order. Wrong only the safe way round: armed here when the board is not.
        self.armed: int | None = None
        self._arm_cards: int | None = None  # of the last ARM sent in this session: a fire found later is of it
        self.hopper_empty = False

    @property
    def awaiting_done(self) -> bool:
        """A fire is out on the board (acknowledged, not ended): heartbeats ask for STATUS, which carries its end."""
        return self.job is not None and self.job.fire is not None

    def start(self, cards: int) -> SerialFireJob:
        if self.job is not None:
            raise RuntimeError("a fire is already in progress")
        self.job = SerialFireJob(cards, self._clock.now(), self._clock)
        self._early_done = None
        return self.job

    def session_started(self, board_fires: int) -> None:
        """HELLO said how many fires the board has done since it booted (and dropped any arm)."""
        self._last_fire = board_fires
        self.armed = self._arm_cards = None

    def arming(self, cards: int) -> None:
        """An ARM goes out: its answer may be lost, and the press the board fires from it told first."""
        self.armed = self._arm_cards = cards

    def answered(self, cmd: str, sent: Mapping[str, object], reply: framing.Frame) -> None:
        """A command's reply, as the reader reads it: what it did to the board's arm (DISARM's fire count may tell
        of a fire the board made from it first)."""
        if cmd == "DISARM":
            self.told_fires(fields(reply.args).get("fire", ""))
        if cmd == "ARM":
            self.armed = int(str(sent["cards"])) if reply.cmd == "OK" else None
        elif cmd in ("DISARM", "FIRE", "STOP"):
            self.armed = None

    def told_fires(self, count: str) -> None:
        """The board's fire count (a DISARM's, a heartbeat's): more than the host knows is a fire from the arm."""
        if count.isdigit():
            self.reflex(int(count))

    def reflex(self, fire: int) -> SerialFireJob | None:
        """The board says it has made fire `fire`: the job of the fire it made from its arm, the same one however
        many times it is told (`on_reflex` the first time); None when that is no such fire (no arm, or a fire the
        host knows already)."""
        job = self.job
        if job is not None:
            return job if job.fire == fire and job.reflex else None
        # A fire the host did not ask for is one made from an arm, even when a press since (or a lost line) left
        # no arm in view: the cards are the last ARM's, as only one ARM is out at a time.
        cards = self.armed if self.armed is not None else self._arm_cards
        if not cards or fire <= self._last_fire:  # no arm, or one of 0 cards (a miss), fires nothing
            return None
        job = self.job = SerialFireJob(cards, self._clock.now(), self._clock, reflex=True)
        job.fire = self._last_fire = fire
        self.armed = None
        self._early_done = None
        self._on_reflex(job)
        return job

    def give_up_at(self) -> float | None:
        """When the fire in progress is given up if the board has not ended it."""
        return None if self.job is None else self.job.started + self._max_run_ms / 1000 + JOB_SLACK_S

    def fail(self, reason: StopReason = StopReason.ERROR) -> None:
        """End the fire in progress without the board's word: what it reported so far is all that is known."""
        job = self.job
        if job is not None:
            ms = round((self._clock.now() - job.started) * 1000)
            self._end(job, DispenseResult(job.requested, job.cards, ms, reason))

    def refused(self, job: SerialFireJob) -> None:
        """Its FIRE never reached the board, or the board refused it: no card came out."""
        self._end(job, DispenseResult(job.requested, 0, 0, StopReason.ERROR))

    def cancelled(self, job: SerialFireJob) -> None:
        """Stopped before its FIRE was sent."""
        self._end(job, DispenseResult(job.requested, 0, 0, StopReason.ABORTED))

    def acknowledged(self, job: SerialFireJob, args: tuple[str, ...]) -> str | None:
        """The board's OK to a FIRE. Returns why the session must end, or None."""
        fire = fields(args).get("fire", "")
        if not fire.isdigit() or int(fire) <= self._last_fire:
            log.error("the board answered a FIRE with fire=%s, which is not a new fire: ignored", fire)
            self.refused(job)
            return f"the board answered a FIRE with fire={fire}, which is not a new fire: out of step"
        job.fire = self._last_fire = int(fire)
        early = self._early_done
        if early is not None and early[0] == job.fire:
            self._done(job, *early[1:])
        return None

    def card(self, count: int) -> int:
        """`E CARD <count>`: returns how many cards are new."""
        job = self.job
        if job is None or count <= job.cards:
            return 0
        new, job.cards = count - job.cards, count
        return new

    def done(self, fire: int, dispensed: int, ms: int, reason: str) -> None:
        """`E DONE`: the board has ended a fire and its motor is off."""
        job = self.job
        if job is None:
            return
        if job.fire is None:
            self._early_done = (fire, dispensed, ms, reason)
        elif job.fire == fire:
            self._done(job, dispensed, ms, reason)

    def recover(self, last: str) -> None:
        """STATUS says the board is not firing; `last` (fire:dispensed:ms:reason) may be the end we missed."""
        job = self.job
        parts = last.split(":")
        if job is None or job.fire is None or len(parts) != 4 or not all(p.isdigit() for p in parts[:3]):
            return
        if int(parts[0]) == job.fire:
            log.info("fire %s: DONE was lost on the wire; recovered from STATUS", job.fire)
            self._done(job, int(parts[1]), int(parts[2]), parts[3])

    def _done(self, job: SerialFireJob, dispensed: int, ms: int, reason: str) -> None:
        if reason == "empty":
            self.hopper_empty = True
        self._end(job, DispenseResult(job.requested, dispensed, ms, REASONS.get(reason, StopReason.ERROR)))

    def _end(self, job: SerialFireJob, result: DispenseResult) -> None:
        job._resolve(result)
        if self.job is job:
            self.job = None
            self._early_done = None
