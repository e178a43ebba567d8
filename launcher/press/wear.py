"""Wear and care: how the launcher's mechanics are wearing, counted over its whole life and since its roller was
last cleaned (docs/HARDWARE.md, "Wear and care").

The controller's worker hands every fire's end to `Wear.fire_ended()` once its outcome is known; the counters
change in memory and the newest of them is handed to the store's write-behind, so neither a press nor the exit
beam's callback ever waits for the disk. It goes in the commit of the press's change of the game, or on its own
within SAVE_WITHIN_S: a kill or a power cut loses at most the counts of the fire it cut short (or of one that ended
in the moment before, while its save was waiting).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from launcher.clock import REAL_CLOCK, Clock
from launcher.hardware.base import DispenseResult, StopReason
from launcher.press.hopper import HopperCount
from launcher.store import Store, WriteBehind, wear_table

WINDOW_FIRES = 200  # the cleaning hint looks at this many of the latest fires since the last cleaning
JAM_LIMIT_PER_1000 = 20  # more jams than this per 1,000 fires over the window: the roller wants cleaning
HINT_JAMS = JAM_LIMIT_PER_1000 * WINDOW_FIRES // 1000 + 1  # 5: the fewest jams in the window above the limit
SAVE_WITHIN_S = 2.0  # the newest counters are on the disk at most this long after a fire's end

# One letter per fire in a period's window of recent fires.
_JAM, _STUCK, _TIMEOUT, _OTHER = "j", "s", "t", "."


def end_of(result: DispenseResult, hopper: HopperCount) -> str:
    """How a fire ended, as the counters tell it: a JAM with the hopper's count at 0 is the hopper running out
    (the table is told "empty"), not a jam."""
    if result.stop is StopReason.JAM:
        return _JAM if hopper.remaining > 0 else _OTHER
    return {StopReason.STUCK: _STUCK, StopReason.TIMEOUT: _TIMEOUT}.get(result.stop, _OTHER)


@dataclass(frozen=True, slots=True)
class Period:
    """The counters of one period: the launcher's life, or the time since the roller was cleaned."""

    since: float  # seconds since the epoch: when this count began
    fires: int = 0  # fires that ran the motor and ended, whatever the end
    cards: int = 0  # cards the exit beam counted out of them
    jams: int = 0  # ended JAM with cards still in the hopper: none came, even after the reverse and the retry
    stuck: int = 0  # ended STUCK: a card stayed in the exit beam
    timeouts: int = 0  # ended TIMEOUT: the watchdog cut the motor
    motor_ms: int = 0  # the motor's run time as the dispenser measured each fire
    recent: str = ""  # how each of the latest WINDOW_FIRES fires ended, oldest first (see end_of)

    def after(self, result: DispenseResult, end: str) -> Period:
        return replace(
            self,
            fires=self.fires + 1,
            cards=self.cards + result.dispensed,
            jams=self.jams + (end == _JAM),
            stuck=self.stuck + (end == _STUCK),
            timeouts=self.timeouts + (end == _TIMEOUT),
            motor_ms=self.motor_ms + result.ms,
            recent=(self.recent + end)[-WINDOW_FIRES:],
        )

    def as_dict(self) -> dict[str, Any]:
        rated = {"jams": self.jams, "stuck": self.stuck, "timeouts": self.timeouts}
        recent_jams = self.recent.count(_JAM)
        return {
            "since": self.since,
            "fires": self.fires,
            "cards": self.cards,
            **rated,
            "motor_s": round(self.motor_ms / 1000, 1),
            "per_1000_fires": {name: _per_1000(count, self.fires) for name, count in rated.items()},
            "recent": {
                "fires": len(self.recent),
                "jams": recent_jams,
                "jams_per_1000_fires": _per_1000(recent_jams, len(self.recent)),
            },
        }


def _per_1000(count: int, fires: int) -> float | None:
    return round(count * 1000 / fires, 1) if fires else None


