"""Someone on the table's Wi-Fi, a guest's phone or a file handed over: each numbered finding of the hostile
review, with the figures it asked for. The slow attacks are marked `slow` and stop by themselves."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from launcher.access.book import AccessBook, Role
from launcher.cli import main
from launcher.config import Config
from launcher.store import APPLICATION_ID, MIGRATIONS, STORE_FILE, Store, StoreError
from launcher.store.migrations import STAMPED_FROM
from launcher.system import backup
from tests import test_browser
from tests.conftest import http_json, join, joined_client, local_daemon, start_daemon, wait_until
from tests.test_browser import WAIT_MS, open_joined

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

# --- 6. restore trusts the file -------------------------------------------------------------------------------


def _table(state: Path, table_pin: str, admin_pin: str) -> Path:
    """A store with PINs set and a session joined: what a table has."""
    store = Store(state / STORE_FILE)
    book = AccessBook(store)
    book.set_pin(Role.TABLE, table_pin)
    book.set_pin(Role.ADMIN, admin_pin)
    book.open_session(Role.TABLE)
    return store.path


def _sql(path: Path, *statements: str) -> None:
    with sqlite3.connect(path) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def _rebuilt(path: Path, table: str, change: Callable[[str], str]) -> None:
    """`table` made again with its SQL changed by `change`, its rows copied where the new one takes them: what a
    hand editing a backup with any SQLite tool can do, the columns left as they were."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as conn:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        columns = ", ".join(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))
        conn.execute("PRAGMA legacy_alter_table = ON")  # the other tables' references stay as they are
        conn.execute(f"ALTER TABLE {table} RENAME TO old")
        conn.execute(change(sql))
        conn.execute(f"INSERT OR IGNORE INTO {table} ({columns}) SELECT {columns} FROM old")
        conn.execute("DROP TABLE old")


def _constraint(table: str, clause: str) -> Callable[[Path], None]:
    """`clause` added at the end of `table`'s definition (a CHECK, a foreign key, a generated column)."""
    return lambda p: _rebuilt(p, table, lambda sql: f"{sql[: sql.rindex(')')]}, {clause})")


def _changed(table: str, old: str, new: str) -> Callable[[Path], None]:
    return lambda p: _rebuilt(p, table, lambda sql: sql.replace(old, new))


def _good_backup(tmp_path: Path) -> Path:
    path = _table(tmp_path / "elsewhere", "111111", "22222222")
    return backup.backup(path, tmp_path / "b.sqlite3").path


