"""The phones' page and API, as a Flask application factory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask, Response, g, request
from flask.json.provider import DefaultJSONProvider

from launcher.access.bodies import MAX_BODY_BYTES as MAX_BODY_BYTES  # the server refuses a larger body unread
from launcher.access.book import AccessBook, PinGuard, Role, session_digest
from launcher.access.budgets import Budgets
from launcher.access.channel import MARK_JOINED
from launcher.access.doorbell import Doorbell
from launcher.events import EventBus
from launcher.fairplay.schedule import Profile
from launcher.fairplay.shuffles import ShuffleBook
from launcher.home.mqtt_link import MqttLink
from launcher.home.tournament import TournamentBook
from launcher.press.controller import Controller
from launcher.press.wear import Wear
from launcher.system.power import PowerMonitor
from launcher.table.games import GameDesk
from launcher.table.history import History
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
from webui.game_text import GameText
from webui.page_cache import Pages
from webui.parts import Parts
from webui.stream_gate import StreamGate
from webui.stream_hub import StreamHub

# The API's routes (webui/openapi.py reads their views' declarations from these too).
BLUEPRINTS = (
    api.bp,
    session_api.bp,
    stream.bp,
    game_api.bp,
    fairness_api.bp,
    history_api.bp,
    care_api.bp,
    tournament_api.bp,
)

# The page's own files only: no inline script or style, nothing from elsewhere (docs/RELIABILITY.md, hostile input).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON, compact (the game's view is sent as this text, to every phone) and not escaped to ASCII (the
    page speaks Chinese)."""

    ensure_ascii = False

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        kwargs.setdefault("separators", (",", ":"))
        return super().dumps(obj, **kwargs)


def create_app(
    *,
    controller: Controller,
    bus: EventBus,
    shuffles: ShuffleBook,
    games: GameDesk,
    access: AccessBook,
    doorbell: Doorbell,
    budgets: Budgets,
    pin_guard: PinGuard,
    profiles: Mapping[str, Profile],
    power: PowerMonitor,
    history: History,
    wear: Wear,
    tournaments: TournamentBook,
    mqtt_link: MqttLink | None = None,
    public_urls: list[str],
    heartbeat_s: float = 15.0,
    press_wait_s: float = 30.0,
) -> Flask:
    """The app over the launcher's parts: everything its views call is passed here, nothing added after."""
    app = Flask(__name__)
    app.config.update(
        PUBLIC_URLS=public_urls,
        HEARTBEAT_S=heartbeat_s,
        PRESS_WAIT_S=press_wait_s,
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
    )
    app.json = JSONProvider(app)
    streams = StreamGate()
    Parts(
        controller=controller,
        bus=bus,
        shuffles=shuffles,
        games=games,
        profiles=profiles,
        power=power,
        history=history,
        wear=wear,
        tournaments=tournaments,
        doorbell=doorbell,
        mqtt_link=mqtt_link,
        access=access,
        budgets=budgets,
        pin_guard=pin_guard,
        served_names=gate.served_names(public_urls),
        streams=streams,
        stream_hub=StreamHub(bus, streams, heartbeat_s),
        pages=Pages(),
        game_text=GameText(app.json),
    ).install(app)
    gate.install(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    page.install(app)
    errors.register_errors(app)

    compress.install(app)

    @app.after_request
    def _headers(response):  # type: ignore[no-untyped-def]
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response

    app.after_request(_keep_a_joined_phones_connection)
    return app


def _keep_a_joined_phones_connection(response: Response) -> Response:
    """A request with a known session marks its connection that session's: the server counts it against the
    session's share, not the strangers' (launcher/access/connections.py). Not under Flask's test client, which has no
    connection."""
    if g.get("role", Role.NONE) >= Role.TABLE:
        mark = request.environ.get(MARK_JOINED)
        if mark is not None:
            mark(session_digest(gate.session_token() or ""))
    return response
