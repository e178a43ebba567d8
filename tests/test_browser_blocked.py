"""Issue #47's last corners, on the children's shared phone at 320×640 in English, 简体 and 繁體: its own line says
who holds the phone now and what to do, in at most two drawn lines with long names; while no press can fire (the
lid open, the board lost, the hopper empty, a FAULT) that line agrees with the grey button and says to wait and for
whom, and the table's line owed presses would contradict it is not shown; an empty hopper offers its refill on the
first screen, in words that point nowhere else; and during a FAULT the button stays whole on the first screen.

Real browser, the daemon in this process on simulated hardware (tests/family_table.py), so that a test can open the
lid, pull the board's cable and wear the roller out. Screenshots go to $UNO_SCREENSHOTS when it is set."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from playwright.sync_api import Page, expect

from launcher.daemon import Daemon
from tests import test_browser
from tests.conftest import joined_client
from tests.family_table import FAST, WORN, Family, Seat, confirm, family_daemon, hardware, roller_speed, screenshots
from tests.test_browser import WAIT_MS, fill, tap_still
from tests.test_browser_line_breaks import drawn, longest_name
from tests.test_browser_prompt import assert_whole_on_first_screen, drawn_lines

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

SMALL = (320, 640)
LANGS = ["en", "zh-Hans", "zh-Hant"]
# The two children sharing the phone, with long names: a compound surname and a given name in Chinese, long Latin
# names in English (the page takes up to 40 letters; the test below also tries the longest a line shows whole).
CHILDREN = {
    "en": ("Alexandra", "Maximilian"),
    "zh-Hans": ("欧阳小红", "司马阿明"),
    "zh-Hant": ("歐陽小紅", "司馬阿明"),
}
# The prompt's demands, said on a shared phone with the name of the child who holds it: every form, two digits.
DEMANDS = ("prompt.once", "prompt.times", "prompt.more", "prompt.more_one", "prompt.until_fire")
DEMANDS += ("prompt.cards", "prompt.cards_more", "prompt.card_one")
WAITS = ("mine.wait_fault", "mine.wait_lid", "mine.wait_board", "mine.wait_empty")
POINTING_ELSEWHERE = re.compile(r"below|above|下面|下方|上面|上方")


def shared_phone(f: Family, children: tuple[str, str]) -> Page:
    """The phone opened and joined, both children picked as sharing it, every step of "Who are you?" done."""
    f.open()
    page = f.page("kids")
    page.locator("#welcome-share").tap()
    for child in children:
        page.locator("#welcome-players button", has_text=child).tap()
    page.locator("#welcome-done").tap()
    expect(page.locator("#welcome")).to_be_hidden()
    return page


def post(client: FlaskClient, path: str, body: object) -> None:
    reply = client.post(path, json=body)
    assert reply.status_code in (200, 201), reply.get_json()


def at_most_two_lines(page: Page, where: str) -> None:
    lines = drawn_lines(page, "#prompt-me-text")
    assert len(lines) <= 2, f"{where}: {lines}"


def own_line(f: Family, key: str, where: str, **values: object) -> None:
    """The phone's own line says `key`'s words, in at most two lines, and the table's line is not shown beside it."""
    page = f.page("kids")
    expect(page.locator("#prompt-me-text")).to_have_text(f.seat("kids").say(key, **values), timeout=WAIT_MS)
    expect(page.locator("#prompt-row")).to_be_hidden()
    at_most_two_lines(page, where)


def blocked(f: Family, why: str, where: str) -> None:
    """The button is off and says `why`; the prompt's trouble and the button are whole on the first screen."""
    page, seat = f.page("kids"), f.seat("kids")
    expect(page.locator("#press")).to_be_disabled(timeout=WAIT_MS)
    expect(page.locator("#stage")).not_to_have_attribute("data-moment", re.compile("."), timeout=WAIT_MS)
    expect(page.locator("#press-caption")).to_have_text(seat.say(why))
    for part in ("#trouble", "#prompt-me", "#press"):
        assert_whole_on_first_screen(page, part)
    caption, button = page.locator("#press-caption").bounding_box(), page.locator("#press").bounding_box()
    assert caption is not None and button is not None
    assert button["y"] <= caption["y"] and caption["y"] + caption["height"] <= button["y"] + button["height"], where


def shoot(f: Family, step: str) -> None:
    f.page("kids").screenshot(path=f.folder / f"blocked-{f.seat('kids').lang}-{step}.png", animations="disabled")