TAMPERED: dict[str, tuple[Callable[[Path], None], str]] = {
    "events-columns": (
        lambda p: _sql(p, "ALTER TABLE events RENAME COLUMN data TO payload"),
        "table 'events' is not as schema",
    ),
    "events-a-view": (
        lambda p: _sql(
            p,
            "ALTER TABLE events RENAME TO old_events",
            "CREATE VIEW events AS SELECT * FROM old_events",
        ),
        "view 'events'",
    ),
    "trigger-drops-events": (
        lambda p: _sql(p, "CREATE TRIGGER eat AFTER INSERT ON events BEGIN DELETE FROM events; END"),
        "trigger 'eat'",
    ),
    "trigger-wipes-pins": (
        lambda p: _sql(p, "CREATE TRIGGER wipe AFTER INSERT ON sessions BEGIN DELETE FROM pins; END"),
        "trigger 'wipe'",
    ),
    "extra-table": (lambda p: _sql(p, "CREATE TABLE loot (x)"), "table 'loot' that no uno-launcher makes"),
    "extra-index": (lambda p: _sql(p, "CREATE INDEX sneaky ON events (type)"), "index 'sneaky'"),
    "table-missing": (lambda p: _sql(p, "DROP TABLE wear"), "table 'wear' is missing"),
    # Issue #45 item 8: the same columns and indexes, but writes the daemon makes refused (or a default changed).
    "events-check-0": (_constraint("events", "CHECK (0)"), "table 'events' is not as schema"),
    "events-foreign-key": (_constraint("events", "FOREIGN KEY (id) REFERENCES games (id)"), "table 'events' is not"),
    "sessions-check": (_constraint("sessions", "CHECK (length(digest) > 100)"), "table 'sessions' is not"),
    "pins-check": (_constraint("pins", "CHECK (role = 'nobody')"), "table 'pins' is not"),
    "default-changed": (
        _changed("wear", "fires    INTEGER NOT NULL DEFAULT 0", "fires INTEGER NOT NULL DEFAULT 9"),
        "table 'wear' is not",
    ),
    "collate": (
        _changed("sessions", "digest     TEXT PRIMARY KEY", "digest TEXT COLLATE NOCASE PRIMARY KEY"),
        "table 'sessions' is not",
    ),
    "generated-column": (
        _constraint("events", "size INTEGER GENERATED ALWAYS AS (length(data)) VIRTUAL"),
        "table 'events' is not",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_restore_refuses_a_store_not_exactly_as_ours_in_one_line(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tamper, why = TAMPERED[case]
    state = tmp_path / "state"
    path = _table(state, "333333", "44444444")
    before = path.read_bytes()
    source = _good_backup(tmp_path)
    tamper(source)
    with pytest.raises(StoreError, match=why):
        backup.restore(source, state)
    assert path.read_bytes() == before
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{state}"\n')
    assert main(["restore", "--config", str(config), str(source)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not restored" in err and "Traceback" not in err


def test_a_backup_with_a_check_on_its_pins_is_refused_where_it_once_raised_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    path = _table(state, "333333", "44444444")
    source = _good_backup(tmp_path)
    _constraint("pins", "CHECK (role = 'nobody')")(source)
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{state}"\n')
    assert main(["restore", "--config", str(config), str(source)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "table 'pins'" in err and "Traceback" not in err
    book = AccessBook(Store(path))
    assert book.role_for_pin("333333") is Role.TABLE, "the store in place still lets the table in"


def test_any_error_while_checking_a_backup_is_one_line_and_leaves_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    path = _table(state, "333333", "44444444")
    before = path.read_bytes()
    source = _good_backup(tmp_path)

    def unforeseen(_: Path) -> str:
        raise RecursionError("maximum recursion depth exceeded")  # what a file made to trip a check might do

    monkeypatch.setattr(backup, "_integrity", unforeseen)
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{state}"\n')
    assert main(["restore", "--config", str(config), str(source)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "was not restored" in err and "Traceback" not in err
    assert path.read_bytes() == before


def test_restore_refuses_a_file_with_our_id_and_no_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    _table(state, "333333", "44444444")
    for version in (0, STAMPED_FROM, len(MIGRATIONS)):
        source = tmp_path / f"empty-{version}.sqlite3"
        _sql(source, f"PRAGMA application_id = {APPLICATION_ID}", f"PRAGMA user_version = {version}")
        with pytest.raises(StoreError, match=r"not a.* uno-launcher|is missing"):
            backup.restore(source, state)
        config = tmp_path / "config.toml"
        config.write_text(f'[state]\ndir = "{state}"\n')
        assert main(["restore", "--config", str(config), str(source)]) == 2
        assert "Traceback" not in capsys.readouterr().err


def test_restore_refuses_a_named_pipe_at_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    _table(state, "333333", "44444444")
    pipe = tmp_path / "b.sqlite3"
    os.mkfifo(pipe)
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{state}"\n')
    done = subprocess.run(
        [sys.executable, "-m", "launcher", "restore", "--config", str(config), str(pipe)],
        capture_output=True,
        text=True,
        timeout=60,  # a blocking open would wait for a writer for ever: the test would end here, failed
        check=False,
    )
    assert done.returncode == 2
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_restore_refuses_a_file_too_big_before_reading_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    _table(state, "333333", "44444444")
    source = _good_backup(tmp_path)
    with source.open("r+b") as f:
        f.truncate(300 * 2**20)  # sparse: 300 MB that costs no disk
    with pytest.raises(StoreError, match="300 MiB, more than"):
        backup.restore(source, state)


def test_restore_drops_the_backups_sessions_and_keeps_the_pins_set_now(tmp_path: Path) -> None:
    state = tmp_path / "state"
    _table(state, "333333", "44444444")
    source = _good_backup(tmp_path)
    planted = "a cookie the attacker kept"
    _sql(
        source,
        "INSERT INTO sessions (digest, role, created_ts, seen_ts) VALUES "
        f"('{hashlib.sha256(planted.encode()).hexdigest()}', 2, 0, 9e9)",
    )
    backup.restore(source, state)
    book = AccessBook(Store(state / STORE_FILE))
    assert book.role_of(planted) is Role.NONE
    with sqlite3.connect(state / STORE_FILE) as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == 0
    conn.close()
    assert book.role_for_pin("333333") is Role.TABLE and book.role_for_pin("44444444") is Role.ADMIN
    assert book.role_for_pin("111111") is Role.NONE, "the backup's table PIN does not come back"


def test_restore_with_keep_pins_takes_the_backups_pins(tmp_path: Path) -> None:
    state = tmp_path / "state"
    _table(state, "333333", "44444444")
    source = _good_backup(tmp_path)
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{state}"\n')
    assert main(["restore", "--config", str(config), "--keep-pins", str(source)]) == 0
    book = AccessBook(Store(state / STORE_FILE))
    assert book.role_for_pin("111111") is Role.TABLE and book.role_for_pin("22222222") is Role.ADMIN
    assert book.role_for_pin("333333") is Role.NONE


# --- 4. new-pins while the daemon runs -------------------------------------------------------------------------


def test_new_pins_signs_out_the_old_pins_phones_in_the_running_daemon_at_once(daemon_process) -> None:  # type: ignore[no-untyped-def]
    config = daemon_process.state_dir.parent / "config.toml"
    assert daemon_process.post("/api/press")[0] == 200
    assert daemon_process.get("/api/session") == {"role": "none"}  # no cookie
    assert http_json(daemon_process.url + "/api/session", "GET", cookie=daemon_process.joined.table_cookie)[1] == {
        "role": "table"
    }
    done = subprocess.run(
        [sys.executable, "-m", "launcher", "new-pins", "--config", str(config), "--only", "table"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "signs out the phones joined with the old ones" in done.stdout
    # The very next request with the old table PIN's cookie is a stranger's; the admin's session stays.
    assert http_json(daemon_process.url + "/api/session", "GET", cookie=daemon_process.joined.table_cookie)[1] == {
        "role": "none"
    }
    status, answer = daemon_process.post("/api/press")
    assert status == 401 and answer["error"]["code"] == "join_required"
    assert daemon_process.request("GET", "/api/session", admin=True)[1] == {"role": "admin"}
    new_pin = re.search(r"Table PIN: (\d+)", done.stdout)
    assert new_pin is not None
    assert http_json(daemon_process.url + "/api/session", "POST", {"pin": daemon_process.table_pin})[0] == 401
    assert http_json(daemon_process.url + "/api/session", "POST", {"pin": new_pin.group(1)})[0] == 201


# --- 7. first-start PINs in the journal -----------------------------------------------------------------------


def test_under_systemd_the_first_pins_go_to_a_file_only_root_reads_and_the_journal_says_where(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{state}"\n', encoding="utf-8")
    env = {**os.environ, "INVOCATION_ID": "0123456789abcdef0123456789abcdef", "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "launcher", "run", "--sim", "--port", "0", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "first start are in" in line:
                break
        url = re.search(r"Open (http://\S+?)/? (?:on a phone|in a browser)", "".join(lines))
        assert url is not None
        wait_until(lambda: http_json(url.group(1) + "/api/session", "GET")[0] == 200)  # serving: SIGTERM is handled
    finally:
        process.terminate()
        rest, _ = process.communicate(timeout=30)
    journal = "".join(lines) + rest
    pins_file = (state / "first-pins.txt").resolve()
    assert f"are in {pins_file} (only its owner and root may read it)" in journal
    assert (pins_file.stat().st_mode & 0o777) == 0o600
    written = pins_file.read_text(encoding="utf-8")
    table, admin = (re.search(rf"{role} PIN: (\d+)", written) for role in ("Table", "Admin"))
    assert table is not None and admin is not None
    assert table.group(1) not in journal and admin.group(1) not in journal
    book = AccessBook(Store(state / STORE_FILE))
    assert book.role_for_pin(table.group(1)) is Role.TABLE and book.role_for_pin(admin.group(1)) is Role.ADMIN


# --- 5. a player named __proto__ ---------------------------------------------------------------------------------

OBJECT_NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty"]


@pytest.mark.browser
def test_players_named_like_objects_keys_score_and_keep_their_statistics_on_the_page(  # type: ignore[no-untyped-def]
    daemon_process, playwright_chromium
) -> None:
    playwright, browser = playwright_chromium
    status, answer = daemon_process.post("/api/games", {"players": OBJECT_NAMES, "mode": "lowest_total"})
    assert status == 201, answer
    errors: list[str] = []
    context = browser.new_context(**{**playwright.devices["Pixel 5"], "locale": "en-US"})
    page = context.new_page()
    page.on("pageerror", lambda e: errors.append(str(e)))
    open_joined(page, daemon_process)
    page.locator("#tab-round").tap()
    page.locator("#winner").select_option("__proto__")
    for name, cards in zip(OBJECT_NAMES[1:], (["7"], ["skip"], ["7", "7"]), strict=True):
        hand = page.locator("#hands .hand").filter(has_text=name)
        hand.locator("summary").tap()
        for kind in cards:
            hand.locator(f'.cell[data-kind="{kind}"] .card-add').tap()
    page.locator("#entry-save").tap()
    expect(page.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    scoreboard = daemon_process.get("/api/game")["game"]["scoreboard"]
    assert scoreboard["totals"] == {"__proto__": 0, "constructor": 7, "toString": 20, "hasOwnProperty": 14}
    rows = page.locator("#totals tbody tr")
    expect(rows.locator(".side-name")).to_have_text(OBJECT_NAMES)
    expect(rows.locator(".total")).to_have_text(["0", "7", "20", "14"])
    stats = page.locator("#stats tbody tr")
    expect(stats.locator("th")).to_have_text(OBJECT_NAMES, timeout=WAIT_MS)
    expect(stats.nth(0).locator("td")).to_have_text(["0", "0", "1"])  # __proto__ won the round: it is counted
    expect(page.locator("#rounds li")).to_have_count(1)
    context.close()
    assert errors == []


# --- 3. a table-PIN holder hurts the table (with the default [limits]) -------------------------------------------


@pytest.fixture
def default_limits(tmp_path: Path):  # type: ignore[no-untyped-def]
    with local_daemon(tmp_path, limits={}) as running:
        yield running


def test_new_games_at_30_a_second_for_a_minute_keep_a_dozen_and_grow_the_store_little(default_limits) -> None:  # type: ignore[no-untyped-def]
    daemon = default_limits
    phone = joined_client(daemon)
    budgets = daemon.budgets
    before = budgets.store_size()
    statuses = []
    for _ in range(30 * 60):  # a minute of virtual time
        reply = phone.post("/api/games", json={"players": ["Ann", "Bob"]})
        statuses.append(reply.status_code)
        daemon.clock.advance(1 / 30)
    made = statuses.count(201)
    assert made <= 2 * Config().limits.games_per_minute + 1, made  # the minute's burst and its refill
    assert set(statuses) == {201, 429}
    grown = budgets.store_size() - before
    assert grown <= 2 * 1024 * 1024, f"{grown} bytes for {made} games"
    print(f"\n{made} of 1,800 new games kept; the store grew by {grown / 1024:.0f} KB")


def test_the_store_budget_refuses_new_games_and_tells_the_admin(default_limits) -> None:  # type: ignore[no-untyped-def]
    daemon = default_limits
    phone, admin = joined_client(daemon), joined_client(daemon, admin=True)
    budgets = daemon.budgets
    assert "notices" not in admin.get("/api/session").get_json()
    budgets.store_bytes = budgets.store_size()  # the budget reached
    refused = phone.post("/api/games", json={"players": ["Ann", "Bob"]})
    assert refused.status_code == 409 and refused.get_json()["error"]["code"] == "store_full"
    assert admin.get("/api/session").get_json()["notices"] == ["store_full"]
    assert phone.post("/api/press").status_code == 200  # the launcher carries on


def test_520_joins_never_end_the_admin_or_a_phone_in_use(default_limits) -> None:  # type: ignore[no-untyped-def]
    daemon = default_limits
    admin, phone = joined_client(daemon, admin=True), joined_client(daemon)
    assert phone.get("/api/state").status_code == 200  # the page reads the table after joining: a phone in use
    token = admin.get("/api/invite").get_json()["join_url"].rsplit("#join=", 1)[1]
    for n in range(520):
        child = daemon.app.test_client()
        child.environ_base["REMOTE_ADDR"] = f"10.1.{n // 250}.{n % 250}"
        assert child.post("/api/session", json={"token": token}).status_code == 201
    assert admin.get("/api/session").get_json()["role"] == "admin"
    assert phone.get("/api/session").get_json()["role"] == "table"


def test_joins_from_one_address_are_budgeted(default_limits) -> None:  # type: ignore[no-untyped-def]
    daemon = default_limits
    token = joined_client(daemon, admin=True).get("/api/invite").get_json()["join_url"].rsplit("#join=", 1)[1]
    child = daemon.app.test_client()
    child.environ_base["REMOTE_ADDR"] = "192.168.1.66"
    statuses = [child.post("/api/session", json={"token": token}).status_code for _ in range(30)]
    assert statuses.count(201) == Config().limits.joins_per_minute
    refused = child.post("/api/session", json={"token": token})
    assert refused.status_code == 429 and refused.get_json()["error"]["code"] == "too_many_joins"


@pytest.mark.slow
def test_seven_sessions_of_four_streams_leave_a_real_phones_stream_open(tmp_path: Path) -> None:
    running = start_daemon(tmp_path)  # the default 32 threads: 24 stream places
    parts = urlsplit(running.url)
    opened: list[socket.socket] = []

    def follow(cookie: str) -> bytes:
        sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
        opened.append(sock)
        sock.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\n\r\n".encode())
        head = sock.recv(64)
        return head.split(b" ")[1]

    try:
        hogs = [join(running.url, running.table_pin) for _ in range(7)]
        statuses = [follow(cookie) for cookie in hogs for _ in range(4)]
        assert statuses.count(b"200") == 28  # the later ones took the earlier ones' places (24 in all)
        assert follow(running.joined.table_cookie) == b"200"  # the real phone's own stream
        assert running.post("/api/press")[0] == 200
    finally:
        for sock in opened:
            sock.close()
        running.close()