@dataclass(frozen=True, slots=True)
class WearRecord:
    """Both periods, as saved."""

    lifetime: Period
    cleaning: Period

    @property
    def roller_needs_cleaning(self) -> bool:
        """More than JAM_LIMIT_PER_1000 jams per 1,000 fires over the latest WINDOW_FIRES since the cleaning, and
        at least HINT_JAMS of them: with fewer fires since, one early jam does not ask for another cleaning."""
        return self.cleaning.recent.count(_JAM) >= HINT_JAMS


class StoredWear:
    """The counters' rows in the store: read at the start, handed to the write-behind (`writes`, else one of its
    own) after each change."""

    def __init__(self, store: Store, writes: WriteBehind | None = None, *, clock: Clock = REAL_CLOCK) -> None:
        self._store = store
        self._own_writes = writes is None
        self.writes = WriteBehind(store, clock=clock) if writes is None else writes

    def load(self) -> WearRecord:
        with self._store.connect() as conn:
            rows = wear_table.load(conn)  # columns named as a Period's fields
        try:
            return WearRecord(Period(**rows["lifetime"]), Period(**rows["cleaning"]))
        except (KeyError, TypeError) as e:
            missing = isinstance(e, KeyError)
            raise self._store.damaged("the wear counters", ValueError(f"no {e} row") if missing else e) from None

    def save(self, record: WearRecord) -> None:
        """Returns at once: written within SAVE_WITHIN_S (`writes.flush()` to have it now)."""
        periods = {"lifetime": asdict(record.lifetime), "cleaning": asdict(record.cleaning)}
        self.writes.later("wear", lambda conn: wear_table.save(conn, periods), within_s=SAVE_WITHIN_S)

    def close(self) -> None:
        if self._own_writes:
            self.writes.close()


class Wear:
    """The counters as the launcher keeps them, in memory and (if `kept`) in the store, where the newest record is
    handed to the write-behind, never written on the caller's thread. Safe from any thread."""

    def __init__(
        self,
        record: WearRecord,
        *,
        kept: StoredWear | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._wall = wall
        self._lock = threading.Lock()
        self._record = record
        self._kept = kept

    @classmethod
    def kept_in(
        cls,
        store: Store,
        *,
        wall: Callable[[], float] = time.time,
        clock: Clock = REAL_CLOCK,
        writes: WriteBehind | None = None,
    ) -> Wear:
        """The counters the store holds, saved back there after every change (through `writes`, the daemon's
        write-behind, else one of their own)."""
        kept = StoredWear(store, writes, clock=clock)
        return cls(kept.load(), kept=kept, wall=wall)

    @property
    def record(self) -> WearRecord:
        with self._lock:
            return self._record

    def fire_ended(self, result: DispenseResult, hopper: HopperCount) -> None:
        """A fire's outcome is known (`hopper`: the count after it). Returns at once: the save is handed over."""
        end = end_of(result, hopper)
        with self._lock:
            was = self._record
            self._record = record = WearRecord(was.lifetime.after(result, end), was.cleaning.after(result, end))
        if self._kept is not None:
            self._kept.save(record)

    def cleaned(self) -> WearRecord:
        """The roller was cleaned: the counts since cleaning start again, the lifetime ones stay. Waits for the
        save and raises what the store raised: the admin is told it is done only once it is."""
        with self._lock:
            self._record = record = replace(self._record, cleaning=Period(since=self._wall()))
        if self._kept is not None:
            self._kept.save(record)
            self._kept.writes.flush()
        return record

    def report(self) -> dict[str, Any]:
        """What the admin's page shows: both periods, their rates, and the cleaning hint and its rule."""
        record = self.record
        return {
            "lifetime": record.lifetime.as_dict(),
            "since_cleaning": record.cleaning.as_dict(),
            "clean_roller": record.roller_needs_cleaning,
            "rule": {"jams_per_1000_fires": JAM_LIMIT_PER_1000, "over_fires": WINDOW_FIRES, "min_jams": HINT_JAMS},
        }

    def close(self) -> None:
        """Write what is pending, then stop. Safe to call twice."""
        if self._kept is not None:
            self._kept.close()
