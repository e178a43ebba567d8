"""Each journey a family makes on its phones, in English, Simplified and Traditional Chinese (the language the phone's
browser asks for, as a real phone's does), at a Pixel 5's 393 px and a small phone's 320 px, against the real daemon
on simulated hardware: joining by the QR code's link and by typing the PIN, the first run, a Wild All Hit at four
phones, scoring a round, a fault. Each step's whole page is saved as a screenshot in $UNO_SCREENSHOTS (or the test's
tmp_path) as <journey>-<lang>-<width>-<step>.png, and checked as it is: no catalogue key shown raw, no English words
on a Chinese page (player names aside), no sideways scrolling, every control big enough to tap.
"""

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.conftest import RunningDaemon, start_daemon
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, origin, small_targets
from tests.test_browser_access import FAULT_TOML
from tests.test_browser_game import hand_total, phone, press_and_wait
from tests.test_browser_prompt import assert_whole_on_first_screen

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser

# (catalogue, the language a phone's browser asks for)
LANGUAGES = [
    pytest.param(("en", "en-GB"), id="en"),
    pytest.param(("zh-Hans", "zh-CN"), id="zh-Hans"),
    pytest.param(("zh-Hant", "zh-TW"), id="zh-Hant"),
]
WIDTHS = pytest.mark.parametrize("width", [393, 320])
HEIGHTS = {393: 727, 320: 568}  # a Pixel 5's viewport; an iPhone SE (1st generation)'s
FOUR = ["Ann", "Bob", "Cy", "Dee"]

# What the page shows a person: its rendered text and the words of its images and labelled controls.
SHOWN_TEXT = """() => [
  document.title,
  document.body.innerText,
  ...[...document.querySelectorAll("[alt], [aria-label], [placeholder], [title]")]
    .filter((e) => e.getClientRects().length)
    .flatMap((e) => ["alt", "aria-label", "placeholder", "title"].map((name) => e.getAttribute(name) ?? "")),
].join("\\n")"""
KEY_LIKE = re.compile(r"\b([a-z][a-z0-9_]*)\.[a-z0-9_]+\b")
# Labels that must not break inside a word: the past games' and the game's statistics' table headings without a
# space (a Chinese word: 牌局数, not 牌 over 局数; on wide screens), and the refill button's words.
BROKEN_LABELS = """() => [
  ...document.querySelectorAll(
    ".past .grid-table thead th, #stats tr:first-child > th, .reload, .calc .card-name",
  ),
]
  .filter((e) => e.getClientRects().length && e.textContent.trim())
  .filter((e) => e.matches(".reload") || !/\\s/.test(e.textContent.trim()))
  .filter((e) => {
    const range = document.createRange();
    range.selectNodeContents(e);
    return new Set([...range.getClientRects()].map((line) => Math.round(line.bottom))).size > 1;
  })
  .map((e) => e.textContent.trim())"""
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
NOT_WORDS = re.compile(r"\S+://\S+|\S*\d\S*")  # links, hashes and numbers are not English


@pytest.fixture(params=LANGUAGES)
def language(request) -> tuple[str, str]:
    return request.param


