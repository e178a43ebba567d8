"""Joining the table and the admin's part on the phone page, in Debian's Chromium as a Pixel 5, against the real
daemon on simulated hardware: the QR code's link joins; a phone not joined is asked for the PIN and its press is not
made; wrong PINs show the tries left, then the wait; the admin changes the table PIN, gets its QR code, and joined
phones must join again; the admin resets a fault, and is told of a full card.
"""

import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect

from launcher.store import STORE_FILE
from tests import test_browser
from tests.conftest import FAST_SIM_TOML, RunningDaemon, start_daemon
from tests.small_fs import fill as fill_disk
from tests.small_fs import small_tmpfs
from tests.test_browser import (
    ARTIFACTS,
    WAIT_MS,
    catalogue,
    fill,
    open_joined,
    origin,
    outcome_pattern,
    small_targets,
    watch,
)

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser


def phone(browser, playwright, **options) -> Page:
    return browser.new_context(**{**playwright.devices["Pixel 5"], "locale": "en-US", **options}).new_page()


def open_not_joined(page: Page, url: str) -> None:
    page.goto(url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    expect(page.locator("#join")).to_be_visible(timeout=WAIT_MS)


def press_outcome(page: Page, strings: dict[str, str], press: int):
    """Tap the big button and expect the feed's line of how press number `press` ended."""
    page.locator("#press").tap()
    outcome = page.locator(
        f'#feed li[data-press="{press}"]:is([data-type="launcher.missed"], [data-type="launcher.fired"]) .feed-text'
    )
    expect(outcome).to_have_text(outcome_pattern(strings, press), timeout=WAIT_MS)
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)


def join_with(page: Page, pin: str) -> None:
    page.locator("#join-pin").fill(pin)
    page.locator("#join button").tap()


def a_wrong_pin(daemon_process) -> str:
    return next(pin for pin in ("1234", "5678") if pin not in (daemon_process.table_pin, daemon_process.admin_pin))


