"""The invite: any joined phone (table or admin) gets the link that joins the table and its QR code, drawn on the
launcher. The link carries the invite's token, never the PIN: it joins whatever PIN guessing budget is left, a new
invite or a new table PIN revokes it, and the PIN's digits are shown only to a phone that typed them or to the admin
who set them. The store keeps the table PIN only hashed (an old store's plain PIN is dropped at the upgrade)."""

from __future__ import annotations

import base64
import re
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from flask.testing import FlaskClient

from launcher.access.book import AccessBook, PinGuard, Role
from launcher.daemon import Daemon
from launcher.store import MIGRATIONS, STORE_FILE, Store
from launcher.system import backup
from tests.conftest import MakeDaemon, app_parts, joined_client, local_config

SVG_DATA = "data:image/svg+xml;base64,"


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path), virtual=True)


def _table_pin(daemon: Daemon) -> str:
    assert daemon.new_pins is not None and daemon.new_pins.table is not None
    return daemon.new_pins.table


def _invite(client: FlaskClient) -> dict[str, str]:
    reply = client.get("/api/invite")
    assert reply.status_code == 200, reply.get_json()
    answer: dict[str, str] = reply.get_json()
    return answer


def _token(answer: dict[str, str]) -> str:
    fragment = urlsplit(answer["join_url"]).fragment
    assert fragment.startswith("join=")
    return fragment.removeprefix("join=")


def _is_svg(data_url: str) -> bool:
    return data_url.startswith(SVG_DATA) and base64.b64decode(data_url[len(SVG_DATA) :]).startswith(b"<svg")


def test_a_phone_that_typed_the_pin_gets_a_link_without_it_and_the_digits_beside(daemon: Daemon) -> None:
    pin = _table_pin(daemon)
    answer = _invite(joined_client(daemon))
    assert answer["pin"] == pin
    assert answer["join_url"].startswith(daemon.urls[-1].rstrip("/") + "/#join=")
    assert pin not in answer["join_url"]
    assert len(_token(answer)) >= 22  # 128 random bits
    assert _is_svg(answer["join_qr"])


def test_the_digits_are_not_shown_to_the_admin_who_did_not_set_them_nor_to_a_phone_joined_by_the_link(
    daemon: Daemon,
) -> None:
    admin = _invite(joined_client(daemon, admin=True))
    assert "pin" not in admin
    guest = daemon.app.test_client()
    joined = guest.post("/api/session", json={"token": _token(admin)})
    assert (joined.status_code, joined.get_json()) == (201, {"role": "table"})
    assert "pin" not in _invite(guest)
    assert guest.post("/api/press").status_code == 200


def test_the_link_joins_while_the_guessing_budget_is_spent(daemon: Daemon) -> None:
    token = _token(_invite(joined_client(daemon)))
    guard = app_parts(daemon).pin_guard
    for n in range(PinGuard.BUDGET + 1):
        try:
            guard.take(f"10.0.{n // 250}.{n % 250}")
        except Exception:
            break
    waits = daemon.app.test_client().post("/api/session", json={"pin": _table_pin(daemon)})
    assert waits.status_code == 202 and "waiting" in waits.get_json()  # for the button: tests/test_doorbell.py
    guest = daemon.app.test_client()
    assert guest.post("/api/session", json={"token": token}).status_code == 201


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"token": "x" * 22}, "invite_revoked"),
        ({"token": 7}, "bad_token"),
        ({"pin": "123456", "token": "x"}, "bad_pin"),
    ],
)
def test_a_wrong_token_is_refused_by_name(daemon: Daemon, body: dict[str, object], code: str) -> None:
    reply = daemon.app.test_client().post("/api/session", json=body)
    assert reply.get_json()["error"]["code"] == code and reply.status_code in (400, 401)


def test_a_phone_not_joined_is_refused_as_for_any_table_call(daemon: Daemon) -> None:
    reply = daemon.app.test_client().get("/api/invite")
    assert (reply.status_code, reply.get_json()["error"]["code"]) == (401, "join_required")


def test_a_new_table_pin_revokes_the_link_and_the_admin_who_set_it_sees_it(daemon: Daemon) -> None:
    old = _token(_invite(joined_client(daemon)))
    admin = joined_client(daemon, admin=True)
    changed = admin.put("/api/pins", json={"table": "246800"}).get_json()
    assert changed["pin"] == "246800" and _token(changed) != old
    assert _invite(admin)["pin"] == "246800"
    refused = daemon.app.test_client().post("/api/session", json={"token": old})
    assert (refused.status_code, refused.get_json()["error"]["code"]) == (401, "invite_revoked")
    assert daemon.app.test_client().post("/api/session", json={"token": _token(changed)}).status_code == 201
    newcomer = daemon.app.test_client()
    assert newcomer.post("/api/session", json={"pin": "246800"}).status_code == 201
    assert _invite(newcomer)["pin"] == "246800"


