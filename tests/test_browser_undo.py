"""Safety nets on the page: an action that loses what the table has asks first, and a declaration can be undone."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.test_browser import WAIT_MS, catalogue, open_joined, origin
from tests.test_browser_game import phone

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser


def test_a_stray_tap_on_start_a_new_shuffle_does_nothing_until_confirmed(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    first = daemon_process.get("/api/state")["shuffle"]["number"]
    started = page.locator("#feed li[data-type='shuffle.started']")
    expect(started).to_have_count(1)  # the shuffle the daemon started with, replayed

    page.locator("#new-shuffle").tap()
    expect(page.locator("#confirm-question")).to_have_text(en["confirm.new_shuffle"])
    page.get_by_role("button", name=en["confirm.no"]).tap()
    expect(page.locator("#confirm-dialog")).to_be_hidden()
    assert daemon_process.get("/api/state")["shuffle"]["number"] == first  # nothing was sent

    page.locator("#new-shuffle").tap()
    page.get_by_role("button", name=en["confirm.yes"]).tap()
    expect(page.locator("#confirm-dialog")).to_be_hidden()
    expect(started).to_have_count(2, timeout=WAIT_MS)
    assert daemon_process.get("/api/state")["shuffle"]["number"] == first + 1
    page.context.close()


def test_the_undo_button_undoes_a_declaration(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    assert daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
    errors: list[str] = []
    page = phone(browser, playwright, origin(daemon_process.url), [], errors)
    page.clock.install()
    open_joined(page, daemon_process)
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)  # the 8 s of Undo last however slow the machine
    page.locator("#tab-table").tap()
    undo = page.get_by_role("button", name=en["undo.button"])
    expect(undo).to_be_hidden()

    page.get_by_role("button", name=en["kind.hit_2"], exact=True).tap()  # Bob's Hit 2: Cy must press twice
    expect(page.locator("#who input:checked")).to_have_value("Cy", timeout=WAIT_MS)
    assert errors == []
    expect(undo).to_be_visible(timeout=WAIT_MS)
    undo.tap()
    expect(undo).to_be_hidden()
    expect(page.locator("#feed li[data-type='attack.undone']")).to_have_count(1, timeout=WAIT_MS)
    table = daemon_process.get("/api/game")["game"]["table"]
    assert (table["demands"], table["current"]) == ([], "Bob")
    page.context.close()


def test_the_undo_button_shows_for_8_seconds_after_each_declaration(daemon_process, playwright_chromium):
    """docs/GAME.md, Undo and confirmations: "Undo that" shows for 8 seconds after a declaration; each declaration
    shows it for 8 seconds again."""
    playwright, browser = playwright_chromium
    en = catalogue("en")
    assert daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
    errors: list[str] = []
    page = phone(browser, playwright, origin(daemon_process.url), [], errors)
    page.clock.install()  # the page's timers on the test's clock (fetch and the event stream are not timers)
    open_joined(page, daemon_process)
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)  # from here the page's time moves only when told
    page.locator("#tab-table").tap()
    undo = page.get_by_role("button", name=en["undo.button"])
    played = page.get_by_role("button", name=en["decl.played"], exact=True)
    turn = page.locator("#who input:checked")

    played.tap()  # Bob plays another card: Cy's turn
    expect(turn).to_have_value("Cy", timeout=WAIT_MS)
    expect(undo).to_be_visible()
    page.clock.run_for(7900)
    expect(undo).to_be_visible()
    page.clock.run_for(100)
    expect(undo).to_be_hidden()

    played.tap()  # Cy plays
    expect(turn).to_have_value("Ann", timeout=WAIT_MS)
    expect(undo).to_be_visible()
    page.clock.run_for(5000)
    played.tap()  # Ann plays 5 s later: her declaration has its own 8 s
    expect(turn).to_have_value("Bob", timeout=WAIT_MS)
    page.clock.run_for(7900)
    expect(undo).to_be_visible()
    page.clock.run_for(100)
    expect(undo).to_be_hidden()
    assert errors == []
    page.context.close()


def test_cancel_asks_first_naming_what_is_dropped(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    assert daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
    assert daemon_process.post("/api/attacks", {"kind": "wild_all_hit", "by": "Bob"})[0] == 200
    assert daemon_process.post("/api/attacks", {"kind": "uno_penalty", "player": "Bob"})[0] == 200
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-table").tap()

    page.get_by_role("button", name=en["decl.cancel"]).tap()
    expect(page.locator("#confirm-question")).to_contain_text("Bob")
    page.get_by_role("button", name=en["confirm.yes"]).tap()
    expect(page.locator("#feed .feed-text", has_text=en["feed.cancelled"])).to_have_count(1, timeout=WAIT_MS)
    demands = daemon_process.get("/api/game")["game"]["table"]["demands"]
    assert [(d["player"], d["cause"]) for d in demands] == [("Cy", "wild_all_hit"), ("Ann", "wild_all_hit")]
    page.context.close()
