"""The table's topics on the broker and the messages sent there: what the bridge, its outbox, Home Assistant's
discovery and the moments all build with, kept apart from the bridge so that they need not import one another; and
what the launcher's state and each event of the log become there."""

from __future__ import annotations

import json
from dataclasses import dataclass

from launcher.events import Event, EventType

ROOT = "uno-launcher"


@dataclass(frozen=True, slots=True)
class Message:
    topic: str
    payload: str
    retain: bool = False


def table_topic(table: str, *levels: str) -> str:
    return "/".join((ROOT, table, *levels))


# What the table tells the broker, as it happened: presses, fires, what came out, rounds, hopper, faults.
TOLD = frozenset(
    {
        EventType.BUTTON_PRESSED,
        EventType.LAUNCHER_MISSED,
        EventType.LAUNCHER_FIRED,
        EventType.LAUNCHER_DEALT,
        EventType.LAUNCHER_JAMMED,
        EventType.LAUNCHER_EMPTY,
        EventType.LAUNCHER_STOPPED,
        EventType.GAME_STARTED,
        EventType.GAME_FINISHED,
        EventType.ROUND_SCORED,
        EventType.ROUND_UNDONE,
        EventType.ROUND_EDITED,
        EventType.HOPPER_CHANGED,
        EventType.HOPPER_RELOADED,
        EventType.HARDWARE_FAULT,
        EventType.HARDWARE_OK,
        EventType.SHUFFLE_STARTED,
    }
)
FIRES = (EventType.LAUNCHER_FIRED, EventType.LAUNCHER_DEALT)
HOPPER = (EventType.HOPPER_CHANGED, EventType.HOPPER_RELOADED)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The launcher's state as it stands, sent (retained) at each connection."""

    hopper: int
    fault: bool
    under_voltage: bool = False  # the Pi's own warning (launcher/system/power.py)


def state_messages(table: str, *, presses: int | None = None, snapshot: Snapshot | None = None) -> list[Message]:
    out = []
    if presses is not None:
        out.append(Message(table_topic(table, "state", "presses"), str(presses), retain=True))
    if snapshot is not None:
        out.append(Message(table_topic(table, "state", "hopper"), str(snapshot.hopper), retain=True))
        out.append(Message(table_topic(table, "state", "fault"), "ON" if snapshot.fault else "OFF", retain=True))
        out.append(_under_voltage(table, snapshot.under_voltage))
    return out


def _under_voltage(table: str, now: bool) -> Message:
    return Message(table_topic(table, "state", "under_voltage"), "ON" if now else "OFF", retain=True)


def messages_for(table: str, event: Event, presses: int) -> list[Message]:
    """What one event of the log becomes on the broker; `presses` counts this event if it is a press."""
    kind = event.type
    out: list[Message] = []
    if kind in TOLD:
        out.append(Message(table_topic(table, "event", kind), event.json_text))
    if kind == EventType.BUTTON_PRESSED:
        out += state_messages(table, presses=presses)
    elif kind in FIRES:
        data = event.data
        fire = {"cards": data.get("dispensed", 0), "ts": event.ts, "event": event.id}
        out.append(Message(table_topic(table, "state", "last_fire"), json.dumps(fire), retain=True))
    elif kind in HOPPER:
        out.append(Message(table_topic(table, "state", "hopper"), str(event.data.get("remaining", 0)), retain=True))
    elif kind in (EventType.HARDWARE_FAULT, EventType.HARDWARE_OK):
        fault = "ON" if kind == EventType.HARDWARE_FAULT else "OFF"
        out.append(Message(table_topic(table, "state", "fault"), fault, retain=True))
    elif kind == EventType.POWER_CHANGED:
        out.append(_under_voltage(table, "under_voltage" in event.data.get("warnings", [])))
    return out
