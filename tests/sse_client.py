"""A small Server-Sent Events client for tests and benchmarks: reads a stream in a thread into a list."""

from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any
from urllib.parse import urlsplit


class SseClient:
    """Follows /api/events; `events` fills with (id, event dict, receive time) as they arrive."""

    def __init__(self, base_url: str, last_event_id: int | None = None, *, cookie: str | None = None) -> None:
        parts = urlsplit(base_url)
        self._conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        headers = {"Accept": "text/event-stream"}
        if cookie is not None:
            headers["Cookie"] = cookie
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self._conn.request("GET", "/api/events", headers=headers)
        self._sock = self._conn.sock  # the response takes the socket over (no Content-Length): keep it for close()
        self._response = self._conn.getresponse()
        assert self._response.status == 200, self._response.status
        assert self._response.getheader("Content-Type", "").startswith("text/event-stream")
        self.events: list[tuple[int, dict[str, Any], float]] = []
        self.comments: list[str] = []
        self.connected = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        event_id: int | None = None
        try:
            while line := self._response.readline():
                text = line.decode("utf-8").rstrip("\n")
                if text.startswith(":"):
                    self.comments.append(text[1:].strip())
                    self.connected.set()
                elif text.startswith("id: "):
                    event_id = int(text[4:])
                elif text.startswith("data: "):
                    assert event_id is not None, "data before id"
                    self.events.append((event_id, json.loads(text[6:]), time.perf_counter()))
        except Exception:  # the stream ended, or close() cut it mid-read (http.client then has no fp)
            pass

    def ids(self) -> list[int]:
        return [i for i, _, _ in self.events]

    def close(self) -> None:
        try:
            if self._sock is not None:
                self._sock.shutdown(2)
        except OSError:
            pass
        self._thread.join(5)
        self._response.close()
        self._conn.close()
