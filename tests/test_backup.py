"""Backups and restore: a family's history survives a dead SD card, and a restore never loses the store it replaces.

What is promised (docs/RELIABILITY.md, "Backups"): `uno-launcher backup FILE` is safe while the daemon runs and
writes one self-contained, whole file; `--into DIR --keep N` keeps the newest N; `uno-launcher restore FILE` refuses,
naming why, anything that is not a whole backup of this project's store, and refuses while a daemon runs on the
store; the store it replaces is kept beside it; the restored store hands out event ids above every id the replaced
one had handed out. One daemon per state directory, and a daemon killed with -9 leaves no stale lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from launcher.cli import main
from launcher.config import Config
from launcher.daemon import Daemon, StartupError
from launcher.events import EventBus, EventType
from launcher.store import APPLICATION_ID, MIGRATIONS, STORE_FILE, Store, StoreError, event_table
from launcher.store.migrations import normalized_sql
from launcher.system import backup
from launcher.system.statelock import StateDirBusy, StateLock


def _store(state: Path, events: int = 0) -> Path:
    store = Store(state / STORE_FILE)
    with store.connect() as conn:
        event_table.append(conn, [(i, float(i), "button.pressed", f'{{"n":{i}}}') for i in range(1, events + 1)])
    return store.path


def _event_ids(path: Path) -> list[int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT id FROM events ORDER BY id")]
    finally:
        conn.close()


def _digest(path: Path) -> str:
    """The store's bytes, with its WAL: what a refused restore must leave exactly as it was."""
    h = hashlib.sha256()
    for part in (path, path.with_name(path.name + "-wal")):
        if part.exists():
            h.update(part.read_bytes())
    return h.hexdigest()


def test_a_backup_while_the_store_is_written_is_a_whole_consistent_file(tmp_path: Path) -> None:
    path = _store(tmp_path / "state", events=100)
    store = Store(path)
    stop = threading.Event()

    def keep_writing() -> None:
        n = 101
        while not stop.is_set():
            with store.connect() as conn:
                event_table.append(conn, [(n, float(n), "button.pressed", f'{{"n":{n}}}')])
            n += 1

    writer = threading.Thread(target=keep_writing)
    writer.start()
    try:
        made = backup.backup(path, tmp_path / "evening.sqlite3")
    finally:
        stop.set()
        writer.join()
    assert made.path == tmp_path / "evening.sqlite3" and made.schema == len(MIGRATIONS)
    assert not (tmp_path / "evening.sqlite3-wal").exists(), "a backup is one file"
    ids = _event_ids(made.path)
    assert ids == list(range(1, len(ids) + 1)) and len(ids) >= 100, "a snapshot: every event up to a point, no gap"
    conn = sqlite3.connect(made.path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


def test_a_backup_never_replaces_a_file(tmp_path: Path) -> None:
    path = _store(tmp_path / "state", events=3)
    existing = tmp_path / "keep.sqlite3"
    existing.write_text("my notes")
    with pytest.raises(StoreError, match="exists already"):
        backup.backup(path, existing)
    assert existing.read_text() == "my notes"


def test_backups_into_a_directory_keep_the_newest_and_nothing_else_is_touched(tmp_path: Path) -> None:
    path = _store(tmp_path / "state", events=3)
    folder = tmp_path / "backups"
    folder.mkdir()
    (folder / "photo.jpg").write_text("not ours")
    made = [backup.backup_into(path, folder, keep=3, now=1_800_000_000 + day * 86400)[0] for day in range(5)]
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted([m.path.name for m in made[2:]] + ["photo.jpg"])


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: None, "there is no file"),
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_text("game night\n"), "not an SQLite database"),
        (lambda p: p.write_bytes(b""), "not an SQLite database"),
        (lambda p: sqlite3.connect(p).execute("CREATE TABLE photos (id INTEGER)").connection.commit(), "photos"),
    ],
    ids=["missing", "directory", "text", "empty", "another-program"],
)
def test_restore_refuses_what_is_not_a_backup_and_changes_nothing(tmp_path: Path, make, why: str) -> None:  # type: ignore[no-untyped-def]
    state = tmp_path / "state"
    path = _store(state, events=5)
    before = _digest(path)
    source = tmp_path / "backup.sqlite3"
    make(source)
    with pytest.raises(StoreError, match=why):
        backup.restore(source, state)
    assert _digest(path) == before
    assert not [p for p in state.iterdir() if "restor" in p.name], "nothing half-made is left behind"


