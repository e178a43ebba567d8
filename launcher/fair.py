"""Fair turns across parties (launcher/channel.py's `party()`): whoever has been served least of late goes first.

A flood from many addresses keeps a queue full; first come, first served, a new phone then waits behind one of
every flooder's requests. Here each party's service of late is counted, decaying over `MEMORY_S`, and the least
served goes first (the longest unserved among equals): a party never seen goes before every flooder, and flooders
take turns. `Usage` is the count; `PartyLock` a lock handed out in that order (the sessions' writes, whose disk
sync makes them the join's slow part: launcher/access.py); launcher/turns.py hands waitress's threads out by it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# How fast a party's past service is forgotten: a minute's flood still weighs a little after a minute.
MEMORY_S = 30.0
# Parties remembered at most (those served least of late are forgotten first: they would go first anyway).
PARTIES_KEPT = 1024


class Usage:
    """How much each party was served of late. Not thread-safe: its owner's lock guards it."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._served: dict[str, tuple[float, float]] = {}  # party: (weight, when)

    def first(self, parties: list[str]) -> str:
        """Of `parties`, the one to serve next: the least served of late, the longest unserved among equals."""
        now = self._clock()
        return min(parties, key=lambda p: self._weight(p, now))

    def served(self, party: str) -> None:
        now = self._clock()
        self._served[party] = (self._weight(party, now)[0] + 1.0, now)
        if len(self._served) > PARTIES_KEPT:
            del self._served[min(self._served, key=lambda p: self._weight(p, now))]

    def _weight(self, party: str, now: float) -> tuple[float, float]:
        weight, when = self._served.get(party, (0.0, -math.inf))
        return (weight * math.exp(-(now - when) / MEMORY_S) if weight else 0.0, when)


class PartyLock:
    """A lock whose waiters get it party by party, in `Usage`'s order (each party's own waiters first come, first
    served), so a new phone waits for at most the holder, whatever a flood from many addresses has waiting."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._usage = Usage(clock)
        self._changed = threading.Condition()
        self._held = False
        self._waiting: list[tuple[str, int]] = []  # (party, ticket), in arrival order
        self._tickets = 0

    @contextmanager
    def turn(self, party: str) -> Iterator[None]:
        with self._changed:
            self._tickets += 1
            mine = (party, self._tickets)
            self._waiting.append(mine)
            while self._held or self._next() != mine:
                self._changed.wait()
            self._waiting.remove(mine)
            self._held = True
            self._usage.served(party)
        try:
            yield
        finally:
            with self._changed:
                self._held = False
                self._changed.notify_all()

    @property
    def waiting(self) -> int:
        """Waiters for the lock now."""
        with self._changed:
            return len(self._waiting)

    def _next(self) -> tuple[str, int]:
        party = self._usage.first(list(dict.fromkeys(p for p, _ in self._waiting)))
        return next(w for w in self._waiting if w[0] == party)
