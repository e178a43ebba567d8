"""waitress's server, guarded against a stranger on the Wi-Fi who opens connections and never finishes a request.

waitress serves at most `connection_limit` connections and frees one only when it has been silent for
`channel_timeout`; a sender that trickles a byte now and then held one for ever, and 770 of them from one address
stopped every new phone. Here, on waitress's own loop thread and before any of its threads is spent on a request:

- one address keeps at most `PER_ADDRESS` strangers' connections (a joined phone's does not count: a household
  behind one address may have many): the next ones are closed as they are accepted;
- a request whose headers and body have not all arrived `REQUEST_DEADLINE_S` after its first byte is cut off;
- strangers' connections that wait (a request still arriving, idle after an answer, or silent since accepted) are
  at most `MOST_WAITING`, all addresses together: beyond, the guard closes first the slowest senders, then the
  longest silent, then the longest idle; a connection silent since it was accepted less than `FIRST_BYTES_S` ago
  is spared (its first bytes may not have been read yet), unless the server is full;
- the server never stops accepting: at `connection_limit` it closes a waiting stranger's connection to take the new
  one, or, with none, refuses the new one at once, so that a phone is never left in the kernel's backlog.

Never closed by the group bound: a connection with a request being served or an answer still being sent (an event
stream, a press under way), and a joined phone's connection, once a request on it carried a known session (the
application tells, through `MARK_JOINED` in the request's WSGI environment: the guard reads no cookie itself).
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import TcpWSGIServer
from waitress.task import WSGITask

from launcher.clock import REAL_CLOCK, Clock

PER_ADDRESS = 32  # a browser opens at most 6 to a server; a household behind one address a few dozen at most
# From a request's first byte to its last: a request is at most 64 KiB (launcher/bodies.py), which a phone on a
# poor Wi-Fi sends in well under a second, and a 2G link in a few.
REQUEST_DEADLINE_S = 10.0
# Strangers' connections waiting, all addresses together. A table's phones keep a few each, and joined ones are
# not counted; a thousand strangers' would also make each pass of waitress's loop slow (it polls every connection).
MOST_WAITING = 128
# A new connection's first bytes are read on the loop's next pass: until then it cannot be told from a silent one.
FIRST_BYTES_S = 1.0
# Connections taken from the listening socket's backlog per pass of the loop. One a pass (waitress's way), with a
# thousand connections open, a pass costs milliseconds and the backlog stays full of strangers: a phone's connect
# then waits for the kernel's SYN retry, a second and more.
ACCEPTS_PER_PASS = 128
# The WSGI environment's key for a callable that marks the request's connection as a joined phone's.
MARK_JOINED = "launcher.connection.mark_joined"


class _Task(WSGITask):  # type: ignore[misc]  # waitress has no type hints
    def get_environment(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environment()
        environ[MARK_JOINED] = self.channel.mark_joined
        return environ


class GuardedChannel(HTTPChannel):  # type: ignore[misc]
    """A connection that knows when it was accepted, when the request now arriving began, and whether a joined
    phone uses it."""

    task_class = _Task
    request_started: float | None = None  # None: no request is arriving
    spoke = False  # any byte received
    joined = False

    def __init__(self, server: GuardedServer, sock: socket.socket, addr: Any, adj: Adjustments, map: Any) -> None:
        self.clock = server.clock
        self.accepted = self.quiet_since = server.clock.now()
        super().__init__(server, sock, addr, adj, map=map)

    def mark_joined(self) -> None:
        """Called from a request's thread; a plain flag the loop thread reads."""
        self.joined = True

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

    def waiting(self) -> bool:
        """A stranger's connection the guard may close: no request served on it, no answer left to send."""
        return not (
            self.joined
            or self.requests
            or self.total_outbufs_len
            or self.will_close
            or self.close_when_flushed
            or not self.connected
        )

    def order(self, now: float) -> tuple[int, float]:
        """Which waiting connection goes first (the smallest): slow senders, silent ones, idle ones after an
        answer (a phone's between its requests), new ones; the oldest first in each."""
        if self.request_started is not None:
            return (0, self.request_started)
        if self.spoke:
            return (2, self.quiet_since)
        return (1 if now - self.accepted >= FIRST_BYTES_S else 3, self.accepted)


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
        channels: list[GuardedChannel] = list(self.active_channels.values())
        per_address = Counter(_host(c.addr) for c in channels if not c.joined)
        for _ in range(ACCEPTS_PER_PASS):
            try:
                pair = self.accept()
            except OSError:  # out of file descriptors, or the peer gone already: the next pass tries again
                return
            if pair is None:  # the backlog is empty
                break
            conn, addr = pair
            host = _host(addr)
            if per_address[host] >= PER_ADDRESS or not self._room_for_one():
                conn.close()
                continue
            try:
                self.set_socket_options(conn)
            except OSError:  # the peer hung up already
                conn.close()
                continue
            GuardedChannel(self, conn, self.fix_addr(addr), self.adj, map=self._map)
            per_address[host] += 1
        self._bound_strangers()

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # waitress's: idle beyond channel_timeout
        cutoff = self.clock.now() - REQUEST_DEADLINE_S
        for channel in list(self.active_channels.values()):
            if channel.request_started is not None and channel.request_started < cutoff and not channel.requests:
                channel.handle_close()
        self._bound_strangers()

    def _waiting(self) -> list[GuardedChannel]:
        now = self.clock.now()
        waiting = [c for c in self.active_channels.values() if c.waiting()]
        return sorted(waiting, key=lambda c: c.order(now))

    def _bound_strangers(self) -> None:
        now = self.clock.now()
        waiting = self._waiting()
        for channel in waiting[: max(0, len(waiting) - MOST_WAITING)]:
            if channel.order(now)[0] == 3:
                return  # the rest are newer still
            channel.handle_close()

    def _room_for_one(self) -> bool:
        """Below `connection_limit`, or made so by closing the waiting stranger that goes first."""
        if len(self.active_channels) < self.adj.connection_limit:
            return True
        waiting = self._waiting()
        if not waiting:
            return False
        waiting[0].handle_close()
        return True


def _host(addr: Any) -> object:
    return addr[0] if isinstance(addr, tuple) else addr


def guarded_server(
    app: Any, sock: socket.socket, map: dict[int, Any], *, clock: Clock = REAL_CLOCK, **options: Any
) -> GuardedServer:
    """waitress.create_server for one listening socket, with the guard. `options` are waitress's adjustments;
    its maintenance (the deadline's check) runs every second."""
    adj = Adjustments(sockets=[sock], cleanup_interval=1, **options)
    sockinfo = (sock.family, sock.type, sock.proto, sock.getsockname())
    return GuardedServer(app, map, True, sock, adj=adj, bind_socket=False, sockinfo=sockinfo, clock=clock)