def play_the_corners(f: Family, daemon: Daemon, children: tuple[str, str]) -> None:
    first, second = children
    seat, page = f.seat("kids"), shared_phone(f, children)
    admin = joined_client(daemon, admin=True)
    lang = seat.lang

    # Her turn: her name and what to do, with the button saying a tap is for when she cannot play.
    post(admin, "/api/attacks", {"kind": "turn", "player": first})
    own_line(f, "mine.shared_turn", f"{first}'s turn", player=first)
    expect(page.locator("#press-caption")).to_have_text(seat.say("button.cant_play"))
    shoot(f, "1-turn")
    # She plays a Hit 2: the phone is his now, and says so.
    post(admin, "/api/attacks", {"kind": "hit2", "by": first})
    own_line(f, "prompt.times", f"{second} owes two", player=second, n=2)
    shoot(f, "2-hit")

    # The lid open: wait until it is shut (the button says close it); the table's line of what he owes is not shown.
    hardware(daemon).set_lid(True)
    own_line(f, "mine.wait_lid", "lid open", player=second)
    blocked(f, "button.why_lid", "lid open")
    shoot(f, "3-lid")
    hardware(daemon).set_lid(False)
    own_line(f, "prompt.times", "lid shut", player=second, n=2)

    # The board lost: wait for it to come back (by itself).
    wire = hardware(daemon).wire
    wire.unplug()
    own_line(f, "mine.wait_board", "board lost", player=second)
    blocked(f, "button.why_board", "board lost")
    shoot(f, "4-board")
    wire.plug()
    expect(page.locator("#press")).to_be_enabled(timeout=3 * WAIT_MS)  # the link tries the port at its own pace

    # One fire's cards left: his press empties the hopper. The trouble at the top offers the refill there and then.
    post(admin, "/api/hopper", {"cards": 6})
    tap_still(page.locator("#press"))
    own_line(f, "mine.wait_empty", "hopper empty", player=second)
    blocked(f, "button.why_empty", "hopper empty")
    refill = page.locator("#trouble-refill")
    expect(refill).to_be_visible()
    expect(refill).to_have_text(seat.say("hopper.reload"))
    assert_whole_on_first_screen(page, "#trouble-refill")
    told = page.locator("#prompt").inner_text() + page.locator("#hopper-low").inner_text()
    assert not POINTING_ELSEWHERE.search(told), f"{lang}: the empty hopper's words point elsewhere: {told}"
    shoot(f, "5-empty")
    refill.tap()
    confirm(page)
    expect(page.locator("#trouble")).to_be_hidden(timeout=WAIT_MS)
    own_line(f, "prompt.more_one", "refilled", player=second)

    # A worn roller: the launcher's limit cuts his fire (the cards that came out served him), and it stops to be
    # safe. On her turn, wait for the admin, says her line, as the button does; the trouble, her line and the whole
    # button on the first screen.
    roller_speed(daemon, WORN)
    tap_still(page.locator("#press"))
    expect(page.locator("#trouble-what")).to_have_text(seat.say("trouble.fault"), timeout=WAIT_MS)
    post(admin, "/api/attacks", {"kind": "turn", "player": first})
    own_line(f, "mine.wait_fault", "FAULT", player=first)
    expect(page.locator("#trouble-reset")).to_be_hidden()  # the admin's to tap, not the table's
    blocked(f, "button.why_fault", "FAULT")
    shoot(f, "6-fault")
    roller_speed(daemon, FAST)
    f.close()


@pytest.mark.parametrize("lang", LANGS)
def test_a_shared_phone_agrees_with_its_button_and_offers_the_refill_at_the_top(tmp_path, playwright_chromium, lang):
    _, browser = playwright_chromium
    children = CHILDREN[lang]
    players = ["Dad", "Mum", *children]
    with family_daemon(tmp_path) as daemon:
        post(joined_client(daemon), "/api/games", {"players": players, "dealer": "Dad"})
        kids = Seat("kids", lang, SMALL, children)
        play_the_corners(
            Family(f"blocked-{lang}", daemon, browser, (kids,), screenshots(tmp_path), players), daemon, children
        )


def shared_texts(strings: dict[str, str], holder: str, other: str) -> list[str]:
    """Everything a shared phone's own line can say with `holder` holding it (`other` due before), two-digit counts."""
    texts = [
        fill(strings["mine.shared_turn"], player=holder),
        fill(strings["mine.shared_after"], player=holder, before=other),
    ]
    texts += [fill(strings[key], player=holder, n=12) for key in DEMANDS]
    texts += [fill(strings[key], player=holder) for key in WAITS]
    return texts


@pytest.mark.parametrize("lang", LANGS)
def test_every_line_a_shared_phone_says_fits_two_lines_at_320_with_long_names(tmp_path, playwright_chromium, lang):
    """Every text of the shared phone's own line, drawn in its place at 320 px, with the long names above and with the
    longest name a line there shows whole: never more than two lines."""
    _, browser = playwright_chromium
    children = CHILDREN[lang]
    with family_daemon(tmp_path) as daemon:
        post(joined_client(daemon), "/api/games", {"players": ["Dad", "Mum", *children], "dealer": "Dad"})
        f = Family(f"lines-{lang}", daemon, browser, (Seat("kids", lang, SMALL, children),), Path(tmp_path), [])
        page = shared_phone(f, children)
        post(joined_client(daemon), "/api/attacks", {"kind": "turn", "player": children[0]})
        expect(page.locator("#prompt-me")).to_be_visible(timeout=WAIT_MS)
        strings = f.seat("kids").strings
        longest = longest_name(page, "#prompt-me-text", children[0])
        too_long = []
        for holder in (*children, longest):
            texts = shared_texts(strings, holder, children[1])
            too_long += [" / ".join(lines) for lines in drawn(page, "#prompt-me-text", texts) if len(lines) > 2]
        assert too_long == [], "\n".join(too_long)
        f.close()
