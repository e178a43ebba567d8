"""The phone page as it is first sent: in the phone's language, with its words already in place.

A phone on a slow Wi-Fi shows the page's words with the first answer, before any script or catalogue arrives, and
the page's script takes its catalogue from the page instead of fetching it. Each language's page is made once. The
app's manifest (its name on a home screen) is answered in the same language.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, render_template, request

from webui.errors import ApiError
from webui.parts import parts
from webui.words import LANG_COOKIE, LANGUAGES, catalogue, guess_language, page_catalogue

bp = Blueprint("page", __name__)


def _language() -> str:
    return guess_language(request.accept_languages.values(), request.cookies.get(LANG_COOKIE))


def _page(template: str) -> Response:
    html, etag = parts().pages.get(template, _language())
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
    app.register_blueprint(bp)
