"""A refusal from the daemon shows in the reader's language, with the player's name: the page words it from the
refusal's reason and parameters, not from the daemon's English message."""

import re

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, origin
from tests.test_browser_fairness import joined_phone, open_live
from tests.test_browser_game import phone

playwright_chromium = test_browser.playwright_chromium  # one Chromium per module

pytestmark = pytest.mark.browser


def test_a_card_declared_while_someone_owes_is_refused_in_chinese_with_their_name(daemon_process, playwright_chromium):
    """Ann deals, Bob plays a Hit 2: Cy must press twice before anyone declares a card (docs/GAME.md)."""
    playwright, browser = playwright_chromium
    zh = catalogue("zh-Hans")
    assert daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
    errors: list[str] = []
    page = phone(browser, playwright, origin(daemon_process.url), [], errors)
    open_joined(page, daemon_process)
    page.locator("#lang").select_option("zh-Hans")
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    page.locator("#tab-table").tap()
    page.get_by_role("button", name=zh["kind.hit_2"], exact=True).tap()
    expect(page.locator("#who input:checked")).to_have_value("Cy", timeout=WAIT_MS)
    page.get_by_role("button", name=zh["kind.skip"], exact=True).tap()
    demand = zh["prompt.times"].format(player="Cy", n=2)
    words = zh["refused.owes"].format(demand=demand, card=zh["kind.hit_2"])
    expect(page.locator("#declare-error")).to_have_text(words, timeout=WAIT_MS)
    assert [e for e in errors if "/api/attacks" not in e] == []  # the refused call itself is logged by Chromium
    page.context.close()


def test_an_undo_that_reaches_the_daemon_after_a_press_is_refused_in_chinese(daemon_process, playwright_chromium):
    """docs/GAME.md, Undo: a press after the declaration makes the undo too late (another phone pressed first)."""
    playwright, browser = playwright_chromium
    zh = catalogue("zh-Hans")
    assert daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    page.clock.install()
    open_joined(page, daemon_process)
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)  # the Undo button stays however slow the machine
    page.locator("#lang").select_option("zh-Hans")
    page.locator("#tab-table").tap()
    page.get_by_role("button", name=zh["kind.hit_2"], exact=True).tap()  # Bob's Hit 2: Cy must press twice
    expect(page.locator("#who input:checked")).to_have_value("Cy", timeout=WAIT_MS)

    def press_first(route):  # Cy's press on another phone reaches the daemon just before this undo
        assert daemon_process.post("/api/press", {"player": "Cy"})[0] == 200
        route.continue_()

    page.route("**/api/game/undo-declaration", press_first)
    page.get_by_role("button", name=zh["undo.button"]).tap()
    expect(page.locator("#declare-error")).to_have_text(zh["refused.undo_too_late"], timeout=WAIT_MS)
    page.context.close()


def test_a_contribution_this_phone_made_from_another_page_is_told_in_chinese(daemon_process, playwright_chromium):
    """docs/FAIRNESS.md: one commitment a phone (its session) a shuffle."""
    playwright, browser = playwright_chromium
    zh = catalogue("zh-Hans")
    page = joined_phone(browser, playwright, daemon_process, "zh-CN")
    number = daemon_process.get("/api/state")["shuffle"]["number"]
    other_page = page.request.post(
        f"{daemon_process.url}/api/shuffles/current/contributions", data={"shuffle": number, "commitment": "ab" * 32}
    )
    assert other_page.status == 201
    open_live(page, daemon_process, joined=True)
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    words = fill(zh["refused.already_contributed"], shuffle=number)
    expect(page.locator("#fair-mine")).to_have_text(words, timeout=WAIT_MS)
    page.context.close()


# Latin letters a Chinese page may show: the names of things (UNO, UNO Attack, PIN, QR …), none of the daemon's.
NAMES = re.compile(r"UNO Attack|UNO|PIN|QR")


@pytest.mark.parametrize("lang", ["zh-Hans", "zh-Hant"])
def test_a_round_with_more_of_a_card_than_the_deck_holds_is_refused_in_chinese(
    daemon_process, playwright_chromium, lang
):
    """The UNO Attack deck has 2 Wild Hit-Fire (docs/GAME.md): three across the hands is refused, and a Chinese page
    says so in Chinese, with the count, the card's name and who holds them, and no English word."""
    playwright, browser = playwright_chromium
    zh = catalogue(lang)
    players = ["Ann", "爸爸", "小明", "小美"]
    assert daemon_process.post("/api/games", {"players": players})[0] == 201
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#lang").select_option(lang)
    expect(page.locator("html")).to_have_attribute("lang", lang)
    page.locator("#tab-round").tap()
    page.locator("#winner").select_option("Ann")
    for name in players[1:]:
        hand = page.locator("#hands .hand").filter(has_text=name)
        hand.locator("summary").tap()
        hand.locator('.cell[data-kind="wild_hit_fire"] .card-add').tap()
    page.locator("#entry-save").tap()
    held = zh["list.sep"].join(f"{name} 1" for name in players[1:])
    words = fill(zh["refused.over_deck"], count=3, card=zh["kind.wild_hit_fire"], held=held, max=2)
    error = page.locator("#entry-error")
    expect(error).to_have_text(words, timeout=WAIT_MS)
    assert re.search(r"[A-Za-z]", NAMES.sub("", error.inner_text()).replace("Ann", "")) is None
    assert daemon_process.get("/api/game")["game"]["scoreboard"]["rounds"] == []
    page.context.close()
