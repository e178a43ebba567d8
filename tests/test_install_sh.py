"""What systemd/install.sh writes and removes, run against a scratch root: its functions are sourced, every path is
set under a temporary directory, and the system's tools (nmcli, iw, systemctl, apt-get, pkaction) are stand-ins
that record how they were called. Nothing here touches the machine the tests run on."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "systemd" / "install.sh"
UNIT = ROOT / "systemd" / "uno-launcher.service"
REAL_TOOLS = ("install", "rm", "cat", "basename", "dirname", "chmod", "mkdir", "cp")
NM_CONF = "etc/NetworkManager/conf.d/90-uno-launcher-wifi-power-save.conf"
DROP_IN = "etc/systemd/system/uno-launcher.service.d/wifi-power-save.conf"
RULE = "etc/polkit-1/rules.d/50-uno-launcher-power-off.rules"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed")
        pytest.skip(f"{name} is not installed")
    return path


class Machine:
    """A scratch root with a fake /sys/class/net and stand-ins for the system's tools."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bin = root / "fake-bin"
        self.bin.mkdir()
        self.calls = root / "calls.log"
        for name in REAL_TOOLS:
            real = shutil.which(name)
            assert real, name
            (self.bin / name).symlink_to(real)
        (root / "sys" / "class" / "net" / "lo").mkdir(parents=True)

    def wifi(self, name: str = "wlan0") -> None:
        (self.root / "sys" / "class" / "net" / name / "wireless").mkdir(parents=True)

    def fake(self, name: str, output: str = "") -> None:
        """A stand-in that records its arguments and prints `output`."""
        script = self.bin / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >>"{self.calls}"\nprintf "%s" "{output}"\n', encoding="utf-8")
        script.chmod(0o755)

    def network_manager(self) -> None:
        self.fake("nmcli", "running")

    def run(self, *functions: str) -> subprocess.CompletedProcess[str]:
        script = f'source "{INSTALL}"; set_paths "{self.root}"; ' + "; ".join(functions)
        return subprocess.run(
            [tool("bash"), "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": str(self.bin), "LANG": "C.UTF-8"},
        )

    def called(self) -> list[str]:
        return self.calls.read_text(encoding="utf-8").splitlines() if self.calls.exists() else []

    def file(self, path: str) -> Path:
        return self.root / path


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_with_network_manager_a_connection_independent_default_is_written_and_reloaded(machine: Machine) -> None:
    machine.wifi()
    machine.network_manager()
    machine.fake("iw")
    result = machine.run("wifi_power_save_off")
    assert result.returncode == 0, result.stderr
    conf = configparser.ConfigParser()
    conf.read_string(machine.file(NM_CONF).read_text(encoding="utf-8"))
    assert conf.sections() == ["connection"]  # no [connection-…] match: every Wi-Fi connection
    assert conf["connection"]["wifi.powersave"] == "2"  # 2: disable (3 would enable)
    assert "nmcli general reload conf" in machine.called()
    assert "iw dev wlan0 set power_save off" in machine.called()  # the connection already up
    assert not machine.file(DROP_IN).exists()


def test_without_network_manager_iw_runs_before_each_start(machine: Machine) -> None:
    machine.wifi()
    machine.fake("iw")
    result = machine.run("wifi_power_save_off")
    assert result.returncode == 0, result.stderr
    drop_in = machine.file(DROP_IN).read_text(encoding="utf-8")
    assert f"ExecStartPre=-+{machine.bin / 'iw'} dev wlan0 set power_save off" in drop_in
    assert not machine.file(NM_CONF).exists()
    assert machine.called() == []  # written for the service's starts, not run now


def test_the_iw_drop_in_is_a_valid_addition_to_the_unit(machine: Machine, tmp_path: Path) -> None:
    analyze = tool("systemd-analyze")
    machine.wifi()
    machine.fake("iw")
    assert machine.run("wifi_power_save_off").returncode == 0
    units = tmp_path / "units"
    units.mkdir()
    stub = machine.bin / "uno-launcher"
    stub.write_text("#!/bin/sh\n", encoding="utf-8")
    stub.chmod(0o755)
    program = "/opt/uno-launcher/.venv/bin/uno-launcher"
    (units / UNIT.name).write_text(UNIT.read_text(encoding="utf-8").replace(program, str(stub)), encoding="utf-8")
    shutil.copytree(machine.file(DROP_IN).parent, units / f"{UNIT.name}.d")
    result = subprocess.run([analyze, "verify", str(units / UNIT.name)], capture_output=True, text=True, timeout=120)
    complaints = [line for line in (result.stdout + result.stderr).splitlines() if "uno-launcher" in line]
    assert result.returncode == 0 and complaints == [], result.stdout + result.stderr


def test_every_wifi_interface_gets_its_line(machine: Machine) -> None:
    machine.wifi("wlan0")
    machine.wifi("wlan1")
    machine.fake("iw")
    assert machine.run("wifi_power_save_off").returncode == 0
    drop_in = machine.file(DROP_IN).read_text(encoding="utf-8")
    assert "dev wlan0 set" in drop_in and "dev wlan1 set" in drop_in
    assert "dev lo " not in drop_in