def test_the_qr_link_joins_the_table_and_its_press_works(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    foreign_requests, console_errors = [], []
    page = phone(browser, playwright)
    watch(page, origin(daemon_process.url), foreign_requests, console_errors)

    open_joined(page, daemon_process)

    expect(page.locator("#role")).to_have_text(english["role.table"])
    expect(page.locator("#join")).to_be_hidden()
    assert page.url == daemon_process.url + "/"  # the PIN left the address (and so the history) at once
    press_outcome(page, english, daemon_process.get("/api/state")["presses"] + 1)
    page.context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_a_phone_not_joined_is_asked_to_join_and_its_press_is_not_made(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    page = phone(browser, playwright)
    open_not_joined(page, daemon_process.url)
    expect(page.locator("#join-hint")).to_have_text(english["join.hint"])
    expect(page.locator("#join-pin")).to_have_attribute("inputmode", "numeric")
    expect(page.get_by_label(english["join.label"], exact=True)).to_be_editable()
    before = daemon_process.get("/api/state")

    # Its press would be refused: the button is off and says to join first.
    expect(page.locator("#press")).to_be_disabled()
    expect(page.locator("#press-caption")).to_have_text(english["button.join_first"])
    after = daemon_process.get("/api/state")
    assert (after["presses"], after["last_event_id"]) == (before["presses"], before["last_event_id"])
    expect(page.locator('#feed li[data-type="button.pressed"]')).to_have_count(0)

    # With the PIN typed in, the phone has joined and its press is made.
    join_with(page, daemon_process.table_pin)
    expect(page.locator("#role")).to_have_text(english["role.table"], timeout=WAIT_MS)
    expect(page.locator("#join")).to_be_hidden()
    press_outcome(page, english, before["presses"] + 1)

    # Leaving, from the PIN section that the role opens.
    page.locator("#role").tap()
    expect(page.locator("#access")).to_have_attribute("open", "")
    page.locator("#leave").tap()
    expect(page.locator("#join")).to_be_visible()
    expect(page.locator("#role")).to_be_hidden()
    expect(page.locator("#leave")).to_be_hidden()
    assert page.evaluate("fetch('/api/session').then((r) => r.json())") == {"role": "none"}
    page.context.close()


def test_wrong_pins_show_the_tries_left_then_the_wait_in_the_readers_language(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    simplified = catalogue("zh-Hans")
    tries_left = re.compile(re.escape(simplified["refused.wrong_pin"]).replace(re.escape("{tries_left}"), r"(\d+)"))
    wait = re.compile(re.escape(simplified["refused.too_many_tries"]).replace(re.escape("{retry_after_s}"), r"\d+"))
    page = phone(browser, playwright, locale="zh-CN")
    open_not_joined(page, daemon_process.url)
    error, button = page.locator("#join-error"), page.locator("#join button")

    shown = []
    while not shown or tries_left.fullmatch(shown[-1]):
        assert len(shown) < 20, shown
        join_with(page, a_wrong_pin(daemon_process))
        expect(button).to_be_enabled(timeout=WAIT_MS)  # the answer is in
        expect(error).to_be_visible()
        shown.append(error.inner_text())

    # Each wrong PIN shows one try fewer, then the wait; then even the right PIN is not checked: it waits to be let in
    # by someone at the table, as any PIN would (tests/test_browser_doorbell.py).
    counts = [int(tries_left.fullmatch(text).group(1)) for text in shown[:-1]]
    assert counts and counts == list(range(counts[0], 0, -1)), shown
    assert wait.fullmatch(shown[-1]), shown
    join_with(page, daemon_process.table_pin)
    waiting = re.escape(simplified["join.waiting"]).replace(re.escape("{wait_s}"), r"\d+")
    expect(page.locator("#join-waiting")).to_have_text(re.compile(waiting), timeout=WAIT_MS)
    expect(page.locator("#join-code")).to_be_visible()
    expect(page.locator("#role")).to_be_hidden()
    page.context.close()


def test_the_admin_changes_the_table_pin_and_joined_phones_must_join_again(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    foreign_requests, console_errors = [], []
    admin = phone(browser, playwright, viewport={"width": 320, "height": 568})
    watch(admin, origin(daemon_process.url), foreign_requests, console_errors)
    player = phone(browser, playwright)
    open_joined(player, daemon_process)

    # The admin signs in with the admin PIN in the PIN section.
    open_not_joined(admin, daemon_process.url)
    admin.locator("#access summary").tap()
    admin.get_by_label(english["admin.pin"], exact=True).fill(daemon_process.admin_pin)
    admin.locator("#admin-join button").tap()
    expect(admin.locator("#role")).to_have_text(english["role.admin"], timeout=WAIT_MS)
    expect(admin.locator("#join")).to_be_hidden()  # the admin may do all a joined phone may
    expect(admin.locator("#admin-join")).to_be_hidden()

    # It makes up a new table PIN and changes it: the join link and its QR code are shown to print or screenshot.
    table_pin = admin.locator("#pin-table")
    while table_pin.input_value() in ("", daemon_process.table_pin):
        admin.locator('[data-pin="table"]').tap()
    new_pin = table_pin.input_value()
    assert re.fullmatch(r"\d{6}", new_pin)
    admin.locator("#pins button[type=submit]").tap()
    expect(admin.locator("#toast")).to_have_text(english["admin.saved"], timeout=WAIT_MS)
    qr = admin.locator("#join-qr")
    expect(qr).to_be_visible()
    expect(qr).to_have_attribute("src", re.compile(r"^data:image/svg\+xml;base64,"))
    expect(qr).to_have_attribute("alt", english["admin.qr"])
    expect(admin.locator("#join-url")).to_have_text(re.compile(r"^http://.+/#join=[A-Za-z0-9_-]{22}$"))
    assert new_pin not in admin.locator("#join-url").inner_text()  # a new token with the new PIN, not the PIN
    assert qr.evaluate("(img) => img.complete && img.naturalWidth > 0")  # the page's own policy allows it
    assert admin.evaluate("document.documentElement.scrollWidth") <= 320
    assert small_targets(admin) == []
    ARTIFACTS.mkdir(exist_ok=True)
    admin.screenshot(path=ARTIFACTS / "browser-admin-pins.png", full_page=True)
    expect(admin.locator("#role")).to_have_text(english["role.admin"])

    # The phone joined with the old PIN learns at once, over the stream, that it must join again: the feed says
    # why and the join bar is back before it does anything.
    expect(player.locator('#feed li[data-type="pins.changed"] .feed-text')).to_have_text(english["feed.pins_table"])
    expect(player.locator("#join")).to_be_visible(timeout=WAIT_MS)
    expect(player.locator("#role")).to_be_hidden()
    # It cannot press until it joins again.
    presses = daemon_process.get("/api/state")["presses"]
    expect(player.locator("#press")).to_be_disabled()
    expect(player.locator("#press-caption")).to_have_text(english["button.join_first"])
    join_with(player, new_pin)
    expect(player.locator("#role")).to_have_text(english["role.table"], timeout=WAIT_MS)
    press_outcome(player, english, presses + 1)

    player.context.close()
    admin.context.close()
    assert foreign_requests == []
    assert console_errors == []


# Every press fires, and the simulated cards come so slowly that the watchdog cuts the motor: a FAULT.
FAULT_TOML = """
[dispense]
max_run_ms = 100
jam_ms = 5000
min_rest_ms = 10

[sim]
cards_per_second = 2.0

[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20

[web]
heartbeat_s = 0.5
"""


@contextmanager
def served(where: Path, config_text: str = FAST_SIM_TOML) -> Iterator[RunningDaemon]:
    """The daemon started in `where` (start_daemon), stopped and its output closed afterwards."""
    running = start_daemon(where, config_text)
    try:
        yield running
    finally:
        running.stop()
        if running.process.stdout:
            running.process.stdout.close()


def player_and_admin(browser, playwright, running) -> tuple[Page, Page]:
    """Two phones joined at the table: a player's, and the admin's (its role shown)."""
    player, admin = phone(browser, playwright), phone(browser, playwright)
    open_joined(player, running)
    open_joined(admin, running, running.admin_pin)
    expect(admin.locator("#role")).to_have_text(catalogue("en")["role.admin"])
    return player, admin


def test_the_admin_resets_a_fault_from_its_banner(tmp_path, playwright_chromium):
    playwright, browser = playwright_chromium
    with served(tmp_path, FAULT_TOML) as running:
        english = catalogue("en")
        player, admin = player_and_admin(browser, playwright, running)

        player.locator("#press").tap()

        for page in (player, admin):
            expect(page.locator("#fault")).to_be_visible(timeout=WAIT_MS)
        expect(player.locator("#fault-reset")).to_be_hidden()  # only the admin may reset
        assert running.get("/api/state")["fault_cause"] == "motor"  # the slow cards outlast the motor's time
        banner = fill(english["fault.banner"], reason=english["fault.cause_motor"])
        expect(admin.locator("#fault-text")).to_have_text(banner)
        ARTIFACTS.mkdir(exist_ok=True)
        admin.screenshot(path=ARTIFACTS / "browser-admin-fault.png")

        admin.locator("#fault-reset").tap()

        for page in (admin, player):  # the other phone learns it over the event stream
            expect(page.locator("#fault")).to_be_hidden(timeout=WAIT_MS)
            expect(page.locator('#feed li[data-type="hardware.ok"] .feed-text')).to_have_text(english["feed.ok"])
        assert running.get("/api/state")["fault"] is None
        for page in (player, admin):
            page.context.close()


def holder(held: list[Route]) -> Callable[[Route], None]:
    """A route handler that keeps each POST waiting in `held` until the test lets it go."""

    def hold(route: Route) -> None:  # one parameter: Playwright passes the route alone
        if route.request.method == "POST":
            held.append(route)
        else:
            route.continue_()

    return hold


def test_phones_joined_by_the_qr_link_leave_the_strangers_room_to_follow(daemon_process, playwright_chromium):
    # The daemon admits only two streams per address from phones that have not joined (a guest network's NAT may put
    # a whole family behind one; here all are 127.0.0.1). A phone opened by the link must follow as a joined phone
    # from its first stream: a stranger's stream it left would keep a stranger's place until the daemon noticed,
    # and the next phone, whose owner is about to type the PIN, would be refused (a 503) and left reconnecting.
    playwright, browser = playwright_chromium
    joined = []
    for _ in range(3):  # one more than the strangers' places at one address
        page = phone(browser, playwright)
        console_errors: list[str] = []
        watch(page, origin(daemon_process.url), [], console_errors)
        streams: list[str] = []
        page.on("request", lambda r, streams=streams: "/api/events" in r.url and streams.append(r.url))
        held: list[Route] = []
        page.route("**/api/session", holder(held))  # the join is answered late
        page.goto(f"{daemon_process.url}/#pin={daemon_process.table_pin}")
        expect(page.locator("#conn")).to_have_attribute("data-state", "connecting")
        for _ in range(WAIT_MS // 50):  # the page's scripts ask once loaded; Playwright tells of it a moment later
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the page did not ask to join"
        assert streams == [], "the page followed the table before its join was answered"
        held[0].continue_()
        expect(page.locator("#role")).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
        assert len(streams) == 1, "the page opened a stranger's stream, then a joined phone's"
        assert console_errors == []
        joined.append(page)
    newcomer = phone(browser, playwright)
    open_not_joined(newcomer, daemon_process.url)  # live: a stranger's place is free
    for page in [*joined, newcomer]:
        expect(page.locator("#conn")).to_have_attribute("data-state", "live")
        page.context.close()


def test_the_admin_is_told_of_a_full_card_and_the_notice_goes_once_it_has_room(tmp_path, playwright_chromium):
    """A real 4 MiB tmpfs under the state, filled mid-game (root only: skipped otherwise): the table still presses,
    the admin's store banner says the card is full and what to do, and goes once there is room again."""
    playwright, browser = playwright_chromium
    with small_tmpfs(tmp_path / "fs", "4m") as mount, served(mount) as running:
        english = catalogue("en")
        player, admin = player_and_admin(browser, playwright, running)
        store = running.state_dir / STORE_FILE
        with closing(sqlite3.connect(store)) as conn:  # every write after this one needs new blocks
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        filler = fill_disk(mount)

        press_outcome(player, english, 1)
        expect(admin.locator("#disk-full")).to_be_visible(timeout=3 * WAIT_MS)
        expect(admin.locator("#disk-full")).to_have_text(english["admin.disk_full"])
        expect(admin.locator("#store-budget")).to_be_hidden()
        expect(player.locator("#store-full")).to_be_hidden()  # the admin's to see to
        assert running.get("/api/state")["fault"] is None
        ARTIFACTS.mkdir(exist_ok=True)
        admin.locator("#store-full").scroll_into_view_if_needed()
        admin.screenshot(path=ARTIFACTS / "browser-admin-disk-full.png")

        filler.unlink()
        press_outcome(player, english, 2)
        expect(admin.locator("#store-full")).to_be_hidden(timeout=3 * WAIT_MS)
        for page in (player, admin):
            page.context.close()
