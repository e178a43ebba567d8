"""Bodies that are not honest text: a lone surrogate, invalid UTF-8, JSON nested 100,000 deep. Each is refused
with a 400 naming what was wrong, before anything is stored; and a store that already holds such text (from an
older version) is read without a 500."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, joined_client, local_config, local_daemon

LONE = '{"players": ["Ann", "Bob\\ud800", "Cy"]}'


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path), virtual=True)


def _post(client: FlaskClient, path: str, raw: bytes | str) -> tuple[int, dict]:
    reply = client.post(path, data=raw, content_type="application/json")
    return reply.status_code, reply.get_json()


def test_a_name_with_a_lone_surrogate_is_refused_by_field_and_not_stored(daemon: Daemon) -> None:
    phone = joined_client(daemon)
    status, answer = _post(phone, "/api/games", LONE)
    assert status == 400
    assert answer["error"]["code"] == "bad_text" and answer["error"]["field"] == "players[1]"
    assert "players[1]" in answer["error"]["message"]
    assert phone.get("/api/game").get_json()["game"] is None


@pytest.mark.parametrize("path", ["/api/session", "/api/games", "/api/press", "/api/attacks"])
def test_json_nested_30000_deep_is_a_400_not_a_500(daemon: Daemon, path: str) -> None:
    phone = joined_client(daemon)
    status, answer = _post(phone, path, "[" * 30_000 + "]" * 30_000)  # as deep as 64 KiB can nest
    assert status == 400 and answer["error"]["code"] == "bad_json"
    assert "deeper" in answer["error"]["message"]
    status, answer = _post(phone, path, '{"a":' * 40 + "1" + "}" * 40)
    assert status == 400 and "deeper" in answer["error"]["message"]


def test_a_body_that_is_not_utf8_is_refused(daemon: Daemon) -> None:
    status, answer = _post(joined_client(daemon), "/api/games", b'{"players": ["Ann", "\xff\xfe"]}')
    assert status == 400 and "UTF-8" in answer["error"]["message"]


def test_a_store_holding_a_lone_surrogate_is_read_without_a_500(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as first:
        pins = first.new_pins
        phone = joined_client(first)
        assert phone.post("/api/games", json={"players": ["Ann", "Bob", "Cy"]}).status_code == 201
        with first.store.connect() as conn:  # as an older version could have stored it
            conn.execute("UPDATE games SET state = replace(state, '\"Bob\"', '\"Bob\\ud800\"')")
    with local_daemon(tmp_path) as second:
        second.new_pins = pins
        phone = joined_client(second)
        game = phone.get("/api/game")
        assert game.status_code == 200
        assert "Bob\ufffd" in json.dumps(game.get_json(), ensure_ascii=False)
        assert phone.post("/api/press").status_code == 200
        scored = phone.post("/api/games/current/rounds", json={"winner": "Ann", "hands": {"Bob\ufffd": 3, "Cy": 0}})
        assert scored.status_code == 201, scored.get_json()
