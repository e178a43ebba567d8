"""The store's write-behind (issue #49, the SD card's wear): the frequent writes wait in memory for a bounded time
and go in the next commit, so that a press costs one commit; nothing handed over is dropped, whatever the disk
does, and a write that must be on the disk never waits behind one that cannot go in."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from launcher.daemon import Daemon
from launcher.store import STORE_FILE, Store, StoreError, WriteBehind, event_table, hopper_table
from launcher.store.placement import file_system_of, kept_in_memory
from tests.conftest import joined_client, local_config
from tests.small_fs import fill, small_tmpfs
from tests.virtual_clock import VirtualClock


class Rig:
    """A store and its write-behind on a virtual clock; `commits` counts the transactions that reached the disk."""

    def __init__(self, path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.store = Store(path)
        self.commits = 0
        real = self.store._committed

        def counted() -> None:
            self.commits += 1
            real()

        monkeypatch.setattr(self.store, "_committed", counted)
        self.clock = VirtualClock()
        self.writes = WriteBehind(self.store, clock=self.clock)
        self.failing = False  # the store refuses the writes made through `hopper` and `event`, as a full disk does

    def hopper(self, dispensed: int) -> Any:
        def write(conn: sqlite3.Connection) -> None:
            if self.failing:
                raise sqlite3.OperationalError("database or disk is full")
            hopper_table.save(conn, 100, dispensed)

        return write

    def event(self, event_id: int) -> Any:
        def write(conn: sqlite3.Connection) -> None:
            if self.failing:
                raise sqlite3.OperationalError("database or disk is full")
            event_table.append(conn, [(event_id, 0.0, "button.pressed", "{}")])

        return write

    def stored(self) -> tuple[tuple[int, int] | None, list[int]]:
        """The hopper's count and the events' ids, as another reader of the file sees them now."""
        with contextlib.closing(sqlite3.connect(self.store.path)) as conn:
            return hopper_table.load(conn), [row[0] for row in event_table.after(conn, 0, limit=100)]

    def close(self) -> None:
        self.writes.close()
        self.clock.close()


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    made = Rig(tmp_path / STORE_FILE, monkeypatch)
    try:
        yield made
    finally:
        made.close()


def game_change(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO games (state, started_ts) VALUES ('{}', 0)")


def games(rig: Rig) -> int:
    with contextlib.closing(sqlite3.connect(rig.store.path)) as conn:
        return int(conn.execute("SELECT count(*) FROM games").fetchone()[0])


def test_a_counter_is_written_once_within_its_bound_the_newest_only(rig: Rig) -> None:
    for dispensed in (1, 2, 3):  # three cards out in a second: three counts handed over
        rig.writes.later("hopper", rig.hopper(dispensed), within_s=2.0)
        rig.clock.advance(0.5)
    assert rig.stored()[0] is None and rig.commits == 0  # 1.5 s after the first: still waiting
    rig.clock.advance(0.49)
    assert rig.stored()[0] is None
    rig.clock.run_until(lambda: rig.stored()[0] is not None, within=0.02)  # 2 s after the first count, not the last
    assert rig.stored()[0] == (100, 3)
    assert rig.commits == 1


def test_what_waits_goes_in_the_commit_of_a_write_that_must_be_on_the_disk(rig: Rig) -> None:
    rig.writes.later("event 1", rig.event(1), within_s=10.0)
    rig.writes.later("hopper", rig.hopper(2), within_s=2.0)
    rig.writes.later("event 2", rig.event(2), within_s=10.0)
    rig.writes.now(game_change)
    assert rig.commits == 1  # the press's events, the hopper's count and the game's change: one commit
    assert rig.stored() == ((100, 2), [1, 2])
    assert games(rig) == 1
    assert rig.writes.waiting == 0


def test_what_waits_is_written_at_the_stop(rig: Rig) -> None:
    rig.writes.later("hopper", rig.hopper(7), within_s=3600.0)
    rig.writes.later("event 1", rig.event(1), within_s=3600.0)
    rig.writes.close()
    assert rig.stored() == ((100, 7), [1])


def test_a_full_disk_keeps_every_write_in_order_and_the_newest_count_until_it_has_room(rig: Rig) -> None:
    rig.failing = True
    rig.writes.later("event 1", rig.event(1), within_s=1.0)
    rig.writes.later("hopper", rig.hopper(1), within_s=1.0)
    rig.clock.advance(1.0 + 5 * WriteBehind.RETRY_S)  # tried and tried again
    rig.writes.later("event 2", rig.event(2), within_s=1.0)
    rig.writes.later("hopper", rig.hopper(2), within_s=1.0)
    with pytest.raises(StoreError):
        rig.writes.flush()
    assert rig.stored() == (None, []) and rig.writes.waiting == 3
    rig.failing = False  # room made: the next try writes everything, the newest count, the events in order
    rig.clock.run_until(lambda: rig.writes.waiting == 0, within=2 * WriteBehind.RETRY_S)
    assert rig.stored() == ((100, 2), [1, 2])


def test_a_write_that_cannot_go_in_never_stops_one_that_must(rig: Rig) -> None:
    rig.failing = True
    rig.writes.later("hopper", rig.hopper(1), within_s=60.0)
    rig.writes.now(game_change)  # the game's change is saved alone, the count keeps waiting
    assert games(rig) == 1 and rig.stored()[0] is None and rig.writes.waiting == 1
    rig.failing = False
    rig.writes.now(game_change)
    assert games(rig) == 2 and rig.stored()[0] == (100, 1)


def test_a_press_in_a_game_is_one_commit_and_its_events_and_count_are_saved_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the daemon: once a press's change of the game is saved (and told to the phones), the press's events
    and the hopper's count are in the store too, with no time passing: a power cut then loses none of them, and the
    shuffle replayed at the restart knows that press."""
    commits: list[int] = []
    counting = [False]
    real = Store._committed

    def committed(store: Store) -> None:
        commits.extend([1] if counting[0] else [])
        real(store)

    monkeypatch.setattr(Store, "_committed", committed)  # every connection of the store's, as it is opened
    clock = VirtualClock()
    daemon = None
    try:
        daemon = Daemon(local_config(tmp_path), clock=clock)
        table = joined_client(daemon)
        assert table.post("/api/games", json={"players": ["Ann", "Bob"], "mode": "lowest_total"}).status_code == 201
        assert table.post("/api/hopper", json={"cards": 100}).status_code == 200
        with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn:  # a refill answered is on the disk
            assert hopper_table.load(conn) == (100, 0)
        with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn:  # the first start's PINs, then the rest
            clock.run_until(lambda: conn.execute("SELECT count(*) FROM pins").fetchone() == (2,), within=30)
        clock.run_until(lambda: daemon is not None and daemon.writes.waiting == 0, within=60)
        counting[0] = True
        for _ in range(5):
            before = daemon.bus.last_id
            assert table.post("/api/press", json={}).status_code == 200
            clock.run_until(lambda d=daemon: not d.controller.snapshot()["busy"], within=30)  # type: ignore[misc]
            pressed = [e for e in daemon.bus.events_after(before) if e.type in ("button.pressed", "attack.progress")]
            assert [e.type for e in pressed] == ["button.pressed", "attack.progress"]
            with contextlib.closing(sqlite3.connect(daemon.store.path)) as conn:
                saved = {row[0] for row in conn.execute("SELECT type FROM events WHERE id > ?", (before,))}
                count = hopper_table.load(conn)
            assert "button.pressed" in saved  # the shuffle's record of the press, with the game's change
            assert count is not None and count[1] == daemon.controller.snapshot()["hopper"]["dispensed"]
        assert len(commits) == 5  # one commit a press: its events, the count, the wear counters due, the game
    finally:
        if daemon is not None:
            daemon.close()
        clock.close()


