"""`PinGuard`: how many PINs may be checked, for the whole network and for each client (launcher/access.py checks
them; webui/session_api.py asks first)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from launcher.errors import LauncherError


class TooManyTries(LauncherError, RuntimeError):
    """Too many wrong PINs, from this client or from everyone; `retry_after_s` says when a try is taken again."""

    def __init__(self, retry_after_s: int, *, everyone: bool = False) -> None:
        who = "on this network" if everyone else "from this device"
        super().__init__(f"too many wrong PINs {who}; try again in {retry_after_s} s")
        self.retry_after_s = retry_after_s
        self.everyone = everyone


@dataclass
class _Tries:
    wrong: int = 0
    wait_until: float = 0.0


class PinGuard:
    """Limits PIN guesses, per client and for all clients together.

    For everyone: a budget of `BUDGET` tries that refills at `BUDGET_PER_HOUR`, which every PIN checked without a
    person asking spends, so that any number of addresses (one device can hold a whole IPv6 /64, a home /24 has
    254) check at most that many PINs an hour. A made-up 6-digit table PIN then takes on average 10**6 / 2 / 240
    hours, about 87 days, to find. Per client, besides: a few free tries, then a wait that doubles with each wrong
    one. The household never needs a try: a joined phone has its session, and while the budget is spent a PIN
    waits for a person at the table to let it in (launcher/doorbell.py); on the Pi, `uno-launcher new-pins` needs
    none at all.

    A try counts as wrong from the moment it is taken, so a burst of guesses in parallel cannot slip past the
    count; a right PIN forgives the client and gives its try back to the budget. A waiting client is never
    forgotten to make room: once the table is full of waiting clients, a new one waits too.
    """

    FREE_TRIES = 5
    FIRST_WAIT_S = 30
    LONGEST_WAIT_S = 15 * 60
    CLIENTS_KEPT = 4096  # bounded memory, whatever addresses guess
    BUDGET = 100
    BUDGET_PER_HOUR = 240

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._clients: OrderedDict[str, _Tries] = OrderedDict()
        self._budget = float(self.BUDGET)
        self._budget_at = clock()

    def take(self, client: str) -> int:
        """Take one try for `client` from the network's budget: how many are left after it if it is wrong, or
        TooManyTries (then nothing is taken)."""
        now = self._clock()
        with self._lock:
            tries = self._tries_of(client, now)
            if now < tries.wait_until:
                raise TooManyTries(_seconds(tries.wait_until - now))
            self._refill(now)
            if self._budget < 1:
                raise TooManyTries(_seconds((1 - self._budget) * 3600 / self.BUDGET_PER_HOUR), everyone=True)
            self._budget -= 1
            tries.wrong += 1
            over = tries.wrong - self.FREE_TRIES
            if over >= 0:
                tries.wait_until = now + min(self.LONGEST_WAIT_S, self.FIRST_WAIT_S * 2**over)
            return max(0, -over)

    def wait_after(self, client: str) -> int:
        """Seconds `client` must wait before its next try (0: none)."""
        with self._lock:
            tries = self._clients.get(client)
        return 0 if tries is None else max(0, _seconds(tries.wait_until - self._clock()))

    def forgive(self, client: str, *, refund: bool = True) -> None:
        """`client` proved the right PIN: its wrong tries are forgotten, and (`refund`) its try goes back to the
        budget; not for a PIN a person let in (launcher/doorbell.py), which took no try."""
        with self._lock:
            if self._clients.pop(client, None) is not None and refund:
                self._budget = min(float(self.BUDGET), self._budget + 1)

    def _refill(self, now: float) -> None:
        self._budget = min(float(self.BUDGET), self._budget + (now - self._budget_at) * self.BUDGET_PER_HOUR / 3600)
        self._budget_at = now

    def _tries_of(self, client: str, now: float) -> _Tries:
        """With the lock held: the client's record, made the newest; the oldest client not waiting makes room."""
        tries = self._clients.pop(client, None)
        if tries is None:
            tries = _Tries()
            if len(self._clients) >= self.CLIENTS_KEPT:
                idle = next((c for c, t in self._clients.items() if t.wait_until <= now), None)
                if idle is None:  # every one of them waits: so does the newcomer, unrecorded
                    raise TooManyTries(self.FIRST_WAIT_S, everyone=True)
                del self._clients[idle]
        self._clients[client] = tries
        return tries


def _seconds(s: float) -> int:
    """A wait as whole seconds, never 0 while there is any wait left."""
    return max(1, round(s + 0.5))
