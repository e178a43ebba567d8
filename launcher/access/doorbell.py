"""The way in while a PIN cannot be checked: the network's guessing budget is spent, or this phone must wait.

Such a PIN is not checked, not hashed, not even looked at: it waits, with a ticket for the phone that typed it and
a short code the phone shows big. Whatever the PIN, the answer, its timing and everything else anyone can observe
(the state, the events, the board's arm) are the same, so a guess from the Wi-Fi learns nothing. A person at the
table then lets it in, which is the proof that the budget stands for:

- a joined phone types the code the waiting phone shows (`let_in`): that one PIN is checked then, once, and opens
  at most what the letting phone's own session opens (a guest's phone cannot find the admin PIN this way);
- the launcher's big button held for a few seconds (launcher/access/doorbell_hold.py, `check_newest`): the newest
  waiting PINs are checked, a bounded number per hold.

A checked PIN opens its role (the waiting phone joins on its next look) or is told wrong (it may type it again).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from launcher.access.book import JOIN_TOKEN_BYTES, Role
from launcher.clock import REAL_CLOCK, Clock
from launcher.errors import LauncherError

WAIT_S = 120.0  # a phone waits this long to be let in; its page counts it down
MOST_WAITING = 256  # tickets kept (one per address, the newest): bounded memory whatever the Wi-Fi sends
CHECKED_PER_HOLD = 8  # PINs one hold of the button checks, the newest first: the hashing a hold costs is bounded
# The code a waiting phone shows, to be read out and typed on another phone: no 0/O, 1/I/L, 2/Z, 5/S, 6/G, 8/B.
CODE_ALPHABET = "ACDEFHJKMNPRTUVWXY3479"
CODE_LENGTH = 4


class WaitOver(LauncherError, LookupError):
    """A ticket not let in within WAIT_S (or never given): the phone types its PIN again."""


class NoSuchCode(LauncherError, LookupError):
    """No phone waits with that code (never shown, let in already, or its wait is over)."""


class PinWasWrong(LauncherError, ValueError):
    """The waiting PIN was checked when a person let it in, and opens nothing."""


@dataclass(frozen=True)
class Ticket:
    """What a waiting phone is given: the ticket it looks with, the code it shows."""

    ticket: str
    code: str


@dataclass(frozen=True)
class Admitted:
    """A phone let in: the role its PIN opens, the digits for its invite (table PIN only), its client."""

    role: Role
    table_pin: str | None
    client: str


@dataclass(frozen=True)
class Still:
    """A phone not let in yet: the code it shows, the seconds it may still wait."""

    code: str
    left_s: float


@dataclass
class _Waiting:
    client: str  # whom its PIN's tries are counted against (PinGuard)
    address: str  # the phone's own: one ticket each
    code: str
    pin: str
    since: float
    taken: bool = False  # a person let it in: it is checked (once), or being checked
    verdict: Role | None = None  # once checked: the role it opens, NONE when wrong

    def open(self, now: float) -> bool:
        return not self.taken and now - self.since <= WAIT_S


class Doorbell:
    """The PINs waiting for a person at the table, and the two ways that person lets them in.

    `check` is the PIN check (AccessBook.role_for_pin): it is called only when a person lets a PIN in, never when
    it starts waiting, and outside the lock (it hashes)."""

    def __init__(self, *, check: Callable[[str], Role], clock: Clock = REAL_CLOCK) -> None:
        self._check = check
        self._clock = clock
        self._lock = threading.Lock()
        self._tickets: OrderedDict[str, _Waiting] = OrderedDict()  # the oldest first

    def wait(self, client: str, pin: str, *, address: str | None = None) -> Ticket:
        """A ticket for `pin`, which is kept unchecked; the ticket before from the same `address` (the phone's own,
        by default `client`) is dropped. Not the client's: for IPv6 that is a whole /64, every phone of a home,
        and a stranger's guess must not drop a family phone's ticket."""
        address = address or client
        ticket = secrets.token_urlsafe(JOIN_TOKEN_BYTES)
        now = self._clock.now()
        with self._lock:
            self._forget_over(now)
            for old in [t for t, w in self._tickets.items() if w.address == address]:
                del self._tickets[old]
            while len(self._tickets) >= MOST_WAITING:
                self._tickets.popitem(last=False)
            taken = {w.code for w in self._tickets.values()}
            code = _new_code()
            while code in taken:
                code = _new_code()
            self._tickets[ticket] = _Waiting(client, address, code, pin, now)
        return Ticket(ticket, code)

    def let_in(self, code: str, *, most: Role) -> Role:
        """A joined phone whose session opens `most` typed `code`: that PIN is checked now, and the role it opens
        returned (NONE: wrong; a PIN that opens more than `most` counts as wrong, so a guest learns nothing of the
        admin PIN). NoSuchCode when no phone waits with it."""
        now = self._clock.now()
        with self._lock:
            self._forget_over(now)
            waiting = next((w for w in self._tickets.values() if w.code == code.upper() and w.open(now)), None)
            if waiting is None:
                raise NoSuchCode(f"no phone waits with the code {code[:CODE_LENGTH]!r}: check the code it shows")
            waiting.taken = True  # checked once, whatever happens next
        role = self._check(waiting.pin)
        opens = role if role <= most else Role.NONE
        with self._lock:
            waiting.verdict = opens
        return opens

    def check_newest(self) -> int:
        """The launcher's button was held: check the newest CHECKED_PER_HOLD waiting PINs; how many were right."""
        now = self._clock.now()
        with self._lock:
            newest = [w for w in reversed(self._tickets.values()) if w.open(now)][:CHECKED_PER_HOLD]
            for waiting in newest:
                waiting.taken = True
        verdicts = [(waiting, self._check(waiting.pin)) for waiting in newest]
        with self._lock:
            for waiting, role in verdicts:
                waiting.verdict = role
        return sum(role is not Role.NONE for _, role in verdicts)

    def collect(self, ticket: str) -> Admitted | Still:
        """For the phone holding `ticket`: who joins once let in (the ticket is then spent), else how it still
        waits. PinWasWrong once a person let it in and the PIN was wrong; WaitOver when its time is up, or for a
        ticket never given."""
        now = self._clock.now()
        with self._lock:
            self._forget_over(now)
            waiting = self._tickets.get(ticket)
            if waiting is None:
                raise WaitOver("nobody let this phone in in time: type the PIN again")
            if waiting.verdict is None:
                return Still(waiting.code, max(0.0, waiting.since + WAIT_S - now))  # not let in, or being checked
            del self._tickets[ticket]
        if waiting.verdict is Role.NONE:
            raise PinWasWrong("the PIN was wrong: type it again")
        table_pin = waiting.pin if waiting.verdict is Role.TABLE else None
        return Admitted(waiting.verdict, table_pin, waiting.client)

    def _forget_over(self, now: float) -> None:
        """With the lock held: drop tickets whose wait is over (one checked is kept as long again, to be
        collected)."""
        for ticket in [
            t
            for t, w in self._tickets.items()
            if now - w.since > 2 * WAIT_S or (now - w.since > WAIT_S and not w.taken)
        ]:
            del self._tickets[ticket]


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
