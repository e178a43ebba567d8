"""A table switched off, and the others vouch for its rounds (issue #46, audited against main): with the table that
scored a round off, a broker that lost it (a power cut before its autosave, a new broker) gave a table joining
nothing of it, and an old version a client put back on the broker was believed by that table while the others held
the newest, each table having told only the rounds it scored. Now each tells every round it holds at its connection
and answers an older version of any of them with the newest. Also: HOME.md's ACL and broker settings, as written,
let the tables do this."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from launcher.game.rotation import Rotation
from tests.conftest import start_daemon, wait_until
from tests.mosquitto import Broker
from tests.test_mqtt import mqtt_toml, table_dir
from tests.test_red_team_46 import broker
from tests.test_tournament import join
from tests.test_tournament_broker import connected, score, set_up, start_table, started
from tests.test_tournament_broker import rounds as daemon_rounds
from tests.test_tournament_trust import EIGHT, Table, rounds
from tests.virtual_clock import VirtualClock

__all__ = ["broker"]  # the red team's fixture, taken by name (not a copy of it)

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
