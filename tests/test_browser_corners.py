"""Issue #47's smaller corners, each as the family at the table meets it: in a Wild All Hit the presses come in the
order of play, a suspense pause names who pressed, and the hopper's trouble is told before a press fails. In a real
browser against the real daemon on simulated hardware."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from launcher.config import load
from launcher.daemon import Daemon
from tests import test_browser
from tests.conftest import FAST_SIM_TOML, RunningDaemon, http_json, join, start_daemon, wait_until
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, tap_still
from tests.test_browser_jam import JAM_TOML
from tests.test_browser_prompt import assert_whole_on_first_screen, expect_trouble, phone, shoot

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

        tap_still(xiaohong.locator("#press"))
        expect(xiaohong.locator("#press-for")).to_be_visible(timeout=WAIT_MS)
        expect(xiaohong.locator("#press-for-text")).to_have_text(fill(hans["press_for.ask"], player="Mum"))
        xiaohong.locator("#press-for-no").tap()
        expect(xiaohong.locator("#press-for")).to_be_hidden()
        assert [d["player"] for d in table(running)["demands"]] == ["Mum", "小红", "阿明"]  # nothing pressed
        assert running.get("/api/state")["shuffle"]["presses"] == 0

        tap_still(mum.locator("#press"))
        expect(press_line(mum, 1)).to_have_text(fill(english["line.pressed"], who="Mum", what="…"), timeout=WAIT_MS)
        expect(press_line(xiaohong, 1)).to_have_text(fill(hans["line.pressed"], who="Mum", what="…"))
        nothing = fill(hans["line.pressed"], who="Mum", what=hans["line.nothing"])
        expect(press_line(xiaohong, 1)).to_have_text(nothing, timeout=WAIT_MS)

        # Now 小红 is due: her tap presses for her, with no question, and the pause names her on both phones.
        expect(xiaohong.locator("#prompt-me-symbol")).to_have_text("👉", timeout=WAIT_MS)
        tap_still(xiaohong.locator("#press"))
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


@contextmanager
def in_process(tmp_path: Path, toml: str) -> Iterator[Daemon]:
    """The daemon in this process, so that the test can jam the simulated roller and open and shut the lid."""
    path = tmp_path / "launcher.toml"
    path.write_text(toml, encoding="utf-8")
    config = load(path).replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=0)
    running = Daemon(config)
    serving = threading.Thread(target=running.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        yield running
    finally:
        running.close()
        serving.join(5)


def joined_phone(browser: Any, daemon: Daemon, lang: str, size: str) -> tuple[Page, str, str]:
    """A phone joined at the in-process daemon, just watching: (it, the daemon's address, a table session)."""
    url = str(daemon.urls[0]).rstrip("/")
    assert daemon.new_pins is not None
    page = phone(browser, lang, size)
    page.goto(f"{url}/#pin={daemon.new_pins.table}")
    expect(page.locator("#role")).to_be_visible(timeout=WAIT_MS)
    return page, url, join(url, daemon.new_pins.table)


def test_the_lid_opened_on_a_jam_keeps_the_card_to_take_out_and_shut_asks_whether_it_is_out(
    tmp_path, playwright_chromium
):
    """Issue #47: opening the lid to clear a jam dropped "take out the card", and shutting it cleared the jam either
    way. No sensor sees a card jammed before the exit beam (docs/HARDWARE.md), so the phone says what to do at each
    step, and only a press that brings no jam ends it."""
    _, browser = playwright_chromium
    english = catalogue("en")
    with in_process(tmp_path, FAST_SIM_TOML + FIRE_ALWAYS_TOML) as daemon:
        lid_journey(daemon, browser, english)


def lid_journey(daemon: Daemon, browser: Any, english: dict[str, str]) -> None:
    world = daemon.hardware.world  # type: ignore[attr-defined]
    page, url, cookie = joined_phone(browser, daemon, "en", "320")
    game = {"players": ["Ann", "Bob", "Cy"], "dealer": "Cy"}
    assert http_json(url + "/api/games", "POST", game, cookie=cookie)[0] == 201
    assert http_json(url + "/api/attacks", "POST", {"kind": "wild_hit_fire", "by": "Ann"}, cookie=cookie)[0] == 200
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


# Every press fires exactly 2 cards.
TWO_EACH_TOML = """
[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
card_weights = [0.0, 1.0]
jackpot_probability = 0.0
"""


@pytest.mark.parametrize(("lang", "size"), [("zh-Hans", "320"), ("en", "393")])
def test_a_hopper_too_low_for_a_press_is_flagged_under_the_button_before_a_press_fails(
    tmp_path, playwright_chromium, lang, size
):
    """Issue #47: 剩 0/1 was not flagged until a press failed. A fire of this profile takes 2 cards: with 1 left the
    phone says so under the button; with none left the button is off and says to refill first, and the trouble at
    the top says the hopper is empty, with its refill."""
    _, browser = playwright_chromium
    strings = catalogue(lang)
    running = start_daemon(tmp_path, FAST_SIM_TOML + TWO_EACH_TOML)
    try:
        page = phone(browser, lang, size)
        open_joined(page, running)
        assert running.post("/api/hopper", {"cards": 3})[0] == 200
        expect(page.locator("#hopper-text")).to_have_text(
            fill(strings["hopper.level"], remaining=3, loaded=3), timeout=WAIT_MS
        )
        expect(page.locator("#hopper-low")).to_be_hidden()

        tap_still(page.locator("#press"))  # 2 cards out, 1 left: less than a press may take
        low = page.locator("#hopper-low")
        expect(low).to_have_text(fill(strings["hopper.low_one"], needed=2), timeout=WAIT_MS)
        assert_whole_on_first_screen(page, "#hopper-low")
        expect(page.locator("#press")).to_be_enabled()  # it may still miss or bring the one card: not blocked

        assert running.post("/api/hopper", {"cards": 2})[0] == 200
        expect(low).to_be_hidden(timeout=WAIT_MS)
        tap_still(page.locator("#press"))  # the last 2 cards: nothing owed, no trouble, but the hopper is empty
        # Told at the top as trouble, with the refill at hand there (the hopper's own ↻ is far below).
        expect(page.locator("#trouble-what")).to_have_text(strings["trouble.empty"], timeout=WAIT_MS)
        expect(page.locator("#trouble-do")).to_have_text(strings["trouble.do_refill"])
        expect(low).to_be_hidden()
        expect(page.locator("#press")).to_be_disabled()
        expect(page.locator("#press-caption")).to_have_text(strings["button.why_empty"])
        assert_whole_on_first_screen(page, "#trouble-refill")
        assert running.get("/api/state")["trouble"] is None  # told before any press failed

        page.locator("#trouble-refill").tap()
        page.locator("#confirm-yes").tap()
        expect(page.locator("#trouble")).to_be_hidden(timeout=WAIT_MS)
        expect(page.locator("#press")).to_be_enabled()
        page.context.close()
    finally:
        running.close()


# Six cards a fire, slowly: the test stalls the roller after the second, and the watchdog cuts the motor at 1 s.
SLOW_SIX_TOML = """
[dispense]
min_rest_ms = 10
jam_ms = 5000
max_run_ms = 1000
hopper_cards = 500

[sim]
cards_per_second = 20.0
card_block_ms = 2.0

[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
card_weights = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
jackpot_probability = 0.0
"""


@pytest.mark.parametrize("lang", ["en", "zh-Hant"])
def test_a_fault_mid_fire_says_how_many_cards_came_out(tmp_path, playwright_chromium, lang):
    """Issue #47: a FAULT in the middle of Ann's fire of 6 (her turn: she cannot play) hid how many had come out
    ("the launcher stopped"). The press's line says the cards out, then that it stopped; the banner says why."""
    _, browser = playwright_chromium
    strings = catalogue(lang)
    with in_process(tmp_path, SLOW_SIX_TOML) as daemon:
        world = daemon.hardware.world  # type: ignore[attr-defined]
        page, url, cookie = joined_phone(browser, daemon, lang, "393")
        game = {"players": ["Ann", "Bob", "Cy"], "dealer": "Cy"}
        assert http_json(url + "/api/games", "POST", game, cookie=cookie)[0] == 201
        page.locator("#welcome-watch").tap()
        pressing = threading.Thread(target=lambda: http_json(url + "/api/press", "POST", {}, cookie=cookie))
        pressing.start()
        wait_until(lambda: world.cards_out >= 2)
        world.jam()  # the roller stalls with 4 still to come: the watchdog stops the motor, FAULT
        pressing.join(10)
        expect(page.locator("#fault")).to_be_visible(timeout=WAIT_MS)
        out = world.cards_out
        assert 2 <= out < 6
        what = fill(strings["line.stopped_after"], what=fill(strings["line.cards"], n=out))
        expect(press_line(page, 1)).to_have_text(fill(strings["line.pressed"], who="Ann", what=what))
        expect(page.locator('#feed-lines li[data-type="press"] .feed-symbol').first).to_have_text("⚠")
        page.context.close()


FOLDED = """() => [...document.querySelectorAll("details")]
  .filter((d) => d.getClientRects().length)
  .map((d) => {
    const summary = d.querySelector(":scope > summary");
    const box = d.getBoundingClientRect();
    let next = d.nextElementSibling;
    while (next && !next.getClientRects().length) next = next.nextElementSibling;
    return {
      id: d.id || d.className,
      open: d.open,
      marker: getComputedStyle(summary, "::before").content,
      extra: box.height - summary.getBoundingClientRect().height,
      below: next ? next.getBoundingClientRect().top - box.bottom : 0,
    };
  })"""


def test_every_folded_section_shows_its_marker_and_leaves_no_gap(tmp_path, playwright_chromium):
    """Issue #47: folded sections showed no ▶ and left 50–60 px gaps. At 320×640 in 简体, every section that folds
    shows ▶ while folded and ▼ once open, and a folded one is its summary line, close to what follows."""
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML)
    try:
        assert running.post("/api/games", {"players": FAMILY, "dealer": "Dad"})[0] == 201
        page = phone(browser, "zh-Hans", "320")
        seated(page, running, "小红")
        expect(page.locator("#quick")).to_be_visible(timeout=WAIT_MS)
        folded = page.evaluate(FOLDED)
        ids = {d["id"] for d in folded}
        assert {"quick", "feed-all", "fairness", "rules", "access"} <= ids, ids
        for section in folded:
            assert section["marker"] == ('"▼"' if section["open"] else '"▶"'), section
            if not section["open"]:
                assert section["extra"] <= 8 and section["below"] <= 24, section
        page.locator("#rules > summary").tap()
        expect(page.locator("#rules")).to_have_attribute("open", "")
        marker = page.locator("#rules > summary").evaluate("(s) => getComputedStyle(s, '::before').content")
        assert marker == '"▼"'
        page.context.close()
    finally:
        running.close()


