"""The page while someone on the Wi-Fi spends the network's PIN tries, in Debian's Chromium as a Pixel 5 (393×851)
against the real daemon on simulated hardware: a PIN that cannot be checked waits, showing its code big and what to
do; a joined phone types the code in its Invite dialog ("Let a phone in"), and the waiting phone joins by itself, or
is told its PIN was wrong."""

import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from launcher.access.doorbell import CODE_ALPHABET
from launcher.config import Config
from launcher.daemon import Daemon
from tests import test_browser
from tests.conftest import app_parts
from tests.test_browser import ARTIFACTS, WAIT_MS, catalogue
from tests.test_browser_access import join_with, open_not_joined, phone
from tests.test_pin_guessing import spend_the_budget

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """In this process, so that the test can spend the guessing budget at once."""
    running = Daemon(Config().replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=0))
    serving = threading.Thread(target=running.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        yield running
    finally:
        running.close()
        serving.join(5)


def _waits_with_a_code(page, english) -> str:
    """The page says what to do and shows its code big; the code."""
    said = re.escape(english["join.waiting"]).replace(re.escape("{wait_s}"), r"\d+")
    expect(page.locator("#join-waiting")).to_have_text(re.compile(said), timeout=WAIT_MS)
    shown = re.escape(english["join.code"]).replace(re.escape("{code}"), f"([{CODE_ALPHABET}]{{4}})")
    code = page.locator("#join-code")
    expect(code).to_have_text(re.compile(shown), timeout=WAIT_MS)
    found = re.fullmatch(shown, code.inner_text())
    assert found is not None
    return found.group(1)


def _let_in(host, english, code: str, told: str) -> None:
    host.locator("#invite").tap()
    dialog = host.get_by_role("dialog", name=english["invite.title"])
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    dialog.get_by_label(english["invite.let_in_code"]).fill(code.lower())  # read out: any case will do
    dialog.get_by_role("button", name=english["invite.let_in_go"]).tap()
    expect(dialog.locator("#let-in-said")).to_have_text(told, timeout=WAIT_MS)
    dialog.locator("#let-in").scroll_into_view_if_needed()
    host.screenshot(path=str(ARTIFACTS / "doorbell-let-in-en.png"))
    dialog.get_by_role("button", name=english["invite.close"]).tap()


def test_a_waiting_pin_shows_its_code_and_a_joined_phone_lets_it_in(daemon, playwright_chromium) -> None:
    playwright, browser = playwright_chromium
    english = catalogue("en")
    url = daemon.urls[0].rstrip("/")
    assert daemon.new_pins is not None and daemon.new_pins.table is not None
    host = phone(browser, playwright)
    open_not_joined(host, url)
    join_with(host, daemon.new_pins.table)
    expect(host.locator("#role")).to_have_text(english["role.table"], timeout=WAIT_MS)
    spend_the_budget(app_parts(daemon).pin_guard)

    page = phone(browser, playwright, viewport={"width": 393, "height": 851})
    open_not_joined(page, url)
    join_with(page, daemon.new_pins.table)
    code = _waits_with_a_code(page, english)
    expect(page.locator("#join-error")).to_be_hidden()
    for shown in ("#join-waiting", "#join-code"):
        box = page.locator(shown).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 393  # no sideways scroll
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "doorbell-waiting-en.png"))

    _let_in(host, english, code, english["invite.let_in_done"])  # on a phone of the default size
    expect(page.locator("#role")).to_have_text(english["role.table"], timeout=WAIT_MS)
    expect(page.locator("#join")).to_be_hidden()
    expect(page.locator("#join-code")).to_be_hidden()
    assert daemon.controller.snapshot()["presses"] == 0  # letting in fired nothing

    stranger = phone(browser, playwright)
    open_not_joined(stranger, url)
    join_with(stranger, "000000" if daemon.new_pins.table != "000000" else "000001")
    _let_in(host, english, _waits_with_a_code(stranger, english), english["invite.let_in_wrong"])
    expect(stranger.locator("#join-error")).to_have_text(english["refused.pin_was_wrong"], timeout=WAIT_MS)
    expect(stranger.locator("#role")).to_be_hidden()
    for opened in (host, page, stranger):
        opened.context.close()
