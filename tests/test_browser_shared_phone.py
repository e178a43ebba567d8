"""Issue #47: a family of four at three phones. 小红 and 阿明 share a 简体 phone at 320×640, Mum has an English one
and Dad a 繁體 one at 393×851. A shared phone acts for whichever of its players the table asks, with no extra
question; the forgotten-UNO penalty and Undo are one tap under the prompt and a confirmation, on every phone; and
after starting a game or saving a round the page lands where the next thing to do is. In a real browser against the
real daemon on simulated hardware."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.conftest import FAST_SIM_TOML, RunningDaemon, start_daemon
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined
from tests.test_browser_prompt import assert_whole_on_first_screen, phone, shoot

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

# Clockwise from the dealer's left; with Dad dealing, Mum plays first.
FAMILY = ["Mum", "小红", "阿明", "Dad"]


def table(running: RunningDaemon) -> dict[str, Any]:
    result: dict[str, Any] = running.get("/api/game")["game"]["table"]
    return result


def declare(running: RunningDaemon, **body: object) -> None:
    status, answer = running.post("/api/attacks", body)
    assert status == 200, answer


def confirm(page: Page) -> None:
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.locator("#confirm-yes").tap()
    expect(page.locator("#confirm-dialog")).to_be_hidden()


def assert_right_under_the_button(page: Page, selector: str) -> None:
    """At the top of the page, the control is the next thing under the launcher's button (what is owed between)."""
    page.evaluate("window.scrollTo(0, 0)")
    button, control = page.locator("#press").bounding_box(), page.locator(selector).bounding_box()
    assert button is not None and control is not None
    gap = control["y"] - (button["y"] + button["height"])
    print(f"{selector}: top at {control['y']:.0f} px, {gap:.0f} px under the button")
    assert 0 <= gap <= 80, (button, control)


def test_a_phone_two_children_share_acts_for_whichever_of_them_the_table_asks(tmp_path, playwright_chromium):
    _, browser = playwright_chromium
    hans = catalogue("zh-Hans")
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        assert running.post("/api/games", {"players": FAMILY, "dealer": "Dad"})[0] == 201
        page = phone(browser, "zh-Hans", "320")
        errors: list[str] = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.on("pageerror", lambda e: errors.append(str(e)))
        open_joined(page, running)
        # "Who are you?": both children, on one phone.
        page.locator("#welcome-share").tap()
        page.locator("#welcome-players button", has_text="小红").tap()
        page.locator("#welcome-players button", has_text="阿明").tap()
        expect(page.locator('#welcome-players button[aria-pressed="true"]')).to_have_text(["小红", "阿明"])
        page.locator("#welcome-done").tap()
        expect(page.locator("#welcome")).to_be_hidden()
        assert page.evaluate("window.scrollY") == 0

        # Mum's turn: out of turn is offered for either child, never for Mum.
        expect(page.locator("#prompt-text")).to_have_text(fill(hans["prompt.turn"], player="Mum"), timeout=WAIT_MS)
        expect(page.locator("#prompt-me")).to_be_hidden()
        expect(page.locator("#quick")).not_to_have_attribute("open", "")
        page.locator("#quick-title").tap()
        expect(page.locator("#quick-who label")).to_have_text(["小红", "阿明"])

        # 阿明's turn: the phone says so, and his card is recorded as his, on his turn: the Wild Hit-Fire hits Dad.
        declare(running, kind="turn", player="阿明")
        mine = fill(hans["mine.shared_turn"], player="阿明")
        expect(page.locator("#prompt-me-text")).to_have_text(mine, timeout=WAIT_MS)
        expect(page.locator("#quick")).to_have_attribute("open", "")
        expect(page.locator("#quick-who")).to_be_hidden()
        assert_whole_on_first_screen(page, "#prompt")
        shoot(page, "shared-1-amin-s-turn")
        page.locator('#quick-cards .decl[data-kind="wild_hit_fire"]').tap()
        expect(page.locator("#prompt-text")).to_have_text(
            fill(hans["prompt.until_fire"], player="Dad"), timeout=WAIT_MS
        )
        now = table(running)
        assert now["pending"]["player"] == "Dad" and now["pending"]["cause"] == "wild_hit_fire"

        # Undo from the top: one tap and "yes"; 阿明's turn again, nothing owed.
        assert_right_under_the_button(page, "#fix-undo")
        page.locator("#fix-undo").tap()
        expect(page.locator("#confirm-question")).to_have_text(hans["fix.undo_question"])
        confirm(page)
        expect(page.locator("#prompt-me-text")).to_have_text(mine, timeout=WAIT_MS)
        now = table(running)
        assert now["pending"] is None and now["current"] == "阿明"

        # He plays another card from the top: Dad's turn.
        page.locator('#quick-cards .decl[data-kind="played"]').tap()
        expect(page.locator("#prompt-text")).to_have_text(fill(hans["prompt.turn"], player="Dad"), timeout=WAIT_MS)
        assert table(running)["current"] == "Dad"

        # The forgotten UNO from the top: the one who played last is offered (阿明). Picking 小红, who did not just
        # play, is refused in words, and nothing is owed; 阿明, the one offered, takes the penalty.
        page.locator("#fix-penalty").tap()
        question = page.locator("#confirm-question")
        expect(question.locator("select")).to_have_value("阿明")
        question.locator("select").select_option("小红")
        confirm(page)
        expect(page.locator("#toast")).to_have_text(fill(hans["refused.uno_too_late"], player="小红"), timeout=WAIT_MS)
        assert table(running)["demands"] == []
        page.locator("#fix-penalty").tap()
        expect(question.locator("select")).to_have_value("阿明")
        confirm(page)
        mine = fill(hans["prompt.times"], player="阿明", n=2)
        expect(page.locator("#prompt-me-text")).to_have_text(mine, timeout=WAIT_MS)
        owed = table(running)["pending"]
        assert owed["player"] == "阿明" and owed["presses"] == 2 and owed["cause"] == "uno_penalty"
        shoot(page, "shared-2-amin-owes")
        # His press from the phone he shares (Dad's turn) counts for him at once: no "press for 阿明?".
        page.locator("#press").tap()
        expect(page.locator("#prompt-me-text")).to_have_text(
            fill(hans["prompt.more_one"], player="阿明"), timeout=WAIT_MS
        )
        expect(page.locator("#press-for")).to_be_hidden()
        owed = table(running)["pending"]
        assert owed["player"] == "阿明" and owed["presses"] == 1
        page.context.close()
    finally:
        running.close()


