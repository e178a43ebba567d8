"""The phones' page and API, as a Flask application factory."""

from __future__ import annotations

from flask import Flask, render_template

from launcher.controller import Controller
from launcher.events import EventBus
from launcher.hardware.base import Hardware
from webui import api, stream


def create_app(
    *,
    controller: Controller,
    bus: EventBus,
    hardware: Hardware,
    public_urls: list[str],
    heartbeat_s: float = 15.0,
    press_wait_s: float = 30.0,
) -> Flask:
    app = Flask(__name__)
    app.config.update(
        PUBLIC_URLS=public_urls,
        HEARTBEAT_S=heartbeat_s,
        PRESS_WAIT_S=press_wait_s,
        JSON_AS_ASCII=False,
        MAX_CONTENT_LENGTH=64 * 1024,
    )
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.extensions["launcher.controller"] = controller
    app.extensions["launcher.bus"] = bus
    app.extensions["launcher.hardware"] = hardware
    app.extensions["launcher.streams"] = stream.StreamCounter()
    app.register_blueprint(api.bp)
    app.register_blueprint(stream.bp)
    api.register_errors(app)

    @app.get("/")
    def index() -> str:
        return render_template("index.html", lang="en")

    @app.after_request
    def _headers(response):  # type: ignore[no-untyped-def]
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        return response

    return app
