"""The event log: ids strictly increase for ever, survive restarts, and replay exactly what a phone missed."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from launcher.config import Config
from launcher.daemon import Daemon
from launcher.events import EventBus, EventType
from launcher.store import MIGRATIONS, STORE_FILE, Store, StoreError, WriteBehind, event_table, shuffle_table
from tests.small_fs import fill, small_tmpfs


def test_ids_continue_after_a_restart(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite3")
    bus = EventBus(store)
    first = [bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(5)]
    bus.close()

    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    later = bus.publish(EventType.BUTTON_PRESSED, {"press": 5}).id
    bus.close()
    assert first == [1, 2, 3, 4, 5]
    assert later == 6


def test_every_event_is_saved_with_its_data(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite3")
    bus = EventBus(store)
    bus.publish(EventType.LAUNCHER_FIRED, {"press": 1, "requested": 3, "dispensed": 3, "name": "小明"})
    bus.close()
    with store.connect() as conn:
        ((event_id, _, event_type, data),) = event_table.after(conn, 0, limit=10)
    assert (event_id, event_type, json.loads(data)["name"]) == (1, "launcher.fired", "小明")


def test_replay_reads_old_events_from_the_store_and_new_ones_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(EventBus, "RECENT", 10)
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    for n in range(50):
        bus.publish(EventType.BUTTON_PRESSED, {"press": n})
    assert [e.id for e in bus.events_after(45)] == [46, 47, 48, 49, 50]  # all in memory
    assert [e.id for e in bus.events_after(3)] == list(range(4, 51))  # mostly from the store
    assert [e.id for e in bus.events_after(3, limit=5)] == [4, 5, 6, 7, 8]
    assert bus.events_after(50) == []
    bus.close()


def test_memory_for_replay_stays_bounded_however_large_the_events(tmp_path: Path) -> None:
    """A long game's scoreboard makes large events: memory keeps at most RECENT_BYTES of them, the store the rest."""
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    big = "x" * 20_000
    for n in range(200):  # 4 MB of events in all
        bus.publish(EventType.BUTTON_PRESSED, {"press": n, "scoreboard": big})
    kept = bus.events_after(200 - 5)  # the newest, straight from memory
    assert [e.id for e in kept] == [196, 197, 198, 199, 200]
    in_memory = bus.events_after(bus.last_id - 1, limit=1)[0]
    assert in_memory.id == 200
    held = sum(len(e.json_text) for e in bus._recent)
    assert held <= 512 * 1024, f"{held} bytes of events held in memory (half a megabyte at most)"
    replayed: list[int] = []
    while page := bus.events_after(replayed[-1] if replayed else 0, limit=300):  # pages bounded in bytes
        replayed += [e.id for e in page]
    assert replayed == list(range(1, 201)), "the rest comes from the store"
    bus.close()


def test_wait_wakes_on_publish_and_on_shutdown(tmp_path: Path) -> None:
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    assert not bus.wait(0, timeout=0.01)
    bus.publish(EventType.HARDWARE_OK, {})
    assert bus.wait(0, timeout=0.01)
    bus.end_streams()
    assert not bus.wait(1, timeout=5)  # returns at once: the streams are over
    assert bus.streams_ended
    bus.close()
    bus.close()


