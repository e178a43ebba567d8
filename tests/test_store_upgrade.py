"""A store left by the version before the renames (tests/stores/schema-8.sql, made by that version's code) opens
with today's code and keeps every record: the ended shuffle's record as it was revealed, the open shuffle with its
contributions, presses and lid opening, the hopper's count, and the event log under the new event names."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from launcher.cli import main
from launcher.daemon import Daemon
from launcher.fairplay import fairness
from launcher.store import MIGRATIONS, STORE_FILE, Store
from tests.conftest import MakeDaemon
from tests.test_shuffles import fast

OLD_STORE = Path(__file__).parent / "stores" / "schema-8.sql"


def old_store(directory: Path) -> Path:
    path = directory / STORE_FILE
    conn = sqlite3.connect(path)
    try:
        conn.executescript(OLD_STORE.read_text(encoding="utf-8"))
    finally:
        conn.close()
    return path


def rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def before(tmp_path: Path) -> Path:
    """The old store, and what it held as the old version wrote it."""
    return old_store(tmp_path)


@pytest.fixture
def daemon(make_daemon: MakeDaemon, before: Path) -> Daemon:
    return make_daemon(fast(before.parent).replace("schedule", profile="pattern"))


def test_the_schema_moves_on_and_every_row_is_kept(before: Path) -> None:
    old_events = rows(before, "SELECT id, ts, type, data FROM events ORDER BY id")
    old_rounds = rows(before, "SELECT * FROM rounds ORDER BY number")
    old_deck = rows(before, "SELECT * FROM deck")
    Store(before)
    assert rows(before, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    tables = {name for (name,) in rows(before, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"shuffles", "hopper"} <= tables and not {"rounds", "deck"} & tables
    assert rows(before, "SELECT * FROM shuffles ORDER BY number") == old_rounds  # the records as revealed
    assert rows(before, "SELECT * FROM hopper") == old_deck == [(1, 80, 5)]
    new_events = rows(before, "SELECT id, ts, type, data FROM events ORDER BY id")
    assert [(i, ts) for i, ts, _, _ in new_events] == [(i, ts) for i, ts, _, _ in old_events]
    renamed = {"round.started": "shuffle.started", "round.ended": "shuffle.ended"}
    renamed["round.contributed"] = "shuffle.contributed"
    hopper = {"deck.changed": "hopper.changed", "deck.reloaded": "hopper.reloaded"}
    for (_, _, old_type, old_data), (_, _, new_type, new_data) in zip(old_events, new_events, strict=True):
        old, new = json.loads(old_data), json.loads(new_data)
        if old_type in renamed:
            assert new_type == renamed[old_type]
            assert new == {**{k: v for k, v in old.items() if k != "round"}, "shuffle": old["round"]}
        elif old_type in hopper:
            assert new_type == hopper[old_type] and new == old
        else:
            assert new_type == old_type and new == old


def test_the_open_shuffle_resumes_where_the_old_version_left_it(daemon: Daemon, before: Path) -> None:
    (number, commitment), *_ = rows(before, "SELECT number, commitment FROM shuffles WHERE ended_ts IS NULL")
    shown = daemon.app.test_client().get("/api/state").get_json()["shuffle"]
    assert shown["number"] == number == 2 and shown["commitment"] == commitment
    assert shown["presses"] == 4 and shown["contributions_open"] is False and shown["phase"] == "fixed"

    assert daemon.controller.press("web").wait(10)
    record, started = daemon.controller.new_shuffle()
    # Started before commit-then-reveal: played on under its own rules, and revealed in their format.
    assert record["format"] == fairness.FORMAT_V4 and record["shuffle"] == 2 and started["number"] == 3
    assert record["restarts"] == [2] and len(record["outcomes"]) == 5
    assert [o["stop"] for o in record["outcomes"]][:4] == ["miss", "count", "miss", "count"]  # from the old log
    assert fairness.verify(record, seen_commitment=commitment, mine=["fedcba9876543210fedcba9876543210"]).ok


def test_the_ended_shuffle_is_served_and_verifies_as_it_was_revealed(daemon: Daemon, before: Path) -> None:
    ((stored,),) = rows(before, "SELECT record FROM shuffles WHERE number = 1")
    client: FlaskClient = daemon.app.test_client()
    served = client.get("/api/shuffles/1")
    assert served.status_code == 200
    record = served.get_json()
    assert record == json.loads(stored)
    assert record["format"] == "uno-launcher-round/2" and record["round"] == 1
    assert record["restarts"] == [4] and len(record["contributions"]) == 2
    assert fairness.verify(record).ok


def test_verify_reads_the_old_store_by_shuffle(before: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = before.parent / "c.toml"
    settings.write_text(f'[state]\ndir = "{before.parent}"\n', encoding="utf-8")
    assert main(["verify", "--shuffle", "1", "--config", str(settings)]) == 0
    by_shuffle = capsys.readouterr().out
    assert by_shuffle.startswith("OK: the seed matches its commitment and, with its 2 contribution(s), replays all 7")
    assert main(["verify", "--shuffle", "2", "--config", str(settings)]) == 2
    assert "shuffle 2 is still being played" in capsys.readouterr().err


def test_the_hopper_keeps_its_count(daemon: Daemon) -> None:
    state = daemon.app.test_client().get("/api/state").get_json()
    assert state["hopper"] == {"loaded": 80, "dispensed": 5, "remaining": 75}
    assert state["hardware"]["sim_hopper"] == 75
