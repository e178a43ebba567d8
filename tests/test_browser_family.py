"""Issue #47's Done-when: the family's whole journey. Mum (English, 393×851), 小红 and 阿明 sharing one 简体 phone
(320×640), Dad (繁體, 393×851, with the admin PIN) and a 1280×720 /table screen play a game with every kind of
trouble: shared-phone turns, the TV's staged press, a jam cleared with the lid, an empty hopper, a FAULT mid-fire,
the board lost and back, the forgotten-UNO penalty and Undo from the top. Then the same journey in each language at
the three sizes (Mum 393×851, the children 320×640, Dad at 1280×720, the TV). Every step, every screen is checked as
its person sees it (tests/family_table.py) and saved. With UNO_LONG=1, each language again with the sizes turned
round (the shared phone at 393 and at 1280, Mum at 320…).

Real browser, real daemon on simulated hardware, in this process so that the test can act on the hardware."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests import test_browser
from tests.family_table import (
    CARDS_A_FIRE,
    FAST,
    HOPPER,
    RECORD_MOMENTS,
    WORN,
    Family,
    Seat,
    confirm,
    family_daemon,
    hardware,
    press,
    roller_speed,
    screenshots,
)
from tests.test_browser import WAIT_MS, tap_still

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

SEATING = ["Dad", "Mum", "小红", "阿明"]  # Dad deals: Mum plays first, then 小红, 阿明 and Dad
KIDS = ("小红", "阿明")
SMALL, PHONE, TV = (320, 640), (393, 851), (1280, 720)

THE_FAMILY = (
    Seat("mum", "en", PHONE, ("Mum",)),
    Seat("kids", "zh-Hans", SMALL, KIDS),
    Seat("dad", "zh-Hant", PHONE, ("Dad",), admin=True),
    Seat("tv", "zh-Hans", TV),
)


def one_language(lang: str, sizes: tuple[tuple[int, int], ...] = (PHONE, SMALL, TV)) -> tuple[Seat, ...]:
    """The family with every screen in `lang`: Mum's, the children's and Dad's phones at `sizes`, and the TV."""
    mum, kids, dad = sizes
    return (
        Seat("mum", lang, mum, ("Mum",)),
        Seat("kids", lang, kids, KIDS),
        Seat("dad", lang, dad, ("Dad",), admin=True),
        Seat("tv", lang, TV),
    )


# On a phone several players share, its own line names the one holding it in place of "you".
SHARED = {"mine.play": ("mine.shared_turn", {}), "mine.twice": ("prompt.times", {"n": 2})}


def mine(f: Family, name: str, key: str, player: str) -> None:
    """The phone `name` says the prompt is for one of its own: on a shared phone, which of them."""
    seat, page = f.seat(name), f.page(name)
    words = seat.say(key)
    if len(seat.players) > 1:
        shared, values = SHARED[key]
        words = seat.say(shared, player=player, **values)
    expect(page.locator("#prompt-me-text")).to_have_text(words, timeout=WAIT_MS)


def not_mine(f: Family, *names: str) -> None:
    for name in names:
        expect(f.page(name).locator("#prompt-me")).to_be_hidden(timeout=WAIT_MS)


def start_and_say_who(f: Family) -> None:
    """Mum starts the game on her phone; every phone lands on "Who are you?" and each says who holds it."""
    mum = f.page("mum")
    mum.locator("#welcome-start").tap()
    while mum.locator("#seats input").count() < len(SEATING):
        mum.locator("#seat-add").tap()
    for seat, name in zip(mum.locator("#seats input").all(), SEATING, strict=True):
        seat.fill(name)
    mum.locator("#setup-start").tap()
    for seat, page in f.phones():
        expect(page.locator("#welcome-title")).to_have_text(seat.say("welcome.who"), timeout=WAIT_MS)
    # Mum's page lands on the names from the new game's form; the others show them under the prompt and the button.
    f.shoot("01-who-are-you", "mum", landed=("#welcome-title", "#welcome-players"))
    f.shoot("01-who-are-you", "kids", "dad", "tv")
    for seat, page in f.phones():
        if len(seat.players) > 1:
            page.locator("#welcome-share").tap()
        for player in seat.players:
            page.locator("#welcome-players button", has_text=player).tap()
        if len(seat.players) > 1:
            page.locator("#welcome-done").tap()
        expect(page.locator("#welcome")).to_be_hidden()


def the_tvs_moment(f: Family) -> None:
    """Mum cannot play and presses: the TV stages the wait and the six cards bigger than her phone does."""
    f.told("prompt.turn", player="Mum")
    mine(f, "mum", "mine.play", "Mum")
    not_mine(f, "kids", "dad")
    f.shoot("02-mums-turn")
    tv, said = f.page("tv"), f.seat("tv").say
    tv.evaluate(RECORD_MOMENTS)
    tap_still(f.page("mum").locator("#press"))
    expect(tv.locator("#stage")).to_have_attribute("data-moment", re.compile("."), timeout=WAIT_MS)
    f.shoot("03-the-moment", "tv")
    six = said("stage.cards", n=CARDS_A_FIRE)
    tv.wait_for_function("(six) => moments.some((m) => m[2] === six)", arg=six, timeout=WAIT_MS)
    moments = tv.evaluate("moments")
    assert ["running", said("tv.pressing", player="Mum")] in [m[:2] for m in moments], moments
    assert ["outcome", six] in [[m[0], m[2]] for m in moments], moments
    f.told("prompt.turn", player="小红")
    # Then the caption says what came out, for a while after the moment.
    tv.wait_for_function("(said) => moments.some((m) => m[1] === said)", arg=said("line.cards", n=CARDS_A_FIRE))