def test_schema_is_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    Store(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(StoreError, match="written by a newer uno-launcher"):
        Store(path)


class _FailingWrites:
    """Store writes that fail with the error of a full disk while `failing` is set."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
        self.failing = True
        for name in names:
            real = getattr(event_table, name)

            def fail(*args: object, _real: Any = real) -> Any:
                if self.failing:
                    raise sqlite3.OperationalError("database or disk is full")
                return _real(*args)

            monkeypatch.setattr(event_table, name, fail)


def test_no_id_is_given_again_after_events_failed_to_save_and_a_clean_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    failure = _FailingWrites(monkeypatch, "append")
    shown = [bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(5)]
    bus.close()  # the log never got them, but phones saw them
    failure.failing = False
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    assert bus.publish(EventType.BUTTON_PRESSED, {"press": 5}).id > max(shown)
    bus.close()
    assert "not in the log" in caplog.text


def test_no_id_is_given_again_when_no_write_at_all_succeeds_until_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    failure = _FailingWrites(monkeypatch, "append", "reserve_ids")
    shown = [bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(5)]
    bus.close()
    failure.failing = False
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    assert bus.publish(EventType.BUTTON_PRESSED, {"press": 5}).id > max(shown)
    bus.close()


def test_events_that_failed_to_save_are_saved_once_the_disk_has_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(WriteBehind, "RETRY_S", 0.01)
    store = Store(tmp_path / "db.sqlite3")
    bus = EventBus(store)
    failure = _FailingWrites(monkeypatch, "append")
    shown = [bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(5)]
    failure.failing = False
    shown += [bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(5, 8)]
    bus.close()
    with store.connect() as conn:
        assert [event_id for event_id, *_ in event_table.after(conn, 0, limit=100)] == shown


def test_when_the_reserved_ids_run_out_publish_waits_for_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(EventBus, "RESERVE", 10)
    monkeypatch.setattr(WriteBehind, "RETRY_S", 0.01)
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    failure = _FailingWrites(monkeypatch, "append", "reserve_ids")
    ids: list[int] = []
    publisher = threading.Thread(
        target=lambda: ids.extend(bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(15))
    )
    publisher.start()
    publisher.join(0.5)
    assert publisher.is_alive() and ids == list(range(1, 11))  # only the ids reserved at the start
    failure.failing = False
    publisher.join(10)
    assert ids == list(range(1, 16))
    bus.close()


def test_no_id_is_given_again_after_a_full_disk_and_a_clean_stop(tmp_path: Path) -> None:
    """A real full filesystem: a 1 MiB tmpfs (needs root, as the CI runs), filled while events are published."""
    with small_tmpfs(tmp_path / "fs") as mount:
        bus = EventBus(Store(mount / "db.sqlite3"))
        filler = fill(mount)
        shown = [bus.publish(EventType.BUTTON_PRESSED, {"press": n, "pad": "x" * 4000}).id for n in range(300)]
        bus.close()  # the disk is still full: nothing more could be saved
        filler.unlink()
        bus = EventBus(Store(mount / "db.sqlite3"))
        assert bus.publish(EventType.BUTTON_PRESSED, {}).id > max(shown)
        bus.close()


def test_a_store_killed_under_the_old_rule_numbers_on_past_its_margin(tmp_path: Path) -> None:
    """Schema 7 marked a run that never ended in `running`; the next run went 10,000 past the log. Kept so."""
    for killed in (False, True):
        path = tmp_path / f"{killed}.sqlite3"
        conn = sqlite3.connect(path, isolation_level=None)
        for migration in MIGRATIONS[:7]:
            conn.executescript(migration)
        conn.execute("PRAGMA user_version = 7")
        conn.execute("INSERT INTO events (id, ts, type, data) VALUES (41, 0, 'daemon.started', '{}')")
        if killed:
            conn.execute("INSERT INTO running (id) VALUES (1)")
        conn.close()
        bus = EventBus(Store(path))
        assert bus.publish(EventType.HARDWARE_OK, {}).id == (10_042 if killed else 42)
        bus.close()


DAY_S = 24 * 3600


def _old_log(store: Store, *, ids: range, age_days: float) -> None:
    with store.connect() as conn:
        event_table.append(
            conn, [(i, time.time() - age_days * DAY_S, "button.pressed", f'{{"press":{i}}}') for i in ids]
        )


def test_the_log_forgets_what_is_older_than_it_keeps_but_never_the_shuffle_in_play(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite3")
    _old_log(store, ids=range(1, 11), age_days=100)
    _old_log(store, ids=range(11, 21), age_days=1)
    with store.connect() as conn:  # a shuffle still open began at event 5: a restart replays its presses from there
        shuffle_table.start(conn, 1, "classic", "00" * 32, "ab" * 32, 5, time.time() - 100 * DAY_S)
    bus = EventBus(store, keep_days=90)
    assert [e.id for e in bus.events_after(0)] == list(range(5, 21))
    assert bus.publish(EventType.BUTTON_PRESSED, {"press": 21}).id == 21  # ids go on past every one forgotten
    bus.close()

    with store.connect() as conn:  # once it has ended, its record holds what it needs
        shuffle_table.end(conn, 1, "{}", time.time())
    bus = EventBus(store, keep_days=90)
    assert [e.id for e in bus.events_after(0)] == list(range(11, 22))
    bus.close()


def test_a_daemon_that_never_stops_forgets_old_events_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(EventBus, "FORGET_EVERY", 10)  # saved events between two looks at the oldest
    wall = [time.time()]
    bus = EventBus(Store(tmp_path / "db.sqlite3"), keep_days=1, wall=lambda: wall[0])
    old = [bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(5)]
    wall[0] += 2 * DAY_S  # two days later, still running
    new = [bus.publish(EventType.BUTTON_PRESSED, {"press": n}).id for n in range(5, 15)]
    bus.close()
    assert old == [1, 2, 3, 4, 5]
    with Store(tmp_path / "db.sqlite3").connect() as conn:
        assert [event_id for event_id, *_ in event_table.after(conn, 0, limit=100)] == new


def test_an_old_log_is_kept_whole_where_the_days_allow(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite3")
    _old_log(store, ids=range(1, 6), age_days=100)
    bus = EventBus(store, keep_days=365)
    assert [e.id for e in bus.events_after(0)] == [1, 2, 3, 4, 5]
    bus.close()


def test_the_daemon_keeps_the_days_of_log_its_config_says(tmp_path: Path) -> None:
    store = Store(tmp_path / STORE_FILE)
    _old_log(store, ids=range(1, 4), age_days=40)
    _old_log(store, ids=range(4, 6), age_days=20)
    daemon = Daemon(Config().replace("state", dir=str(tmp_path), keep_events_days=30).replace("web", port=0))
    try:
        assert [e.id for e in daemon.bus.events_after(0)][:3] == [4, 5, 6]  # 6: the daemon's own start
    finally:
        daemon.close()


def test_a_replay_of_a_log_of_large_events_comes_in_pages_bounded_in_bytes(tmp_path: Path) -> None:
    """An older version's events carried a whole game each (100 KB and more): a phone replaying them from id 0 is
    sent them a page at a time, each page a few hundred KB, not a thousand events at once."""
    store = Store(tmp_path / "db.sqlite3")
    big = json.dumps({"scoreboard": {"rounds": ["x" * 100] * 1000}})  # 100 KB
    with store.connect() as conn:
        event_table.append(conn, [(i, time.time(), "round.scored", big) for i in range(1, 21)])
    bus = EventBus(store)
    seen: list[int] = []
    pages = 0
    while page := bus.events_after(seen[-1] if seen else 0):
        assert sum(len(e.data_text) for e in page[:-1]) < EventBus.PAGE_BYTES
        seen += [e.id for e in page]
        pages += 1
    bus.close()
    assert seen == list(range(1, 21)) and pages >= 20 * len(big) // EventBus.PAGE_BYTES


def test_a_replayed_event_is_sent_byte_for_byte_as_it_was_sent_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(EventBus, "RECENT", 1)
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    live = [bus.publish(EventType.ROUND_SCORED, {"winner": "小明", "n": n, "x": 0.1}).json_text for n in range(3)]
    bus.close()
    bus = EventBus(Store(tmp_path / "db.sqlite3"))
    assert [e.json_text for e in bus.events_after(0)] == live
    assert json.loads(live[0]) == {"id": 1, "ts": json.loads(live[0])["ts"], "type": "round.scored",
                                   "data": {"winner": "小明", "n": 0, "x": 0.1}}  # fmt: skip
    bus.close()
