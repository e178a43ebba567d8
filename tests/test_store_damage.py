"""A damaged, foreign, read-only or full store stops start-up with one line naming the file and what to do, exit 2,
and the file is left exactly as it was: nothing is ever silently replaced or adopted.

Each case goes through the real command line, both `run` (the daemon) and `new-pins` (which writes PINs into the
store). The read-only and full cases mount a small tmpfs, which needs root (the CI runs as root); as another user
they are skipped, since chmod cannot make a directory read-only to root and nothing else fills a disk safely.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from launcher.events import EventBus, EventType
from launcher.store import MIGRATIONS, STORE_FILE, Store
from tests.conftest import joined_client, local_daemon
from tests.small_fs import fill, make_read_only, small_tmpfs

COMMANDS = {
    "run": ["run", "--sim", "--port", "0"],
    # --new-store: where there is no store yet, new-pins makes one (it refuses otherwise), so that the cases of a
    # store that cannot be made reach it too.
    "new-pins": ["new-pins", "--new-store"],
}

LOG_RECORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ ")


@dataclass(frozen=True)
class Case:
    state: Path  # the config's [state] dir
    looked_at: Path  # the path the message must name
    message: str  # a regex the line must match after the path


def _our_store(state: Path, events: int = 300) -> Path:
    """A real store with some history in it."""
    path = state / STORE_FILE
    bus = EventBus(Store(path))
    for n in range(events):
        bus.publish(EventType.BUTTON_PRESSED, {"press": n, "padding": "x" * 200})
    bus.close()
    return path


def _empty(tmp_path: Path) -> Case:
    state = tmp_path / "var"
    state.mkdir()
    (state / STORE_FILE).touch()
    return Case(state, state / STORE_FILE, r"is empty \(0 bytes\).*: restore it from a backup, or remove it")


def _truncated(tmp_path: Path) -> Case:
    path = _our_store(tmp_path / "var")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return Case(path.parent, path, r"is damaged \(database disk image is malformed\): restore it from a backup")


def _random_bytes(tmp_path: Path) -> Case:
    state = tmp_path / "var"
    state.mkdir()
    (state / STORE_FILE).write_bytes(os.urandom(8192))
    return Case(state, state / STORE_FILE, r"is not an SQLite database: restore it from a backup, or move it aside")


def _another_programs_database(tmp_path: Path) -> Case:
    state = tmp_path / "var"
    state.mkdir()
    with sqlite3.connect(state / STORE_FILE) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        conn.execute("INSERT INTO notes (text) VALUES ('shopping')")
    conn.close()
    return Case(state, state / STORE_FILE, r"is not an uno-launcher store \(an SQLite database with tables: notes\)")


def _another_program_with_an_events_table(tmp_path: Path) -> Case:
    state = tmp_path / "var"
    state.mkdir()
    with sqlite3.connect(state / STORE_FILE) as conn:
        conn.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, what TEXT)")
        conn.execute("PRAGMA user_version = 3")
    conn.close()
    return Case(state, state / STORE_FILE, r"is not an uno-launcher store \(an SQLite database with tables: events\)")


def _newer_schema(tmp_path: Path) -> Case:
    path = _our_store(tmp_path / "var", events=3)
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    return Case(path.parent, path, rf"was written by a newer uno-launcher \(schema {len(MIGRATIONS) + 1}.*upgrade")


def _a_directory(tmp_path: Path) -> Case:
    state = tmp_path / "var"
    (state / STORE_FILE).mkdir(parents=True)
    return Case(state, state / STORE_FILE, r"is a directory, not a database file: move it aside")


def _parent_cannot_be_made(tmp_path: Path) -> Case:
    (tmp_path / "afile").write_text("not a directory")
    state = tmp_path / "afile" / "var"
    return Case(state, state, r"cannot be made \(Not a directory\): set \[state\] dir")


def _a_journal_without_its_database(tmp_path: Path) -> Case:
    path = _our_store(tmp_path / "var", events=3)
    wal = path.with_name(path.name + "-wal")
    wal.write_bytes(b"\0" * 4096)  # what is left when someone deletes the database but not its write-ahead log
    path.unlink()
    return Case(path.parent, path, rf"is missing but its journal {wal} is there: restore .* or move .* aside")


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    with small_tmpfs(tmp_path / "fs") as mount:
        yield mount


def _read_only_with_a_store(fs: Path) -> Case:
    path = _our_store(fs / "var")
    make_read_only(fs)
    return Case(path.parent, path, rf"cannot be written: {fs / 'var'} is on a read-only file system: remount it")


def _read_only_without_a_store(fs: Path) -> Case:
    (fs / "var").mkdir()
    make_read_only(fs)
    return Case(fs / "var", fs / "var" / STORE_FILE, r"cannot be written: .* is on a read-only file system: remount")


def _full_with_a_store(fs: Path) -> Case:
    path = _our_store(fs / "var")
    fill(fs)
    return Case(path.parent, path, rf"cannot be written: the disk holding {fs / 'var'} is full: free some space")


def _full_without_a_store(fs: Path) -> Case:
    (fs / "var").mkdir()
    fill(fs)
    return Case(fs / "var", fs / "var" / STORE_FILE, r"cannot be written: the disk holding .* is full: free some")


CASES: dict[str, Callable[[Path], Case]] = {
    "empty": _empty,
    "truncated": _truncated,
    "random bytes": _random_bytes,
    "another program's": _another_programs_database,
    "another program's with an events table": _another_program_with_an_events_table,
    "a newer schema": _newer_schema,
    "a directory": _a_directory,
    "a parent that cannot be made": _parent_cannot_be_made,
    "a journal without its database": _a_journal_without_its_database,
}
FS_CASES: dict[str, Callable[[Path], Case]] = {
    "read-only with a store": _read_only_with_a_store,
    "read-only without a store": _read_only_without_a_store,
    "full with a store": _full_with_a_store,
    "full without a store": _full_without_a_store,
}


def _snapshot(case: Case) -> tuple[bytes | None, list[str] | None]:
    """The file's bytes and its directory's listing, to check that nothing changed. SQLite makes a -shm file (an
    index it rebuilds, never data) and an empty -wal as it opens a store, on a full disk too: those are left out."""
    path = case.looked_at
    data = path.read_bytes() if path.is_file() else None
    if not case.state.is_dir():
        return data, None
    wal, shm = f"{STORE_FILE}-wal", f"{STORE_FILE}-shm"
    listing = [p.name for p in case.state.iterdir() if p.name != shm and (p.name != wal or p.stat().st_size > 0)]
    return data, sorted(listing)


def _check(tmp_path: Path, command: str, case: Case) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{case.state}"\n', encoding="utf-8")
    before = _snapshot(case)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "launcher", *COMMANDS[command], "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=tmp_path,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"`{command}` went on with the store as if it were fine:\n{e.stdout!r}")
    # The daemon's log (a timestamped record, e.g. the simulated header's link coming up) may come first.
    lines = [line for line in done.stderr.splitlines() if not LOG_RECORD.match(line)]
    assert (done.returncode, len(lines)) == (2, 1), f"exit {done.returncode}, stderr:\n{done.stderr}"
    prefix = f"uno-launcher: the {'state directory' if case.looked_at == case.state else 'store'} {case.looked_at} "
    assert lines[0].startswith(prefix), lines[0]
    assert re.search(case.message, lines[0][len(prefix) :]), lines[0]
    assert "PIN" not in done.stdout, "PINs were made up for a store that is not there"
    assert _snapshot(case) == before, "the store or its directory was changed"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", CASES)
def test_a_damaged_or_foreign_store_stops_with_one_line(tmp_path: Path, name: str, command: str) -> None:
    _check(tmp_path, command, CASES[name](tmp_path))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("name", FS_CASES)
def test_a_read_only_or_full_disk_stops_with_one_line(small_fs: Path, tmp_path: Path, name: str, command: str) -> None:
    _check(tmp_path, command, FS_CASES[name](small_fs))


def _played_store(tmp_path: Path, damage: str) -> Path:
    """A store a daemon played in (a shuffle open, a press, the wear counters), then one row edited by `damage`."""
    state = tmp_path / "var"
    with local_daemon(state) as daemon:
        assert joined_client(daemon).post("/api/press", json={}).status_code == 200
    path = state / STORE_FILE
    with contextlib.closing(sqlite3.connect(path)) as conn, conn:
        conn.execute(damage)
    return path


# Rows only an edited or damaged database holds, which the daemon needs to resume the launcher: it stops, naming
# the row, rather than go on without them (the open shuffle's record) or guess.
ROW_CASES: dict[str, tuple[str, str]] = {
    "a shuffle's profile": (
        "UPDATE shuffles SET profile = 'garbage'",
        r"has a damaged row: shuffle 1's saved profile cannot be read \(.+\): restore it from a backup",
    ),
    "a shuffle's restarts": (
        "UPDATE shuffles SET restarts = '{\"a\": 1}'",
        r"has a damaged row: shuffle 1's saved restarts cannot be read \(.+\): restore it from a backup",
    ),
    "an event of the open shuffle": (
        "UPDATE events SET data = '[]' WHERE id = (SELECT max(id) FROM events WHERE type = 'button.pressed')",
        r"has a damaged row: event \d+ cannot be read \(.+\): restore it from a backup",
    ),
    "the hopper's count": (
        "INSERT OR REPLACE INTO hopper (id, loaded, dispensed) VALUES (1, 'garbage', 0)",
        r"has a damaged row: the hopper's count cannot be read \(.+\): restore it from a backup",
    ),
    "the wear counters": (
        "UPDATE wear SET period = NULL WHERE period = 'lifetime'",
        r"has a damaged row: the wear counters cannot be read \(.+\): restore it from a backup",
    ),
}


@pytest.mark.parametrize("name", ROW_CASES)
def test_a_damaged_row_the_daemon_resumes_from_stops_it_with_one_line(tmp_path: Path, name: str) -> None:
    damage, message = ROW_CASES[name]
    path = _played_store(tmp_path, damage)
    _check(tmp_path, "run", Case(path.parent, path, message))


def test_a_store_of_an_older_version_is_taken_and_migrated(tmp_path: Path) -> None:
    """A store made before stores were stamped as ours (schema 7, no application id) is still ours."""
    path = tmp_path / STORE_FILE
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:7]:
        conn.executescript(migration)
    conn.execute("PRAGMA user_version = 7")
    conn.execute("INSERT INTO events (id, ts, type, data) VALUES (41, 0, 'daemon.started', '{}')")
    conn.close()
    bus = EventBus(Store(path))
    assert bus.publish(EventType.HARDWARE_OK, {}).id == 42
    bus.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    conn.close()


@pytest.mark.parametrize(
    "states",
    [
        ["not json"],
        ["[" * 100_000 + "]" * 100_000],
        ['{"game": {"players": 7}}'],
        ["not json"] * 2,
        ["[" * 100_000] * 2,
    ],
    ids=["not JSON", "nested too deep", "not a game", "an older game too", "an older game nested too deep"],
)
def test_a_game_whose_stored_state_cannot_be_read_is_kept_and_left_out(
    tmp_path: Path, states: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Only an edited or damaged database holds such a row. The daemon starts all the same, with no game in play
    (a new one can be started) and the row kept as it is, as the history does with an older game it cannot read."""
    with local_daemon(tmp_path) as first, first.store.connect() as conn:
        pins = first.new_pins
        conn.executemany("INSERT INTO games (state, started_ts) VALUES (?, 0)", [(s,) for s in states])
    with local_daemon(tmp_path) as second:
        second.new_pins = pins
        assert second.games.view() is None
        phone = joined_client(second)
        assert phone.post("/api/games", json={"players": ["Ann", "Bob", "Cy"]}).status_code == 201
        with second.store.connect() as conn:
            kept = [row[0] for row in conn.execute("SELECT state FROM games ORDER BY id")][: len(states)]
    assert kept == states
    assert f"game {len(states)} is not in play: its stored state cannot be read" in caplog.text
