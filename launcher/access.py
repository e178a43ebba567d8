"""Who may act at the table: the table PIN, the admin PIN, the phones' sessions and a limit on PIN guesses.

Reading the table is open; acting needs a session joined with the table PIN (or the invite's token), and hardware
and admin settings need one joined with the admin PIN (docs/API.md: who may call what). PINs are made up on the
first run and kept only as salted PBKDF2 hashes, so the console shows them that once (under systemd, a file only
root reads: launcher/cli.py). The invite's link carries a random token instead of the PIN: it joins as the table
PIN does, needs no guess, and a new invite or a new table PIN revokes it. The PIN's digits stay in memory only for
a session that typed them (or the admin's that set them), to show under the invite's QR code. A first start
hashes the PINs on a thread of its own while the daemon already answers (PBKDF2 is slow on purpose: 1.4 billion
instructions for the two, see docs/BENCHMARKS.md), and a join meanwhile is checked against the PIN in memory.
Sessions are random tokens kept by their SHA-256: the phones hold the token in a cookie, the store holds the
digest, and this book holds the live ones in memory so that checking a press costs no disk read (one stat tells
whether `uno-launcher new-pins` ended some).
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import os
import secrets
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from launcher.clock import REAL_CLOCK, Clock, Event
from launcher.errors import LauncherError
from launcher.fair import PartyLock
from launcher.pin_guard import PinGuard as PinGuard  # where its users have always found it
from launcher.pin_guard import TooManyTries as TooManyTries
from launcher.store import Store, access_tables
from launcher.threads import JOIN_S, StoppableThread

# (fewest, most) digits of a PIN set now: with PinGuard's budget a 6-digit PIN takes months to guess, and the
# invite's link joins without typing it. A shorter table PIN set before still joins (OLDEST_TABLE_PIN_DIGITS) until
# it is changed, and the admin is asked to change it.
TABLE_PIN_DIGITS = (6, 8)
ADMIN_PIN_DIGITS = (6, 12)
OLDEST_TABLE_PIN_DIGITS = 4
MADE_UP_DIGITS = 6
SESSION_IDLE_S = 30 * 24 * 3600  # a phone not seen for a month joins again
SEEN_WRITE_EVERY_S = 3600  # how stale a session's last-seen time may be on disk
JOIN_TOKEN_BYTES = 16  # 128 random bits: never guessed, so a join with it needs no try of PinGuard's
# Beyond, the party (address, IPv6 /64) holding the most sessions gives one never used after its join, else its
# least recently used: memory stays bounded however often phones join, and a flood of joins ends its own sessions.
MOST_SESSIONS = 500
# Beside the store: replaced whenever a PIN changes, so that a running daemon notices `uno-launcher new-pins` from
# another process on its next lookup (one stat) and signs out the sessions that process ended.
PINS_CHANGED_FILE = "pins-changed"
# PBKDF2 rather than scrypt: scrypt's 16 MiB per check stayed in each thread's malloc arena (the daemon's RSS went
# from 39 to 90 MB), and for a PIN of 4 to 12 digits memory-hardness buys nothing. About 60 ms per check here.
PBKDF2_ITERATIONS = 100_000


class Role(enum.IntEnum):
    """What a session may do; each role may do everything the ones below it may."""

    NONE = 0
    TABLE = 1
    ADMIN = 2

    @property
    def label(self) -> str:
        return self.name.lower()


class PinError(LauncherError, ValueError):
    """A PIN of the wrong shape; the message says which shape is expected."""


@dataclass(frozen=True)
class NewPins:
    """PINs just made up: the only time they exist unhashed."""

    table: str | None  # None: it was set already (`uno-launcher new-pins` before the first start)
    admin: str | None


def check_pin_shape(role: Role, pin: object) -> str:
    """The PIN if it has the shape `role` takes (NONE: either role's), else PinError."""
    low, high = _pin_digits(role)
    if not isinstance(pin, str) or not pin.isascii() or not pin.isdigit() or not low <= len(pin) <= high:
        name = "a PIN" if role is Role.NONE else f"the {role.label} PIN"
        raise PinError(f"{name} must be a string of {low} to {high} digits, not {_shown(pin)}")
    return pin


def _pin_digits(role: Role) -> tuple[int, int]:
    if role is Role.NONE:  # a PIN typed to join: any set now or before
        return OLDEST_TABLE_PIN_DIGITS, ADMIN_PIN_DIGITS[1]
    return TABLE_PIN_DIGITS if role is Role.TABLE else ADMIN_PIN_DIGITS


def make_up_pin(role: Role) -> str:
    return "".join(secrets.choice("0123456789") for _ in range(max(MADE_UP_DIGITS, _pin_digits(role)[0])))


def _shown(value: object) -> str:
    """A bad value named without repeating a whole PIN-like secret back."""
    if isinstance(value, str):
        return f"{len(value)} digits" if value.isascii() and value.isdigit() else "that"
    return type(value).__name__


_HASHING = threading.Lock()  # one PIN check at a time: at most one core, however many phones send PINs at once


def _hash(pin: str, salt: bytes) -> bytes:
    with _HASHING:
        return hashlib.pbkdf2_hmac("sha256", pin.encode(), salt, PBKDF2_ITERATIONS)


# What a PIN is hashed against for a role not set yet (on a first start, while the made-up PINs are hashed): the
# same work as a real check, never a match.
_STAND_IN = (bytes(16), bytes(32))


def _checked(pin: str, stored: dict[str, tuple[bytes, bytes]], made: dict[Role, str]) -> Role:
    """The role `pin` opens against the stored hashes and the PINs made up but not saved yet: the same work for
    any PIN."""
    opens = Role.NONE
    for role in (Role.TABLE, Role.ADMIN):  # the admin's last: it wins, as it did first
        salt, digest = stored.get(role.label, _STAND_IN)
        hashed = hmac.compare_digest(_hash(pin, salt), digest) and role.label in stored
        remembered = hmac.compare_digest(made.get(role, "").encode(), pin.encode()) and role in made
        if hashed or remembered:
            opens = role
    return opens


@dataclass
class _Flight:
    """A PIN check under way that joins with the same PIN wait for."""

    done: Event
    role: Role | None = None  # None: not known (the check failed), so each waiter checks for itself


def session_digest(token: str) -> str:
    """A session token as the store and the budgets keep it: no live token is written anywhere."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class _Session:
    role: Role
    seen_ts: float
    table_pin: str | None = None  # the digits, only if this session typed them or set them: the invite shows them
    # Its last request, in memory (its join counts as one; a session read from the store was last used when seen),
    # and whether any came after the join (one read from the store: yes).
    used_ts: float = 0.0
    used_since_join: bool = True
    # Who opened it (launcher/connections.py's party), in memory; None for one read from the store.
    party: str | None = None


def _ending(sessions: dict[str, _Session], keep: str) -> str | None:
    """The session to end when there are too many: of the party holding the most sessions, one never used after
    its join, else the least recently used; never an admin's, nor `keep` (the one just opened). A session read from
    the store is a party of its own."""
    ending = {d: s for d, s in sessions.items() if s.role is not Role.ADMIN and d != keep}
    held = Counter(s.party or d for d, s in ending.items())

    def order(digest: str) -> tuple[int, bool, float]:
        session = ending[digest]
        return (-held[session.party or digest], session.used_since_join, session.used_ts)

    return min(ending, key=order) if ending else None


class AccessBook:
    """The PINs (hashed, in the store) and the sessions joined with them."""

    def __init__(self, store: Store, *, clock: Callable[[], float] = time.time, threads: Clock = REAL_CLOCK) -> None:
        self._store = store
        self._clock = clock
        self._threads = threads
        self._lock = threading.Lock()
        # PINs first_run made up whose hashes are not saved yet; the saver holds the lock while it saves, so a PIN
        # is always found here or in the store.
        self._made: dict[Role, str] = {}
        self._made_lock = threading.Lock()
        # PINs a join proved right, by a keyed digest (never the digits), with the stored hashes they matched.
        self._known_key = secrets.token_bytes(32)
        self._known: dict[bytes, tuple[object, Role]] = {}
        self._checking: dict[tuple[bytes, object], _Flight] = {}
        self._saver: StoppableThread | None = None
        self._pins_changed = store.path.with_name(PINS_CHANGED_FILE)
        # Held while a session is opened (memory, then disk) and while sessions are reread after a PIN change
        # elsewhere, so that a reread never drops a session opened meanwhile. Given party by party: a join's disk
        # sync is its slow part, and a new phone's must not wait behind a flood of joins from many addresses.
        self._opening = PartyLock(clock)
        self._pins_mark = self._pins_change_mark()
        with store.connect() as conn:
            access_tables.forget_sessions_seen_before(conn, clock() - SESSION_IDLE_S)
            rows = access_tables.sessions(conn)
        self._sessions = {digest: _Session(Role(role), seen, used_ts=seen) for digest, role, seen in rows}

    def first_run(self) -> NewPins | None:
        """Make up each PIN not set yet (both, on a first start) and return them at once, the only time they are
        known; None when both were set already. Their hashes are saved on the pin-hashing thread meanwhile."""
        with self._store.connect() as conn:
            stored = {role for role, _, _ in access_tables.pin_hashes(conn)}
        with self._made_lock:
            stored |= {role.label for role in self._made}  # made up by a first_run before, not saved yet
        made: dict[Role, str] = {}
        for role in (r for r in (Role.TABLE, Role.ADMIN) if r.label not in stored):
            pin = make_up_pin(role)
            # never the PIN of the other role, set before or made up now
            while pin in made.values() or (stored and self.role_for_pin(pin) is not Role.NONE):
                pin = make_up_pin(role)
            made[role] = pin
        if not made:
            return None
        if Role.TABLE in made:
            self.new_invite()  # the console's QR code carries it: known at once, unlike the PINs' hashes
        with self._made_lock:
            self._made = dict(made)
        self._saver = StoppableThread(self._save_made, "pin-hashing", clock=self._threads)
        self._saver.start()
        return NewPins(table=made.get(Role.TABLE), admin=made.get(Role.ADMIN))

    def _save_made(self) -> None:
        """On the pin-hashing thread: hash the PINs made up, then save them, unless the start failed meanwhile
        (`forget_unshown` stops it: nothing is saved) or a PIN was set meanwhile (the new one stays)."""
        assert self._saver is not None
        stopping = self._saver.stopping
        with self._made_lock:
            made = dict(self._made)
        hashed: dict[Role, tuple[bytes, bytes]] = {}
        for role, pin in made.items():  # hashlib lets go of the interpreter while it hashes: presses go on
            if stopping.is_set():
                return
            salt = secrets.token_bytes(16)
            hashed[role] = salt, _hash(pin, salt)
        with self._made_lock:
            if stopping.is_set():
                return
            with self._store.connect() as conn:
                stored = {role for role, _, _ in access_tables.pin_hashes(conn)}  # `new-pins` from another process
                for role, (salt, digest) in hashed.items():
                    if role in self._made and role.label not in stored:
                        self._save_hashed(conn, role, made[role], salt, digest)
            self._made.clear()

    def close(self) -> None:
        """Wait for the PINs made up on this start to be saved (two hashes at most), so that the PINs shown stay
        the table's; only a start that dies before (a kill, a power cut) leaves them unsaved, and the next start
        makes up new ones and shows them."""
        if self._saver is not None and not self._saver.join(JOIN_S):
            self._saver.stop()  # a hash stuck that long: give up, logged

    def forget_unshown(self, made: NewPins | None) -> None:
        """Forget PINs `first_run` made that nobody was shown (the start failed after): the next start makes new
        ones and shows them, instead of leaving a table nobody can join without `new-pins`."""
        if made is None:
            return
        if self._saver is not None:
            self._saver.stop()  # nothing is saved after this (a hash under way ends first)
        roles = [role for role, pin in ((Role.TABLE, made.table), (Role.ADMIN, made.admin)) if pin is not None]
        with self._made_lock:
            for role in roles:
                self._made.pop(role, None)
        with self._store.connect() as conn:
            access_tables.forget_pin_hashes(conn, [role.label for role in roles])
            if Role.TABLE in roles:
                access_tables.forget_join_token(conn)

    def set_pin(self, role: Role, pin: str, *, keep: str | None = None) -> None:
        """Change one PIN and sign out the sessions it opened, except the token `keep` (the one changing it)."""
        check_pin_shape(role, pin)
        if self.role_for_pin(pin) not in (Role.NONE, role):
            raise PinError("the table PIN and the admin PIN must differ")
        with self._made_lock:  # the PIN made up for this role, if not saved yet, is neither saved nor taken now
            self._made.pop(role, None)
        self._save_pin(role, pin)
        kept = session_digest(keep) if keep else None
        with self._lock:
            ended = [d for d, s in self._sessions.items() if s.role is role and d != kept]
            for digest in ended:
                del self._sessions[digest]
            if role is Role.TABLE:
                for session in self._sessions.values():
                    session.table_pin = None
                if kept in self._sessions:
                    self._sessions[kept].table_pin = pin  # the admin who set it may show it under the invite
        with self._store.connect() as conn:
            access_tables.end_sessions_of(conn, role.value, keep=kept)  # a running daemon's too (another process)
        if role is Role.TABLE:
            self.new_invite()  # the old link joined with the old PIN's rights: it goes with it
        self._mark_pins_changed()

    def _mark_pins_changed(self) -> None:
        """Tell a daemon running on this store (perhaps this one) that sessions ended: a new file takes the name,
        so its identity changes even within the file system's time resolution."""
        draft = self._pins_changed.with_name(f".{PINS_CHANGED_FILE}-{os.getpid()}")
        draft.write_bytes(b"")
        with self._opening.turn(""):  # the house's turn, as any party's
            os.replace(draft, self._pins_changed)
            self._pins_mark = self._pins_change_mark()  # this book knows already

    def _pins_change_mark(self) -> tuple[int, int] | None:
        try:
            seen = os.stat(self._pins_changed)
        except FileNotFoundError:
            return None
        return seen.st_ino, seen.st_mtime_ns

    def _follow_pin_changes(self) -> None:
        """After a PIN change (here or by `uno-launcher new-pins`), keep only the sessions the store still has."""
        mark = self._pins_change_mark()
        if mark == self._pins_mark:
            return
        with self._opening.turn(""):
            self._pins_mark = mark
            with self._store.connect() as conn:
                kept = {digest for digest, _, _ in access_tables.sessions(conn)}
            with self._lock:
                for digest in [d for d in self._sessions if d not in kept]:
                    del self._sessions[digest]
                for session in self._sessions.values():
                    session.table_pin = None  # perhaps no longer the table's

    def _save_pin(self, role: Role, pin: str) -> None:
        salt = secrets.token_bytes(16)
        with self._store.connect() as conn:
            self._save_hashed(conn, role, pin, salt, _hash(pin, salt))

    def _save_hashed(self, conn: sqlite3.Connection, role: Role, pin: str, salt: bytes, digest: bytes) -> None:
        access_tables.save_pin_hash(conn, role.label, salt, digest, self._clock(), len(pin))

    def new_invite(self) -> str:
        """A new token for the invite's link; the one before no longer joins."""
        token = secrets.token_urlsafe(JOIN_TOKEN_BYTES)
        with self._store.connect() as conn:
            access_tables.save_join_token(conn, token, self._clock())
        return token

    def invite_token(self) -> str:
        """The token the invite's link carries (made now if there is none: a store from before the token)."""
        with self._store.connect() as conn:
            made = secrets.token_urlsafe(JOIN_TOKEN_BYTES)
            access_tables.save_join_token(conn, made, self._clock(), only_if_none=True)
            token = access_tables.join_token(conn)
        return token or made

    def role_for_token(self, token: str) -> Role:
        """TABLE for the invite's token, else NONE. Costs no hash: 128 random bits need no guessing limit."""
        with self._store.connect() as conn:
            current = access_tables.join_token(conn)
        if current is not None and hmac.compare_digest(current.encode(), token.encode()):
            return Role.TABLE
        return Role.NONE

    def table_pin_too_short(self) -> bool:
        """The table PIN was set before PINs had TABLE_PIN_DIGITS at least: the admin is asked to change it."""
        with self._store.connect() as conn:
            digits = access_tables.pin_digits(conn, Role.TABLE.label)
        return digits is not None and digits < TABLE_PIN_DIGITS[0]

    def table_pin_shown_to(self, token: str | None) -> str | None:
        """The table PIN's digits if this session typed them (or its admin set them), else None."""
        if not token:
            return None
        with self._lock:
            session = self._sessions.get(session_digest(token))
            return None if session is None else session.table_pin

    def role_for_pin(self, pin: str, *, remember: bool = False) -> Role:
        """The role a PIN opens (admin first), or NONE. Always the same work, whatever the PIN: one hash per role,
        a stand-in's for a role not set, every comparison made, so that no answer comes sooner for one PIN than
        another. Costs two hashes: limit guesses before. `remember` (a join only, whose answer tells right from
        wrong anyway): a PIN found right before, under the same stored hashes, costs none, and joins with the same
        PIN at once share one check, so that a guest's joins with the right PIN from many addresses cannot keep the
        cores hashing (found by the red team: 64 addresses' first joins at once hashed 128 times in a row)."""
        with self._made_lock:  # read before the store: a PIN saved in between is found there
            made = dict(self._made)
        with self._store.connect() as conn:
            stored = {name: (salt, digest) for name, salt, digest in access_tables.pin_hashes(conn)}
        if not remember:
            return _checked(pin, stored, made)
        hashes = tuple(sorted(stored.items()))
        tag = hmac.new(self._known_key, pin.encode(), "sha256").digest()
        with self._made_lock:
            known = self._known.get(tag)
            if known is not None and known[0] == hashes:
                return known[1]
            flight = self._checking.get((tag, hashes))
            leading = flight is None
            if flight is None:
                flight = self._checking[(tag, hashes)] = _Flight(self._threads.event())
        if not leading:
            flight.done.wait()
            return flight.role if flight.role is not None else _checked(pin, stored, made)
        try:
            flight.role = _checked(pin, stored, made)
        finally:
            with self._made_lock:
                del self._checking[(tag, hashes)]
                if flight.role not in (None, Role.NONE):
                    if len(self._known) >= 16:  # a table has two PINs: bounded whatever joins
                        self._known.clear()
                    self._known[tag] = (hashes, flight.role)
            flight.done.set()
        return flight.role

    def open_session(
        self, role: Role, *, replacing: str | None = None, table_pin: str | None = None, party: str | None = None
    ) -> str:
        """A new session token for `role`, opened by `party` (launcher/connections.py's); the session `replacing`
        (the phone's old one) ends, and beyond MOST_SESSIONS the ones `_ending` picks: the flooding party's own,
        never the admin's nor the new one. `table_pin`: the digits it typed, kept in memory to show under the
        invite."""
        token = secrets.token_urlsafe(32)
        digest = session_digest(token)
        now = self._clock()
        old = session_digest(replacing) if replacing else None
        ended = [old] if old is not None else []
        with self._opening.turn(party or ""):
            with self._lock:
                self._sessions.pop(old or "", None)
                self._sessions[digest] = _Session(role, now, table_pin, now, used_since_join=False, party=party)
                while len(self._sessions) > MOST_SESSIONS and (ending := _ending(self._sessions, digest)):
                    del self._sessions[ending]
                    ended.append(ending)
            with self._store.connect() as conn:
                access_tables.open_session(conn, digest, role.value, now, ended=ended)
        return token

    def role_of(self, token: str | None) -> Role:
        """The role of a session token; NONE for no token, an unknown one, or one idle too long. No disk read but
        a stat, unless a PIN changed."""
        if not token:
            return Role.NONE
        self._follow_pin_changes()
        now = self._clock()
        with self._lock:
            session = self._sessions.get(session_digest(token))
            if session is None or now - session.seen_ts > SESSION_IDLE_S:
                return Role.NONE
            session.used_ts = now
            session.used_since_join = True
            return session.role

    def seen(self, token: str | None) -> None:
        """The phone is back: its session's idle time starts again (written to disk at most hourly)."""
        if not token:
            return
        digest = session_digest(token)
        now = self._clock()
        with self._lock:
            session = self._sessions.get(digest)
            if session is None or now - session.seen_ts < SEEN_WRITE_EVERY_S:
                return
            session.seen_ts = now
        with self._store.connect() as conn:
            access_tables.session_seen(conn, digest, now)

    def close_session(self, token: str | None) -> None:
        if not token:
            return
        digest = session_digest(token)
        with self._lock:
            self._sessions.pop(digest, None)
        with self._store.connect() as conn:
            access_tables.end_sessions(conn, [digest])
