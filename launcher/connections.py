"""waitress's server, guarded so that no party on the Wi-Fi can hold the connections a new phone needs.

waitress serves at most `connection_limit` connections and frees one only when it has been silent for
`channel_timeout`: a sender that trickles a byte now and then, a reader that takes an answer a kilobyte every few
seconds, or a guest's keep-alive connections held one each for ever. Here, on waitress's own loop thread and
before any of its threads is spent on a request, connections are counted per **party**: an IPv4 address, or an
IPv6 /64 (one device can hold a whole /64), as PIN guesses, streams and sessions are counted (`party()`). Each
connection is a `GuardedChannel` (launcher/channel.py, where the deadlines below are set).

- one party keeps at most `PER_ADDRESS` connections without a request being served (those hold a thread, and
  are bounded by the threads and the streams' gate), joined phones' and strangers' together, and one joined
  session at most `PER_SESSION`; a newcomer beyond either is never the one refused: the party's (or session's)
  first to go gives way, a waiting stranger's in the order below, else the idlest joined one between requests;
- a request whose headers and body have not all arrived `REQUEST_DEADLINE_S` after its first byte is cut off;
- an answer whose unsent output has not emptied `DRAIN_S` after it began is cut off, joined phone's or stranger's,
  an event stream too (which never ends, but keeps up with its reader; the page reconnects with Last-Event-ID);
- waitress's threads are handed out by launcher/turns.py: a share per party, turns fair across parties, and a
  connection's next request waits for its reader on no thread;
- strangers' connections that wait (a request still arriving, an answer still being read, idle after an answer,
  or silent since accepted) are at most `MOST_WAITING`, all parties together: beyond, the guard closes first the
  slow ones (sending a request, or reading an answer for `SLOW_DRAIN_S`), then the longest silent, then the
  longest idle; one new (silent for less than `FIRST_BYTES_S`, or its answer just begun) is spared, unless the
  server is full;
- the server never stops accepting: at `connection_limit` it closes a waiting stranger's connection to take the new
  one, else the idlest joined one of the party holding the most, so that a phone is never left in the backlog.

Never closed to make room: a connection with a request being served (a press under way, a stream). The application
tells the guard which connection is a joined phone's (`MARK_JOINED`, with the session) and which carries an event
stream (`MARK_STREAM`), through the request's WSGI environment: the guard reads no cookie itself.
"""

from __future__ import annotations

import socket
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from waitress.adjustments import Adjustments
from waitress.server import TcpWSGIServer

from launcher.channel import GuardedChannel, host_of, party
from launcher.clock import REAL_CLOCK, Clock
from launcher.turns import FairDispatcher

# One party's connections: a browser keeps at most 6 to one server, so ten phones behind one NAT (a family, a
# café's table) and the table's screen fit; one joined session is one browser, with room for a second tab's stream.
PER_ADDRESS = 64
PER_SESSION = 8
# Strangers' connections waiting, all parties together. A table's phones keep a few each, and joined ones are
# not counted; a thousand strangers' would also make each pass of waitress's loop slow (it polls every connection).
MOST_WAITING = 128
# Connections taken from the listening socket's backlog per pass of the loop. One a pass (waitress's way), with a
# thousand connections open, a pass costs milliseconds and the backlog stays full of strangers: a phone's connect
# then waits for the kernel's SYN retry, a second and more.
ACCEPTS_PER_PASS = 128


def _first_to_go(channels: Iterable[GuardedChannel], now: float) -> GuardedChannel | None:
    """Of `channels`, the one that gives way first: a waiting stranger's in its order, else the idlest of the
    joined session holding the most of them, between its requests."""
    listed = list(channels)
    waiting = [c for c in listed if c.waiting()]
    if waiting:
        return min(waiting, key=lambda c: c.order(now))
    held = Counter(c.session for c in listed)
    idle = [c for c in listed if c.between_requests()]
    return min(idle, key=lambda c: (-held[c.session], c.quiet_since)) if idle else None


