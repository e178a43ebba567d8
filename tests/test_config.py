"""Config: every default works; every mistake is refused with one line naming the key, the value and what fits."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from launcher.config import Config, ConfigError, from_mapping, load


def test_defaults_run_simulated_on_localhost() -> None:
    config = load(None)
    assert config.hardware.backend == "sim"
    assert (config.web.host, config.web.port) == ("127.0.0.1", 8080)
    assert config.state_dir == Path("./var")
    assert config.state.keep_events_days == 90  # phones catch up from minutes back; games are kept for ever


def test_a_full_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[web]\nhost = "0.0.0.0"\nport = 9000\n[dispense]\npwm = 1\n[pins]\nbutton = 5\n')
    config = load(path)
    assert (config.web.host, config.web.port, config.dispense.pwm, config.pins.button) == ("0.0.0.0", 9000, 1.0, 5)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"web": {"prot": 1}}, "web.prot: unknown key; accepted keys are host, port, threads, heartbeat_s"),
        ({"wifi": {}}, "[wifi]: unknown section"),
        ({"web": {"port": "80"}}, "web.port = '80' is not accepted: expected a whole number from 0 to 65535"),
        ({"web": {"port": 70000}}, "web.port = 70000 is not accepted"),
        ({"web": {"port": True}}, "web.port = True is not accepted"),
        ({"dispense": {"pwm": 1.5}}, "dispense.pwm = 1.5 is not accepted: expected a number from 0.05 to 1"),
        ({"dispense": {"max_run_ms": 0}}, "dispense.max_run_ms = 0 is not accepted"),
        ({"hardware": {"backend": "pi"}}, "hardware.backend = 'pi' is not accepted: expected one of 'sim', 'gpio'"),
        ({"schedule": {"profile": "nope"}}, "schedule.profile = 'nope' is not accepted: expected one of 'classic'"),
        ({"pins": {"button": 20}}, "pins.motor_forward = 20 clashes with pins.button = 20"),
        ({"web": 3}, "[web] must be a table"),
        ({"dispense": {"pwm": 10**400}}, "dispense.pwm = 1000"),
        ({"power": {"hold_to_poweroff_s": 1}}, "power.hold_to_poweroff_s = 1 is not accepted: expected 0 (never)"),
        ({"power": {"hold_to_poweroff_s": 61}}, "power.hold_to_poweroff_s = 61 is not accepted"),
        ({"power": {"hold_to_poweroff_s": True}}, "power.hold_to_poweroff_s = True is not accepted"),
        ({"power": {"hold_to_poweroff_s": "5"}}, "power.hold_to_poweroff_s = '5' is not accepted"),
        (
            {"state": {"keep_events_days": 0}},
            "state.keep_events_days = 0 is not accepted: expected a whole number from 1 to 3650",
        ),
        ({"state": {"keep_events_days": 1.5}}, "state.keep_events_days = 1.5 is not accepted"),
    ],
)
def test_mistakes_name_the_key_and_value(data: dict, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        from_mapping(data)
    assert message in str(raised.value)


@pytest.mark.parametrize("value", [True, False])
def test_a_config_from_before_the_header_always_ran_the_firmware_is_refused_by_name(value: bool) -> None:
    """`reflex_process` is gone: the firmware always runs the header's motor (docs/CONFIG.md)."""
    with pytest.raises(ConfigError, match=r"hardware\.reflex_process: unknown key; accepted keys are backend, "):
        from_mapping({"hardware": {"reflex_process": value}})


def test_hold_to_poweroff_is_off_unless_set() -> None:
    assert Config().power.hold_to_poweroff_s == 0
    assert from_mapping({"power": {"hold_to_poweroff_s": 0}}).power.hold_to_poweroff_s == 0
    assert from_mapping({"power": {"hold_to_poweroff_s": 5}}).power.hold_to_poweroff_s == 5.0


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[web\nport = 1\n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load(bad)


def test_flag_overrides_are_validated_like_the_file() -> None:
    assert Config().replace("web", port=0).web.port == 0
    with pytest.raises(ConfigError, match=r"web\.port = -1"):
        Config().replace("web", port=-1)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "launcher", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "toml", "expected"),
    [
        (["run", "--config", "c.toml"], "[web]\nport = 'x'\n", "uno-launcher: config: web.port = 'x' is not accepted"),
        (["run", "--config", "c.toml"], "[dispense]\nturbo = 1\n", "dispense.turbo: unknown key"),
        (["run", "--port", "eighty"], "", "'eighty' is not a port number"),
        (["run", "--port", "99999"], "", "web.port = 99999 is not accepted"),
        (["fly"], "", "invalid choice: 'fly'"),
        (["run", "--config", "c.toml"], "x = " + "[" * 50_000 + "]" * 50_000, "c.toml is not valid TOML: it nests"),
    ],
)
def test_cli_mistakes_exit_2_with_one_line(tmp_path: Path, args: list[str], toml: str, expected: str) -> None:
    (tmp_path / "c.toml").write_text(toml)
    result = _cli(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "var").exists(), "nothing may be created when the config is refused"


def test_every_setting_is_documented() -> None:
    """docs/CONFIG.md lists every key with its real default, so the docs cannot drift from the code."""
    text = (Path(__file__).parent.parent / "docs" / "CONFIG.md").read_text(encoding="utf-8")
    config = Config()
    for section in dataclasses.fields(config):
        assert f"## `[{section.name}]`" in text
        for key in dataclasses.fields(getattr(config, section.name)):
            if "parse" in key.metadata:  # a table of its own, or a list
                assert f"## `[{section.name}.{key.name}]`" in text or f"| `{key.name}` |" in text
                continue
            default = getattr(getattr(config, section.name), key.name)
            if isinstance(default, bool):
                shown = "true" if default else "false"  # as TOML writes it
            else:
                shown = f'"{default}"' if isinstance(default, str) else f"{default}"
            assert f"| `{key.name}` | {shown} |" in text.replace(f"`{shown}`", shown), f"{section.name}.{key.name}"


def test_a_key_from_before_the_renames_is_refused_by_name_in_a_file_and_in_replace() -> None:
    """`deck_cards` was renamed `hopper_cards` before any release: no alias is read, and replace() (the CLI's
    flags) refuses it as the file does, by name, instead of crashing on it."""
    accepted = "accepted keys are"
    with pytest.raises(ConfigError, match=f"dispense.deck_cards: unknown key; {accepted}"):
        from_mapping({"dispense": {"deck_cards": 60}})
    with pytest.raises(ConfigError, match=f"dispense.deck_cards: unknown key; {accepted}"):
        Config().replace("dispense", deck_cards=60)
