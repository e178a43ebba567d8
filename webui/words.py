"""The page's words in each language: the catalogues, the language a phone gets, and words put in place."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from html import escape
from pathlib import Path

from webui.linebreak import page_strings

LANGUAGES = ("en", "zh-Hans", "zh-Hant")
LANG_COOKIE = "uno-launcher.lang"  # set by the page when a language is picked, so the next page comes in it
_TRADITIONAL = ("zh-hant", "zh-tw", "zh-hk", "zh-mo")
_STATIC = Path(__file__).parent / "static"
# An element whose words come from the catalogue, still empty: `<tag … data-i18n="key" …></tag>`.
_WORDED = re.compile(r'(<(?P<tag>[a-z][a-z0-9]*)\b[^>]*\sdata-i18n="(?P<key>[^"]+)"[^>]*>)(</(?P=tag)>)')


def guess_language(preferred: Iterable[str], picked: str | None = None) -> str:
    """The page's language: the one picked on this phone, else the first of the browser's list the page speaks."""
    if picked in LANGUAGES:
        return str(picked)
    for tag in (t.lower() for t in preferred):
        if tag.startswith(_TRADITIONAL):
            return "zh-Hant"
        if tag == "zh" or tag.startswith("zh-"):
            return "zh-Hans"
        if tag == "en" or tag.startswith("en-"):
            return "en"
    return "en"


@cache
def catalogue(lang: str) -> dict[str, str]:
    strings: dict[str, str] = json.loads((_STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return strings


@cache
def page_catalogue(lang: str) -> dict[str, str]:
    """The catalogue as the page gets it: in Chinese, with the places a line may break (webui/linebreak.py)."""
    return page_strings(catalogue(lang), lang)


def fill_words(html: str, strings: dict[str, str]) -> str:
    """Put each element's catalogue words inside it, as the page's script would (a missing key shows as itself)."""

    def worded(found: re.Match[str]) -> str:
        return found[1] + escape(strings.get(found["key"], found["key"]), quote=False) + found[4]

    return _WORDED.sub(worded, html)
