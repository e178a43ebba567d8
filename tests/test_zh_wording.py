"""The Chinese words the page and the daemon show keep to one script each and to one name per thing.

The glossary (docs/I18N.md): the launcher is 发牌机 / 發牌機, the cards in it the 牌库 / 牌庫, a shuffle a 轮签 / 輪籤,
a game a 牌局, a round a 局, a phone in Traditional Chinese 一支手機. Names that drifted in before are refused here by
name, so they cannot come back one string at a time.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from opencc_purepy import OpenCC

I18N = Path(__file__).resolve().parent.parent / "webui" / "static" / "i18n"
SCRIPTS = ["zh-Hans", "zh-Hant"]
TO_TRADITIONAL, TO_SIMPLIFIED = OpenCC("s2t"), OpenCC("t2s")
CJK = re.compile(r"[\u3400-\u9fff]")

# Characters both scripts write alike, though the converters map them (台 → 臺, 里 → 裡 for "inside", 准 → 準, …):
# a Traditional text may use them as they are.
SHARED = set("台里干只准")
# The name of each language is written in its own script, whatever the page's language.
OWN_NAMES = {"lang.zh-Hans", "lang.zh-Hant"}

# Names retired for one name per thing (each a regular expression), with what to write instead.
RETIRED = {
    "zh-Hans": {
        "发牌器": "发牌机 (the launcher) or 牌库 (the cards in it)",
        "发射器": "发牌机",
        "牌仓": "牌库",
        "(?<!弃)牌堆": "牌库 (the launcher's cards) or 弃牌堆 (the discard pile)",
        "随机序列": "轮签",
        "游戏": "牌局",
        "往局": "以往牌局",
        "回合": "局",
        "按压": "按 (按的次数, 第 N 次按)",
        "按键": "按 (按的次数) or 按钮",
        "主持人": "开局的人 or 管理员",
        "桌面 PIN": "牌桌 PIN",
        "此人": "所选的人",
        "合规": "合法",
        "跳过牌": "禁止牌",
        "负载牌": "同色全出牌",
        "被射": "拿到",
        "处理中": "等结果",
        "它的": "(nothing: translationese)",
    },
    "zh-Hant": {
        "發牌器": "發牌機 (the launcher) or 牌庫 (the cards in it)",
        "發射器": "發牌機",
        "牌倉": "牌庫",
        "(?<!棄)牌堆": "牌庫 (the launcher's cards) or 棄牌堆 (the discard pile)",
        "隨機序列": "輪籤",
        "遊戲": "牌局",
        "往局": "以往牌局",
        "回合": "局",
        "按壓": "按 (按的次數, 第 N 次按)",
        "按鍵": "按 (按的次數) or 按鈕",
        "主持人": "開局的人 or 管理員",
        "桌面 PIN": "牌桌 PIN",
        "此人": "所選的人",
        "合規": "合法",
        "部手機": "支手機",
        "被射": "拿到",
        "處理中": "等結果",
        "它的": "(nothing: translationese)",
    },
}
# ASCII punctuation touching a Chinese character: Chinese text takes the full-width forms (：，；（）！？).
ASCII_PUNCTUATION = re.compile(r"[\u3400-\u9fff]\s*[:,;()!?]|[:,;()!?]\s*[\u3400-\u9fff]")


def catalogue(lang: str) -> dict[str, str]:
    texts: dict[str, str] = json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))
    return texts


def texts(lang: str) -> dict[str, str]:
    """Every Chinese text of `lang` the page can show (the house rules' too: the daemon sends no words)."""
    return {key: text for key, text in catalogue(lang).items() if key not in OWN_NAMES}


def other_script(lang: str, text: str) -> list[str]:
    """The characters of `text` written only in the other script: a Traditional text's that are Simplified only
    (they change on the way to Traditional and stay on the way back), and the other way round."""
    there, back = (TO_SIMPLIFIED, TO_TRADITIONAL) if lang == "zh-Hans" else (TO_TRADITIONAL, TO_SIMPLIFIED)
    return [c for c in dict.fromkeys(CJK.findall(text)) if c not in SHARED and there.convert(c) != c == back.convert(c)]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_each_text_is_written_in_its_own_script(lang: str) -> None:
    wrong = {key: chars for key, text in texts(lang).items() if (chars := other_script(lang, text))}
    assert wrong == {}


@pytest.mark.parametrize(("lang", "text", "wrong"), [("zh-Hant", "发牌機", ["发"]), ("zh-Hans", "發牌机", ["發"])])
def test_a_character_of_the_other_script_is_found(lang: str, text: str, wrong: list[str]) -> None:
    assert other_script(lang, text) == wrong


@pytest.mark.parametrize("lang", SCRIPTS)
def test_no_ascii_punctuation_touches_chinese(lang: str) -> None:
    wrong = {key: text for key, text in texts(lang).items() if ASCII_PUNCTUATION.search(text)}
    assert wrong == {}


@pytest.mark.parametrize("lang", SCRIPTS)
def test_retired_names_stay_retired(lang: str) -> None:
    wrong = {
        key: f"{old} → {new}"
        for key, text in texts(lang).items()
        for old, new in RETIRED[lang].items()
        if re.search(old, text)
    }
    assert wrong == {}


@pytest.mark.parametrize("lang", SCRIPTS)
def test_the_launcher_the_hopper_and_a_shuffle_have_their_names(lang: str) -> None:
    """The glossary's words are in use (a rename of the keys would otherwise leave the lint above checking nothing)."""
    words = catalogue(lang)
    launcher, hopper, shuffle = ("发牌机", "牌库", "轮签") if lang == "zh-Hans" else ("發牌機", "牌庫", "輪籤")
    assert launcher in words["app.title"]
    assert hopper in words["hopper.level"]
    assert shuffle in words["shuffle.title"]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_the_leaderboard_tells_games_from_rounds(lang: str) -> None:
    """Its columns sit side by side: the games a player played and won are counted in 场 (场数 / 赢的场数), the
    rounds in 局 (赢的局数), so that no two columns read as the same count."""
    words = catalogue(lang)
    games = ("场数", "赢的场数") if lang == "zh-Hans" else ("場數", "贏的場數")
    assert (words["past.games"], words["past.wins"]) == games
    rounds = [words[key] for key in ("past.rounds_won", "past.per_round", "stats.won")]
    assert all("局" in text and "牌局" not in text and "场" not in text for text in rounds), rounds


def fill(template: str, **values: object) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), template)