def test_the_admin_makes_a_new_invite_and_the_old_link_stops_joining(daemon: Daemon) -> None:
    player = joined_client(daemon)
    old = _token(_invite(player))
    assert player.post("/api/invite").status_code == 403  # the admin's to do
    admin = joined_client(daemon, admin=True)
    made = admin.post("/api/invite")
    assert made.status_code == 201
    new = _token(made.get_json())
    assert new != old and _token(_invite(player)) == new
    assert daemon.app.test_client().post("/api/session", json={"token": old}).status_code == 401
    assert player.post("/api/press").status_code == 200  # phones joined by the old link stay


def _text_values(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        values = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                values += [str(v) for v in row if isinstance(v, str | int)]
        return values
    finally:
        conn.close()


def test_neither_the_store_nor_a_backup_holds_the_table_pin(daemon: Daemon, tmp_path: Path) -> None:
    pin = _table_pin(daemon)
    joined_client(daemon)
    admin = joined_client(daemon, admin=True)
    daemon.access.close()  # the made-up PINs' hashes are saved
    assert admin.put("/api/pins", json={"table": "975310"}).status_code == 200
    made = backup.backup(daemon.store.path, tmp_path / "b.sqlite3")
    for path in (daemon.store.path, made.path):
        assert pin not in _text_values(path) and "975310" not in _text_values(path)
    assert b"975310" not in made.path.read_bytes()


def test_an_upgraded_store_forgets_the_plain_pin_and_the_admin_is_asked_to_lengthen_a_short_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / STORE_FILE
    book = AccessBook(Store(path))
    book.set_pin(Role.ADMIN, "97531864")
    conn = sqlite3.connect(path, isolation_level=None)
    try:  # back to the schema before: the table PIN "4821" set then, kept as it is beside its hash
        conn.execute("DROP TABLE join_token")
        conn.execute("ALTER TABLE pins DROP COLUMN digits")
        conn.execute("CREATE TABLE invite (id INTEGER PRIMARY KEY CHECK (id = 1), table_pin TEXT NOT NULL)")
        conn.execute("INSERT INTO invite VALUES (1, '4821')")
        before = next(i for i, sql in enumerate(MIGRATIONS) if "CREATE TABLE join_token" in sql)
        later = [re.findall(r"CREATE TABLE (\w+)", sql) for sql in MIGRATIONS[before + 1 :]]
        for table in reversed([name for names in later for name in names]):  # what the migrations after it made
            conn.execute(f"DROP TABLE {table}")
        conn.execute(f"PRAGMA user_version = {before}")
    finally:
        conn.close()
    from launcher.access.book import _hash  # the hash as an old version saved it

    salt = b"s" * 16
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("INSERT INTO pins VALUES ('table', ?, ?, 0)", (salt, _hash("4821", salt)))
    conn.close()
    upgraded = AccessBook(Store(path))
    assert "4821" not in _text_values(path)
    assert upgraded.role_for_pin("4821") is Role.TABLE  # the shorter PIN still joins until it is changed
    assert upgraded.table_pin_too_short()
    upgraded.set_pin(Role.TABLE, "482100")
    assert not upgraded.table_pin_too_short()


def test_the_admin_sees_the_short_pin_notice(daemon: Daemon) -> None:
    admin = joined_client(daemon, admin=True)
    assert admin.get("/api/session").get_json() == {"role": "admin"}
    daemon.access.close()  # the made-up PINs' hashes are saved
    conn = sqlite3.connect(daemon.store.path)
    with conn:
        conn.execute("UPDATE pins SET digits = 4 WHERE role = 'table'")
    conn.close()
    assert admin.get("/api/session").get_json() == {"role": "admin", "notices": ["table_pin_short"]}
    assert joined_client(daemon).get("/api/session").get_json() == {"role": "table"}


def test_a_new_table_pin_has_six_digits_at_least(daemon: Daemon) -> None:
    reply = joined_client(daemon, admin=True).put("/api/pins", json={"table": "4821"})
    assert (reply.status_code, reply.get_json()["error"]["code"]) == (400, "bad_pin")
    assert "6 to 8 digits" in reply.get_json()["error"]["message"]
