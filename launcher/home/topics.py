"""The table's topics on the broker and the message sent there: what the bridge, Home Assistant's discovery and the
moments all build with, kept apart from the bridge so that they need not import one another."""

from __future__ import annotations

from dataclasses import dataclass

ROOT = "uno-launcher"


@dataclass(frozen=True, slots=True)
class Message:
    topic: str
    payload: str
    retain: bool = False


def table_topic(table: str, *levels: str) -> str:
    return "/".join((ROOT, table, *levels))
