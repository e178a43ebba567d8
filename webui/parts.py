"""The launcher's parts the views call, handed to `create_app()` and read back, typed, by every view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import Flask, current_app

from launcher.access.book import AccessBook, PinGuard
from launcher.access.budgets import Budgets
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
from webui.game_text import GameText
from webui.page_cache import Pages

if TYPE_CHECKING:  # webui/stream.py reads the parts too
    from webui.stream_gate import StreamGate
    from webui.stream_hub import StreamHub

_KEY = "launcher.parts"


@dataclass(frozen=True)
class Parts:
    """Every part a view calls: the launcher's, handed to `create_app()`, and the web layer's own it makes there."""

    controller: Controller
    bus: EventBus
    shuffles: ShuffleBook
    games: GameDesk
    profiles: Mapping[str, Profile]
    power: PowerMonitor
    history: History
    wear: Wear
    tournaments: TournamentBook
    doorbell: Doorbell
    access: AccessBook
    budgets: Budgets
    pin_guard: PinGuard
    served_names: frozenset[str]  # the host names the page answers to (webui/access.py)
    streams: StreamGate
    stream_hub: StreamHub
    pages: Pages
    game_text: GameText
    mqtt_link: MqttLink | None = None  # None: no [mqtt]

    def install(self, app: Flask) -> None:
        app.extensions[_KEY] = self


def parts() -> Parts:
    """The parts of the app serving this request."""
    found: Parts = current_app.extensions[_KEY]
    return found
