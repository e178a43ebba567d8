"""uno-launcher pins, selftest and calibrate, on simulated hardware (and off a Pi, the one-line refusal).

The self-test and the calibration run on a virtual clock: a person who never comes costs no real minute, and
the calibration's figures follow from the simulated roller's speed exactly.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher import daemon
from launcher.cli import main
from launcher.config import Config, load
from launcher.hardware.header_board import load_firmware
from launcher.hardware.sim import SimulatedHardware
from launcher.press import workbench
from launcher.press.workbench import SimulatedPerson, set_toml_values
from tests.virtual_clock import VirtualClock

CARDS_PER_SECOND = Config().sim.cards_per_second  # the simulated roller at full duty


@pytest.fixture
def sim(clock: VirtualClock) -> Iterator[SimulatedHardware]:
    hardware = SimulatedHardware(Config(), clock=clock)
    yield hardware
    hardware.close()


class Nobody:
    """Nobody at the launcher: asked, and nothing happens."""

    def ask(self, instruction: str) -> None:
        pass


def timed_selftest(
    sim: SimulatedHardware, assistant: object, clock: VirtualClock, patience_s: float = 20.0
) -> list[tuple[float, str]]:
    """Each check's line, with the virtual moment it came (seconds after the start)."""
    began = clock.now()
    checks = workbench.selftest(sim, assistant, patience_s=patience_s, clock=clock)  # type: ignore[arg-type]
    return [(round(clock.now() - began, 9), check.line()) for check in checks]


def test_pins_prints_where_every_part_goes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[pins]\nbutton = 5\n")
    assert main(["pins", "--config", str(config)]) == 0
    table = capsys.readouterr().out
    assert "button          GPIO5   29" in table  # BCM 5 is header pin 29
    for part in ("motor_forward", "motor_backward", "motor_enable", "exit_beam", "lid", "light", "buzzer", "GND"):
        assert part in table


def test_selftest_passes_every_part_on_simulated_hardware(capsys: pytest.CaptureFixture[str]) -> None:
    # The command as a user runs it, on the real clock: the simulated person acts a tenth of a second after each ask.
    assert main(["selftest", "--sim"]) == 0
    out = capsys.readouterr().out
    for part in ("button", "beam", "lid", "motor", "light", "buzzer"):
        assert f"PASS  {part}" in out
    assert "All parts passed." in out


def test_selftest_sees_each_part_within_one_look_of_the_person_acting(
    sim: SimulatedHardware, clock: VirtualClock
) -> None:
    checks = timed_selftest(sim, SimulatedPerson(sim, clock=clock), clock)
    assert [line.split()[:2] for _, line in checks] == [
        ["PASS", part] for part in ("button", "beam", "lid", "motor", "light", "buzzer")
    ]
    button, beam, lid = (t for t, _ in checks[:3])
    react, hold = SimulatedPerson.REACTION_S, SimulatedPerson.HOLD_S
    # pressed `react` after the ask; the beam and the lid are back `react + hold` after theirs; seen at the next look,
    # the lid once the firmware has let its contact settle
    late = [round(button - react, 9), round(beam - button - (react + hold), 9), round(lid - beam - (react + hold), 9)]
    settle = load_firmware().LID_SETTLE_MS / 1000
    assert all(0 <= x <= workbench.POLL_S + settle for x in late), late


def test_selftest_fails_a_part_nobody_works_after_exactly_the_patience(
    sim: SimulatedHardware, clock: VirtualClock
) -> None:
    assert timed_selftest(sim, Nobody(), clock, patience_s=2.5)[:3] == [
        (2.5, "FAIL  button   a press registered"),
        (5.0, "FAIL  beam     no change seen at the exit beam"),
        (7.5, "FAIL  lid      the lid switch did not change"),
    ]


def test_calibration_picks_one_step_above_the_lowest_reliable_duty_with_exact_figures(clock: VirtualClock) -> None:
    config = Config().replace("dispense", ramp_ms=0)  # no soft start: one card takes 1 / (rate x duty) exactly
    found = workbench.calibrate(lambda c: SimulatedHardware(c, clock=clock), config)
    ms = {duty: round(1000 / (CARDS_PER_SECOND * duty)) for duty in (0.3, 0.4)}  # 278 ms and 208 ms
    assert found is not None
    assert (found.pwm, found.tried) == (0.4, [(0.3, 5, ms[0.3]), (0.4, 5, ms[0.4])])
    # the firmware times each fire to its loop's millisecond: the mean within one of the exact figure
    assert abs(found.ms_per_card - 1000 / (CARDS_PER_SECOND * 0.4)) <= 1
    assert abs(found.jam_ms - 4000 / (CARDS_PER_SECOND * 0.3)) <= 4


def test_calibration_skips_duties_that_stall_the_roller(clock: VirtualClock) -> None:
    # 0.3 and 0.4 move no card: each try is a jam after jam_ms
    config = Config().replace("dispense", ramp_ms=0, jam_ms=300).replace("sim", stall_duty=0.45)
    found = workbench.calibrate(lambda c: SimulatedHardware(c, clock=clock), config)
    assert found is not None
    assert found.tried[:2] == [(0.3, 0, 0), (0.4, 0, 0)]
    assert (found.pwm, found.ms_per_card) == (0.6, round(1000 / (CARDS_PER_SECOND * 0.6)))


def test_calibration_gives_up_when_no_duty_shoots_a_card(clock: VirtualClock) -> None:
    def jammed(config: Config) -> SimulatedHardware:
        hardware = SimulatedHardware(config, clock=clock)
        hardware.world.jam()
        return hardware

    assert workbench.calibrate(jammed, Config().replace("dispense", jam_ms=100)) is None


def test_calibrate_writes_its_findings_into_the_config(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The command as a user runs it, on simulated hardware that runs on the virtual clock.
    monkeypatch.setattr(daemon, "build_hardware", lambda config: SimulatedHardware(config, clock=clock))
    config = tmp_path / "c.toml"
    config.write_text('# my launcher\n[web]\nhost = "0.0.0.0"\n\n[dispense]\npwm = 0.9  # old\nmax_run_ms = 3000\n')
    assert main(["calibrate", "--sim", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    written = load(config)
    assert f"Chosen: pwm = {written.dispense.pwm} (" in out and f"jam_ms = {written.dispense.jam_ms}\n" in out
    assert written.dispense.pwm == 0.4  # 0.3 and 0.4 both shoot single cards: one step above the lowest
    # four times the slowest reliable card (at 0.3: 1 / (rate x 0.3), plus at most the 80 ms soft start)
    slowest_ms = 1000 / (CARDS_PER_SECOND * 0.3)
    assert 4 * slowest_ms <= written.dispense.jam_ms <= 4 * (slowest_ms + 80)
    assert written.dispense.max_run_ms == 3000 and written.web.host == "0.0.0.0"  # the rest is untouched
    assert config.read_text().startswith("# my launcher\n")
    assert f"Written to {config}." in out


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
