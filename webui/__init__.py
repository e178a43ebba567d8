"""The phones' page and API, as a Flask application factory."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.json.provider import DefaultJSONProvider

from launcher import jsontext
from launcher.access import AccessBook
from launcher.bodies import MAX_BODY_BYTES as MAX_BODY_BYTES  # the server refuses a larger body unread
from launcher.budgets import Budgets
from launcher.controller import Controller
from launcher.events import EventBus
from launcher.games import GameDesk
from launcher.schedule import Profile
from launcher.shuffles import ShuffleBook
from webui import access as gate
from webui import (
    api,
    care_api,
    compress,
    errors,
    fairness_api,
    game_api,
    history_api,
    page,
    session_api,
    stream,
    tournament_api,
)
from webui.routing import App

# The page's own files only: no inline script or style, nothing from elsewhere (docs/RELIABILITY.md, hostile input).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON, encoded in small steps so that a press is not held up by a long answer (launcher/jsontext.py),
    and not escaped to ASCII (the page speaks Chinese)."""

    ensure_ascii = False

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        kwargs.setdefault("default", self.default)
        kwargs.setdefault("ensure_ascii", self.ensure_ascii)
        kwargs.setdefault("sort_keys", self.sort_keys)
        return jsontext.dumps(obj, **kwargs)


def create_app(
    *,
    controller: Controller,
    bus: EventBus,
    shuffles: ShuffleBook,
    games: GameDesk,
    access: AccessBook,
    budgets: Budgets,
    profiles: dict[str, Profile],
    public_urls: list[str],
    heartbeat_s: float = 15.0,
    press_wait_s: float = 30.0,
    threads: int = 32,
) -> Flask:
    app = App(__name__)
    app.config.update(
        PUBLIC_URLS=public_urls,
        HEARTBEAT_S=heartbeat_s,
        PRESS_WAIT_S=press_wait_s,
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
    )
    app.json = JSONProvider(app)
    app.extensions["launcher.controller"] = controller
    app.extensions["launcher.bus"] = bus
    app.extensions["launcher.shuffles"] = shuffles
    app.extensions["launcher.games"] = games
    app.extensions["launcher.profiles"] = profiles
    app.extensions["launcher.streams"] = stream.StreamGate(threads)
    gate.install(app, access, budgets, public_urls)
    app.register_blueprint(api.bp)
    app.register_blueprint(session_api.bp)
    app.register_blueprint(stream.bp)
    app.register_blueprint(game_api.bp)
    app.register_blueprint(fairness_api.bp)
    app.register_blueprint(history_api.bp)
    app.register_blueprint(care_api.bp)
    app.register_blueprint(tournament_api.bp)
    page.install(app)
    errors.register_errors(app)

    compress.install(app)

    @app.after_request
    def _headers(response):  # type: ignore[no-untyped-def]
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response

    return app
