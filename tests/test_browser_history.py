"""Past games on the phone page, in Debian's Chromium as a Pixel 5, against the real daemon on simulated hardware:
a game that ends shows in the list, opens to its rounds and final scores, the leaderboard and the players follow,
the known players are offered when a game is set up, and a joined phone gets the downloads (docs/HISTORY.md)."""

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, watch

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser


def test_a_finished_game_is_in_past_games_and_its_players_are_offered_next_time(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    strings = catalogue("zh-Hant")
    context = browser.new_context(**playwright.devices["Pixel 5"], locale="zh-TW")
    page = context.new_page()
    foreign: list[str] = []
    errors: list[str] = []
    watch(page, daemon_process.url, foreign, errors)
    open_joined(page, daemon_process)
    expect(page.locator("#past-none")).to_have_text(strings["past.none"], timeout=WAIT_MS)
    status, _ = daemon_process.request("POST", "/api/games", {"players": ["小明", "Bob"], "target": 50})
    assert status == 201
    status, _ = daemon_process.request("POST", "/api/games/current/rounds", {"winner": "小明", "hands": {"Bob": 60}})
    assert status == 201
    entry = page.locator("#past-list li button")
    expect(entry).to_have_count(1, timeout=WAIT_MS)
    expect(entry).to_contain_text(fill(strings["past.won_by"], winners="小明"))
    expect(page.locator("#board tr")).to_have_count(3)  # the head, 小明 first, Bob
    expect(page.locator("#board tr").nth(1)).to_contain_text("小明")
    # The leaderboard's modes are the registry's, in the reader's language.
    modes = page.locator("#board-mode option")
    expect(modes).to_have_count(6)
    expect(modes.nth(0)).to_have_text(strings["past.every_mode"])
    expect(modes.nth(5)).to_have_text(strings["mode.chips"])
    page.locator("#board-mode").select_option("lowest_total")
    expect(page.locator("#board tr")).to_have_count(1)  # no lowest-total game yet: the head only
    page.locator("#board-mode").select_option("winner_collects")
    expect(page.locator("#board tr")).to_have_count(3)
    expect(page.locator("#past-export")).to_be_visible()
    entry.tap()
    expect(page.locator("#past-totals")).to_contain_text("60")
    expect(page.locator("#past-rounds li")).to_have_count(1)
    page.locator("#past-back").tap()
    expect(page.locator("#past-list-view")).to_be_visible()
    page.locator("#tab-new").tap()
    page.locator("#seats input").first.fill("")
    expect(page.locator("#known button")).to_have_count(2)
    page.locator("#known button", has_text="小明").tap()
    expect(page.locator("#seats input").first).to_have_value("小明")
    assert errors == [] and foreign == []
    context.close()
