"""`uno-launcher verify` on records of every format, with what the reader saw and added."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from launcher.cli import main
from launcher.fairplay.fairness import commitment
from launcher.fairplay.schedule import PROFILES
from tests.test_fairness import CONTRIBUTIONS, SEED, play_shuffle, play_shuffle_v1


def write(tmp_path: Path, record: dict) -> str:
    path = tmp_path / "uno-shuffle-1.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def test_a_record_of_any_format_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", write(tmp_path, play_shuffle(PROFILES["brutal"], SEED, 50))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: the seed matches its commitment and, with its 3 contribution(s), replays all 50")
    assert main(["verify", write(tmp_path, play_shuffle_v1(PROFILES["brutal"], SEED, 50))]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: the seed matches its commitment replays all 50 presses")
    assert "NOTE: a uno-launcher-round/1 record: no contributions" in out
    before_the_rename = {**play_shuffle(PROFILES["brutal"], SEED, 50), "format": "uno-launcher-round/2", "round": 1}
    assert main(["verify", write(tmp_path, before_the_rename)]) == 0
    assert capsys.readouterr().out.startswith("OK: the seed matches its commitment and, with its 3 contribution(s)")


def test_what_you_saw_and_what_you_added_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, play_shuffle(PROFILES["classic"], SEED, 30))
    seen = commitment(SEED)
    assert main(["verify", path, "--commitment", seen.upper(), "--contribution", CONTRIBUTIONS[1]]) == 0
    capsys.readouterr()
    assert main(["verify", path, "--commitment", commitment("shown to others")]) == 1
    assert "FAILED: the record's commitment is not the one you saw before the first press" in capsys.readouterr().out
    mine = "ab" * 16
    assert main(["verify", path, "--contribution", CONTRIBUTIONS[0], "--contribution", mine]) == 1
    assert f"FAILED: your contribution {mine} is not in the record" in capsys.readouterr().out


def test_a_record_with_a_contribution_dropped_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = play_shuffle(PROFILES["classic"], SEED, 40)
    record["contributions"].pop(1)
    assert main(["verify", write(tmp_path, record)]) == 1
    assert "FAILED: press" in capsys.readouterr().out


def test_an_unreadable_record_exits_2_naming_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = play_shuffle(PROFILES["classic"], SEED, 5)
    record["contributions"][0] = "not hex"
    assert main(["verify", write(tmp_path, record)]) == 2
    assert "contributions[0] = 'not hex' is not accepted" in capsys.readouterr().err


def test_a_file_nested_too_deep_to_be_a_record_exits_2_saying_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path} is not a shuffle record: it nests deeper than" in err
    assert "Traceback" not in err
