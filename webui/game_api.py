"""The game at the table over HTTP: new game, declarations, rounds. The rules live in launcher/game/, the state in
launcher/table/games.py, the checks of each body in launcher/table/game_requests.py; this module maps routes to them and
refusals to 4xx answers."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, jsonify, request

from launcher.access.bodies import Shape
from launcher.access.budgets import Budget
from launcher.fairplay.schedule import Profile
from launcher.game import GameError, OpenAttacks
from launcher.press.controller import PressRefused
from launcher.refusals import Refusal
from launcher.table.games import CannotUndo, GameDesk, GameOver, NoGame
from webui import access
from webui.api import json_object
from webui.compress import gzip_etag
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("game", __name__, url_prefix="/api")


def _desk() -> GameDesk:
    return parts().games


def _answer(status: int, view: dict[str, Any] | None) -> tuple[Response, int]:
    return jsonify(game=view), status


def _call(code: str, action: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run a desk action, turning its refusals into API errors with `code` for a refused input."""
    try:
        return action(*args)
    except OpenAttacks as e:  # the body is fine; the table is not ready for it
        raise ApiError(
            409,
            "attacks_open",
            f"{e}: press first, so the cards count in the hands, or score with carry_open_attacks: true "
            "to have them pressed first in the next round",
            owed=str(e),  # the English words, for clients from before the first demand's fields
            **e.params,  # the first demand, for the page to word in the reader's language
        ) from None
    except GameError as e:
        raise ApiError(400, code, str(e), **e.details()) from None
    except NoGame as e:
        raise ApiError(404, Refusal.NO_GAME, str(e)) from None
    except GameOver as e:
        raise ApiError(409, Refusal.GAME_OVER, str(e)) from None
    except CannotUndo as e:
        raise ApiError(409, e.code, str(e)) from None


@bp.get("/game")
def game() -> Response:
    version = parts().game_text.version(_desk().view())
    had = _held(version.etag)
    if had is not None:  # decided on the ETag alone: the text is neither encoded nor read for a phone that has it
        response = Response(status=304)
        response.set_etag(had)
    else:
        response = Response(version.text(), mimetype="application/json")
        response.set_etag(version.etag)
    response.headers["Cache-Control"] = "no-cache"  # kept by the browser, always asked again with its ETag
    return response


def _held(etag: str) -> str | None:
    """Which of the version's ETags (its text's, its gzip's) the phone says it has, by RFC 9110's weak comparison
    (`W/"…"`, a list, `*`); None if neither. Where both match (`*`), the one this phone would be sent."""
    asked = request.if_none_match
    wanted = (gzip_etag(etag), etag) if request.accept_encodings.quality("gzip") > 0 else (etag,)
    return next((tag for tag in wanted if asked.contains_weak(tag)), None)


@bp.post("/games")
@access.budgeted(Budget.GAMES)
def new_game() -> tuple[Response, int]:
    body = json_object()
    profile = _profile(body.get("profile"))
    view = _call("bad_game", _desk().new_game, body)
    if profile is not None:
        controller = parts().controller
        # While the launcher fires, the game starts with the profile in play; the page can pick it again.
        with contextlib.suppress(PressRefused):
            controller.new_shuffle(profile)
    return _answer(201, view)


def _profile(name: object) -> Profile | None:
    if name is None:
        return None
    known = parts().profiles
    if not isinstance(name, str) or name not in known:
        raise ApiError(400, "bad_game", f"profile = {name!r:.40} is not accepted; expected one of {', '.join(known)}")
    return known[name]


@bp.post("/attacks")
@access.budgeted(Budget.DECLARATIONS)
def declare() -> tuple[Response, int]:
    body = json_object()
    return _answer(200, _call("bad_declaration", _desk().declare, body))


_UNDO = Shape("an undo", {}, code="bad_declaration")


@bp.post("/game/undo-declaration")
@access.budgeted(Budget.DECLARATIONS)
def undo_declaration() -> tuple[Response, int]:
    _UNDO.read(json_object())
    return _answer(200, _call("bad_declaration", _desk().undo_declaration))


@bp.post("/games/current/rounds")
@access.budgeted(Budget.DECLARATIONS)
def score_round() -> tuple[Response, int]:
    body = json_object()
    return _answer(201, _call("bad_round", _desk().score_round, body))


@bp.delete("/games/current/rounds/last")
@access.budgeted(Budget.DECLARATIONS)
def undo_round() -> tuple[Response, int]:
    return _answer(200, _call("bad_round", _desk().undo_last_round))


@bp.put("/games/current/rounds/<int:index>")
@access.budgeted(Budget.DECLARATIONS)
def edit_round(index: int) -> tuple[Response, int]:
    return _answer(200, _call("bad_round", _desk().edit_round, index, json_object()))
