"""The second way in while the network's PIN-guessing budget is spent: the launcher's big button, as a Hue bridge's
link button.

A phone that types a PIN while every try waits (`PinGuard`'s budget is spent by someone guessing) gets a waiting
ticket whatever it typed, so the answer tells nothing about the PIN. Only a ticket whose PIN was right (checked
once, within that phone's own limit of tries) can be let in: a press on the launcher's own button within `WAIT_S`
of its wait admits every such phone, and the phone's next look at its ticket joins it. Someone at the table has to
press, so a guess from the Wi-Fi learns nothing until then, and a stranger's wrong PIN never takes the button over:
while no right PIN waits, a press is a game press as always.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from launcher.access import JOIN_TOKEN_BYTES, Role
from launcher.clock import REAL_CLOCK, Clock
from launcher.errors import LauncherError

WAIT_S = 30.0  # a phone waits this long for the press; the page shows it counting down
MOST_WAITING = 256  # tickets kept (one per client, the newest): bounded memory whatever the Wi-Fi sends


class WaitOver(LauncherError, LookupError):
    """A ticket not let in within WAIT_S (or never given): the phone types its PIN again."""


@dataclass(frozen=True)
class Admitted:
    """A phone the button let in: the role its PIN opens, the digits for its invite (table PIN only), its client."""

    role: Role
    table_pin: str | None
    client: str


@dataclass
class _Waiting:
    client: str
    since: float
    role: Role  # NONE: a wrong PIN, which waits alike and is never let in
    table_pin: str | None
    admitted: bool = False


class Doorbell:
    """The phones waiting for a press on the launcher's button, and the press that lets them in."""

    def __init__(self, *, clock: Clock = REAL_CLOCK) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._tickets: OrderedDict[str, _Waiting] = OrderedDict()
        # Told when a right PIN starts waiting, outside the lock: the controller takes back the board's arm, so that
        # the next press comes to the host and can be a doorbell's.
        self.on_waiting: Callable[[], None] | None = None

    def wait(self, client: str, role: Role, table_pin: str | None) -> str:
        """A ticket for a phone whose PIN opens `role` (NONE: none); the client's ticket before is dropped."""
        ticket = secrets.token_urlsafe(JOIN_TOKEN_BYTES)
        now = self._clock.now()
        with self._lock:
            self._forget_over(now)
            for old in [t for t, w in self._tickets.items() if w.client == client]:
                del self._tickets[old]
            while len(self._tickets) >= MOST_WAITING:
                self._tickets.popitem(last=False)
            self._tickets[ticket] = _Waiting(client, now, role, table_pin if role is Role.TABLE else None)
        if role is not Role.NONE and self.on_waiting is not None:
            self.on_waiting()
        return ticket

    def waiting(self) -> bool:
        """A right PIN waits for a press now: the button lets it in rather than playing."""
        now = self._clock.now()
        with self._lock:
            return any(self._open(w, now) for w in self._tickets.values())

    def ring(self) -> int:
        """The launcher's button was pressed: let in every right PIN waiting; how many (0: a game press)."""
        now = self._clock.now()
        with self._lock:
            let_in = [w for w in self._tickets.values() if self._open(w, now)]
            for waiting in let_in:
                waiting.admitted = True
        return len(let_in)

    def collect(self, ticket: str) -> tuple[Admitted | None, float]:
        """For the phone holding `ticket`: (who joins, 0) once let in (the ticket is then spent), else (None, the
        seconds it may still wait). WaitOver when its time is up, or for a ticket never given."""
        now = self._clock.now()
        with self._lock:
            self._forget_over(now)
            waiting = self._tickets.get(ticket)
            if waiting is None:
                raise WaitOver("no press on the launcher's button came in time: type the PIN again")
            if not waiting.admitted:
                return None, max(0.0, waiting.since + WAIT_S - now)
            del self._tickets[ticket]
            return Admitted(waiting.role, waiting.table_pin, waiting.client), 0.0

    @staticmethod
    def _open(waiting: _Waiting, now: float) -> bool:
        return waiting.role is not Role.NONE and not waiting.admitted and now - waiting.since <= WAIT_S

    def _forget_over(self, now: float) -> None:
        """With the lock held: drop tickets whose wait is over (a phone let in keeps its ticket as long again to
        collect it)."""
        for ticket in [
            t
            for t, w in self._tickets.items()
            if now - w.since > 2 * WAIT_S or (now - w.since > WAIT_S and not w.admitted)
        ]:
            del self._tickets[ticket]
