"""The hopper's count: what was loaded, what has come out, and a writer that saves it as each card leaves.

A daemon killed in the middle of a fire restarts knowing the cards that had already left: the count is handed to
`NewestSaver` at every card, from the exit beam's thread, which must never wait for a disk. The saver's own thread
writes the newest count (older ones it has not reached are skipped), and `flush()` lets the controller's worker
wait for it at the end of a fire. A write that fails (a full or read-only disk) is tried again every `RETRY_S`
until it goes through, or a newer count replaces it: the launcher plays on, and the count is never dropped.

The daemon's saver hands the count to the store's write-behind (launcher/store/write_behind.py): it goes in the
press's one commit with the game's change, or on its own within COUNT_SAVE_WITHIN_S, so a kill or a power cut
loses at most the cards of that last moment, not a commit per card (the SD card's wear).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from launcher.clock import REAL_CLOCK, Clock
from launcher.errors import LauncherError
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)
T = TypeVar("T")

COUNT_SAVE_WITHIN_S = 2.0  # the newest count is on the disk at most this long after a card left (docs/RELIABILITY.md)
MAX_HOPPER_CARDS = 500  # more than any hopper holds; the same bound as dispense.hopper_cards in the config


@dataclass(frozen=True, slots=True)
class HopperCount:
    """The cards loaded at the last refill and those that have come out since."""

    loaded: int
    dispensed: int

    @property
    def remaining(self) -> int:
        return max(0, self.loaded - self.dispensed)

    def as_dict(self) -> dict[str, int]:
        return {"loaded": self.loaded, "dispensed": self.dispensed, "remaining": self.remaining}


class NewestSaver(Generic[T]):
    """Saves the newest of what it is handed (the hopper's count, the wear counters) on its own thread, `name`.
    `save()` returns at once; `flush()` waits for a try and raises what it raised (the write is tried again)."""

    RETRY_S = 1.0

    def __init__(self, write: Callable[[T], None], name: str, *, clock: Clock = REAL_CLOCK) -> None:
        self._write = write
        self._cond = clock.condition()
        self._pending: T | None = None
        self._handed = 0  # counts handed over, and written (or failed): flush() waits until they meet
        self._done = 0
        self._error: Exception | None = None
        self._thread = StoppableThread(self._run, name, clock=clock, wake=self._wake)
        self._thread.start()

    def save(self, item: T) -> None:
        with self._cond:
            self._pending = item
            self._handed += 1
            self._cond.notify_all()

    def flush(self) -> None:
        """Wait until every count handed over is written; raise the last write's error, once."""
        with self._cond:
            handed = self._handed
            while self._done < handed and self._thread.alive:
                self._cond.wait()
            error, self._error = self._error, None
        if error is not None:
            raise error

    def close(self) -> None:
        """Write what is pending, then stop. Safe to call twice."""
        self._thread.stop()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _run(self) -> None:
        failing = False
        written: T | None = None  # the last item written: the same again (a fire's end after its last card) is not
        while True:
            with self._cond:
                while self._pending is None and not self._thread.stopping.is_set():
                    self._cond.wait()
                item, self._pending, handed = self._pending, None, self._handed
                if item is None:
                    return
            error = None
            try:
                if item != written:  # each write is a commit the SD card takes: wear (docs/BENCHMARKS.md)
                    self._write(item)
                    written = item
            except Exception as e:  # kept and tried again; flush() hands it to whoever waits
                if not failing:  # once, not every second while the disk is full
                    log.error("%s could not save (tried again every %.0f s): %s", self._thread.name, self.RETRY_S, e)
                error, failing = e, True
            else:
                if failing:
                    log.warning("%s saves again", self._thread.name)
                failing = False
            with self._cond:
                self._done = handed
                self._error = error
                self._cond.notify_all()
                if error is not None and self._pending is None:  # nothing newer came: this one is still the newest
                    if self._thread.stopping.is_set():
                        log.error("%s stopped before it could save %r", self._thread.name, item)
                        return
                    self._pending = item
                    self._cond.wait(self.RETRY_S)


class Hopper:
    """The hopper's count as the launcher keeps it: a card out as each one leaves, the fire's own count as a
    correction at its end, refills; every change handed to the saver. Safe from any thread."""

    def __init__(
        self,
        count: HopperCount,
        *,
        on_changed: Callable[[HopperCount], None] | None = None,
        on_reload: Callable[[int], None] | None = None,
        sync: Callable[[], None] | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        """`on_changed`: saves a count (on the saver's thread); `sync`: waits until what it saved is on the disk."""
        self._lock = threading.Lock()
        self._count = count
        self._sync = sync
        self._refilled = False  # the next save() waits for the disk: the refill is answered next
        self._on_reload = on_reload  # the simulated hopper refills itself; a real one is refilled by hand
        self._saver = NewestSaver(on_changed, "hopper-saver", clock=clock) if on_changed is not None else None

    @property
    def count(self) -> HopperCount:
        with self._lock:
            return self._count

    def card_out(self) -> None:
        """From the exit beam's thread: never waits for the disk."""
        with self._lock:
            self._count = count = HopperCount(self._count.loaded, self._count.dispensed + 1)
        if self._saver is not None:
            self._saver.save(count)

    def settle(self, missed: int) -> HopperCount:
        """A fire ended: `missed` cards its own count has that the beam's callbacks did not (or fewer, below 0)."""
        with self._lock:
            self._count = count = HopperCount(self._count.loaded, max(0, self._count.dispensed + missed))
        return count

    def reload(self, cards: int) -> HopperCount:
        if not 1 <= cards <= MAX_HOPPER_CARDS:
            raise ValueError(f"a hopper holds 1 to {MAX_HOPPER_CARDS} cards, not {cards}")
        with self._lock:
            self._count = count = HopperCount(loaded=cards, dispensed=0)
            self._refilled = True
        if self._on_reload is not None:
            self._on_reload(cards)
        return count

    def save(self) -> None:
        """Save the count and wait for the write: after a refill, until it is on the disk (`sync`); after a fire,
        until it is handed over (it goes in the press's commit, or within COUNT_SAVE_WITHIN_S). A store that cannot
        take it (a full disk) does not stop the launcher; the count is kept and tried again until it is written,
        and the admin is told."""
        if self._saver is not None:
            with self._lock:
                count, refilled, self._refilled = self._count, self._refilled, False
            self._saver.save(count)
            with contextlib.suppress(LauncherError):
                self._saver.flush()
                if refilled and self._sync is not None:
                    self._sync()

    def close(self) -> None:
        """Write what is pending, then stop. Safe to call twice."""
        if self._saver is not None:
            self._saver.close()
