"""The history over HTTP: past games, the players known across games, leaderboards, and exports (docs/HISTORY.md).
The summaries live in launcher/table/history.py, the exports in launcher/table/export.py; this module reads the query,
maps
refusals to 400 `bad_query` (naming the parameter) and 404 `no_such_game`, and streams the downloads."""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Callable, Iterator
from typing import TypeVar

from flask import Blueprint, Response, jsonify, request

from launcher.access.book import Role
from launcher.game import Mode
from launcher.table.history import MAX_PAGE, History, Period, UnknownGame, UnreadableGame, load_ended_game
from webui.access import needs
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("history", __name__, url_prefix="/api/history")

PAGE = 20  # games per page when the query does not say
MAX_ID = 2**63 - 1  # SQLite's largest integer: a larger id is no game's
_T = TypeVar("_T")
log = logging.getLogger(__name__)


def _history() -> History:
    return parts().history


def _query(allowed: tuple[str, ...]) -> dict[str, str]:
    """The query's parameters, each once, none but `allowed`."""
    for name in request.args:
        if name not in allowed:
            takes = ", ".join(allowed) if allowed else "nothing"
            raise ApiError(400, "bad_query", f"unknown parameter {name[:40]!r}; this takes {takes}", field=name[:40])
        if len(request.args.getlist(name)) > 1:
            raise ApiError(400, "bad_query", f"{name} is given more than once", field=name)
    return {name: request.args[name] for name in request.args}


def _number(query: dict[str, str], name: str, low: int, high: int, default: int | None = None) -> int | None:
    text = query.get(name)
    if text is None:
        return default
    if not (text.isascii() and text.isdigit() and low <= int(text) <= high):
        raise ApiError(
            400, "bad_query", f"{name} = {text[:40]!r} is not accepted; expected a whole number from {low} to {high}",
            field=name,
        )  # fmt: skip
    return int(text)


def _choice(query: dict[str, str], name: str, parse: Callable[[str], _T], choices: list[str]) -> _T | None:
    text = query.get(name)
    if text is None:
        return None
    if text not in choices:
        raise ApiError(
            400, "bad_query", f"{name} = {text[:40]!r} is not accepted; expected one of {', '.join(choices)}",
            field=name,
        )  # fmt: skip
    return parse(text)


@bp.get("/games")
def games() -> Response:
    query = _query(("limit", "before"))
    limit = _number(query, "limit", 1, MAX_PAGE, PAGE)
    assert limit is not None
    return jsonify(_history().page(limit, _number(query, "before", 1, MAX_ID)))


@bp.get("/games/<int:game_id>")
def game(game_id: int) -> Response:
    _query(())
    try:
        if game_id > MAX_ID:
            raise UnknownGame(f"there is no ended game {game_id}")
        summary, state = _history().ended_game(game_id)
        game = load_ended_game(game_id, state)
    except UnknownGame as e:
        raise ApiError(404, "no_such_game", str(e)) from None
    except UnreadableGame as e:  # made when it could be read; the store was edited or damaged since
        log.warning("game %d cannot be shown: %s", game_id, e)
        raise ApiError(409, "game_unreadable", f"game {game_id} is in the history, but {e}") from None
    from launcher.table.export import detail  # imported at the first asking: it is no part of the start (see export())

    return jsonify({**summary, **detail(game)})


@bp.get("/players")
def players() -> Response:
    _query(())
    return jsonify(players=_history().players())


@bp.get("/leaderboard")
def leaderboard() -> Response:
    query = _query(("period", "mode"))
    period = _choice(query, "period", Period, [p.value for p in Period]) or Period.ALL
    mode = _choice(query, "mode", Mode.parse, [m.value for m in Mode])
    return jsonify(_history().leaderboard(period, mode))


@bp.get("/export")
@needs(Role.TABLE)  # every name and score of every game: for the table, not for whoever is on the Wi-Fi
def export() -> Response:
    # Imported here, at the first asking: the exports and their CSV are no part of the start (docs/BENCHMARKS.md).
    from launcher.table.export import FORMATS, NoSuchGame, export_chunks

    query = _query(("format", "game"))
    kind = _choice(query, "format", str, list(FORMATS)) or "csv"
    only = _number(query, "game", 1, MAX_ID)
    try:
        chunks = export_chunks(_history(), kind, only, time.time())
    except NoSuchGame as e:
        raise ApiError(404, "no_such_game", str(e)) from None
    name = f"uno-game-{only}.{kind}" if only is not None else f"uno-games.{kind}"
    return _download(chunks, f"{_MIMETYPES[kind]}; charset=utf-8", name)


_MIMETYPES = {"csv": "text/csv", "json": "application/json"}


def _download(chunks: Iterator[str], content_type: str, filename: str) -> Response:
    """Streamed as it is made, compressed here when the phone takes gzip (webui/compress.py would hold a whole
    answer in memory to compress it)."""
    encoded = (chunk.encode("utf-8") for chunk in chunks)
    response = Response(encoded, content_type=content_type)
    if request.accept_encodings.quality("gzip") > 0:
        response.response = _gzipped(encoded)
        response.headers["Content-Encoding"] = "gzip"
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    response.headers["Cache-Control"] = "no-store"
    return response


def _gzipped(chunks: Iterator[bytes]) -> Iterator[bytes]:
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: the gzip wrapper
    for chunk in chunks:
        if packed := packer.compress(chunk):
            yield packed
    yield packer.flush()
