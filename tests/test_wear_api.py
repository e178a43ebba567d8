"""Wear and care over HTTP (docs/API.md): only the admin reads the counters and records a cleaning; the counters
outlive a restart of the daemon, and a kill -9 in the middle of a fire loses at most that fire's counts."""

from __future__ import annotations

import contextlib
import http.client
import signal
import sqlite3
import threading
from pathlib import Path

import pytest

from launcher.hardware.base import DispenseResult, StopReason
from launcher.press.hopper import HopperCount
from launcher.store import STORE_FILE
from tests.conftest import RunningDaemon, joined_client, local_daemon, start_daemon, wait_until
from tests.test_durability import SLOW_FIRE_TOML

JAM = DispenseResult(requested=3, dispensed=0, ms=2440, stop=StopReason.JAM)
CARDS_LEFT = HopperCount(loaded=112, dispensed=0)
PATHS = [("GET", "/api/care"), ("POST", "/api/care/cleaned")]


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_only_the_admin_reads_the_counters_or_records_a_cleaning(tmp_path: Path, method: str, path: str) -> None:
    with local_daemon(tmp_path) as daemon:
        table = joined_client(daemon)
        stranger = daemon.app.test_client()
        for refused in (table.open(path, method=method), stranger.open(path, method=method)):
            error = refused.get_json()["error"]
            assert (refused.status_code, error["code"]) == (403, "admin_required")
            assert "admin PIN" in error["message"]
        assert joined_client(daemon, admin=True).open(path, method=method).status_code == 200


def test_the_admin_sees_the_fires_of_the_table(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        admin = joined_client(daemon, admin=True)
        dispensed = 0
        while not dispensed:  # presses until one fires
            dispensed = admin.post("/api/press").get_json()["dispensed"]
        care = admin.get("/api/care").get_json()
        motor_ms = daemon.wear.record.lifetime.motor_ms
    assert motor_ms > 0  # the fire ran the motor for some milliseconds: shown to a tenth of a second
    for period in ("lifetime", "since_cleaning"):
        assert (care[period]["fires"], care[period]["cards"], care[period]["jams"]) == (1, dispensed, 0)
        assert care[period]["motor_s"] == round(motor_ms / 1000, 1)
        assert care[period]["per_1000_fires"] == {"jams": 0.0, "stuck": 0.0, "timeouts": 0.0}
    assert care["clean_roller"] is False
    assert care["rule"] == {"jams_per_1000_fires": 20, "over_fires": 200, "min_jams": 5}


def test_the_hint_asks_for_cleaning_and_a_cleaning_keeps_the_lifetime_counts(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        admin = joined_client(daemon, admin=True)
        for _ in range(5):
            daemon.wear.fire_ended(JAM, CARDS_LEFT)
        care = admin.get("/api/care").get_json()
        assert care["clean_roller"] is True
        assert care["since_cleaning"]["recent"] == {"fires": 5, "jams": 5, "jams_per_1000_fires": 1000.0}
        cleaned = admin.post("/api/care/cleaned", json={})
        assert cleaned.status_code == 200
        assert cleaned.get_json() == admin.get("/api/care").get_json()
        care = cleaned.get_json()
    assert care["clean_roller"] is False
    assert (care["lifetime"]["fires"], care["lifetime"]["jams"]) == (5, 5)
    assert (care["since_cleaning"]["fires"], care["since_cleaning"]["jams"]) == (0, 0)
    assert care["since_cleaning"]["since"] >= care["lifetime"]["since"]


def test_a_cleaning_takes_no_fields(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        admin = joined_client(daemon, admin=True)
        daemon.wear.fire_ended(JAM, CARDS_LEFT)
        refused = admin.post("/api/care/cleaned", json={"roller": True})
        assert refused.status_code == 400
        assert refused.get_json()["error"]["code"] == "unknown_field"
        assert "roller" in refused.get_json()["error"]["message"]
        assert admin.get("/api/care").get_json()["since_cleaning"]["fires"] == 1  # nothing was reset


def test_a_restart_keeps_the_counters_and_the_cleaning(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        pins = daemon.new_pins
        admin = joined_client(daemon, admin=True)
        for _ in range(3):
            daemon.wear.fire_ended(JAM, CARDS_LEFT)
        admin.post("/api/care/cleaned")
        daemon.wear.fire_ended(JAM, CARDS_LEFT)
        before = admin.get("/api/care").get_json()
    assert pins is not None
    with local_daemon(tmp_path) as daemon:
        admin = daemon.app.test_client()
        assert admin.post("/api/session", json={"pin": pins.admin}).status_code == 201
        assert admin.get("/api/care").get_json() == before
    assert (before["lifetime"]["jams"], before["since_cleaning"]["jams"]) == (4, 1)


def _stored(state_dir: Path, query: str) -> int:
    """A number as the store holds it now, read beside the running daemon (WAL allows it)."""
    conn = sqlite3.connect(f"file:{state_dir / STORE_FILE}?mode=ro", uri=True)
    try:
        return int(conn.execute(query).fetchone()[0])
    finally:
        conn.close()


FIRES_STORED = "SELECT fires FROM wear WHERE period = 'lifetime'"
CARDS_OUT_STORED = "SELECT dispensed FROM hopper WHERE id = 1"


def _care(daemon_process: RunningDaemon) -> dict[str, int]:
    status, care = daemon_process.request("GET", "/api/care", admin=True)
    assert status == 200, care
    lifetime = care["lifetime"]
    return {"fires": lifetime["fires"], "cards": lifetime["cards"]}


@pytest.mark.slow
def test_a_kill_in_the_middle_of_a_fire_loses_at_most_that_fires_counts(tmp_path: Path) -> None:
    """Every press fires 12 cards, slowly. Two fires end; the daemon is killed while the third is under way.
    Restarted, the counters hold the two, none of the third, and count on from there."""
    daemon = start_daemon(tmp_path, SLOW_FIRE_TOML)
    try:
        for _ in range(2):
            assert daemon.post("/api/press", {})[0] == 200
        wait_until(lambda: _stored(daemon.state_dir, FIRES_STORED) == 2)  # saved on its own thread, just after the end
        pressing = threading.Thread(target=_press_ignoring_the_kill, args=(daemon,), daemon=True)
        pressing.start()
        wait_until(lambda: _stored(daemon.state_dir, CARDS_OUT_STORED) >= 27)  # three cards of the third fire are out
        daemon.process.send_signal(signal.SIGKILL)
        daemon.process.wait(10)
        daemon.close()
        pressing.join(10)
        daemon = start_daemon(tmp_path, SLOW_FIRE_TOML)
        assert _care(daemon) == {"fires": 2, "cards": 24}
        assert daemon.get("/api/state")["hopper"]["dispensed"] >= 27  # the hopper's count kept those cards
        assert daemon.post("/api/press", {})[0] == 200
        assert _care(daemon) == {"fires": 3, "cards": 36}
    finally:
        daemon.close()


def _press_ignoring_the_kill(daemon_process: RunningDaemon) -> None:
    with contextlib.suppress(OSError, http.client.HTTPException, ValueError):  # killed while the fire was under way
        daemon_process.post("/api/press", {})
