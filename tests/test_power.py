"""The Pi's power warnings, read from a fake sysfs tree: what each flag means, a condition that starts and ends (in
the journal and as events), a machine that is not a Pi, and files that do not hold what the kernel writes."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from launcher.config import Config
from launcher.daemon import Daemon
from launcher.events import EventType
from launcher.system.power import HWMON_DIR, THROTTLED_FILE, PowerMonitor, SysfsPowerFlags
from tests.virtual_clock import VirtualClock

POLL_S = 5.0


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[EventType, dict[str, Any]]] = []

    def publish(self, type: EventType, data: dict[str, Any]) -> None:
        self.events.append((type, data))


def throttled(root: Path, text: str | bytes) -> None:
    path = root / THROTTLED_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


def hwmon(root: Path, index: int, name: str, alarm: str | None = None) -> None:
    device = root / HWMON_DIR / f"hwmon{index}"
    device.mkdir(parents=True)
    (device / "name").write_text(f"{name}\n")
    if alarm is not None:
        (device / "in0_lcrit_alarm").write_text(f"{alarm}\n")


def flags(root: Path) -> dict[str, Any]:
    monitor = PowerMonitor(SysfsPowerFlags(root), bus=Recorder())
    monitor.poll()
    return monitor.snapshot()


def test_no_file_is_not_a_pi_and_shows_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bus = Recorder()
    monitor = PowerMonitor(SysfsPowerFlags(tmp_path), bus=bus)
    with caplog.at_level(logging.DEBUG, logger="launcher.system.power"):
        monitor.poll()
    assert monitor.snapshot() == {"warnings": [], "since_boot": []}
    assert bus.events == [] and caplog.records == []


@pytest.mark.parametrize(
    ("mask", "now", "since_boot"),
    [
        ("0x0", [], []),
        ("0x1", ["under_voltage"], []),
        ("0x2", ["frequency_capped"], []),
        ("0x4", ["throttled"], []),
        ("0x8", ["soft_temperature_limit"], []),
        ("0x10000", [], ["under_voltage"]),
        ("0x20000", [], ["frequency_capped"]),
        ("0x40000", [], ["throttled"]),
        ("0x80000", [], ["soft_temperature_limit"]),
        ("0x50005\n", ["under_voltage", "throttled"], ["under_voltage", "throttled"]),  # the classic brown-out
        ("50000", [], ["under_voltage", "throttled"]),  # without 0x, as some kernels print it
        ("0x1e0000", [], ["frequency_capped", "throttled", "soft_temperature_limit"]),  # bit 20 means nothing here
    ],
)
def test_each_bit_of_get_throttled(tmp_path: Path, mask: str, now: list[str], since_boot: list[str]) -> None:
    throttled(tmp_path, mask)
    assert flags(tmp_path) == {"warnings": now, "since_boot": since_boot}


def test_mainline_kernels_rpi_volt_alarm(tmp_path: Path) -> None:
    hwmon(tmp_path, 0, "cpu_thermal")
    hwmon(tmp_path, 1, "rpi_volt", alarm="1")
    assert flags(tmp_path) == {"warnings": ["under_voltage"], "since_boot": []}
    (tmp_path / HWMON_DIR / "hwmon1" / "in0_lcrit_alarm").write_text("0\n")
    assert flags(tmp_path)["warnings"] == []


def test_get_throttled_is_read_before_the_hwmon(tmp_path: Path) -> None:
    throttled(tmp_path, "0x4")
    hwmon(tmp_path, 0, "rpi_volt", alarm="1")
    assert flags(tmp_path)["warnings"] == ["throttled"]


def test_a_condition_that_starts_and_ends(
    tmp_path: Path, clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    throttled(tmp_path, "0x0")
    bus = Recorder()
    monitor = PowerMonitor(SysfsPowerFlags(tmp_path), bus=bus, clock=clock, poll_s=POLL_S)
    with caplog.at_level(logging.INFO, logger="launcher.system.power"):
        monitor.start()
        try:
            clock.sleep(1)  # the first poll, at 0, saw a good supply
            assert bus.events == [] and monitor.snapshot()["warnings"] == []
            throttled(tmp_path, "0x50005")  # the motor draws the supply down
            clock.sleep(POLL_S)  # polled at 5
            assert monitor.snapshot() == {
                "warnings": ["under_voltage", "throttled"],
                "since_boot": ["under_voltage", "throttled"],
            }
            throttled(tmp_path, "0x50000")  # over; the firmware remembers it happened
            clock.sleep(POLL_S)  # polled at 10
        finally:
            monitor.close()
    assert bus.events == [
        (
            EventType.POWER_CHANGED,
            {
                "warnings": ["under_voltage", "throttled"],
                "since_boot": ["under_voltage", "throttled"],
                "started": ["under_voltage", "throttled"],
                "ended": [],
            },
        ),
        (
            EventType.POWER_CHANGED,
            {
                "warnings": [],
                "since_boot": ["under_voltage", "throttled"],
                "started": [],
                "ended": ["under_voltage", "throttled"],
            },
        ),
    ]
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert ("WARNING", "power: under-voltage: the power supply is too weak (the motor may draw it down)") in lines
    assert ("INFO", "power: under-voltage ended after 5 s") in lines
    assert ("INFO", "power: throttled ended after 5 s") in lines
    assert monitor.snapshot()["warnings"] == []


def test_the_same_flags_again_say_nothing(tmp_path: Path) -> None:
    throttled(tmp_path, "0x1")
    bus = Recorder()
    monitor = PowerMonitor(SysfsPowerFlags(tmp_path), bus=bus)
    monitor.poll()
    monitor.poll()
    assert len(bus.events) == 1


@pytest.mark.parametrize("damage", [b"zz\n", b"", b"\xff\xfe", b"0x1 0x2"])
def test_a_damaged_file_is_logged_once_and_shows_nothing(
    tmp_path: Path, damage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    throttled(tmp_path, damage)
    bus = Recorder()
    monitor = PowerMonitor(SysfsPowerFlags(tmp_path), bus=bus)
    with caplog.at_level(logging.INFO, logger="launcher.system.power"):
        monitor.poll()
        monitor.poll()
        assert monitor.snapshot() == {"warnings": [], "since_boot": []}
        assert bus.events == []
        assert [r.levelname for r in caplog.records] == ["WARNING"]
        assert "get_throttled" in caplog.records[0].getMessage()
        throttled(tmp_path, "0x1")
        monitor.poll()
    assert caplog.records[-2].getMessage() == "power warnings readable again"
    assert monitor.snapshot()["warnings"] == ["under_voltage"]


def test_a_damaged_read_keeps_what_was_known(tmp_path: Path) -> None:
    """A read that fails says nothing about the supply: the warning shown stays, and no end is announced."""
    throttled(tmp_path, "0x1")
    bus = Recorder()
    monitor = PowerMonitor(SysfsPowerFlags(tmp_path), bus=bus)
    monitor.poll()
    throttled(tmp_path, "garbage")
    monitor.poll()
    assert monitor.snapshot()["warnings"] == ["under_voltage"]
    assert len(bus.events) == 1


def test_a_damaged_hwmon_alarm(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    hwmon(tmp_path, 0, "rpi_volt", alarm="2")
    with caplog.at_level(logging.WARNING, logger="launcher.system.power"):
        assert flags(tmp_path)["warnings"] == []
    assert "in0_lcrit_alarm holds '2', not 0 or 1" in caplog.text


def test_the_state_holds_the_current_warnings(tmp_path: Path) -> None:
    root = tmp_path / "root"
    throttled(root, "0x50005")
    config = Config().replace("state", dir=str(tmp_path / "state")).replace("web", port=0)
    daemon = Daemon(config, sysfs=root)
    try:
        daemon.power.poll()  # the monitor's own thread polls too; this one is certain to have read the file
        state = daemon.app.test_client().get("/api/state").get_json()
    finally:
        daemon.close()
    assert state["power"] == {"warnings": ["under_voltage", "throttled"], "since_boot": ["under_voltage", "throttled"]}
