"""Chinese breaks where a reader breaks. Every Chinese text the prompt, the button, the feed and the card buttons can
show, with long names filled in, is drawn in its own place on a phone of 320×640 and of 393×851, in 简体 and 繁體, and
its lines are read back from the layout: no line breaks inside a BudouX phrase or inside a name, and no text leaves
one letter alone on its last line. A break after punctuation (where a reader pauses) or before an opening bracket or
quote is between phrases too, and so are the edges of a name or a number filled in (BudouX reads a Latin name glued
to the Chinese after it as one word). The card buttons'
English names never break at a hyphen (Wild Hit- / Fire).

Screenshots go to $UNO_SCREENSHOTS when it is set."""

from __future__ import annotations

import re
import unicodedata

import budoux
import pytest
from playwright.sync_api import Page, expect

from launcher.game.rulesets import MAX_NAME_LENGTH
from launcher.table.game_actions import ACTIONS
from tests import test_browser
from tests.conftest import FAST_SIM_TOML, start_daemon
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined
from tests.test_browser_prompt import SIZES, phone, shoot

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

# Long names, filled in as the page fills them: four Chinese letters (a compound surname and a given name) and a long
# Latin name; then, in each place, the longest name of each that a line there can show whole (a name may have up to
# 40 letters; one wider than the line must break: that is checked apart).
NAMES = {"zh-Hans": "欧阳小红", "zh-Hant": "歐陽小紅"}
LATIN = "Alexandra"
NAME_FIELDS = {"before", "by", "losers", "player", "players", "who", "winner", "winners", "table"}
# Where each kind of text is drawn on the phone: the elements that show it, by the longest prefix of its key (the
# trouble's first line, what happened, is bigger than what to do and who goes next).
PLACES = {
    "prompt.": ("#prompt-text", "#prompt-me-text"),  # a shared phone's own line says the table's demand
    "mine.": ("#prompt-me-text",),
    "button.": ("#press-caption",),
    "press_for.": ("#press-for-text",),
    "stage.": ("#press-outcome",),
    "line.": ("#feed-lines li .feed-text",),
    "feed.": ("#feed-lines li .feed-text",),
    "trouble.": ("#trouble-what",),
    **{prefix: ("#trouble-do",) for prefix in ("trouble.do_", "trouble.takes", "trouble.you_take", "trouble.then")},
    "kind.": ("#quick-cards .decl .decl-text",),
}
# The declaration buttons' words, from the registry the page draws them from: the cards at the top of a player's
# phone, the penalties in the table's tab.
BUTTONS = {"cards": "#quick-cards .decl .decl-text", "penalties": "#decl-penalties .decl .decl-text"}
PARSERS = {
    "zh-Hans": budoux.load_default_simplified_chinese_parser(),
    "zh-Hant": budoux.load_default_traditional_chinese_parser(),
}
INVISIBLE = "\u200b\u2060"

# Each text shown in the element, its lines read from the layout (a character starts a new line when it is drawn
# lower than the one before), then the element as it was. Hidden parts are shown for the reading. Each is read after
# the page's own fitting of its words (fit.js, on the next turn of the event loop) is done.
LINES_JS = """async ([selector, texts]) => {
  const element = document.querySelector(selector);
  const stage = document.querySelector("#stage");
  const hidden = [];
  for (let e = element; e; e = e.parentElement) if (e.hidden) { hidden.push(e); e.hidden = false; }
  const saved = [element.textContent, stage.dataset.moment];
  if (selector === "#press-outcome") stage.dataset.moment = "outcome";
  const read = [];
  for (const text of texts) {
    do {  // the page may put its own words back meanwhile (an event came)
      element.textContent = text;
      await new Promise((resolve) => setTimeout(resolve));
    } while (element.textContent !== text);
    const node = element.firstChild, lines = [""];
    let top = null;
    for (let i = 0; i < text.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = [...range.getClientRects()].find((r) => r.width > 0);
      if (rect && top !== null && rect.top > top + 2) lines.push("");
      if (rect) top = rect.top;
      lines[lines.length - 1] += text[i];
    }
    read.push(lines);
  }
  element.textContent = saved[0];
  if (saved[1] === undefined) delete stage.dataset.moment; else stage.dataset.moment = saved[1];
  for (const e of hidden) e.hidden = true;
  return read;
}"""


