"""Tournaments: four players at one table through the API, and eight players at two tables, each its own daemon,
sharing one tournament over a real Mosquitto, with the broker stopped and started in the middle."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.conftest import RunningDaemon, joined_client, local_daemon, start_daemon, wait_until
from tests.mosquitto import Broker, running_broker
from tests.sse_client import SseClient
from tests.test_mqtt import mqtt_toml, table_dir

FOUR = ["Ann", "Bo", "Cy", "Di"]
EIGHT = [*FOUR, "Ed", "Flo", "Gus", "Hu"]


def points_for(table: str, number: int, seats: list[str]) -> dict[str, int]:
    """Seats 0 and 2 partner; who collects, and how much, changes from round to round."""
    won = 5 + (number * 7 + len(table)) % 40
    winners = (seats[0], seats[2]) if number % 3 else (seats[1], seats[3])
    return {p: (won if p in winners else 0) for p in seats}


def test_four_players_at_one_table_play_twelve_rounds_through_the_api(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        client: FlaskClient = joined_client(daemon)
        assert client.get("/api/tournament").get_json() == {"table": "table", "tournament": None, "awaiting": None}
        reply = client.post("/api/tournaments", json={"players": FOUR, "tables": ["table"]})
        assert reply.status_code == 201, reply.get_json()
        partners: Counter[frozenset[str]] = Counter()
        totals = dict.fromkeys(FOUR, 0)
        first_seats = client.get("/api/tournament").get_json()["tournament"]["tables"][0]["seats"]
        for number in range(1, 13):
            (table,) = client.get("/api/tournament").get_json()["tournament"]["tables"]
            assert table["next_round"] == number
            seats = table["seats"]
            partners.update([frozenset((seats[0], seats[2])), frozenset((seats[1], seats[3]))])
            points = points_for("table", number, seats)
            for p, v in points.items():
                totals[p] += v
            reply = client.post("/api/tournament/rounds", json={"number": number, "points": points})
            assert reply.status_code == 201, reply.get_json()
        view = client.get("/api/tournament").get_json()["tournament"]
        assert len(view["rounds"]) == 12  # one cycle; the next goes on from round 13, the totals carried
        assert {k: view["tables"][0][k] for k in ("next_round", "cycle", "cycle_round")} == {
            "next_round": 13,
            "cycle": 2,
            "cycle_round": 1,
        }
        assert {s["player"]: s["points"] for s in view["standings"]} == totals
        assert view["tables"][0]["seats"] == first_seats  # the second cycle seats everyone as the first did
        assert set(partners.values()) == {4} and len(partners) == 6  # each pair four rounds, once
        # Kept: the export has it, and a restart reads it back.
        exported = client.get("/api/tournaments/export")
        assert exported.get_json()["tournaments"][0]["standings"] == view["standings"]
        rows = client.get("/api/tournaments/export?format=csv").get_data(as_text=True).lstrip("\ufeff").splitlines()
        assert rows[0] == "tournament,table,round,player,points,total" and len(rows) == 1 + 12 * 4
        assert daemon.app.test_client().get("/api/tournaments/export").status_code == 401  # not joined
        assert client.get("/api/tournaments/export?format=xml").status_code == 400
    with local_daemon(tmp_path) as again:  # kept over a restart
        assert again.tournaments.view()["tournament"]["standings"] == view["standings"]
        after = again.tournaments.score(13, {"Ann": 7, **dict.fromkeys(FOUR[1:], 0)})["tournament"]
        assert {s["player"]: s["points"] for s in after["standings"]} == {**totals, "Ann": totals["Ann"] + 7}
        assert (after["tables"][0]["cycle"], after["tables"][0]["cycle_round"], after["rounds"][-1]["cycle"]) == (
            2,
            2,
            2,
        )


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"players": FOUR[:3], "tables": ["table"]}, 400, "seat_count"),
        ({"players": FOUR, "tables": ["garden"]}, 400, "unknown_table"),
        ({"players": "Ann", "tables": ["table"]}, 400, "bad_tournament"),
        ({"players": FOUR}, 400, "bad_tournament"),
        ({"players": FOUR, "tables": ["table"], "rounds": 3}, 400, "bad_tournament"),
    ],
)
def test_a_setup_refused_says_why_by_code(tmp_path: Path, body: dict[str, Any], status: int, code: str) -> None:
    with local_daemon(tmp_path) as daemon:
        reply = joined_client(daemon).post("/api/tournaments", json=body)
        assert (reply.status_code, reply.get_json()["error"]["code"]) == (status, code)


def test_a_round_refused_says_why_and_changes_nothing(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        client = joined_client(daemon)
        round_one = {"number": 1, "points": dict.fromkeys(FOUR, 0)}
        reply = client.post("/api/tournament/rounds", json=round_one)
        assert (reply.status_code, reply.get_json()["error"]["code"]) == (409, "no_tournament")
        client.post("/api/tournaments", json={"players": FOUR, "tables": ["table"]})
        for body, status, code in [
            ({"number": 2, "points": dict.fromkeys(FOUR, 0)}, 409, "not_next_round"),
            ({"number": 1, "points": {"Ann": 1}}, 400, "wrong_players"),
            ({"number": 1, "points": {**dict.fromkeys(FOUR, 0), "Ann": "lots"}}, 400, "bad_points"),
            ({"number": "1", "points": dict.fromkeys(FOUR, 0)}, 400, "bad_round"),
        ]:
            reply = client.post("/api/tournament/rounds", json=body)
            assert (reply.status_code, reply.get_json()["error"]["code"]) == (status, code), body
        assert client.get("/api/tournament").get_json()["tournament"]["rounds"] == []
        assert client.post("/api/tournament/rounds", json=round_one).status_code == 201
        reply = client.post("/api/tournament/rounds", json=round_one)  # sent twice: the second is refused
        assert (reply.status_code, reply.get_json()["error"]["code"]) == (409, "not_next_round")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    with running_broker(tmp_path / "broker") as running:
        yield running


def join(table: RunningDaemon, first: RunningDaemon) -> None:
    """`table`'s admin types the code `first`'s admin page shows."""
    status, answer = first.request("GET", "/api/tournament/code", admin=True)
    assert status == 200, answer
    status, answer = table.request("POST", "/api/tournaments/join", {"code": answer["code"]}, admin=True)
    assert status == 200, answer


def score_next(daemon_process: RunningDaemon, table: str) -> dict[str, int]:
    view = daemon_process.get("/api/tournament")["tournament"]
    (mine,) = [t for t in view["tables"] if t["table"] == table]
    points = points_for(table, mine["next_round"], mine["seats"])
    status, answer = daemon_process.post("/api/tournament/rounds", {"number": mine["next_round"], "points": points})
    assert status == 201, answer
    return points


@pytest.mark.slow
def test_eight_players_at_two_tables_play_28_rounds_each_over_the_broker_through_a_restart_of_it(
    tmp_path: Path, broker: Broker
) -> None:
    kitchen = start_daemon(table_dir(tmp_path, "kitchen"), mqtt_toml(broker, "kitchen"))
    garden = start_daemon(table_dir(tmp_path, "garden"), mqtt_toml(broker, "garden"))
    stream = SseClient(garden.url, cookie=garden.joined.table_cookie)
    try:
        status, answer = kitchen.post("/api/tournaments", {"players": EIGHT, "tables": ["kitchen", "garden"]})
        assert status == 201, answer
        id = answer["tournament"]["id"]
        join(garden, kitchen)
        wait_until(lambda: (garden.get("/api/tournament")["tournament"] or {}).get("id") == id)
        totals: Counter[str] = Counter()
        partners: Counter[frozenset[str]] = Counter()
        for number in range(1, 29):
            if number == 15:
                broker.stop()  # both tables play on
            if number == 19:
                broker.start()
            for daemon, table in ((kitchen, "kitchen"), (garden, "garden")):
                points = score_next(daemon, table)
                totals.update(points)
                winners = [p for p, v in points.items() if v]
                seats = [p for p in points]
                partners[frozenset(winners)] += 1
                partners[frozenset(p for p in seats if p not in winners)] += 1
        for daemon in (kitchen, garden):
            wait_until(lambda d=daemon: len(d.get("/api/tournament")["tournament"]["rounds"]) == 56, timeout=30)
            view = daemon.get("/api/tournament")["tournament"]
            assert [(t["next_round"], t["cycle"]) for t in view["tables"]] == [(29, 2), (29, 2)]
            assert {s["player"]: s["points"] for s in view["standings"]} == dict(totals)
            assert all(s["rounds"] == 28 for s in view["standings"])
        assert set(partners.values()) == {4}
        assert set(partners) == {frozenset(p) for p in itertools.combinations(EIGHT, 2)}
        # Every round of the kitchen was an event on the garden's phones' stream.
        heard = {
            (e["data"]["table"], e["data"]["number"]) for _, e, _ in stream.events if e["type"] == "tournament.round"
        }
        assert {("kitchen", n) for n in range(1, 29)} <= heard
    finally:
        stream.close()
        kitchen.close()
        garden.close()


# --- corrections, the join code and their budgets, through the API ------------------------------------------------


def test_this_tables_round_is_corrected_and_taken_back_through_the_api(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        client = joined_client(daemon)
        client.post("/api/tournaments", json={"players": FOUR, "tables": ["table"]})
        seats = client.get("/api/tournament").get_json()["tournament"]["tables"][0]["seats"]
        assert (
            client.post("/api/tournament/rounds", json={"number": 1, "points": dict.fromkeys(seats, 5)}).status_code
            == 201
        )
        reply = client.put("/api/tournament/rounds/1", json={"points": dict.fromkeys(seats, 8)})
        assert reply.status_code == 200, reply.get_json()
        (kept,) = reply.get_json()["tournament"]["rounds"]
        assert (kept["points"], kept["version"]) == (dict.fromkeys(seats, 8), 2)
        assert {s["points"] for s in reply.get_json()["tournament"]["standings"]} == {8}
        for method, path, body, status, code in [
            ("PUT", "/api/tournament/rounds/2", {"points": dict.fromkeys(seats, 1)}, 409, "no_round"),
            ("PUT", "/api/tournament/rounds/1", {"points": {"Ann": 1}}, 400, "wrong_players"),
            ("PUT", "/api/tournament/rounds/1", {"points": [1]}, 400, "bad_points"),
            ("PUT", "/api/tournament/rounds/1", {}, 400, "bad_round"),
            ("DELETE", "/api/tournament/rounds/7", None, 409, "no_round"),
        ]:
            reply = client.open(path, method=method, json=body)
            assert (reply.status_code, reply.get_json()["error"]["code"]) == (status, code), (method, path, body)
        assert client.delete("/api/tournament/rounds/1").status_code == 200
        view = client.get("/api/tournament").get_json()["tournament"]
        assert view["rounds"] == [] and view["tables"][0]["next_round"] == 1
        assert daemon.app.test_client().delete("/api/tournament/rounds/1").status_code == 401  # not joined


def test_the_join_code_is_the_admins_and_a_wrong_one_is_refused_by_name(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        table, admin = joined_client(daemon), joined_client(daemon, admin=True)
        assert admin.get("/api/tournament/code").get_json() == {"code": None}
        table.post("/api/tournaments", json={"players": FOUR, "tables": ["table"]})
        assert table.get("/api/tournament/code").status_code == 403
        code = admin.get("/api/tournament/code").get_json()["code"]
        assert table.post("/api/tournaments/join", json={"code": code}).status_code == 403
        for body, error in [({"code": code[:-5]}, "bad_code"), ({"code": 7}, "bad_code"), ({}, "bad_code")]:
            reply = admin.post("/api/tournaments/join", json=body)
            assert (reply.status_code, reply.get_json()["error"]["code"]) == (400, error), body
        reply = admin.post("/api/tournaments/join", json={"code": code.lower()})  # its own: still the one chosen
        assert reply.status_code == 200 and reply.get_json()["tournament"]["players"] == FOUR


def test_corrections_and_joins_spend_a_budget(tmp_path: Path) -> None:
    # A tournament joined is kept like one set up: both spend the new games' budget.
    limits = {"games_per_minute": 4, "declarations_per_minute": 3, "joins_per_minute": 600}
    with local_daemon(tmp_path, limits=limits) as daemon:
        admin = joined_client(daemon, admin=True)
        admin.post("/api/tournaments", json={"players": FOUR, "tables": ["table"]})
        code = admin.get("/api/tournament/code").get_json()["code"]
        statuses = [admin.post("/api/tournaments/join", json={"code": code}).status_code for _ in range(5)]
        assert statuses[-1] == 429 and 200 in statuses
        answers = [admin.delete("/api/tournament/rounds/1") for _ in range(6)]
        assert answers[-1].status_code == 429 and answers[-1].get_json()["error"]["code"] == "too_many_declarations"
