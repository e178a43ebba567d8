"""The page while someone on the Wi-Fi spends the network's PIN tries, in Debian's Chromium as a Pixel 5 (393×851)
against the real daemon on simulated hardware: the right PIN waits and says to press the launcher's big button, and
the phone joins by itself once it is pressed."""

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from launcher.access import PinGuard
from launcher.config import Config
from launcher.daemon import Daemon
from tests import test_browser
from tests.test_browser import ARTIFACTS, WAIT_MS, catalogue
from tests.test_browser_access import join_with, open_not_joined, phone
from tests.test_pin_guessing import spend_the_budget

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """In this process, so that the test can press the simulated launcher's button."""
    running = Daemon(Config().replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=0))
    serving = threading.Thread(target=running.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        yield running
    finally:
        running.close()
        serving.join(5)


def test_a_right_pin_waits_for_the_big_button_then_joins_by_itself(daemon, playwright_chromium) -> None:
    playwright, browser = playwright_chromium
    english = catalogue("en")
    spend_the_budget(daemon.app.extensions.setdefault("launcher.pin_guard", PinGuard()))
    page = phone(browser, playwright, viewport={"width": 393, "height": 851})
    open_not_joined(page, daemon.urls[0].rstrip("/"))
    assert daemon.new_pins is not None and daemon.new_pins.table is not None
    join_with(page, daemon.new_pins.table)

    waiting = page.locator("#join-waiting")
    said = re.escape(english["join.waiting"]).replace(re.escape("{wait_s}"), r"\d+")
    expect(waiting).to_have_text(re.compile(said), timeout=WAIT_MS)
    expect(page.locator("#join-error")).to_be_hidden()
    box = waiting.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 393  # no sideways scroll
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "doorbell-waiting-en.png"))

    daemon.hardware.world.press_button()  # type: ignore[attr-defined]
    expect(page.locator("#role")).to_have_text(english["role.table"], timeout=WAIT_MS)
    expect(page.locator("#join")).to_be_hidden()
    expect(waiting).to_be_hidden()
    assert daemon.controller.snapshot()["presses"] == 0  # the press let the phone in and fired nothing
    page.context.close()