@pytest.mark.parametrize(("lang", "me"), [("en", "Mum"), ("zh-Hant", "Dad")])
def test_after_each_step_the_page_lands_on_the_next_one_and_mistakes_are_put_right_from_the_top(
    tmp_path, playwright_chromium, lang, me
):
    _, browser = playwright_chromium
    strings = catalogue(lang)
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        page = phone(browser, lang, "393")
        open_joined(page, running)
        page.locator("#welcome-start").tap()
        while page.locator("#seats input").count() < len(FAMILY):
            page.get_by_role("button", name=strings["setup.add"], exact=True).tap()
        for seat, name in zip(page.locator("#seats input").all(), FAMILY, strict=True):
            seat.fill(name)
        page.locator("#setup-start").tap()
        # "Who are you?" is where the page lands, its first name ready to tap (not the tabs 1,132 px down).
        expect(page.locator("#welcome-title")).to_have_text(strings["welcome.who"], timeout=WAIT_MS)
        expect(page.locator("#welcome-title")).to_be_in_viewport()
        expect(page.locator("#welcome-players button").first).to_be_focused()
        page.locator("#welcome-players button", has_text=me).tap()
        expect(page.locator("#welcome")).to_be_hidden()
        assert page.evaluate("window.scrollY") == 0

        # 小红 plays a card; then nobody caught her forgetting UNO, until this phone does, from the top.
        declare(running, kind="turn", player="小红")
        declare(running, kind="played", by="小红")
        expect(page.locator("#prompt-text")).to_have_text(fill(strings["prompt.turn"], player="阿明"), timeout=WAIT_MS)
        assert_right_under_the_button(page, "#fix-penalty")
        page.locator("#fix-penalty").tap()
        expect(page.locator("#confirm-question select")).to_have_value("小红")
        confirm(page)
        expect(page.locator("#prompt-text")).to_have_text(
            fill(strings["prompt.times"], player="小红", n=2), timeout=WAIT_MS
        )
        assert table(running)["pending"]["cause"] == "uno_penalty"
        # A wrong call is taken back the same way: nothing owed, 阿明's turn again.
        page.locator("#fix-undo").tap()
        confirm(page)
        expect(page.locator("#prompt-text")).to_have_text(fill(strings["prompt.turn"], player="阿明"), timeout=WAIT_MS)
        assert table(running)["demands"] == []

        # A round saved: the page shows it, with Take back under it, focused (not the leaderboard below).
        page.locator("#tab-round").tap()
        page.locator("#winner").select_option(me)
        for name in FAMILY:
            if name != me:
                hand = page.locator("#hands .hand").filter(has_text=name)
                hand.locator("summary").tap()
                hand.locator('.cell[data-kind="7"] .card-add').tap()
        page.locator("#entry-save").tap()
        expect(page.locator("#undo")).to_be_focused(timeout=WAIT_MS)
        expect(page.locator("#undo")).to_be_in_viewport()
        expect(page.locator("#rounds li")).to_have_count(1)
        expect(page.locator("#rounds li")).to_be_in_viewport()
        page.context.close()
    finally:
        running.close()
