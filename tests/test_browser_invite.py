"""The invite on the phone page, in Debian's Chromium as a Pixel 5, against the real daemon on simulated hardware: a
joined phone taps Invite and sees, in a labelled dialog, the QR code (most of the screen wide) and the link that
joins with the table PIN, which a new phone opens to join; a phone not joined has no Invite button."""

import re

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.test_browser import ARTIFACTS, WAIT_MS, catalogue, fill, open_joined, origin, watch
from tests.test_browser_access import open_not_joined, phone

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser


def test_a_joined_phone_shows_the_invite_and_its_link_joins(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    foreign_requests, console_errors = [], []
    host = phone(browser, playwright)
    watch(host, origin(daemon_process.url), foreign_requests, console_errors)
    open_joined(host, daemon_process)
    invite = host.locator("#invite")
    expect(invite).to_have_text(english["invite.open"], timeout=WAIT_MS)
    invite.tap()
    dialog = host.get_by_role("dialog", name=english["invite.title"])
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    qr = dialog.get_by_role("img", name=english["invite.qr"])
    expect(qr).to_have_attribute("src", re.compile(r"^data:image/svg\+xml;base64,"), timeout=WAIT_MS)
    expect(qr).to_have_js_property("complete", True, timeout=WAIT_MS)
    assert qr.evaluate("img => img.naturalWidth") > 0  # the policy let it draw
    assert qr.bounding_box()["width"] >= 0.7 * host.viewport_size["width"]  # big enough to scan across a table
    link = dialog.locator("#invite-link")
    expect(link).to_have_text(re.compile(r"/#join=[\w-]{22}$"), timeout=WAIT_MS)  # a token, never the PIN
    # This phone joined with the PIN typed (the test's link fills it in): the digits show under the code.
    expect(dialog.locator("#invite-pin")).to_have_text(fill(english["invite.pin"], pin=daemon_process.table_pin))
    # The digits are the big words of the line, to be read out across the table: twice the link's size at least.
    digits = dialog.locator("#invite-pin .invite-pin-digits")
    expect(digits).to_have_text(daemon_process.table_pin)
    size = "e => parseFloat(getComputedStyle(e).fontSize)"
    assert digits.evaluate(size) >= 2 * link.evaluate(size)
    expect(dialog.locator("#invite-ask")).to_be_hidden()
    expect(dialog.get_by_role("button", name=english["invite.copy"])).to_be_enabled()
    join_url = link.text_content()
    ARTIFACTS.mkdir(exist_ok=True)
    host.screenshot(path=ARTIFACTS / "browser-invite.png")
    host.keyboard.press("Escape")  # a dialog of the browser's own: the keyboard closes it too
    expect(dialog).to_be_hidden(timeout=WAIT_MS)
    invite.tap()
    expect(dialog).to_be_visible(timeout=WAIT_MS)
    dialog.get_by_role("button", name=english["invite.close"]).tap()
    expect(dialog).to_be_hidden(timeout=WAIT_MS)

    guest = phone(browser, playwright)
    watch(guest, origin(daemon_process.url), foreign_requests, console_errors)
    guest.goto(join_url)
    expect(guest.locator("#role")).to_have_text(english["role.table"], timeout=WAIT_MS)
    assert "#join" not in guest.url  # taken out of the address bar at once
    guest.locator("#invite").tap()  # joined by the link: it never learnt the PIN, and is told whom to ask
    expect(guest.locator("#invite-ask")).to_have_text(english["invite.ask_pin"], timeout=WAIT_MS)
    expect(guest.locator("#invite-pin")).to_be_hidden()
    assert foreign_requests == [] and console_errors == []


def test_a_phone_not_joined_has_no_invite(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    stranger = phone(browser, playwright)
    open_not_joined(stranger, daemon_process.url)
    expect(stranger.locator("#invite")).to_be_hidden()