def test_a_full_card_under_the_write_behind_is_told_to_the_admin_and_nothing_pressed_is_lost(
    tmp_path: Path,
) -> None:
    """A real tmpfs (root only) filled in the daemon's first seconds, before the write-behind's first commit, and
    presses with no game on: only the write-behind writes, on its thread, and fails. The store must still be read:
    the admin is told the card is full (GET /api/session reads the store: never a 507 for that read), every event
    since the start reaches the store once there is room, and the notice goes."""
    clock = VirtualClock()
    try:
        with small_tmpfs(tmp_path / "fs", "4m") as mount:
            daemon = Daemon(local_config(mount), clock=clock)
            try:
                admin = joined_client(daemon, admin=True)
                table = joined_client(daemon)
                path = daemon.store.path
                with contextlib.closing(sqlite3.connect(path)) as conn:
                    clock.run_until(lambda: conn.execute("SELECT count(*) FROM pins").fetchone() == (2,), within=30)
                with contextlib.closing(sqlite3.connect(path)) as conn:  # the next commit needs new blocks
                    assert conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0
                filler = fill(mount)
                for _ in range(3):
                    assert table.post("/api/press", json={}).status_code == 200
                    clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=30)
                clock.advance(30.0)  # every bound passed: the write-behind tried, and tries again
                assert daemon.writes.waiting > 0
                fill(mount)  # the card goes on filling (another program's log): whatever a failed write freed
                told = admin.get("/api/session")
                assert told.status_code == 200, told.get_json()
                assert told.get_json()["notices"] == ["disk_full"]
                last = daemon.bus.last_id

                filler.unlink()
                clock.run_until(lambda: daemon.writes.waiting == 0, within=2 * WriteBehind.RETRY_S)
                assert "notices" not in admin.get("/api/session").get_json()
                with contextlib.closing(sqlite3.connect(path)) as conn:
                    saved = [row[0] for row in conn.execute("SELECT id FROM events WHERE id <= ? ORDER BY id", (last,))]
                assert saved == list(range(1, last + 1))  # every event the phones were shown
            finally:
                daemon.close()
    finally:
        clock.close()


