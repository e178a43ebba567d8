"""Shuffles: each shuffle of the launcher plays one keyed schedule, committed at its start, mixed by the phones,
revealed at its end. (A shuffle is the launcher's; the game's scored rounds are launcher/game/'s.)

The seed and the commitment are saved when a shuffle starts. Until the shuffle's first press, each joined phone may
add one random contribution (`ShuffleBook.contribute`); the schedule is keyed by the seed and every contribution
received (`fairness.shuffle_key`), and the first press closes the contributions. Each contribution is published on
the event stream, so a restarted daemon resumes the same shuffle: it reads the contributions, the presses and what
each press dispensed from the event log and replays the presses. The record with the seed revealed is saved when
the shuffle ends. The controller calls this between presses, never on the press-to-motor path; closing the
contributions at the first press takes a lock that nothing holds for longer than a few list and hash operations.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.errors import LauncherError
from launcher.events import EventBus, EventType
from launcher.fairplay.beacon import BeaconRound
from launcher.fairplay.beacon_wait import BeaconSource, PendingBeacon
from launcher.fairplay.fairness import (
    MAX_CONTRIBUTIONS,
    CameOut,
    RecordError,
    Replayable,
    commitment,
    legacy_record,
    new_seed,
    replay_presses,
    shuffle_key,
    shuffle_record,
)
from launcher.fairplay.mixing import FIXED, REVEAL_S, ContributionRefused, Mixing
from launcher.fairplay.schedule import Outcome, Profile, Schedule, profile_from_mapping, profile_to_mapping
from launcher.fairplay.sealing import Contribution, profile_text, seal, sealed_key
from launcher.refusals import Refusal
from launcher.store import Store, event_table, shuffle_table


class DrawsOutcomes(Replayable, Protocol):
    """What a shuffle needs of a schedule (tests script one)."""

    @property
    def presses(self) -> int: ...

    @property
    def misses_in_row(self) -> int: ...

    @property
    def fires_in_row(self) -> int: ...

    @property
    def tension(self) -> float: ...

    def go_on_from(self, misses_in_row: int, fires_in_row: int) -> None: ...

    def peek(self) -> Outcome: ...


ScheduleFactory = Callable[[Profile, bytes], DrawsOutcomes]  # (profile, the shuffle's key)


class ShuffleOpen(LauncherError, RuntimeError):
    """The shuffle is still being played: its seed is secret."""


class ShuffleSealing(LauncherError, RuntimeError):
    """A press that must wait: the phones are revealing their bytes, and the key is not fixed yet."""


# What ended a press as a record says it (fairness.STOPS), from what the controller says: "miss", "empty", "fault"
# or a StopReason's value (launcher/hardware/base.py); the watchdog's "timeout" and a backend's "error" are faults.
_STOPS = {stop: stop for stop in ("miss", "count", "jam", "stuck", "empty", "lid", "aborted")}


@dataclass
class Shuffle:
    number: int
    profile: Profile
    seed: str
    commitment: str  # the seal of the seed and the profile (launcher/fairplay/sealing.py)
    schedule: DrawsOutcomes
    mixing: Mixing
    schedule_factory: ScheduleFactory = field(default=Schedule, repr=False)
    outcomes: list[Outcome] = field(default_factory=list)
    restarts: list[int] = field(default_factory=list)
    carried: tuple[int, int] = (0, 0)  # the run (misses, fires in a row) the shuffle before it ended with
    came_out: dict[int, CameOut] = field(default_factory=dict)  # by press number
    legacy: list[str] | None = None  # contributions in the clear of a shuffle started before format 5 (resumed)

    @property
    def closed(self) -> bool:
        """The key is fixed: no commitment or reveal changes the outcomes any more."""
        return self.mixing.fixed

    def draw(self) -> Outcome:
        """The next press's outcome; only once the key is fixed (ShuffleBook.ready)."""
        if not self.closed:
            raise ShuffleSealing(f"shuffle {self.number}'s key is not fixed yet")
        outcome = self.schedule.next_outcome()
        self.outcomes.append(outcome)
        return outcome

    def peek(self) -> Outcome:
        """The next press's outcome, not drawn (the board's arm): `draw()` then returns an equal one."""
        return self.schedule.peek()

    def came_out_of(self, outcome: Outcome, dispensed: int, stop: str, *, empty: bool = False) -> None:
        """What a press of this shuffle dispensed (the controller, once the press is over). `stop`: "miss", "empty",
        "fault" or what ended the fire (a StopReason's value); `empty`: the hopper's count is 0 after it. Outcomes
        that are not this shuffle's draws (exact classic deals) are not recorded."""
        if not (0 < outcome.press <= len(self.outcomes) and self.outcomes[outcome.press - 1] is outcome):
            return
        if stop == "jam" and empty:
            stop = "empty"  # announced as launcher.empty: the hopper ran out during the fire
        self.came_out[outcome.press] = CameOut(dispensed, _STOPS.get(stop, "fault"))

    def summary(self) -> dict[str, Any]:
        """What everyone may see while the shuffle is played (never the seed)."""
        return {
            "number": self.number,
            "profile": self.profile.name,
            "commitment": self.commitment,
            "presses": self.schedule.presses,
        }

    def record(self) -> dict[str, Any]:
        played = self.outcomes, self.restarts
        if self.legacy is not None:
            legacy = legacy_record(self.profile, self.seed, self.legacy, *played, self.came_out, self.carried)
            return {"shuffle": self.number, **legacy}
        mixed = self.mixing.contributions
        record = {
            "shuffle": self.number,
            **shuffle_record(self.profile, self.seed, *played, mixed, self.came_out, self.carried),
        }
        beacon = self.mixing.beacon_round()
        if beacon is not None:
            record["beacon"] = beacon.as_record()
        return record

    @property
    def run(self) -> tuple[int, int]:
        """The run of misses or fires the schedule is in: what a next shuffle of this profile goes on from (a
        pattern starts over instead)."""
        if self.profile.pattern:
            return 0, 0
        return self.schedule.misses_in_row, self.schedule.fires_in_row

    def rekey(self) -> None:
        """Before any press, once the key is fixed: the schedule keyed by the seal, the seed and the contributions."""
        key = (
            shuffle_key(self.seed, self.legacy)
            if self.legacy is not None
            else sealed_key(self.commitment, self.seed, self.mixing.contributions, self.mixing.beacon_round())
        )
        self.schedule = self.schedule_factory(self.profile, key)
        self.schedule.go_on_from(*self.carried)


