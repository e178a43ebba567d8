"""The table screen's moment: a press on a TV across the room, bigger than on a phone, with the prompt, the scores
and the trouble still on the screen. In a real browser against the real daemon on simulated hardware.

Screenshots of each step go to $UNO_SCREENSHOTS when it is set, as the journeys' do."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.conftest import FAST_SIM_TOML, start_daemon
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined
from tests.test_browser_prompt import ALWAYS_SIX, phone, shoot, start_game
from tests.test_browser_sound import RECORD_SPEECH

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

# Six cards at 4 a second: the motor runs for about 1.5 s, a wait long enough to be seen.
SLOW_SIX = (
    """
[dispense]
min_rest_ms = 10
hopper_cards = 500

[sim]
cards_per_second = 4.0
card_block_ms = 2.0

[web]
heartbeat_s = 0.5
"""
    + ALWAYS_SIX
)
TV = {"width": 1280, "height": 720}
FONT_PX = "(selector) => parseFloat(getComputedStyle(document.querySelector(selector)).fontSize)"


def table_screen(browser, lang: str) -> Page:
    locale = {"en": "en-US", "zh-Hans": "zh-CN", "zh-Hant": "zh-TW"}[lang]
    context = browser.new_context(viewport=TV, device_scale_factor=1, locale=locale)
    return context.new_page()


def font_px(page: Page, selector: str) -> float:
    size: float = page.evaluate(FONT_PX, selector)
    return size


@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
def test_the_table_screen_stages_the_wait_and_the_cards_bigger_than_a_phone(tmp_path, playwright_chromium, lang):
    _, browser = playwright_chromium
    strings = catalogue(lang)
    running = start_daemon(tmp_path, SLOW_SIX)
    try:
        start_game(running)  # Dad's turn
        tv = table_screen(browser, lang)
        tv.goto(running.url + "/table")
        expect(tv.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
        expect(tv.locator("#tv-prompt")).to_have_text(fill(strings["prompt.turn"], player="Dad"), timeout=WAIT_MS)
        dad = phone(browser, lang, "393")
        open_joined(dad, running)
        dad.locator("#welcome-players button", has_text="Dad").tap()
        dad.locator("#press").tap()

        # The wait: whose press the launcher works on, on the button, while the ring races.
        expect(tv.locator("#stage")).to_have_attribute("data-moment", "running", timeout=WAIT_MS)
        expect(tv.locator("#tv-outcome")).to_have_text(fill(strings["tv.pressing"], player="Dad"))
        expect(tv.locator("#tv-outcome")).to_be_visible()
        shoot(tv, f"table-{lang}-1-wait")

        # The outcome: the cards, in words on the button (not a blank red disc), bigger than the phone says them.
        outcome = fill(strings["stage.cards"], n=6)
        expect(tv.locator("#press-outcome")).to_have_text(outcome, timeout=WAIT_MS)
        expect(tv.locator("#press-outcome")).to_be_visible()
        expect(dad.locator("#press-outcome")).to_have_text(outcome)
        assert font_px(tv, "#press-outcome") > 1.5 * font_px(dad, "#press-outcome")
        # The prompt and the scores stay on the screen through the moment.
        for shown in ("#tv-prompt", "#tv-ranks"):
            expect(tv.locator(shown)).to_be_visible()
        shoot(tv, f"table-{lang}-2-outcome")

        # Then the caption says what came out, and the prompt who plays next.
        expect(tv.locator("#tv-outcome")).to_have_text(fill(strings["line.cards"], n=6), timeout=WAIT_MS)
        expect(tv.locator("#tv-outcome")).to_be_visible()
        expect(tv.locator("#tv-prompt")).to_have_text(fill(strings["prompt.turn"], player="Mum"), timeout=WAIT_MS)
        shoot(tv, f"table-{lang}-3-after")
        for page in (tv, dad):
            page.context.close()
    finally:
        running.close()


def lose_the_board(page: Page, cause: str) -> None:
    """Every /api/state this page reads says the board went as `cause` latches it (the simulator's board cannot be
    unplugged from outside the daemon): FAULT with its cause, and the trouble the controller makes of it."""

    def lost(route) -> None:
        state = route.fetch().json()
        state.update(fault="launcher board: gone", fault_cause=cause)
        code = "board_lost" if cause == "board" else "fault"
        state["trouble"] = {"code": code, "player": None, "press": None, "owed": []}
        route.fulfill(json=state)

    page.route("**/api/state", lost)


@pytest.mark.parametrize("lang", ["en", "zh-Hans"])
def test_a_lost_board_is_told_once_as_coming_back_by_itself(tmp_path, playwright_chromium, lang):
    """Not "it comes back by itself" in the prompt and "the admin must check it and tap Reset" in a banner below."""
    _, browser = playwright_chromium
    strings = catalogue(lang)
    running = start_daemon(tmp_path, SLOW_SIX)
    try:
        page = phone(browser, lang, "393")
        lose_the_board(page, "board")
        open_joined(page, running)
        expect(page.locator("#trouble-what")).to_have_text(strings["trouble.board_lost"], timeout=WAIT_MS)
        expect(page.locator("#trouble-do")).to_have_text(strings["trouble.do_board"])
        expect(page.locator("#fault")).to_be_hidden()
        assert strings["fault.reset"] not in page.locator("body").inner_text()  # nothing shown asks for a Reset
        shoot(page, f"board-lost-{lang}")
        # A FAULT the admin must clear still has its banner.
        other = phone(browser, lang, "393")
        lose_the_board(other, "motor")
        open_joined(other, running)
        expect(other.locator("#fault")).to_be_visible(timeout=WAIT_MS)
        expect(other.locator("#trouble-do")).to_have_text(strings["trouble.do_fault"])
        for shown in (page, other):
            shown.context.close()
    finally:
        running.close()


def next_line(page: Page) -> str:
    """The table screen's line of who comes next, as read (BudouX's invisible marks left out)."""
    text: str = page.locator("#tv-next").inner_text()
    return text.replace("\u200b", "").replace("\u2060", "").replace("\u00a0", " ")


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        (
            "en",
            [
                "Next: Ann, Ben, and Cy, then Dad's turn",
                "Next: Ben and Cy, then Dad's turn",
                "Next: Cy, then Dad's turn",
                "Then Dad's turn",
            ],
        ),
        (
            "zh-Hans",
            ["接着：Ann、Ben和Cy，然后轮到Dad", "接着：Ben和Cy，然后轮到Dad", "接着：Cy，然后轮到Dad", "然后轮到Dad"],
        ),
        (
            "zh-Hant",
            ["接著：Ann、Ben和Cy，然後輪到Dad", "接著：Ben和Cy，然後輪到Dad", "接著：Cy，然後輪到Dad", "然後輪到Dad"],
        ),
    ],
)
def test_the_table_screens_next_line_is_one_phrase_through_a_wild_all_hit(tmp_path, playwright_chromium, lang, said):
    """Mum plays a Wild All Hit: the others press once each from the next player, Dad (RULES.md), then Dad, after
    Mum, plays. The TV names who presses after the one asked, then whose turn it is, in one phrase with one colon at
    most."""
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        assert running.post("/api/games", {"players": ["Mum", "Dad", "Ann", "Ben", "Cy"], "dealer": "Cy"})[0] == 201
        tv = table_screen(browser, lang)
        tv.goto(running.url + "/table")
        expect(tv.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
        expect(tv.locator("#tv-next")).to_be_hidden()  # Mum's plain turn: nobody owes
        assert running.post("/api/attacks", {"kind": "wild_all_hit", "by": "Mum"})[0] == 200
        for line in said:
            expect(tv.locator("#tv-next")).to_be_visible(timeout=WAIT_MS)
            tv.wait_for_function(
                "(line) => document.querySelector('#tv-next').innerText.replace(/[\\u200b\\u2060]/g, '')"
                ".replace(/\\u00a0/g, ' ') === line",
                arg=line,
                timeout=WAIT_MS,
            )
            assert next_line(tv).count("：") <= 1
            assert running.post("/api/press", {})[0] == 200
        tv.context.close()
    finally:
        running.close()


def test_the_table_screen_speaks_the_call_outs_the_phones_leave_to_it(tmp_path, playwright_chromium):
    """One device speaks: the TV, with nobody tapping it; a phone says nothing unless asked to."""
    _, browser = playwright_chromium
    simplified = catalogue("zh-Hans")
    running = start_daemon(tmp_path, SLOW_SIX)
    try:
        assert running.post("/api/games", {"players": ["Ann", "Ben"]})[0] == 201
        tv, mum = table_screen(browser, "zh-Hans"), phone(browser, "zh-Hans", "393")
        for page in (tv, mum):
            page.add_init_script(RECORD_SPEECH)
        tv.goto(running.url + "/table")
        open_joined(mum, running)
        expect(tv.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
        assert running.post("/api/attacks", {"kind": "hit2", "by": "Ben"})[0] == 200
        said = fill(simplified["prompt.times"], player="Ann", n=2)
        expect(tv.locator("#tv-prompt")).to_have_text(said, timeout=WAIT_MS)
        expect(mum.locator("#prompt-text")).to_have_text(said, timeout=WAIT_MS)
        # Who comes after, as one phrase: 然后轮到Ben, not 接着：然后轮到Ben (nor 接着： 之后轮到：Ben).
        expect(tv.locator("#tv-next")).to_be_visible()
        assert next_line(tv) == "然后轮到Ben"
        shoot(tv, "table-zh-Hans-next")
        tv.wait_for_function("() => __said.length > 0", timeout=WAIT_MS)
        assert tv.evaluate("__said") == [[said.replace("\u200b", ""), "zh-CN"]]
        assert mum.evaluate("__said") == []
        for page in (tv, mum):
            page.context.close()
    finally:
        running.close()
