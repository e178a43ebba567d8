"""Who may act at the table: reading is open, acting needs the table PIN, hardware and
admin settings need the admin PIN; cookies are HttpOnly and SameSite=Strict, other sites are refused, and PIN
guesses are limited per phone with the limit shown."""

from __future__ import annotations

import base64
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from launcher.access import book as access
from launcher.access.book import SESSION_IDLE_S, AccessBook, NewPins, PinGuard, Role
from launcher.daemon import Daemon
from launcher.store import STORE_FILE, Store, access_tables
from tests.conftest import MakeDaemon, ManualClock, hand_the_app, joined_client, local_config, start_daemon
from tests.virtual_clock import VirtualClock
from webui.openapi import SPEC

GAME = {"players": ["Ann", "Bob", "Cy"]}


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path), virtual=True)


def _pins(daemon: Daemon) -> tuple[str, str]:
    pins = daemon.new_pins
    assert pins is not None and pins.table is not None and pins.admin is not None
    return pins.table, pins.admin


def _join(client: FlaskClient, pin: str) -> int:
    return client.post("/api/session", json={"pin": pin}).status_code


def _a_request_for(path: str, method: str) -> tuple[str, dict[str, object] | None]:
    """A concrete path and a harmless body for an operation of the spec."""
    concrete = path.replace("{index}", "0").replace("{number}", "1")
    return concrete, {} if method in ("post", "put") else None


CHANGES = [
    (path, method, operation["x-role"])
    for path, item in SPEC["paths"].items()
    for method, operation in item.items()
    if operation["x-role"] != "none"
]


def test_reading_the_table_is_open(daemon: Daemon) -> None:
    stranger = daemon.app.test_client()
    for path in ("/", "/api/state", "/api/game", "/api/profiles", "/api/openapi.json"):
        assert stranger.get(path).status_code == 200, path
    assert stranger.get("/api/session").get_json() == {"role": "none"}


@pytest.mark.parametrize(("path", "method", "role"), CHANGES, ids=[f"{m.upper()} {p}" for p, m, _ in CHANGES])
def test_every_change_needs_the_documented_session(daemon: Daemon, path: str, method: str, role: str) -> None:
    """The spec's x-role for each operation is what the daemon enforces; a refusal changes nothing."""
    concrete, body = _a_request_for(path, method)
    before = daemon.bus.last_id
    stranger = daemon.app.test_client()
    refused = stranger.open(concrete, method=method.upper(), json=body)
    if role == "admin":
        assert (refused.status_code, refused.get_json()["error"]["code"]) == (403, "admin_required")
        player = joined_client(daemon)
        refused = player.open(concrete, method=method.upper(), json=body)
        assert (refused.status_code, refused.get_json()["error"]["code"]) == (403, "admin_required")
    else:
        assert (refused.status_code, refused.get_json()["error"]["code"]) == (401, "join_required")
        assert "PIN" in refused.get_json()["error"]["message"]
    assert daemon.bus.last_id == before  # no event: nothing happened


def test_the_table_pin_joins_with_a_strict_http_only_cookie(daemon: Daemon) -> None:
    table, _ = _pins(daemon)
    phone = daemon.app.test_client()
    reply = phone.post("/api/session", json={"pin": table})
    assert (reply.status_code, reply.get_json()) == (201, {"role": "table"})
    cookie = reply.headers["Set-Cookie"]
    assert cookie.startswith("uno_session=")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert phone.get("/api/session").get_json() == {"role": "table"}
    assert phone.post("/api/press").status_code == 200
    assert phone.post("/api/games", json=GAME).status_code == 201
    assert phone.post("/api/reset").status_code == 403  # hardware: the admin's


def test_the_admin_pin_may_do_everything(daemon: Daemon) -> None:
    admin = joined_client(daemon, admin=True)
    assert admin.get("/api/session").get_json() == {"role": "admin"}
    assert admin.post("/api/games", json=GAME).status_code == 201
    assert admin.post("/api/press").status_code == 200
    daemon.controller.link_changed(False, "board unplugged")  # a FAULT, as a board on USB would report it
    assert daemon.controller.snapshot()["fault"]
    assert admin.post("/api/reset").get_json() == {"fault": None}
    assert daemon.controller.snapshot()["fault"] is None


