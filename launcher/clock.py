"""Time as a parameter: every part that waits, times out or ramps takes a `Clock`.

`RealClock` is the monotonic clock and plain `threading` primitives: what the daemon runs on. Tests and benchmarks
run on `tests/virtual_clock.py`'s `VirtualClock`, whose time moves only when every thread taking part waits on it.
The parts ask the clock for their conditions, events and threads, so that the virtual clock knows who waits on what.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol


class Event(Protocol):
    """What the parts use of `threading.Event`."""

    def set(self) -> None: ...

    def clear(self) -> None: ...

    def is_set(self) -> bool: ...

    def wait(self, timeout: float | None = None) -> bool: ...


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic scale."""
        ...

    def sleep(self, seconds: float) -> None: ...

    def condition(self, lock: threading.Lock | threading.RLock | None = None) -> threading.Condition:
        """A condition whose timed waits run on this clock."""
        ...

    def event(self) -> Event:
        """An event whose timed waits run on this clock."""
        ...

    def thread(self, target: Callable[[], object], name: str) -> threading.Thread:
        """A daemon thread (not started) whose waits this clock knows of."""
        ...


class RealClock:
    """The monotonic clock and the standard primitives."""

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, seconds))

    def condition(self, lock: threading.Lock | threading.RLock | None = None) -> threading.Condition:
        return threading.Condition(lock)

    def event(self) -> Event:
        return threading.Event()

    def thread(self, target: Callable[[], object], name: str) -> threading.Thread:
        return threading.Thread(target=target, name=name, daemon=True)


REAL_CLOCK = RealClock()
