"""Launcher care on the phone page, in Debian's Chromium as a Pixel 5, against the real daemon on simulated
hardware whose store says the roller has jammed: the admin sees the counters and the hint to clean the roller,
records the cleaning after a confirmation, and the hint goes while the lifetime counts stay; a table phone sees no
care panel at all.
"""

import sqlite3

import pytest
from playwright.sync_api import Page, expect

from launcher.store import STORE_FILE
from tests import test_browser
from tests.conftest import start_daemon
from tests.test_browser import WAIT_MS, catalogue, open_joined, origin, watch

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser

FIRES, CARDS, JAMS = 40, 95, 6
ROWS = {"fires": 0, "cards": 1, "jams": 2}  # the rows of the care table, in order


def phone(browser, playwright) -> Page:
    return browser.new_context(**{**playwright.devices["Pixel 5"], "locale": "en-US"}).new_page()


def jammed_store(state_dir) -> None:
    """The store of a launcher that has fired 40 times, the last 6 of them jams, since it began counting."""
    conn = sqlite3.connect(state_dir / STORE_FILE)
    try:
        with conn:
            conn.execute(
                "UPDATE wear SET fires = ?, cards = ?, jams = ?, motor_ms = 61000, recent = ?",
                (FIRES, CARDS, JAMS, "." * (FIRES - JAMS) + "j" * JAMS),
            )
    finally:
        conn.close()


def activate(page: Page, selector: str) -> None:
    """Enter on the control, as a keyboard does: sections above it that load late cannot move it from under a tap."""
    page.locator(selector).press("Enter")


def cell(page: Page, row: str, period: int):
    """The lines of a value: the count, and for a rated one its rate."""
    return page.locator("#care-rows tr").nth(ROWS[row]).locator("td").nth(period).locator(".care-line")


def test_the_admin_sees_the_wear_cleans_the_roller_and_the_table_sees_nothing(tmp_path, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    start_daemon(tmp_path).close()  # made the store, then stopped
    jammed_store(tmp_path / "state")
    daemon = start_daemon(tmp_path)
    foreign_requests: list[str] = []
    console_errors: list[str] = []
    try:
        admin = phone(browser, playwright)
        watch(admin, origin(daemon.url), foreign_requests, console_errors)
        open_joined(admin, daemon, daemon.admin_pin)
        activate(admin, "#access summary")
        expect(admin.locator("#care")).to_be_visible(timeout=WAIT_MS)
        expect(admin.locator("#care-title")).to_have_text(english["care.title"])
        hint = admin.locator("#care-hint")
        expect(hint).to_be_visible()
        expect(hint).to_contain_text("Clean the roller with a damp cloth and check the hopper's throat")
        expect(cell(admin, "fires", 0)).to_have_text(str(FIRES))
        expect(cell(admin, "cards", 1)).to_have_text(str(CARDS))
        expect(cell(admin, "jams", 0)).to_have_text(["6", "150.0 per 1,000 fires"])

        # Asked first; "Cancel" changes nothing.
        activate(admin, "#care-clean")
        expect(admin.locator("#care-confirm")).to_be_visible()
        expect(admin.locator("#care-confirm-yes")).to_be_focused()
        activate(admin, "#care-confirm-no")
        expect(admin.locator("#care-confirm")).to_be_hidden()
        expect(hint).to_be_visible()

        activate(admin, "#care-clean")
        activate(admin, "#care-confirm-yes")
        expect(admin.locator("#toast")).to_have_text(english["care.done"], timeout=WAIT_MS)
        expect(hint).to_be_hidden()
        expect(cell(admin, "fires", 1)).to_have_text("0")
        expect(cell(admin, "fires", 0)).to_have_text(str(FIRES))  # the lifetime counts stay
        expect(cell(admin, "jams", 0)).to_have_text(["6", "150.0 per 1,000 fires"])
        status, care = daemon.request("GET", "/api/care", admin=True)
        assert status == 200 and not care["clean_roller"] and care["lifetime"]["jams"] == JAMS

        table = phone(browser, playwright)
        watch(table, origin(daemon.url), foreign_requests, console_errors)
        open_joined(table, daemon)
        activate(table, "#access summary")
        expect(table.locator("#admin-join")).to_be_visible()
        expect(table.locator("#care")).to_be_hidden()
        assert foreign_requests == [] and console_errors == []
    finally:
        daemon.close()
