"""The names from before the renames answer for one release as the new ones do: the old paths (docs/API.md,
"Renamed") are served by the same views and described in the OpenAPI document as deprecated twins of the new
operations."""

from __future__ import annotations

from pathlib import Path

import pytest
from flask.testing import FlaskClient

from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, joined_client
from tests.test_shuffles import fast
from webui.openapi import RENAMED, SPEC


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(fast(tmp_path))


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def rule_of(path: str) -> str:
    return path.replace("{number}", "<int:number>")


def test_every_old_path_is_served_by_the_view_of_its_new_name(daemon: Daemon) -> None:
    views = {(rule.rule, method): rule.endpoint for rule in daemon.app.url_map.iter_rules() for method in rule.methods}
    for old, new in RENAMED.items():
        methods = [method.upper() for method in SPEC["paths"][new]]
        for method in methods:
            assert views[(rule_of(old), method)] == views[(rule_of(new), method)], (old, method)
        old_spec = SPEC["paths"][old]
        assert all(operation["deprecated"] for operation in old_spec.values())
        assert {
            m: {k: v for k, v in o.items() if k not in ("deprecated", "description")} for m, o in old_spec.items()
        } == (SPEC["paths"][new])


def test_the_old_shuffle_paths_answer_as_the_new_ones(daemon: Daemon, client: FlaskClient) -> None:
    number = client.get("/api/state").get_json()["shuffle"]["number"]
    added = client.post("/api/rounds/current/contributions", json={"shuffle": number, "value": "ab" * 16})
    assert added.status_code == 201 and added.get_json() == {"shuffle": number, "index": 0, "count": 1, "max": 32}
    assert daemon.controller.press("web").wait(10)
    assert client.get(f"/api/rounds/{number}").get_json() == client.get(f"/api/shuffles/{number}").get_json()

    started = client.post("/api/rounds", json={})
    assert started.status_code == 201 and set(started.get_json()) == {"ended", "shuffle"}
    old, new = client.get(f"/api/rounds/{number}"), client.get(f"/api/shuffles/{number}")
    assert old.status_code == new.status_code == 200 and old.get_json() == new.get_json()
    assert old.headers["Content-Disposition"] == new.headers["Content-Disposition"]
    assert client.get("/api/rounds/99").get_json() == client.get("/api/shuffles/99").get_json()


def test_the_old_hopper_path_answers_as_the_new_one(daemon: Daemon, client: FlaskClient) -> None:
    old = client.post("/api/deck", json={"cards": 60})
    assert old.status_code == 200 and old.get_json() == {"loaded": 60, "dispensed": 0, "remaining": 60}
    assert daemon.bus.events_after(0)[-1].type == "hopper.reloaded"
    assert client.post("/api/hopper", json={"cards": 60}).get_json() == old.get_json()
    refused_old, refused_new = (client.post(path, json={"cards": 0}) for path in ("/api/deck", "/api/hopper"))
    assert refused_old.status_code == refused_new.status_code == 400
    assert refused_old.get_json() == refused_new.get_json()
