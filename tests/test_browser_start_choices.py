"""The rule picker's choices of who plays first (issue #50 items 4 and 5), in Debian's Chromium as a Pixel 5: each
ruleset shows its own way picked (UNO Attack left of the dealer, classic UNO the dealer, as seed 000 plays them), the
rules reference follows what is picked, and the game starts as picked."""

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.test_browser import WAIT_MS, catalogue, fill
from tests.test_browser_game import new_game, new_game_form

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser


def test_who_plays_first_is_picked_per_ruleset_and_the_game_starts_so(daemon_process, playwright_chromium):
    en = catalogue("en")
    page = new_game_form(daemon_process, playwright_chromium)
    expect(page.locator("#house-choices legend").first).to_have_text(en["start.first_player"])
    expect(page.locator('input[name="first_player"][value="left_of_dealer"]')).to_be_checked()
    expect(page.locator("#grules-first")).to_contain_text(en["first.skip"])
    page.locator('input[name="ruleset"][value="classic"]').check()
    expect(page.locator('input[name="first_player"][value="dealer"]')).to_be_checked()  # seed 000's classic UNO
    expect(page.locator('input[name="reverse_start"][value="dealer"]')).to_be_checked()
    expect(page.locator("#grules-first")).to_contain_text(en["first.skip_dealer"])
    expect(page.locator("#grules-first")).to_contain_text(en["first.draw_two_dealer"])
    page.locator('input[name="reverse_start"][value="right_of_dealer"]').check()
    expect(page.locator("#grules-first")).to_contain_text(en["first.reverse_right"])
    page.locator('input[name="ruleset"][value="uno_attack"]').check()  # back: UNO Attack's own way again
    expect(page.locator('input[name="first_player"][value="left_of_dealer"]')).to_be_checked()
    expect(page.locator('input[name="reverse_start"][value="dealer"]')).to_be_checked()
    page.locator('input[name="first_player"][value="dealer"]').check()
    page.locator('input[name="reverse_start"][value="right_of_dealer"]').check()
    expect(page.locator("#grules-first")).to_contain_text(en["first.hit_2_dealer"])
    new_game(page, ["Ann", "Bob", "Cy"])  # Ann deals
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.turn"], player="Ann"), timeout=WAIT_MS)
    house = daemon_process.get("/api/game")["game"]["house_rules"]
    assert (house["first_player"], house["reverse_start"]) == ("dealer", "right_of_dealer")
    page.context.close()