def test_wrong_pins_are_limited_per_phone_and_the_limit_is_shown(daemon: Daemon) -> None:
    clock = ManualClock()
    hand_the_app(daemon, pin_guard=PinGuard(clock=clock))
    table, _ = _pins(daemon)
    wrong = "0000" if table != "0000" else "1111"
    guesser = daemon.app.test_client()
    for left in (4, 3, 2, 1):
        reply = guesser.post("/api/session", json={"pin": wrong})
        assert reply.status_code == 401
        assert reply.get_json()["error"]["tries_left"] == left
        assert f"{left} tr" in reply.get_json()["error"]["message"]
    last = guesser.post("/api/session", json={"pin": wrong}).get_json()["error"]
    assert (last["tries_left"], last["retry_after_s"]) == (0, 30)
    waits = guesser.post("/api/session", json={"pin": table})  # even the right PIN is not checked: it waits
    assert waits.status_code == 202 and waits.get_json()["role"] == "none"  # to be let in (tests/test_doorbell.py)
    neighbour = daemon.app.test_client()
    neighbour.environ_base["REMOTE_ADDR"] = "192.168.1.23"
    assert _join(neighbour, table) == 201  # another phone is not held up
    clock.now += 29
    assert guesser.post("/api/session", json={"pin": table}).status_code == 202  # 1 s of the wait is left
    clock.now += 1
    assert guesser.post("/api/session", json={"pin": wrong}).get_json()["error"]["retry_after_s"] == 60  # doubles
    clock.now += 60
    assert _join(guesser, table) == 201  # the right PIN forgives
    assert guesser.post("/api/session", json={"pin": wrong}).get_json()["error"]["tries_left"] == 4


def test_a_burst_of_parallel_guesses_cannot_slip_past_the_limit() -> None:
    guard = PinGuard(clock=ManualClock())
    taken = 0
    with pytest.raises(Exception, match="too many wrong PINs"):
        for _ in range(100):  # every try counts as wrong until the PIN is found right
            guard.take("10.0.0.9")
            taken += 1
    assert taken == PinGuard.FREE_TRIES


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"pin": 1234}, "bad_pin"),
        ({"pin": "12"}, "bad_pin"),
        ({"pin": "12345678901234"}, "bad_pin"),
        ({"pin": "12a4"}, "bad_pin"),
        ({"pin": "١٢٣٤"}, "bad_pin"),  # Arabic-Indic digits are digits to Python, not to the keypad
        ({}, "bad_pin"),
        ({"pin": "1234", "name": "Ann"}, "unknown_field"),
    ],
)
def test_a_malformed_pin_is_refused_by_name_without_using_a_try(daemon: Daemon, body: object, code: str) -> None:
    guesser = daemon.app.test_client()
    reply = guesser.post("/api/session", json=body)
    assert (reply.status_code, reply.get_json()["error"]["code"]) == (400, code)
    assert "1234" not in reply.get_json()["error"]["message"].replace('{"pin": "1234"}', "")
    assert _join(guesser, _pins(daemon)[0]) == 201


