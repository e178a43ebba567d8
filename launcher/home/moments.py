"""The table's moments for Home Assistant's event entity (`uno-launcher/<table>/moment`,
launcher/home/home_assistant.py).

A moment is news or nothing: a light that flashes for a fire must flash now, not after the broker was away for an
hour. So moments do not go through the MQTT outbox (which delivers everything, in order, after acknowledgements
and a save of its mark on the disk): `MomentTeller` follows the event bus on a thread of its own and hands each
moment to the bridge at once (QoS 1, not awaited); while the bridge is not connected, or for an event more than
`FRESH_S` old, nothing is told. Each daemon event that is a moment, and what it becomes, is in `MOMENTS`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from launcher.clock import REAL_CLOCK, Clock
from launcher.events import Event, EventBus, EventType
from launcher.home.topics import Message, table_topic
from launcher.threads import StoppableThread

FRESH_S = 60.0  # older, a moment would flash a light for nothing
IDLE_S = 1.0  # how long the teller waits for an event before it looks again (and sees whether it must stop)
BATCH = 256

Told = tuple[str, dict[str, Any]]


def _fired(data: dict[str, Any]) -> Told:
    return ("jackpot" if data.get("jackpot") else "fire"), {"cards": data.get("dispensed", 0)}


def _tournament_round(data: dict[str, Any]) -> Told:
    leader = (data.get("standings") or [{}])[0]
    told = {"round": data.get("number"), "points": data.get("points"), "corrected": data.get("version", 1) > 1}
    return "tournament_round", {**told, "leader": leader.get("player"), "leader_points": leader.get("points")}


def _won(data: dict[str, Any]) -> Told:
    winners = data.get("winners", [])
    return "game_won", {"winner": " & ".join(winners), "winners": winners, "losers": data.get("losers", [])}


# Each daemon event that is a moment of the table: its event type for Home Assistant and its attributes.
MOMENTS: dict[str, Callable[[dict[str, Any]], Told]] = {
    EventType.LAUNCHER_MISSED: lambda d: ("miss", {"misses_in_row": d.get("misses_in_row", 0)}),
    EventType.LAUNCHER_FIRED: _fired,
    EventType.LAUNCHER_DEALT: lambda d: ("fire", {"cards": d.get("dispensed", 0), "player": d.get("player")}),
    EventType.LAUNCHER_JAMMED: lambda d: ("jam", {"reason": d.get("reason"), "cards": d.get("dispensed", 0)}),
    EventType.LAUNCHER_EMPTY: lambda d: ("empty", {"cards": d.get("dispensed", 0)}),
    EventType.HARDWARE_FAULT: lambda d: ("fault", {"cause": d.get("cause"), "message": d.get("message")}),
    EventType.ROUND_SCORED: lambda d: ("round_scored", {"round": d.get("round"), "winner": d.get("winner")}),
    EventType.GAME_FINISHED: _won,
    EventType.TOURNAMENT_ROUND: _tournament_round,
}
EVENT_TYPES = ("miss", "fire", "jackpot", "jam", "empty", "fault", "round_scored", "game_won", "tournament_round")


def moments_topic(table: str) -> str:
    return table_topic(table, "moment")


def moment_messages(table: str, event: Event, *, now: float) -> list[Message]:
    """The event entity's message for an event that is a moment of the table and still news at `now` (wall time)."""
    told = MOMENTS.get(event.type)
    # A tournament's events name the table they were made at: one heard from another table is that table's moment.
    if told is None or now - event.ts > FRESH_S or event.data.get("origin", table) != table:
        return []
    kind, attributes = told(event.data)
    body = {"event_type": kind, **attributes, "event": event.id}
    return [Message(moments_topic(table), json.dumps(body, ensure_ascii=False))]


class MomentTeller:
    """Follows the bus from the newest event at its start; tells each moment through `send` (the bridge's
    `publish_now`, which says False and drops it while the broker is away)."""

    def __init__(
        self,
        table: str,
        *,
        bus: EventBus,
        send: Callable[[Message], bool],
        clock: Clock = REAL_CLOCK,
        wall: Callable[[], float] = time.time,
    ) -> None:
        """`wall`: seconds since the epoch, as the events' timestamps are."""
        self._table = table
        self._bus = bus
        self._send = send
        self._wall = wall
        self._thread = StoppableThread(self._run, "ha-moments", clock=clock)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._thread.stop()

    def _run(self) -> None:
        stopping = self._thread.stopping
        seen = self._bus.last_id
        while not stopping.is_set():
            events = self._bus.events_after(seen, limit=BATCH)
            if not events:
                self._bus.wait(seen, timeout=IDLE_S)
                continue
            for event in events:
                for message in moment_messages(self._table, event, now=self._wall()):
                    self._send(message)
            seen = events[-1].id
