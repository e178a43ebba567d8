"""Where a Chinese line may break: between phrases, never inside a word or a name, never before one last character.

A browser breaks Chinese between any two characters, so on a narrow phone "没有回应" comes out as 没有回 / 应. The
page's Chinese catalogue texts are cut here into phrases by BudouX (its Simplified and Traditional Chinese models),
with a zero-width space where a line may break and no-break spaces for the spaces inside a phrase ("还欠 4 张");
app.css's `word-break: keep-all` makes those the only places a Chinese line breaks. A placeholder ({player}, {n}) is
read as one word, so a name filled in at run time is never cut: keep-all gives its Chinese letters no break between
them, and the places around it are the phrase's. BudouX's Chinese models cut fine (没 / 出牌, 还 / 欠 4 / 张): a
phrase of one letter is joined to its neighbour, so that no line ends or starts with a word cut off, and a text
never ends with one letter alone on its last line.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache
from itertools import pairwise

import budoux

ZWSP = "\u200b"  # a line may break here
NBSP = "\u00a0"  # a space no line breaks at
WORD_JOINER = "\u2060"  # no line breaks here (after a hyphen inside a word)
_DASHES = re.compile(r"(?<=[^\u200b—])—+")
_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
CHINESE = ("zh-Hans", "zh-Hant")
_PLACEHOLDER = re.compile(r"\{\w+\}")
# What stands for a placeholder while BudouX reads the sentence: a name, a card or a cause, or (the most) a number.
_NAMES = {"player", "players", "who", "by", "winner", "winners", "losers", "name", "table", "first", "second"}
_WORDS_IN = {"cause", "what", "reason", "card", "profile", "ruleset", "mode", "why", "about", "demand", "error"}
# Words that close what comes before them: a phrase of one of these goes with the phrase before it.
_PARTICLES = set("了的吗嗎呢吧啊着著过過们們")


@cache
def _parser(lang: str) -> budoux.Parser:
    if lang == "zh-Hans":
        return budoux.load_default_simplified_chinese_parser()
    return budoux.load_default_traditional_chinese_parser()


def _letters(text: str) -> int:
    """How many letters (Chinese characters, Latin letters, digits) `text` has: punctuation and spaces are none."""
    return sum(1 for c in text if unicodedata.category(c)[0] in "LN")


def _closes(text: str) -> bool:
    """Starts with punctuation no line may start with (，。：！？、）」 …)."""
    return bool(text) and (unicodedata.category(text[0]) in ("Po", "Pe", "Pf") or text[0].isspace())


# Words of the page's glossary (docs/I18N.md) that BudouX would cut (发牌 / 机): never cut inside one.
_WORDS = re.compile(
    "万能罚按牌|萬用罰按牌|发牌机|發牌機|罚按牌|罰按牌|万能牌|萬用牌|同色全出牌|禁止牌|阻擋牌|負載牌|牌局|牌库|牌庫|轮签|輪籤"
)
_NUMERAL = set("0123456789一二两兩三四五六七八九十几幾")


def _punctuation(char: str) -> bool:
    return unicodedata.category(char) in ("Po", "Pd", "Pe", "Pf")


def _sample(field: str) -> str:
    return "小明" if field in _NAMES else "罚按牌" if field in _WORDS_IN else "12"


def _cuts(template: str, lang: str) -> set[int]:
    """Where in `template` a line may break: BudouX's cuts, none inside a placeholder or a glossary word, none after
    a number (一 / 张牌), none inside a Latin word (UNO, PIN), none before punctuation or a space, and one after each
    run of punctuation."""
    probe, starts = "", []  # the sentence as BudouX reads it; where each piece of the template starts in it
    pieces = [p for p in re.split(r"(\{\w+\})", template) if p]
    for piece in pieces:
        starts.append(len(probe))
        probe += _sample(piece[1:-1]) if _PLACEHOLDER.fullmatch(piece) else piece
    to_template: dict[int, int] = {}  # a cut in the probe where it falls in the template (none inside a placeholder)
    at = 0
    for start, piece in zip(starts, pieces, strict=True):
        to_template[start] = at
        if not _PLACEHOLDER.fullmatch(piece):
            to_template.update((start + k, at + k) for k in range(len(piece)))
        at += len(piece)
    cuts, at = set(), 0
    for phrase in _parser(lang).parse(probe)[:-1]:
        at += len(phrase)
        if at in to_template:
            cuts.add(to_template[at])
    after_punctuation = [i for i in range(1, len(template)) if _punctuation(template[i - 1].strip() or template[i - 2])]
    cuts.update(i for i in after_punctuation if not _punctuation(template[i]) and not template[i].isspace())
    kept = {i for word in _WORDS.finditer(template) for i in range(word.start() + 1, word.end())}
    kept |= {i for i in cuts if _punctuation(template[i]) or template[i].isspace() or template[i - 1] in _NUMERAL}
    kept |= {i for i in cuts if unicodedata.category(template[i - 1]) in ("Ps", "Pi")}  # not after （ or “
    kept |= {i for i in cuts if (template[i - 1] + template[i]).isascii() and (template[i - 1] + template[i]).isalnum()}
    for p in _PLACEHOLDER.finditer(template):
        end = p.end()
        if _sample(p[0][1:-1]) == "12":  # a number goes with the word after it (12 张, 12 局)
            end += len(template[end:]) - len(template[end:].lstrip(" ")) + 1
        kept |= set(range(p.start() + 1, end))
    return {i for i in cuts if 0 < i < len(template)} - kept


def _cut(template: str, lang: str) -> list[str]:
    """The phrases of `template` between its cuts."""
    bounds = [0, *sorted(_cuts(template, lang)), len(template)]
    return [template[a:b] for a, b in pairwise(bounds)]


def _weight(phrase: str) -> int:
    """A placeholder counts as a word of its own (a name, a number with its word around it)."""
    return _letters(_PLACEHOLDER.sub("名字", phrase))


def _join_short(phrases: list[str]) -> list[str]:
    """No phrase of one letter: one letter goes with the letters after it (这 / 一 / 按 / 没出牌 is one phrase) up to
    punctuation; a particle, or a letter before punctuation, that follows a phrase goes with it (卡住 / 了，); the
    letters left at the end are a phrase, or go with the one before it if they are one letter."""
    joined: list[str] = []
    carry = ""
    for phrase in phrases:
        if _weight(phrase) > 1 or (carry and _punctuation(phrase[-1])):
            joined.append(carry + phrase)
            carry = ""
        elif joined and not carry and (phrase[0] in _PARTICLES or _punctuation(phrase[-1])):
            joined[-1] += phrase
        else:
            carry += phrase
    if joined and _weight(carry) <= 1:
        joined[-1] += carry
    elif carry:
        joined.append(carry)
    return joined


def phrases(template: str, lang: str) -> list[str]:
    """The phrases of a catalogue text in `lang` (zh-Hans or zh-Hant) between which a line may break."""
    return _join_short(_cut(template, lang))


def breakable(template: str, lang: str) -> str:
    """`template` with a zero-width space where a line may break and a no-break space for every other space."""
    if not template.strip():
        return template
    joined = ZWSP.join(phrase.replace(" ", NBSP) for phrase in phrases(template, lang))
    return _DASHES.sub(WORD_JOINER + r"\g<0>", joined)  # a browser breaks before a dash (出一张牌 / ——) but here


def whole_words(text: str) -> str:
    """`text` with no line break after a hyphen inside a word ("Wild Hit-Fire" is not cut as Wild Hit- / Fire)."""
    return _HYPHEN.sub("-" + WORD_JOINER, text)


def page_strings(strings: dict[str, str], lang: str) -> dict[str, str]:
    """A catalogue as the page gets it: Chinese texts with their places to break; no break after a hyphen inside
    a word in any language."""
    if lang not in CHINESE:
        return {key: whole_words(text) for key, text in strings.items()}
    return {key: whole_words(breakable(text, lang)) for key, text in strings.items()}
