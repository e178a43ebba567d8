"""Virtual time for tests and benchmarks: a `launcher.clock.Clock` whose time moves only when every thread taking
part is waiting on it, and then jumps straight to the earliest deadline (as Trio's `MockClock` with
`autojump_threshold=0` does). A test that sleeps 0.3 s on it returns at once, with every timer that fell due in
those 0.3 s run exactly at its moment.

The parts ask the clock for their conditions, events and threads, so that the virtual clock knows who waits on
what. The thread that creates a `VirtualClock` takes part from the start: time stands still while it runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from launcher.clock import Event


class _Taker:
    """A thread taking part in virtual time, and what it waits for."""

    __slots__ = ("blocked", "cond", "deadline", "leaves_by_itself", "thread")

    def __init__(self, thread: threading.Thread, *, leaves_by_itself: bool = False) -> None:
        self.thread = thread
        # Made by `VirtualClock.thread`: it says when it ends, so its liveness is never guessed (a starting thread
        # has an ident a moment before `is_alive()` is true).
        self.leaves_by_itself = leaves_by_itself
        self.blocked = False
        self.cond: _VirtualCondition | None = None
        self.deadline: float | None = None


class VirtualClock:
    """Time that moves only while every taking-part thread waits; then straight to the next deadline.

    `stall_s` bounds, in real seconds, how long one wait may block with nothing due: a deadlock in a test ends
    as a spurious wake-up (and `stalls` counts it) instead of hanging the suite.
    """

    def __init__(self, start: float = 0.0, *, stall_s: float = 20.0) -> None:
        self._now = start
        self._stall_s = stall_s
        self.stalls = 0
        self.jumps = 0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._takers: dict[threading.Thread, _Taker] = {}
        self._closed = False
        self._join(threading.current_thread())
        # The clock's own thread, the one not made by launcher/threads.py: that module makes its threads from a clock.
        self._jumper = threading.Thread(target=self._jump_forever, name="virtual-clock", daemon=True)
        self._jumper.start()

    # --- the Clock protocol ----------------------------------------------------------------------------

    def now(self) -> float:
        with self._lock:
            return self._now

    def sleep(self, seconds: float) -> None:
        cond = self.condition()
        with self._lock:
            deadline = self._now + max(0.0, seconds)
        with cond:
            while self.now() < deadline:
                cond.wait(deadline - self.now())

    def condition(self, lock: threading.Lock | threading.RLock | None = None) -> threading.Condition:
        return _VirtualCondition(self, lock)

    def event(self) -> Event:
        return _VirtualEvent(self)

    def thread(self, target: Callable[[], object], name: str) -> threading.Thread:
        def run() -> None:
            try:
                target()
            finally:
                self._leave(thread)

        thread = threading.Thread(target=run, name=name, daemon=True)
        # Before it starts: no jump may happen while it is on its way to its first wait.
        self._join(thread, leaves_by_itself=True)
        return thread

    # --- for tests -------------------------------------------------------------------------------------

    def advance(self, seconds: float) -> None:
        """Let `seconds` of virtual time pass for everyone (the calling thread sleeps them)."""
        self.sleep(seconds)

    def run_until(self, done: Callable[[], bool], *, within: float, step: float = 0.001) -> None:
        """Let virtual time pass in `step`s until `done()`; AssertionError after `within` virtual seconds."""
        deadline = self.now() + within
        while not done():
            if self.now() >= deadline:
                raise AssertionError(f"not done within {within} s of virtual time")
            self.sleep(step)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._changed.notify_all()
        self._jumper.join()

    # --- internals -------------------------------------------------------------------------------------

    def _join(self, thread: threading.Thread, *, leaves_by_itself: bool = False) -> None:
        with self._lock:
            self._takers.setdefault(thread, _Taker(thread, leaves_by_itself=leaves_by_itself))

    def _leave(self, thread: threading.Thread) -> None:
        with self._lock:
            self._takers.pop(thread, None)
            self._changed.notify_all()

    def _wait(self, cond: _VirtualCondition, timeout: float | None) -> bool:
        """With `cond` held: block until notified or until `timeout` of virtual time has passed."""
        me = threading.current_thread()
        with self._lock:
            taker = self._takers.get(me)
            if taker is None:
                taker = self._takers[me] = _Taker(me)
            taker.blocked = True
            taker.cond = cond
            taker.deadline = None if timeout is None else self._now + max(0.0, timeout)
            self._changed.notify_all()
        try:
            notified = cond.real_wait(self._stall_s)
        finally:
            with self._lock:
                if taker.blocked:  # nobody woke it: a stall
                    self.stalls += 1
                    taker.blocked = False
                woke_by_time = taker.deadline is not None and taker.deadline <= self._now
                taker.cond = None
                taker.deadline = None
        return notified and not woke_by_time

    def _notified(self, cond: _VirtualCondition) -> None:
        """`cond` is being notified: its waiters run again (a notify wakes them all, as spurious wake-ups may)."""
        with self._lock:
            for taker in self._takers.values():
                if taker.blocked and taker.cond is cond:
                    taker.blocked = False

    def _due(self) -> list[_VirtualCondition] | None:
        """With the lock held: once every taker waits, jump to the earliest deadline and return what fell due."""
        for thread in [t for t, taker in self._takers.items() if not (taker.blocked or taker.leaves_by_itself)]:
            if not thread.is_alive():
                del self._takers[thread]
        takers = self._takers.values()
        if any(not taker.blocked for taker in takers):
            return None
        deadlines = [taker.deadline for taker in takers if taker.deadline is not None]
        if not deadlines:
            return None
        self._now = max(self._now, min(deadlines))
        self.jumps += 1
        due = []
        for taker in takers:
            if taker.deadline is not None and taker.deadline <= self._now and taker.cond is not None:
                taker.blocked = False
                due.append(taker.cond)
        return due

    def _jump_forever(self) -> None:
        while True:
            with self._lock:
                while not self._closed and (due := self._due()) is None:
                    # A thread not made by thread() tells nobody when it ends: look again now and then.
                    self._changed.wait(0.01)
                if self._closed or due is None:
                    return
            for cond in due:
                with cond:
                    cond.notify_all()


class _VirtualCondition(threading.Condition):
    def __init__(self, clock: VirtualClock, lock: threading.Lock | threading.RLock | None) -> None:
        super().__init__(lock)
        self._clock = clock

    def wait(self, timeout: float | None = None) -> bool:
        return self._clock._wait(self, timeout)

    def real_wait(self, timeout: float) -> bool:
        return super().wait(timeout)

    def notify(self, n: int = 1) -> None:
        # Every waiter wakes (callers re-check, as they must for spurious wake-ups): the clock then knows who runs.
        self._clock._notified(self)
        super().notify(len(self._waiters))  # type: ignore[attr-defined]

    def notify_all(self) -> None:
        self.notify()


class _VirtualEvent:
    def __init__(self, clock: VirtualClock) -> None:
        self._cond = clock.condition(threading.Lock())
        self._clock = clock
        self._flag = False

    def set(self) -> None:
        with self._cond:
            self._flag = True
            self._cond.notify_all()

    def clear(self) -> None:
        with self._cond:
            self._flag = False

    def is_set(self) -> bool:
        return self._flag

    def wait(self, timeout: float | None = None) -> bool:
        with self._cond:
            deadline = None if timeout is None else self._clock.now() + timeout
            while not self._flag:
                left = None if deadline is None else deadline - self._clock.now()
                if left is not None and left <= 0:
                    break
                self._cond.wait(left)
            return self._flag