def test_other_sites_cannot_act_even_with_the_cookie(daemon: Daemon) -> None:
    player = joined_client(daemon)
    forged = player.post("/api/press", headers={"Origin": "http://evil.example"})
    assert (forged.status_code, forged.get_json()["error"]["code"]) == (403, "bad_origin")
    cross = player.post("/api/press", headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    null = player.post("/api/press", headers={"Origin": "null"})
    assert null.status_code == 403
    assert daemon.controller.snapshot()["presses"] == 0
    same = player.post("/api/press", headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200
    forged_join = daemon.app.test_client().post(
        "/api/session", json={"pin": _pins(daemon)[0]}, headers={"Origin": "http://evil.example"}
    )
    assert forged_join.status_code == 403  # no joining from another site either


def test_the_admin_changes_the_table_pin_and_the_old_phones_must_join_again(daemon: Daemon) -> None:
    old_table, _ = _pins(daemon)
    player = joined_client(daemon)
    admin = joined_client(daemon, admin=True)
    reply = admin.put("/api/pins", json={"table": "246800"})
    assert reply.status_code == 200
    answer = reply.get_json()
    assert answer["changed"] == ["table"]
    assert "/#join=" in answer["join_url"] and "246800" not in answer["join_url"]
    prefix = "data:image/svg+xml;base64,"
    assert answer["join_qr"].startswith(prefix)
    assert base64.b64decode(answer["join_qr"][len(prefix) :]).startswith(b"<svg")
    last = daemon.bus.events_after(0)[-1]
    assert (last.type, last.data) == ("pins.changed", {"changed": ["table"]})  # the phones learn it at once
    assert player.post("/api/press").status_code == 401  # signed out
    assert admin.post("/api/press").status_code == 200  # the admin's own session stays
    assert _join(daemon.app.test_client(), old_table) == 401
    assert _join(daemon.app.test_client(), "246800") == 201


def test_the_admin_changes_the_admin_pin_and_other_admins_are_signed_out(daemon: Daemon) -> None:
    _, old_admin = _pins(daemon)
    me, other = joined_client(daemon, admin=True), joined_client(daemon, admin=True)
    player = joined_client(daemon)
    assert me.put("/api/pins", json={"admin": "97531864"}).get_json() == {"changed": ["admin"]}
    assert other.get("/api/session").get_json() == {"role": "none"}
    assert me.get("/api/session").get_json() == {"role": "admin"}
    assert player.get("/api/session").get_json() == {"role": "table"}  # the table PIN did not change
    assert _join(daemon.app.test_client(), old_admin) == 401


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"table": "12"}, "bad_pin"),
        ({"table": "123456789"}, "bad_pin"),
        ({"admin": "12345"}, "bad_pin"),
        ({"admin": 123456}, "bad_pin"),
        ({"table": "123456", "admin": "123456"}, "bad_pin"),
        ({}, "bad_pin"),
        ({"table": "246800", "colour": "red"}, "unknown_field"),
    ],
)
def test_a_bad_pin_change_is_refused_and_changes_nothing(daemon: Daemon, body: object, code: str) -> None:
    table, admin_pin = _pins(daemon)
    admin = joined_client(daemon, admin=True)
    reply = admin.put("/api/pins", json=body)
    assert (reply.status_code, reply.get_json()["error"]["code"]) == (400, code)
    assert _join(daemon.app.test_client(), table) == 201
    assert _join(daemon.app.test_client(), admin_pin) == 201


def test_the_table_pin_cannot_be_set_to_the_admin_pin(daemon: Daemon) -> None:
    _, admin_pin = _pins(daemon)
    admin = joined_client(daemon, admin=True)
    reply = admin.put("/api/pins", json={"table": admin_pin[:6]})
    assert reply.status_code == 400 and "differ" in reply.get_json()["error"]["message"]


def test_leaving_ends_the_session_for_good(daemon: Daemon) -> None:
    player = joined_client(daemon)
    cookie = player.get_cookie("uno_session")
    assert cookie is not None
    token = cookie.value
    left = player.delete("/api/session")
    assert left.get_json() == {"role": "none"}
    assert player.get_cookie("uno_session") is None
    replay = daemon.app.test_client()
    replay.set_cookie("uno_session", token)  # the old token, kept by someone
    assert replay.post("/api/press").status_code == 401


def test_joining_again_replaces_the_old_session(daemon: Daemon) -> None:
    """A token planted before joining is not the one that gets the rights (session fixation)."""
    phone = daemon.app.test_client()
    phone.set_cookie("uno_session", "planted-by-someone")
    assert _join(phone, _pins(daemon)[0]) == 201
    cookie = phone.get_cookie("uno_session")
    assert cookie is not None and cookie.value != "planted-by-someone"


def test_pins_are_stored_hashed_and_made_up_once(tmp_path: Path) -> None:
    store = Store(tmp_path / STORE_FILE)
    book = AccessBook(store)
    pins = book.first_run()
    assert pins is not None and len(pins.table) == 6 and len(pins.admin) == 6
    book.close()  # the first start ends: its PINs are saved by then
    assert AccessBook(store).first_run() is None  # a second start shows nothing: it cannot
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert pins.admin.encode() not in raw  # only hashed; the table PIN is kept as it is for the invite
    assert book.role_for_pin(pins.table) is Role.TABLE
    assert book.role_for_pin(pins.admin) is Role.ADMIN