def test_restore_refuses_a_damaged_backup(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = _store(state, events=5)
    before = _digest(path)
    made = backup.backup(_store(tmp_path / "other", events=2000), tmp_path / "b.sqlite3")
    data = bytearray(made.path.read_bytes())
    page = 4096
    data[3 * page : 3 * page + 200] = b"\xff" * 200  # a page of the events' table overwritten
    made.path.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="damaged"):
        backup.restore(made.path, state)
    assert _digest(path) == before


def test_restore_refuses_a_newer_uno_launchers_backup(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = _store(state)
    made = backup.backup(_store(tmp_path / "other"), tmp_path / "b.sqlite3")
    conn = sqlite3.connect(made.path)
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    before = _digest(path)
    with pytest.raises(StoreError, match="newer uno-launcher"):
        backup.restore(made.path, state)
    assert _digest(path) == before


def test_restore_refuses_while_a_daemon_runs_on_the_store(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = Config().replace("state", dir=str(state)).replace("web", host="127.0.0.1", port=0)
    daemon = Daemon(config)
    try:
        made = backup.backup(state / STORE_FILE, tmp_path / "b.sqlite3")
        before = (state / STORE_FILE).stat().st_ino  # the running daemon writes to it meanwhile: not its bytes
        with pytest.raises(StateDirBusy, match=r"another uno-launcher \(process \d+\)"):
            backup.restore(made.path, state)
        assert (state / STORE_FILE).stat().st_ino == before, "the store was replaced under the daemon"
        assert not [p for p in state.iterdir() if "restor" in p.name], "nothing of a restore was begun"
    finally:
        daemon.close()
    backup.restore(made.path, state)  # stopped: now it may


def test_a_restore_keeps_the_replaced_store_whole_even_what_only_its_wal_held(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = _store(state, events=10)
    made = backup.backup(path, tmp_path / "monday.sqlite3")
    # A daemon killed with -9 after 40 more events: they are in the WAL only, never checkpointed.
    script = (
        "import sqlite3, sys, os\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA journal_mode=WAL'); c.execute('PRAGMA wal_autocheckpoint=0')\n"
        'c.executemany(\'INSERT INTO events (id, ts, type, data) VALUES (?, 0, "button.pressed", "{}")\','
        " [(i,) for i in range(11, 51)])\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True)
    assert path.with_name(STORE_FILE + "-wal").stat().st_size > 0
    restored, kept = backup.restore(made.path, state, now=1_800_000_000)
    assert _event_ids(restored.path) == list(range(1, 11))
    assert kept is not None and kept.name.startswith("launcher.sqlite3.before-restore-")
    assert _event_ids(kept) == list(range(1, 51)), "the replaced store is kept with every event it had"
    assert not path.with_name(STORE_FILE + "-wal").exists() or _event_ids(path) == list(range(1, 11))


def test_after_a_restore_no_event_id_a_phone_has_seen_is_handed_out_again(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = _store(state, events=10)
    made = backup.backup(path, tmp_path / "early.sqlite3")
    bus = EventBus(Store(path))
    seen = [bus.publish(EventType.BUTTON_PRESSED, {}).id for _ in range(30)]
    bus.close()
    backup.restore(made.path, state)
    bus = EventBus(Store(path))
    try:
        new = bus.publish(EventType.BUTTON_PRESSED, {}).id
    finally:
        bus.close()
    assert new > max(seen)


def test_a_restored_store_is_what_the_next_daemon_starts_with(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = Config().replace("state", dir=str(state)).replace("web", host="127.0.0.1", port=0)
    first = Daemon(config)
    pins = first.new_pins
    first.close()
    assert pins is not None
    made = backup.backup(state / STORE_FILE, tmp_path / "b.sqlite3")
    (state / STORE_FILE).unlink()  # the SD card's store lost
    for suffix in ("-wal", "-shm"):
        (state / (STORE_FILE + suffix)).unlink(missing_ok=True)
    backup.restore(made.path, state)
    again = Daemon(config)
    try:
        assert again.new_pins is None, "the restored store has the PINs: no new ones are made up"
    finally:
        again.close()


def test_one_daemon_per_state_directory(tmp_path: Path) -> None:
    config = Config().replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=0)
    first = Daemon(config)
    try:
        with pytest.raises(StartupError, match=r"another uno-launcher \(process \d+\) is using the state"):
            Daemon(config)
    finally:
        first.close()
    Daemon(config).close()  # once the first is closed, the next one starts


def test_a_daemon_killed_with_9_leaves_no_stale_lock(tmp_path: Path) -> None:
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, pathlib; from launcher.system.statelock import StateLock; "
            "StateLock(pathlib.Path(sys.argv[1])); print('held', flush=True); sys.stdin.read()",
            str(tmp_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "held\n"
            with pytest.raises(StateDirBusy, match=f"process {holder.pid}"):
                StateLock(tmp_path)
        finally:
            holder.kill()
    with StateLock(tmp_path) as lock:
        lock.close()  # closing twice is fine


def test_the_command_line_backs_up_and_restores_with_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    _store(state, events=4)
    config = tmp_path / "config.toml"
    config.write_text(f'[state]\ndir = "{state}"\n')
    assert main(["backup", "--config", str(config), str(tmp_path / "b.sqlite3")]) == 0
    assert "Backed up" in capsys.readouterr().out
    assert main(["backup", "--config", str(config)]) == 2
    assert "give a FILE to write, or --into DIR" in capsys.readouterr().err
    assert main(["backup", "--config", str(config), str(tmp_path / "b.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert "exists already" in err and "Traceback" not in err
    assert main(["restore", "--config", str(config), str(config)]) == 2
    assert "not an SQLite database" in capsys.readouterr().err
    assert main(["restore", "--config", str(config), str(tmp_path / "b.sqlite3")]) == 0
    out = capsys.readouterr().out
    assert "Restored" in out and "before-restore-" in out
    with StateLock(state):
        assert main(["restore", "--config", str(config), str(tmp_path / "b.sqlite3")]) == 2
        assert "another uno-launcher" in capsys.readouterr().err


@pytest.mark.parametrize("version", range(1, len(MIGRATIONS) + 1))
def test_a_backup_of_any_schema_a_store_of_ours_had_is_restored_and_upgraded(tmp_path: Path, version: int) -> None:
    """Restore compares every object's SQL with a store the migrations build: a store an older daemon upgraded
    statement by statement, typed however its migrations were, must be taken."""
    old = tmp_path / "old.sqlite3"
    with contextlib.closing(sqlite3.connect(old, isolation_level=None)) as conn:
        for number in range(version):
            for statement in (s.strip() for s in MIGRATIONS[number].split(";") if s.strip()):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number + 1}")
    state = tmp_path / "state"
    restored, _ = backup.restore(old, state)
    assert restored.schema == version
    with contextlib.closing(sqlite3.connect(state / STORE_FILE)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS), "upgraded by the restore"


def test_how_a_statement_was_typed_does_not_count_and_anything_it_says_does() -> None:
    typed = "CREATE  TABLE t (\n    a TEXT NOT NULL DEFAULT '  two  spaces',\n\tb \"odd  name\"\n)"
    assert normalized_sql(typed) == "CREATE TABLE t ( a TEXT NOT NULL DEFAULT '  two  spaces', b \"odd  name\" )"
    assert normalized_sql(typed) != normalized_sql(typed.replace("'  two  spaces'", "' two spaces'"))
    assert normalized_sql(typed) != normalized_sql(typed.replace('"odd  name"', '"odd name"'))
    assert normalized_sql(None) == ""  # an index SQLite makes for a key has no SQL
