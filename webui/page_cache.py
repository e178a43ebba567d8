"""Each page in each language, made once (webui/page.py serves them)."""

from __future__ import annotations

import hashlib
import threading

from flask import render_template

from webui.words import fill_words, page_catalogue


class Pages:
    """Each page in each language, and its ETag, made at the first asking (url_for needs a request)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[tuple[str, str], tuple[str, str]] = {}

    def get(self, template: str, lang: str) -> tuple[str, str]:
        with self._lock:
            made = self._made.get((template, lang))
        if made is None:
            strings = page_catalogue(lang)
            html = fill_words(render_template(template, lang=lang, strings=strings), strings)
            made = (html, hashlib.sha256(html.encode()).hexdigest()[:32])
            with self._lock:
                self._made[template, lang] = made
        return made
