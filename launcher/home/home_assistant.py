"""Home Assistant's view of the launcher: its device, announced in one place, and the table's moments.

Followed: Home Assistant's MQTT documentation as of 2025.10-2026.x (home-assistant.io, integrations/mqtt "Device
discovery payload" and "Migration from single component to device-based discovery"; integrations/event.mqtt).

- One retained device-based discovery message, `<prefix>/device/<node>/config`, with the device (`dev`), the origin
  (`o`), the availability tied to the bridge's last will, and every entity under `cmps`, each with its platform
  (`p`), `unique_id` and `default_entity_id` (which replaced `object_id`, deprecated in 2025.10).
- The launchers before this one announced a config per entity (`<prefix>/<platform>/<node>/<key>/config`). Such a
  config still retained on the broker is migrated as the documentation says: `{"migrate_discovery": true}` to each
  old topic, then the device config, then each old topic emptied, so no orphan stays retained. The node and keys
  are the old ones, so Home Assistant keeps each entity, its id and its history.
- Home Assistant's birth message (`<prefix>/status` = `online`) makes the device announced again.
- The event entity reads the table's moments (launcher/home/moments.py): two fires of the same size are two events,
  which a state cannot be.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from launcher import __version__
from launcher.clock import REAL_CLOCK, Clock
from launcher.config import MqttConfig
from launcher.home.moments import EVENT_TYPES, moments_topic
from launcher.home.topics import Message, table_topic

MIGRATE = json.dumps({"migrate_discovery": True})
BIRTH = "online"
BIRTH_QUIET_S = 5.0  # a flood of birth messages from anyone on the broker re-announces at most this often
MIGRATE_QUIET_S = 10.0  # likewise for old configs found retained (a migration is a dozen messages)
AVAILABILITY = {"payload_available": "online", "payload_not_available": "offline"}


@dataclass(frozen=True, slots=True)
class Entity:
    """One entity of the device: its key (the old config's object id), platform and Home Assistant options."""

    key: str
    platform: str
    name: str
    options: dict[str, Any] = field(default_factory=dict)


def version() -> str:
    """The installed package's version; the source's own when it runs from a checkout that was never installed."""
    try:
        return metadata.version("uno-launcher")
    except metadata.PackageNotFoundError:
        return __version__


def node_id(table: str) -> str:
    """The device's id: the old configs' node id, so that the migration finds each entity again."""
    return f"uno_launcher_{table.replace('-', '_')}"


def entities(config: MqttConfig) -> tuple[Entity, ...]:
    """The device's entities, read from the topics the bridge keeps (launcher/home/mqtt.py)."""
    table = config.table

    def state(name: str) -> str:
        return table_topic(table, "state", name)

    declared = (
        Entity(
            "presses",
            "sensor",
            "Presses",
            {"state_topic": state("presses"), "state_class": "total_increasing", "icon": "mdi:gesture-tap-button"},
        ),
        Entity(
            "last_fire",
            "sensor",
            "Last fire",
            {
                "state_topic": state("last_fire"),
                "value_template": "{{ value_json.cards }}",
                "json_attributes_topic": state("last_fire"),
                "unit_of_measurement": "cards",
                "state_class": "measurement",
                "icon": "mdi:cards-playing-outline",
            },
        ),
        Entity(
            "hopper",
            "sensor",
            "Hopper",
            {
                "state_topic": state("hopper"),
                "unit_of_measurement": "cards",
                "state_class": "measurement",
                "icon": "mdi:tray-full",
            },
        ),
        Entity("fault", "binary_sensor", "Fault", {"state_topic": state("fault"), "device_class": "problem"}),
        Entity(
            "under_voltage",
            "binary_sensor",
            "Under-voltage",
            {"state_topic": state("under_voltage"), "device_class": "problem", "entity_category": "diagnostic"},
        ),
        Entity(
            "moment",
            "event",
            "Moment",
            {"state_topic": moments_topic(table), "event_types": list(EVENT_TYPES), "icon": "mdi:party-popper"},
        ),
    )
    button = Entity(
        "new_shuffle",
        "button",
        "New shuffle",
        {
            "command_topic": table_topic(table, "command", "new_shuffle"),
            "payload_press": "PRESS",
            "icon": "mdi:shuffle-variant",
        },
    )
    return (*declared, button) if config.allow_new_shuffle else declared


# Where the launchers before this one announced each entity, one config each.
OLD_PLATFORMS = ("sensor", "binary_sensor", "button")
OLD_KEYS = {"sensor": ("presses", "last_fire", "hopper"), "binary_sensor": ("fault",), "button": ("new_shuffle",)}


class HomeAssistant:
    """The launcher as a Home Assistant device over the bridge's connection. The bridge hands it what arrives on
    `subscriptions()` and publishes what it answers; it holds no connection of its own."""

    def __init__(
        self,
        config: MqttConfig,
        *,
        page_url: Callable[[], str | None],
        clock: Clock = REAL_CLOCK,
    ) -> None:
        """`page_url`: the phone page's address, read at each announcement (known once the server listens)."""
        self._config = config
        self._page_url = page_url
        self._clock = clock
        self._node = node_id(config.table)
        self._prefix = config.discovery_prefix
        self._last_birth: float | None = None
        self._last_migration: float | None = None

    @property
    def device_topic(self) -> str:
        return f"{self._prefix}/device/{self._node}/config"

    @property
    def birth_topic(self) -> str:
        return f"{self._prefix}/status"

    def old_topics(self) -> list[str]:
        return [f"{self._prefix}/{p}/{self._node}/{key}/config" for p in OLD_PLATFORMS for key in OLD_KEYS[p]]

    def subscriptions(self) -> list[str]:
        """Home Assistant's birth, and the old per-entity configs (sent at once if retained) to migrate them."""
        if not self._config.discovery:
            return []
        return [self.birth_topic, f"{self._prefix}/+/{self._node}/+/config"]

    def takes(self, topic: str) -> bool:
        if not self._config.discovery:
            return False
        levels = topic.split("/")
        old = len(levels) == 5 and levels[0] == self._prefix and levels[2] == self._node and levels[4] == "config"
        return topic == self.birth_topic or old

    def announcement(self) -> list[Message]:
        """The device config (retained); with the button not allowed, first a config that removes it, as the
        documentation says to remove one component (harmless when it was never announced)."""
        if not self._config.discovery:
            return []
        out = []
        if not self._config.allow_new_shuffle:
            out.append(self._device({"new_shuffle": {"p": "button"}}))
        out.append(self._device({}))
        return out

    def receive(self, topic: str, payload: bytes, *, retained: bool) -> list[Message]:
        """What to publish for a message on a topic `takes()`: the device again for a birth; the migration for an
        old config found retained when the bridge subscribed (live ones are our own steps coming back, or anyone's)."""
        now = self._clock.now()
        if topic == self.birth_topic:
            if payload != BIRTH.encode() or not _quiet(self._last_birth, now, BIRTH_QUIET_S):
                return []
            self._last_birth = now
            return self.announcement()
        if not retained or not payload or not _quiet(self._last_migration, now, MIGRATE_QUIET_S):
            return []
        self._last_migration = now
        return self.migration()

    def migration(self) -> list[Message]:
        """From per-entity configs to the device, in the documented order: migrate each, announce, empty each."""
        old = self.old_topics()
        return [
            *(Message(topic, MIGRATE, retain=True) for topic in old),
            *self.announcement(),
            *(Message(topic, "", retain=True) for topic in old),
        ]

    def _device(self, extra: dict[str, Any]) -> Message:
        table = self._config.table
        device: dict[str, Any] = {
            "identifiers": [self._node],
            "name": f"UNO launcher {table}",
            "manufacturer": "home-built",
            "model": "UNO Attack card launcher",
            "sw_version": version(),
        }
        page = self._page_url()
        if page:
            device["configuration_url"] = page
        components = {
            e.key: {
                "p": e.platform,
                "name": e.name,
                "unique_id": f"{self._node}_{e.key}",
                "default_entity_id": f"{e.platform}.{self._node}_{e.key}",
                **e.options,
            }
            for e in entities(self._config)
        }
        body = {
            "dev": device,
            "o": {"name": "uno-launcher", "sw": version()},
            # The bridge's status: "online" at each connection, "offline" by its close or its last will.
            "availability": [{"topic": table_topic(table, "status"), **AVAILABILITY}],
            "qos": 1,
            "cmps": {**components, **extra},
        }
        return Message(self.device_topic, json.dumps(body, ensure_ascii=False), retain=True)


def _quiet(last: float | None, now: float, quiet_s: float) -> bool:
    return last is None or now - last >= quiet_s
