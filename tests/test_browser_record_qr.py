"""The page shows an ended shuffle's record as a QR code (docs/FAIRNESS.md, "The record as a QR code"), and its
check says what the record's drand round proves."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from launcher import record_qr
from launcher.beacon import BeaconRound
from tests import test_browser
from tests.conftest import start_daemon, wait_until
from tests.test_beacon import ROUND
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined
from tests.test_browser_fairness import phone

pytestmark = pytest.mark.browser
playwright_chromium = test_browser.playwright_chromium


def test_an_ended_shuffle_shows_its_record_as_a_qr_code(tmp_path: Any, playwright_chromium: Any) -> None:
    playwright, browser = playwright_chromium
    running = start_daemon(tmp_path)
    try:
        english = catalogue("en")
        page: Page = phone(browser, playwright)
        open_joined(page, running)
        wait_until(lambda: len(running.get("/api/state")["shuffle"]["commitments"]) == 1)
        for _ in range(3):
            page.locator("#press").tap()
            expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
        assert running.post("/api/shuffles", {})[0] == 201
        expect(page.locator("#fair-verdict")).to_have_text(fill(english["fair.verdict_ok"], shuffle=1), timeout=WAIT_MS)
        page.locator("#fair-chip").tap()
        page.locator("#fair-check summary").tap()
        expect(page.locator("#fair-qr-text")).to_have_text(english["fair.qr"], timeout=WAIT_MS)
        canvas = page.locator("#fair-qr-code")
        expect(canvas).to_be_visible()
        # What the code holds is the record the page checked, whole.
        assert record_qr.unpacked(canvas.get_attribute("data-text") or "") == running.get("/api/shuffles/1")
        size = running.get("/api/shuffles/1/qr")["size"]
        assert canvas.evaluate("c => [c.width, c.height]") == [(size + 8) * 4] * 2
        # The finder pattern's corner is dark, the quiet zone around it white.
        corner = canvas.evaluate("c => [...c.getContext('2d').getImageData(17, 17, 1, 1).data].slice(0, 3)")
        quiet = canvas.evaluate("c => [...c.getContext('2d').getImageData(2, 2, 1, 1).data].slice(0, 3)")
        assert corner == [0, 0, 0] and quiet == [255, 255, 255]

        # A record with a drand round: the check says what it adds (here the round was not had in time).
        def with_beacon(route: Route) -> None:
            response = route.fetch()
            record = copy.deepcopy(response.json())
            record["beacon"] = BeaconRound(ROUND).as_record()
            route.fulfill(response=response, json=record)

        page.route("**/api/shuffles/2", with_beacon)
        page.locator("#press").tap()
        expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
        assert running.post("/api/shuffles", {})[0] == 201
        note = fill(english["fair.beacon_missing"], round=ROUND)
        expect(page.locator('#fair-lines li[data-state="note"] .fair-text')).to_contain_text([note], timeout=WAIT_MS)
        page.context.close()
    finally:
        running.close()
