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

from launcher.game.rulesets import HOUSE_RULE_TEXTS

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
    """Every Chinese text of `lang` the page can show: its catalogue and the daemon's house rules."""
    found = {key: text for key, text in catalogue(lang).items() if key not in OWN_NAMES}
    for rule in HOUSE_RULE_TEXTS:
        found[f"house rule {rule.key}"] = rule.name[lang]
        found[f"house rule {rule.key}, explained"] = rule.explanation[lang]
    return found


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
    """Its columns sit side by side: the games a player played and won say 牌局, the rounds 局 alone (not 局数
    beside 赢的局数, which read as the same count)."""
    words = catalogue(lang)
    assert all("牌局" in words[key] for key in ("past.games", "past.wins")), [words["past.games"], words["past.wins"]]
    rounds = [words[key] for key in ("past.rounds_won", "past.per_round", "stats.won")]
    assert all("局" in text and "牌局" not in text for text in rounds), rounds