def test_a_phone_not_yet_joined_sees_the_whole_button_during_a_jam(tmp_path, playwright_chromium):
    """Issue #47: at 320×640 a phone that had not joined saw the button cut during a jam (its bottom at 699 of
    647 px): the trouble, the prompt and the button are all on its first screen."""
    _, browser = playwright_chromium
    running = start_daemon(tmp_path, JAM_TOML)
    try:
        assert running.post("/api/games", {"players": FAMILY, "dealer": "Dad"})[0] == 201
        assert running.post("/api/attacks", {"kind": "wild_hit_fire", "by": "Mum"})[0] == 200
        assert running.post("/api/press", {})[0] == 200  # jams: no card came out
        for lang in ("zh-Hans", "en", "zh-Hant"):
            page = phone(browser, lang, "320")
            page.goto(running.url + "/")
            expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
            expect(page.locator("#join")).to_be_visible(timeout=WAIT_MS)
            expect(page.locator("#trouble")).to_be_visible(timeout=WAIT_MS)
            expect(page.locator("#press-caption")).to_have_text(catalogue(lang)["button.join_first"])
            shoot(page, f"not-joined-jam-320-{lang}")
            for selector in ("#trouble", "#press"):
                assert_whole_on_first_screen(page, selector)
            page.context.close()
    finally:
        running.close()
