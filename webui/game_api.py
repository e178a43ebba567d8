"""The game at the table over HTTP: new game, declarations, rounds. The rules live in launcher/game/, the state in
launcher/games.py, the checks of each body in launcher/game_requests.py; this module maps routes to them and
refusals to 4xx answers."""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from flask.blueprints import BlueprintSetupState
from flask.json.provider import JSONProvider

from launcher.bodies import Shape
from launcher.budgets import Budget
from launcher.controller import PressRefused
from launcher.game import GameError, OpenAttacks
from launcher.game_view import rules
from launcher.games import CannotUndo, GameDesk, GameOver, NoGame
from launcher.refusals import Refusal
from launcher.schedule import Profile
from webui import access
from webui.api import json_object
from webui.compress import gzip_etag
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("game", __name__, url_prefix="/api")


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


class _GameText:
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


@bp.record_once
def _encode_once_per_change(state: BlueprintSetupState) -> None:
    state.app.extensions["launcher.game_text"] = _GameText(state.app.json)


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
    text: _GameText = current_app.extensions["launcher.game_text"]
    version = text.version(_desk().view())
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
