"""The rule picker's choices of who plays first (issue #50 items 4 and 5), in Debian's Chromium as a Pixel 5: each
ruleset shows its own way picked (UNO Attack left of the dealer, classic UNO the dealer, as seed 000 plays them), the
rules reference follows what is picked, and the game starts as picked. The house rules beside them are worded from
the page's catalogue, in the language picked (issue #48 item 5)."""

import re

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, origin
from tests.test_browser_game import new_game, new_game_form, phone
from tests.test_linebreak import plain

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


def test_the_house_rules_are_worded_in_traditional_chinese_from_the_catalogue(daemon_process, playwright_chromium):
    """A phone in English switched to 繁體中文: each house rule offered, and the one picked in the rules reference,
    reads in Traditional Chinese, with no English word but the name of the UNO Attack game."""
    en, hant = catalogue("en"), catalogue("zh-Hant")
    playwright, browser = playwright_chromium
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-new").tap()
    page.locator("#setup-more summary").tap()
    page.locator('input[name="ruleset"][value="classic"]').check()  # seven-zero: classic UNO's only
    seven_zero = page.locator("label", has=page.locator('input[name="house"][value="seven_zero"]'))
    expect(seven_zero.locator(".choice-title")).to_have_text(en["house.seven_zero"])
    page.locator("#lang").select_option("zh-Hant")
    expect(seven_zero.locator(".choice-title")).to_have_text(hant["house.seven_zero"])
    expect(seven_zero.locator(".choice-about")).to_have_text(hant["house.seven_zero_about"])
    seven_zero.locator("input").check()
    page.locator("#tab-rules").tap()
    picked = page.locator("#grules-house li")
    expect(picked).to_have_count(1)
    expect(picked.locator("strong")).to_have_text(f"✓ {hant['house.seven_zero']}")
    expect(picked.locator("span")).to_have_text(hant["house.seven_zero_about"])
    shown = plain((page.locator("#house-choices").text_content() or "") + (picked.text_content() or ""))
    assert "七零規則" in shown and "手機看不到手牌" in shown  # the Traditional texts as the native reader reviewed them
    assert set(re.findall(r"[A-Za-z]{2,}", shown)) <= {"UNO", "Attack"}  # ("n 張": a count, not a word)
    page.context.close()