# --- where the store lives ----------------------------------------------------------------------------------------

MOUNTS = """\
22 1 179:2 / / ro,noatime shared:1 - ext4 /dev/mmcblk0p2 ro
30 1 0:27 / / rw,noatime shared:14 - overlay overlayroot rw,lowerdir=/media/root-ro,upperdir=/media/root-rw/overlay
31 30 8:1 / /var/lib/uno-launcher rw,noatime shared:15 - ext4 /dev/sda1 rw
32 30 0:28 / /media/my\\040stick rw shared:16 - vfat /dev/sdb1 rw
"""


@pytest.mark.parametrize(
    ("path", "kind", "warned"),
    [
        ("/var/lib/uno-launcher/launcher.sqlite3", "ext4", False),  # the writable partition HARDWARE.md has made
        ("/var/lib/uno-launcher-old/launcher.sqlite3", "overlay", True),  # a sibling name is not under the mount
        ("/home/pi/.local/state/uno-launcher/launcher.sqlite3", "overlay", True),  # the overlaid root: lost at boot
        ("/media/my stick/state/launcher.sqlite3", "vfat", False),  # a mount point with a space in its name
    ],
)
def test_a_store_on_the_overlaid_root_is_named_as_lost_at_the_next_boot(path: str, kind: str, warned: bool) -> None:
    assert file_system_of(Path(path), MOUNTS) == kind
    said = kept_in_memory(Path(path), MOUNTS)
    assert (said is not None) is warned
    if said is not None:
        assert "gone at the next boot" in said and "[state] dir" in said


def test_the_daemon_says_so_when_its_store_is_in_memory(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A real tmpfs (root only, as the CI runs): the daemon starts, and its log says the store will not last."""
    with small_tmpfs(tmp_path / "fs", "4m") as mount:
        clock = VirtualClock()
        try:
            Daemon(local_config(mount), clock=clock).close()
        finally:
            clock.close()
    assert "is on a file system kept in memory (tmpfs)" in caplog.text