class GuardedServer(TcpWSGIServer):  # type: ignore[misc]
    """waitress's TCP server with the checks above."""

    next_channel_cleanup: float = 0.0  # waitress's, typed

    def __init__(self, *args: Any, clock: Clock, **kwargs: Any) -> None:
        self.clock = clock
        super().__init__(*args, **kwargs)

    def readable(self) -> bool:
        """waitress's, but it never stops accepting: handle_accept makes room or refuses at once."""
        now = time.time()  # waitress's own schedule for its maintenance
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        return bool(self.accepting)

    def handle_accept(self) -> None:
        now = self.clock.now()
        parties = self._parties(now)
        for _ in range(ACCEPTS_PER_PASS):
            try:
                pair = self.accept()
            except OSError:  # out of file descriptors, or the peer gone already: the next pass tries again
                return
            if pair is None:  # the backlog is empty
                break
            conn, addr = pair
            mine = parties[party(host_of(addr))]
            held = [c for c in mine if not c.serving()]  # bounded by the threads, or the streams' gate
            if len(held) >= PER_ADDRESS and not self._give_way(held, parties, now):
                conn.close()
                continue
            if sum(map(len, parties.values())) >= self.adj.connection_limit and not self._make_room(parties, now):
                conn.close()
                continue
            try:
                self.set_socket_options(conn)
            except OSError:  # the peer hung up already
                conn.close()
                continue
            mine.append(GuardedChannel(self, conn, self.fix_addr(addr), self.adj, map=self._map))
        self._bound(now)

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # waitress's: idle beyond channel_timeout
        ours = self.clock.now()
        for channel in list(self.active_channels.values()):
            channel.watch(ours)
            if channel.overdue(ours):
                channel.cut()
        self._bound(ours)

    def _parties(self, now: float) -> defaultdict[str, list[GuardedChannel]]:
        parties: defaultdict[str, list[GuardedChannel]] = defaultdict(list)
        for channel in self.active_channels.values():
            channel.watch(now)
            if not channel.will_close:  # closing already
                parties[channel.party].append(channel)
        return parties

    def _give_way(self, channels: list[GuardedChannel], parties: dict[str, list[GuardedChannel]], now: float) -> bool:
        """Close the first of `channels` to go, if any may."""
        going = _first_to_go(channels, now)
        if going is None:
            return False
        going.cut()
        parties[going.party].remove(going)
        return True

    def _make_room(self, parties: dict[str, list[GuardedChannel]], now: float) -> bool:
        """At `connection_limit`: a waiting stranger's connection gives way, else the party holding the most's."""
        strangers = [c for held in parties.values() for c in held if c.waiting()]
        if self._give_way(strangers, parties, now):
            return True
        return any(self._give_way(held, parties, now) for held in sorted(parties.values(), key=len, reverse=True))

    def _bound(self, now: float) -> None:
        """Strangers' waiting connections at most MOST_WAITING; each joined session's at most PER_SESSION."""
        waiting = sorted((c for c in self.active_channels.values() if c.waiting()), key=lambda c: c.order(now))
        for channel in waiting[: max(0, len(waiting) - MOST_WAITING)]:
            if channel.order(now)[0] == 3:
                break  # the rest are newer still
            channel.cut()
        sessions: defaultdict[str, list[GuardedChannel]] = defaultdict(list)
        for channel in self.active_channels.values():
            if channel.session is not None and not channel.will_close:
                sessions[channel.session].append(channel)
        for held in sessions.values():
            idle = sorted((c for c in held if c.between_requests()), key=lambda c: c.quiet_since)
            for channel in idle[: max(0, len(held) - PER_SESSION)]:
                channel.cut()


def guarded_server(
    app: Any, sock: socket.socket, map: dict[int, Any], *, clock: Clock = REAL_CLOCK, **options: Any
) -> GuardedServer:
    """waitress.create_server for one listening socket, with the guard and launcher/turns.py's fair share of the
    threads. `options` are waitress's adjustments; its maintenance (the deadlines' check) runs every second."""
    adj = Adjustments(sockets=[sock], cleanup_interval=1, log_socket_errors=False, **options)
    sockinfo = (sock.family, sock.type, sock.proto, sock.getsockname())
    threads = FairDispatcher(adj.threads, adj.outbuf_high_watermark, clock)
    return GuardedServer(app, map, True, sock, threads, adj=adj, bind_socket=False, sockinfo=sockinfo, clock=clock)