def test_a_pin_set_before_the_first_start_is_kept_and_the_other_made_up(tmp_path: Path) -> None:
    book = AccessBook(Store(tmp_path / STORE_FILE))
    book.set_pin(Role.TABLE, "864200")  # `uno-launcher new-pins --only table` before the daemon ever ran
    pins = book.first_run()
    assert pins is not None and pins.table is None and pins.admin is not None and len(pins.admin) == 6
    assert book.role_for_pin("864200") is Role.TABLE and book.role_for_pin(pins.admin) is Role.ADMIN
    assert book.first_run() is None


def test_sessions_survive_a_restart_and_end_after_a_month_idle(tmp_path: Path) -> None:
    clock = ManualClock()
    store = Store(tmp_path / STORE_FILE)
    token = AccessBook(store, clock=clock).open_session(Role.TABLE)
    restarted = AccessBook(store, clock=clock)
    assert restarted.role_of(token) is Role.TABLE
    clock.now += SESSION_IDLE_S - 10
    restarted.seen(token)  # the phone opened the page: a month starts again
    clock.now += SESSION_IDLE_S - 10
    assert AccessBook(store, clock=clock).role_of(token) is Role.TABLE
    clock.now += 20
    assert restarted.role_of(token) is Role.NONE
    assert AccessBook(store, clock=clock).role_of(token) is Role.NONE


def test_sessions_are_bounded_and_the_longest_idle_end_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(access, "MOST_SESSIONS", 5)
    clock = ManualClock()
    book = AccessBook(Store(tmp_path / STORE_FILE), clock=clock)
    tokens = []
    for _ in range(8):
        clock.now += 1
        tokens.append(book.open_session(Role.TABLE))
    assert [book.role_of(t) for t in tokens] == [Role.NONE] * 3 + [Role.TABLE] * 5
    assert [AccessBook(Store(tmp_path / STORE_FILE), clock=clock).role_of(t) for t in tokens[:3]] == [Role.NONE] * 3


def test_joins_beyond_the_bound_end_the_flooding_partys_own_never_the_admin_or_the_next_phone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(access, "MOST_SESSIONS", 5)
    clock = ManualClock()
    book = AccessBook(Store(tmp_path / STORE_FILE), clock=clock)
    admin = book.open_session(Role.ADMIN, party="10.0.0.1")
    phone = book.open_session(Role.TABLE, party="10.0.0.2")
    clock.now += 7200  # two hours later, someone with the table PIN joins over and over from two addresses
    flood = []
    for n in range(40):
        clock.now += 1
        flood.append(book.open_session(Role.TABLE, party=f"10.0.1.{n % 2}"))
    assert book.role_of(admin) is Role.ADMIN and book.role_of(phone) is Role.TABLE  # idle, and still kept
    assert [book.role_of(t) for t in flood] == [Role.NONE] * 37 + [Role.TABLE] * 3
    clock.now += 1
    newcomer = book.open_session(Role.TABLE, party="10.0.0.3")  # the next real phone: its join holds
    assert book.role_of(newcomer) is Role.TABLE and book.role_of(phone) is Role.TABLE
    assert sum(book.role_of(t) is Role.TABLE for t in flood) == 2


def test_a_new_session_is_never_the_one_its_join_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue #45, 6: after a flood of joins each join answered 201 for a session already ended."""
    monkeypatch.setattr(access, "MOST_SESSIONS", 3)
    clock = ManualClock()
    book = AccessBook(Store(tmp_path / STORE_FILE), clock=clock)
    for n in range(10):
        clock.now += 1
        token = book.open_session(Role.TABLE, party="10.0.0.9")
        assert book.role_of(token) is Role.TABLE, n
    behind_one_nat = [book.open_session(Role.ADMIN, party="10.0.0.9") for _ in range(4)]
    assert all(book.role_of(t) is Role.ADMIN for t in behind_one_nat)  # never the admin's, even beyond


