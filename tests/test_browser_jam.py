"""A jam during an attack, on two phones in two languages, against the real daemon on simulated hardware whose
roller never moves: every phone says what happened and what to do, and the player hit still owes the launcher."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.conftest import start_daemon
from tests.test_browser import WAIT_MS, catalogue, open_joined

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

# Every press fires; the simulated roller stalls below 0.9 duty and the motor runs at 0.5: no card ever comes out.
JAM_TOML = """
[dispense]
pwm = 0.5
jam_ms = 200
min_rest_ms = 10

[sim]
stall_duty = 0.9

[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
"""


def phone(browser, playwright, locale: str) -> Page:
    return browser.new_context(**playwright.devices["Pixel 5"], locale=locale).new_page()


def template_pattern(template: str) -> re.Pattern[str]:
    """The catalogue's text with each {placeholder} standing for a number."""
    parts = re.split(r"\{\w+\}", template)
    return re.compile("^" + r"\d+".join(re.escape(part) for part in parts) + "$")


def test_a_jam_mid_attack_says_what_to_do_on_every_phone_and_the_press_is_still_owed(tmp_path, playwright_chromium):
    playwright, browser = playwright_chromium
    running = start_daemon(tmp_path, JAM_TOML)
    try:
        en, hant = catalogue("en"), catalogue("zh-Hant")
        phones = {"en": phone(browser, playwright, "en-US"), "zh-Hant": phone(browser, playwright, "zh-TW")}
        for page in phones.values():
            open_joined(page, running)
        assert running.post("/api/games", {"players": ["Ann", "Bob", "Cy"], "dealer": "Cy"})[0] == 201
        assert running.post("/api/attacks", {"kind": "wild_hit_fire", "by": "Ann"})[0] == 200  # Bob, until it fires
        for page, strings in ((phones["en"], en), (phones["zh-Hant"], hant)):
            expect(page.locator("#prompt-text")).to_have_text(
                strings["prompt.until_fire"].replace("{player}", "Bob"), timeout=WAIT_MS
            )

        phones["en"].locator("#press").tap()

        for page, strings in ((phones["en"], en), (phones["zh-Hant"], hant)):
            jam = page.locator('#feed li[data-type="launcher.jammed"] .feed-text')
            expect(jam).to_have_text(template_pattern(strings["feed.jammed"]), timeout=WAIT_MS)
            # Nothing came out: Bob still owes the launcher, on every phone.
            expect(page.locator("#prompt-text")).to_have_text(strings["prompt.until_fire"].replace("{player}", "Bob"))
        # What to do, not only what happened.
        expect(phones["en"].locator('#feed li[data-type="launcher.jammed"] .feed-text')).to_contain_text(
            "clear the jam, close it and press again; what is owed is still owed"
        )
        assert running.get("/api/game")["game"]["table"]["pending"]["player"] == "Bob"
        for page in phones.values():
            page.context.close()
    finally:
        running.close()
