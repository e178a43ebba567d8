"""The baseline for the SSE benchmarks: the smallest standard-library SSE server that does the same job.

POST /api/press broadcasts a `button.pressed` event to every open GET /api/events stream; GET /api/state is a
constant. One thread per client, as with waitress. Prints its URL, then serves until killed.
"""

from __future__ import annotations

import itertools
import json
import queue
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

clients: set[queue.SimpleQueue[bytes]] = set()
lock = threading.Lock()
ids = itertools.count(1)
presses = itertools.count(1)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/api/events"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            mine: queue.SimpleQueue[bytes] = queue.SimpleQueue()
            with lock:
                clients.add(mine)
            try:
                self.wfile.write(b": connected\n\n")
                self.wfile.flush()
                while True:
                    self.wfile.write(mine.get())
                    self.wfile.flush()
            except OSError:
                pass
            finally:
                with lock:
                    clients.discard(mine)
            return
        self._json({"last_event_id": 0})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        event_id, press = next(ids), next(presses)
        event = {"id": event_id, "type": "button.pressed", "data": {"press": press}}
        frame = f"id: {event_id}\ndata: {json.dumps(event)}\n\n".encode()
        with lock:
            for client in clients:
                client.put(frame)
        self._json({"press": press})

    def _json(self, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"Open http://127.0.0.1:{server.server_port}/ on a phone", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
