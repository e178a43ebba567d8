"""`uno-launcher simulate`: the figures add up, the outputs carry them, and bad arguments end in one line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from launcher.cli import main as cli_main
from launcher.fairplay.profile_stats import format_text, render_svg, run_simulation, to_json
from launcher.fairplay.schedule import PROFILES, Schedule, profile_from_mapping

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("name", PROFILES)
def test_the_figures_add_up(name: str) -> None:
    profile = PROFILES[name]
    stats = run_simulation(profile, 5000, "figures")
    fires = sum(stats.cards_per_fire.values())
    assert fires == stats.fires == sum(stats.misses_before_fire.values())
    assert stats.cards == sum(cards * n for cards, n in stats.cards_per_fire.items())
    assert stats.fire_rate == stats.fires / 5000
    assert stats.mean_cards_per_press == stats.cards / 5000
    assert stats.longest_drought <= profile.longest_drought
    assert max(stats.misses_before_fire) <= profile.longest_drought
    assert stats.longest_fire_streak <= profile.max_fires_in_row
    assert stats.jackpots <= stats.fires
    assert (stats.pauses > 0) == (profile.pause_probability > 0)


def test_the_figures_match_a_direct_count() -> None:
    schedule = Schedule(PROFILES["classic"], 11)
    outcomes = [schedule.next_outcome() for _ in range(3000)]
    stats = run_simulation(PROFILES["classic"], 3000, 11)
    assert stats.fires == sum(o.fired for o in outcomes)
    assert stats.cards == sum(o.cards for o in outcomes)
    assert stats.jackpots == sum(o.jackpot for o in outcomes)
    assert run_simulation(PROFILES["classic"], 3000, 11) == stats


def test_at_least_one_press_is_needed() -> None:
    with pytest.raises(ValueError, match="presses = 0 is not accepted"):
        run_simulation(PROFILES["classic"], 0, 1)


def test_text_output_has_the_figures() -> None:
    stats = run_simulation(PROFILES["classic"], 20_000, "text")
    text = format_text(stats)
    assert "profile classic: 20,000 presses, seed 'text'" in text
    assert f"fire rate            {stats.fire_rate:7.2%}" in text
    assert f"mean cards per press {stats.mean_cards_per_press:7.3f}" in text
    assert f"longest drought      {stats.longest_drought:7,}  misses (profile limit 4)" in text
    assert f"longest fire streak  {stats.longest_fire_streak:7,}  fires (profile cap 2)" in text
    assert "cards per fire\n    1  " in text and "misses before each fire\n    0  " in text


def test_json_output_has_the_figures() -> None:
    stats = run_simulation(PROFILES["extreme"], 20_000, "json")
    data = json.loads(json.dumps(to_json(stats)))
    assert data["profile"] == "extreme" and data["presses"] == 20_000 and data["seed"] == "json"
    assert (
        data["fire_rate"] == stats.fire_rate and data["expected_fire_rate"] == PROFILES["extreme"].expected_fire_rate()
    )
    assert data["mean_cards_per_press"] == stats.mean_cards_per_press
    assert data["jackpots"] == stats.jackpots > 0 and data["pauses"] == stats.pauses > 0
    assert (data["longest_drought"], data["longest_fire_streak"]) == (stats.longest_drought, stats.longest_fire_streak)
    assert {int(k): v for k, v in data["cards_per_fire"].items()} == stats.cards_per_fire
    assert {int(k): v for k, v in data["misses_before_fire"].items()} == stats.misses_before_fire


@pytest.mark.parametrize("name", PROFILES)
def test_the_svg_is_well_formed_with_two_labelled_charts(name: str) -> None:
    stats = run_simulation(PROFILES[name], 3000, "svg")
    root = ET.fromstring(render_svg(stats))
    assert root.tag == f"{SVG}svg"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "Cards per fire (% of fires)" in texts and "Misses before each fire (% of fires)" in texts
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("fill") != "#ffffff"]
    slots = max(stats.cards_per_fire) + max(stats.misses_before_fire) + 1  # cards from 1, misses from 0
    assert len(bars) == slots
    assert all(int(t.get("font-size", "0")) >= 11 for t in root.iter(f"{SVG}text"))


def test_a_custom_name_is_escaped_in_the_svg() -> None:
    profile = profile_from_mapping("<b>&co", {"hazard": [0.5, 1.0], "max_fires_in_row": 1, "card_weights": [1]})
    root = ET.fromstring(render_svg(run_simulation(profile, 100, 1)))
    assert root.find(f"{SVG}title").text.startswith("<b>&co: 100 presses")  # type: ignore[union-attr]


def test_the_command_prints_text_json_and_writes_svg(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["simulate", "--profile", "gentle", "--presses", "1000", "--seed", "7"]) == 0
    text = capsys.readouterr().out
    assert text == format_text(run_simulation(PROFILES["gentle"], 1000, "7"))
    chart = tmp_path / "chart.svg"
    assert (
        cli_main(["simulate", "--profile", "gentle", "--presses", "1000", "--seed", "7", "--json", "--svg", str(chart)])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["seed"] == "7"
    ET.parse(chart)


def test_without_a_seed_a_fresh_one_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["simulate", "--profile", "brutal", "--presses", "50", "--json"]) == 0
    seed = json.loads(capsys.readouterr().out)["seed"]
    assert len(seed) == 32


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: --profile, --presses"),
        (["--profile", "nope", "--presses", "10"], "argument --profile: invalid choice: 'nope'"),
        (["--profile", "classic", "--presses", "-5"], "argument --presses: '-5' is not accepted: expected a whole"),
        (["--profile", "classic", "--presses", "lots"], "argument --presses: 'lots' is not accepted"),
        (["--profile", "classic", "--presses", "1e3"], "argument --presses: '1e3' is not accepted"),
        (["--profile", "classic", "--presses", "200000000"], "'200000000' is not accepted"),
        (["--profile", "classic", "--presses", "10", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["simulate", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    # argparse reports leftover arguments from the top-level parser, the rest from `simulate`'s own.
    assert err.count("\n") == 1 and err.startswith(("uno-launcher simulate: ", "uno-launcher: "))
    assert message in err and "Traceback" not in err


def test_an_unwritable_chart_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing-dir" / "chart.svg"
    assert cli_main(["simulate", "--profile", "classic", "--presses", "10", "--svg", str(target)]) == 1
    assert capsys.readouterr().err == f"uno-launcher simulate: cannot write {target}: No such file or directory\n"


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["simulate", "--help"]) == 0
    assert "--presses" in capsys.readouterr().out