class ShuffleBook:
    """Starts, ends, saves and resumes shuffles; takes the phones' commitments and reveals for the shuffle in play."""

    def __init__(
        self,
        store: Store,
        bus: EventBus,
        schedule_factory: ScheduleFactory = Schedule,
        *,
        clock: Clock = REAL_CLOCK,
        beacon: BeaconSource | None = None,
    ) -> None:
        self._store = store
        self._bus = bus
        self._schedule_factory = schedule_factory
        self._clock = clock
        self._beacon = beacon  # [fairness] beacon: each shuffle's key also waits for a drand round
        self._current: Shuffle | None = None

    @property
    def current(self) -> Shuffle | None:
        """The shuffle in play (the last one started or resumed)."""
        return self._current

    def resume_or_start(self, profile: Profile) -> Shuffle:
        """The shuffle left open by the last run, replayed to where its log ends; else a new shuffle. One started
        by a version before format 5 plays on under its own rules (its contributions in the clear, closed now) and
        is revealed in its own format."""
        with self._store.connect() as conn:
            row = shuffle_table.unended(conn)
            if row is None:
                return self.start(profile)
            number, profile_json, seed, started_event, restarts = row
            log = _ShuffleLog.read(self._store, conn, number, started_event)
        what = f"shuffle {number}'s saved profile"
        saved = _stored_json(self._store, what, profile_json, dict)
        try:
            profile = profile_from_mapping(saved["name"], saved["parameters"])
            misses, fires = saved.get("carried", (0, 0))  # shuffles started before runs were carried: none
        except (ValueError, KeyError, TypeError) as e:
            raise self._store.damaged(what, e) from None
        resumed = self._new_shuffle(number, profile, seed, (misses, fires))
        if saved.get("format") != 5:
            resumed.legacy = log.legacy[:MAX_CONTRIBUTIONS]
            resumed.commitment = commitment(seed)  # what its phones were shown: the seed's alone
            resumed.mixing.close()
        else:
            resumed.mixing.contributions = log.contributions[:MAX_CONTRIBUTIONS]
            resumed.mixing.phase = FIXED if log.presses or log.fixed else log.phase
            resumed.mixing.sealed_at = self._clock.now()  # a sealed shuffle's reveals get their time again
            self._resume_beacon(resumed, log)
        resumed.rekey()
        resumed.restarts = [r for r in _restarts(self._store, number, restarts) if r <= log.presses]
        replay_presses(resumed.schedule, log.presses, resumed.restarts, draw=resumed.draw)
        resumed.came_out = log.came_out
        self._current = resumed
        return resumed

    def _resume_beacon(self, resumed: Shuffle, log: _ShuffleLog) -> None:
        """The round a resumed shuffle bound: as the log settled it, else waited for again (or, with the beacon
        turned off since, settled as not had)."""
        settled = log.beacon
        if settled is None and log.beacon_round is not None and (resumed.mixing.phase == FIXED or not self._beacon):
            settled = BeaconRound(log.beacon_round)  # fixed without it, or no beacon to ask any more
        if settled is not None:
            resumed.mixing.beacon = PendingBeacon.had(settled, self._clock)
        elif log.beacon_round is not None and self._beacon is not None:
            pending = self._beacon.wait_for(log.beacon_round, self._clock)
            resumed.mixing.beacon = pending
            pending.start(lambda: self._beacon_settled(resumed))
        # (Not yet sealed: _new_shuffle gave it its binder.)

    def close(self) -> None:
        """The daemon stops: a round still awaited is no longer (a restart waits for it again, from the log)."""
        played = self._current
        if played is not None and played.mixing.beacon is not None:
            played.mixing.beacon.cancel()

    def _binder(self, played: Shuffle, source: BeaconSource) -> Callable[[], PendingBeacon]:
        """What binds `played`'s round when its commitments close, and starts waiting for it."""

        def bind() -> PendingBeacon:
            pending = source.bind(self._clock, REVEAL_S)
            pending.start(lambda: self._beacon_settled(played))
            return pending

        return bind

    def _beacon_settled(self, played: Shuffle) -> None:
        """On the beacon's thread: its round is had, or given up; the key is fixed if the phones are done."""
        with played.mixing.changing:
            if played.mixing.due():
                self._fix(played)

    def lid_opened(self, played: Shuffle) -> None:
        """The lid opened: the pattern profile starts over, as on the original launcher. Saved at once."""
        if played.schedule.presses not in played.restarts:
            played.restarts.append(played.schedule.presses)
        played.schedule.restart()
        with self._store.connect() as conn:
            shuffle_table.set_restarts(conn, played.number, json.dumps(played.restarts))

    def start(self, profile: Profile, *, carried: tuple[int, int] = (0, 0)) -> Shuffle:
        """A new shuffle, going on from the run `carried` (misses, fires in a row) if it is of the same profile."""
        before = self._current
        with self._store.connect() as conn:
            number = shuffle_table.last_number(conn) + 1
            started = self._new_shuffle(number, profile, new_seed(), carried)
            self._current = started  # first: a phone that hears of the shuffle may commit at once
            try:
                # The profile's parameters as sealed: a phone can read what it is shown before anyone commits.
                announced = {**self._announcement(started), "profile_text": profile_text(profile)}
                event = self._bus.publish(EventType.SHUFFLE_STARTED, announced)
                # The profile and the run it went on from: all a restart needs to resume it.
                profile_json = json.dumps(
                    {
                        "name": profile.name,
                        "parameters": profile_to_mapping(profile),
                        "carried": list(carried),
                        "format": 5,
                    }
                )
                shuffle_table.start(conn, number, profile_json, started.seed, started.commitment, event.id, event.ts)
            except BaseException:  # re-raised: the shuffle in play stays the one before
                self._current = before
                raise
        return started

    def commit(self, number: int, commitment: str, sender: str) -> tuple[int, int, bool]:
        """Take a phone's commitment (checked by the caller: sealing.is_commitment) to shuffle `number` from
        `sender` (its session): (its index, the number of commitments now, whether it is new: the same one again is
        told once); ContributionRefused naming why not."""
        played = self._playing(number)
        with played.mixing.changing:  # published in the order taken, and before the commitments close
            index, count, new = played.mixing.commit(commitment, sender)
            if new:
                self._bus.publish(
                    EventType.SHUFFLE_COMMITTED,
                    {"shuffle": number, "index": index, "commitment": commitment, "count": count},
                )
        return index, count, new

    def reveal(self, number: int, value: str) -> tuple[int, bool]:
        """Take a phone's bytes for its commitment to shuffle `number`: (the commitment's index, whether the key is
        fixed now); ContributionRefused naming why not."""
        played = self._playing(number)
        with played.mixing.changing:  # published before the key is fixed, in the log too
            was_fixed = played.closed
            index, complete = played.mixing.reveal(value)
            if not was_fixed:
                self._bus.publish(EventType.SHUFFLE_REVEALED, {"shuffle": number, "index": index, "value": value})
                if complete:
                    self._fix(played)
        return index, complete

    def ready(self, played: Shuffle) -> None:
        """Before a press draws (the controller, with its lock held): raises ShuffleSealing while the phones reveal.
        The first press closes the commitments (published, for the phones to reveal); once all are revealed, or one
        REVEAL_S later, the key is fixed with what came."""
        with played.mixing.changing:
            changed, why = played.mixing.press()
            if changed == "sealed":
                sealed: dict[str, Any] = {
                    "shuffle": played.number,
                    "commitments": played.mixing.commitments(),
                    "reveal_s": REVEAL_S,
                }
                if played.mixing.beacon is not None:
                    sealed["beacon_round"] = played.mixing.beacon.round
                self._bus.publish(EventType.SHUFFLE_SEALED, sealed)
            if changed == "due":
                self._fix(played)
        if why is not None:
            raise ShuffleSealing(why)

    def _fix(self, played: Shuffle) -> None:
        """With `changing` held: key the schedule with what was revealed, then mark the key fixed (so that nothing,
        the board's arm included, reads the schedule before it is keyed), and tell everyone."""
        played.rekey()
        played.mixing.fix()
        fixed: dict[str, Any] = {"shuffle": played.number, "withheld": played.mixing.withheld()}
        beacon = played.mixing.beacon_round()
        if beacon is not None:
            fixed["beacon"] = beacon.as_record()
        self._bus.publish(EventType.SHUFFLE_FIXED, fixed)

    def await_key(self, played: Shuffle) -> None:
        """Before a phone's press, with no lock of the controller held: the first closes the commitments; each waits
        until the phones have revealed (a moment) or the reveal window is over, so that the press draws then."""
        try:
            self.ready(played)
        except ShuffleSealing:
            played.mixing.wait_fixed()

    def end(self, ended: Shuffle) -> dict[str, Any]:
        """Reveal the seed: save the record and tell everyone."""
        ended.mixing.close()
        record = ended.record()
        with self._store.connect() as conn:
            shuffle_table.end(conn, ended.number, json.dumps(record), time.time())
        self._bus.publish(
            EventType.SHUFFLE_ENDED,
            {**self._announcement(ended), "seed": ended.seed, "presses": len(ended.outcomes)},
        )
        return record

    def record(self, number: int) -> dict[str, Any] | None:
        """The record of an ended shuffle; None if there is no such shuffle; ShuffleOpen while it is played;
        RecordError if the store's copy cannot be read."""
        with self._store.connect() as conn:
            return stored_record(conn, number)

    def _playing(self, number: int) -> Shuffle:
        played = self._current
        if played is None or number > played.number:
            raise ContributionRefused(
                Refusal.SHUFFLE_NOT_STARTED, f"there is no shuffle {number} being played", shuffle=number
            )
        if number < played.number:
            raise ContributionRefused(
                Refusal.SHUFFLE_OVER,
                f"shuffle {number} has ended (shuffle {played.number} is being played); it takes no more",
                shuffle=number,
                playing=played.number,
            )
        return played

    def _new_shuffle(self, number: int, profile: Profile, seed: str, carried: tuple[int, int]) -> Shuffle:
        factory = self._schedule_factory
        sealed = seal(seed, profile_text(profile))
        schedule = factory(profile, sealed_key(sealed, seed, []))
        schedule.go_on_from(*carried)
        mixing = Mixing(number, self._clock)
        started = Shuffle(number, profile, seed, sealed, schedule, mixing, factory, carried=carried)
        if self._beacon is not None:
            mixing.binder = self._binder(started, self._beacon)
        return started

    @staticmethod
    def _announcement(played: Shuffle) -> dict[str, Any]:
        return {"shuffle": played.number, "profile": played.profile.name, "commitment": played.commitment}


