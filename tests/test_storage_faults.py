"""Storage faults lose nothing (issue #49, docs/RELIABILITY.md §10): a store on a real small file system filled in
the middle of a game keeps the table pressing, refuses in words what it cannot keep (never a 500), keeps and
saves once there is room everything it acknowledged, and tells the admin; a store on a read-only card is still
backed up, exported and verified. The file systems are real tmpfs mounts (root only: skipped otherwise)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.cli import main
from launcher.daemon import Daemon
from launcher.fairplay.fairness import verify
from launcher.press.hopper import NewestSaver
from launcher.refusals import Refusal
from launcher.store import STORE_FILE, Store, StoreError, hopper_table
from tests.conftest import joined_client, local_config
from tests.small_fs import fill, make_read_only, small_tmpfs
from tests.virtual_clock import VirtualClock

PLAYERS = ["Ann", "Bob", "Cy"]


@contextlib.contextmanager
def daemon_on(state: Path, clock: VirtualClock, **schedule: int) -> Iterator[Daemon]:
    running = Daemon(local_config(state).replace("schedule", **schedule), clock=clock)
    try:
        yield running
    finally:
        running.close()


def stored(path: Path, sql: str) -> Any:
    """What a reader of the store's file sees now, from a connection of its own."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(sql).fetchone()


