"""Home Assistant's device, as Home Assistant reads it: one device-based discovery message checked against the
documented schema, the migration from the old per-entity configs without orphans, the birth message, the table's
moments on the event entity, the Pi's under-voltage, and the blueprint in docs/HOME.md."""

from __future__ import annotations

import json
import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from launcher.clock import REAL_CLOCK
from launcher.config import Config, MqttConfig, from_mapping
from launcher.daemon import Daemon
from launcher.events import Event, EventType
from launcher.home.home_assistant import BIRTH_QUIET_S, MIGRATE_QUIET_S, HomeAssistant, version
from launcher.home.moments import EVENT_TYPES, FRESH_S, moment_messages
from tests.conftest import RunningDaemon, start_daemon, wait_until
from tests.mosquitto import Broker, Listener, running_broker
from tests.test_mqtt import mqtt_toml, press, table_dir
from tests.test_power import throttled
from tests.virtual_clock import VirtualClock

ROOT = Path(__file__).resolve().parent.parent
BLUEPRINT = ROOT / "docs" / "blueprints" / "uno_launcher_fire_and_winner.yaml"
DEVICE = "homeassistant/device/uno_launcher_kitchen/config"
MOMENT = "uno-launcher/kitchen/moment"
STATUS = "uno-launcher/kitchen/status"

# --- Home Assistant's documented schema (integrations/mqtt, "Device discovery payload"; integrations/event.mqtt) ---

# The platforms MQTT discovery supports (integrations/mqtt, "Configuration of MQTT components via MQTT discovery").
PLATFORMS = {
    "alarm_control_panel", "binary_sensor", "button", "camera", "climate", "cover", "device_automation",
    "device_tracker", "event", "fan", "humidifier", "image", "lawn_mower", "light", "lock", "notify", "number",
    "scene", "select", "sensor", "siren", "switch", "tag", "text", "update", "vacuum", "valve", "water_heater",
}  # fmt: skip
NOT_ENTITIES = {"device_automation", "tag"}  # components that are no entity: no unique_id needed
STATE_CLASSES = {"measurement", "total", "total_increasing", "measurement_angle"}
ENTITY_CATEGORIES = {"config", "diagnostic"}


class DoesNotFit(AssertionError):
    pass


def check_device_discovery(topic: str, body: dict[str, Any]) -> None:
    """Raise DoesNotFit where the message breaks what the documentation says of a device-based discovery."""

    def need(condition: bool, what: str) -> None:
        if not condition:
            raise DoesNotFit(what)

    need(re.fullmatch(r"[^/#+]+/device/[a-zA-Z0-9_-]+/config", topic) is not None, f"not a device topic: {topic}")
    device, origin, components = body.get("dev"), body.get("o"), body.get("cmps")
    need(isinstance(device, dict) and bool(device.get("identifiers") or device.get("connections")), "dev: no ids")
    assert isinstance(device, dict)
    url = device.get("configuration_url")
    need(url is None or re.match(r"https?://", url) is not None, f"configuration_url {url!r}")
    need(isinstance(origin, dict) and isinstance(origin.get("name"), str), "o needs a name")
    assert isinstance(origin, dict)
    need(set(origin) <= {"name", "sw", "sw_version", "url", "support_url"}, f"o: unknown keys {set(origin)}")
    for availability in body.get("availability", []):
        need(isinstance(availability.get("topic"), str), "availability: each needs a topic")
    need(body.get("qos", 0) in (0, 1, 2), "qos")
    need(isinstance(components, dict) and bool(components), "cmps: at least one component")
    assert isinstance(components, dict)
    for key, component in components.items():
        platform = component.get("p")
        need(platform in PLATFORMS, f"{key}: p {platform!r} is no MQTT platform")
        if set(component) == {"p"}:
            continue  # a component of only `p` removes it: allowed
        need("object_id" not in component, f"{key}: object_id is deprecated since 2025.10")
        if platform not in NOT_ENTITIES:
            need(isinstance(component.get("unique_id"), str), f"{key}: an entity needs a unique_id")
        default = component.get("default_entity_id")
        need(default is None or default.startswith(f"{platform}."), f"{key}: default_entity_id {default!r}")
        need(component.get("state_class") in STATE_CLASSES | {None}, f"{key}: state_class")
        need(component.get("entity_category") in ENTITY_CATEGORIES | {None}, f"{key}: entity_category")
        icon = component.get("icon")
        need(icon is None or re.fullmatch(r"mdi:[a-z0-9-]+", icon) is not None, f"{key}: icon {icon!r}")
        if platform == "event":
            types = component.get("event_types")
            need(isinstance(types, list) and bool(types), f"{key}: an event needs its event_types")
            need("state_topic" in component or "state_topic" in body, f"{key}: an event needs a state_topic")
        if platform in ("sensor", "binary_sensor"):
            need("state_topic" in component or "state_topic" in body, f"{key}: needs a state_topic")
        if platform == "button":
            need("command_topic" in component or "command_topic" in body, f"{key}: needs a command_topic")


