"""Issue #46 audited against main: the attacks a stranger on the broker would try, and the promises, that no test
had tried yet. Found and closed: a payload nested just deep enough to parse but not to be checked raised past the
refusal log (a traceback per message, none counted in the 30 lines a minute); with the table that scored a round
switched off, a broker that lost it gave a new table nothing of it, and an old version a client put back on the
broker was believed by a table joining then (each table told only the rounds it had scored); a tournament's round
was no moment for Home Assistant. Held, now tested: the bridge's own thread logs a broker it cannot reach within
10 s, then less and less often; HOME.md's ACL, as written, lets the tables do what they do."""

from __future__ import annotations

import itertools
import json
import logging
import re
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from launcher.config import from_mapping
from launcher.events import Event, EventBus, EventType
from launcher.game.rotation import Rotation, TournamentError
from launcher.home.home_assistant import HomeAssistant
from launcher.home.moments import EVENT_TYPES, moment_messages
from launcher.home.mqtt import MqttBridge, Snapshot
from launcher.home.mqtt_link import MqttLink
from launcher.home.tournament import TournamentBook
from launcher.home.tournament_post import MAX_MESSAGE_BYTES, TournamentPost
from launcher.store import Store
from tests.conftest import RunningDaemon, start_daemon, wait_until
from tests.mosquitto import Broker, Listener, free_port
from tests.test_home_assistant import MOMENT, kitchen
from tests.test_mqtt import mqtt_toml, table_dir
from tests.test_red_team_46 import ROOT, broker, flood_refused_quietly, kitchen_on, tables
from tests.test_tournament import FOUR, join
from tests.test_tournament_broker import connected, score, set_up, start_table, started
from tests.test_tournament_broker import rounds as daemon_rounds
from tests.test_tournament_trust import EIGHT, Table, rounds, set_up_and_join
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


# --- a table away: the others vouch for its rounds ------------------------------------------------------------------

TWELVE = [*EIGHT, "Ivy", "Jo", "Kai", "Lu"]
THREE = ["kitchen", "garden", "porch"]


@pytest.fixture
def three(tmp_path: Path, clock: VirtualClock) -> Iterator[tuple[Table, Table, Table]]:
    """The kitchen has set up a tournament of twelve at three tables and the garden has joined it; the porch is a
    new Pi whose admin has the code but has not typed it yet."""
    with ExitStack() as stack:
        tables = [Table(tmp_path / name, name, clock) for name in THREE]
        for table in tables:
            stack.callback(table.bus.close)
        kitchen, garden, porch = tables
        kitchen.book.set_up(TWELVE, THREE)
        garden.book.join(code_of(kitchen))
        garden.take(kitchen.outbox())
        yield kitchen, garden, porch


def code_of(table: Table) -> str:
    code = table.book.code()
    assert code is not None
    return code


def scores(table: str, number: int, value: int) -> dict[str, int]:
    return dict.fromkeys(Rotation.of(TWELVE, THREE).seats_at(table, number).seats, value)


def porch_joins(porch: Table, code: str, retained: dict[str, str], others: list[Table]) -> None:
    """The porch's admin types the code: the porch reads what the broker holds, asks, and the tables that are on
    answer (their answers retained too, as the bridge publishes them)."""
    porch.book.join(code)
    setups = [(t, p) for t, p in retained.items() if t.endswith("/setup")]
    porch.take(setups + [(t, p) for t, p in retained.items() if not t.endswith("/setup")])
    asks = porch.post.asks()
    for other in others:
        answers = other.take(asks)
        retained.update(answers)
        porch.take(answers)


def test_a_broker_wiped_while_a_table_is_off_still_gives_a_new_table_that_tables_rounds(
    three: tuple[Table, Table, Table],
) -> None:
    kitchen, garden, porch = three
    kitchen.book.score(1, scores("kitchen", 1, 30))
    kitchen.book.score(2, scores("kitchen", 2, 20))
    garden.book.score(1, scores("garden", 1, 15))
    garden.take(kitchen.outbox())
    kitchen.take(garden.outbox())
    # The kitchen's Pi is switched off for the night; the broker loses power before its autosave and comes back
    # empty; the garden connects again and tells it what it holds.
    retained = dict(garden.post.announcements())
    porch_joins(porch, code_of(kitchen), retained, [garden])
    assert rounds(porch) == rounds(garden) == rounds(kitchen), "the porch lacks what only the kitchen scored"


def test_an_old_version_replayed_while_its_table_is_off_never_splits_a_table_that_joins(
    three: tuple[Table, Table, Table],
) -> None:
    kitchen, garden, porch = three
    retained: dict[str, str] = {}
    kitchen.book.score(1, scores("kitchen", 1, 50))
    first = kitchen.outbox()
    retained.update(first)
    garden.take(first)
    kitchen.book.correct(1, scores("kitchen", 1, 5))
    corrected = kitchen.outbox()
    retained.update(corrected)
    garden.take(corrected)
    # The kitchen is off; a client on the broker puts the round's first version back, retained (it read it there).
    replay = [(t, p) for t, p in first if t.endswith("/round/kitchen/1")]
    retained.update(replay)
    retained.update(garden.take(replay))
    porch_joins(porch, code_of(kitchen), retained, [garden])
    assert rounds(porch) == rounds(garden) == rounds(kitchen), "the porch believes the replay"
    (topic,) = [t for t, _ in replay]
    assert json.loads(retained[topic])["body"]["version"] == 2, "the broker still holds the replay for the next one"


