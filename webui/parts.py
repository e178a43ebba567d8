"""The launcher's parts the views call, handed to `create_app()` and read back, typed, by every view."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flask import Flask, current_app

from launcher.controller import Controller
from launcher.doorbell import Doorbell
from launcher.events import EventBus
from launcher.games import GameDesk
from launcher.history import History
from launcher.mqtt_link import MqttLink
from launcher.power import PowerMonitor
from launcher.schedule import Profile
from launcher.shuffles import ShuffleBook
from launcher.tournament import TournamentBook
from launcher.wear import Wear

if TYPE_CHECKING:  # webui/stream.py reads the parts too
    from webui.stream import StreamGate
    from webui.stream_hub import StreamHub

_KEY = "launcher.parts"


@dataclass(frozen=True)
class Parts:
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
    streams: StreamGate
    stream_hub: StreamHub
    mqtt_link: MqttLink | None = None  # None: no [mqtt]

    def install(self, app: Flask) -> None:
        app.extensions[_KEY] = self


def parts() -> Parts:
    """The parts of the app serving this request."""
    found: Parts = current_app.extensions[_KEY]
    return found