def a_shared_phone_and_a_jam(f: Family) -> None:
    """小红 plays a Hit 2 from the top of the phone she shares; 阿明's press jams; the lid is opened, the card taken
    out, the lid closed; 阿明 presses twice on the same phone, with no "press for 阿明?"."""
    kids = f.page("kids")
    mine(f, "kids", "mine.play", "小红")
    not_mine(f, "mum", "dad")
    f.shoot("05-xiaohongs-turn")
    kids.locator("#quick-cards").get_by_role("button", name=f.seat("kids").say("kind.hit_2"), exact=True).tap()
    f.told("prompt.times", player="阿明", n=2)
    mine(f, "kids", "mine.twice", "阿明")
    f.shoot("06-amin-presses-twice")

    world = hardware(f.daemon).world
    world.jam()
    tap_still(kids.locator("#press"))
    f.trouble("trouble.jam_player", "trouble.do_jam", player="阿明")
    for seat, page in f.phones():
        line = seat.say("line.pressed", who="阿明", what=seat.say("line.jammed"))
        expect(page.locator("#feed-lines li").first).to_contain_text(line, timeout=WAIT_MS)
    f.shoot("07-jam")
    hardware(f.daemon).set_lid(True)  # the card to take out stays told while the lid is open
    f.trouble("trouble.lid_open", "trouble.do_lid_jam")
    for seat, page in f.phones():
        expect(page.locator("#press-caption")).to_have_text(seat.say("button.why_lid"), timeout=WAIT_MS)
    f.shoot("08-lid-open")
    world.jam(False)
    hardware(f.daemon).set_lid(False)  # shut: nothing sees whether the card is out, so every phone asks
    f.trouble("trouble.jam_player", "trouble.do_card_out", player="阿明")
    f.told("prompt.times", player="阿明", n=2)  # the jammed press cost him nothing
    f.shoot("09-lid-shut")
    press(kids)  # it was out: his press fires, and the jam is over
    f.no_trouble()
    f.told("prompt.more_one", player="阿明")
    press(kids)
    expect(kids.locator("#press-for")).to_be_hidden()
    f.told("prompt.turn", player="Dad")


def an_empty_hopper(f: Family) -> None:
    """The three fires emptied the hopper: before anyone presses, every screen says so and every button is off; Dad
    refills from the top of his phone, and presses."""
    dad = f.page("dad")
    for seat, page in f.phones():
        expect(page.locator("#hopper-text")).to_have_text(seat.say("hopper.level", remaining=0, loaded=HOPPER))
        expect(page.locator("#press")).to_be_disabled()
        expect(page.locator("#press-caption")).to_have_text(seat.say("button.why_empty"), timeout=WAIT_MS)
        # Told at the top, with the refill at hand there (the hopper's own ↻ is far below on a small phone).
        expect(page.locator("#trouble-what")).to_have_text(seat.say("trouble.empty"))
        expect(page.locator("#trouble-refill")).to_be_visible()
    # The TV too, before anyone presses, and its disc is off: the refill is tapped on a phone.
    tv, said = f.page("tv"), f.seat("tv").say
    expect(tv.locator("#tv-trouble-what")).to_have_text(said("trouble.empty"), timeout=WAIT_MS)
    expect(tv.locator("#tv-trouble-do")).to_have_text(said("trouble.do_refill_phone"))
    expect(tv.locator("#stage")).to_have_attribute("data-blocked", "")
    f.shoot("10-empty")
    dad.locator("#trouble-refill").tap()
    confirm(dad)
    f.no_trouble()
    f.told("prompt.turn", player="Dad")
    f.shoot("11-refilled")
    press(dad)
    f.told("prompt.turn", player="Mum")