def mqtt_config(**settings: Any) -> MqttConfig:
    return from_mapping({"mqtt": {"broker": "mqtt://127.0.0.1", "table": "kitchen", **settings}}).mqtt


def home(clock: VirtualClock | None = None, **settings: Any) -> HomeAssistant:
    """The device of a table "kitchen", its page at a LAN address."""
    page = "http://192.168.1.20:8080/"
    return HomeAssistant(mqtt_config(**settings), page_url=lambda: page, clock=clock or REAL_CLOCK)


def device_body(assistant: HomeAssistant) -> dict[str, Any]:
    """The device config as it stays retained: the last one announced."""
    return json.loads(assistant.announcement()[-1].payload)  # type: ignore[no-any-return]


# --- the device config, built -------------------------------------------------------------------------------------


@pytest.mark.parametrize("allow", [False, True])
def test_one_device_config_fits_the_documented_schema(allow: bool) -> None:
    assistant = home(allow_new_shuffle=allow)
    messages = assistant.announcement()
    assert all(m.topic == DEVICE and m.retain for m in messages)
    for message in messages:
        check_device_discovery(message.topic, json.loads(message.payload))
    body = json.loads(messages[-1].payload)
    components = body["cmps"]
    assert ("new_shuffle" in components) is allow
    # Each entity keeps the unique id and the entity id the per-entity configs gave it (so its history stays).
    for key in ("presses", "last_fire", "hopper", "fault"):
        assert components[key]["unique_id"] == f"uno_launcher_kitchen_{key}"
        assert components[key]["default_entity_id"] == f"{components[key]['p']}.uno_launcher_kitchen_{key}"
    assert body["dev"]["sw_version"] == body["o"]["sw"] == version() != ""
    assert body["dev"]["configuration_url"] == "http://192.168.1.20:8080/"
    assert components["presses"]["state_class"] == "total_increasing"  # long-term statistics
    assert components["hopper"]["state_class"] == components["last_fire"]["state_class"] == "measurement"
    assert components["fault"]["name"] == "Fault" and components["fault"]["device_class"] == "problem"
    assert components["under_voltage"]["device_class"] == "problem"
    assert components["under_voltage"]["entity_category"] == "diagnostic"
    assert components["moment"]["event_types"] == list(EVENT_TYPES)
    assert components["moment"]["state_topic"] == MOMENT
    for key, component in components.items():
        assert "icon" in component or "device_class" in component, key
        assert component["name"] != component["name"].upper(), key  # no capitals shouting
    (availability,) = body["availability"]
    assert availability == {"topic": STATUS, "payload_available": "online", "payload_not_available": "offline"}


def test_a_button_not_allowed_is_removed_then_left_out_as_documented() -> None:
    first, final = home(allow_new_shuffle=False).announcement()
    assert json.loads(first.payload)["cmps"]["new_shuffle"] == {"p": "button"}
    assert "new_shuffle" not in json.loads(final.payload)["cmps"]


