"""The event log: ids strictly increase for ever, survive restarts, and replay exactly what a phone missed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from launcher.events import EventBus, EventType
from launcher.store import MIGRATIONS, Store


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
        (saved,) = store.events_after(conn, 0, 10)
    assert (saved.id, saved.type, saved.data["name"]) == (1, "launcher.fired", "小明")


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
    with pytest.raises(RuntimeError, match="newer than this program knows"):
        Store(path)