def filled(strings: dict[str, str], template: str, name: str) -> str:
    """A text as the page shows it, its names `name`, its numbers two digits, a card or a cause named in words."""

    def value(field: str) -> str:
        if field in NAME_FIELDS:
            return name
        words = {
            "cause": strings["kind.wild_all_hit"],
            "what": fill(strings["line.cards"], n=12),
            "reason": strings["fault.cause_board"],
            "profile": strings["profile.classic"],
            "ruleset": strings["ruleset.uno_attack"],
        }
        return words.get(field, "12")

    return re.sub(r"\{(\w+)\}", lambda m: value(m.group(1)), template)


def letters(text: str) -> int:
    return sum(1 for c in text if unicodedata.category(c)[0] in "LN")


def punctuation(char: str) -> bool:
    return unicodedata.category(char) in ("Po", "Pd", "Pe", "Pf")


def wrong_breaks(lang: str, text: str, lines: list[str], names: list[str]) -> list[str]:
    """What is wrong with how `text` was drawn as `lines`: a break inside a BudouX phrase of it (but after
    punctuation) or inside a name, or one letter alone on the last line."""
    assert "".join(lines) == text
    raw = "".join(c for c in text if c not in INVISIBLE).replace("\u00a0", " ")
    bounds, at = set(), 0
    for phrase in PARSERS[lang].parse(raw):
        at += len(phrase)
        bounds.add(at)
    spans = [(m.start(), m.end()) for name in names for m in re.finditer(re.escape(name), raw)]
    # A filled-in value is a word of its own: a line may start with a name or a number, or end with a name.
    bounds |= {start for start, _ in spans} | {end for _, end in spans}
    bounds |= {m.start() for m in re.finditer(r"\d+", raw)}
    wrong, at = [], 0
    for index, line in enumerate(lines[:-1]):
        at += sum(1 for c in line if c not in INVISIBLE)
        inside_name = any(start < at < end for start, end in spans)
        after = punctuation(raw[:at].rstrip()[-1])  # ：， —— · where a reader pauses
        before = unicodedata.category(raw[at]) in ("Ps", "Pi")  # a line may start with （ or “
        if inside_name or not (at in bounds or after or before):
            wrong.append(f"{line.strip(INVISIBLE)} / {lines[index + 1].strip(INVISIBLE)} in {raw}")
    if len(lines) > 1 and letters(lines[-1]) < 2:
        wrong.append(" / ".join(lines) + " (one letter alone)")
    return wrong


def templates_by_place(lang: str) -> dict[str, list[str]]:
    strings = catalogue(lang)
    found: dict[str, list[str]] = {}
    for key, template in strings.items():
        prefix = max((prefix for prefix in PLACES if key.startswith(prefix)), key=len, default=None)
        for place in PLACES[prefix] if prefix else ():
            found.setdefault(place, []).append(template)
    for action in ACTIONS:
        for button in action.buttons if action.group in BUTTONS else ():
            found.setdefault(BUTTONS[action.group], []).append(strings[button.words])
    return found


def longest_name(page: Page, place: str, base: str) -> str:
    """The longest name made of `base` (up to the 40 letters the page takes) that a line of `place` shows whole with
    a two-letter word after it (`base` itself where even that wraps). A longer one cannot help breaking (the last
    test below)."""
    names = [(base * MAX_NAME_LENGTH)[:n] for n in range(len(base), MAX_NAME_LENGTH + 1)]
    whole = [len(lines) == 1 for lines in drawn(page, place, [name + "按了" for name in names])]
    return names[max((i for i, fits in enumerate(whole) if fits), default=0)]


def drawn(page: Page, place: str, texts: list[str]) -> list[list[str]]:
    lines: list[list[str]] = page.evaluate(LINES_JS, [place, texts])
    return lines