def test_a_machine_without_wifi_says_so_and_forgets_an_earlier_setting(machine: Machine) -> None:
    machine.fake("iw")
    for path in (DROP_IN, NM_CONF):
        machine.file(path).parent.mkdir(parents=True, exist_ok=True)
        machine.file(path).write_text("from an earlier run\n", encoding="utf-8")
    result = machine.run("wifi_power_save_off")
    assert result.returncode == 0, result.stderr
    assert "No Wi-Fi interface" in result.stdout
    assert not machine.file(DROP_IN).exists() and not machine.file(NM_CONF).exists()


def test_without_network_manager_or_iw_it_says_what_to_install(machine: Machine) -> None:
    machine.wifi()
    result = machine.run("wifi_power_save_off")
    assert result.returncode == 0, result.stderr
    assert "apt-get install -y iw" in result.stdout
    assert not machine.file(DROP_IN).exists() and not machine.file(NM_CONF).exists()


def _config(machine: Machine, toml: str) -> None:
    config = machine.file("etc/uno-launcher/config.toml")
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(toml, encoding="utf-8")
    venv_bin = machine.file("opt/uno-launcher/.venv/bin")
    venv_bin.mkdir(parents=True, exist_ok=True)
    if not (venv_bin / "python").exists():
        (venv_bin / "python").symlink_to(sys.executable)  # the daemon's own config reader


def _polkit_allows(rule: Path, action: str, user: str) -> bool:
    """Evaluate the rule as polkitd would: a JavaScript function given the action and the subject."""
    program = (
        "const rules = []; const polkit = {Result: {YES: 'yes'}, addRule: (f) => rules.push(f)};\n"
        f"{rule.read_text(encoding='utf-8')}\n"
        f"console.log(rules.map((f) => f({{id: {action!r}}}, {{user: {user!r}}})).includes('yes'));\n"
    )
    result = subprocess.run([tool("node"), "-e", program], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip() == "true"


def test_the_power_off_rule_is_written_only_when_the_option_is_on(machine: Machine) -> None:
    machine.fake("pkaction")
    _config(machine, "[power]\nhold_to_poweroff_s = 4\n")
    result = machine.run("power_off_rule")
    assert result.returncode == 0, result.stderr
    rule = machine.file(RULE)
    assert _polkit_allows(rule, "org.freedesktop.login1.power-off", "uno-launcher")
    assert _polkit_allows(rule, "org.freedesktop.login1.power-off-multiple-sessions", "uno-launcher")
    assert not _polkit_allows(rule, "org.freedesktop.login1.reboot", "uno-launcher")
    assert not _polkit_allows(rule, "org.freedesktop.login1.power-off-ignore-inhibit", "uno-launcher")
    assert not _polkit_allows(rule, "org.freedesktop.login1.power-off", "pi")

    _config(machine, "[power]\nhold_to_poweroff_s = 0\n")
    result = machine.run("power_off_rule")
    assert result.returncode == 0, result.stderr
    assert not rule.exists()
    assert machine.called() == []  # polkitd was there: nothing installed


def test_polkitd_is_installed_when_missing(machine: Machine) -> None:
    machine.fake("apt-get")
    _config(machine, "[power]\nhold_to_poweroff_s = 4\n")
    assert machine.run("power_off_rule").returncode == 0
    assert machine.called() == ["apt-get install -y polkitd"]


def test_a_config_the_daemon_would_refuse_stops_the_install_naming_the_key(machine: Machine) -> None:
    _config(machine, "[power]\nhold_to_poweroff_s = 1\n")
    result = machine.run("power_off_rule")
    assert result.returncode == 1
    assert "power.hold_to_poweroff_s = 1 is not accepted" in result.stderr
    assert "Traceback" not in result.stderr
    assert not machine.file(RULE).exists()


def test_uninstall_removes_the_service_and_its_settings_and_keeps_the_state(machine: Machine) -> None:
    machine.fake("systemctl")
    machine.network_manager()
    machine.file("run/systemd/system").mkdir(parents=True)
    kept = [
        "var/lib/uno-launcher/launcher.sqlite3",
        "var/lib/uno-launcher/backups/uno-launcher-20261201-040000.sqlite3",
        "etc/uno-launcher/config.toml",
    ]
    removed = [
        "etc/systemd/system/uno-launcher.service",
        "etc/systemd/system/uno-launcher-backup.service",
        "etc/systemd/system/uno-launcher-backup.timer",
        DROP_IN,
        "etc/systemd/system/uno-launcher.service.d/override.conf",  # `systemctl edit`: of no use without the unit
        NM_CONF,
        RULE,
        "opt/uno-launcher/.venv/bin/uno-launcher",
    ]
    for path in kept + removed:
        machine.file(path).parent.mkdir(parents=True, exist_ok=True)
        machine.file(path).write_text("x\n", encoding="utf-8")
    result = machine.run("uninstall")
    assert result.returncode == 0, result.stderr
    for path in removed:
        assert not machine.file(path).exists(), path
    assert not machine.file("etc/systemd/system/uno-launcher.service.d").exists()
    assert not machine.file("opt/uno-launcher").exists()
    for path in kept:
        assert machine.file(path).exists(), path
    assert f"{machine.root}/var/lib/uno-launcher" in result.stdout  # says where the state stays
    calls = machine.called()
    assert calls[0] == "systemctl disable --now uno-launcher.service uno-launcher-backup.timer"  # before files go
    assert "nmcli general reload conf" in calls
    assert calls[-1] == "systemctl daemon-reload"
