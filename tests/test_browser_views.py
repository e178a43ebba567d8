"""The game's end, the table screen and the history's tables as a family sees them, in English, Simplified and
Traditional Chinese at a Pixel 5's 393×851 and a small phone's 320×640, against the real daemon on simulated
hardware: the winner card on every phone (watchers too) with the ranked totals and "Play again, same players"; the
table screen beside the table, live; the past games' tables whole on a narrow phone; a toast that leaves Undo free.
Each step is saved as a screenshot in $UNO_SCREENSHOTS (or the test's tmp_path) and checked as the journeys check
theirs (tests/test_browser_journeys.py: no raw key, no English on a Chinese page, no sideways scrolling, 48 px
targets)."""

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.conftest import RunningDaemon
from tests.test_browser import WAIT_MS, fill, origin
from tests.test_browser_game import phone
from tests.test_browser_journeys import LANGUAGES, Journey, i_am

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser

SIZES = {393: 851, 320: 640}  # a Pixel 5's screen; a small phone's
WIDTHS = pytest.mark.parametrize("width", list(SIZES))
FOUR = ["Ann", "Bob", "Cy", "Dee"]


@pytest.fixture(params=LANGUAGES)
def language(request) -> tuple[str, str]:
    return request.param


@dataclass
class Screens(Journey):
    """A journey at the whole screen's height of each phone."""

    @property
    def options(self) -> dict[str, object]:
        return {"locale": self.locale, "viewport": {"width": self.width, "height": SIZES[self.width]}}

    def shoot(self, page: Page, step: str) -> None:
        """The whole page checked and saved, and the screen as a person sees it without scrolling."""
        super().shoot(page, step)
        page.screenshot(path=self.folder / f"{self.name}-{self.lang}-{self.width}-{step}-screen.png")

    def watcher(self, daemon_process: RunningDaemon) -> Page:
        """A phone that has not joined: it may only watch."""
        page = self.phone()
        page.goto(daemon_process.url + "/")
        expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
        return page


