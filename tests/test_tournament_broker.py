"""Tables that only believe each other, over Debian's Mosquitto (issue #46): two and three daemons, a client on the
broker that forges and replays, a broker killed -9 with its persistence wiped, a table away for half the
tournament, and the broker's link in /api/state."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from launcher.game.rotation import Rotation
from tests.conftest import FAST_SIM_TOML, RunningDaemon, start_daemon, wait_until
from tests.mosquitto import Broker, Listener, free_port, running_broker
from tests.test_mqtt import mqtt_toml, table_dir
from tests.test_tournament import EIGHT, join, points_for

TWELVE = [*EIGHT, "Ivy", "Jo", "Kai", "Lu"]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    with running_broker(tmp_path / "broker") as running:
        yield running


def start_table(tmp_path: Path, broker: Broker, name: str) -> RunningDaemon:
    return start_daemon(table_dir(tmp_path, name), mqtt_toml(broker, name))


def started(stack: ExitStack, tmp_path: Path, broker: Broker, *names: str) -> list[RunningDaemon]:
    """A daemon per table name on the broker, each closed with `stack`."""
    daemons = []
    for name in names:
        daemons.append(start_table(tmp_path, broker, name))
        stack.callback(daemons[-1].close)
    return daemons


def connected(daemon_process: RunningDaemon) -> bool:
    return bool(daemon_process.get("/api/state")["mqtt"]["state"] == "connected")


def rounds(daemon_process: RunningDaemon) -> list[tuple[str, int, dict[str, int], int]]:
    view = daemon_process.get("/api/tournament")["tournament"] or {"rounds": []}
    return [(r["table"], r["number"], r["points"], r["version"]) for r in view["rounds"]]


def score(daemon_process: RunningDaemon, table: str, players: list[str], tables: list[str], number: int) -> None:
    seats = list(Rotation.of(players, tables).seats_at(table, number).seats)
    status, answer = daemon_process.post(
        "/api/tournament/rounds", {"number": number, "points": points_for(table, number, seats)}
    )
    assert status == 201, answer


def set_up(first: RunningDaemon, others: list[RunningDaemon], players: list[str], tables: list[str]) -> str:
    status, answer = first.post("/api/tournaments", {"players": players, "tables": tables})
    assert status == 201, answer
    id: str = answer["tournament"]["id"]
    for other in others:
        join(other, first)
        wait_until(lambda o=other: (o.get("/api/tournament")["tournament"] or {}).get("id") == id)
    return id


@pytest.mark.slow
def test_forged_rounds_setups_corrections_replays_and_commands_change_nothing_at_either_table(
    tmp_path: Path, broker: Broker
) -> None:
    with ExitStack() as stack:
        kitchen, garden = started(stack, tmp_path, broker, "kitchen", "garden")
        spy = Listener(broker, "uno-launcher/tournament/#", client_id="forger")
        stack.callback(spy.close)
        tables = ["kitchen", "garden"]
        id = set_up(kitchen, [garden], EIGHT, tables)
        score(kitchen, "kitchen", EIGHT, tables, 1)
        wait_until(lambda: len(rounds(garden)) == 1)
        kitchen_one = f"uno-launcher/tournament/{id}/round/kitchen/1"
        (signed_v1,) = wait_until(lambda: spy.on(kitchen_one))
        seats = list(Rotation.of(EIGHT, tables).seats_at("kitchen", 1).seats)
        status, _ = kitchen.request("PUT", "/api/tournament/rounds/1", {"points": dict.fromkeys(seats, 50)})
        assert status == 200
        wait_until(lambda: [r[3] for r in rounds(garden)] == [2])
        before = (rounds(kitchen), rounds(garden))
        made_up = {"tournament": id, "table": "garden", "number": 1, "points": dict.fromkeys(EIGHT[:4], 999)}
        forged = [
            (f"uno-launcher/tournament/{id}/round/garden/1", json.dumps(made_up).encode()),  # the forgery
            (
                f"uno-launcher/tournament/{id}/round/garden/1",
                json.dumps({"from": "garden", "body": made_up, "mac": "0" * 64}).encode(),
            ),
            (
                f"uno-launcher/tournament/{id}/setup",
                json.dumps({"tournament": id, "players": EIGHT, "tables": tables, "created_ts": 9.9e10}).encode(),
            ),
            (
                "uno-launcher/tournament/0123456789ab/setup",
                json.dumps(
                    {"tournament": "0123456789ab", "players": EIGHT, "tables": tables, "created_ts": 9.9e10}
                ).encode(),
            ),
            (kitchen_one, signed_v1),  # a replay of the kitchen's own version 1, after its correction
            (
                kitchen_one,
                json.dumps(
                    {"from": "kitchen", "body": {"number": 1, "version": 3, "points": None}, "mac": "1" * 64}
                ).encode(),
            ),
            (f"uno-launcher/tournament/{id}/ask/garden", b'{"from":"garden","body":{"nonce":"x"},"mac":""}'),
            ("uno-launcher/kitchen/command/new_shuffle", b"PRESS"),  # not allowed at this table
            (f"uno-launcher/tournament/{id}/round/garden/2", b"[" * 1_000_000),  # a megabyte: not even queued
        ]
        for topic, payload in forged:
            spy.publish(topic, payload, retain=True)
        wait_until(lambda: "".join(garden.output).count("refused") >= 6)
        wait_until(lambda: "".join(kitchen.output).count("refused") >= 6)
        wait_until(lambda: "1000000 bytes is more than it takes" in "".join(garden.output))
        assert (rounds(kitchen), rounds(garden)) == before
        assert kitchen.get("/api/state")["shuffle"]["number"] == 1
        # A table started now, with every forgery retained on the broker, believes none of them either.
        garden.close()
        garden = start_table(tmp_path, broker, "garden")
        stack.callback(garden.close)
        wait_until(lambda: connected(garden))
        assert rounds(garden) == before[1] and garden.get("/api/tournament")["tournament"]["id"] == id
        # The real round 1 of the garden is still the garden's to score, and both tables take it.
        score(garden, "garden", EIGHT, tables, 1)
        wait_until(lambda: len(rounds(kitchen)) == 2)
        assert rounds(kitchen) == rounds(garden)
        # A new tournament set up here is the one answered and kept: no timestamp from the broker wins.
        status, answer = kitchen.post("/api/tournaments", {"players": EIGHT, "tables": tables})
        assert status == 201 and answer["tournament"]["id"] not in (id, "0123456789ab")
        assert kitchen.get("/api/tournament")["tournament"]["id"] == answer["tournament"]["id"]
        for daemon in (kitchen, garden):
            assert "Traceback" not in "".join(daemon.output)


@pytest.mark.slow
def test_a_broker_killed_with_its_persistence_wiped_is_filled_again_and_the_table_that_was_down_catches_up(
    tmp_path: Path, broker: Broker
) -> None:
    """The issue's power cut: with the garden down, the kitchen scores rounds 1-2; the broker is killed -9 and
    comes back holding nothing; the garden, started again, gets those rounds all the same."""
    tables = ["kitchen", "garden"]
    with ExitStack() as stack:
        kitchen = start_table(tmp_path, broker, "kitchen")
        stack.callback(kitchen.close)
        garden = start_table(tmp_path, broker, "garden")
        set_up(kitchen, [garden], EIGHT, tables)
        score(garden, "garden", EIGHT, tables, 1)
        wait_until(lambda: len(rounds(kitchen)) == 1)
        garden.close()
        score(kitchen, "kitchen", EIGHT, tables, 1)
        score(kitchen, "kitchen", EIGHT, tables, 2)
        wait_until(lambda: kitchen.get("/api/state")["mqtt"]["state"] == "connected")
        broker.kill_and_wipe()
        wait_until(lambda: kitchen.get("/api/state")["mqtt"]["state"] == "trying")
        broker.start()
        wait_until(lambda: connected(kitchen), timeout=40)
        garden = start_table(tmp_path, broker, "garden")
        stack.callback(garden.close)
        wait_until(lambda: len(rounds(garden)) == 3, timeout=20)
        assert rounds(garden) == rounds(kitchen)
        # The broker holds every round again, retained, for whoever comes next.
        late = Listener(broker, "uno-launcher/tournament/#", client_id="late")
        stack.callback(late.close)
        wait_until(lambda: len({t for t, _, kept in late.messages if kept and "/round/" in t}) == 3)


@pytest.mark.slow
def test_three_tables_one_away_for_half_the_tournament_all_end_with_every_round(tmp_path: Path, broker: Broker) -> None:
    tables = ["kitchen", "garden", "porch"]
    with ExitStack() as stack:
        daemons = {name: start_table(tmp_path, broker, name) for name in tables}
        for daemon in daemons.values():
            stack.callback(daemon.close)
        set_up(daemons["kitchen"], [daemons["garden"], daemons["porch"]], TWELVE, tables)
        daemons["porch"].close()
        for number in range(1, 5):
            for name in ("kitchen", "garden"):
                score(daemons[name], name, TWELVE, tables, number)
            if number == 2:
                broker.kill_and_wipe()  # the half the porch missed is on no broker any more
                broker.start()
        daemons["porch"] = porch = start_table(tmp_path, broker, "porch")
        stack.callback(porch.close)
        for number in range(1, 5):
            score(porch, "porch", TWELVE, tables, number)
        for daemon in daemons.values():
            wait_until(lambda d=daemon: len(rounds(d)) == 12, timeout=30)
        assert rounds(daemons["kitchen"]) == rounds(daemons["garden"]) == rounds(porch)


@pytest.mark.slow
def test_an_unreachable_broker_is_in_the_state_and_the_log_and_never_holds_the_table_up(tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there
    toml = FAST_SIM_TOML + f'\n[mqtt]\nbroker = "mqtt://127.0.0.1:{closed}"\ntable = "kitchen"\n'
    daemon = start_daemon(table_dir(tmp_path, "kitchen"), toml)
    try:
        link = wait_until(
            lambda: (
                (daemon.get("/api/state")["mqtt"] or {}).get("reason") != "not connected yet"
                and daemon.get("/api/state")["mqtt"]
            )
        )
        assert link["state"] == "trying" and "refused" in link["reason"].lower()
        wait_until(lambda: "no MQTT broker for" in "".join(daemon.output), timeout=20)
        assert daemon.post("/api/press", {})[0] == 200  # the table plays on
    finally:
        daemon.close()


@pytest.mark.slow
def test_a_wrong_password_is_refused_by_name_in_the_state_and_the_log(tmp_path: Path) -> None:
    directory = tmp_path / "broker"
    directory.mkdir()
    broker = Broker(directory)
    passwords = directory / "passwd"
    subprocess.run(["mosquitto_passwd", "-c", "-b", str(passwords), "kitchen", "right"], check=True)
    passwords.chmod(0o600)
    text = broker.config.read_text(encoding="utf-8").replace("allow_anonymous true", "allow_anonymous false")
    broker.config.write_text(text + f"password_file {passwords}\n", encoding="utf-8")
    broker.start()
    secret = tmp_path / "mqtt-password"
    secret.write_text("wrong\n", encoding="utf-8")
    toml = mqtt_toml(broker, "kitchen", f'username = "kitchen"\npassword_file = "{secret}"')
    daemon = start_daemon(table_dir(tmp_path, "kitchen"), toml)
    try:
        link = wait_until(
            lambda: daemon.get("/api/state")["mqtt"]["state"] == "refused" and daemon.get("/api/state")["mqtt"]
        )
        assert "password" in link["reason"].lower() or "authori" in link["reason"].lower()
        wait_until(lambda: "refuses this table" in "".join(daemon.output))
    finally:
        daemon.close()
        broker.stop()