def at_the_table(browser, running, lang: str, size: str) -> Page:
    """A phone of `size` joined as the player whose turn it is (the cards to declare are shown), after one press (a
    line in the feed)."""
    page = phone(browser, lang, size)
    open_joined(page, running)
    page.locator("#welcome-players button", has_text=NAMES[lang]).tap()
    expect(page.locator("#quick-cards .decl").first).to_be_visible(timeout=WAIT_MS)
    page.locator("#press").tap()
    expect(page.locator("#feed-lines li").first).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#stage")).not_to_have_attribute("data-moment", re.compile("."), timeout=WAIT_MS)
    return page


@pytest.mark.parametrize("lang", ["zh-Hans", "zh-Hant"])
@pytest.mark.parametrize("size", list(SIZES))
def test_chinese_breaks_between_phrases_never_inside_a_word_or_a_name(tmp_path, playwright_chromium, size, lang):
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        players = [NAMES[lang], LATIN, "Dad", "Mum"]
        assert running.post("/api/games", {"players": players, "dealer": "Mum"})[0] == 201
        page = at_the_table(browser, running, lang, size)
        shoot(page, f"line-breaks-{size}-{lang}")
        wrong: list[str] = []
        read: dict[str, int] = {}
        strings = catalogue(lang)
        for place, templates in templates_by_place(lang).items():
            longest = [longest_name(page, place, base) for base in (NAMES[lang], LATIN)]
            for name in (NAMES[lang], LATIN, *longest):
                texts = [filled(strings, template, name) for template in templates]
                for text, lines in zip(texts, drawn(page, place, texts), strict=True):
                    wrong += wrong_breaks(lang, text, lines, [name])
                    read[place] = read.get(place, 0) + (len(lines) > 1)
        assert wrong == [], "\n".join(wrong)
        # Every place was drawn and read, and many texts did wrap: the check above read something.
        assert set(read) == {place for places in (*PLACES.values(), BUTTONS.values()) for place in places}, read
        assert sum(read.values()) > 100, read
        page.context.close()
    finally:
        running.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_card_name_never_breaks_at_its_hyphen(tmp_path, playwright_chromium, size):
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        assert running.post("/api/games", {"players": ["Dad", "Mum", "Ann", "Ben"], "dealer": "Ben"})[0] == 201
        page = phone(browser, "en", size)
        open_joined(page, running)
        page.locator("#welcome-players button", has_text="Dad").tap()
        expect(page.locator("#quick-cards .decl").first).to_be_visible(timeout=WAIT_MS)
        strings = catalogue("en")
        names = [text for key, text in strings.items() if key.startswith("kind.") and "-" in text]
        assert names, "no card name with a hyphen to check"
        # Each name on its own, and twice over, so that it wraps on every phone: still not at its hyphen.
        texts = [*names, *(f"{name} {name}" for name in names)]
        wrapped = drawn(page, "#quick-cards .decl .decl-text", texts)
        assert any(len(lines) > 1 for lines in wrapped)
        for lines in wrapped:
            assert not any(line.rstrip(INVISIBLE).endswith("-") for line in lines[:-1]), lines
        page.context.close()
    finally:
        running.close()


@pytest.mark.parametrize("lang", ["zh-Hans", "zh-Hant"])
def test_a_name_of_the_longest_length_allowed_breaks_rather_than_runs_off_the_screen(
    tmp_path, playwright_chromium, lang
):
    """A name of 40 letters is wider than a 320-pixel line: it breaks where it must, and nothing is cut off."""
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    longest = (NAMES[lang] * 10)[:40]
    try:
        assert running.post("/api/games", {"players": [longest, "Dad"], "dealer": "Dad"})[0] == 201
        page = phone(browser, lang, "320")
        open_joined(page, running)
        expect(page.locator("#prompt-text")).to_contain_text(longest[:8], timeout=WAIT_MS)
        right = page.evaluate("() => document.querySelector('#prompt-text').getBoundingClientRect().right")
        assert right <= page.viewport_size["width"] and page.evaluate("scrollX") == 0
        page.context.close()
    finally:
        running.close()
