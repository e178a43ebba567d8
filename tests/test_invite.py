"""The invite: any joined phone (table or admin) gets the link that joins with the current table PIN and its QR
code, drawn on the launcher; a phone not joined is refused like any other table call; a changed table PIN changes
the invite; a store from before the invite learns the table PIN at the next join with it."""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from launcher.access import AccessBook
from launcher.daemon import Daemon
from launcher.store import STORE_FILE, Store
from tests.conftest import joined_client, local_daemon

SVG_DATA = "data:image/svg+xml;base64,"


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    with local_daemon(tmp_path) as running:
        yield running


def _table_pin(daemon: Daemon) -> str:
    assert daemon.new_pins is not None and daemon.new_pins.table is not None
    return daemon.new_pins.table


def _invite(client: FlaskClient) -> dict[str, str]:
    reply = client.get("/api/invite")
    assert reply.status_code == 200, reply.get_json()
    answer: dict[str, str] = reply.get_json()
    return answer


def _is_svg(data_url: str) -> bool:
    return data_url.startswith(SVG_DATA) and base64.b64decode(data_url[len(SVG_DATA) :]).startswith(b"<svg")


@pytest.mark.parametrize("admin", [False, True], ids=["table", "admin"])
def test_a_joined_phone_gets_the_link_with_the_table_pin_and_its_qr_code(daemon: Daemon, admin: bool) -> None:
    pin = _table_pin(daemon)
    answer = _invite(joined_client(daemon, admin=admin))
    assert answer["pin"] == pin
    assert answer["join_url"] == f"{daemon.urls[-1].rstrip('/')}/#pin={pin}"
    assert _is_svg(answer["join_qr"])


def test_a_phone_not_joined_is_refused_as_for_any_table_call(daemon: Daemon) -> None:
    reply = daemon.app.test_client().get("/api/invite")
    assert (reply.status_code, reply.get_json()["error"]["code"]) == (401, "join_required")


def test_after_a_table_pin_change_the_invite_carries_the_new_pin(daemon: Daemon) -> None:
    admin = joined_client(daemon, admin=True)
    assert admin.put("/api/pins", json={"table": "2468"}).status_code == 200
    assert _invite(admin)["join_url"].endswith("/#pin=2468")
    newcomer = daemon.app.test_client()
    assert newcomer.post("/api/session", json={"pin": "2468"}).status_code == 201
    assert _invite(newcomer)["pin"] == "2468"


def test_a_store_from_before_the_invite_learns_the_table_pin_at_the_next_join(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        pin = _table_pin(daemon)
        player = joined_client(daemon)
        daemon.app.extensions["launcher.access"].close()  # the made-up PINs' hashes are saved
        conn = sqlite3.connect(tmp_path / STORE_FILE)
        with conn:
            conn.execute("DELETE FROM invite")  # as an upgraded store has it: the PIN known by its hash only
        conn.close()
        refused = player.get("/api/invite")
        assert (refused.status_code, refused.get_json()["error"]["code"]) == (409, "invite_unknown")
        assert _invite(joined_client(daemon))["pin"] == pin
    assert AccessBook(Store(tmp_path / STORE_FILE)).table_pin() == pin  # kept for the next start
