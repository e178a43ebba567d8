"""Issue #46 on the admin's page, in Debian's Chromium as a Pixel 5: a broker the table cannot reach is shown with
the reason /api/state gives, as trouble; and a tournament round corrected at the table says so in the rounds."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.conftest import FAST_SIM_TOML, start_daemon, wait_until
from tests.mosquitto import free_port
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined
from tests.test_mqtt import table_dir
from tests.test_tournament import FOUR

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser


def test_the_admin_sees_why_the_broker_is_not_reached_and_a_corrected_round_says_so(
    tmp_path: Path, playwright_chromium
) -> None:
    playwright, browser = playwright_chromium
    english = catalogue("en")
    toml = FAST_SIM_TOML + f'\n[mqtt]\nbroker = "mqtt://127.0.0.1:{free_port()}"\ntable = "kitchen"\n'
    daemon = start_daemon(table_dir(tmp_path, "kitchen"), toml)  # nothing listens at that port
    try:
        status, answer = daemon.post("/api/tournaments", {"players": FOUR, "tables": ["kitchen"]})
        assert status == 201, answer
        seats = answer["tournament"]["tables"][0]["seats"]
        assert daemon.post("/api/tournament/rounds", {"number": 1, "points": dict.fromkeys(seats, 5)})[0] == 201
        status, _ = daemon.request("PUT", "/api/tournament/rounds/1", {"points": dict.fromkeys(seats, 7)})
        assert status == 200
        link = wait_until(
            lambda: (
                (daemon.get("/api/state")["mqtt"] or {}).get("reason") not in (None, "not connected yet")
                and daemon.get("/api/state")["mqtt"]
            )
        )
        assert link["state"] == "trying"
        page = browser.new_context(**playwright.devices["Pixel 5"], locale="en-US").new_page()
        open_joined(page, daemon, daemon.admin_pin)
        shown = page.locator("#tour-link")
        expect(shown).to_contain_text(link["reason"], timeout=WAIT_MS)
        expect(shown).to_have_class("error")
        rounds = page.locator("#tour-rounds li")
        expect(rounds).to_have_count(1)
        expect(rounds.first).to_contain_text(
            fill(english["tournament.round_line"], table="kitchen", cycle=1, round=1, points="")
        )
        expect(rounds.first).to_contain_text(english["tournament.corrected"])
        page.context.close()
    finally:
        daemon.close()
