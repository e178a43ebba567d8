"""The phone page as it is first sent: in the phone's language, with its words already in place.

A phone on a slow Wi-Fi shows the page's words with the first answer, before any script or catalogue arrives, and
the page's script takes its catalogue from the page instead of fetching it. Each language's page is made once. The
app's manifest (its name on a home screen) is answered in the same language.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterable
from functools import cache
from html import escape
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, render_template, request

from webui.errors import ApiError
from webui.linebreak import page_strings

LANGUAGES = ("en", "zh-Hans", "zh-Hant")
LANG_COOKIE = "uno-launcher.lang"  # set by the page when a language is picked, so the next page comes in it
_TRADITIONAL = ("zh-hant", "zh-tw", "zh-hk", "zh-mo")
_STATIC = Path(__file__).parent / "static"
# An element whose words come from the catalogue, still empty: `<tag … data-i18n="key" …></tag>`.
_WORDED = re.compile(r'(<(?P<tag>[a-z][a-z0-9]*)\b[^>]*\sdata-i18n="(?P<key>[^"]+)"[^>]*>)(</(?P=tag)>)')

bp = Blueprint("page", __name__)


def guess_language(preferred: Iterable[str], picked: str | None = None) -> str:
    """The page's language: the one picked on this phone, else the first of the browser's list the page speaks."""
    if picked in LANGUAGES:
        return str(picked)
    for tag in (t.lower() for t in preferred):
        if tag.startswith(_TRADITIONAL):
            return "zh-Hant"
        if tag == "zh" or tag.startswith("zh-"):
            return "zh-Hans"
        if tag == "en" or tag.startswith("en-"):
            return "en"
    return "en"


@cache
def catalogue(lang: str) -> dict[str, str]:
    strings: dict[str, str] = json.loads((_STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return strings


@cache
def page_catalogue(lang: str) -> dict[str, str]:
    """The catalogue as the page gets it: in Chinese, with the places a line may break (webui/linebreak.py)."""
    return page_strings(catalogue(lang), lang)


def fill_words(html: str, strings: dict[str, str]) -> str:
    """Put each element's catalogue words inside it, as the page's script would (a missing key shows as itself)."""

    def worded(found: re.Match[str]) -> str:
        return found[1] + escape(strings.get(found["key"], found["key"]), quote=False) + found[4]

    return _WORDED.sub(worded, html)


class _Pages:
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


def _language() -> str:
    return guess_language(request.accept_languages.values(), request.cookies.get(LANG_COOKIE))


def _page(template: str) -> Response:
    html, etag = current_app.extensions["launcher.pages"].get(template, _language())
    response = Response(html, mimetype="text/html")
    response.set_etag(etag)
    response.vary.add("Accept-Language")
    response.vary.add("Cookie")
    response.cache_control.no_cache = True  # ask each time: a 304 when nothing changed
    response.make_conditional(request)
    return response


@bp.get("/")
def index() -> Response:
    return _page("index.html")


@bp.get("/table")
def table() -> Response:
    """The table screen, for a tablet or a TV beside the table: the prompt, the launcher, the scores, the join code."""
    return _page("table.html")


@bp.get("/i18n/<lang>.json")
def strings(lang: str) -> Response:
    """Another language's catalogue, for a phone that switches to it: as a page in that language would have it."""
    if lang not in LANGUAGES:
        raise ApiError(404, "no_language", f"no catalogue for {lang!r}: the languages are {', '.join(LANGUAGES)}")
    response = jsonify(page_catalogue(lang))
    response.cache_control.max_age = 3600
    return response


@bp.get("/manifest.webmanifest")
def manifest() -> Response:
    """The installable app's description, named in the language asked for (the page links the one it shows)."""
    lang = request.args.get("lang", "")
    lang = lang if lang in LANGUAGES else _language()
    described = render_template("manifest.webmanifest", lang=lang, strings=catalogue(lang))
    return Response(described, mimetype="application/manifest+json")


def install(app: Any) -> None:
    app.extensions["launcher.pages"] = _Pages()
    app.register_blueprint(bp)
