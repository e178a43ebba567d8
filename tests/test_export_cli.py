"""`uno-launcher export` (README.md, docs/HISTORY.md): every game or one, CSV or JSON, to standard output or a file;
an unknown game or a missing store is one line on stderr and exit code 2."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from launcher.cli import main
from launcher.game import Game
from launcher.store import STORE_FILE, Store, game_table


def store_with_games(tmp_path: Path) -> Path:
    """A config whose store holds two games, the first won by 小明, the second still being played."""
    config = tmp_path / "launcher.toml"
    config.write_text(f'[state]\ndir = "{tmp_path}"\n', encoding="utf-8")
    store = Store(tmp_path / STORE_FILE)
    won = Game(["小明", "-Bob"], "winner_collects", 50)
    won.score_round("小明", {"-Bob": 60})
    playing = Game(["Ann", "Bob"], "lowest_total", 500)
    with store.connect() as conn:
        for game, started in ((won, time.time() - 600), (playing, time.time())):
            game_table.new(
                conn,
                json.dumps({"game": game.to_dict_but_rounds(), "table": {}}),
                [json.dumps(entry.to_dict()) for entry in game.entries],
                started,
            )
    return config


def test_every_game_as_csv_on_standard_output(tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    config = store_with_games(tmp_path)
    assert main(["export", "--config", str(config)]) == 0
    out = capsysbinary.readouterr().out
    assert out.startswith(b"\xef\xbb\xbf")
    lines = out.decode("utf-8-sig").splitlines()
    assert lines[0].startswith('"game","started","ended","outcome"')
    assert len(lines) == 3 and '"小明"' in lines[1] and '"\'-Bob"' in lines[2]  # the game in play has no round


def test_one_game_as_json_into_a_file(tmp_path: Path) -> None:
    config = store_with_games(tmp_path)
    output = tmp_path / "game.json"
    assert main(["export", "--config", str(config), "--game", "2", "--format", "json", "--output", str(output)]) == 0
    document = json.loads(output.read_text(encoding="utf-8"))
    [game] = document["games"]
    assert (game["id"], game["outcome"], game["ended_ts"], game["players"]) == (2, "in_play", None, ["Ann", "Bob"])


def test_an_unknown_game_or_no_store_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = store_with_games(tmp_path)
    output = tmp_path / "nothing.csv"
    assert main(["export", "--config", str(config), "--game", "9", "--output", str(output)]) == 2
    assert capsys.readouterr().err == "uno-launcher export: there is no game 9 in the store\n"
    assert not output.exists()  # refused before anything was written
    elsewhere = tmp_path / "other.toml"
    elsewhere.write_text(f'[state]\ndir = "{tmp_path / "empty"}"\n', encoding="utf-8")
    assert main(["export", "--config", str(elsewhere)]) == 2
    assert "no store at" in capsys.readouterr().err
    assert main(["export", "--format", "xlsx"]) == 2
    assert "invalid choice: 'xlsx'" in capsys.readouterr().err


@pytest.mark.parametrize("damage", ["not json", "[" * 100_000 + "]" * 100_000], ids=["not JSON", "nested too deep"])
def test_a_game_whose_stored_state_cannot_be_read_is_left_out_of_the_export(
    tmp_path: Path, damage: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    config = store_with_games(tmp_path)
    with Store(tmp_path / STORE_FILE).connect() as conn:
        game_table.new(conn, damage, [], time.time())
    assert main(["export", "--config", str(config), "--format", "json"]) == 0
    document = json.loads(capsysbinary.readouterr().out)
    assert [game["id"] for game in document["games"]] == [1, 2]