def a_fault_mid_fire(f: Family) -> None:
    """A worn roller: Mum's six cards come so slowly that the launcher's limit cuts the fire after a few. Every
    screen says it stopped to be safe; Dad, the admin, resets it from his phone."""
    roller_speed(f.daemon, WORN)
    tap_still(f.page("mum").locator("#press"))
    for seat, page in f.screens():
        if seat.tv:
            what = seat.say("trouble.fault_cause", reason=seat.say("fault.cause_motor"))
            expect(page.locator("#tv-trouble-what")).to_have_text(what, timeout=WAIT_MS)
            # The disc is off as every phone's button is: grey, and saying why in words (not red and blank).
            expect(page.locator("#tv-outcome")).to_have_text(seat.say("button.why_fault"), timeout=WAIT_MS)
            assert "grayscale" in page.locator(".tv-uno").evaluate("(e) => getComputedStyle(e).filter")
        else:
            expect(page.locator("#trouble-what")).to_have_text(seat.say("trouble.fault"), timeout=WAIT_MS)
            expect(page.locator("#press")).to_be_disabled()
            expect(page.locator("#press-caption")).to_have_text(seat.say("button.why_fault"))
            expect(page.locator("#fault-reset")).to_be_visible(visible=seat.admin)
            # The admin's Reset is at the top too, where the fault is told (the banner's is below the first screen).
            expect(page.locator("#trouble-reset")).to_be_visible(visible=seat.admin)
    # 小红 is next: the children's phone tells her to wait for the admin, as its button does.
    expect(f.page("kids").locator("#prompt-me-text")).to_have_text(
        f.seat("kids").say("mine.wait_fault", player="小红"), timeout=WAIT_MS
    )
    f.shoot("12-fault")
    roller_speed(f.daemon, FAST)
    f.page("dad").locator("#trouble-reset").tap()
    f.no_trouble()
    f.told("prompt.turn", player="小红")  # cards came out: Mum's press was hers
    f.shoot("13-fault-reset")


def the_board_lost_and_back(f: Family) -> None:
    """The board's cable comes out: one instruction on every screen (it comes back by itself), no Reset asked;
    plugged in again, the table plays on without anyone tapping anything."""
    wire = hardware(f.daemon).wire
    wire.unplug()
    f.trouble("trouble.board_lost", "trouble.do_board")
    for seat, page in f.phones():
        expect(page.locator("#fault")).to_be_hidden()
        expect(page.locator("#press")).to_be_disabled()
        expect(page.locator("#press-caption")).to_have_text(seat.say("button.why_board"))
    f.shoot("14-board-lost")
    wire.plug()
    f.no_trouble(timeout=3 * WAIT_MS)  # the link tries the port again at its own pace (4 s on a calm machine)
    for _, page in f.phones():
        expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    f.told("prompt.turn", player="小红")


def penalty_and_undo_from_the_top(f: Family) -> None:
    """小红 plays a card from the top; Mum catches her forgetting UNO from the top of her phone; Dad takes it back
    from his; 阿明, who cannot play, presses on the shared phone for himself."""
    kids = f.page("kids")
    kids.locator('#quick-cards .decl[data-kind="played"]').tap()
    f.told("prompt.turn", player="阿明")
    mum = f.page("mum")
    mum.locator("#fix-penalty").tap()
    expect(mum.locator("#confirm-question select")).to_have_value("小红")
    f.shoot("15-who-forgot-uno", "mum")
    confirm(mum)
    f.told("prompt.times", player="小红", n=2)
    mine(f, "kids", "mine.twice", "小红")
    f.shoot("16-penalty")
    dad = f.page("dad")
    dad.locator("#fix-undo").tap()
    expect(dad.locator("#confirm-question")).to_have_text(f.seat("dad").say("fix.undo_question"))
    confirm(dad)
    f.told("prompt.turn", player="阿明")
    mine(f, "kids", "mine.play", "阿明")
    f.shoot("17-undone")
    press(kids)
    expect(kids.locator("#press-for")).to_be_hidden()
    f.told("prompt.turn", player="Dad")
    f.shoot("18-dads-turn")


def the_journey(f: Family) -> None:
    f.open()
    start_and_say_who(f)
    the_tvs_moment(f)
    a_shared_phone_and_a_jam(f)
    an_empty_hopper(f)
    a_fault_mid_fire(f)
    the_board_lost_and_back(f)
    penalty_and_undo_from_the_top(f)
    f.close()


def play(name: str, seats: tuple[Seat, ...], tmp_path: Path, playwright_chromium: tuple) -> None:
    _, browser = playwright_chromium
    with family_daemon(tmp_path) as daemon:
        the_journey(Family(name, daemon, browser, seats, screenshots(tmp_path), [*SEATING]))


def test_the_familys_whole_journey_at_three_phones_and_the_tv(tmp_path, playwright_chromium):
    play("family", THE_FAMILY, tmp_path, playwright_chromium)


@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
def test_the_journey_in_each_language_at_320_393_and_1280(tmp_path, playwright_chromium, lang):
    play(f"all-{lang}", one_language(lang), tmp_path, playwright_chromium)


TURNED = [(SMALL, TV, PHONE), (TV, PHONE, SMALL)]  # the shared phone at 393 and at 1280; Mum's at 320 and 1280


@pytest.mark.skipif(not os.environ.get("UNO_LONG"), reason="the larger matrix: UNO_LONG=1")
@pytest.mark.parametrize("sizes", TURNED, ids=["mum-320", "mum-1280"])
@pytest.mark.parametrize("lang", ["en", "zh-Hans", "zh-Hant"])
def test_the_journey_with_the_sizes_turned_round(tmp_path, playwright_chromium, lang, sizes):
    play(f"turned-{lang}-{sizes[0][0]}", one_language(lang, sizes), tmp_path, playwright_chromium)
