"""Issue #46 audited against main: the attacks a stranger on the broker would try that no test had tried yet.

A payload nested just deep enough to parse but not to be checked raised past the refusal log: a traceback per
message, none of them counted in the 30 lines a minute."""

from __future__ import annotations

import itertools
import logging
from contextlib import ExitStack
from pathlib import Path

import pytest

from launcher.config import from_mapping
from launcher.events import EventBus
from launcher.game.rotation import TournamentError
from launcher.home.home_assistant import HomeAssistant
from launcher.home.mqtt import MqttBridge, Snapshot
from launcher.home.mqtt_link import REFUSALS_PER_MINUTE, MqttLink
from launcher.home.tournament import TournamentBook
from launcher.home.tournament_post import MAX_MESSAGE_BYTES, TournamentPost
from launcher.store import Store
from tests.mosquitto import Broker, Listener, free_port
from tests.test_red_team_46 import DEVICE, ROOT, broker, inbox_done, kitchen_on, tables
from tests.test_tournament_trust import Table, set_up_and_join
from tests.virtual_clock import VirtualClock

__all__ = ["broker", "tables"]  # the red team's fixtures, taken by name (not a copy of them)

ENVELOPE = '{"from":"garden","body":{"x":%s},"mac":"%s"}'


def nested(depth: int) -> bytes:
    """A signed message's shape whose body holds lists `depth` deep, a forged MAC."""
    return (ENVELOPE % ("[" * depth + "]" * depth, "0" * 64)).encode()


DEEPEST = max(d for d in range(1, 4096) if len(nested(d)) <= MAX_MESSAGE_BYTES)


def test_a_payload_nested_to_any_depth_a_message_may_hold_is_refused_by_name(tables: tuple[Table, Table]) -> None:
    kitchen, garden = tables
    id = set_up_and_join(kitchen, garden)
    before = kitchen.view()
    for levels in ([id, "setup"], [id, "round", "garden", "1"], [id, "ask", "garden"]):
        for depth in range(1, DEEPEST + 1):
            with pytest.raises(TournamentError):  # never RecursionError: that passes every refusal by
                kitchen.post.receive(levels, nested(depth))
    assert kitchen.view() == before


@pytest.mark.slow
def test_a_flood_of_nested_payloads_is_refusal_lines_never_a_traceback(
    tmp_path: Path, broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="launcher")
    with kitchen_on(tmp_path, broker) as kitchen, ExitStack() as stack:
        attacker = Listener(broker, "homeassistant/device/#", client_id="attacker")
        stack.callback(attacker.close)
        depths = range(850, 1050)  # the depths where the inbox thread's stack runs out between parsing and checking
        for depth in depths:
            attacker.publish(f"{ROOT}/{kitchen.id}/round/garden/1", nested(depth))
        inbox_done(attacker)
        lines = [r for r in caplog.records if r.name.startswith("launcher.home.mqtt")]
        tracebacks = [r for r in lines if r.exc_info]
        assert not tracebacks, f"{len(tracebacks)} tracebacks for {len(depths)} nested messages"
        assert len(lines) <= REFUSALS_PER_MINUTE + 1, f"{len(lines)} log lines for {len(depths)} nested messages"
        assert kitchen.book.told(kitchen.id, "garden") == {}
        assert attacker.on(DEVICE), "the inbox still works"


def test_the_bridge_logs_an_unreachable_broker_within_10_s_then_at_growing_intervals(
    tmp_path: Path, clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The link's schedule (tests/test_mqtt_link.py) kept by the bridge's own inbox thread, on the bridge's clock:
    nothing listens at the broker's port, and the table says so within 10 s, then less and less often."""
    caplog.set_level(logging.WARNING, logger="launcher.home.mqtt_link")
    mqtt = from_mapping({"mqtt": {"broker": f"mqtt://127.0.0.1:{free_port()}", "table": "kitchen"}}).mqtt
    store = Store(tmp_path / "launcher.sqlite3")
    bus = EventBus(store)
    bridge = MqttBridge(
        mqtt,
        bus=bus,
        store=store,
        tournaments=TournamentPost(TournamentBook(store, bus, table="kitchen"), check_store=lambda: None),
        link=MqttLink(mqtt.broker, clock=clock),
        snapshot=lambda: Snapshot(hopper=10, fault=False),
        new_shuffle=lambda: None,
        home=HomeAssistant(mqtt, page_url=lambda: None),
        clock=clock,
    )

    def told() -> list[float]:
        return [float(r.getMessage().split()[4]) for r in caplog.records if "no MQTT broker for" in r.getMessage()]

    try:
        bridge.start()
        clock.run_until(lambda: bool(told()), within=10)
        assert told() and told()[0] <= 10
        clock.run_until(lambda: len(told()) >= 5, within=200)
        times = told()
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert len(times) >= 5 and all(later > earlier for earlier, later in itertools.pairwise(gaps)), times
        assert bridge.link.view()["state"] == "trying"
    finally:
        bridge.close()
        bus.close()
