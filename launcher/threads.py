"""The one way the project runs a thread of its own: named, made by the clock (so that a virtual clock in the tests
takes part in its waits), stopped through one event, and joined for a bounded time.

A loop checks `stopping` wherever it would go on; a loop that waits on a condition or a queue is given `wake`,
which `stop()` calls after setting the event so that the wait ends at once. `stop()` never waits for the thread from
the thread itself (a `close()` reached from one of its own callbacks) and never hangs a shutdown on a thread that is
stuck for good: it logs that thread's name and goes on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from launcher.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

JOIN_S = 5.0  # longer than any step of any loop here (the longest, a save to a slow SD card, takes well under 1 s)


class StoppableThread:
    def __init__(
        self,
        run: Callable[[], object],
        name: str,
        *,
        clock: Clock = REAL_CLOCK,
        wake: Callable[[], None] | None = None,
    ) -> None:
        self.name = name
        self.stopping = clock.event()
        self._wake = wake
        self._thread = clock.thread(run, name)

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def is_current(self) -> bool:
        """True on the thread itself."""
        return self._thread is threading.current_thread()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end by itself (not asking it to); True once it has."""
        if self._thread.ident is not None and not self.is_current:
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self, timeout: float = JOIN_S) -> bool:
        """Ask the loop to end and wait for it, at most `timeout` seconds. True once it has ended. Safe to call
        twice, before `start()`, and from the thread itself (then it does not wait)."""
        self.stopping.set()
        if self._wake is not None:
            self._wake()
        if self.join(timeout) or self.is_current:
            return not self._thread.is_alive()
        log.error("the %s thread did not stop within %.0f s; going on without it", self.name, timeout)
        return False


class Alarm:
    """Calls `on_deadline(guarded)` once an armed deadline passes, on a long-lived thread of its own.

    Each arming carries what it guards, so a late alarm for something that has already ended (a disarmed fire, a
    released button) cannot fire for the next one; arming again replaces the deadline.
    """

    def __init__(self, on_deadline: Callable[[object], None], name: str, *, clock: Clock = REAL_CLOCK) -> None:
        self._on_deadline = on_deadline
        self._clock = clock
        self._deadline: float | None = None
        self._guarded: object = None
        self._cond = clock.condition()
        self._thread = StoppableThread(self._run, name, clock=clock, wake=self._wake)
        self._thread.start()

    def arm(self, guarded: object, seconds: float) -> None:
        with self._cond:
            self._guarded = guarded
            self._deadline = self._clock.now() + seconds
            self._cond.notify()

    def disarm(self, guarded: object) -> None:
        with self._cond:
            if self._guarded is guarded:
                self._guarded, self._deadline = None, None
                self._cond.notify()

    def close(self) -> None:
        self._thread.stop()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def _run(self) -> None:
        stopping = self._thread.stopping
        while True:
            with self._cond:
                while not stopping.is_set() and (self._deadline is None or self._deadline > self._clock.now()):
                    left = None if self._deadline is None else self._deadline - self._clock.now()
                    self._cond.wait(left)
                if stopping.is_set():
                    return
                guarded, self._guarded, self._deadline = self._guarded, None, None
            self._on_deadline(guarded)  # outside the lock: the callback may arm this alarm again