# An outcome event: what the press it follows dispensed and what ended it (docs/API.md: every press is announced
# by one button.pressed, then exactly one of these or hardware.fault).
_OUTCOME_EVENTS: dict[str, Callable[[dict[str, Any]], CameOut]] = {
    "launcher.missed": lambda data: CameOut(0, "miss"),
    "launcher.fired": lambda data: CameOut(data.get("dispensed"), "count"),
    "launcher.jammed": lambda data: CameOut(
        data.get("dispensed"), "stuck" if data.get("reason") == "stuck_at_exit" else "jam"
    ),
    "launcher.empty": lambda data: CameOut(data.get("dispensed"), "empty"),
    "launcher.stopped": lambda data: CameOut(
        data.get("dispensed"), "lid" if data.get("reason") == "lid" else "aborted"
    ),
    "hardware.fault": lambda data: CameOut(None, "fault"),  # the count is not announced
}


@dataclass
class _ShuffleLog:
    """What the event log holds of an open shuffle."""

    presses: int = 0
    contributions: list[Contribution] = field(default_factory=list)
    phase: str = "committing"
    fixed: bool = False
    legacy: list[str] = field(default_factory=list)  # contributions taken in the clear, before format 5
    came_out: dict[int, CameOut] = field(default_factory=dict)
    beacon_round: int | None = None  # the drand round bound when the commitments closed
    beacon: BeaconRound | None = None  # that round as the key was fixed with it

    @classmethod
    def read(cls, store: Store, conn: Any, number: int, started_event: int) -> _ShuffleLog:
        log = cls()
        press: int | None = None  # the schedule press the next outcome event belongs to (None: a classic deal)
        for _, _, kind, data in _events_after(store, conn, started_event):
            if kind in (EventType.SHUFFLE_STARTED, EventType.SHUFFLE_ENDED):
                break
            if kind.startswith("shuffle.") and data.get("shuffle") == number:
                log._mixing(kind, data)
            elif kind == "button.pressed":
                press = data.get("press")
                if press is not None:
                    log.presses = max(log.presses, press)
            elif kind in _OUTCOME_EVENTS and press is not None and press not in log.came_out:
                log.came_out[press] = _OUTCOME_EVENTS[kind](data)
        return log

    def _mixing(self, kind: str, data: dict[str, Any]) -> None:
        if kind == EventType.SHUFFLE_COMMITTED:
            self.contributions.append(Contribution(data["commitment"]))
        elif kind == EventType.SHUFFLE_SEALED:
            self.phase = "revealing"
            self.beacon_round = data.get("beacon_round")
        elif kind == EventType.SHUFFLE_REVEALED and 0 <= data["index"] < len(self.contributions):
            self.contributions[data["index"]] = Contribution(
                self.contributions[data["index"]].commitment, data["value"]
            )
        elif kind == EventType.SHUFFLE_FIXED:
            self.fixed = True
            if "beacon" in data:
                self.beacon = BeaconRound(data["beacon"]["round"], data["beacon"]["signature"])
        elif kind == EventType.SHUFFLE_CONTRIBUTED:
            self.legacy.append(data["value"])