def test_the_schema_check_catches_what_home_assistant_refuses() -> None:
    body = device_body(home())
    broken = [
        {k: v for k, v in body.items() if k != "o"},
        {**body, "dev": {"name": "x"}},
        {**body, "cmps": {**body["cmps"], "x": {"p": "toaster", "unique_id": "x"}}},
        {**body, "cmps": {**body["cmps"], "x": {"p": "sensor", "state_topic": "t"}}},
        {**body, "cmps": {**body["cmps"], "x": {"p": "event", "unique_id": "x", "state_topic": "t"}}},
        {**body, "cmps": {"x": {"p": "sensor", "unique_id": "x", "state_topic": "t", "object_id": "x"}}},
    ]
    for wrong in broken:
        with pytest.raises(DoesNotFit):
            check_device_discovery(DEVICE, wrong)
    with pytest.raises(DoesNotFit):
        check_device_discovery("homeassistant/sensor/uno_launcher_kitchen/x/config", body)


def test_no_discovery_announces_nothing_and_listens_to_nothing_of_home_assistant() -> None:
    assistant = home(discovery=False)
    assert assistant.announcement() == [] and assistant.subscriptions() == []
    assert not assistant.takes("homeassistant/status")


# --- birth and migration, decided -----------------------------------------------------------------------------------


def test_a_flood_of_birth_messages_re_announces_at_most_once_a_quiet_while(clock: VirtualClock) -> None:
    assistant = home(clock)
    assert assistant.takes("homeassistant/status")
    answers = [assistant.receive("homeassistant/status", b"online", retained=False) for _ in range(100)]
    assert sum(1 for a in answers if a) == 1
    assert assistant.receive("homeassistant/status", b"offline", retained=False) == []
    clock.advance(BIRTH_QUIET_S)
    assert assistant.receive("homeassistant/status", b"online", retained=False) == assistant.announcement()


def test_an_old_config_found_retained_is_migrated_in_the_documented_order(clock: VirtualClock) -> None:
    assistant = home(clock)
    old = "homeassistant/sensor/uno_launcher_kitchen/presses/config"
    assert assistant.takes(old) and not assistant.takes("homeassistant/sensor/uno_launcher_garden/presses/config")
    # Live (not retained): our own steps coming back, or anyone's publish: nothing is done.
    assert assistant.receive(old, b'{"name": "Presses"}', retained=False) == []
    assert assistant.receive(old, b"", retained=True) == []
    steps = assistant.receive(old, b'{"name": "Presses"}', retained=True)
    device_at = [i for i, m in enumerate(steps) if m.topic == DEVICE]
    for topic in assistant.old_topics():
        marks = [i for i, m in enumerate(steps) if m.topic == topic]
        assert [steps[i].payload for i in marks] == ['{"migrate_discovery": true}', ""]
        assert marks[0] < min(device_at) and max(device_at) < marks[1] and all(steps[i].retain for i in marks)
    assert assistant.receive(old, b'{"name": "Presses"}', retained=True) == []  # a flood: once a quiet while
    clock.advance(MIGRATE_QUIET_S)
    assert assistant.receive(old, b'{"migrate_discovery": true}', retained=True) == steps  # an interrupted one


# --- the moments ----------------------------------------------------------------------------------------------------


def event(kind: EventType, data: dict[str, Any], *, id: int = 1, ts: float = 1000.0) -> Event:
    return Event.of(id, ts, kind, data)


MOMENTS = [
    (EventType.LAUNCHER_MISSED, {"press": 1, "tension": 0.2, "misses_in_row": 3}, "miss", {"misses_in_row": 3}),
    (EventType.LAUNCHER_FIRED, {"press": 2, "dispensed": 4, "jackpot": False}, "fire", {"cards": 4}),
    (EventType.LAUNCHER_FIRED, {"press": 3, "dispensed": 14, "jackpot": True}, "jackpot", {"cards": 14}),
    (EventType.LAUNCHER_DEALT, {"player": "Ann", "dispensed": 2}, "fire", {"cards": 2, "player": "Ann"}),
    (EventType.LAUNCHER_JAMMED, {"dispensed": 1, "reason": "no_card"}, "jam", {"reason": "no_card"}),
    (EventType.LAUNCHER_EMPTY, {"dispensed": 0}, "empty", {"cards": 0}),
    (EventType.HARDWARE_FAULT, {"message": "m", "cause": "motor"}, "fault", {"cause": "motor"}),
    (EventType.ROUND_SCORED, {"round": 2, "winner": "Bo", "scores": {}}, "round_scored", {"winner": "Bo"}),
    (EventType.GAME_FINISHED, {"winners": ["Ann", "Bo"], "losers": []}, "game_won", {"winner": "Ann & Bo"}),
    (
        EventType.TOURNAMENT_ROUND,
        {"number": 3, "points": {"Bo": 9}, "version": 1, "origin": "kitchen", "standings": [{"player": "Bo"}]},
        "tournament_round",
        {"round": 3, "leader": "Bo"},
    ),
]