@dataclass
class Journey:
    """One journey's phones in one language at one width, and the screenshots of its steps."""

    name: str
    lang: str
    locale: str
    width: int
    folder: Path
    playwright_chromium: tuple
    home: str
    names: list[str]  # the players' names, which may be in any script
    foreign_requests: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    @property
    def strings(self) -> dict[str, str]:
        return catalogue(self.lang)

    @property
    def options(self) -> dict[str, object]:
        return {"locale": self.locale, "viewport": {"width": self.width, "height": HEIGHTS[self.width]}}

    def phone(self) -> Page:
        playwright, browser = self.playwright_chromium
        return phone(browser, playwright, self.home, self.foreign_requests, self.console_errors, **self.options)

    def joined_phone(self, daemon_process: RunningDaemon, pin: str | None = None) -> Page:
        """A phone joined by the QR code's link, set up for a journey about something else. Its randomness is
        taken before anyone presses, as at a table where everyone joins first (a press before it would close the
        shuffle to it, and the daemon's refusal would be a console error)."""
        page = self.phone()
        open_joined(page, daemon_process, pin)
        if daemon_process.get("/api/state")["shuffle"]["contributions_open"]:
            taken = re.escape(self.strings["fair.mine_in"]).replace(re.escape("{place}"), r"\d+")
            expect(page.locator("#fair-mine")).to_have_text(re.compile(taken), timeout=WAIT_MS)
        return page

    def shoot(self, page: Page, step: str) -> None:
        """Check the page as it is now, then save it whole."""
        path = self.folder / f"{self.name}-{self.lang}-{self.width}-{step}.png"
        page.screenshot(path=path, full_page=True, animations="disabled")  # as settled, not half popped in
        text = page.evaluate(SHOWN_TEXT)
        prefixes = {key.split(".", 1)[0] for key in self.strings}
        raw = [m.group(0) for m in KEY_LIKE.finditer(text) if m.group(1) in prefixes]
        assert raw == [], f"{path.name}: catalogue keys shown raw"
        if self.lang != "en":
            assert english_words(text, self.strings, self.names) == [], f"{path.name}: English on a Chinese page"
        overflow = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert overflow[0] <= overflow[1], f"{path.name}: the page scrolls sideways"
        assert small_targets(page) == [], f"{path.name}: controls too small to tap"
        assert page.evaluate(BROKEN_LABELS) == [], f"{path.name}: labels broken inside a word"

    def close(self, *pages: Page) -> None:
        for page in pages:
            page.context.close()
        assert self.foreign_requests == []
        assert self.console_errors == []


def english_words(text: str, strings: dict[str, str], names: list[str]) -> list[str]:
    """The Latin words shown that neither this catalogue (UNO, PIN…) nor a player's name has."""
    allowed = set(LATIN_WORD.findall(" ".join([*strings.values(), *names])))
    return [word for word in LATIN_WORD.findall(NOT_WORDS.sub(" ", text)) if word not in allowed]


