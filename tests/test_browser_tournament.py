"""A tournament on the phone page, in Debian's Chromium as a Pixel 5: two tables, each its own daemon on a real
Mosquitto. The kitchen's admin sets it up and reads out its code, which the garden's admin types in; the garden's
phone then shows who sits where, a round the kitchen's phone scores shows in the garden's rounds and standings,
live, and so does the kitchen taking it back."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.conftest import start_daemon
from tests.mosquitto import running_broker
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, origin, watch
from tests.test_mqtt import mqtt_toml, table_dir

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

EIGHT = ["Ann", "Bo", "Cy", "Di", "小明", "Flo", "Gus", "Hu"]


def test_a_tournament_set_up_at_one_table_is_played_and_seen_at_the_other(tmp_path: Path, playwright_chromium) -> None:
    playwright, browser = playwright_chromium
    english, simplified = catalogue("en"), catalogue("zh-Hans")
    with running_broker(tmp_path / "broker") as broker:
        kitchen = start_daemon(table_dir(tmp_path, "kitchen"), mqtt_toml(broker, "kitchen"))
        garden = start_daemon(table_dir(tmp_path, "garden"), mqtt_toml(broker, "garden"))
        try:
            errors: list[str] = []
            foreign: list[str] = []
            pages = []
            for daemon, locale in ((kitchen, "en-US"), (garden, "zh-CN")):
                page = browser.new_context(**playwright.devices["Pixel 5"], locale=locale).new_page()
                watch(page, origin(daemon.url), foreign, errors)
                open_joined(page, daemon, daemon.admin_pin)
                pages.append(page)
            here, there = pages
            expect(there.locator("#tour-none")).to_have_text(simplified["tournament.none"], timeout=WAIT_MS)
            here.locator("#tour-setup summary").tap()
            here.locator("#tour-players").fill("\n".join(EIGHT))
            expect(here.locator("#tour-tables-input")).to_have_value("kitchen")
            here.locator("#tour-tables-input").fill("kitchen\ngarden")
            here.locator("#tour-setup-form button[type=submit]").tap()
            expect(here.locator("#tour-tables li")).to_have_count(2, timeout=WAIT_MS)
            expect(here.locator("#tour-tables li").first).to_contain_text(
                fill(english["tournament.next"], table="kitchen", cycle=1, round=1, rounds=28)
            )
            # The kitchen's admin page shows the broker's link and the code; the garden's admin types it.
            expect(here.locator("#tour-link")).to_have_text(english["tournament.link_connected"], timeout=WAIT_MS)
            expect(here.locator("#tour-code")).not_to_be_empty(timeout=WAIT_MS)
            code = here.locator("#tour-code").inner_text()
            expect(there.locator("#tour-admin")).to_be_visible(timeout=WAIT_MS)
            there.locator("#tour-join-code").fill("nonsense")
            there.locator("#tour-join-form button[type=submit]").tap()
            expect(there.locator("#tour-join-error")).to_have_text(simplified["tournament.refused_code"])
            there.locator("#tour-join-code").fill(code.lower())  # as read out, in groups, any case
            there.locator("#tour-join-form button[type=submit]").tap()
            # The garden's phone shows the tournament the kitchen set up, in its reader's language.
            expect(there.locator("#tour-tables li").nth(1)).to_contain_text(
                fill(simplified["tournament.next"], table="garden", cycle=1, round=1, rounds=28), timeout=WAIT_MS
            )
            inputs = here.locator("#tour-points input")
            expect(inputs).to_have_count(4)
            for i in range(4):
                inputs.nth(i).fill(str(10 * (i + 1)))
            here.locator("#tour-score button[type=submit]").tap()
            expect(here.locator("#tour-tables li").first).to_contain_text(
                fill(english["tournament.next"], table="kitchen", cycle=1, round=2, rounds=28), timeout=WAIT_MS
            )
            expect(there.locator("#tour-rounds li")).to_have_count(1, timeout=WAIT_MS)
            expect(there.locator("#tour-rounds li").first).to_contain_text("kitchen")
            expect(there.locator("#tour-standings tr")).to_have_count(9)  # the head and eight players
            expect(there.locator("#tour-standings tr").nth(1)).to_contain_text("40")
            expect(there.locator("#tour-export")).to_be_visible()
            # The kitchen takes its round back (asked first): gone at the garden too, to be scored again.
            here.locator("#tour-rounds .tour-take-back").tap()
            here.locator("#confirm-yes").tap()
            expect(there.locator("#tour-rounds li")).to_have_count(0, timeout=WAIT_MS)
            expect(here.locator("#tour-tables li").first).to_contain_text(
                fill(english["tournament.next"], table="kitchen", cycle=1, round=1, rounds=28), timeout=WAIT_MS
            )
            # The one refusal asked for (the wrong code) is the console's only line.
            assert errors == ["Failed to load resource: the server responded with a status of 400 (BAD REQUEST)"]
            assert foreign == []
        finally:
            kitchen.close()
            garden.close()


def test_the_page_shows_the_cycle_and_goes_on_into_the_next(daemon_process, playwright_chromium) -> None:
    """Four players at one table: after the twelve rounds of the first cycle the page shows the second cycle's first
    round, with the standings carried on (issue #46 item 6)."""
    playwright, browser = playwright_chromium
    english = catalogue("en")
    players = ["Ann", "Bo", "Cy", "Di"]
    assert daemon_process.post("/api/tournaments", {"players": players, "tables": ["table"]})[0] == 201
    for number in range(1, 13):
        (table,) = daemon_process.get("/api/tournament")["tournament"]["tables"]
        points = {p: (5 if seat % 2 == 0 else 0) for seat, p in enumerate(table["seats"])}  # seats 0 and 2 win
        assert daemon_process.post("/api/tournament/rounds", {"number": number, "points": points})[0] == 201
    page = browser.new_context(**playwright.devices["Pixel 5"], locale="en-US").new_page()
    open_joined(page, daemon_process)
    expect(page.locator("#tour-tables li").first).to_contain_text(
        fill(english["tournament.next"], table="table", cycle=2, round=1, rounds=12), timeout=WAIT_MS
    )
    expect(page.locator("#tour-score-title")).to_have_text(fill(english["tournament.score"], cycle=2, round=1))
    expect(page.locator("#tour-rounds li").first).to_contain_text(  # the newest first: cycle 1's last round
        fill(english["tournament.round_line"], table="table", cycle=1, round=12, points="")
    )
    expect(page.locator("#tour-standings tr")).to_have_count(5)
    page.context.close()