@pytest.mark.parametrize(("kind", "data", "told", "attributes"), MOMENTS)
def test_each_moment_of_the_table_is_one_event_of_a_declared_type(
    kind: EventType, data: dict[str, Any], told: str, attributes: dict[str, Any]
) -> None:
    (message,) = moment_messages("kitchen", event(kind, data, id=7), now=1000.0)
    body = json.loads(message.payload)
    assert message.topic == MOMENT and not message.retain
    assert body["event_type"] == told and told in EVENT_TYPES
    assert attributes.items() <= body.items() and body["event"] == 7


def test_every_declared_event_type_is_one_a_moment_becomes() -> None:
    assert {told for _, _, told, _ in MOMENTS} == set(EVENT_TYPES)


def test_two_fires_of_the_same_size_are_two_events_and_a_press_is_none() -> None:
    fires = [event(EventType.LAUNCHER_FIRED, {"dispensed": 2, "jackpot": False}, id=i) for i in (1, 2)]
    told = [moment_messages("kitchen", e, now=1000.0) for e in fires]
    assert [len(t) for t in told] == [1, 1] and told[0][0].payload != told[1][0].payload
    assert moment_messages("kitchen", event(EventType.BUTTON_PRESSED, {"press": 1}), now=1000.0) == []


def test_a_moment_from_the_backlog_is_not_news() -> None:
    assert moment_messages("kitchen", event(EventType.LAUNCHER_MISSED, {}, ts=1000.0 - FRESH_S), now=1000.0) != []
    assert moment_messages("kitchen", event(EventType.LAUNCHER_MISSED, {}, ts=999.0 - FRESH_S), now=1000.0) == []


# --- over a real Mosquitto ------------------------------------------------------------------------------------------


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    with running_broker(tmp_path / "broker") as running:
        yield running


def retained(broker: Broker, pattern: str) -> dict[str, bytes]:
    """What a subscriber that comes now is given retained (a fresh Home Assistant, say). The broker sends them at
    once after the subscription, before anything published later: a probe it then hears marks their end."""
    probe = f"probe/{uuid.uuid4().hex}"  # a new client and topic each time: nothing left from an earlier session
    fresh = Listener(broker, "#", client_id=probe.replace("/", "-"))
    try:
        wait_until(lambda: fresh.client.publish(probe, b"", qos=1) and fresh.on(probe))
        prefix = pattern.removesuffix("#")
        return {t: p for t, p, kept in fresh.messages if kept and t.startswith(prefix) and p}
    finally:
        fresh.close()


@pytest.fixture
def kitchen(tmp_path: Path, broker: Broker) -> Iterator[tuple[RunningDaemon, Listener]]:
    """The table "kitchen" on the broker, online and announced, and a listener that heard it from the start."""
    listener = Listener(broker)
    table = start_daemon(table_dir(tmp_path, "kitchen"), mqtt_toml(broker, "kitchen"))
    try:
        wait_until(lambda: listener.on(STATUS)[-1:] == [b"online"] and listener.on(DEVICE))
        yield table, listener
    finally:
        listener.close()
        table.close()


@pytest.mark.slow
def test_a_subscriber_reads_the_device_and_its_availability_is_the_last_will(
    kitchen: tuple[RunningDaemon, Listener], broker: Broker
) -> None:
    table, listener = kitchen
    body = json.loads(listener.on(DEVICE)[-1])
    check_device_discovery(DEVICE, body)
    assert body["dev"]["configuration_url"].rstrip("/") == table.url
    (availability,) = body["availability"]
    assert availability["topic"] == STATUS and availability["payload_available"] == "online"
    # The daemon killed: no goodbye, the broker's last will says what the availability topic must.
    table.stop(signal.SIGKILL)
    wait_until(lambda: listener.on(STATUS)[-1:] == [availability["payload_not_available"].encode()])
    assert set(retained(broker, "homeassistant/#")) == {DEVICE}, "one device config, nothing per entity"