def journey(name, language, width, daemon_process: RunningDaemon, playwright_chromium, tmp_path, names=FOUR) -> Journey:
    lang, locale = language
    folder = Path(os.environ.get("UNO_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return Journey(name, lang, locale, width, folder, playwright_chromium, origin(daemon_process.url), list(names))


def new_game(daemon_process: RunningDaemon) -> None:
    """Ann, Bob, Cy and Dee, dealt by Ann: Bob plays first (the game is set up; the journey is what follows)."""
    status, answer = daemon_process.post("/api/games", {"players": FOUR})
    assert status == 201, answer


def i_am(page: Page, player: str) -> None:
    """The phone just joined is asked who it is; its person taps their name."""
    page.locator("#welcome").get_by_role("button", name=player, exact=True).tap()
    expect(page.locator("#welcome")).to_be_hidden()


def test_joining_by_the_qr_code_and_by_typing_the_pin(daemon_process, playwright_chromium, tmp_path, language):
    j = journey("join", language, 393, daemon_process, playwright_chromium, tmp_path)
    s = j.strings
    host = j.joined_phone(daemon_process)  # by the console's QR code
    expect(host.locator("#role")).to_have_text(s["role.table"])
    host.locator("#invite").tap()
    dialog = host.get_by_role("dialog", name=s["invite.title"])
    expect(dialog.get_by_role("img", name=s["invite.qr"])).to_have_js_property("complete", True, timeout=WAIT_MS)
    expect(dialog.locator("#invite-hint")).to_have_text(s["invite.hint"])
    link = dialog.locator("#invite-link")
    # The link carries a revocable token, never the PIN: a photo of the QR code gives the PIN away to nobody.
    expect(link).to_have_text(re.compile(r"/#join=[A-Za-z0-9_-]{22}$"), timeout=WAIT_MS)
    assert daemon_process.table_pin not in link.inner_text()
    j.shoot(host, "1-invite")

    guest = j.phone()  # scans the host's QR code: its camera opens the link
    guest.goto(link.inner_text())
    expect(guest.locator("#role")).to_have_text(s["role.table"], timeout=WAIT_MS)
    expect(guest.locator("#join")).to_be_hidden()
    expect(guest.locator("#welcome-title")).to_have_text(s["welcome.no_game"])
    j.shoot(guest, "2-joined-by-qr")

    typist = j.phone()  # types the address, then the PIN it was told
    typist.goto(daemon_process.url + "/")
    expect(typist.locator("#join")).to_be_visible(timeout=WAIT_MS)
    expect(typist.get_by_label(s["join.label"], exact=True)).to_be_editable()
    expect(typist.locator("#join-hint")).to_have_text(s["join.hint"])
    expect(typist.locator("#press-caption")).to_have_text(s["button.join_first"])
    j.shoot(typist, "3-asked-for-the-pin")
    typist.locator("#join-pin").tap()
    typist.locator("#join-pin").press_sequentially(daemon_process.table_pin)
    typist.get_by_role("button", name=s["join.go"], exact=True).tap()
    expect(typist.locator("#role")).to_have_text(s["role.table"], timeout=WAIT_MS)
    expect(typist.locator("#press-caption")).to_have_text(s["button.caption"])
    expect(typist.locator("#press")).to_be_enabled()
    j.shoot(typist, "4-joined-by-pin")
    j.close(host, guest, typist)


@WIDTHS
def test_the_first_run_starts_a_game_and_shows_whose_turn(
    daemon_process, playwright_chromium, tmp_path, language, width
):
    players = ["Grandma Rose", "Bob", "王小明", "Dee"]  # Grandma Rose deals: Bob plays first
    j = journey("first-run", language, width, daemon_process, playwright_chromium, tmp_path, players)
    s = j.strings
    page = j.phone()
    open_joined(page, daemon_process)
    expect(page.locator("#welcome-title")).to_have_text(s["welcome.no_game"], timeout=WAIT_MS)
    expect(page.locator("#welcome-hint")).to_have_text(s["welcome.no_game_hint"])
    j.shoot(page, "1-welcome")

    page.get_by_role("button", name=s["welcome.start"], exact=True).tap()
    expect(page.locator("#panel-new")).to_be_visible()
    while page.locator("#seats input").count() < len(players):
        page.get_by_role("button", name=s["setup.add"], exact=True).tap()
    for seat, name in zip(page.locator("#seats input").all(), players, strict=True):
        seat.tap()
        seat.press_sequentially(name)
    j.shoot(page, "2-new-game")

    page.locator("#setup-start").tap()
    expect(page.locator("#welcome-title")).to_have_text(s["welcome.who"], timeout=WAIT_MS)
    expect(page.locator("#welcome-hint")).to_have_text(s["welcome.who_hint"])
    expect(page.locator("#welcome button[data-player]")).to_have_text(players)
    j.shoot(page, "3-who-are-you")

    i_am(page, "Bob")
    expect(page.locator("#prompt-text")).to_have_text(fill(s["prompt.turn"], player="Bob"), timeout=WAIT_MS)
    expect(page.locator("#prompt-me-text")).to_have_text(s["mine.play"])
    expect(page.locator("#prompt-me-symbol")).not_to_be_empty()  # a symbol, not colour alone
    j.shoot(page, "4-your-turn")
    j.close(page)


@WIDTHS
def test_a_wild_all_hit_at_four_phones_says_who_presses_next(
    daemon_process, playwright_chromium, tmp_path, language, width
):
    j = journey("wild-all-hit", language, width, daemon_process, playwright_chromium, tmp_path)
    s = j.strings
    new_game(daemon_process)
    phones = {player: j.joined_phone(daemon_process) for player in FOUR}
    for player, page in phones.items():
        i_am(page, player)

    def told(asked: str, mine: str, prompt: str, due: tuple[str, ...] = ()) -> None:
        """Every phone names who is asked; only that player's phone says it is theirs; the phone of each player
        `due` after them says whose press comes just before theirs."""
        for player, page in phones.items():
            expect(page.locator("#prompt-text")).to_have_text(fill(s[prompt], player=asked), timeout=WAIT_MS)
            if player == asked:
                expect(page.locator("#prompt")).to_have_attribute("data-me", "true")
                expect(page.locator("#prompt-me-text")).to_have_text(s[mine])
            elif player in due:
                before = ([asked, *due])[due.index(player)]
                expect(page.locator("#prompt-me-text")).to_have_text(fill(s["mine.after"], player=before))
            else:
                expect(page.locator("#prompt-me")).to_be_hidden()

    told("Bob", "mine.play", "prompt.turn")
    bob = phones["Bob"]
    j.shoot(bob, "1-bob-your-turn")
    # Declared from the top of Bob's phone: his turn's cards are big buttons under the launcher's button.
    bob.locator("#quick-cards").get_by_role("button", name=s["kind.wild_all_hit"], exact=True).tap()

    cause = fill(s["prompt.by"], cause=s["kind.wild_all_hit"], by="Bob")
    for step, (asked, after) in enumerate([("Cy", ["Dee", "Ann"]), ("Dee", ["Ann"]), ("Ann", [])], start=2):
        told(asked, "mine.once", "prompt.once", tuple(after))
        # The game's own turn waits for the attack: "then Cy", not "Cy's turn" beside "Dee: press once".
        expect(bob.locator("#table-status")).to_contain_text(fill(s["table.turn_after"], player="Cy"))
        for player, page in phones.items():
            expect(page.locator("#prompt-cause")).to_have_text(cause)
            if after:
                expect(page.locator("#prompt-next")).to_contain_text(s["prompt.next"])
                expect(page.locator("#prompt-queue li")).to_have_text(after)
            else:
                expect(page.locator("#prompt-next")).to_be_hidden()
            if step == 2 or player == asked:  # what every phone shows as it starts; then the one asked
                j.shoot(page, f"{step}-{asked.lower()}-asked-on-{player.lower()}")
        press_and_wait(phones[asked])

    told("Cy", "mine.play", "prompt.turn")  # after Bob's card, the next plays on
    expect(phones["Ann"].locator('#feed li[data-type="attack.finished"] .feed-text')).to_have_text(
        fill(s["feed.attack_finished"], cause=s["kind.wild_all_hit"])
    )
    j.shoot(phones["Cy"], "5-cy-your-turn")
    j.close(*phones.values())


@WIDTHS
def test_scoring_a_round_shows_its_scores(daemon_process, playwright_chromium, tmp_path, language, width):
    j = journey("scoring", language, width, daemon_process, playwright_chromium, tmp_path)
    s = j.strings
    new_game(daemon_process)
    page = j.joined_phone(daemon_process)
    i_am(page, "Ann")

    # Ann went out; Bob holds a 7 and a Skip (7 + 20), Cy a Wild All Hit (50), Dee nothing (docs/GAME.md's deck).
    page.locator("#tab-round").tap()
    expect(page.locator("#entry-title")).to_have_text(fill(s["entry.title"], round=1))
    page.locator("#winner").select_option("Ann")
    bob, cy = (page.locator("#hands .hand").filter(has_text=name) for name in ("Bob", "Cy"))
    for hand, kinds in ((bob, ("7", "skip")), (cy, ("wild_all_hit",))):
        hand.locator("summary").tap()
        for kind in kinds:
            hand.locator(f'.cell[data-kind="{kind}"] .card-add').tap()
    expect(bob.locator(".hand-total")).to_have_text(hand_total(s, 27, 2))
    expect(cy.locator(".hand-total")).to_have_text(hand_total(s, 50, 1))
    expect(page.locator("#entry-sum")).to_have_text(fill(s["entry.sum"], points=hand_total(s, 77)))
    j.shoot(page, "1-hands-counted")

    page.locator("#entry-save").tap()
    expect(page.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    rows = page.locator("#totals tbody tr")
    expect(rows.locator(".side-name")).to_have_text(FOUR)
    expect(rows.locator(".total")).to_have_text(["77", "0", "0", "0"])
    expect(page.locator("#rounds li")).to_have_count(1)
    expect(page.locator('#feed li[data-type="round.scored"] .feed-text')).to_have_text(
        fill(s["feed.round_scored"], round=1, winner="Ann")
    )
    j.shoot(page, "2-scores")
    j.close(page)


def test_a_fault_is_told_in_plain_words_and_reset_by_the_admin(tmp_path, playwright_chromium, language):
    running = start_daemon(tmp_path, FAULT_TOML)  # every press fires, and the cards come too slowly: a fault
    try:
        j = journey("fault", language, 393, running, playwright_chromium, tmp_path)
        s = j.strings
        player, admin = j.joined_phone(running), j.joined_phone(running, running.admin_pin)
        expect(admin.locator("#role")).to_have_text(s["role.admin"])

        player.locator("#press").tap()

        banner = fill(s["fault.banner"], reason=s["fault.cause_motor"])
        for page in (player, admin):
            expect(page.locator("#fault-text")).to_have_text(banner, timeout=WAIT_MS)
            # Told at the top of the prompt too, and the button says why it is off.
            expect(page.locator("#trouble-what")).to_have_text(s["trouble.fault"])
            expect(page.locator("#trouble-do")).to_have_text(s["trouble.do_fault"])
            expect(page.locator("#press")).to_be_disabled()
            expect(page.locator("#press-caption")).to_have_text(s["button.why_fault"])
        expect(player.locator("#fault-reset")).to_be_hidden()  # only the admin may reset
        tv = j.phone()  # the table screen names the fault with its cause, as the phones' banner does
        tv.goto(running.url + "/table")
        expect(tv.locator("#tv-trouble-what")).to_have_text(
            fill(s["trouble.fault_cause"], reason=s["fault.cause_motor"]), timeout=WAIT_MS
        )
        expect(tv.locator("#tv-trouble-do")).to_have_text(s["trouble.do_fault"])
        j.shoot(tv, "1-fault-on-the-table-screen")
        # The press the fault stopped says so, not "…" for ever.
        stopped = fill(s["line.pressed"], who=s["line.phone"], what=s["line.stopped"])
        expect(player.locator("#feed-lines li[data-type='press'] .feed-text").first).to_have_text(stopped)
        j.shoot(player, "1-fault")
        expect(admin.locator("#fault-reset")).to_have_text(s["fault.reset"])
        j.shoot(admin, "2-fault-on-the-admins-phone")

        admin.locator("#fault-reset").tap()
        expect(tv.locator("#tv-trouble")).to_be_hidden(timeout=WAIT_MS)
        for page in (admin, player):
            expect(page.locator("#fault")).to_be_hidden(timeout=WAIT_MS)
            expect(page.locator("#trouble")).to_be_hidden()
            expect(page.locator("#press")).to_be_enabled()
            expect(page.locator('#feed li[data-type="hardware.ok"] .feed-text')).to_have_text(s["feed.ok"])
        j.shoot(player, "3-fault-cleared")
        j.close(player, admin, tv)
    finally:
        running.close()


def count_hand(page: Page, player: str, kinds: tuple[str, ...]) -> None:
    """On the round tab: open `player`'s hand and add each card held, by its own button."""
    hand = page.locator("#hands .hand").filter(has_text=player)
    hand.locator("summary").tap()
    for kind in kinds:
        hand.locator(f'.cell[data-kind="{kind}"] .card-add').tap()


@pytest.mark.parametrize(
    ("language", "width"),
    [pytest.param(("zh-Hans", "zh-CN"), 393, id="zh-Hans-393"), pytest.param(("en", "en-GB"), 320, id="en-320")],
)
def test_a_newcomers_first_game_from_the_qr_link_to_the_winner_card(
    daemon_process, playwright_chromium, tmp_path, language, width
):
    """Bob has never seen the page. The table's phone shows him the invite; his camera opens the link; he says who
    he is, plays his turns (a Hit 2 declared from the top, a press when he cannot play) and, at the end of each round,
    counts the hands; the second round takes him past the target, and every phone shows him the winner. Only the
    page's own controls, and what he sees at each step is checked."""
    j = journey("newcomer", language, width, daemon_process, playwright_chromium, tmp_path)
    s = j.strings
    status, answer = daemon_process.post("/api/games", {"players": FOUR, "target": 60})  # Ann deals: Bob plays first
    assert status == 201, answer
    table = j.joined_phone(daemon_process)  # the phone lying on the table, which presses for whoever is asked
    table.locator("#welcome-watch").tap()
    table.locator("#invite").tap()
    link = table.locator("#invite-link")
    expect(link).to_have_text(re.compile(r"/#join=[A-Za-z0-9_-]{22}$"), timeout=WAIT_MS)
    for whole in ("#invite-qr", "#invite-pin", "#invite-close"):  # the code, the PIN to read out, a way back
        assert_whole_on_first_screen(table, whole)
    j.shoot(table, "1-the-invite")
    url = link.inner_text()
    table.locator("#invite-close").tap()

    bob = j.phone()  # his camera opens the QR code's link
    bob.goto(url)
    expect(bob.locator("#welcome-title")).to_have_text(s["welcome.who"], timeout=WAIT_MS)
    expect(bob.locator("#welcome-hint")).to_have_text(s["welcome.who_hint"])
    expect(bob.locator("#prompt-text")).to_have_text(fill(s["prompt.turn"], player="Bob"))
    assert_whole_on_first_screen(bob, "#press")
    j.shoot(bob, "2-who-are-you")

    i_am(bob, "Bob")
    expect(bob.locator("#prompt-me-text")).to_have_text(s["mine.play"])
    expect(bob.locator("#press-caption")).to_have_text(s["button.cant_play"])
    expect(bob.locator("#quick")).to_have_attribute("open", "")
    expect(bob.locator("#quick-hint")).to_have_text(s["quick.mine"])
    assert_whole_on_first_screen(bob, "#prompt")
    assert_whole_on_first_screen(bob, "#press")
    j.shoot(bob, "3-your-turn")

    # He plays a Hit 2 and taps it: Cy must press twice, on his phone and on the table's.
    bob.locator("#quick-cards").get_by_role("button", name=s["kind.hit_2"], exact=True).tap()
    for page in (bob, table):
        expect(page.locator("#prompt-text")).to_have_text(fill(s["prompt.times"], player="Cy", n=2), timeout=WAIT_MS)
    expect(bob.locator("#prompt-me")).to_be_hidden()
    j.shoot(bob, "4-cy-presses-twice")
    for _ in range(2):
        press_and_wait(table)
    for player in ("Dee", "Ann"):  # Cy lost the turn; Dee and Ann cannot play and press
        expect(table.locator("#prompt-text")).to_have_text(fill(s["prompt.turn"], player=player), timeout=WAIT_MS)
        press_and_wait(table)

    # His turn again, and he cannot play: he presses, and the outcome is staged on his button.
    expect(bob.locator("#prompt-me-text")).to_have_text(s["mine.play"], timeout=WAIT_MS)
    bob.locator("#press").tap()
    staged = [s["stage.phew"], s["stage.cards_one"], *(s[k] for k in ("stage.cards", "stage.jackpot_cards"))]
    pattern = "|".join(re.escape(text).replace(re.escape("{n}"), r"\d+") for text in staged)
    expect(bob.locator("#press-outcome")).to_have_text(re.compile(f"^(?:{pattern})$"), timeout=WAIT_MS)
    j.shoot(bob, "5-his-press")
    expect(bob.locator("#prompt-text")).to_have_text(fill(s["prompt.turn"], player="Cy"), timeout=WAIT_MS)

    # He goes out later in the round, and counts the hands left: Cy's 7 and Skip (27).
    for round_number, hands, totals in (
        (1, {"Cy": ("7", "skip")}, ["27", "0", "0", "0"]),
        (2, {"Dee": ("wild_all_hit",)}, None),
    ):
        bob.locator("#tab-round").tap()
        expect(bob.locator("#entry-title")).to_have_text(fill(s["entry.title"], round=round_number))
        bob.locator("#winner").select_option("Bob")
        for player, kinds in hands.items():
            count_hand(bob, player, kinds)
        j.shoot(bob, f"{5 + round_number}-round-{round_number}-counted")
        bob.locator("#entry-save").tap()
        if totals:
            expect(bob.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
            rows = bob.locator("#totals tbody tr")
            expect(rows.filter(has_text="Bob").locator(".total")).to_have_text(totals[0])
            j.shoot(bob, "7-scores-after-round-1")
            bob.evaluate("window.scrollTo(0, 0)")

    # 27 + 50 = 77, past the target of 60: the winner card, on his phone and the table's; no "Round saved" toast
    # (of this round, or the last one's still showing) lies over it.
    expect(bob.locator("#winner-card")).to_be_visible(timeout=WAIT_MS)
    assert bob.locator("#toast").is_hidden(), bob.locator("#toast").inner_text()
    for page in (bob, table):
        card = page.locator("#winner-card")
        expect(card).to_be_visible(timeout=WAIT_MS)
        expect(card.locator("#winner-names")).to_have_text("Bob")
        expect(card.locator("#winner-line")).to_have_text(fill(s["winner.wins"], winners="Bob"))
        expect(card.locator(".winner-rank").first.locator(".winner-total")).to_have_text("77")
        expect(card.get_by_role("button", name=s["winner.again"], exact=True)).to_be_visible()
    expect(bob.locator("#prompt-text")).to_have_text(fill(s["prompt.over"], winners="Bob"))
    j.shoot(bob, "9-the-winner")
    j.shoot(table, "9-the-winner-on-the-table-phone")
    j.close(bob, table)
