"""The web layer in-process: language guess, deck reload and bad input, through Flask's test client."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from launcher.config import Config
from launcher.daemon import Daemon
from tests.conftest import joined_client
from webui import guess_language


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    config = Config().replace("state", dir=str(tmp_path)).replace("web", port=0)
    running = Daemon(config.replace("sim", cards_per_second=300.0).replace("dispense", min_rest_ms=0))
    yield running
    running.close()


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (["zh-TW", "en"], "zh-Hant"),
        (["zh-Hant-HK"], "zh-Hant"),
        (["zh-CN"], "zh-Hans"),
        (["zh"], "zh-Hans"),
        (["fr-FR", "zh-HK"], "zh-Hant"),
        (["en-GB", "zh-CN"], "en"),
        (["fr"], "en"),
        ([], "en"),
    ],
)
def test_the_page_language_follows_the_browser(accept: list[str], expected: str) -> None:
    assert guess_language(accept) == expected


def test_the_page_is_served_in_the_guessed_language(client: FlaskClient) -> None:
    page = client.get("/", headers={"Accept-Language": "zh-TW,zh;q=0.8"})
    assert page.status_code == 200
    assert '<html lang="zh-Hant">' in page.get_data(as_text=True)


def test_reloading_the_deck_refills_the_count_and_the_simulated_hopper(daemon: Daemon, client: FlaskClient) -> None:
    reply = client.post("/api/deck", json={"cards": 54})
    assert reply.status_code == 200
    assert reply.get_json() == {"loaded": 54, "dispensed": 0, "remaining": 54}
    state = client.get("/api/state").get_json()
    assert state["deck"]["remaining"] == state["hardware"]["sim_deck"] == 54
    assert daemon.bus.events_after(0)[-1].type == "deck.reloaded"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"cards": 0}, 400, "bad_cards"),
        ({"cards": 501}, 400, "bad_cards"),
        ({"cards": "54"}, 400, "bad_cards"),
        ({"cards": True}, 400, "bad_cards"),
        ({"cards": 5.5}, 400, "bad_cards"),
        ({}, 400, "bad_cards"),
        ({"cards": 54, "colour": "red"}, 400, "unknown_field"),
        ("x" * 100_000, 413, "request_entity_too_large"),
    ],
)
def test_a_bad_reload_is_refused_and_changes_nothing(client: FlaskClient, body: object, status: int, code: str) -> None:
    reply = client.post("/api/deck", json=body)
    assert reply.status_code == status
    assert reply.get_json()["error"]["code"] == code
    assert client.get("/api/state").get_json()["deck"]["loaded"] == 112


def test_a_body_that_is_not_json_is_refused(client: FlaskClient) -> None:
    reply = client.post("/api/press", data="press!", content_type="text/plain")
    assert reply.status_code == 415
    assert reply.get_json()["error"]["message"] == "send the body as application/json"
    broken = client.post("/api/press", data="{", content_type="application/json")
    assert broken.status_code == 400
    assert client.get("/api/state").get_json()["presses"] == 0


def test_openapi_describes_every_route_the_app_serves(daemon: Daemon, client: FlaskClient) -> None:
    spec = client.get("/api/openapi.json").get_json()
    assert spec["openapi"].startswith("3.1")
    served: dict[str, set[str]] = {}
    for rule in daemon.app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            path = rule.rule.replace("<int:", "{").replace(">", "}")
            served.setdefault(path, set()).update(m.lower() for m in rule.methods - {"HEAD", "OPTIONS"})
    described = {path: set(item) for path, item in spec["paths"].items()}
    # Path parameter names may differ between Flask and the spec; compare the shapes.
    assert {_shape(p): m for p, m in served.items()} == {_shape(p): m for p, m in described.items()}


def _shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)