OLD = {  # what the launcher before this one announced, retained, for a table "kitchen"
    "homeassistant/sensor/uno_launcher_kitchen/presses/config": {"name": "Presses", "object_id": "x"},
    "homeassistant/sensor/uno_launcher_kitchen/last_fire/config": {"name": "Last fire"},
    "homeassistant/sensor/uno_launcher_kitchen/hopper/config": {"name": "Hopper"},
    "homeassistant/binary_sensor/uno_launcher_kitchen/fault/config": {"name": "FAULT"},
}


@pytest.mark.slow
def test_the_old_per_entity_configs_are_migrated_and_leave_no_orphan(tmp_path: Path, broker: Broker) -> None:
    old_launcher = Listener(broker, "nothing/here", client_id="old-launcher")
    for topic, body in OLD.items():
        old_launcher.publish(topic, json.dumps(body), retain=True)
    old_launcher.close()
    assert set(retained(broker, "homeassistant/#")) == set(OLD)
    assistant = Listener(broker, "homeassistant/#", client_id="home-assistant")  # sees every step, in order
    wait_until(lambda: all(assistant.on(t) for t in OLD))
    table = start_daemon(table_dir(tmp_path, "kitchen"), mqtt_toml(broker, "kitchen"))
    try:
        wait_until(lambda: all(assistant.on(t)[-1:] == [b""] for t in OLD))
        steps = [(t, p) for t, p, _ in assistant.messages if t != DEVICE or json.loads(p)]
        for topic in OLD:
            migrate = steps.index((topic, b'{"migrate_discovery": true}'))
            cleared = steps.index((topic, b""))
            devices = [i for i, (t, _) in enumerate(steps) if t == DEVICE]
            assert any(migrate < i < cleared for i in devices), "migrate, then the device, then emptied"
        assert set(retained(broker, "homeassistant/#")) == {DEVICE}, "no orphan retained"
    finally:
        assistant.close()
        table.close()


@pytest.mark.slow
def test_home_assistants_birth_announces_the_device_again(kitchen: tuple[RunningDaemon, Listener]) -> None:
    _, listener = kitchen
    before = len(listener.on(DEVICE))
    listener.publish("homeassistant/status", b"online")
    wait_until(lambda: len(listener.on(DEVICE)) > before)
    check_device_discovery(DEVICE, json.loads(listener.on(DEVICE)[-1]))


@pytest.mark.slow
def test_a_flood_of_births_and_forged_configs_costs_the_table_a_few_messages(
    kitchen: tuple[RunningDaemon, Listener],
) -> None:
    table, listener = kitchen
    before = len(listener.on(DEVICE))
    forged = "homeassistant/sensor/uno_launcher_kitchen/presses/config"
    for _ in range(200):
        listener.client.publish("homeassistant/status", b"online", qos=1)
        listener.client.publish(forged, b'{"name": "forged"}', qos=1, retain=True)
    listener.publish("homeassistant/status", b"not a birth")  # the last of the flood, once it is all sent
    wait_until(lambda: len(listener.on("homeassistant/status")) == 201)
    wait_until(lambda: len(listener.on(DEVICE)) > before)  # a birth is a birth
    assert len(listener.on(DEVICE)) - before <= 2, "at most once a quiet while, whoever sends it"
    assert listener.on(forged).count(b"") == 0, "a live config is nobody's old one: no migration"
    assert "Traceback" not in "".join(table.output)
    assert press(table)["press"] == 1


@pytest.mark.slow
def test_presses_become_moments_on_the_event_entity(kitchen: tuple[RunningDaemon, Listener]) -> None:
    table, listener = kitchen
    answers = [press(table) for _ in range(8)]
    wait_until(lambda: len(listener.on(MOMENT)) == 8)
    told = [json.loads(p) for p in listener.on(MOMENT)]
    expected = ["fire" if a["dispensed"] else "miss" for a in answers]
    assert [t["event_type"].replace("jackpot", "fire") for t in told] == expected
    assert [t["cards"] for t in told if "cards" in t] == [a["dispensed"] for a in answers if a["dispensed"]]
    assert all(not kept for t, _, kept in listener.messages if t == MOMENT), "a moment is never retained"


