"""The nightly backup: its service and timer pass `systemd-analyze verify`, the service is as confined as the
daemon's, and the command it runs is one the command line takes and that makes a backup."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from launcher.cli import main
from launcher.store import STORE_FILE, Store
from tests.test_service_file import MAX_EXPOSURE, directives, tool

ROOT = Path(__file__).resolve().parent.parent
SERVICE = ROOT / "systemd" / "uno-launcher-backup.service"
TIMER = ROOT / "systemd" / "uno-launcher-backup.timer"
EXEC_START = directives(SERVICE.read_text(encoding="utf-8"))[("Service", "ExecStart")][0]


def test_the_timer_runs_nightly_and_catches_up_after_the_pi_was_off() -> None:
    timer = directives(TIMER.read_text(encoding="utf-8"))
    assert timer[("Timer", "OnCalendar")] == ["*-*-* 04:00"]
    assert timer[("Timer", "Persistent")] == ["true"]
    assert timer[("Install", "WantedBy")] == ["timers.target"]


def test_the_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = tool("systemd-analyze")
    stub = tmp_path / "bin" / "uno-launcher"
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\n", encoding="utf-8")
    stub.chmod(0o755)
    program = EXEC_START.split()[0]
    (tmp_path / SERVICE.name).write_text(SERVICE.read_text(encoding="utf-8").replace(program, str(stub)))
    (tmp_path / TIMER.name).write_text(TIMER.read_text(encoding="utf-8"))
    units = [str(tmp_path / SERVICE.name), str(tmp_path / TIMER.name)]
    result = subprocess.run([analyze, "verify", *units], capture_output=True, text=True, timeout=120)
    complaints = [line for line in (result.stdout + result.stderr).splitlines() if "uno-launcher-backup" in line]
    assert result.returncode == 0, result.stdout + result.stderr
    assert complaints == []


def test_the_backup_service_is_at_least_as_confined_as_the_daemon() -> None:
    analyze = tool("systemd-analyze")
    result = subprocess.run(
        [analyze, "security", "--offline=yes", str(SERVICE)], capture_output=True, text=True, timeout=120
    )
    if "--offline" in result.stderr and result.returncode != 0:
        pytest.skip(f"this systemd-analyze has no --offline (systemd 250 or later): {result.stderr.strip()}")
    match = re.search(r"Overall exposure level for uno-launcher-backup\.service: (\d+\.\d+)", result.stdout)
    assert match, result.stdout + result.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, result.stdout


def test_the_command_it_runs_makes_a_backup(tmp_path: Path) -> None:
    """The unit's own arguments, with the Pi's paths moved under tmp_path."""
    state = tmp_path / "var/lib/uno-launcher"
    Store(state / STORE_FILE)
    config = tmp_path / "etc/uno-launcher/config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[state]\ndir = "{state}"\n', encoding="utf-8")
    args = shlex.split(EXEC_START)[1:]
    moved = [str(tmp_path) + a if a.startswith(("/etc/", "/var/")) else a for a in args]
    for _ in range(9):  # within a second or two: each its own name, the newest 7 kept
        assert main(moved) == 0
    assert len(list((state / "backups").glob("uno-launcher-*.sqlite3"))) == 7
