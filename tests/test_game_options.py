"""The registry of scoring options is the one list: the request checks, the OpenAPI description of a new game, the
rules every phone receives and the game's own limits all agree with it."""

import json
import re
from pathlib import Path

import pytest

from launcher.access.bodies import BodyError
from launcher.game import Final, GameError, HouseRules, Mode
from launcher.game.scoring import MAX_TARGET, Game
from launcher.table.game_options import FINAL, HOUSE_RULE_MODES, MODE, OPTIONS, TARGET, TEAMS
from launcher.table.game_requests import new_game
from launcher.table.game_view import rules
from webui.openapi import SPEC

I18N = Path(__file__).resolve().parent.parent / "webui" / "static" / "i18n"
FOUR = ["Ann", "Bob", "Cy", "Dee"]
SIX = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"]
THREE_TEAMS = {"Red": ["Ann", "Dee"], "Blue": ["Bob", "Eve"], "Gold": ["Cy", "Fay"]}


def new_game_schema() -> dict:
    return SPEC["paths"]["/api/games"]["post"]["requestBody"]["content"]["application/json"]["schema"]


def test_the_api_describes_each_option_with_the_registrys_schema():
    properties = new_game_schema()["properties"]
    for option in OPTIONS:
        described = dict(properties[option.name])
        described.pop("description")
        assert described == {k: v for k, v in option.schema.items() if k != "description"}, option.name
    assert "(in elimination only)" in properties["final"]["description"]
    assert properties["mode"]["enum"] == [m.value for m in Mode]
    assert properties["final"]["enum"] == [f.value for f in Final]


def test_the_api_describes_every_house_rule_and_number_of_the_model():
    described = new_game_schema()["properties"]["house_rules"]
    assert set(described["properties"]) == set(HouseRules().to_dict())
    assert described["properties"]["forgot_uno_penalty"] == {"type": "integer", "minimum": 1, "maximum": 10}
    assert described["properties"]["stacking"] == {"type": "boolean"} and described["additionalProperties"] is False


def test_the_page_receives_the_registry():
    offered = rules()
    assert offered["scoring"] == [option.view() for option in OPTIONS]
    target = next(option for option in offered["scoring"] if option["name"] == "target")
    assert (target["default"], target["presets"], target["schema"]["maximum"]) == (500, [100, 250, 500], MAX_TARGET)
    final = next(option for option in offered["scoring"] if option["name"] == "final")
    assert final["modes"] == ["elimination"] and final["default"] == "last_standing"
    assert final["choices"][0] == {
        "value": "next_round",
        "words": "final.next_round",
        "about": "final.next_round_about",
    }
    bust = next(rule for rule in offered["house_rules"] if rule["key"] == "highest_bust_loses")
    assert bust["modes"] == ["lowest_total", "knock_out"]
    stacking = next(rule for rule in offered["house_rules"] if rule["key"] == "stacking")
    assert stacking["modes"] == [m.value for m in Mode]


def test_the_page_receives_each_house_rules_words_as_catalogue_keys_not_words():
    offered = {rule["key"]: rule for rule in rules()["house_rules"]}
    assert list(offered) == [
        k
        for k in HouseRules().to_dict()
        if k not in ("party_penalty", "forgot_uno_penalty", "first_player", "reverse_start")
    ]
    assert offered["seven_zero"] == {
        "key": "seven_zero",
        "words": "house.seven_zero",
        "about": "house.seven_zero_about",
        "rulesets": ["classic"],  # the UNO Attack deck has no zeros
        "modes": [m.value for m in Mode],
    }
    assert offered["stacking"]["rulesets"] == ["uno_attack", "classic"]
    assert all(set(rule) == {"key", "words", "about", "rulesets", "modes"} for rule in offered.values())


@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
def test_every_house_rule_has_a_name_and_a_line_about_it_in_each_language(lang):
    words = json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))
    english = json.loads((I18N / "en.json").read_text(encoding="utf-8"))
    for rule in rules()["house_rules"]:
        for key in (rule["words"], rule["about"]):
            assert words[key].strip() and "\n" not in words[key], key
            if lang != "en":  # translated, not English left behind (a card name such as UNO Attack may stay)
                assert words[key] != english[key] and re.search(r"[\u3400-\u9fff]", words[key]), key


def test_the_house_rules_are_really_in_two_chinese_scripts():
    simplified, traditional = (
        json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8")) for lang in ("zh-Hans", "zh-Hant")
    )
    abouts = [rule["about"] for rule in rules()["house_rules"]]
    assert [key for key in abouts if simplified[key] == traditional[key]] == []  # not one copied into the other


def test_a_new_game_takes_the_registrys_defaults_and_only_its_fields():
    game, _ = new_game({"players": FOUR})
    assert (game.mode.value, game.target, game.teams, game.final_rule) == (MODE.default, TARGET.default, None, None)
    game, _ = new_game({"players": FOUR, "mode": "elimination"})
    assert game.final_rule is Final(FINAL.default)
    with pytest.raises(
        BodyError,
        match=r"unknown field goal: a new game takes no goal; it takes players, .*, mode, final, target, teams",
    ):
        new_game({"players": FOUR, "goal": 100})


def test_the_target_limits_are_the_games():
    assert Game(FOUR, Mode.LOWEST_TOTAL, TARGET.schema["maximum"]).target == MAX_TARGET
    for target in (TARGET.schema["minimum"] - 1, TARGET.schema["maximum"] + 1):
        with pytest.raises(GameError, match="target"):
            new_game({"players": FOUR, "target": target})


@pytest.mark.parametrize("mode", list(Mode), ids=str)
def test_an_option_is_a_setting_of_exactly_its_modes(mode):
    final_body = {"players": FOUR, "mode": mode.value, "final": "next_round"}
    teams_body = {"players": SIX, "mode": mode.value, "teams": THREE_TEAMS}
    if mode in FINAL.modes:
        assert new_game(final_body)[0].final_rule is Final.NEXT_ROUND
    else:
        with pytest.raises(GameError, match="final"):
            new_game(final_body)
    if mode in TEAMS.modes:
        assert new_game(teams_body)[0].sides == ("Red", "Blue", "Gold")
    else:
        with pytest.raises(GameError, match="teams"):
            new_game(teams_body)


@pytest.mark.parametrize("mode", [Mode.WINNER_COLLECTS, Mode.LOWEST_TOTAL, Mode.CHIPS], ids=str)
def test_one_loser_changes_the_scoring_of_exactly_its_modes(mode):
    """Two players pass the target in one round: with the house rule, only the highest is named where it applies."""

    def losers(one_loser: bool) -> tuple[str, ...]:
        game = Game(FOUR, mode, 100, house_rules=HouseRules(highest_bust_loses=one_loser))
        game.score_round("Ann", {"Bob": 120, "Cy": 110, "Dee": 5})
        return game.losers

    assert (losers(True) != losers(False)) == (mode in HOUSE_RULE_MODES["highest_bust_loses"])