@pytest.mark.slow
def test_a_broker_back_after_an_outage_flashes_no_light_for_what_happened_meanwhile(
    kitchen: tuple[RunningDaemon, Listener], broker: Broker
) -> None:
    table, listener = kitchen
    broker.stop()
    for _ in range(6):  # the table plays on
        press(table)
    broker.start()
    wait_until(lambda: len(listener.on("uno-launcher/kitchen/event/button.pressed")) == 6, timeout=30)
    wait_until(lambda: listener.on("uno-launcher/kitchen/state/presses")[-1:] == [b"6"])  # the outbox caught up
    assert listener.on(MOMENT) == [], "a moment is news or nothing"
    press(table)
    wait_until(lambda: len(listener.on(MOMENT)) == 1)  # and the next press is told at once


@pytest.mark.slow
def test_the_pis_under_voltage_is_a_problem_sensor(tmp_path: Path, broker: Broker) -> None:
    root = tmp_path / "root"
    throttled(root, "0x50005")  # under-voltage now
    config = Config().replace("state", dir=str(tmp_path / "state")).replace("web", port=0)
    config = config.replace("mqtt", broker=broker.url, table="kitchen")
    listener = Listener(broker)
    daemon = Daemon(config, sysfs=root)
    topic = "uno-launcher/kitchen/state/under_voltage"
    try:
        daemon.power.poll()
        wait_until(lambda: b"ON" in listener.on(topic))
        throttled(root, "0x50000")  # the supply recovered (it happened since boot)
        daemon.power.poll()
        wait_until(lambda: listener.on(topic)[-1:] == [b"OFF"])
        body = json.loads(listener.on(DEVICE)[-1])
        assert body["cmps"]["under_voltage"]["state_topic"] == topic
    finally:
        daemon.close()
        listener.close()


# --- the blueprint ---------------------------------------------------------------------------------------------------


class Input(str):
    """`!input name` in a blueprint."""


class BlueprintLoader(yaml.SafeLoader):
    pass


BlueprintLoader.add_constructor("!input", lambda loader, node: Input(loader.construct_scalar(node)))  # type: ignore[arg-type]


def blueprint_texts() -> list[str]:
    """The blueprint as a file, and as docs/HOME.md shows it: the same text."""
    home_md = (ROOT / "docs" / "HOME.md").read_text(encoding="utf-8")
    shown = re.findall(r"```yaml\n(blueprint:.*?)```", home_md, re.S)
    return [BLUEPRINT.read_text(encoding="utf-8"), *shown]


def test_the_blueprint_is_in_home_md_as_in_its_file() -> None:
    texts = blueprint_texts()
    assert len(texts) == 2 and texts[0] == texts[1]


def test_the_blueprint_triggers_on_each_moment_and_acts_on_the_event_types_it_names() -> None:
    blueprint = yaml.load(blueprint_texts()[0], Loader=BlueprintLoader)  # a SafeLoader that knows `!input`
    inputs = blueprint["blueprint"]["input"]
    assert blueprint["blueprint"]["domain"] == "automation"
    # A state trigger of the event entity: its state is the time of the last event, so every event changes it,
    # two fires of the same size too (an `attribute: event_type` trigger would miss the second).
    (trigger,) = blueprint["triggers"]
    assert trigger["trigger"] == "state" and "attribute" not in trigger
    assert isinstance(trigger["entity_id"], Input) and "unavailable" in trigger["not_from"]
    (only,) = inputs[trigger["entity_id"]]["selector"]["entity"]["filter"]
    assert only == {"integration": "mqtt", "domain": "event"}
    named: dict[str, str] = {}
    for branch in blueprint["actions"][0]["choose"]:
        (condition,) = branch["conditions"]
        for kind in re.findall(r"'([a-z_]+)'", condition["value_template"]):
            named[kind] = json.dumps(branch["sequence"])
    assert set(named) <= set(EVENT_TYPES), "only the event entity's event types"
    assert "light.turn_on" in named["fire"] and "light.turn_on" in named["jackpot"]
    assert "tts.speak" in named["game_won"] and "attributes.winner" in named["game_won"]
