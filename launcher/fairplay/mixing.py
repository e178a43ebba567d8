"""The phones' part in one shuffle's key: commit, then reveal (docs/FAIRNESS.md, "Commit, then reveal").

`Mixing` goes through three phases, never back:
- `committing` from the shuffle's start: each joined phone sends the SHA-256 of 16 random bytes of its own;
- `revealing` once the first press closes the commitments (the daemon publishes them all): each phone sends its
  bytes, which must match its commitment; no new commitment is taken;
- `fixed` once every commitment is revealed, or REVEAL_S after the commitments closed: the key mixes what was
  revealed, and a commitment never revealed counts by itself (launcher/fairplay/sealing.py). A first press with no
  commitment at all fixes the key at once: there is nothing to wait for. With a public beacon (`binder`), the
  commitments closing also bind a drand round (launcher/fairplay/beacon_wait.py), and the key waits for it too, even
  with no
  commitment at all.

It holds no lock of the controller's and does no I/O: the caller publishes what it returns. Its own lock is held for
a few list operations.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from launcher.clock import Clock
from launcher.errors import LauncherError
from launcher.fairplay.beacon import BeaconRound
from launcher.fairplay.beacon_wait import PendingBeacon
from launcher.fairplay.fairness import MAX_CONTRIBUTIONS
from launcher.fairplay.sealing import Contribution, commitment_of
from launcher.refusals import Refusal

REVEAL_S = 5.0  # how long reveals stay open after the commitments close, unless all came sooner
COMMITTING, REVEALING, FIXED = "committing", "revealing", "fixed"


class ContributionRefused(LauncherError, RuntimeError):
    """A commitment or reveal the shuffle does not take: `reason` says why, `details` its parameters, for the page to
    word (docs/API.md); the message is the English words, for logs."""

    def __init__(self, reason: Refusal, message: str, **details: int) -> None:
        super().__init__(message)
        self.reason = reason
        self.details = details


@dataclass
class Mixing:
    """The commitments and reveals of shuffle `number`, and the phase they are in."""

    number: int
    clock: Clock
    contributions: list[Contribution] = field(default_factory=list)  # in the order committed
    phase: str = COMMITTING
    sealed_at: float | None = None  # the clock's time when the commitments closed
    binder: Callable[[], PendingBeacon] | None = None  # binds (and starts waiting for) a drand round, when on
    beacon: PendingBeacon | None = None  # the round bound when the commitments closed
    # Held by whoever changes the phase and publishes it (ShuffleBook), so the events come in the order of the changes.
    changing: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _senders: dict[str, int] = field(default_factory=dict, repr=False)  # session -> its index (memory only)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _fixed: threading.Condition = field(init=False, repr=False)  # notified when the last reveal fixes the key

    def __post_init__(self) -> None:
        self._fixed = self.clock.condition(self._lock)

    def commit(self, commitment: str, sender: str) -> tuple[int, int, bool]:
        """Take a phone's commitment from `sender` (its session): (its index, the number of commitments now, whether
        it is new). The same commitment again from the same session (a page shown again, an answer lost) is answered
        as the first time and changes nothing; any other second one is refused."""
        number = self.number
        with self._lock:
            if self.phase != COMMITTING:
                raise ContributionRefused(
                    Refusal.CONTRIBUTIONS_CLOSED,
                    f"shuffle {number}'s commitments closed at its first press: the shuffle was fixed without yours "
                    "(you can still check it when it ends)",
                    shuffle=number,
                )
            index = self._senders.get(sender)
            if index is not None and self.contributions[index].commitment == commitment:
                return index, len(self.contributions), False
            if index is not None or any(c.commitment == commitment for c in self.contributions):
                raise ContributionRefused(
                    Refusal.ALREADY_CONTRIBUTED,
                    f"this phone has already added its randomness to shuffle {number}",
                    shuffle=number,
                )
            if len(self.contributions) >= MAX_CONTRIBUTIONS:
                raise ContributionRefused(
                    Refusal.CONTRIBUTIONS_FULL,
                    f"shuffle {number} already has {MAX_CONTRIBUTIONS} contributions, the most a shuffle takes",
                    shuffle=number,
                    max=MAX_CONTRIBUTIONS,
                )
            self.contributions.append(Contribution(commitment))
            self._senders[sender] = len(self.contributions) - 1
            return len(self.contributions) - 1, len(self.contributions), True

    def reveal(self, value: str) -> tuple[int, bool]:
        """Take a phone's bytes for its commitment: (the commitment's index, whether every commitment is now
        revealed: then the caller fixes the key, `fix()`). The same bytes again are answered the same."""
        number = self.number
        with self._lock:
            index = next((i for i, c in enumerate(self.contributions) if c.commitment == commitment_of(value)), None)
            if index is None:
                raise ContributionRefused(
                    Refusal.REVEAL_MISMATCH,
                    f"these bytes match no commitment of shuffle {number}: their SHA-256 was not committed",
                    shuffle=number,
                )
            if self.contributions[index].value == value:
                return index, self._due()
            if self.phase == COMMITTING:
                raise ContributionRefused(
                    Refusal.REVEAL_EARLY,
                    f"shuffle {number} still takes commitments: its bytes are revealed once they close",
                    shuffle=number,
                )
            if self.phase == FIXED:
                raise ContributionRefused(
                    Refusal.REVEALS_CLOSED,
                    f"shuffle {number}'s key was fixed before these bytes came: it counts their commitment alone",
                    shuffle=number,
                )
            self.contributions[index] = replace(self.contributions[index], value=value)
            return index, self._due()

    def press(self) -> tuple[str | None, str | None]:
        """A press wants to draw: (what changed: "sealed", "due" (the caller fixes the key, `fix()`) or None; why
        the press must wait, or None once the key is fixed or due). The first press closes the commitments (and
        binds the beacon's round); once all are revealed, or one REVEAL_S later, and the round is settled, the key
        is due with what came."""
        with self._lock:
            changed = None
            if self.phase == COMMITTING:
                if not self.contributions and self.binder is None:
                    self.phase = FIXED  # nobody committed: nothing to wait for, nothing to tell
                    return None, None
                self.phase, self.sealed_at, changed = REVEALING, self.clock.now(), "sealed"
                if self.binder is not None:
                    self.beacon = self.binder()
            if self.phase == REVEALING:
                if not self._due():
                    waited = "the phones are revealing their randomness"
                    if self._revealed():
                        waited = f"the launcher waits for drand round {self.beacon.round if self.beacon else 0}"
                    return changed, f"{waited} for shuffle {self.number}: press again in a moment"
                return "due", None
            return changed, None

    def due(self) -> bool:
        """The phones have revealed (or their time is over) and the beacon's round, if any, is settled."""
        with self._lock:
            return self.phase == REVEALING and self._due()

    def beacon_round(self) -> BeaconRound | None:
        """The bound round as settled, or without a signature while (or because) it was not had; None: no beacon."""
        with self._lock:
            if self.beacon is None:
                return None
            return self.beacon.settled or BeaconRound(self.beacon.round)

    def _revealed(self) -> bool:
        return self._complete() or self.clock.now() >= (self.sealed_at or 0.0) + REVEAL_S

    def _due(self) -> bool:
        return self._revealed() and (self.beacon is None or self.beacon.settled is not None)

    def fix(self) -> None:
        """The key is fixed (the caller has keyed the schedule with what was revealed): nothing more is taken."""
        with self._lock:
            self.phase = FIXED
            self._fixed.notify_all()

    def wait_fixed(self) -> None:
        """Wait, holding nothing else, until the key is fixed, or the reveal window (and the beacon's wait) is over."""
        with self._fixed:
            while self.phase == REVEALING and (left := self._last_wait() - self.clock.now()) > 0:
                self._fixed.wait(left)

    def _last_wait(self) -> float:
        window = (self.sealed_at or 0.0) + REVEAL_S
        # The beacon's thread settles by its deadline, or once its last round of relays has answered or timed out.
        return window if self.beacon is None else max(window, self.beacon.deadline + self.beacon.last_try_s)

    def _complete(self) -> bool:
        return all(c.value is not None for c in self.contributions)

    def close(self) -> None:
        """The shuffle ends (perhaps before any press): nothing more is taken, nor waited for."""
        self.fix()
        if self.beacon is not None:
            self.beacon.cancel()

    @property
    def fixed(self) -> bool:
        return self.phase == FIXED

    def withheld(self) -> list[int]:
        """The 1-based places of commitments not revealed."""
        with self._lock:
            return [place for place, c in enumerate(self.contributions, 1) if c.value is None]

    def commitments(self) -> list[str]:
        with self._lock:
            return [c.commitment for c in self.contributions]

    def view(self) -> dict[str, object]:
        """What everyone may see of it while the shuffle is played (GET /api/state)."""
        with self._lock:
            shown: dict[str, object] = {
                "phase": self.phase,
                "commitments": [c.commitment for c in self.contributions],
                "revealed": [c.value for c in self.contributions],
                "contributions_open": self.phase == COMMITTING,
                "contributions_max": MAX_CONTRIBUTIONS,
            }
            if self.beacon is not None:  # a phone that missed shuffle.sealed checks the record against it too
                shown["beacon_round"] = self.beacon.round
            return shown
