"""The write-behind: the daemon's frequent writes gathered into few commits, for the SD card's wear
(docs/BENCHMARKS.md, "SD card wear").

Each commit at `synchronous=FULL` appends every page it changed to the write-ahead log (a frame of 4,120 bytes for a
4 KiB page) and waits for the card to have it, so a commit changing a few bytes still costs the card two 4 KiB
blocks. The parts that write often therefore hand their writes over instead of committing each one:

- `later(key, write, within_s)`: a write that may wait up to `within_s` on the daemon's clock: the event log's
  batches, the hopper's count as cards leave, the wear counters. A newer write of the same key replaces one still
  waiting (a counter: only the newest matters), keeping the earlier deadline, so a counter that changes all the time
  is still written within its bound. A write also goes with any commit made before its deadline.
- `now(write)`: a write that is on the disk when it returns (a game's change, told to the phones next). It runs on
  the caller's thread, in one transaction with every write waiting: a press's events, the hopper's count and the
  wear counters go with the game's change, and a press costs one commit.

What waits is in memory only: a kill or a power cut loses at most `within_s` of it, which each part's bound says.
A transaction that fails (a full or read-only disk) keeps every waiting write it held, and the thread tries again
every RETRY_S until it goes through; `now()` raises the StoreError to its caller, after trying its own write alone
(a waiting write that cannot go in never stops the one that must).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from launcher.clock import REAL_CLOCK, Clock
from launcher.store.database import Store
from launcher.store.transactions import transaction
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

Write = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True, slots=True)
class _Waiting:
    write: Write
    due: float  # on the clock: written by then
    saved: Callable[[], None] | None  # told once it is committed


def _newer(newer: _Waiting, older: _Waiting | None) -> _Waiting:
    """`newer` in place of `older` (of the same key, not written yet), due at the earlier of their deadlines."""
    if older is None:
        return newer
    return _Waiting(newer.write, min(newer.due, older.due), newer.saved)


class WriteBehind:
    """The store's writes that may wait, and the commits that take them. Safe from any thread; its own thread,
    `store-writer`, commits what falls due."""

    RETRY_S = 1.0  # a commit that failed (a full disk) is tried again this often

    def __init__(self, store: Store, *, clock: Clock = REAL_CLOCK) -> None:
        self._clock = clock
        self._writer = store.writer()
        self._writing = threading.Lock()  # one transaction at a time on the kept connection
        self._cond = clock.condition()
        self._waiting: dict[str, _Waiting] = {}  # in the order handed over: the event log's batches stay in order
        self._in_flight = 0  # writes taken by the commit under way: not on the disk yet either
        self._not_before = 0.0  # after a failed commit: the next try
        self._thread = StoppableThread(self._run, "store-writer", clock=clock, wake=self._wake)
        self._thread.start()

    def later(
        self,
        key: str,
        write: Write,
        *,
        within_s: float,
        saved: Callable[[], None] | None = None,
    ) -> None:
        """Hand a write over, to be committed within `within_s` (or with any commit before). Returns at once:
        memory only."""
        with self._cond:
            waiting = _Waiting(write, self._clock.now() + within_s, saved)
            self._waiting[key] = _newer(waiting, self._waiting.get(key))
            self._cond.notify_all()

    def now(self, write: Write) -> None:
        """Commit `write`, with everything waiting, before returning; StoreError if it cannot be."""
        self._commit(write)

    def flush(self) -> None:
        """Commit everything waiting now; StoreError if the store cannot take it (it keeps waiting)."""
        self._commit(None)

    @property
    def waiting(self) -> int:
        """Writes handed over and not committed yet (those in a commit under way too)."""
        with self._cond:
            return len(self._waiting) + self._in_flight

    def close(self) -> None:
        """Commit what waits, then stop; what the store cannot take is named in the log. Safe to call twice."""
        self._thread.stop()
        try:
            self.flush()
        except Exception as e:  # a full disk at the stop: nothing more can be done than saying what is lost
            with self._cond:
                lost = ", ".join(self._waiting)
            log.error("the store-writer stopped before it could save %s: %s", lost, e)
        self._writer.close()

    def _commit(self, write: Write | None) -> None:
        with self._writing:
            taken = self._take()
            if write is None and not taken:
                return
            try:
                self._transaction(taken.values(), write)
            except Exception:
                self._give_back(taken)
                if write is None or not taken:
                    raise
                self._transaction((), write)  # the write that must go in, without those that could not
                taken = {}
        for waiting in taken.values():
            if waiting.saved is not None:
                waiting.saved()
        with self._cond:
            self._in_flight = 0  # after they were told: nothing waits once `waiting` is 0

    def _transaction(self, waiting: Iterable[_Waiting], write: Write | None) -> None:
        with self._writer.connect() as conn, transaction(conn):
            for each in waiting:
                each.write(conn)
            if write is not None:
                write(conn)

    def _take(self) -> dict[str, _Waiting]:
        """Everything waiting, for a commit now."""
        with self._cond:
            taken, self._waiting = self._waiting, {}
            self._in_flight = len(taken)
            return taken

    def _give_back(self, taken: dict[str, _Waiting]) -> None:
        """After a failed commit: what it took waits again, before anything handed over since; a newer write of the
        same key stays (it replaced the one taken), with the earlier deadline."""
        with self._cond:
            merged = dict(taken)
            for key, newer in self._waiting.items():
                merged[key] = _newer(newer, merged.pop(key, None))
            self._waiting = merged
            self._in_flight = 0
            self._cond.notify_all()  # the thread may wait for nothing, having found nothing while they were taken

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _next_due(self) -> float | None:
        if not self._waiting:
            return None
        return max(self._not_before, min(w.due for w in self._waiting.values()))

    def _run(self) -> None:
        failing = False
        while True:
            with self._cond:
                while not self._thread.stopping.is_set():
                    due, now = self._next_due(), self._clock.now()
                    if due is not None and due <= now:
                        break
                    self._cond.wait(None if due is None else due - now)
                else:
                    return  # close() commits what waits
            try:
                self._commit(None)
            except Exception as e:  # kept waiting and tried again: a full disk must not stop the launcher
                if not failing:  # once, not every second while the disk is full
                    log.error("the store-writer could not save (tried again every %.0f s): %s", self.RETRY_S, e)
                failing = True
                with self._cond:
                    self._not_before = self._clock.now() + self.RETRY_S
            else:
                if failing:
                    log.warning("the store-writer saves again")
                failing = False