@pytest.mark.slow
def test_three_daemons_the_scorer_off_and_the_broker_wiped_a_table_joining_gets_its_rounds(
    tmp_path: Path, broker: Broker
) -> None:
    with ExitStack() as stack:
        kitchen, garden = started(stack, tmp_path, broker, "kitchen", "garden")
        set_up(kitchen, [garden], TWELVE, THREE)
        score(kitchen, "kitchen", TWELVE, THREE, 1)
        score(kitchen, "kitchen", TWELVE, THREE, 2)
        score(garden, "garden", TWELVE, THREE, 1)
        wait_until(lambda: len(daemon_rounds(garden)) == 3 and len(daemon_rounds(kitchen)) == 3)
        kitchen.close()  # switched off for the night
        broker.kill_and_wipe()  # and the broker's power cut, before its autosave
        wait_until(lambda: garden.get("/api/state")["mqtt"]["state"] == "trying")
        broker.start()
        wait_until(lambda: connected(garden), timeout=40)
        porch = start_table(tmp_path, broker, "porch")
        stack.callback(porch.close)
        join(porch, garden)  # the garden's admin reads the code out
        wait_until(lambda: len(daemon_rounds(porch)) == 3, timeout=30)
        assert daemon_rounds(porch) == daemon_rounds(garden)


def home_md_block(after: str) -> str:
    """The first fenced block of docs/HOME.md after the line that starts with `after`."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "HOME.md").read_text(encoding="utf-8")
    found = re.search(re.escape(after) + r".*?\n```[a-z]*\n(.*?)```", text, re.S)
    assert found is not None, after
    return found.group(1)


class Reader:
    """A client of the broker with a user of its own, keeping the retained messages it is given."""

    def __init__(self, broker: Broker, user: str, password: str, topic: str) -> None:
        self.retained: dict[str, bytes] = {}
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=user, protocol=paho.MQTTv5)
        self.client.username_pw_set(user, password)
        self.client.on_message = self._on_message
        self.client.on_connect = lambda client, *_: client.subscribe(topic, qos=1)
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()

    def _on_message(self, client: Any, userdata: Any, message: paho.MQTTMessage) -> None:
        if message.retain:
            self.retained[message.topic] = bytes(message.payload)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.mark.slow
def test_with_home_mds_acl_a_table_refills_the_broker_with_the_rounds_of_a_table_that_is_off(tmp_path: Path) -> None:
    directory = tmp_path / "broker"
    directory.mkdir()
    broker = Broker(directory)
    passwords, acl = directory / "passwd", directory / "acl"
    for i, user in enumerate(("kitchen", "garden", "homeassistant")):
        create = ["-c"] if i == 0 else []
        subprocess.run(["mosquitto_passwd", *create, "-b", str(passwords), user, f"{user}-pw"], check=True)
    acl.write_text(home_md_block("Let each user write only what is theirs"), encoding="utf-8")
    for path in (passwords, acl):
        path.chmod(0o600)
    settings = home_md_block("And `/etc/mosquitto/conf.d/uno-launcher.conf`").replace(
        "/etc/mosquitto/", f"{directory}/"
    )
    text = broker.config.read_text(encoding="utf-8").replace("allow_anonymous true\n", "")
    broker.config.write_text(text + settings.replace("listener 1883\n", ""), encoding="utf-8")
    tables = ["kitchen", "garden"]
    with ExitStack() as stack:
        broker.start()
        stack.callback(broker.stop)
        daemons = {}
        for name in tables:
            secret = tmp_path / f"{name}-password"
            secret.write_text(f"{name}-pw\n", encoding="utf-8")
            extra = f'username = "{name}"\npassword_file = "{secret}"'
            daemons[name] = start_daemon(table_dir(tmp_path, name), mqtt_toml(broker, name, extra))
            stack.callback(daemons[name].close)
        kitchen, garden = daemons["kitchen"], daemons["garden"]
        id = set_up(kitchen, [garden], EIGHT, tables)
        score(kitchen, "kitchen", EIGHT, tables, 1)
        score(garden, "garden", EIGHT, tables, 1)
        wait_until(lambda: len(daemon_rounds(garden)) == 2 and len(daemon_rounds(kitchen)) == 2)
        kitchen.close()
        broker.kill_and_wipe()
        wait_until(lambda: garden.get("/api/state")["mqtt"]["state"] == "trying")  # else "connected" is the old link
        broker.start()
        wait_until(lambda: connected(garden), timeout=40)
        reader = Reader(broker, "homeassistant", "homeassistant-pw", "uno-launcher/tournament/#")
        stack.callback(reader.close)
        wanted = {f"uno-launcher/tournament/{id}/{at}" for at in ("setup", "round/kitchen/1", "round/garden/1")}
        wait_until(lambda: wanted <= set(reader.retained), timeout=20)


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
