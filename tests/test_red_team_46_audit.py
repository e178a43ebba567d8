"""Issue #46 audited against main: the attacks a stranger on the broker would try, and the promises, that no test
had tried yet. Found and closed: a payload nested just deep enough to parse but not to be checked raised past the
refusal log (a traceback per message, none counted in the 30 lines a minute); a tournament's round was no moment
for Home Assistant. Held, now tested: the bridge's own thread logs a broker it cannot reach within 10 s, then less
and less often. (A table switched off, and the others vouching for its rounds: tests/test_tournament_table_off.py.)"""

from __future__ import annotations

import itertools
import json
import logging
from pathlib import Path

import pytest

from launcher.config import from_mapping
from launcher.events import Event, EventBus, EventType
from launcher.game.rotation import TournamentError
from launcher.home.home_assistant import HomeAssistant
from launcher.home.moments import EVENT_TYPES, moment_messages
from launcher.home.mqtt import MqttBridge, Snapshot
from launcher.home.mqtt_link import MqttLink
from launcher.home.tournament import TournamentBook
from launcher.home.tournament_post import MAX_MESSAGE_BYTES, TournamentPost
from launcher.store import Store
from tests.conftest import RunningDaemon, wait_until
from tests.mosquitto import Broker, Listener, free_port
from tests.test_home_assistant import MOMENT, kitchen
from tests.test_red_team_46 import ROOT, broker, flood_refused_quietly, kitchen_on, tables
from tests.test_tournament import FOUR
from tests.test_tournament_trust import Table, set_up_and_join
from tests.virtual_clock import VirtualClock

__all__ = ["broker", "kitchen", "tables"]  # the red team's fixtures, taken by name (not a copy of them)

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
    with kitchen_on(tmp_path, broker) as kitchen:
        # The depths where the inbox thread's stack runs out between parsing a body and encoding it for its MAC.
        flood = [(f"{ROOT}/{kitchen.id}/round/garden/1", nested(depth)) for depth in range(850, 1050)]
        flood_refused_quietly(broker, caplog, flood)
        assert kitchen.book.told(kitchen.id, "garden") == {}


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


# --- Home Assistant: a tournament's rounds are moments of the table that scores them ------------------------------

STANDINGS = [{"player": "Bo", "points": 40, "rounds": 2}, {"player": "Ann", "points": 25, "rounds": 2}]


def tournament_round(origin: str | None, points: dict[str, int] | None, version: int = 1) -> Event:
    data = {"tournament": "0123456789ab", "table": "kitchen", "number": 3, "points": points, "version": version}
    return Event.of(9, 1000.0, EventType.TOURNAMENT_ROUND, {**data, "origin": origin, "standings": STANDINGS})


def test_a_tournament_round_scored_here_is_a_moment_with_the_leader_and_one_from_elsewhere_is_none() -> None:
    scored = {"Ann": 10, "Bo": 20, "Cy": 0, "Di": 5}
    (message,) = moment_messages("kitchen", tournament_round("kitchen", scored), now=1000.0)
    body = json.loads(message.payload)
    assert body["event_type"] == "tournament_round" and "tournament_round" in EVENT_TYPES
    assert (body["round"], body["points"], body["corrected"]) == (3, scored, False)
    assert (body["leader"], body["leader_points"]) == ("Bo", 40)
    (taken_back,) = moment_messages("kitchen", tournament_round("kitchen", None, version=2), now=1000.0)
    assert json.loads(taken_back.payload)["points"] is None and json.loads(taken_back.payload)["corrected"] is True
    # Heard from the broker (the garden's own device tells its rounds), or replayed to this table: not its moment.
    assert moment_messages("kitchen", tournament_round(None, scored), now=1000.0) == []
    assert moment_messages("garden", tournament_round("kitchen", scored), now=1000.0) == []


@pytest.mark.slow
def test_a_tournament_round_scored_at_the_table_reaches_home_assistant_as_a_moment(
    kitchen: tuple[RunningDaemon, Listener],
) -> None:
    table, listener = kitchen
    status, answer = table.post("/api/tournaments", {"players": FOUR, "tables": ["kitchen"]})
    assert status == 201, answer
    seats = answer["tournament"]["tables"][0]["seats"]
    scored = dict(zip(seats, (30, 0, 25, 5), strict=True))  # the first seat ahead of everyone
    status, answer = table.post("/api/tournament/rounds", {"number": 1, "points": scored})
    assert status == 201, answer
    (told,) = wait_until(lambda: [json.loads(p) for p in listener.on(MOMENT)])
    assert told["event_type"] == "tournament_round" and told["points"] == scored
    assert (told["leader"], told["leader_points"]) == (seats[0], 30)