def test_a_restarted_daemon_keeps_its_pins_and_phones(tmp_path: Path) -> None:
    start_daemon(tmp_path).close()  # stopped at once: SIGTERM waits for the PINs it showed to be saved
    again = start_daemon(tmp_path)
    try:
        output = "".join(again.output)
        assert "Table PIN" not in output and "Admin PIN" not in output  # shown on the first start only
        assert "Players join with the table PIN" in output
        assert again.post("/api/press")[0] == 200  # the session joined before the restart
    finally:
        again.close()


def test_new_pins_from_the_command_line(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{tmp_path / "state"}"\n', encoding="utf-8")
    store = Store(tmp_path / "state" / STORE_FILE)
    AccessBook(store).first_run()

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "launcher", "new-pins", "--config", str(config), *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    made_up = cli()
    assert made_up.returncode == 0, made_up.stderr
    assert "Table PIN: " in made_up.stdout and "Admin PIN: " in made_up.stdout
    chosen = cli("--only", "table", "--table", "864200")
    assert chosen.returncode == 0 and "Table PIN: 8642" in chosen.stdout and "Admin PIN" not in chosen.stdout
    assert AccessBook(store).role_for_pin("864200") is Role.TABLE
    bad = cli("--table", "86")
    assert bad.returncode == 2
    assert bad.stderr.strip() == "uno-launcher new-pins: the table PIN must be a string of 6 to 8 digits, not 2 digits"
    assert AccessBook(store).role_for_pin("864200") is Role.TABLE  # nothing changed


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "uno.attacker.test."])
def test_a_page_rebound_from_another_name_is_refused_even_with_its_own_origin(daemon: Daemon, host: str) -> None:
    phone = joined_client(daemon)
    origin = f"http://{host}"
    reply = phone.post("/api/press", headers={"Host": host, "Origin": origin})
    assert reply.status_code == 421
    assert reply.get_json()["error"]["code"] == "bad_host"
    assert phone.get("/api/state", headers={"Host": host}).status_code == 421
    assert daemon.controller.snapshot()["presses"] == 0


@pytest.mark.parametrize("host", ["localhost:8080", "127.0.0.1:8080", "[::1]:8080", "192.168.1.20", "LOCALHOST"])
def test_the_names_and_addresses_it_serves_are_answered(daemon: Daemon, host: str) -> None:
    assert daemon.app.test_client().get("/api/state", headers={"Host": host}).status_code == 200


def test_its_own_machine_name_is_answered(daemon: Daemon) -> None:
    import socket

    name = socket.gethostname()
    for host in (name, f"{name}.local:8080"):
        assert daemon.app.test_client().get("/api/state", headers={"Host": host}).status_code == 200


