"""The board's arm: a board on USB (or the header process) fires the next press on its own button.

Whenever the controller waits for a press its schedule draws, the board is armed with that press's cards, 0 for a
miss (a fire and a miss are armed alike: the next press is the board's secret); for a fire it then starts the motor
without the host and tells of the fire after, perhaps more than once, on any thread; for a miss it tells of the
press, which the host decides. Anything the host decides first takes the arm back and waits for the answer, which
may tell of a fire the board made first. `BoardArm` holds that protocol: when to arm, taking the arm back, and each
fire taken once. What a fire from the arm becomes (the press it was) stays the controller's: `claim` and `take`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from launcher.fairplay.schedule import Outcome
from launcher.hardware.base import FireJob, Reflexes

log = logging.getLogger(__name__)

T = TypeVar("T")


class BoardArm(Generic[T]):
    """The arm of `reflex` (None: a backend without one, and every call does nothing but take `lock`).

    - `next_press()`, with `lock` held: the press the board may be armed for and the cards it fires by itself (0:
      none, the host decides), or None (no press to arm for: a busy launcher, an open shuffle, a classic deal...).
    - `claim(armed, job)`, with `lock` held: the press a fire from the arm was (`armed`: what it was armed for, None
      when the arm was already given up); called once per fire however often it is told.
    - `take(claimed)`, without the lock: that press goes on.
    """

    def __init__(
        self,
        reflex: Reflexes | None,
        *,
        lock: threading.Lock,
        next_press: Callable[[], tuple[Outcome, int] | None],
        claim: Callable[[Outcome | None, FireJob], T],
        take: Callable[[T], None],
    ) -> None:
        self._reflex = reflex
        self._lock = lock
        self._next_press = next_press
        self._claim = claim
        self._take = take
        self.armed: Outcome | None = None  # the press the board is armed for, until it fired or gave the arm back
        self._claimed: FireJob | None = None  # the last fire made from the arm, taken as a press
        self._paused = 0  # inside paused(): no arm until it ends
        if reflex is not None:
            reflex.when_reflex = self.fired

    def refresh(self) -> None:
        """With the lock held: arm the board with the next press, if there is one to arm for."""
        if self._reflex is None or self._paused:
            return
        press = self._next_press()
        if press is not None and self._reflex.arm(press[1]):
            self.armed = press[0]

    def forget(self) -> None:
        """With the lock held: the board lost its arm (its link went; a board greeted again holds none)."""
        self.armed = None

    def fired(self, job: FireJob) -> None:
        """The board fired on its own button, from its arm (told on the link's thread, perhaps twice): that press."""
        with self._lock:
            claimed = self._claim_once(job)
        if claimed is not None:
            self._take(claimed)

    @contextmanager
    def deciding(self) -> Iterator[None]:
        """The lock, held while the board holds no arm: what is decided inside cannot race a press the board fires
        itself. The board gives its arm back first, waited for without the lock (a state read must not wait on
        the wire); a press it fired from it meanwhile is claimed, and goes on once the lock is let go."""
        claimed: list[T] = []
        while True:
            self._lock.acquire()
            armed = self.armed
            if armed is None or self._reflex is None:
                break
            self._lock.release()
            job = self._reflex.disarm()
            with self._lock:
                if job is not None and (taken := self._claim_once(job)) is not None:
                    claimed.append(taken)
                if self.armed is armed:  # not armed again meanwhile (then it is taken back again)
                    self.armed = None
        try:
            yield
        finally:
            self._lock.release()
            for taken in claimed:
                self._take(taken)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """The board holds no arm until the end (a new game set up, a reload), then is armed again."""
        with self.deciding():
            self._paused += 1
        try:
            yield
        finally:
            with self._lock:
                self._paused -= 1
                self.refresh()

    def _claim_once(self, job: FireJob) -> T | None:
        """With the lock held: the press a fire from the arm was, once whoever tells of it first."""
        if job is self._claimed:
            return None
        self._claimed = job
        armed, self.armed = self.armed, None
        return self._claim(armed, job)
