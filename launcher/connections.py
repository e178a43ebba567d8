"""waitress's server, guarded so that no party on the Wi-Fi can hold the connections a new phone needs.

waitress serves at most `connection_limit` connections and frees one only when it has been silent for
`channel_timeout`: a sender that trickles a byte now and then, a reader that takes an answer a kilobyte every few
seconds, or a guest's keep-alive connections held one each for ever. Here, on waitress's own loop thread and
before any of its threads is spent on a request, connections are counted per **party**: an IPv4 address, or an
IPv6 /64 (one device can hold a whole /64), as PIN guesses, streams and sessions are counted (`party()`).

- one party keeps at most `PER_ADDRESS` connections without a request being served (those hold a thread, and
  are bounded by the threads and the streams' gate), joined phones' and strangers' together, and one joined
  session at most `PER_SESSION`; a newcomer beyond either is never the one refused: the party's (or session's)
  first to go gives way, a waiting stranger's in the order below, else the idlest joined one between requests;
- a request whose headers and body have not all arrived `REQUEST_DEADLINE_S` after its first byte is cut off;
- an answer whose unsent output has not emptied `DRAIN_S` after it began is cut off: a stranger's answer, or anyone's
  event stream (which never ends, but keeps up with its reader; the page reconnects with Last-Event-ID);
- strangers' connections that wait (a request still arriving, an answer still being read, idle after an answer,
  or silent since accepted) are at most `MOST_WAITING`, all parties together: beyond, the guard closes first the
  slow ones (sending a request, or reading an answer for `SLOW_DRAIN_S`), then the longest silent, then the
  longest idle; one new (silent for less than `FIRST_BYTES_S`, or its answer just begun) is spared, unless the
  server is full;
- the server never stops accepting: at `connection_limit` it closes a waiting stranger's connection to take the new
  one, else the idlest joined one of the party holding the most, so that a phone is never left in the backlog.

Never closed to make room: a connection with a request being served (a press under way, a stream). The application
tells the guard which connection is a joined phone's (`MARK_JOINED`, with the session) and which carries an event
stream (`MARK_STREAM`), through the request's WSGI environment: the guard reads no cookie itself. A peer's socket
error is one debug line, never a traceback.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import socket
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask, WSGITask

from launcher.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

# One party's connections: a browser keeps at most 6 to one server, so ten phones behind one NAT (a family, a
# café's table) and the table's screen fit; one joined session is one browser, with room for a second tab's stream.
PER_ADDRESS = 64
PER_SESSION = 8
# From a request's first byte to its last: a request is at most 64 KiB (launcher/bodies.py), which a phone on a
# poor Wi-Fi sends in well under a second, and a 2G link in a few.
REQUEST_DEADLINE_S = 10.0
# From an answer's first unsent byte to its last: the page (about 70 KB) at 7 KB/s, a poor 2G link's speed.
DRAIN_S = 10.0
# An answer unsent this long puts its stranger's connection among the slow ones the group bound closes first.
SLOW_DRAIN_S = 2.0
# Strangers' connections waiting, all parties together. A table's phones keep a few each, and joined ones are
# not counted; a thousand strangers' would also make each pass of waitress's loop slow (it polls every connection).
MOST_WAITING = 128
# A new connection's first bytes are read on the loop's next pass: until then it cannot be told from a silent one.
FIRST_BYTES_S = 1.0
# Connections taken from the listening socket's backlog per pass of the loop. One a pass (waitress's way), with a
# thousand connections open, a pass costs milliseconds and the backlog stays full of strangers: a phone's connect
# then waits for the kernel's SYN retry, a second and more.
ACCEPTS_PER_PASS = 128
# The WSGI environment's keys for callables that mark the request's connection a joined phone's (given the
# session's digest) and one carrying an event stream.
MARK_JOINED = "launcher.connection.mark_joined"
MARK_STREAM = "launcher.connection.mark_stream"


def party(address: str) -> str:
    """Whom a connection, a stream, a session or a PIN guess counts against: the address, or for IPv6 its /64,
    which one device can fill with addresses of its own (an IPv4-mapped one as the IPv4 address)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # without a link-local address's zone
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ip.ipv4_mapped) if ip.ipv4_mapped else str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class _Task(WSGITask):  # type: ignore[misc]  # waitress has no type hints
    def get_environment(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environment()
        environ[MARK_JOINED] = self.channel.mark_joined
        environ[MARK_STREAM] = self.channel.mark_stream
        return environ


class _ErrorTask(ErrorTask):  # type: ignore[misc]
    """waitress's own refusals (a request too large, a bad request line) in the API's error shape (docs/API.md)."""

    def execute(self) -> None:
        error = self.request.error
        code = error.reason.lower().replace(" ", "_")  # e.g. request_entity_too_large
        body = json.dumps({"error": {"code": code, "message": str(error.body)}}).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class GuardedChannel(HTTPChannel):  # type: ignore[misc]
    """A connection that knows its party, when it was accepted, when the request now arriving began, since when
    its answer is unsent, and whether a joined phone or an event stream uses it."""

    task_class = _Task
    error_task_class = _ErrorTask
    request_started: float | None = None  # None: no request is arriving
    sending_since: float | None = None  # None: nothing left to send
    spoke = False  # any byte received
    session: str | None = None  # the joined phone's, once a request on it carried one
    stream = False
    lost = False  # the peer's socket error was logged

    def __init__(self, server: GuardedServer, sock: socket.socket, addr: Any, adj: Adjustments, map: Any) -> None:
        self.clock = server.clock
        self.party = party(_host(addr))
        self.accepted = self.quiet_since = server.clock.now()
        super().__init__(server, sock, addr, adj, map=map)

    def mark_joined(self, session: str) -> None:
        """Called from a request's thread; plain attributes the loop thread reads."""
        self.session = session

    def mark_stream(self) -> None:
        self.stream = True

    def received(self, data: bytes) -> bool:
        arriving = self.request
        taken: bool = super().received(data)
        now = self.clock.now()
        self.spoke = self.spoke or bool(data)
        self.quiet_since = now
        if self.request is None:  # every byte so far made whole requests
            self.request_started = None
        elif self.request is not arriving:  # a new request began in these bytes
            self.request_started = now
        return taken

    def send(self, data: bytes, do_close: bool = True) -> int:
        try:
            sent: int = super().send(data, do_close)
        except OSError as e:  # wasyncore lets through what it does not know as a hang-up: a timeout, a reset
            self._lost(e)
            if do_close:
                self.handle_close()
            return 0
        return sent

    def recv(self, buffer_size: int) -> bytes:
        try:
            data: bytes = super().recv(buffer_size)
        except OSError as e:
            self._lost(e)
            self.handle_close()
            return b""
        return data

    def cut(self) -> None:
        """Close it from the guard. Shut down now, but closed (its descriptor freed) when the loop next polls it:
        a descriptor closed in the middle of a pass of the loop may be reused by a connection accepted in the same
        pass, which would then be handed the old one's events and closed with it."""
        self.will_close = True
        self.connected = False  # a request's thread writing to it stops (waitress's ClientDisconnected)
        with contextlib.suppress(OSError):
            self.socket.shutdown(socket.SHUT_RDWR)

    def _lost(self, error: OSError) -> None:
        if not self.lost:
            self.lost = True
            log.debug("connection from %s lost: %s", self.party, error)

    def watch(self, now: float) -> None:
        """Note since when its answer is unsent (on the loop thread, at each look)."""
        if not self.total_outbufs_len:
            self.sending_since = None
        elif self.sending_since is None:
            self.sending_since = now

    def overdue(self, now: float) -> bool:
        """A request not whole by its deadline, or a stranger's answer or a stream not sent by its own."""
        if self.request_started is not None and not self.requests:
            return now - self.request_started >= REQUEST_DEADLINE_S
        late = self.sending_since is not None and now - self.sending_since >= DRAIN_S
        return late and (self.stream or self.session is None)

    def waiting(self) -> bool:
        """A stranger's connection the guard may close: no request of it being served."""
        return self.session is None and not self.requests and self.connected and not self.will_close

    def between_requests(self) -> bool:
        """A joined phone's connection that may give way: nothing arriving, served or left to send."""
        idle = not (self.requests or self.total_outbufs_len or self.request_started is not None or self.will_close)
        return self.session is not None and self.connected and idle

    def order(self, now: float) -> tuple[int, float]:
        """Which waiting connection goes first (the smallest): slow senders and readers, silent ones, idle ones
        after an answer (a phone's between its requests), new ones; the oldest first in each."""
        if self.request_started is not None:
            return (0, self.request_started)
        if self.sending_since is not None:
            return (0 if now - self.sending_since >= SLOW_DRAIN_S else 3, self.sending_since)
        if self.spoke:
            return (2, self.quiet_since)
        return (1 if now - self.accepted >= FIRST_BYTES_S else 3, self.accepted)


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
            mine = parties[party(_host(addr))]
            held = [c for c in mine if not c.requests]  # a request served holds a thread: bounded by the threads
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


def _host(addr: Any) -> str:
    return str(addr[0] if isinstance(addr, tuple) else addr)


def guarded_server(
    app: Any, sock: socket.socket, map: dict[int, Any], *, clock: Clock = REAL_CLOCK, **options: Any
) -> GuardedServer:
    """waitress.create_server for one listening socket, with the guard. `options` are waitress's adjustments;
    its maintenance (the deadlines' check) runs every second."""
    adj = Adjustments(sockets=[sock], cleanup_interval=1, log_socket_errors=False, **options)
    sockinfo = (sock.family, sock.type, sock.proto, sock.getsockname())
    return GuardedServer(app, map, True, sock, adj=adj, bind_socket=False, sockinfo=sockinfo, clock=clock)