def test_new_pins_refuses_a_folder_with_no_store_instead_of_making_a_second_one(tmp_path: Path) -> None:
    """Run from another folder (the default state dir is relative), new-pins would make PINs in a store no daemon
    reads. It refuses, naming where it looked; --new-store sets PINs before the first start on purpose."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = [sys.executable, "-m", "launcher", "new-pins"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=elsewhere)
    assert refused.returncode == 2
    expected = elsewhere / "var" / STORE_FILE
    assert refused.stderr.startswith(f"uno-launcher new-pins: no store at {expected}"), refused.stderr
    assert "--config" in refused.stderr and "--new-store" in refused.stderr
    assert not (elsewhere / "var").exists(), "nothing may be made where no daemon looks"
    made = subprocess.run([*command, "--new-store"], capture_output=True, text=True, timeout=60, cwd=elsewhere)
    assert made.returncode == 0, made.stderr
    assert expected.exists() and "Table PIN: " in made.stdout


# --- the first PINs hashed while the daemon answers -----------------------------------------------------------------

HASH_S = 2.0  # about what hashing one PIN takes on a Pi Zero 2 W


def _slow_hashing(monkeypatch: pytest.MonkeyPatch, clock: VirtualClock, during: object = None) -> None:
    """PBKDF2 taking HASH_S of virtual time on the pin-hashing thread (`during()` called as it starts), and the
    real one everywhere else."""
    real = access._hash

    def slow(pin: str, salt: bytes) -> bytes:
        if threading.current_thread().name == "pin-hashing":
            if during is not None:
                during()  # type: ignore[operator]
            clock.sleep(HASH_S)
        return real(pin, salt)

    monkeypatch.setattr(access, "_hash", slow)


def _saved(store: Store) -> set[str]:
    with store.connect() as conn:
        return {role for role, _, _ in access_tables.pin_hashes(conn)}


def _made(pins: NewPins | None) -> tuple[str, str]:
    assert pins is not None and pins.table is not None and pins.admin is not None
    return pins.table, pins.admin


def test_the_first_pins_are_shown_at_once_and_join_while_their_hashes_are_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = VirtualClock()
    _slow_hashing(monkeypatch, clock)
    store = Store(tmp_path / STORE_FILE)
    book = AccessBook(store, threads=clock)
    table, admin = _made(book.first_run())  # no virtual time has passed: no hash is done
    assert _saved(store) == set()
    assert book.role_for_pin(table) is Role.TABLE and book.role_for_pin(admin) is Role.ADMIN
    assert book.role_for_pin(next(p for p in ("000000", "111111") if p not in (table, admin))) is Role.NONE
    clock.run_until(lambda: _saved(store) == {"table", "admin"}, within=3 * HASH_S, step=0.25)
    assert clock.now() >= 2 * HASH_S  # both hashed on that one thread, one after the other
    book.close()
    again = AccessBook(store)
    assert again.first_run() is None
    assert again.role_for_pin(table) is Role.TABLE and again.role_for_pin(admin) is Role.ADMIN
    clock.close()


def test_a_pin_changed_before_the_made_up_one_is_saved_stays_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = VirtualClock()
    _slow_hashing(monkeypatch, clock)
    store = Store(tmp_path / STORE_FILE)
    book = AccessBook(store, threads=clock)
    table, admin = _made(book.first_run())
    book.set_pin(Role.TABLE, "864200")  # the admin joined at once and chose the table's PIN
    assert book.role_for_pin(table) is Role.NONE and book.role_for_pin("864200") is Role.TABLE
    clock.run_until(lambda: "admin" in _saved(store), within=3 * HASH_S, step=0.25)
    book.close()
    again = AccessBook(store)
    assert again.role_for_pin("864200") is Role.TABLE and again.role_for_pin(table) is Role.NONE
    assert again.role_for_pin(admin) is Role.ADMIN
    clock.close()


def test_a_start_that_fails_while_the_pins_are_hashed_saves_none_of_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = VirtualClock()
    store = Store(tmp_path / STORE_FILE)
    book = AccessBook(store, threads=clock)
    made: list[NewPins | None] = []
    returned = threading.Event()

    def the_start_fails() -> None:  # as the first hash starts
        returned.wait()
        book.forget_unshown(made[0])

    _slow_hashing(monkeypatch, clock, during=the_start_fails)
    made.append(book.first_run())
    returned.set()
    table, _ = _made(made[0])
    clock.run_until(lambda: book.role_for_pin(table) is Role.NONE, within=3 * HASH_S, step=0.25)
    clock.advance(3 * HASH_S)  # the hash under way ends: still nothing is saved
    book.close()
    assert _saved(store) == set()
    again = AccessBook(store).first_run()
    assert again is not None and again.table is not None and again.admin is not None  # new ones, to be shown
    clock.close()


def test_hashing_a_pin_lets_the_other_threads_run() -> None:
    """hashlib's PBKDF2 releases the interpreter's lock while it hashes: a press is not held up by a join."""
    previous = sys.getswitchinterval()
    # No thread is made to let go of the lock: only a C call that releases it does, or this thread's sleep(0)
    # after each chunk of work (so that the hashing thread can start, and end, without waiting 100 s for a switch).
    sys.setswitchinterval(100)
    try:
        started, done = threading.Event(), threading.Event()
        hashing = threading.Thread(target=lambda: (started.set(), access._hash("123456", b"s" * 16), done.set()))
        hashing.start()
        chunks = 0  # chunks of work this thread finished while the PIN was being hashed
        while not done.is_set():
            for _ in range(1 << 16):  # about 1 ms
                pass
            chunks += started.is_set() and not done.is_set()
            time.sleep(0)
        hashing.join()
    finally:
        sys.setswitchinterval(previous)
    assert chunks > 0, "this thread did not run once while the PIN was hashed"
