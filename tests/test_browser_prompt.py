"""One clear prompt per phone, at the top, with the button whole under it; trouble told there on every phone; the
press as a moment; declaring from the top; and "Press for X?" that never credits the wrong player. In a real
browser against the real daemon on simulated hardware, at 320×640 and 393×851, in English, 简体 and 繁體.

Screenshots of each step go to $UNO_SCREENSHOTS when it is set, as the journeys' do."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.conftest import FAST_SIM_TOML, RunningDaemon, start_daemon
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined
from tests.test_browser_jam import JAM_TOML

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

PLAYERS = ["Dad", "Mum", "Ann", "Ben"]
SIZES = {"320": {"width": 320, "height": 640}, "393": {"width": 393, "height": 851}}
LOCALES = {"en": "en-US", "zh-Hans": "zh-CN", "zh-Hant": "zh-TW"}
# Words that are the same in every language: the game's name (UNO Attack), the players' names.
NOT_ENGLISH = {"UNO", "Attack", "PIN", "QR", *PLAYERS}

# Every press fires 6 cards (the hopper may hold fewer). (JAM_TOML: every press fires and no card comes out.)
ALWAYS_SIX = """
[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
card_weights = [0, 0, 0, 0, 0, 1]
jackpot_probability = 0.0
"""
SHORT = (
    """
[dispense]
min_rest_ms = 10
hopper_cards = 2

[sim]
cards_per_second = 250.0
card_block_ms = 2.0
"""
    + ALWAYS_SIX
)


# The lines a text is drawn in, read character by character from the layout, so a test can see where it wraps.
# With `words`, the button's staged outcome is shown with those words for the reading, then put back.
LINES_JS = """([selector, words]) => {
  const stage = document.querySelector("#stage"), element = document.querySelector(selector);
  const saved = [stage.dataset.moment, element.textContent];
  if (words !== null) {
    stage.dataset.moment = "outcome";
    element.textContent = words;
  }
  const text = element.textContent, lines = [""];
  let top = null;
  for (let i = 0; i < text.length; i++) {
    const range = document.createRange();
    range.setStart(element.firstChild, i);
    range.setEnd(element.firstChild, i + 1);
    const rect = range.getClientRects()[0];
    if (rect && top !== null && rect.top > top + 2) lines.push("");
    if (rect) top = rect.top;
    lines[lines.length - 1] += text[i];
  }
  if (words !== null) {
    if (saved[0] === undefined) delete stage.dataset.moment; else stage.dataset.moment = saved[0];
    element.textContent = saved[1];
  }
  return lines;
}"""


def drawn_lines(page: Page, selector: str, words: str | None = None) -> list[str]:
    lines: list[str] = page.evaluate(LINES_JS, [selector, words])
    return lines


def shoot(page: Page, name: str) -> None:
    folder = os.environ.get("UNO_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def phone(browser, lang: str, size: str) -> Page:
    context = browser.new_context(
        viewport=SIZES[size], device_scale_factor=2, is_mobile=True, has_touch=True, locale=LOCALES[lang]
    )
    return context.new_page()


def assert_whole_on_first_screen(page: Page, selector: str) -> None:
    """The element is inside the viewport without scrolling: top, bottom, left and right."""
    box = page.locator(selector).bounding_box()
    view = page.viewport_size
    assert box is not None and view is not None
    assert page.evaluate("window.scrollY") == 0
    assert box["y"] >= 0 and box["x"] >= 0, box
    assert box["y"] + box["height"] <= view["height"], (box, view)
    assert box["x"] + box["width"] <= view["width"], (box, view)


# The elements of the top part (header, prompt, button, hopper) whose text is cut: clipped inside their own box
# ("牌库：剩 1…") or reaching past the screen's edge. A visually hidden word kept for screen readers is not shown.
CUT_OFF = """() => [...document.querySelectorAll(
  ".top, .top *, #prompt, #prompt *, #stage, #stage *, .hopper, .hopper *, #press-for, #press-for *"
)]
  .filter((e) => e.getClientRects().length && getComputedStyle(e).clipPath === "none")
  .filter((e) => {
    const box = e.getBoundingClientRect();
    const clips = getComputedStyle(e).overflowX !== "visible";
    return (clips && e.scrollWidth > e.clientWidth + 1) || box.left < -1 || box.right > innerWidth + 1;
  })
  .map((e) => `${e.id || e.className}: ${e.textContent.trim()}`)"""


def assert_nothing_cut(page: Page) -> None:
    assert page.evaluate(CUT_OFF) == [], "cut off at the top of the page"


def expect_trouble(page: Page, what: str, do: str, after: str) -> None:
    """The prompt tells the trouble (what happened, what to do, who goes after), whole on the first screen."""
    expect(page.locator("#trouble-what")).to_have_text(what, timeout=WAIT_MS)
    expect(page.locator("#trouble-do")).to_have_text(do)
    expect(page.locator("#trouble-next")).to_have_text(after)
    assert_whole_on_first_screen(page, "#trouble")
    assert_whole_on_first_screen(page, "#press")
    assert_nothing_cut(page)


def english_words(page: Page) -> set[str]:
    """Latin words on the first part of the page (what is shown), but the names and UNO."""
    text = page.locator(".play").inner_text()
    return set(re.findall(r"[A-Za-z]{2,}", text)) - NOT_ENGLISH


def start_game(running: RunningDaemon, dealer: str = "Ben") -> None:
    assert running.post("/api/games", {"players": PLAYERS, "dealer": dealer})[0] == 201


def three_phones(browser, running: RunningDaemon, size: str) -> dict[str, Page]:
    """A phone per language at `size`: Dad's in English, Mum's in 简体, one just watching in 繁體; Dad presses."""
    phones = {lang: phone(browser, lang, size) for lang in LOCALES}
    for page in phones.values():
        open_joined(page, running)
    for lang, who in (("en", "Dad"), ("zh-Hans", "Mum")):
        phones[lang].locator("#welcome-players button", has_text=who).tap()
    phones["zh-Hant"].locator("#welcome-watch").tap()
    phones["en"].locator("#press").tap()
    return phones


@pytest.mark.parametrize("lang", list(LOCALES))
@pytest.mark.parametrize("size", list(SIZES))
def test_the_prompt_and_the_whole_button_are_the_first_screen_before_and_after_who_are_you(
    tmp_path, playwright_chromium, size, lang
):
    _, browser = playwright_chromium
    strings = catalogue(lang)
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        start_game(running)  # Dad's turn
        page = phone(browser, lang, size)
        open_joined(page, running)
        expect(page.locator("#welcome")).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#prompt-text")).to_have_text(fill(strings["prompt.turn"], player="Dad"))
        assert_whole_on_first_screen(page, "#prompt")
        assert_whole_on_first_screen(page, "#press")
        assert_whole_on_first_screen(page, ".top")
        assert_nothing_cut(page)
        shoot(page, f"prompt-{size}-{lang}-1-who-are-you")
        # Nothing about the fairness plumbing above the button: one small mark in the header opens it.
        expect(page.locator("#fairness")).not_to_have_attribute("open", "")
        expect(page.locator("#fair-chip")).to_have_text(re.compile(re.escape(strings["fair.chip"])))

        page.locator("#welcome-players button", has_text="Dad").tap()
        expect(page.locator("#prompt-me-text")).to_have_text(strings["mine.play"])
        # Wrapped between phrases, never inside one (轮到你：出一张牌—— / 出不了才点, not …出不 / 了才点): after a
        # space, a colon, a dash, or where webui/linebreak.py let it break (a zero-width space).
        lines = drawn_lines(page, "#prompt-me-text")
        assert all(a.endswith((" ", "：", "—", "\u200b")) for a in lines[:-1]), lines
        expect(page.locator("#press-caption")).to_have_text(strings["button.cant_play"])
        assert_whole_on_first_screen(page, "#prompt")
        assert_whole_on_first_screen(page, "#press")
        assert_nothing_cut(page)
        shoot(page, f"prompt-{size}-{lang}-2-dad")
        # The cards he may declare, here and in the table's tab: no name leaves one character alone on a line
        # (万能罚按 / 牌).
        for cards in ("#quick-cards", "#decl-cards"):
            for index in range(page.locator(f"{cards} .decl-text").count()):
                lines = drawn_lines(page, f"{cards} .decl:nth-child({index + 1}) .decl-text")
                assert all(len(line.strip()) > 1 for line in lines), f"a card's name wraps as {lines}"
        if lang != "en":
            assert english_words(page) == set()

        # The press as a moment: the outcome staged big on the button, then the button is the button again.
        page.locator("#press").tap()
        staged = [strings["stage.phew"], strings["stage.cards_one"], strings["stage.jackpot_cards"]]
        cards = re.escape(strings["stage.cards"]).replace(re.escape("{n}"), r"\d+")
        jackpot = re.escape(strings["stage.jackpot_cards"]).replace(re.escape("{n}"), r"\d+")
        pattern = "^(?:" + "|".join([re.escape(s) for s in staged[:2]] + [cards, jackpot]) + ")$"
        expect(page.locator("#press-outcome")).to_have_text(re.compile(pattern), timeout=WAIT_MS)
        expect(page.locator("#press-outcome")).to_be_visible()
        # Staged words wrap between words (after a space, a dash or a "!"), never inside one: not 好險——沒 / 出牌！
        for words in (fill(text, n=12) for key, text in strings.items() if key.startswith("stage.")):
            lines = drawn_lines(page, "#press-outcome", words)
            ends = (" ", "—", "!", "！", "\u200b")
            assert all(line.endswith(ends) for line in lines[:-1]), f"{words!r} wraps as {lines}"
        shoot(page, f"prompt-{size}-{lang}-3-outcome")
        expect(page.locator("#stage")).not_to_have_attribute("data-moment", re.compile("."), timeout=WAIT_MS)
        # Dad's plain press ended his turn: Mum plays next, and this phone says so.
        expect(page.locator("#prompt-text")).to_have_text(fill(strings["prompt.turn"], player="Mum"))
        expect(page.locator("#prompt-me")).to_be_hidden()
        expect(page.locator("#press-caption")).to_have_text(strings["button.caption"])
        assert_nothing_cut(page)
        shoot(page, f"prompt-{size}-{lang}-4-mum-next")
        page.context.close()
    finally:
        running.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_jam_is_told_in_the_prompt_of_every_phone_and_is_one_feed_line_for_its_player(
    tmp_path, playwright_chromium, size
):
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, JAM_TOML)
    try:
        start_game(running)  # Dad's turn
        phones = three_phones(browser, running, size)
        for lang, page in phones.items():
            strings = catalogue(lang)
            told = (fill(strings["trouble.jam_player"], player="Dad"), strings["trouble.do_jam"])
            expect_trouble(page, *told, fill(strings["trouble.then_again"], player="Dad"))
            # One line for the press, credited to Dad, saying it jammed; no second line for the same press.
            line = fill(strings["line.pressed"], who="Dad", what=strings["line.jammed"])
            expect(page.locator("#feed-lines li").first).to_contain_text(line, timeout=WAIT_MS)
            expect(page.locator("#feed-lines li", has_text=strings["line.phone"])).to_have_count(0)
            expect(page.locator('#feed-lines li[data-type="launcher.jammed"]')).to_have_count(0)
            shoot(page, f"trouble-jam-{size}-{lang}")
            if lang != "en":
                assert english_words(page) == set()
        # The jam cost Dad nothing: it is still his turn, and his phone still says so.
        expect(phones["en"].locator("#prompt-me-text")).to_have_text(catalogue("en")["mine.play"])
        # The table screen beside the table says it in the same words.
        tv = phone(browser, "zh-Hant", size)
        tv.goto(running.url + "/table")
        hant = catalogue("zh-Hant")
        expect(tv.locator("#tv-trouble-what")).to_have_text(fill(hant["trouble.jam_player"], player="Dad"))
        expect(tv.locator("#tv-trouble-do")).to_have_text(hant["trouble.do_jam"])
        expect(tv.locator("#tv-trouble-next")).to_have_text(fill(hant["trouble.then_again"], player="Dad"))
        shoot(tv, f"trouble-jam-{size}-table-screen")
        for page in [*phones.values(), tv]:
            page.context.close()
    finally:
        running.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_short_fire_says_the_cards_still_owed_on_every_phone_and_asks_for_a_refill(
    tmp_path, playwright_chromium, size
):
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, SHORT)
    try:
        start_game(running)  # Dad's turn; 6 cards drawn, the hopper holds 2
        phones = three_phones(browser, running, size)
        for lang, page in phones.items():
            strings = catalogue(lang)
            # Dad's own phone (en) says it in the words of "you" (issue #47).
            takes = (
                fill(strings["trouble.you_take"], n=4)
                if lang == "en"
                else fill(strings["trouble.takes"], player="Dad", n=4)
            )
            refill = strings["trouble.do_refill"] + " " + takes
            told = (fill(strings["trouble.short"], owed=4), refill)
            expect_trouble(page, *told, fill(strings["trouble.then"], player="Mum"))
            expect(page.locator("#press")).to_be_disabled()
            expect(page.locator("#press-caption")).to_have_text(strings["button.why_empty"])
            what = fill(strings["line.cards"], n=2)
            line = fill(strings["line.pressed"], who="Dad", what=fill(strings["line.short"], what=what, owed=4))
            expect(page.locator("#feed-lines li").first).to_contain_text(line)
            shoot(page, f"trouble-short-{size}-{lang}")
            if lang != "en":
                assert english_words(page) == set()
        refiller = phones["zh-Hant"]
        refiller.locator("#reload").tap()
        refiller.locator("#confirm-yes").tap()
        for page in phones.values():
            expect(page.locator("#trouble")).to_be_hidden(timeout=WAIT_MS)
            expect(page.locator("#press")).to_be_enabled()
        for page in phones.values():
            page.context.close()
    finally:
        running.close()


def test_a_wild_all_hit_at_four_phones_declared_from_the_top_credits_every_press_right(tmp_path, playwright_chromium):
    """Ben declares from the top of his phone; each phone's prompt says whose press it is; Ben, pressing when he owes
    nothing, is asked "Press for Dad?", the question goes when the table moves on, and every press counts for whom
    it was."""
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    en = catalogue("en")
    try:
        start_game(running, dealer="Ann")  # Ben's turn; clockwise: Ben, Dad, Mum, Ann
        langs = {"Dad": "en", "Mum": "zh-Hans", "Ann": "zh-Hant", "Ben": "en"}
        phones = {}
        for index, (player, lang) in enumerate(langs.items()):
            page = phones[player] = phone(browser, lang, "320" if index % 2 else "393")
            open_joined(page, running)
            page.locator("#welcome-players button", has_text=player).tap()
        ben = phones["Ben"]
        expect(ben.locator("#quick")).to_have_attribute("open", "")
        assert_whole_on_first_screen(ben, "#press")
        shoot(ben, "wild-1-ben-declares-from-the-top")
        ben.locator('#quick-cards .decl[data-kind="wild_all_hit"]').tap()
        # Whose press it is, on every phone: Dad's own says "You", the others name him and who comes after; the
        # phone of each player still due says, in the words of "you", whose press comes just before theirs.
        expect(phones["Dad"].locator("#prompt-me-text")).to_have_text(en["mine.once"], timeout=WAIT_MS)
        for player, after in (("Mum", "Dad"), ("Ann", "Mum"), ("Ben", None)):
            strings = catalogue(langs[player])
            expect(phones[player].locator("#prompt-text")).to_have_text(
                fill(strings["prompt.once"], player="Dad"), timeout=WAIT_MS
            )
            if after:
                expect(phones[player].locator("#prompt-me-text")).to_have_text(
                    fill(strings["mine.after"], player=after)
                )
                expect(phones[player].locator("#prompt")).not_to_have_attribute("data-me", "true")
            else:
                expect(phones[player].locator("#prompt-me")).to_be_hidden()
            expect(phones[player].locator("#prompt-queue li")).to_have_text(["Mum", "Ann"])
        shoot(phones["Ann"], "wild-2-ann-presses-after-mum")
        shoot(phones["Mum"], "wild-2-mum-owes-a-press")

        # Ben, who owes nothing, presses: the press is not taken; he is asked whether it is for Dad, who is due.
        ben.locator("#press").tap()
        expect(ben.locator("#press-for-text")).to_have_text(fill(en["press_for.ask"], player="Dad"))
        shoot(ben, "wild-3-ben-asked-press-for-dad")
        phones["Dad"].locator("#press").tap()  # Dad presses on his own phone: the table moves on to Mum
        expect(ben.locator("#press-for")).to_be_hidden(timeout=WAIT_MS)  # no stale question left to tap
        expect(ben.locator("#prompt-text")).to_have_text(fill(en["prompt.once"], player="Mum"))
        mum, hans = phones["Mum"], catalogue("zh-Hans")
        expect(mum.locator("#prompt-me-text")).to_have_text(hans["mine.once"])
        expect(phones["Ann"].locator("#prompt-me-text")).to_have_text(
            fill(catalogue("zh-Hant")["mine.after"], player="Mum")
        )
        expect(phones["Dad"].locator("#prompt-me")).to_be_hidden()  # he has pressed: nothing more is his
        mum.locator("#press").tap()
        expect(phones["Ann"].locator("#prompt-me-text")).to_have_text(
            catalogue("zh-Hant")["mine.once"], timeout=WAIT_MS
        )
        phones["Ann"].locator("#press").tap()
        # The attack is over: play goes on after Ben, who played it.
        expect(phones["Dad"].locator("#prompt-me-text")).to_have_text(en["mine.play"], timeout=WAIT_MS)
        shoot(phones["Dad"], "wild-4-dads-turn")
        status, body = running.request("GET", "/api/game")
        assert status == 200
        presses = {p: s["presses"] for p, s in body["game"]["scoreboard"]["statistics"].items()}
        assert presses == {"Dad": 1, "Mum": 1, "Ann": 1, "Ben": 0}
        for page in phones.values():
            page.context.close()
    finally:
        running.close()


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


@pytest.mark.parametrize("lang", ["en", "zh-Hans"])
@pytest.mark.parametrize("size", list(SIZES))
def test_a_toast_never_hides_the_prompt(tmp_path, playwright_chromium, size, lang):
    """A toast ("Round saved", "Shuffle 2 started") goes where it covers neither a control nor the prompt: the
    one line every phone must be able to read."""
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        start_game(running)
        page = phone(browser, lang, size)
        open_joined(page, running)
        page.locator("#welcome-players button", has_text="Dad").tap()  # the cards to declare fill the bottom
        expect(page.locator("#prompt-me-text")).to_be_visible(timeout=WAIT_MS)
        script = page.locator('script[type="module"]').get_attribute("src")
        core = script.rsplit("/", 1)[0] + "/core.js"
        page.evaluate(f"import('{core}').then((core) => core.toast('A toast'))")
        toast = page.locator("#toast")
        expect(toast).to_be_visible()
        shoot(page, f"toast-{size}-{lang}")
        box = toast.bounding_box()
        assert box is not None
        for selector in ["#prompt", "#press"]:
            other = page.locator(selector).bounding_box()
            assert other is not None
            assert not overlaps(box, other), (selector, box, other)
        page.context.close()
    finally:
        running.close()
