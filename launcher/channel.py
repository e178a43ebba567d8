"""One connection as launcher/connections.py's guard sees it: waitress's channel, which knows its party, when it
was accepted, when the request now arriving began, since when its answer is unsent, and whether a joined phone or an
event stream uses it; and waitress's own refusals in the API's JSON shape. A peer's socket error is one debug line,
never a traceback (waitress logged one for each, 767 in 45 s of a slow-read flood)."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import socket
import time
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.task import ErrorTask, WSGITask

log = logging.getLogger(__name__)

# From a request's first byte to its last: a request is at most 64 KiB (launcher/bodies.py), which a phone on a
# poor Wi-Fi sends in well under a second, and a 2G link in a few.
REQUEST_DEADLINE_S = 10.0
# From an answer's first unsent byte to its last: the page (about 70 KB) at 7 KB/s, a poor 2G link's speed.
DRAIN_S = 10.0
# An answer unsent this long puts its stranger's connection among the slow ones the group bound closes first.
SLOW_DRAIN_S = 2.0
# A new connection's first bytes are read on the loop's next pass: until then it cannot be told from a silent one.
FIRST_BYTES_S = 1.0
# The WSGI environment's keys for callables that mark the request's connection a joined phone's (given the
# session's digest) and one carrying an event stream.
MARK_JOINED = "launcher.connection.mark_joined"
MARK_STREAM = "launcher.connection.mark_stream"
# The key for the callable that hands the request's connection to the streams' writer (webui/stream_hub.py): once
# the application's answer has ended, the connection stays open, its answer unfinished, written from that thread.
HAND_OVER = "launcher.connection.hand_over"


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


class _Answered:
    """A task that tells its channel when its answer is all handed to waitress (`GuardedChannel.answered`)."""

    channel: GuardedChannel

    def service(self) -> None:
        try:
            super().service()  # type: ignore[misc]  # waitress's Task, after this in the bases
        finally:
            self.channel.answered = True


class _Task(_Answered, WSGITask):  # type: ignore[misc]  # waitress has no type hints
    def get_environment(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environment()
        environ[MARK_JOINED] = self.channel.mark_joined
        environ[MARK_STREAM] = self.channel.mark_stream
        environ[HAND_OVER] = self.channel.hand_over
        return environ

    def build_response_header(self) -> bytes:
        head: bytes = super().build_response_header()
        self.channel.chunked = self.chunked_response  # how a stream handed over goes on (HTTP/1.1: in chunks)
        return head

    def finish(self) -> None:
        if self.channel.handed_over:  # the answer goes on from the streams' writer: no last chunk, no close
            self.close_on_finish = False
            return
        super().finish()


class _ErrorTask(_Answered, ErrorTask):  # type: ignore[misc]
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
    chunked = False  # the last answer's body is sent in chunks
    handed_over = False  # an event stream written from the streams' writer, its request over (see HAND_OVER)
    lost = False  # the peer's socket error was logged
    answered = False  # the request being served has handed waitress its whole answer

    def __init__(self, server: Any, sock: socket.socket, addr: Any, adj: Adjustments, map: Any) -> None:
        """`server`: launcher/connections.py's, whose clock it keeps."""
        self.clock = server.clock
        self.party = party(host_of(addr))
        self.accepted = self.quiet_since = server.clock.now()
        super().__init__(server, sock, addr, adj, map=map)

    def mark_joined(self, session: str) -> None:
        """Called from a request's thread; plain attributes the loop thread reads."""
        self.session = session

    def mark_stream(self) -> None:
        self.stream = True
        self.server.task_dispatcher.streaming(self)

    def service(self) -> None:
        """Serve the first request on a thread of waitress's (launcher/turns.py hands the thread out)."""
        self.answered = False
        try:
            super().service()
        finally:
            self.server.task_dispatcher.done(self)

    def _flush_outbufs_below_high_watermark(self) -> None:
        """waitress's wait for the reader to take its answers, before the next of a connection's requests: not
        on a thread of ours (the queue keeps the next request until the reader has room), only within an answer."""
        if not self.answered:
            super()._flush_outbufs_below_high_watermark()

    def handle_write(self) -> None:
        if self.handed_over:
            with self.outbuf_lock:  # waitress flushes unlocked when no request runs; the streams' writer appends
                super().handle_write()
            return
        over = self.total_outbufs_len > self.adj.outbuf_high_watermark
        super().handle_write()
        if over and self.requests and self.total_outbufs_len <= self.adj.outbuf_high_watermark:
            self.server.task_dispatcher.ready()  # its next request may be served now

    def hand_over(self) -> GuardedChannel:
        """Called from the stream's request thread as its answer's last step: the streams' writer writes on from
        its own thread (`stream_open`, `write_stream`, `end_stream`)."""
        self.handed_over = True
        return self

    def stream_open(self) -> bool:
        """Whether a handed-over stream may still be written; an open one is kept from waitress's idle timeout (its
        request is over, its answer is not)."""
        if not self.connected or self.will_close or self.close_when_flushed:
            return False
        self.last_activity = time.time()  # waitress's own clock for its idle timeout
        return True

    def write_stream(self, data: bytes) -> bool:
        """Send `data`, queueing what the socket does not take; False if the connection is gone. Never waits while
        `total_outbufs_len` is below the high watermark, which the writer checks first."""
        with self.outbuf_lock:  # the loop thread flushes under it too (handle_write)
            if self.connected and not self.total_outbufs_len:  # nothing queued: straight to the socket, in order
                try:
                    data = data[self.socket.send(data) :]
                except BlockingIOError:
                    pass
                except OSError as e:
                    self._lost(e)
                    return False
                if not data:
                    return True
            try:
                self.write_soon(data)
            except ClientDisconnected:
                return False
        return True

    def end_stream(self) -> None:
        """Close a handed-over stream once what it was sent has left (on the loop thread, woken now)."""
        self.close_when_flushed = True
        self.server.pull_trigger()

    def received(self, data: bytes) -> bool:
        if self.handed_over:  # a stream's answer never ends: bytes after its request are no client's, nor read on
            if data:
                self.cut()
            return True
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
        self.server.task_dispatcher.ready()  # a request of it waiting for its reader is served now, and ends

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
        """A request not whole by its deadline, or an answer not read by its own (anyone's: a joined guest's
        answers left unread would hold their party's share of the threads for good)."""
        if self.request_started is not None and not self.requests:
            return now - self.request_started >= REQUEST_DEADLINE_S
        return self.sending_since is not None and now - self.sending_since >= DRAIN_S

    def waiting(self) -> bool:
        """A stranger's connection the guard may close: no request of it being served."""
        return self.session is None and not self.serving() and self.connected and not self.will_close

    def serving(self) -> bool:
        """A request being served, or an event stream being written: the connection holds its place."""
        return bool(self.requests) or self.handed_over

    def between_requests(self) -> bool:
        """A joined phone's connection that may give way: nothing arriving, served or left to send."""
        idle = not (self.serving() or self.total_outbufs_len or self.request_started is not None or self.will_close)
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


def host_of(addr: Any) -> str:
    """The host of a socket address (a tuple for TCP)."""
    return str(addr[0] if isinstance(addr, tuple) else addr)