def empty_the_log(path: Path) -> None:
    """Fold the write-ahead log into the store and cut it to 0 bytes, so that the next write needs new blocks:
    a full disk refuses it (a log already grown is written over in place and needs none)."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0


def press(client: FlaskClient, clock: VirtualClock, daemon: Daemon, body: dict[str, Any]) -> None:
    reply = client.post("/api/press", json=body)
    assert reply.status_code == 200, reply.get_json()
    clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=30)
    assert daemon.controller.snapshot()["fault"] is None


def refused_for_the_disk(reply: Any) -> None:
    assert reply.status_code == 507, reply.get_json()
    error = reply.get_json()["error"]
    assert error["code"] == "disk_full"
    assert "is full: free some space" in error["message"]


def test_a_disk_full_mid_game_keeps_the_table_pressing_and_loses_nothing_acknowledged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = VirtualClock()
    try:
        with small_tmpfs(tmp_path / "fs", "4m") as mount:
            store = mount / STORE_FILE
            with daemon_on(mount, clock) as daemon:
                admin = joined_client(daemon, admin=True)
                table = daemon.app.test_client()
                assert table.post("/api/session", json={"pin": daemon.new_pins.table}).status_code == 201  # type: ignore[union-attr]
                assert table.post("/api/games", json={"players": PLAYERS, "mode": "lowest_total"}).status_code == 201
                assert table.post("/api/hopper", json={"cards": 100}).status_code == 200
                assert table.post("/api/attacks", json={"kind": "hit2", "by": "Ann"}).status_code == 200  # Bob owes 2

                # The first start's PINs are hashed and saved on a thread of their own: saved before the disk fills.
                clock.run_until(lambda: stored(store, "SELECT count(*) FROM pins") == (2,), within=30)
                empty_the_log(store)
                before = daemon.bus.last_id
                filler = fill(mount)
                for _ in range(2):  # Bob's two presses, then presses for whoever the table asks until cards come
                    press(table, clock, daemon, {"player": "Bob"})
                presses = 2
                while daemon.controller.snapshot()["hopper"]["dispensed"] == 0 or presses < 5:
                    press(table, clock, daemon, {})
                    presses += 1
                    assert presses < 60, "no press brought out a card"
                shown = table.get("/api/game").get_json()["game"]
                assert [p["player"] for p in shown["table"]["demands"]] == []  # Bob's Hit 2 is served

                # What cannot be kept is refused in words, and the game stays exactly as it was.
                refused_for_the_disk(table.post("/api/attacks", json={"kind": "skip", "by": "Cy"}))
                refused_for_the_disk(
                    table.post("/api/games/current/rounds", json={"winner": "Ann", "hands": {"Bob": 5, "Cy": 7}})
                )
                refused_for_the_disk(table.post("/api/games", json={"players": ["Dee", "Eve"]}))
                assert table.get("/api/game").get_json()["game"] == shown
                assert "disk_full" in admin.get("/api/session").get_json()["notices"]
                hopper = daemon.controller.snapshot()["hopper"]

                filler.unlink()  # room made: what was kept is saved within a retry, with nobody pressing
                clock.run_until(
                    lambda: (
                        stored(store, "SELECT loaded, dispensed FROM hopper") == (100, hopper["dispensed"])
                        and json.loads(stored(store, "SELECT state FROM games ORDER BY id DESC")[0])["table"]
                        == daemon.games._table.to_dict()
                    ),  # type: ignore[union-attr]
                    within=5,
                )
                assert "notices" not in admin.get("/api/session").get_json()  # the notice goes once writes go
                assert [r.getMessage() for r in caplog.records if r.exc_info] == []  # one line each, no traceback
                saver_lines = [r.getMessage() for r in caplog.records if "could not save" in r.getMessage()]
                assert len(saver_lines) == len(set(saver_lines)) <= 3  # once per saver, not every retry
                assert table.post("/api/attacks", json={"kind": "skip", "by": "Cy"}).status_code == 200
                played = table.get("/api/game").get_json()["game"]
                last = daemon.bus.last_id
            with daemon_on(mount, clock) as again:  # a restart: everything acknowledged is there
                client = again.app.test_client()
                assert client.get("/api/game").get_json()["game"] == played
                assert again.controller.snapshot()["hopper"] == hopper
                pressed = f"SELECT count(*) FROM events WHERE type = 'button.pressed' AND id > {before}"
                assert stored(store, pressed) == (presses,)
                assert stored(store, f"SELECT count(*) FROM events WHERE id > {before} AND id <= {last}") == (
                    last - before,
                )  # every event the phones were shown meanwhile
    finally:
        clock.close()


@pytest.mark.parametrize("stop", ["clean", "killed", "no_temporary_directory"])
def test_a_store_on_a_read_only_card_is_backed_up_exported_and_verified(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stop: str
) -> None:
    """A failing card the kernel turned read-only: the family's backup, export and a shuffle's check still work,
    and hold what was written last (`killed`: still only in the write-ahead log, as a daemon cut off leaves it;
    `no_temporary_directory`: the same, and /tmp on the read-only card too)."""
    if stop == "no_temporary_directory":
        monkeypatch.setattr(tempfile, "tempdir", None)  # looked for again, and none found

        def none_writable() -> str:
            raise FileNotFoundError("No usable temporary directory found")

        monkeypatch.setattr(tempfile, "gettempdir", none_writable)
    clock = VirtualClock()
    try:
        with small_tmpfs(tmp_path / "fs", "4m") as mount:
            config = tmp_path / "launcher.toml"
            config.write_text(f'[state]\ndir = "{mount}"\n', encoding="utf-8")
            with daemon_on(mount, clock) as daemon:
                table = joined_client(daemon)
                assert table.post("/api/games", json={"players": PLAYERS, "mode": "lowest_total"}).status_code == 201
                round_ = {"winner": "Ann", "hands": {"Bob": 5, "Cy": 7}}
                assert table.post("/api/games/current/rounds", json=round_).status_code == 201
                for _ in range(3):
                    press(table, clock, daemon, {})
                assert table.post("/api/shuffles", json={}).status_code == 201  # shuffle 1 ends: its record kept
                if stop != "clean":  # what a kill leaves: the last writes in the log, the log's index beside it
                    kept = tmp_path / "kept"
                    kept.mkdir()
                    for name in (STORE_FILE, STORE_FILE + "-wal", STORE_FILE + "-shm"):
                        (kept / name).write_bytes((mount / name).read_bytes())
            if stop != "clean":
                for name in (STORE_FILE, STORE_FILE + "-wal", STORE_FILE + "-shm"):
                    (mount / name).write_bytes((kept / name).read_bytes())
                assert (mount / (STORE_FILE + "-wal")).stat().st_size > 0
            make_read_only(mount)
            files = {p.name: p.read_bytes() for p in mount.iterdir()}

            backup = tmp_path / "backup.sqlite3"
            assert main(["backup", "--config", str(config), str(backup)]) == 0, capsys.readouterr().err
            with contextlib.closing(sqlite3.connect(backup)) as conn:
                assert conn.execute("SELECT count(*) FROM game_rounds").fetchone() == (1,)
            export = tmp_path / "games.csv"
            assert main(["export", "--config", str(config), "--output", str(export)]) == 0, capsys.readouterr().err
            rows = export.read_text(encoding="utf-8-sig").splitlines()
            assert len(rows) == 1 + len(PLAYERS) and any('"Cy"' in row and ",7," in row for row in rows)
            capsys.readouterr()
            assert main(["verify", "--config", str(config), "--shuffle", "1"]) == 0
            assert "replays all 3 presses" in capsys.readouterr().out
            assert {p.name: p.read_bytes() for p in mount.iterdir()} == files  # the card untouched
    finally:
        clock.close()


def test_the_hopper_saver_keeps_the_newest_count_until_the_store_takes_it() -> None:
    """A failed write of the hopper's count was dropped (106 after a restart instead of 100): now it is tried
    again, and a newer count handed over meanwhile is the one written."""
    clock = VirtualClock()
    disk = {"full": True}
    kept: list[int] = []

    def write(count: int) -> None:
        if disk["full"]:
            raise StoreError("the disk is full", Refusal.DISK_FULL)
        kept.append(count)

    saver = NewestSaver(write, "test-saver", clock=clock)
    try:
        saver.save(5)
        with pytest.raises(StoreError):
            saver.flush()  # whoever waits hears of it; the count is still held
        saver.save(6)
        clock.advance(10 * NewestSaver.RETRY_S)
        assert kept == []
        disk["full"] = False
        clock.run_until(lambda: kept == [6], within=2 * NewestSaver.RETRY_S)
        clock.advance(10 * NewestSaver.RETRY_S)
        assert kept == [6]  # written once, nothing older after it
        saver.flush()  # nothing to raise any more
        saver.save(6)
        saver.save(7)
        saver.save(7)
        saver.flush()
        clock.advance(NewestSaver.RETRY_S)
        assert kept[1:] == [7]  # a repeat of what the store holds is no write (each is a commit the card takes)
    finally:
        saver.close()
        clock.close()


def test_a_shuffle_due_to_end_on_a_full_disk_ends_once_there_is_room_and_verifies(tmp_path: Path) -> None:
    """`[schedule] shuffle_presses` reached while the disk is full: no FAULT; the shuffle goes on, and ends (once,
    its record whole and checking out) at the first press after room is made."""
    clock = VirtualClock()
    try:
        with small_tmpfs(tmp_path / "fs", "4m") as mount:
            store = mount / STORE_FILE
            with daemon_on(mount, clock, shuffle_presses=20) as daemon:
                table = joined_client(daemon)
                clock.run_until(lambda: stored(store, "SELECT count(*) FROM pins") == (2,), within=30)
                empty_the_log(store)
                filler = fill(mount)
                for _ in range(25):
                    press(table, clock, daemon, {})
                assert daemon.shuffles.current is not None and daemon.shuffles.current.number == 1
                filler.unlink()
                press(table, clock, daemon, {})
                told = [
                    (e.type, e.data["shuffle"]) for e in daemon.bus.events_after(0) if e.type.startswith("shuffle.")
                ]
                assert told == [("shuffle.started", 1), ("shuffle.ended", 1), ("shuffle.started", 2)]
                record = daemon.shuffles.record(1)
                assert record is not None and len(record["outcomes"]) == 26
                assert verify(record).ok
    finally:
        clock.close()


@pytest.mark.parametrize("disk", ["full", "read_only"])
def test_the_disks_trouble_is_named_and_noted_by_the_store_until_a_write_goes_through(
    tmp_path: Path, disk: str
) -> None:
    """What the admin is told comes from the store: the disk's trouble at the failed write (full, read-only; a
    read-only card cannot be made while a daemon writes, so its write is tried after the remount), until a commit."""
    with small_tmpfs(tmp_path / "fs", "4m") as mount:
        store = Store(mount / STORE_FILE)
        empty_the_log(store.path)
        spoil = fill if disk == "full" else make_read_only
        spoil(mount)
        with pytest.raises(StoreError) as refused, store.connect() as conn:
            hopper_table.save(conn, 100, 7)
        expected = Refusal.DISK_FULL if disk == "full" else Refusal.DISK_READ_ONLY
        assert refused.value.trouble is expected
        assert store.trouble is not None and store.trouble[0] is expected
        if disk == "full":
            (mount / "filler").unlink()
        else:
            subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
        with store.connect() as conn:
            assert store.trouble is not None  # a read is not a write
            hopper_table.save(conn, 100, 7)
        assert store.trouble is None


def test_a_second_full_disk_is_weathered_like_the_first(tmp_path: Path) -> None:
    """The retries work every time the disk fills, not only the first: a press kept in memory on the second full
    disk is saved once there is room again, with nobody pressing."""
    clock = VirtualClock()
    try:
        with small_tmpfs(tmp_path / "fs", "4m") as mount, daemon_on(mount, clock) as daemon:
            store = mount / STORE_FILE
            table = joined_client(daemon)
            assert table.post("/api/games", json={"players": PLAYERS, "mode": "lowest_total"}).status_code == 201
            clock.run_until(lambda: stored(store, "SELECT count(*) FROM pins") == (2,), within=30)
            for _ in range(2):
                empty_the_log(store)
                filler = fill(mount)
                press(table, clock, daemon, {})
                assert daemon.games.unsaved
                filler.unlink()
                clock.run_until(lambda: not daemon.games.unsaved, within=5)
                state = json.loads(stored(store, "SELECT state FROM games ORDER BY id DESC")[0])
                assert state["table"] == daemon.games._table.to_dict()  # type: ignore[union-attr]
    finally:
        clock.close()
