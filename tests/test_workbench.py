"""uno-launcher pins, selftest and calibrate, on simulated hardware (and off a Pi, the one-line refusal)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from launcher.cli import main
from launcher.config import load
from launcher.workbench import set_toml_values


def test_pins_prints_where_every_part_goes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[pins]\nbutton = 5\n")
    assert main(["pins", "--config", str(config)]) == 0
    table = capsys.readouterr().out
    assert "button          GPIO5   29" in table  # BCM 5 is header pin 29
    for part in ("motor_forward", "motor_backward", "motor_enable", "exit_beam", "lid", "light", "buzzer", "GND"):
        assert part in table


def test_selftest_passes_every_part_on_simulated_hardware(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["selftest", "--sim"]) == 0
    out = capsys.readouterr().out
    for part in ("button", "beam", "lid", "motor", "light", "buzzer"):
        assert f"PASS  {part}" in out
    assert "All parts passed." in out


def test_calibrate_writes_sensible_values_into_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text('# my launcher\n[web]\nhost = "0.0.0.0"\n\n[dispense]\npwm = 0.9  # old\nmax_run_ms = 3000\n')
    assert main(["calibrate", "--sim", "--config", str(config)]) == 0
    written = load(config)
    assert 0.3 <= written.dispense.pwm <= 1.0 and written.dispense.pwm != 0.9
    assert 300 <= written.dispense.jam_ms <= 10000
    assert written.dispense.max_run_ms == 3000 and written.web.host == "0.0.0.0"  # the rest is untouched
    assert config.read_text().startswith("# my launcher\n")
    assert "Written to" in capsys.readouterr().out


def test_set_toml_values_keeps_the_rest_of_the_file() -> None:
    text = "# top\n[dispense]\npwm = 0.5\n\n[web]\nport = 1\n"
    assert set_toml_values(text, "dispense", {"pwm": 0.7, "jam_ms": 900}) == (
        "# top\n[dispense]\npwm = 0.7\njam_ms = 900\n\n[web]\nport = 1\n"
    )
    assert set_toml_values("", "dispense", {"pwm": 0.7}) == "[dispense]\npwm = 0.7\n"


def test_off_a_pi_without_sim_one_clear_line(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[hardware]\nbackend = "gpio"\n')
    for command in ("run", "selftest"):
        result = subprocess.run(
            [sys.executable, "-m", "launcher", command, "--config", str(config)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        )
        assert result.returncode == 2
        assert "no GPIO pin library works on this machine" in result.stderr
        assert "--sim" in result.stderr and "Traceback" not in result.stderr
        assert result.stderr.count("\n") == 1
