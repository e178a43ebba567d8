"""The systemd unit and its installer: the directives the service relies on, `systemd-analyze verify` and
`security`, and a shellcheck-clean install.sh that refuses to run without root."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "systemd" / "uno-launcher.service"
INSTALL = ROOT / "systemd" / "install.sh"
SERVICE_DOC = ROOT / "systemd" / "README.md"
EXEC_START = "/opt/uno-launcher/.venv/bin/uno-launcher run --config /etc/uno-launcher/config.toml"
# The daemon's files besides its connections: the store and its WAL, the serial port or the GPIO chip and the
# header process's pipes, the journal, the broker, a backup or export being written; a few dozen, with room.
OWN_FILES = 256
MAX_EXPOSURE = 2.0  # systemd-analyze security: where the unit stands (1.5 on systemd 252), with a little room


def directives(text: str) -> dict[tuple[str, str], list[str]]:
    """(section, key) -> every value given, in order, as systemd reads a unit without line continuations."""
    found: dict[tuple[str, str], list[str]] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, _, value = line.partition("=")
        found.setdefault((section, key.strip()), []).append(value.strip())
    return found


UNIT_DIRECTIVES = directives(UNIT.read_text(encoding="utf-8"))


def tool(name: str) -> str:
    """The tool's path; a skip where it is missing, but a failure on CI, which must run these checks."""
    path = shutil.which(name)
    if path is None:
        package = {"systemd-analyze": "systemd", "setpriv": "util-linux"}.get(name, name)
        message = f"{name} is not installed (Debian: apt-get install -y {package})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("Service", "Type", "notify"),
        ("Service", "NotifyAccess", "main"),
        ("Service", "WatchdogSec", "10"),
        ("Service", "ExecStart", EXEC_START),
        ("Service", "Restart", "on-failure"),
        ("Service", "RestartSec", "2"),
        ("Service", "TimeoutStopSec", "5"),
        ("Service", "KillSignal", "SIGTERM"),
        ("Service", "User", "uno-launcher"),
        ("Service", "StateDirectory", "uno-launcher"),
        ("Service", "ConfigurationDirectory", "uno-launcher"),
        ("Service", "WorkingDirectory", "/var/lib/uno-launcher"),
        ("Service", "Environment", "LG_WD=/var/lib/uno-launcher"),
        ("Service", "ProtectSystem", "strict"),
        ("Service", "ProtectHome", "yes"),
        ("Service", "PrivateTmp", "yes"),
        ("Service", "NoNewPrivileges", "yes"),
        ("Service", "ProtectKernelTunables", "yes"),
        ("Service", "ProtectKernelModules", "yes"),
        ("Service", "ProtectKernelLogs", "yes"),
        ("Service", "ProtectControlGroups", "yes"),
        ("Service", "MemoryDenyWriteExecute", "yes"),
        ("Service", "CapabilityBoundingSet", ""),
        ("Service", "DevicePolicy", "closed"),
        ("Service", "DeviceAllow", "char-gpiochip rw"),
        ("Service", "DeviceAllow", "char-ttyACM rw"),
        ("Install", "WantedBy", "multi-user.target"),
    ],
)
def test_the_unit_sets(section: str, key: str, value: str) -> None:
    assert value in UNIT_DIRECTIVES.get((section, key), []), f"[{section}] {key}={value} is missing from {UNIT.name}"


def test_the_service_user_is_in_the_gpio_and_dialout_groups() -> None:
    groups = " ".join(UNIT_DIRECTIVES[("Service", "SupplementaryGroups")]).split()
    assert {"gpio", "dialout"} <= set(groups)


def test_the_gpio_chips_stay_visible() -> None:
    # PrivateDevices= gives the service a /dev without /dev/gpiochip*; PrivateUsers= maps the gpio group to nobody.
    for key in ("PrivateDevices", "PrivateUsers"):
        assert UNIT_DIRECTIVES.get(("Service", key), ["no"])[-1] in ("no", "false", "0", "off"), key


def test_the_daemon_may_list_its_addresses_and_serve() -> None:
    families = set(" ".join(UNIT_DIRECTIVES[("Service", "RestrictAddressFamilies")]).split())
    assert families == {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}  # AF_NETLINK: if_nameindex() for the QR code


def test_the_edge_thread_may_take_the_real_time_priority_the_default_config_asks() -> None:
    from launcher.config import Config

    assert UNIT_DIRECTIVES[("Service", "RestrictRealtime")] == ["no"]
    assert int(UNIT_DIRECTIVES[("Service", "LimitRTPRIO")][-1]) >= Config().hardware.edge_priority
    # allowed again after the deny list that takes it away (@resources); systemd applies the lines in order
    assert UNIT_DIRECTIVES[("Service", "SystemCallFilter")][-1] == "sched_setscheduler"


def test_the_daemon_may_open_a_file_for_every_connection_it_serves_and_its_own() -> None:
    from launcher.daemon import CONNECTION_LIMIT

    # One value sets the soft and the hard limit: the daemon cannot raise its own (@resources is denied).
    (limit,) = UNIT_DIRECTIVES[("Service", "LimitNOFILE")]
    assert int(limit) >= CONNECTION_LIMIT + OWN_FILES


def test_systemd_analyze_verify_passes(tmp_path: Path) -> None:
    """verify insists that ExecStart exists and is executable, so a copy of the unit runs a stub instead.

    Everything else is checked as written; verify exits 0 even on unknown keys or bad values, so any line it
    prints about the unit fails the test too.
    """
    analyze = tool("systemd-analyze")
    stub = tmp_path / "bin" / "uno-launcher"
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\n", encoding="utf-8")
    stub.chmod(0o755)
    program = EXEC_START.split()[0]
    text = UNIT.read_text(encoding="utf-8")
    assert f"ExecStart={program} " in text
    unit = tmp_path / UNIT.name
    unit.write_text(text.replace(f"ExecStart={program} ", f"ExecStart={stub} "), encoding="utf-8")

    result = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=120)
    complaints = [line for line in (result.stdout + result.stderr).splitlines() if UNIT.name in line]
    assert result.returncode == 0, result.stdout + result.stderr
    assert complaints == []


def test_the_exposure_score_is_recorded_and_kept() -> None:
    analyze = tool("systemd-analyze")
    command = ["security", "--offline=yes", str(UNIT)]
    result = subprocess.run([analyze, *command], capture_output=True, text=True, timeout=120)
    if "--offline" in result.stderr and result.returncode != 0:
        pytest.skip(f"this systemd-analyze has no --offline (systemd 250 or later): {result.stderr.strip()}")
    match = re.search(r"Overall exposure level for uno-launcher\.service: (\d+\.\d+)", result.stdout)
    assert match, result.stdout + result.stderr
    assert float(match.group(1)) <= MAX_EXPOSURE, result.stdout
    doc = SERVICE_DOC.read_text(encoding="utf-8")
    assert "systemd-analyze security --offline=yes systemd/uno-launcher.service" in doc
    assert re.search(r"exposure level for uno-launcher\.service: \d+\.\d+", doc)


def test_install_sh_is_shellcheck_clean() -> None:
    shellcheck = tool("shellcheck")
    result = subprocess.run([shellcheck, str(INSTALL)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_install_sh_refuses_to_run_without_root() -> None:
    command = ["bash", str(INSTALL)]
    if os.geteuid() == 0:
        command = [tool("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd="/")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "must run as root" in result.stderr
