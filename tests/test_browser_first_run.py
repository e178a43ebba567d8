"""A new table, step by step, in Debian's Chromium against the real daemon on simulated hardware: a phone that has
just joined is asked who it is (or starts a game), then sees its own turn unmistakably; the feed tells one line per
press naming who pressed; a phone that has not joined cannot press."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined

pytestmark = pytest.mark.browser
playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

EN = catalogue("en")
PLAYERS = ["Ann", "Bob", "Cy"]


def phone(browser, playwright) -> Page:
    return browser.new_context(**playwright.devices["Pixel 5"], locale="en-US").new_page()


def new_game(daemon_process) -> None:
    """Ann, Bob and Cy, dealt by Cy: Ann's turn."""
    status, answer = daemon_process.post("/api/games", {"players": PLAYERS, "dealer": "Cy"})
    assert status == 201, answer


def declare(daemon_process, **body) -> None:
    status, answer = daemon_process.post("/api/attacks", body)
    assert status == 200, answer


def test_a_new_phone_is_asked_who_it_is_and_then_sees_its_own_turn(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    new_game(daemon_process)
    page = phone(browser, playwright)
    open_joined(page, daemon_process)

    welcome = page.locator("#welcome")
    expect(welcome).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#welcome-title")).to_have_text(EN["welcome.who"])
    expect(welcome.locator("button[data-player]")).to_have_text(PLAYERS)
    expect(page.locator("#welcome-watch")).to_have_text(EN["welcome.watch"])
    welcome.get_by_role("button", name="Bob", exact=True).tap()
    expect(welcome).to_be_hidden()
    expect(page.locator("#me")).to_have_value("Bob")  # changeable later, where "I am" always was

    mine = page.locator("#prompt-me")
    expect(mine).to_be_hidden()  # Ann's turn
    declare(daemon_process, kind="hit2", by="Ann")  # Bob must press twice
    expect(mine).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#prompt-me-text")).to_have_text(EN["mine.twice"])
    expect(page.locator("#prompt-me-symbol")).not_to_be_empty()  # a symbol, not colour alone
    expect(page.locator("#prompt")).to_have_attribute("data-me", "true")

    declare(daemon_process, kind="cancel")
    declare(daemon_process, kind="turn", player="Bob")  # Bob's plain turn
    expect(page.locator("#prompt-me-text")).to_have_text(EN["mine.play"], timeout=WAIT_MS)

    # The choice is remembered by this phone: no question after a reload.
    page.reload()
    expect(page.locator("#prompt-me-text")).to_have_text(EN["mine.play"], timeout=WAIT_MS)
    expect(welcome).to_be_hidden()
    page.context.close()


def test_just_watching_shows_no_prompt_and_is_remembered(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    new_game(daemon_process)
    page = phone(browser, playwright)
    open_joined(page, daemon_process)
    page.locator("#welcome-watch").tap()
    expect(page.locator("#welcome")).to_be_hidden()
    declare(daemon_process, kind="hit2", by="Ann")
    expect(page.locator("#prompt-text")).to_have_text(fill(EN["prompt.times"], player="Bob", n=2), timeout=WAIT_MS)
    expect(page.locator("#prompt-me")).to_be_hidden()

    page.reload()
    expect(page.locator("#prompt-text")).to_have_text(fill(EN["prompt.times"], player="Bob", n=2), timeout=WAIT_MS)
    expect(page.locator("#welcome")).to_be_hidden()
    page.context.close()


def test_with_no_game_the_first_step_leads_to_the_new_game_in_one_tap(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    page = phone(browser, playwright)
    open_joined(page, daemon_process)
    expect(page.locator("#welcome-title")).to_have_text(EN["welcome.no_game"], timeout=WAIT_MS)
    expect(page.locator("#welcome button[data-player]")).to_have_count(0)

    page.locator("#welcome-start").tap()
    expect(page.locator("#panel-new")).to_be_visible()
    expect(page.locator("#seats input").first).to_be_focused()
    expect(page.locator("#seats input").first).to_be_in_viewport()
    expect(page.locator("#welcome")).to_be_hidden()
    # The essentials first (the players, the ruleset, how to score); the rest folded under "More rules".
    expect(page.locator("#mode-choices")).to_be_visible()
    expect(page.locator("#ruleset-choices")).to_be_visible()
    expect(page.locator("#house-choices")).to_be_hidden()
    expect(page.locator("#setup-more summary")).to_have_text(EN["setup.more"])

    # The game started from here: the phone is asked who it is among its players.
    for seat, name in zip(page.locator("#seats input").all(), PLAYERS, strict=True):
        seat.fill(name)
    page.locator("#setup-start").tap()
    expect(page.locator("#welcome-title")).to_have_text(EN["welcome.who"], timeout=WAIT_MS)
    expect(page.locator("#welcome button[data-player]")).to_have_text(PLAYERS)
    # The screen itself says the game began: no toast lies over the players' buttons on a small phone.
    assert page.locator("#toast").is_hidden(), page.locator("#toast").inner_text()
    page.context.close()


def test_the_feed_tells_one_line_per_press_naming_who_pressed(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    new_game(daemon_process)
    declare(daemon_process, kind="hit2", by="Ann")  # Bob presses twice
    page = phone(browser, playwright)
    open_joined(page, daemon_process)
    page.locator("#welcome").get_by_role("button", name="Bob", exact=True).tap()

    for _ in range(2):
        expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
        page.locator("#press").tap()
        expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    said = [
        re.escape(fill(EN["line.pressed"], who="Bob", what="WHAT")).replace("WHAT", what)
        for what in (re.escape(EN["line.nothing"]), re.escape(EN["line.card_one"]), fill(EN["line.cards"], n=r"\d+"))
    ]
    lines = page.locator('#feed-lines li[data-type="press"]')
    expect(lines).to_have_count(2, timeout=WAIT_MS)
    for line in lines.all():
        expect(line.locator(".feed-text")).to_have_text(re.compile("^(?:" + "|".join(said) + ")$"), timeout=WAIT_MS)

    # The whole history, every event, is a tap away.
    events = page.locator("#feed li")
    expect(events.first).to_be_hidden()
    page.locator("#feed-all summary").tap()
    expect(events.first).to_be_visible()
    assert events.count() > lines.count()
    expect(page.locator('#feed li[data-type="button.pressed"]')).to_have_count(2)
    # The feed flows with the page: no box of its own that scrolls.
    assert page.locator("#feed-lines").evaluate("e => getComputedStyle(e).overflowY") == "visible"
    page.context.close()


def test_a_phone_that_has_not_joined_cannot_press_and_is_told_to_join(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    page = phone(browser, playwright)
    page.goto(daemon_process.url + "/")
    expect(page.locator("#join")).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#press")).to_be_disabled()
    expect(page.locator("#press-caption")).to_have_text(EN["button.join_first"])
    expect(page.locator("#welcome")).to_be_hidden()

    page.locator("#join-pin").fill(daemon_process.table_pin)
    page.locator("#join button").tap()
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    expect(page.locator("#press-caption")).to_have_text(EN["button.caption"])
    page.context.close()
