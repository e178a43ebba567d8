"""Issue #47's smaller corners, each as the family at the table meets it: in a Wild All Hit the presses come in the
order of play, a suspense pause names who pressed, and the hopper's trouble is told before a press fails. In a real
browser against the real daemon on simulated hardware."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from launcher.config import load
from launcher.daemon import Daemon
from tests import test_browser
from tests.conftest import FAST_SIM_TOML, RunningDaemon, http_json, join, start_daemon
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined
from tests.test_browser_prompt import expect_trouble, phone

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

# Clockwise from the dealer's left; with 阿明 dealing, Dad plays first.
FAMILY = ["Mum", "小红", "阿明", "Dad"]

# Every press waits 3 s in suspense, then misses: long enough to read the line while it waits.
SUSPENSE_MISS_TOML = """
[schedule]
profile = "custom"

[schedule.custom]
hazard = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
pause_probability = 1.0
pause_ms = [3000, 3000]
"""


# Every press fires.
FIRE_ALWAYS_TOML = """
[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
"""


def table(running: RunningDaemon) -> dict[str, Any]:
    result: dict[str, Any] = running.get("/api/game")["game"]["table"]
    return result


def seated(page: Page, running: RunningDaemon, player: str) -> None:
    open_joined(page, running)
    page.locator("#welcome-players button", has_text=player).tap()
    expect(page.locator("#welcome")).to_be_hidden(timeout=WAIT_MS)


def press_line(page: Page, press: int):
    return page.locator(f'#feed-lines li[data-type="press"][data-press="{press}"] .feed-text')


def test_in_a_wild_all_hit_a_tap_waits_for_whoever_is_due_and_a_pause_names_who_pressed(tmp_path, playwright_chromium):
    """Dad plays a Wild All Hit: Mum, 小红 and 阿明 press once each, from Dad's left (RULES.md: starting with the next
    in the direction of play). 小红's tap while Mum is due does not press ahead of her: her phone asks whether to
    press for Mum. Once it is 小红's go her tap presses at once, and every phone names her during the suspense pause,
    not "一部手机"."""
    _, browser = playwright_chromium
    hans, english = catalogue("zh-Hans"), catalogue("en")
    running = start_daemon(tmp_path, FAST_SIM_TOML + SUSPENSE_MISS_TOML)
    try:
        assert running.post("/api/games", {"players": FAMILY, "dealer": "阿明"})[0] == 201
        xiaohong, mum = phone(browser, "zh-Hans", "320"), phone(browser, "en", "393")
        seated(xiaohong, running, "小红")
        seated(mum, running, "Mum")
        assert running.post("/api/attacks", {"kind": "wild_all_hit", "by": "Dad"})[0] == 200
        expect(xiaohong.locator("#prompt-me-text")).to_have_text(
            fill(hans["mine.after"], player="Mum"), timeout=WAIT_MS
        )

        xiaohong.locator("#press").tap()
        expect(xiaohong.locator("#press-for")).to_be_visible(timeout=WAIT_MS)
        expect(xiaohong.locator("#press-for-text")).to_have_text(fill(hans["press_for.ask"], player="Mum"))
        xiaohong.locator("#press-for-no").tap()
        expect(xiaohong.locator("#press-for")).to_be_hidden()
        assert [d["player"] for d in table(running)["demands"]] == ["Mum", "小红", "阿明"]  # nothing pressed
        assert running.get("/api/state")["shuffle"]["presses"] == 0

        mum.locator("#press").tap()
        expect(press_line(mum, 1)).to_have_text(fill(english["line.pressed"], who="Mum", what="…"), timeout=WAIT_MS)
        expect(press_line(xiaohong, 1)).to_have_text(fill(hans["line.pressed"], who="Mum", what="…"))
        nothing = fill(hans["line.pressed"], who="Mum", what=hans["line.nothing"])
        expect(press_line(xiaohong, 1)).to_have_text(nothing, timeout=WAIT_MS)

        # Now 小红 is due: her tap presses for her, with no question, and the pause names her on both phones.
        expect(xiaohong.locator("#prompt-me-symbol")).to_have_text("👉", timeout=WAIT_MS)
        xiaohong.locator("#press").tap()
        expect(press_line(xiaohong, 2)).to_have_text(fill(hans["line.pressed"], who="小红", what="…"), timeout=WAIT_MS)
        expect(press_line(mum, 2)).to_have_text(fill(english["line.pressed"], who="小红", what="…"))
        expect(xiaohong.locator("#press-for")).to_be_hidden()
        expect(press_line(mum, 2)).to_have_text(
            fill(english["line.pressed"], who="小红", what=english["line.nothing"]), timeout=WAIT_MS
        )
        assert [d["player"] for d in table(running)["demands"]] == ["阿明"]
        for page in (xiaohong, mum):
            page.context.close()
    finally:
        running.close()


@pytest.fixture
def in_process(tmp_path: Path) -> Iterator[Daemon]:
    """The daemon in this process, so that the test can jam the simulated roller and open and shut the lid."""
    # Every press fires: a jammed roller brings out nothing, at once.
    path = tmp_path / "launcher.toml"
    path.write_text(FAST_SIM_TOML + FIRE_ALWAYS_TOML, encoding="utf-8")
    config = load(path).replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=0)
    running = Daemon(config)
    serving = threading.Thread(target=running.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        yield running
    finally:
        running.close()
        serving.join(5)


def test_the_lid_opened_on_a_jam_keeps_the_card_to_take_out_and_shut_asks_whether_it_is_out(
    in_process, playwright_chromium
):
    """Issue #47: opening the lid to clear a jam dropped "take out the card", and shutting it cleared the jam either
    way. No sensor sees a card jammed before the exit beam (docs/HARDWARE.md), so the phone says what to do at each
    step, and only a press that brings no jam ends it."""
    _, browser = playwright_chromium
    english = catalogue("en")
    url = str(in_process.urls[0]).rstrip("/")
    assert in_process.new_pins is not None
    world = in_process.hardware.world  # type: ignore[attr-defined]
    cookie = join(url, in_process.new_pins.table)
    assert (
        http_json(url + "/api/games", "POST", {"players": ["Ann", "Bob", "Cy"], "dealer": "Cy"}, cookie=cookie)[0]
        == 201
    )
    assert http_json(url + "/api/attacks", "POST", {"kind": "wild_hit_fire", "by": "Ann"}, cookie=cookie)[0] == 200
    page = phone(browser, "en", "320")
    page.goto(f"{url}/#pin={in_process.new_pins.table}")
    expect(page.locator("#role")).to_be_visible(timeout=WAIT_MS)
    page.locator("#welcome-watch").tap()

    world.jam()
    assert http_json(url + "/api/press", "POST", {}, cookie=cookie)[0] == 200
    bob_again = fill(english["trouble.then_again"], player="Bob")
    expect_trouble(page, fill(english["trouble.jam_player"], player="Bob"), english["trouble.do_jam"], bob_again)

    world.open_lid()
    expect_trouble(page, english["trouble.lid_open"], english["trouble.do_lid_jam"], bob_again)
    expect(page.locator("#press-caption")).to_have_text(english["button.why_lid"])

    world.close_lid()  # the card may still be in: the phone asks, the jam is not forgotten
    expect_trouble(page, fill(english["trouble.jam_player"], player="Bob"), english["trouble.do_card_out"], bob_again)
    expect(page.locator("#press-caption")).to_have_text(english["button.after_jam"])

    world.jam(False)  # it was out: Bob's next press fires, and the jam is over
    assert http_json(url + "/api/press", "POST", {}, cookie=cookie)[0] == 200
    expect(page.locator("#trouble")).to_be_hidden(timeout=WAIT_MS)
    page.context.close()
