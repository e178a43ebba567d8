"""The phone page's translation catalogues agree with each other and with the keys the page uses."""

import json
import re
from pathlib import Path

import pytest

from launcher.table.game_actions import ACTIONS
from launcher.table.game_options import OPTIONS, house_rules

WEBUI = Path(__file__).resolve().parent.parent / "webui"
I18N = WEBUI / "static" / "i18n"
LANGS = ["en", "zh-Hans", "zh-Hant"]

PLACEHOLDER = re.compile(r"\{(\w+)\}")
# data-i18n="key" in the template, t("key" in the script (keys are always literal so they can be checked here).
TEMPLATE_KEY = re.compile(r'data-i18n="([^"]+)"|strings\["([^"]+)"\]')  # the page's elements, the manifest's fields
SCRIPT_KEY = re.compile(r'(?<![\w.$])t\("([^"]+)"')


def catalogue(lang: str) -> dict[str, str]:
    return json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))


def template_keys() -> set[str]:
    found = set()
    for template in (WEBUI / "templates").iterdir():
        found.update(a or b for a, b in TEMPLATE_KEY.findall(template.read_text(encoding="utf-8")))
    return found


def scripts() -> list[Path]:
    return sorted((WEBUI / "static").glob("*.js"))


def script_keys() -> set[str]:
    return {key for script in scripts() for key in SCRIPT_KEY.findall(script.read_text(encoding="utf-8"))}


def registry_keys() -> set[str]:
    """The words of the declarations' buttons, of the scoring options and their choices and of the house rules: the
    page gets these keys from the daemon's registries."""
    buttons = {button.words for action in ACTIONS for button in action.buttons}
    choices = {key for option in OPTIONS for c in option.choices for key in c.view().values() if key != c.value}
    house = {rule[words] for rule in house_rules() for words in ("words", "about")}
    return buttons | {option.words for option in OPTIONS} | choices | house


def test_there_is_one_catalogue_per_language():
    assert sorted(p.stem for p in I18N.glob("*.json")) == sorted(LANGS)


@pytest.mark.parametrize("lang", LANGS[1:])
def test_catalogue_has_exactly_the_english_keys(lang):
    english, other = catalogue("en"), catalogue(lang)
    assert sorted(set(english) - set(other)) == [], "missing"
    assert sorted(set(other) - set(english)) == [], "not in en.json"


@pytest.mark.parametrize("lang", LANGS)
def test_every_text_is_a_non_empty_string(lang):
    bad = [key for key, text in catalogue(lang).items() if not isinstance(text, str) or not text.strip()]
    assert bad == []


@pytest.mark.parametrize("lang", LANGS[1:])
def test_translations_use_the_same_placeholders(lang):
    english, other = catalogue("en"), catalogue(lang)
    differ = {
        key: (text, other[key])
        for key, text in english.items()
        if set(PLACEHOLDER.findall(text)) != set(PLACEHOLDER.findall(other.get(key, "")))
    }
    assert differ == {}


LOADED = re.compile(r"filename='([^']+\.js)'")
IMPORTED = re.compile(r'^import [^;]*? from "\./([^"]+\.js)";', re.M | re.S)


def test_every_script_is_loaded_by_the_page_and_uses_the_catalogues():
    """Each page (the phone's, the table screen's) loads its entry module, which imports the others (native ES
    modules): every script is reached, and every one that puts text on a page takes it from the catalogues."""
    pages = [(WEBUI / "templates" / name).read_text(encoding="utf-8") for name in ("index.html", "table.html")]
    reached, todo = set(), [loaded for page in pages for loaded in LOADED.findall(page)]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += IMPORTED.findall((WEBUI / "static" / name).read_text(encoding="utf-8"))
    for script in scripts():
        assert script.name in reached, f"{script.name} is not loaded by the page"
        text = script.read_text(encoding="utf-8")
        if "textContent" in text:
            assert SCRIPT_KEY.search(text), f'no t("...") calls in {script.name}'


def test_page_and_script_only_use_keys_that_exist():
    used = template_keys() | script_keys() | registry_keys()
    assert script_keys(), 'no t("...") calls found: has the script changed its style?'
    assert sorted(used - set(catalogue("en"))) == []


def test_every_catalogue_key_is_used():
    assert sorted(set(catalogue("en")) - template_keys() - script_keys() - registry_keys()) == []


# A count in front of a plural noun reads wrong for 1 ("1 cards"): such a text has a twin for one, which the page picks
# when the count is 1. Its name ends in `_one`, or is here when it was named before that convention.
COUNTED = re.compile(r"\{\w+\} (more )?(cards|presses|times|phones|players|points|rounds|names|fires|jams)\b")
TWINS = {
    "mine.times": "mine.once",
    "prompt.times": "prompt.once",
    "mine.cards": "mine.card_one",
    "prompt.cards": "prompt.card_one",
    "prompt.cards_more": "prompt.card_one",  # gamestate.js: one card owed is one card, started or not
    "line.cards": "line.card_one",
    "entry.points": "entry.point_one",
    "entry.cards": "entry.card_one",
    "fair.mix_many": "fair.mix_one",
    "fair.mix_closed_many": "fair.mix_closed_one",
}
NEVER_ONE = {
    "feed.reloaded": "a refill: a deck",
    "grules.deck_total": "a deck",
    "line.jackpot": "a jackpot is 12 cards or more",
    "feed.jackpot": "a jackpot is 12 cards or more",
    "feed.deal_web": "5 or 7 cards to each of 2 players or more",
    "feed.deal_button": "5 or 7 cards to each of 2 players or more",
    "refused.contributions_full": "the most contributions a shuffle takes: 32",
    "care.recent_jams": "the window of recent fires: 250",
    "care.rule": "the window of recent fires: 250",
}


def test_every_count_of_a_plural_noun_has_a_twin_for_one():
    english = catalogue("en")
    counted = {key for key, text in english.items() if COUNTED.search(text)}
    missing = {key for key in counted - NEVER_ONE.keys() if TWINS.get(key, f"{key}_one") not in english}
    assert sorted(missing) == []
    assert sorted(set(NEVER_ONE) - counted) == []  # no stale exception
