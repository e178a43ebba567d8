"""The alternative measured by bench_streams.py: every event stream served by ONE thread over non-blocking sockets.

Standard library only (`selectors`). GET /api/events opens a stream, chunked as waitress sends it, with a comment at
once and a heartbeat comment every --heartbeat-s seconds; POST /api/press broadcasts a `button.pressed` event shaped
as the daemon's (`id`, `ts`, `type`, `data`); GET /api/state answers the number of open streams. It checks no
session and keeps no log. A stream more than OUTBUF_MOST bytes behind is dropped, as waitress bounds its buffer.
Prints its URL, then serves until killed.

    python benchmarks/one_thread_sse_server.py [--heartbeat-s 15]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import selectors
import socket
import sys
import time
from typing import Any

HEAD_MOST = 16 * 1024  # a request head larger than this is refused
OUTBUF_MOST = 256 * 1024  # the daemon's outbuf_high_watermark
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    b"Transfer-Encoding: chunked\r\n\r\n"
)


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


class Connection:
    __slots__ = ("closed", "closing", "inbuf", "outbuf", "sock", "streaming")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.inbuf = b""
        self.outbuf = b""
        self.streaming = False
        self.closing = False  # close once what is queued is sent (the client asked for `Connection: close`)
        self.closed = False


class Server:
    def __init__(self, heartbeat_s: float) -> None:
        self.heartbeat_s = heartbeat_s
        self.selector = selectors.DefaultSelector()
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.listener.setblocking(False)
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.streams: set[Connection] = set()
        self.ids = itertools.count(1)
        self.presses = itertools.count(1)
        self.last_id = 0

    @property
    def port(self) -> int:
        return self.listener.getsockname()[1]

    def serve(self) -> None:
        next_beat = time.monotonic() + self.heartbeat_s
        while True:
            for key, mask in self.selector.select(max(0.0, next_beat - time.monotonic())):
                if key.data is None:
                    self._accept()
                    continue
                conn: Connection = key.data
                if mask & selectors.EVENT_WRITE and not conn.closed:
                    self._flush(conn)
                if mask & selectors.EVENT_READ and not conn.closed:
                    self._read(conn)
            if time.monotonic() >= next_beat:
                self._broadcast(chunk(b": heartbeat\n\n"))
                next_beat = time.monotonic() + self.heartbeat_s

    def _accept(self) -> None:
        for _ in range(64):  # what the backlog holds, a batch at a time
            try:
                sock, _ = self.listener.accept()
            except BlockingIOError:
                return
            sock.setblocking(False)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.selector.register(sock, selectors.EVENT_READ, Connection(sock))

    def _read(self, conn: Connection) -> None:
        try:
            data = conn.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._close(conn)
            return
        if conn.streaming:
            return  # a stream's client has nothing more to say
        conn.inbuf += data
        while not conn.streaming and not conn.closed and (end := conn.inbuf.find(b"\r\n\r\n")) >= 0:
            head = conn.inbuf[:end].decode("latin-1").split("\r\n")
            headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:])}
            length = int(headers.get("content-length") or 0)
            if len(conn.inbuf) < end + 4 + length:
                return  # the body is still coming
            conn.inbuf = conn.inbuf[end + 4 + length :]
            conn.closing = headers.get("connection", "").lower() == "close"
            method, path = [*head[0].split(), "", ""][:2]
            self._answer(conn, method, path.split("?", 1)[0])
        if len(conn.inbuf) > HEAD_MOST:
            self._close(conn)

    def _answer(self, conn: Connection, method: str, path: str) -> None:
        if method == "GET" and path == "/api/events":
            conn.streaming, conn.closing = True, False
            self.streams.add(conn)
            self._send(conn, STREAM_HEAD + chunk(b": connected\n\n"))
        elif method == "POST" and path == "/api/press":
            press = next(self.presses)
            self.last_id = next(self.ids)
            data = {"press": press, "source": "web"}
            event = {"id": self.last_id, "ts": time.time(), "type": "button.pressed", "data": data}
            text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
            self._broadcast(chunk(f"id: {self.last_id}\ndata: {text}\n\n".encode()))
            self._json(conn, 200, {"press": press})
        elif method == "GET" and path == "/api/state":
            self._json(conn, 200, {"last_event_id": self.last_id, "connection": {"sse_clients": len(self.streams)}})
        else:
            self._json(conn, 404, {"error": {"code": "not_found"}})

    def _json(self, conn: Connection, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        close = b"Connection: close\r\n" if conn.closing else b""
        reason = b"OK" if status == 200 else b"Not Found"
        head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n"
        self._send(conn, head % (status, reason, len(data), close) + data)

    def _broadcast(self, frame: bytes) -> None:
        for conn in list(self.streams):
            self._send(conn, frame)

    def _send(self, conn: Connection, data: bytes) -> None:
        if conn.outbuf:
            conn.outbuf += data
        else:
            try:
                sent = conn.sock.send(data)
            except BlockingIOError:
                sent = 0
            except OSError:
                self._close(conn)
                return
            conn.outbuf = data[sent:]
            if conn.outbuf:
                self.selector.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
        if len(conn.outbuf) > OUTBUF_MOST:
            self._close(conn)  # a phone this far behind is gone; it reconnects
        elif not conn.outbuf and conn.closing:
            self._close(conn)

    def _flush(self, conn: Connection) -> None:
        try:
            sent = conn.sock.send(conn.outbuf)
        except BlockingIOError:
            return
        except OSError:
            self._close(conn)
            return
        conn.outbuf = conn.outbuf[sent:]
        if not conn.outbuf:
            if conn.closing:
                self._close(conn)
            else:
                self.selector.modify(conn.sock, selectors.EVENT_READ, conn)

    def _close(self, conn: Connection) -> None:
        if conn.closed:
            return
        conn.closed = True
        self.streams.discard(conn)
        self.selector.unregister(conn.sock)
        conn.sock.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heartbeat-s", type=float, default=15.0)
    args = parser.parse_args()
    server = Server(args.heartbeat_s)
    print(f"Open http://127.0.0.1:{server.port}/ on a phone", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
