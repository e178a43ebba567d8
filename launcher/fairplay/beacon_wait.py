"""Waiting for a shuffle's drand round (docs/FAIRNESS.md, "A public beacon"), off every lock and off the press path.

When a shuffle's commitments close, `BeaconSource.bind` picks the first quicknet round whose time is after the
phones' reveal window ends (so that nobody deciding whether to reveal can know the round yet), and a thread of its
own waits for that time on the injected clock, then asks the relays, a second apart, until WAIT_S after the round's
time. Whatever it ends with (the signature, or None) is handed to `on_settled` once; the key is then fixed with it,
or without it when none came (launcher/fairplay/shuffles.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from launcher.clock import Clock, Event
from launcher.fairplay.beacon import (
    FETCH_TIMEOUT_S,
    RELAYS,
    BeaconRound,
    Fetch,
    fetch_signature,
    http_get,
    round_after,
    round_time,
)
from launcher.threads import StoppableThread

WAIT_S = 10.0  # after the round's time, how long the relays are tried before the key goes without the beacon
RETRY_S = 1.0  # between two passes over the relays


class PendingBeacon:
    """One shuffle's round: waited for and fetched on its own thread, settled once."""

    def __init__(self, number: int, signed_in: float, clock: Clock, fetch: Fetch, relays: tuple[str, ...]) -> None:
        self.round = number
        self._clock = clock
        self._fetch = fetch
        self._relays = relays
        self._due = clock.now() + max(0.0, signed_in)  # when the round is signed, on the clock
        self.deadline = self._due + WAIT_S
        self.last_try_s = len(relays) * FETCH_TIMEOUT_S + RETRY_S  # a pass over the relays begun before the deadline
        self._lock = threading.Lock()
        self._settled: BeaconRound | None = None
        self._on_settled: Callable[[], None] = lambda: None
        self._thread: StoppableThread | None = None  # made by start(): a thread made is one the clock waits for

    @classmethod
    def had(cls, found: BeaconRound, clock: Clock) -> PendingBeacon:
        """A round already settled (a restarted daemon reading its log): nothing to wait for."""
        pending = cls(found.round, 0.0, clock, http_get, ())
        pending._settled = found
        return pending

    def start(self, on_settled: Callable[[], None]) -> None:
        self._on_settled = on_settled
        self._thread = StoppableThread(lambda: self._run(stopping), f"beacon-{self.round}", clock=self._clock)
        stopping = self._thread.stopping
        self._thread.start()

    def cancel(self) -> None:
        """The shuffle ended: the thread settles nothing and ends after its current fetch (not waited for here)."""
        if self._thread is not None:
            self._thread.stopping.set()

    @property
    def settled(self) -> BeaconRound | None:
        """The round with its signature, or with None when it was not had in time; None while still waited for."""
        with self._lock:
            return self._settled

    def _run(self, stopping: Event) -> None:
        signature = None
        try:
            stopping.wait(max(0.0, self._due - self._clock.now()))
            while not stopping.is_set() and signature is None:
                signature = fetch_signature(self.round, self._fetch, self._relays)
                if signature is None and self._clock.now() + RETRY_S > self.deadline:
                    break
                if signature is None:
                    stopping.wait(RETRY_S)
        finally:  # whatever ended the wait, the shuffle's presses must not wait for good
            if not stopping.is_set():  # else the shuffle ended first: it settles nothing
                with self._lock:
                    self._settled = BeaconRound(self.round, signature)
                self._on_settled()


@dataclass(frozen=True)
class BeaconSource:
    """Where a shuffle's round comes from: `fetch` (an HTTP GET; tests hand a recorded answer), the wall clock for
    the round's number (`wall`, Unix seconds; the waits themselves run on the daemon's clock), and the relays."""

    fetch: Fetch = http_get
    wall: Callable[[], float] = time.time
    relays: tuple[str, ...] = RELAYS

    def bind(self, clock: Clock, reveal_s: float) -> PendingBeacon:
        """The round for commitments closing now: the first one signed after the reveal window ends."""
        return self.wait_for(round_after(self.wall() + reveal_s), clock)

    def wait_for(self, number: int, clock: Clock) -> PendingBeacon:
        """Round `number`, waited for from now (not started)."""
        return PendingBeacon(number, round_time(number) - self.wall(), clock, self.fetch, self.relays)
