"""Who may follow the table live: `StreamGate` admits event streams (at most `StreamGate.MOST`, strangers a quarter,
a joined phone always one), each a `StreamTicket` that can be told to give way (webui/stream.py serves them,
webui/stream_hub.py writes them)."""

from __future__ import annotations

import threading
from collections.abc import Callable


class StreamTicket:
    """One admitted stream: its party (address, or IPv6 /64) and its session (None: not joined); `given_way` is
    set when a joined phone took its place (the stream then ends)."""

    def __init__(self, party: str, session: str | None) -> None:
        self.party = party
        self.session = session
        self.given_way = threading.Event()  # the web server's threads keep real time


class StreamGate:
    """Admits event streams, at most `most`; `count` is how many phones follow right now.

    A joined phone always gets a stream: beyond its session's PER_SESSION its own oldest gives way, and when every
    place is taken, a stranger's oldest, else the oldest of the session holding the most within the party holding
    the most. So no party, however many sessions it joined from however many addresses, keeps out the next
    phone's own one."""

    PER_SESSION = 4  # a phone with a few tabs open
    PER_ADDRESS = 2  # not joined: a watching phone, or a stranger on the Wi-Fi
    # An audience of 500 phones and the table's screens; below the server's 768 connections (launcher/daemon.py),
    # so that a quarter of them stay for presses, state reads and joins.
    MOST = 512

    def __init__(self, most: int = MOST) -> None:
        self.most = most
        self.most_strangers = max(2, self.most // 4)
        self._lock = threading.Lock()
        self._open: list[StreamTicket] = []  # the oldest first
        self.count = 0

    def admit(self, party: str, session: str | None) -> StreamTicket | None:
        """A ticket for a new stream from `party` (joined with `session`, or not), or None when there is no room."""
        with self._lock:
            if session is not None:
                mine = [t for t in self._open if t.session == session]
                taken = mine[0] if len(mine) >= self.PER_SESSION else self._place_to_take()
                if taken is None and self.count >= self.most:
                    return None  # no place at all (a server of four threads keeps them all for presses)
                if taken is not None:
                    self._give_way(taken)
            elif self.count >= self.most or not self._room_for_stranger(party):
                return None
            ticket = StreamTicket(party, session)
            self._open.append(ticket)
            self.count += 1
            return ticket

    def leave(self, ticket: StreamTicket) -> None:
        with self._lock:
            if not ticket.given_way.is_set():
                self._drop(ticket)

    def _room_for_stranger(self, party: str) -> bool:
        strangers = [t for t in self._open if t.session is None]
        return len(strangers) < self.most_strangers and sum(t.party == party for t in strangers) < self.PER_ADDRESS

    def _place_to_take(self) -> StreamTicket | None:
        """With the lock held: None while a place is free; else a stranger's oldest stream, else the oldest of the
        session holding the most streams within the party holding the most."""
        if self.count < self.most or not self._open:
            return None
        strangers = [t for t in self._open if t.session is None]
        if strangers:
            return strangers[0]
        widest = _most_held(self._open, lambda t: t.party)
        return _most_held(widest, lambda t: t.session or "")[0]

    def _give_way(self, ticket: StreamTicket) -> None:
        """With the lock held: `ticket`'s place is free now; its stream ends within stream_hub.PASS_S."""
        self._drop(ticket)
        ticket.given_way.set()

    def _drop(self, ticket: StreamTicket) -> None:
        self._open.remove(ticket)
        self.count -= 1


def _most_held(tickets: list[StreamTicket], holder: Callable[[StreamTicket], str]) -> list[StreamTicket]:
    """The tickets of the holder with the most of `tickets` (of equals, the one with the oldest), the oldest first."""
    held: dict[str, list[StreamTicket]] = {}
    for ticket in tickets:  # the oldest first, so a holder's first ticket is its oldest
        held.setdefault(holder(ticket), []).append(ticket)
    return max(held.values(), key=len)  # max keeps the first of equals: the one whose oldest is oldest