def screens(name, language, width, daemon_process, playwright_chromium, tmp_path, names=FOUR) -> Screens:
    lang, locale = language
    folder = Path(os.environ.get("UNO_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return Screens(name, lang, locale, width, folder, playwright_chromium, origin(daemon_process.url), list(names))


def score(daemon_process: RunningDaemon, winner: str, hands: dict[str, int]) -> None:
    status, answer = daemon_process.post("/api/games/current/rounds", {"winner": winner, "hands": hands})
    assert status == 201, answer


@WIDTHS
def test_the_winner_card_on_every_phone_and_play_again_with_the_same_players(
    daemon_process, playwright_chromium, tmp_path, language, width
):
    j = screens("winner", language, width, daemon_process, playwright_chromium, tmp_path)
    s = j.strings
    status, answer = daemon_process.post(
        "/api/games", {"players": FOUR, "target": 50, "house_rules": {"stacking": True}}
    )
    assert status == 201, answer
    ended = answer["game"]
    ann, bob = j.joined_phone(daemon_process), j.joined_phone(daemon_process)
    i_am(ann, "Ann")
    i_am(bob, "Bob")
    watcher = j.watcher(daemon_process)
    phones = {"ann": ann, "bob": bob, "watcher": watcher}

    score(daemon_process, "Bob", {"Ann": 10, "Cy": 5, "Dee": 5})  # Bob 20
    for page in phones.values():
        expect(page.locator("#winner-card")).to_be_hidden()  # the game goes on
    score(daemon_process, "Ann", {"Bob": 20, "Cy": 20, "Dee": 15})  # Ann 55: past the target of 50, the game is over

    for who, page in phones.items():
        card = page.locator("#winner-card")
        expect(card).to_be_visible(timeout=WAIT_MS)
        expect(card.locator("#winner-names")).to_have_text("Ann")
        expect(card.locator("#winner-line")).to_have_text(fill(s["winner.wins"], winners="Ann"))
        ranks = card.locator(".winner-rank")
        # Winner collects: the highest total first; Cy and Dee, both at 0, share third place.
        expect(ranks.locator(".winner-side")).to_have_text(FOUR)
        expect(ranks.locator(".winner-total")).to_have_text(["55", "20", "0", "0"])
        assert [r.get_attribute("data-place") for r in ranks.all()] == ["1", "2", "3", "3"]
        expect(card.locator("#winner-mode")).to_have_text(
            fill(s["scores.mode"], mode=s["mode.winner_collects"], target=50)
        )
        again = card.get_by_role("button", name=s["winner.again"], exact=True)
        if who == "watcher":  # starting a game needs the table PIN
            expect(again).to_be_hidden()
        else:
            expect(again).to_be_visible()
            assert again.bounding_box()["height"] >= 48
        # Nobody is told "no game yet" under the result.
        expect(page.locator("#welcome")).to_be_hidden()
        expect(page.get_by_text(s["welcome.no_game"])).to_have_count(0)
        j.shoot(page, f"1-over-on-{who}")

    # Closed, it stays closed on that phone; opened again, the page shows it again.
    ann.locator("#winner-close").tap()
    expect(ann.locator("#winner-card")).to_be_hidden()
    expect(bob.locator("#winner-card")).to_be_visible()
    ann.reload()
    expect(ann.locator("#winner-card")).to_be_visible(timeout=WAIT_MS)
    expect(ann.locator("#winner-names")).to_have_text("Ann")

    bob.get_by_role("button", name=s["winner.again"], exact=True).tap()
    for page in phones.values():
        expect(page.locator("#winner-card")).to_be_hidden(timeout=WAIT_MS)
        # The same four, Ann deals again: Bob plays first, and Bob's phone is still Bob's.
        expect(page.locator("#prompt-text")).to_have_text(fill(s["prompt.turn"], player="Bob"), timeout=WAIT_MS)
        expect(page.get_by_text(s["welcome.no_game"])).to_have_count(0)
    expect(bob.locator("#prompt-me-text")).to_have_text(s["mine.play"])
    j.shoot(bob, "2-played-again-on-bob")
    again = daemon_process.get("/api/game")["game"]
    assert again["id"] != ended["id"]
    assert again["scoreboard"]["rounds"] == []
    for same in ("players", "ruleset", "house_rules", "mode", "target", "teams", "final", "track_turns"):
        assert again[same] == ended[same], same
    j.close(*phones.values())


TABLETS = {"landscape": {"width": 1024, "height": 768}, "portrait": {"width": 768, "height": 1024}}
# Each language once, in both orientations between them.
TABLE_SCREENS = [
    pytest.param(("en", "en-GB"), "landscape", id="en-landscape"),
    pytest.param(("zh-Hans", "zh-CN"), "portrait", id="zh-Hans-portrait"),
    pytest.param(("zh-Hant", "zh-TW"), "landscape", id="zh-Hant-landscape"),
]


def table_screen(j: Screens, orientation: str) -> Page:
    """A tablet on a stand beside the table: no touch needed, a screen's width and height as it stands."""
    playwright, browser = j.playwright_chromium
    viewport = TABLETS[orientation]
    options = {"locale": j.locale, "viewport": viewport, "device_scale_factor": 1, "is_mobile": False}
    return phone(browser, playwright, j.home, j.foreign_requests, j.console_errors, **options)


@pytest.mark.parametrize(("language", "orientation"), TABLE_SCREENS)
def test_the_table_screen_shows_the_prompt_scores_and_join_code_live(
    daemon_process, playwright_chromium, tmp_path, language, orientation
):
    j = screens("table", language, 393, daemon_process, playwright_chromium, tmp_path)
    j.name = f"table-{orientation}"
    s = j.strings
    status, answer = daemon_process.post("/api/games", {"players": FOUR})
    assert status == 201, answer
    tv = table_screen(j, orientation)
    tv.goto(daemon_process.url + "/table")
    expect(tv.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    expect(tv.locator("html")).to_have_attribute("lang", j.lang)
    expect(tv.locator("#tv-prompt")).to_have_text(fill(s["prompt.turn"], player="Bob"), timeout=WAIT_MS)
    expect(tv.locator("#tv-ranks .winner-side")).to_have_text(FOUR)
    expect(tv.locator("#tv-ranks [data-place]")).to_have_count(0)  # all level before the first round: no places
    # Not joined: the invite is the table's, so the screen asks for the PIN once instead of showing a code.
    expect(tv.locator("#tv-qr")).to_be_hidden()
    expect(tv.locator("#tv-unlock")).to_be_visible()
    expect(tv.get_by_label(s["tv.unlock"])).to_be_editable()
    j.shoot(tv, "1-asks-for-the-pin")
    tv.locator("#tv-unlock-pin").fill(daemon_process.table_pin)
    tv.get_by_role("button", name=s["tv.unlock_go"]).click()
    qr = tv.get_by_role("img", name=s["invite.qr"])
    expect(qr).to_have_js_property("complete", True, timeout=WAIT_MS)
    assert qr.evaluate("img => img.naturalWidth") > 0
    status, invite = daemon_process.request("GET", "/api/invite")
    assert status == 200, invite
    expect(tv.locator("#tv-link")).to_have_text(invite["join_url"])
    if "pin" in invite:  # digits to read out, where the invite carries them
        expect(tv.locator("#tv-pin")).to_have_text(invite["pin"])
    else:
        expect(tv.locator("#tv-pin")).to_be_hidden()
    # Nothing on it acts: once joined, not one button is shown.
    expect(tv.locator("button:visible, select:visible, a:visible")).to_have_count(0)
    j.shoot(tv, "2-bob-to-play")

    bob = j.joined_phone(daemon_process)
    i_am(bob, "Bob")
    bob.locator("#press").tap()  # Bob cannot play: one press, and the turn goes on
    outcomes = [s["line.nothing"], s["line.card_one"], *(fill(s["line.cards"], n=n) for n in range(2, 13))]
    expect(tv.locator("#tv-outcome")).to_have_text(re.compile("|".join(map(re.escape, outcomes))), timeout=WAIT_MS)
    expect(tv.locator("#tv-prompt")).to_have_text(fill(s["prompt.turn"], player="Cy"), timeout=WAIT_MS)
    j.shoot(tv, "3-after-bobs-press")

    status, answer = daemon_process.post("/api/attacks", {"kind": "wild_all_hit", "by": "Cy"})
    assert status == 200, answer
    expect(tv.locator("#tv-prompt")).to_have_text(fill(s["prompt.once"], player="Dee"), timeout=WAIT_MS)
    expect(tv.locator("#tv-cause")).to_have_text(fill(s["prompt.by"], cause=s["kind.wild_all_hit"], by="Cy"))
    expect(tv.locator("#tv-next")).to_contain_text(re.compile("Ann.+Bob.+Dee"))  # one phrase: who, then whose turn
    j.shoot(tv, "4-wild-all-hit")

    # Cy went out on it: the presses owed are carried into the next round.
    round_ = {"winner": "Cy", "hands": {"Ann": 30, "Bob": 12, "Dee": 4}, "carry_open_attacks": True}
    status, answer = daemon_process.post("/api/games/current/rounds", round_)
    assert status == 201, answer
    expect(tv.locator("#tv-ranks .winner-side")).to_have_text(["Cy", "Ann", "Bob", "Dee"], timeout=WAIT_MS)
    expect(tv.locator("#tv-ranks .winner-total")).to_have_text(["46", "0", "0", "0"])
    places = tv.locator("#tv-ranks .winner-rank")
    assert [r.get_attribute("data-place") for r in places.all()] == ["1", "2", "2", "2"]
    j.shoot(tv, "5-scored")
    j.close(bob, tv)


def test_the_table_screen_opened_from_an_invite_link_joins_at_once(daemon_process, playwright_chromium, tmp_path):
    j = screens("table-link", ("en", "en-GB"), 393, daemon_process, playwright_chromium, tmp_path)
    tv = table_screen(j, "portrait")
    tv.goto(f"{daemon_process.url}/table#pin={daemon_process.table_pin}")
    expect(tv.get_by_role("img", name=j.strings["invite.qr"])).to_be_visible(timeout=WAIT_MS)
    expect(tv.locator("#tv-unlock")).to_be_hidden()
    expect(tv.locator("#tv-prompt")).to_have_text(j.strings["tv.no_game"])
    assert tv.evaluate("location.hash") == ""  # the PIN is out of the address bar
    j.close(tv)


# Every cell of the past games' tables that a person cannot see whole where it is: beyond the screen's sides, or
# cut by a box around it that scrolls or clips ([its text, its left, its right]).
CUT_CELLS = """() => [...document.querySelectorAll(".past table :is(th, td)")]
  .filter((cell) => cell.getClientRects().length && cell.textContent.trim())
  .filter((cell) => {
    const box = cell.getBoundingClientRect();
    if (box.left < -0.5 || box.right > innerWidth + 0.5) return true;
    for (let up = cell.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX === "visible") continue;
      const frame = up.getBoundingClientRect();
      if (box.left < frame.left - 0.5 || box.right > frame.right + 0.5) return true;
    }
    return false;
  })
  .map((cell) => [cell.textContent.trim(), cell.getBoundingClientRect().left, cell.getBoundingClientRect().right])"""


@WIDTHS
def test_the_past_games_tables_are_whole_on_a_narrow_phone(
    daemon_process, playwright_chromium, tmp_path, language, width
):
    players = ["Grandma Rose", "Bob", "王小明", "Dee"]
    j = screens("history", language, width, daemon_process, playwright_chromium, tmp_path, players)
    status, answer = daemon_process.post("/api/games", {"players": players, "target": 50})
    assert status == 201, answer
    score(daemon_process, "Grandma Rose", {"Bob": 20, "王小明": 25, "Dee": 15})
    page = j.joined_phone(daemon_process)
    expect(page.locator("#past-players tbody tr")).to_have_count(4, timeout=WAIT_MS)
    expect(page.locator("#board tbody tr")).to_have_count(4)
    for table in ("#board", "#past-players"):
        page.locator(table).scroll_into_view_if_needed()
        assert page.evaluate(CUT_CELLS) == [], f"{table}: cells cut off"
    # Each number still says what it is: the column's name beside it, in the reader's language.
    drought = page.locator("#past-players tbody tr").first.locator("td").last
    expect(drought).to_have_attribute("data-label", j.strings["past.drought"])
    j.shoot(page, "1-past-games")
    j.close(page)


OVERLAP = """([a, b]) => {
  const [p, q] = [document.querySelector(a).getBoundingClientRect(), document.querySelector(b).getBoundingClientRect()];
  return p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom;
}"""
# Undo brought to every height of the screen, 30 px at a time from the bottom edge up, as a thumb scrolling to it
# finds it; after each scroll the page has had two frames to answer it. The heights where the toast (still shown)
# lies over Undo.
UNDO_COVERED = """async () => {
  const [undo, toast] = [document.getElementById("undo"), document.getElementById("toast")];
  const frame = () => new Promise((done) => requestAnimationFrame(done));
  const covered = [];
  for (let above = 0; above < innerHeight - 60; above += 30) {
    scrollBy(0, undo.getBoundingClientRect().bottom - (innerHeight - above));
    await frame();
    await frame();
    if (toast.hidden) return ["the toast went before the end", ...covered];
    const [p, q] = [toast.getBoundingClientRect(), undo.getBoundingClientRect()];
    if (p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom) covered.push(above);
  }
  return covered;
}"""


@WIDTHS
def test_the_round_saved_toast_leaves_undo_free(daemon_process, playwright_chromium, tmp_path, width):
    j = screens("toast", ("en", "en-GB"), width, daemon_process, playwright_chromium, tmp_path)
    status, answer = daemon_process.post("/api/games", {"players": FOUR})
    assert status == 201, answer
    page = j.joined_phone(daemon_process)
    i_am(page, "Ann")
    page.locator("#tab-round").tap()
    page.locator("#winner").select_option("Ann")
    page.locator("#entry-save").tap()
    toast = page.locator("#toast")
    expect(toast).to_have_text(fill(j.strings["feed.round_scored"], round=1, winner="Ann"), timeout=WAIT_MS)
    undo = page.locator("#undo")
    expect(undo).to_be_visible()
    assert not page.evaluate(OVERLAP, ["#toast", "#undo"]), "the toast covers Undo where the save left the page"
    assert page.evaluate(UNDO_COVERED) == []
    j.shoot(page, "1-round-saved")
    j.close(page)