# What a native reader wrote for each (issue #47, item 8): the words, in 简体 and 繁體, as a family reads them.
SAID = {
    "zh-Hans": {
        "stuck": "牌卡住了！",
        "jam_line": "小红按了，可是卡住了，没出牌",
        "miss": "没出牌",
        "wins": "小红获胜！",
        "out_of_turn": "没轮到你就出了牌？",
        "if_so": "如果确实是这样",
        "drought": "最长连续没出牌",
        "too_late": "只能在这位玩家出牌后",
    },
    "zh-Hant": {
        "stuck": "牌卡住了！",
        "jam_line": "小紅按了，可是卡住了，沒出牌",
        "miss": "沒出牌",
        "wins": "小紅獲勝！",
        "out_of_turn": "沒輪到你就出了牌？",
        "if_so": "如果確實是這樣",
        "drought": "最長連續沒出牌",
        "too_late": "只能在這位玩家出牌後",
    },
}
NAME = {"zh-Hans": "小红", "zh-Hant": "小紅"}


@pytest.mark.parametrize("lang", SCRIPTS)
def test_a_stuck_card_is_said_as_a_card_that_is_stuck(lang: str) -> None:
    """卡牌 reads as trading cards."""
    assert catalogue(lang)["stage.stuck"] == SAID[lang]["stuck"]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_a_jammed_press_is_one_sentence_not_a_log(lang: str) -> None:
    """Not 小红按了：卡住了：没出牌, two colons in a row."""
    words = catalogue(lang)
    line = fill(words["line.pressed"], who=NAME[lang], what=words["line.jammed"])
    assert line == SAID[lang]["jam_line"]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_a_miss_is_said_one_way_throughout(lang: str) -> None:
    """没出牌 everywhere a press brought out nothing: not 什么也没出, not 发射了 for what came out."""
    words = catalogue(lang)
    miss = SAID[lang]["miss"]
    for key in ("line.nothing", "feed.missed", "stage.phew", "feed.took_none", "trouble.jam", "line.jammed"):
        assert miss in words[key], (key, words[key])
    said_otherwise = {k: v for k, v in texts(lang).items() if re.search("什[么麼]也没|什[么麼]也沒|[发發]射了", v)}
    assert said_otherwise == {}


@pytest.mark.parametrize("lang", SCRIPTS)
def test_the_winner_is_told_as_a_table_says_it(lang: str) -> None:
    assert fill(catalogue(lang)["winner.wins"], winners=NAME[lang]) == SAID[lang]["wins"]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_playing_out_of_turn_is_asked_as_a_player_would(lang: str) -> None:
    words = catalogue(lang)
    assert words["quick.out_of_turn"] == SAID[lang]["out_of_turn"]
    assert SAID[lang]["if_so"] in words["feed.out_of_turn"]
    assert "桌上没错" not in words["feed.out_of_turn"] and "桌上沒錯" not in words["feed.out_of_turn"]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_the_longest_run_without_cards_is_no_lottery_word(lang: str) -> None:
    """未中 is what a lottery ticket does."""
    assert catalogue(lang)["past.drought"] == SAID[lang]["drought"]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_a_player_is_not_assumed_to_be_a_he(lang: str) -> None:
    words = catalogue(lang)
    assert SAID[lang]["too_late"] in words["refused.uno_too_late"]
    assert not re.search("[他她]出牌", words["refused.uno_too_late"])


# Every placeholder a name is filled into: a player's, a team's or side's, two players' to compare, the four of a
# tournament's two teams, a table's.
NAME_PLACEHOLDER = r"\{(?:player|players|who|by|winner|winners|losers|name|side|first|second|[a-d]|table)\}"


@pytest.mark.parametrize("lang", SCRIPTS)
def test_no_space_is_typed_around_a_name(lang: str) -> None:
    """替阿明按？ beside 阿明按了 (not 替 阿明 按？): app.css's text-autospace spaces a Latin name, none is typed."""
    chinese = r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]"
    spaced = re.compile(f"{chinese} +{NAME_PLACEHOLDER}|{NAME_PLACEHOLDER} +{chinese}")
    assert {key: text for key, text in catalogue(lang).items() if spaced.search(text)} == {}


@pytest.mark.parametrize("lang", SCRIPTS)
def test_the_next_players_line_has_one_colon(lang: str) -> None:
    """The table screen's 接着：Mum · 然后轮到Dad, not 接着： 之后轮到：Dad."""
    words = catalogue(lang)
    assert words["prompt.next"].endswith("：") and "：" not in words["table.turn_after"]


@pytest.mark.parametrize("lang", SCRIPTS)
def test_the_tables_name_is_quoted_as_a_name_from_the_settings(lang: str) -> None:
    """Not 本桌叫 table: the name comes from [mqtt] table (by default the English word), so it is quoted as the name
    to type, not read as a word of the sentence."""
    hint = catalogue(lang)["tournament.tables_hint"]
    assert ("“{table}”" if lang == "zh-Hans" else "「{table}」") in hint
