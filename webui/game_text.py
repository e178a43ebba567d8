"""GET /api/game's text, encoded once per version of the game (webui/game_api.py serves it)."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import Any

from flask.json.provider import JSONProvider

from launcher.table.game_view import rules


class _Version:
    """One version of the game: its ETag, known at once, and its text, encoded the first time a phone needs it."""

    def __init__(self, etag: str, view: dict[str, Any] | None, encode: Callable[[dict[str, Any] | None], str]) -> None:
        self.etag = etag
        self._view = view
        self._encode = encode
        self._lock = threading.Lock()
        self._text: str | None = None

    @property
    def view(self) -> dict[str, Any] | None:
        return self._view

    def text(self) -> str:
        with self._lock:
            if self._text is None:
                self._text = self._encode(self._view)
            return self._text


class GameText:
    """GET /api/game's versions: encoding a long game is the largest piece of work an answer does, so it is done
    once per version (the desk hands out the same view until the next change), compressed once per version
    (webui/compress.py keeps the gzip by ETag), and a phone that has the version is answered 304 from the ETag alone,
    before the text is encoded or read. The ETag names this run too: numbers start again after a restart."""

    def __init__(self, json: JSONProvider) -> None:
        self._json = json
        self._lock = threading.Lock()
        self._run = secrets.token_hex(4)
        self._rules = json.dumps(rules())  # the choices the page offers never change while the daemon runs
        self._current = _Version(f"game-{self._run}-0", None, self._encode)
        self._count = 0

    def version(self, view: dict[str, Any] | None) -> _Version:
        """The version `view` is (a new one when it is not the view last seen)."""
        with self._lock:
            if self._count == 0 or view is not self._current.view:
                self._count += 1
                self._current = _Version(f"game-{self._run}-{self._count}", view, self._encode)
            return self._current

    def _encode(self, view: dict[str, Any] | None) -> str:
        return f'{{"game":{self._json.dumps(view)},"rules":{self._rules}}}'