def stored_record(conn: Any, number: int) -> dict[str, Any] | None:
    """The record of ended shuffle `number` as the store keeps it; None if there is no such shuffle; ShuffleOpen
    while it is played; RecordError if the store's copy cannot be read (only an edited or damaged store's)."""
    found = shuffle_table.record(conn, number)
    if found is None:
        return None
    text, ended = found
    if not ended:
        raise ShuffleOpen(f"shuffle {number} is still being played; its seed is revealed when it ends")
    try:
        record = json.loads(text)
    except (TypeError, ValueError, RecursionError) as e:  # TypeError: no text at all
        raise RecordError(f"shuffle {number}'s record in the store cannot be read ({str(e)[:200]})") from None
    if not isinstance(record, dict):
        raise RecordError(f"shuffle {number}'s record in the store is a JSON {type(record).__name__}, not a record")
    return record


def _events_after(store: Store, conn: Any, after: int, batch: int = 1000) -> Iterator[tuple[int, float, str, Any]]:
    while rows := event_table.after(conn, after, limit=batch):
        for event_id, ts, kind, text in rows:
            yield event_id, ts, kind, _stored_json(store, f"event {event_id}", text, dict)
        after = rows[-1][0]


def _restarts(store: Store, number: int, text: str) -> list[int]:
    """The presses at which shuffle `number`'s pattern started over, as saved."""
    what = f"shuffle {number}'s saved restarts"
    restarts: list[Any] = _stored_json(store, what, text, list)
    if not all(type(r) is int for r in restarts):
        raise store.damaged(what, ValueError("not a list of press numbers"))
    return restarts


def _stored_json(store: Store, what: str, text: Any, kind: type) -> Any:
    """The JSON text of a row the daemon resumes from, which must hold a `kind`; a damaged row is named."""
    try:
        value = json.loads(text)
    except (TypeError, ValueError, RecursionError) as e:  # TypeError: no text at all
        raise store.damaged(what, e) from None
    if not isinstance(value, kind):
        raise store.damaged(what, ValueError(f"it holds a JSON {type(value).__name__}, not a {kind.__name__}"))
    return value
