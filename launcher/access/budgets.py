"""What one joined phone may do per minute, and how big the store may grow: a table PIN is a guest's child's too.

Every write a phone can make is counted against one `Budget` (webui/access.py's `budgeted()` declares which, on the
view), per session and per client (its address, as PIN guesses are: a new session brings no new allowance); joins
per client only. Each is a bucket that holds a minute's worth and refills evenly, so a burst as large as a minute's
allowance passes and a steady stream beyond it is refused with the seconds to wait. The store's size (the SD card
on a Pi) is checked before anything that makes it grow for good: past `[limits] store_mb` every such write is
refused, and the admin is told; presses and joins carry on. The figures are `[limits]` settings (docs/CONFIG.md),
far above what a family's game does.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import LimitsConfig
from launcher.errors import LauncherError
from launcher.refusals import Refusal

KEPT = 4096  # buckets remembered per kind: bounded memory, whatever sessions or addresses come


class OverBudget(LauncherError, RuntimeError):
    """Refused by a budget: `what` names which, `retry_after_s` when a try is taken again (0: not by waiting)."""

    def __init__(self, what: Refusal, message: str, retry_after_s: int = 0) -> None:
        super().__init__(message)
        self.what = what
        self.retry_after_s = retry_after_s


@dataclass
class _Bucket:
    left: float
    at: float


class PerMinute:
    """`per_minute` actions per key, a minute's worth at once, refilled evenly."""

    def __init__(self, what: Refusal, noun: str, per_minute: int, clock: Clock) -> None:
        self._what = what
        self._noun = noun
        self._per_minute = per_minute
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, *keys: str) -> None:
        """One action counted against each of `keys` (a session and its address), or OverBudget with the seconds
        until one is taken again: then none is counted."""
        now = self._clock.now()
        rate = self._per_minute / 60
        with self._lock:
            buckets = [self._bucket(key, now, rate) for key in keys]
            short = max(1 - bucket.left for bucket in buckets)
            if short > 0:
                wait = max(1, math.ceil(short / rate))
                raise OverBudget(
                    self._what, f"more than {self._per_minute} {self._noun} a minute; try again in {wait} s", wait
                )
            for bucket in buckets:
                bucket.left -= 1

    def _bucket(self, key: str, now: float, rate: float) -> _Bucket:
        """With the lock held: `key`'s bucket refilled until now, made the newest (the oldest beyond KEPT is
        forgotten: it was full, or nearly)."""
        bucket = self._buckets.pop(key, None) or _Bucket(float(self._per_minute), now)
        bucket.left = min(float(self._per_minute), bucket.left + (now - bucket.at) * rate)
        bucket.at = now
        self._buckets[key] = bucket
        while len(self._buckets) > KEPT:
            self._buckets.popitem(last=False)
        return bucket


class Budget(StrEnum):
    """A per-minute budget, by its `[limits]` key."""

    GAMES = "games_per_minute"
    DECLARATIONS = "declarations_per_minute"
    JOINS = "joins_per_minute"
    SHUFFLES = "shuffles_per_minute"
    RELOADS = "reloads_per_minute"
    PRESSES = "presses_per_minute"
    LET_INS = "let_ins_per_minute"

    @property
    def grows_store(self) -> bool:
        """Whether what it counts is refused once the store is full: not a press (the launcher carries on, and
        the event log forgets old days by itself) nor a join or a phone let in (a session row, reaped when idle)."""
        return self not in (Budget.PRESSES, Budget.JOINS, Budget.LET_INS)


# What each budget counts, as its refusal says it.
_COUNTED: dict[Budget, tuple[Refusal, str]] = {
    Budget.GAMES: (Refusal.TOO_MANY_GAMES, "new games and tournaments"),
    Budget.DECLARATIONS: (Refusal.TOO_MANY_DECLARATIONS, "declarations, rounds and their corrections"),
    Budget.JOINS: (Refusal.TOO_MANY_JOINS, "joins"),
    Budget.SHUFFLES: (Refusal.TOO_MANY_SHUFFLES, "new shuffles"),
    Budget.RELOADS: (Refusal.TOO_MANY_RELOADS, "hopper reloads"),
    Budget.PRESSES: (Refusal.TOO_MANY_PRESSES, "presses"),
    Budget.LET_INS: (Refusal.TOO_MANY_LET_INS, "codes typed to let a phone in"),
}


class Budgets:
    """The `[limits]` budgets of one daemon."""

    def __init__(self, limits: LimitsConfig, store_path: Path, *, clock: Clock = REAL_CLOCK) -> None:
        self._per_minute = {
            budget: PerMinute(*_COUNTED[budget], getattr(limits, budget.value), clock) for budget in Budget
        }
        self.joins = self[Budget.JOINS]  # spent by the join itself (webui/session_api.py), not by the gate
        self.store_bytes = limits.store_mb * 1024 * 1024
        self._store_path = store_path

    def __getitem__(self, budget: Budget) -> PerMinute:
        return self._per_minute[budget]

    def spend(self, budget: Budget, *keys: str) -> None:
        """One action counted against `budget` for `keys`, after the store's size where it grows the store: what
        the page's gate spends, for a caller outside it (Home Assistant's button over MQTT)."""
        if budget.grows_store:
            self.check_store()
        self[budget].take(*keys)

    def store_size(self) -> int:
        """The store's bytes on disk, its write-ahead log included (two stats)."""
        size = 0
        for path in (self._store_path, self._store_path.with_name(self._store_path.name + "-wal")):
            with contextlib.suppress(FileNotFoundError):  # no write-ahead log: the store was closed cleanly
                size += path.stat().st_size
        return size

    def store_full(self) -> bool:
        return self.store_size() >= self.store_bytes

    def check_store(self) -> None:
        """OverBudget when the store has reached its budget: nothing more is kept until the admin makes room."""
        if self.store_full():
            raise OverBudget(
                Refusal.STORE_FULL,
                f"the launcher's store has reached its budget of {self.store_bytes // (1024 * 1024)} MB "
                "([limits] store_mb): nothing more is kept until the admin makes room",
            )
