"""The game at the table on the phone page, in Debian's Chromium as a Pixel 5, against the real daemon on simulated
hardware: two phones play a Wild All Hit and score a round; classic UNO deals exact counts; the game's panels fit
narrow phones. Screenshots land in test-artifacts/ for a human to look at.
"""

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from tests import test_browser
from tests.test_browser import ARTIFACTS, WAIT_MS, catalogue, fill, open_joined, origin, watch

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parent.parent / "webui" / "static"
PAGE_BUDGET = 150 * 1024  # every asset of the page together, as transferred
RECORD_VIBRATIONS = "window.__vibrations = []; navigator.vibrate = (p) => (__vibrations.push(p), true);"
ZED = "<b>Zed</b>"  # a name that is HTML: it must show as text
CY = "Cy 🎉"


def phone(browser, playwright, home, foreign_requests, console_errors, **options) -> Page:
    """A phone that records what it vibrates, requests that leave the daemon and console errors (with their URL).
    `options` override the Pixel 5's (its locale, its viewport…)."""
    context = browser.new_context(**{**playwright.devices["Pixel 5"], "locale": "en-US", **options})
    context.add_init_script(RECORD_VIBRATIONS)
    page = context.new_page()
    page.on("request", lambda r: origin(r.url) != home and foreign_requests.append(r.url))
    page.on("console", lambda m: m.type == "error" and console_errors.append(f"{m.text} <{m.location.get('url')}>"))
    page.on("pageerror", lambda e: console_errors.append(str(e)))
    return page


def page_weight(requests: list[Request]) -> int:
    """Bytes transferred for the page's own assets (not the API or the event stream), headers included."""
    total = 0
    for request in requests:
        if urlsplit(request.url).path.startswith("/api/"):
            continue
        sizes = request.sizes()
        total += sizes["responseBodySize"] + sizes["responseHeadersSize"]
    return total


def hand_total(en: dict[str, str], points: int, cards: int | None = None) -> str:
    """A hand's total as the score sheet shows it: its points, and its cards when they were counted."""
    worth = en["entry.point_one"] if points == 1 else fill(en["entry.points"], points=points)
    if cards is None:
        return worth
    return fill(
        en["entry.hand"],
        points=worth,
        cards=en["entry.card_one"] if cards == 1 else fill(en["entry.cards"], cards=cards),
    )


def new_game(page: Page, players: list[str], ruleset: str | None = None) -> None:
    """Fill the new-game form with these players (seat order) and start the game."""
    page.locator("#tab-new").tap()
    while page.locator("#seats li").count() < len(players):
        page.locator("#seat-add").tap()
    while page.locator("#seats li").count() > len(players):
        page.locator("#seats li").last.locator("button").last.tap()
    for seat, name in zip(page.locator("#seats input").all(), players, strict=True):
        seat.fill(name)
    if ruleset is not None:
        more_rules(page)
        page.locator(f'input[name="ruleset"][value="{ruleset}"]').check()
    page.locator("#setup-start").tap()


def new_game_form(daemon_process, playwright_chromium) -> Page:
    """A joined phone on the new-game form, with "More rules" unfolded."""
    playwright, browser = playwright_chromium
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-new").tap()
    more_rules(page)
    return page


def more_rules(page: Page) -> None:
    """Unfold the new-game form's "More rules" (the players and the scoring come first)."""
    if page.locator("#setup-more").get_attribute("open") is None:
        page.locator("#setup-more summary").tap()


def press_and_wait(page: Page) -> None:
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    page.locator("#press").tap()
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)


def took_pattern(strings: dict[str, str], player: str, cause: str) -> re.Pattern[str]:
    """The feed line of a press for an attack: some cards, one card or nothing."""
    options = []
    for key in ("feed.took", "feed.took_one", "feed.took_none"):
        parts = re.split(r"\{(\w+)\}", strings[key])
        values = {"player": re.escape(player), "cause": re.escape(cause), "cards": r"\d+"}
        options.append("".join(re.escape(p) if i % 2 == 0 else values[p] for i, p in enumerate(parts)))
    return re.compile("^(?:" + "|".join(options) + ")$")


def test_two_phones_play_a_wild_all_hit_and_score_a_round(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    en = catalogue("en")
    foreign_requests, console_errors = [], []
    phone_a = phone(browser, playwright, home, foreign_requests, console_errors)
    assets: list[Request] = []
    phone_a.on("requestfinished", lambda r: assets.append(r))
    phone_b = phone(browser, playwright, home, foreign_requests, console_errors)
    for page in (phone_a, phone_b):
        open_joined(page, daemon_process)
        expect(page.locator("#tab-new")).to_have_attribute("aria-selected", "true")
    expect(phone_a.locator("#game")).to_be_visible()  # the scripts, the catalogue and the rules are in
    loaded = {urlsplit(r.url).path.rsplit("/", 1)[-1] for r in assets}
    assert {"", "app.css", "main.js", "api.js", "app.js", "game.js", "score.js", "setup.js"} <= loaded
    assert "en.json" not in loaded  # the page brings its own language's catalogue
    # The browser may fetch the icons and the manifest later (or, headless, never): count them from the disk.
    late = {"icon.svg": STATIC, "icon-180.png": STATIC, "manifest.webmanifest": STATIC.parent / "templates"}
    weight = page_weight(assets) + sum((late[f] / f).stat().st_size for f in late.keys() - loaded)
    assert weight < PAGE_BUDGET, f"the page's assets weigh {weight} bytes"

    # Phone A starts a game for three, one name HTML, one with an emoji; Ann deals, so Zed plays first.
    new_game(phone_a, ["Ann", ZED, CY])
    for page in (phone_a, phone_b):
        expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.turn"], player=ZED), timeout=WAIT_MS)
        expect(page.locator("#tab-table")).to_have_attribute("aria-selected", "true")
    game = daemon_process.get("/api/game")["game"]
    assert game["players"] == ["Ann", ZED, CY] and game["ruleset"] == "uno_attack"
    expect(phone_b.locator('#feed li[data-type="game.started"] .feed-text')).to_have_text(
        fill(en["feed.game_started"], players=f"Ann, {ZED}, and {CY}", ruleset=en["ruleset.uno_attack"])
    )
    phone_b.locator("#me").select_option(CY)  # phone B belongs to Cy

    # Zed (whose turn it is: the picker's default) played a Wild All Hit: Cy presses, then Ann.
    expect(phone_a.locator("#who input:checked")).to_have_value(ZED)
    phone_a.get_by_role("button", name=en["kind.wild_all_hit"], exact=True).tap()
    for page in (phone_a, phone_b):
        expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.once"], player=CY), timeout=WAIT_MS)
        expect(page.locator("#prompt-cause")).to_have_text(fill(en["prompt.by"], cause=en["kind.wild_all_hit"], by=ZED))
        expect(page.locator("#prompt-queue li")).to_have_text(["Ann"])
    expect(phone_b.locator('#feed li[data-type="attack.started"] .feed-text')).to_have_text(
        fill(en["feed.declared"], player=ZED, what=en["kind.wild_all_hit"])
    )
    # Phone B is Cy's: marked with a symbol and words, and it vibrated; phone A is nobody's.
    expect(phone_b.locator("#prompt")).to_have_attribute("data-me", "true")
    expect(phone_b.locator("#prompt-me-text")).to_have_text(en["mine.once"])
    expect(phone_a.locator("#prompt-me")).to_be_hidden()
    assert phone_b.evaluate("window.__vibrations") == [[200, 100, 200]]
    assert phone_a.evaluate("window.__vibrations") == []
    ARTIFACTS.mkdir(exist_ok=True)
    phone_b.screenshot(path=ARTIFACTS / "browser-game-attack.png")

    # Phone A is nobody's: its press is for whoever is asked, Cy. Phone B is Cy's: for Ann it asks first.
    press_and_wait(phone_a)
    for page in (phone_a, phone_b):
        expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.once"], player="Ann"), timeout=WAIT_MS)
        expect(page.locator("#prompt-next")).to_be_hidden()  # the queue is empty
    expect(phone_b.locator("#prompt")).not_to_have_attribute("data-me", "true")
    progress = phone_b.locator('#feed li[data-type="attack.progress"] .feed-text')
    expect(progress).to_have_text([took_pattern(en, CY, en["kind.wild_all_hit"])])
    press_and_wait(phone_b)
    expect(phone_b.locator("#press-for-text")).to_have_text(fill(en["press_for.ask"], player="Ann"))
    expect(progress).to_have_count(1)  # nothing was pressed yet
    phone_b.locator("#press-for-yes").tap()
    expect(phone_b.locator("#press-for")).to_be_hidden(timeout=WAIT_MS)
    for page in (phone_a, phone_b):  # the next player after Zed plays on
        expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.turn"], player=CY), timeout=WAIT_MS)
    expect(progress).to_have_text(
        [took_pattern(en, "Ann", en["kind.wild_all_hit"]), took_pattern(en, CY, en["kind.wild_all_hit"])]
    )
    expect(phone_b.locator('#feed li[data-type="attack.finished"] .feed-text')).to_have_text(
        fill(en["feed.attack_finished"], cause=en["kind.wild_all_hit"])
    )
    statistics = daemon_process.get("/api/game")["game"]["scoreboard"]["statistics"]
    assert [statistics[p]["presses"] for p in ("Ann", ZED, CY)] == [1, 0, 1]

    # Phone A scores the round with the card calculator; first a count the deck cannot hold.
    phone_a.locator("#tab-round").tap()
    expect(phone_a.locator("#entry-title")).to_have_text(fill(en["entry.title"], round=1))
    phone_a.locator("#winner").select_option("Ann")
    zed, cy = (phone_a.locator("#hands .hand").filter(has_text=name) for name in (ZED, CY))
    for hand in (zed, cy):
        hand.locator("summary").tap()

    def tap(hand, kind, times=1, button="card-add"):
        for _ in range(times):
            hand.locator(f'.cell[data-kind="{kind}"] .{button}').tap()

    tap(zed, "7", 3)
    tap(zed, "7", 1, "card-minus")
    tap(zed, "wild_all_hit", 2)
    tap(cy, "wild_all_hit")
    expect(zed.locator(".hand-total")).to_have_text(hand_total(en, 114, 4))
    expect(cy.locator(".hand-total")).to_have_text(hand_total(en, 50, 1))
    expect(phone_a.locator("#entry-sum")).to_have_text(fill(en["entry.sum"], points=hand_total(en, 164)))
    phone_a.locator("#entry-save").tap()
    # Worded by the page from the refusal's reason and numbers (nothing stored: the same round is refused again).
    status, refused = daemon_process.post(
        "/api/games/current/rounds",
        {"winner": "Ann", "hands": {ZED: {"7": 2, "wild_all_hit": 2}, CY: {"wild_all_hit": 1}}, "reshuffled": False},
    )
    assert status == 400 and refused["error"]["reason"] == "over_deck"
    over = fill(en["refused.over_deck"], count=3, card=en["kind.wild_all_hit"], held=f"{ZED} 2, {CY} 1", max=2)
    expect(phone_a.locator("#entry-error")).to_have_text(over)
    assert daemon_process.get("/api/game")["game"]["scoreboard"]["rounds"] == []

    tap(cy, "wild_all_hit", 1, "card-minus")
    tap(cy, "skip")
    expect(cy.locator(".hand-total")).to_have_text(hand_total(en, 20, 1))
    expect(phone_a.locator("#entry-sum")).to_have_text(fill(en["entry.sum"], points=hand_total(en, 134)))
    phone_a.locator("#entry-save").tap()
    expect(phone_a.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    expect(phone_a.locator("#entry-error")).to_be_hidden()
    assert daemon_process.get("/api/game")["game"]["scoreboard"]["totals"] == {"Ann": 134, ZED: 0, CY: 0}

    # Phone B sees the round live: its feed line, the totals, the chart with one labelled line per player.
    scored = fill(en["feed.round_scored"], round=1, winner="Ann")
    expect(phone_b.locator('#feed li[data-type="round.scored"] .feed-text')).to_have_text(scored, timeout=WAIT_MS)
    phone_b.locator("#tab-scores").tap()
    rows = phone_b.locator("#totals tbody tr")
    expect(rows.locator(".side-name")).to_have_text(["Ann", ZED, CY])
    expect(rows.locator(".total")).to_have_text(["134", "0", "0"])
    expect(rows.locator(".marker")).to_have_text(["●", "■", "▲"])
    expect(phone_b.locator("#chart .series")).to_have_count(3)
    expect(phone_b.locator("#chart .series .name")).to_have_text(["● Ann", "■ <b>Zed</…", "▲ Cy 🎉"])
    assert phone_b.locator("#chart .series").nth(1).locator("rect").count() == 2  # a square at 0 and round 1
    expect(phone_b.locator("#rounds li")).to_have_count(1)
    stats = phone_b.locator("#stats tbody tr")
    expect(stats.locator("th")).to_have_text(["Ann", ZED, CY])
    expect(stats.nth(0).locator("td")).to_have_text(["1", re.compile(r"^\d+$"), "1"])
    # The HTML name never became markup, on either phone.
    for page in (phone_a, phone_b):
        assert page.locator("b").count() == 0
    phone_b.screenshot(path=ARTIFACTS / "browser-game-scores.png", full_page=True)

    for page in (phone_a, phone_b):
        page.context.close()
    assert foreign_requests == []
    # Chromium logs every 4xx answer: the refused round above, and the press refused until phone B said yes.
    expected = [
        f"the server responded with a status of 409 (CONFLICT) <{home}/api/press>",
        f"the server responded with a status of 400 (BAD REQUEST) <{home}/api/games/current/rounds>",
    ]
    assert [next((e for e in expected if error.endswith(e)), error) for error in console_errors] == expected


def test_classic_uno_deals_seven_each_and_exact_draws(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    en = catalogue("en")
    foreign_requests, console_errors = [], []
    page = phone(browser, playwright, home, foreign_requests, console_errors)
    open_joined(page, daemon_process)
    before = daemon_process.get("/api/state")["hopper"]["dispensed"]

    new_game(page, ["Ann", "Bob", "Cy", "Dee"], ruleset="classic")
    # Seed 000's classic UNO: the dealer (Ann, the first seat) plays first (tests/test_game_start_choices.py).
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.turn"], player="Ann"), timeout=WAIT_MS)
    assert daemon_process.get("/api/game")["game"]["ruleset"] == "classic"
    # Classic UNO has its own declarations, and no UNO Attack cards.
    expect(page.get_by_role("button", name=en["kind.draw_two"], exact=True)).to_be_visible()
    expect(page.get_by_role("button", name=en["kind.hit_2"], exact=True)).to_have_count(0)

    page.get_by_role("button", name=en["decl.deal"], exact=True).tap()
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.cards"], player="Bob", n=7), timeout=WAIT_MS)
    expect(page.locator("#prompt-queue li")).to_have_text(["Cy🃏\ufe0f7", "Dee🃏\ufe0f7", "Ann🃏\ufe0f7"])
    demands = daemon_process.get("/api/game")["game"]["table"]["demands"]
    assert [(d["player"], d["cards"]) for d in demands] == [("Bob", 7), ("Cy", 7), ("Dee", 7), ("Ann", 7)]

    for dealt, following in [("Bob", "Cy"), ("Cy", "Dee"), ("Dee", "Ann"), ("Ann", None)]:
        press_and_wait(page)
        line = page.locator('#feed li[data-type="launcher.dealt"] .feed-text').first
        expect(line).to_have_text(fill(en["feed.dealt"], player=dealt, cards=7), timeout=WAIT_MS)
        if following:
            expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.cards"], player=following, n=7))
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.turn"], player="Ann"), timeout=WAIT_MS)
    state = daemon_process.get("/api/state")
    assert state["hopper"]["dispensed"] == before + 28 == state["hardware"]["sim_cards_out"]

    # Ann plays a Draw Two: Bob's next press takes exactly 2.
    expect(page.locator("#who input:checked")).to_have_value("Ann")
    page.get_by_role("button", name=en["kind.draw_two"], exact=True).tap()
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.cards"], player="Bob", n=2), timeout=WAIT_MS)
    press_and_wait(page)
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.turn"], player="Cy"), timeout=WAIT_MS)
    assert daemon_process.get("/api/state")["hopper"]["dispensed"] == before + 30

    page.locator("#tab-scores").tap()
    expect(page.locator("#stats tbody tr").locator("td:nth-of-type(2)")).to_have_text(["7", "9", "7", "7"])
    page.context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_a_round_is_corrected_and_the_last_one_taken_back_from_a_phone(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    en = catalogue("en")
    foreign_requests, console_errors = [], []
    status, _ = daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"], "mode": "lowest_total"})
    assert status == 201
    for body in [
        {"winner": "Ann", "hands": {"Bob": {"7": 1}, "Cy": 20}},
        {"winner": "Bob", "hands": {"Ann": 10, "Cy": {"skip": 1}}},
    ]:
        assert daemon_process.post("/api/games/current/rounds", body)[0] == 201
    page = phone(browser, playwright, home, foreign_requests, console_errors)
    open_joined(page, daemon_process)
    page.locator("#tab-scores").tap()
    totals = page.locator("#totals tbody .total")
    expect(totals).to_have_text(["10", "7", "40"])
    expect(page.locator("#rounds li strong")).to_have_text(
        [fill(en["scores.round"], round=2, winner="Bob"), fill(en["scores.round"], round=1, winner="Ann")]
    )

    # Correct round 1: the form comes back as entered (cards for Bob, a typed total for Cy).
    page.get_by_role("button", name=fill(en["scores.edit_round"], round=1)).tap()
    expect(page.locator("#entry-title")).to_have_text(fill(en["entry.edit_title"], round=1))
    expect(page.locator("#winner")).to_have_value("Ann")
    bob, cy = (page.locator("#hands .hand").filter(has_text=name) for name in ("Bob", "Cy"))
    expect(bob.locator(".hand-total")).to_have_text(hand_total(en, 7, 1))
    expect(cy.locator(".hand-total")).to_have_text(hand_total(en, 20))
    cy.locator("summary").tap()
    cy.locator("input[type=number]").fill("30")
    save = page.locator("#entry-save")
    expect(save).to_have_text(fill(en["entry.save_edit"], round=1))
    save.tap()
    expect(page.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    expect(totals).to_have_text(["10", "7", "50"])
    expect(page.locator('#feed li[data-type="round.edited"] .feed-text')).to_have_text(
        fill(en["feed.round_edited"], round=1), timeout=WAIT_MS
    )
    assert daemon_process.get("/api/game")["game"]["scoreboard"]["rounds"][0]["hands"]["Cy"] == 30

    # Take back round 2: the first tap asks, the second does it.
    undo = page.locator("#undo")
    expect(undo).to_have_text("↶ " + fill(en["scores.undo"], round=2))
    undo.tap()
    expect(undo).to_have_text("↶ " + fill(en["scores.undo_confirm"], round=2))
    assert len(daemon_process.get("/api/game")["game"]["scoreboard"]["rounds"]) == 2
    undo.tap()
    expect(totals).to_have_text(["0", "7", "30"], timeout=WAIT_MS)
    expect(page.locator("#rounds li")).to_have_count(1)
    expect(page.locator('#feed li[data-type="round.undone"] .feed-text')).to_have_text(
        fill(en["feed.round_undone"], round=2), timeout=WAIT_MS
    )
    page.context.close()
    assert foreign_requests == []
    assert console_errors == []


# A game in every state a panel can show: teams, rounds with an elimination, an attack with its queue.
TEAM_GAME = {
    "players": ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay"],
    "teams": {"Team A": ["Ann", "Cy", "Eve"], "Team B": ["Bob", "Dee", "Fay"]},
    "mode": "lowest_total",
    "target": 250,
    "house_rules": {"stacking": True, "reshuffle_doubles": True, "multiple_identical": True},
}
SOLO_GAME = {
    "players": ["Ann", ZED, CY, "Dee with a very long name indeed"],
    "mode": "elimination",
    "target": 100,
    "ruleset": "classic",
    "house_rules": {"red_zero_100": True, "party_penalties": True},
}
TARGETS = "button, select, summary, a, input[type=text], input[type=number], .chip, .choice, .check"


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [393, 320])
def test_game_panels_fit_narrow_phones_with_48px_targets(daemon_process, playwright_chromium, color_scheme, width):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    teams = width == 393
    game = TEAM_GAME if teams else SOLO_GAME
    status, _ = daemon_process.post("/api/games", game)
    assert status == 201
    if teams:
        rounds = [("Ann", {"Bob": 30, "Cy": 12, "Dee": 44, "Eve": 0, "Fay": 9}), ("Bob", {"Ann": 61, "Cy": 20})]
    else:
        rounds = [("Ann", {ZED: {"0": 1, "draw_two": 1}, CY: 35, "Dee with a very long name indeed": 120})]
    for winner, hands in rounds:
        if teams:
            hands = {p: hands.get(p, 0) for p in TEAM_GAME["players"] if p != winner}
        status, answer = daemon_process.post("/api/games/current/rounds", {"winner": winner, "hands": hands})
        assert status == 201, answer
    kind = "wild_all_hit" if teams else "wild_draw_four"
    current = daemon_process.get("/api/game")["game"]["table"]["current"]
    status, answer = daemon_process.post("/api/attacks", {"kind": kind, "by": current})
    assert status == 200, answer

    device = {**playwright.devices["Pixel 5"], "viewport": {"width": width, "height": 727 if width == 393 else 568}}
    locale = "en-US" if teams else "zh-TW"
    foreign_requests, console_errors = [], []
    page = browser.new_context(**device, locale=locale, color_scheme=color_scheme).new_page()
    watch(page, home, foreign_requests, console_errors)
    open_joined(page, daemon_process)
    expect(page.locator("#prompt")).to_have_attribute("data-state", "demand", timeout=WAIT_MS)
    ARTIFACTS.mkdir(exist_ok=True)
    name = f"browser-game-{width}-{color_scheme}"
    page.screenshot(path=ARTIFACTS / f"{name}.png")  # the first screen with the prompt
    page.locator("#me").select_option(index=2)
    for tab in ["table", "round", "scores", "new", "rules"]:
        page.locator(f"#tab-{tab}").tap()
        expect(page.locator(f"#panel-{tab}")).to_be_visible()
        if tab == "round":
            page.locator("#winner").select_option(index=1)
            page.locator("#hands .hand summary").first.tap()
        if tab == "new":
            # The form starts from the game in play; with four seats, two teams of two.
            expect(page.locator("#seats li")).to_have_count(len(game["players"]))
            while page.locator("#seats li").count() > 4:
                page.locator("#seats li").last.locator("button").last.tap()
            while page.locator("#seats li").count() < 4:
                page.locator("#seat-add").tap()
            more_rules(page)
            page.locator("#teams").select_option(index=1)
        page.locator("#game").screenshot(path=ARTIFACTS / f"{name}-{tab}.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, tab
        small = page.evaluate(
            """(selector) => [...document.querySelectorAll(selector)]
                .filter((e) => e.getClientRects().length && e.closest('.game'))
                .map((e) => [e.id || e.className || e.tagName, e.getBoundingClientRect().height])
                .filter(([, height]) => height < 47.5)""",
            TARGETS,
        )
        assert small == [], tab
    page.context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_a_round_won_on_a_hit_2_is_scored_with_the_penalty_carried_from_the_page(daemon_process, playwright_chromium):
    """Ann goes out on a Hit 2: the next player still owes two presses. Scoring at once is refused with what is
    owed, and the page offers to score anyway, carrying the presses into the next round."""
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    en = catalogue("en")
    foreign_requests, console_errors = [], []
    assert daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
    assert daemon_process.post("/api/attacks", {"kind": "hit2", "by": "Ann"})[0] == 200
    page = phone(browser, playwright, home, foreign_requests, console_errors)
    open_joined(page, daemon_process)
    page.locator("#tab-round").tap()
    page.locator("#winner").select_option("Ann")
    for name, points in (("Bob", "12"), ("Cy", "30")):
        hand = page.locator("#hands .hand").filter(has_text=name)
        hand.locator("summary").tap()
        hand.get_by_text(en["entry.by_total"]).tap()
        hand.locator("input[type=number]").fill(points)
    carry = page.locator("#entry-carry")
    expect(carry).to_be_hidden()
    page.locator("#entry-save").tap()
    expect(page.locator("#entry-error")).to_contain_text("Bob", timeout=WAIT_MS)  # who still owes, by name
    expect(carry).to_have_text(en["entry.carry"])
    assert daemon_process.get("/api/game")["game"]["scoreboard"]["rounds"] == []  # nothing stored
    carry.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "browser-game-attacks-open.png")
    carry.tap()
    expect(page.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    game = daemon_process.get("/api/game")["game"]
    assert len(game["scoreboard"]["rounds"]) == 1
    owed = game["table"]["demands"]
    assert owed and owed[0]["player"] == "Bob" and owed[0]["carried"], owed
    page.context.close()
    assert foreign_requests == []
    # Chromium logs every 4xx answer: the one refused round is the only one.
    assert console_errors == [
        f"Failed to load resource: the server responded with a status of 409 (CONFLICT) "
        f"<{home}/api/games/current/rounds>"
    ]


def test_the_new_game_form_seats_nine_for_uno_attack_and_ten_for_classic(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-new").tap()
    add = page.locator("#seat-add")
    while add.is_enabled() and page.locator("#seats li").count() < 12:
        add.tap()
    expect(page.locator("#seats li")).to_have_count(9)  # UNO Attack is for 2 to 9
    more_rules(page)
    page.locator('input[name="ruleset"][value="classic"]').check()
    expect(add).to_be_enabled()
    add.tap()
    expect(page.locator("#seats li")).to_have_count(10)
    expect(add).to_be_disabled()
    page.locator('input[name="ruleset"][value="uno_attack"]').check()
    expect(page.locator("#seats li")).to_have_count(9)  # back to UNO Attack: the tenth seat goes
    page.context.close()


def test_classic_uno_offers_the_beginners_deal_of_five(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    new_game(page, ["Ann", "Bob", "Cy"], ruleset="classic")
    page.get_by_role("button", name=en["decl.deal_5"], exact=True).tap()
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.cards"], player="Bob", n=5), timeout=WAIT_MS)
    demands = daemon_process.get("/api/game")["game"]["table"]["demands"]
    assert [(d["player"], d["cards"]) for d in demands] == [("Bob", 5), ("Cy", 5), ("Ann", 5)]
    page.context.close()


def test_stacking_from_the_page_picks_the_player_being_hit(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    game = {"players": ["Ann", "Bob", "Cy"], "house_rules": {"stacking": True}}
    assert daemon_process.post("/api/games", game)[0] == 201
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-table").tap()
    expect(page.locator("#who input:checked")).to_have_value("Bob")  # whose turn it is (Ann deals)
    page.get_by_role("button", name=en["kind.hit_2"], exact=True).tap()
    expect(page.locator("#who input:checked")).to_have_value("Cy", timeout=WAIT_MS)  # the one hit: may stack
    page.get_by_role("button", name=en["kind.hit_2"], exact=True).tap()
    expect(page.locator("#declare-error")).to_be_hidden()
    pending = daemon_process.get("/api/game")["game"]["table"]["pending"]
    assert (pending["player"], pending["presses"]) == ("Ann", 4)
    page.context.close()


def test_the_first_card_is_offered_only_until_the_round_is_under_way(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    assert daemon_process.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-table").tap()
    go = page.locator("#first-card-go")
    expect(go).to_be_visible()
    expect(go).to_have_text(en["table.first_card_go"])
    page.get_by_role("button", name=en["kind.hit_2"], exact=True).tap()  # Bob plays: the round is under way
    expect(go).to_be_hidden(timeout=WAIT_MS)
    expect(page.locator("#first-card")).to_be_hidden()
    page.context.close()


def test_two_wild_draw_fours_at_once_are_declared_from_the_page(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    game = {"players": ["Ann", "Bob", "Cy"], "ruleset": "classic", "house_rules": {"multiple_identical": True}}
    assert daemon_process.post("/api/games", game)[0] == 201
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-table").tap()
    page.locator("#count").select_option("2")
    page.get_by_role("button", name=en["kind.wild_draw_four"], exact=True).tap()  # by Ann: classic's dealer starts
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.cards"], player="Bob", n=8), timeout=WAIT_MS)
    page.context.close()


def test_the_forgotten_uno_penalty_is_the_tables_own_number(daemon_process, playwright_chromium):
    en = catalogue("en")
    page = new_game_form(daemon_process, playwright_chromium)
    expect(page.locator("#forgot-uno")).to_have_value("2")  # the official rules
    page.locator("#forgot-uno").fill("3")
    new_game(page, ["Ann", "Bob", "Cy"])
    expect(page.locator("#tab-table")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    assert daemon_process.get("/api/game")["game"]["house_rules"]["forgot_uno_penalty"] == 3
    # Two players catch Bob, who just played: one tap, 3 presses for each of them; the button says the table's 3.
    assert daemon_process.post("/api/attacks", {"kind": "played", "by": "Bob"})[0] == 200
    page.locator("#tab-table").tap()
    button = page.locator('#decl-penalties button[data-kind="uno_penalty"]')
    expect(button).to_contain_text(fill(en["decl.uno_penalty"], forgot_uno_penalty=3))
    expect(page.locator("#catchers option")).to_have_count(2)  # the other players
    page.locator('#who input[value="Bob"]').check(force=True)
    page.locator("#catchers").select_option("2")
    button.tap()
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.times"], player="Bob", n=6), timeout=WAIT_MS)
    page.context.close()


def test_a_play_out_of_turn_is_named_in_the_feed_and_a_jump_in_with_the_house_rule(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en, hant = catalogue("en"), catalogue("zh-Hant")
    english = phone(browser, playwright, origin(daemon_process.url), [], [])
    chinese = phone(browser, playwright, origin(daemon_process.url), [], [], locale="zh-TW")
    for page in (english, chinese):
        open_joined(page, daemon_process)
    for jump_in, key in ((False, "feed.out_of_turn"), (True, "feed.jumped_in")):
        status, _ = daemon_process.post(
            "/api/games", {"players": ["Ann", "Bob", "Cy"], "dealer": "Cy", "house_rules": {"jump_in": jump_in}}
        )
        assert status == 201
        status, _ = daemon_process.post("/api/attacks", {"kind": "played", "by": "Bob"})  # Ann's turn
        assert status == 200
        for page, strings in ((english, en), (chinese, hant)):
            line = page.locator('#feed li[data-type="attack.started"] .feed-text').first  # the newest
            expect(line).to_have_text(
                f"{fill(strings['feed.played'], player='Bob')} {fill(strings[key], player='Ann')}", timeout=WAIT_MS
            )
    for page in (english, chinese):
        page.context.close()


# --- scoring modes and endings -------------------------------------------------------------------------------------

FOUR = ["Ann", "Bob", "Cy", "Dee"]


def test_a_knock_out_round_from_the_page_and_the_loser_named_in_every_language(daemon_process, playwright_chromium):
    """Bob goes out first (declared from the table); Cy, then Ann; Dee is left holding cards. The page pre-fills the
    finishing order from the table, the scorer corrects it, and only Dee's hand is asked. Later Dee busts: the
    banner names Bob the winner and Dee the loser, in English and in Chinese."""
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    en, zh = catalogue("en"), catalogue("zh-Hans")
    foreign_requests, console_errors = [], []
    assert daemon_process.post("/api/games", {"players": FOUR, "mode": "knock_out", "target": 100})[0] == 201
    page = phone(browser, playwright, home, foreign_requests, console_errors)
    open_joined(page, daemon_process)
    page.locator("#tab-table").tap()
    page.locator("#who label").filter(has_text="Bob").tap()
    page.get_by_role("button", name=en["decl.went_out"], exact=True).tap()
    expect(page.locator("#table-status")).to_contain_text(fill(en["table.out"], players="Bob"), timeout=WAIT_MS)
    expect(page.locator('#who input[value="Bob"]')).to_be_disabled()
    assert daemon_process.get("/api/game")["game"]["table"]["out"] == ["Bob"]

    page.locator("#tab-round").tap()
    expect(page.locator("#winner-row")).to_be_hidden()
    expect(page.locator("#last-card-row")).to_be_hidden()  # the house rule is off
    places = page.locator("#order li .order-name")
    expect(places).to_have_text([re.compile("^Bob"), re.compile("^Ann"), re.compile("^Cy"), re.compile("^Dee")])
    page.get_by_role("button", name=fill(en["entry.order_up"], player="Cy")).tap()  # Cy went out before Ann
    expect(places).to_have_text([re.compile("^Bob"), re.compile("^Cy"), re.compile("^Ann"), re.compile("^Dee")])
    expect(page.locator('#order li[data-loser="true"]')).to_contain_text(en["entry.order_loser"])
    hands = page.locator("#hands .hand")
    expect(hands).to_have_count(1)
    expect(hands.locator(".hand-name")).to_have_text("Dee")
    hands.locator("summary").tap()
    for kind in ("wild", "7"):
        hands.locator(f'.cell[data-kind="{kind}"] .card-add').tap()
    expect(page.locator("#entry-sum")).to_have_text(fill(en["entry.sum"], points=hand_total(en, 57)))
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#game").screenshot(path=ARTIFACTS / "browser-game-knock-out-round.png")
    page.locator("#entry-save").tap()
    expect(page.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    board = daemon_process.get("/api/game")["game"]["scoreboard"]
    assert board["rounds"][0]["order"] == ["Bob", "Cy", "Ann", "Dee"] and board["totals"]["Dee"] == 57
    expect(page.locator("#rounds li .round-order")).to_have_text(fill(en["scores.order"], order="Bob › Cy › Ann › Dee"))
    expect(page.locator("#stats tbody td.places")).to_have_text(["3", "1", "2", "4"])
    assert daemon_process.get("/api/game")["game"]["table"]["dealer"] == "Dee"  # the loser deals
    # The correction form comes back with the round's own order and the loser's hand.
    page.get_by_role("button", name=fill(en["scores.edit_round"], round=1)).tap()
    expect(places).to_have_text([re.compile("^Bob"), re.compile("^Cy"), re.compile("^Ann"), re.compile("^Dee")])
    expect(hands.locator(".hand-total")).to_have_text(hand_total(en, 57, 2))
    page.locator("#entry-cancel").tap()

    for order, loser, points in [(["Bob", "Dee", "Cy", "Ann"], "Ann", 30), (["Bob", "Ann", "Dee", "Cy"], "Cy", 20),
                                 (FOUR, "Dee", 50)]:  # fmt: skip
        body = {"order": order, "hands": {loser: points}}
        assert daemon_process.post("/api/games/current/rounds", body)[0] == 201
    over = page.locator("#over")
    expect(over).to_have_text("🏆 " + fill(en["scores.over_losers"], winners="Bob", losers="Dee"), timeout=WAIT_MS)
    expect(page.locator('#totals tr[data-side="Dee"] .badge')).to_have_text("💥 " + en["scores.lost"])
    page.locator("#game").screenshot(path=ARTIFACTS / "browser-game-knock-out-scores.png")
    page.context.close()

    chinese = phone(browser, playwright, home, foreign_requests, console_errors, locale="zh-CN")
    open_joined(chinese, daemon_process)
    chinese.locator("#tab-scores").tap()
    expect(chinese.locator("#over")).to_have_text("🏆 " + fill(zh["scores.over_losers"], winners="Bob", losers="Dee"))
    chinese.context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_the_scoring_form_is_drawn_from_the_daemons_scoring_options(daemon_process, playwright_chromium):
    """Modes, target presets and limits, and a house rule that scores only some modes, come from rules.scoring."""
    en = catalogue("en")
    page = new_game_form(daemon_process, playwright_chromium)
    modes = page.locator('input[name="mode"]')
    expect(modes).to_have_count(5)
    assert [modes.nth(i).get_attribute("value") for i in range(5)] == [
        "winner_collects", "lowest_total", "elimination", "knock_out", "chips",
    ]  # fmt: skip
    expect(page.locator('input[name="mode"][value="winner_collects"]')).to_be_checked()  # the default
    expect(page.locator("#mode-choices")).to_contain_text(en["mode.chips_about"])
    expect(page.locator('input[name="target"][value="500"]')).to_be_checked()
    expect(page.locator('input[name="target"]')).to_have_count(4)  # 100, 250, 500 and another
    expect(page.locator("#target-other")).to_have_attribute("max", "100000")
    one_loser = page.locator('input[name="house"][value="highest_bust_loses"]')
    expect(one_loser).to_have_count(0)  # winner collects names no loser
    page.locator('input[name="mode"][value="lowest_total"]').check()
    one_loser.check()
    page.locator('input[name="mode"][value="winner_collects"]').check()
    expect(one_loser).to_have_count(0)
    page.locator('input[name="mode"][value="knock_out"]').check()
    expect(one_loser).to_be_checked()
    new_game(page, ["Ann", "Bob", "Cy"])
    expect(page.locator("#tab-table")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    game = daemon_process.get("/api/game")["game"]
    assert (game["mode"], game["target"], game["house_rules"]["highest_bust_loses"]) == ("knock_out", 500, True)


def test_chips_and_the_elimination_ending_are_chosen_in_the_new_game_form(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    page = phone(browser, playwright, origin(daemon_process.url), [], [])
    open_joined(page, daemon_process)
    page.locator("#tab-new").tap()
    final = page.locator("#final-row")
    expect(final).to_be_hidden()
    page.locator('input[name="mode"][value="elimination"]').check()
    expect(final).to_be_visible()
    expect(page.locator('input[name="final"][value="last_standing"]')).to_be_checked()  # the seeds' ending
    expect(page.locator("#grules-mode")).to_contain_text(en["final.last_standing_about"])
    page.locator('input[name="final"][value="next_round"]').check()
    expect(page.locator("#grules-mode")).to_contain_text(en["final.next_round_about"])
    new_game(page, ["Ann", "Bob", "Cy"])
    expect(page.locator("#tab-table")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    assert daemon_process.get("/api/game")["game"]["final"] == "next_round"
    page.locator("#tab-scores").tap()
    mode = fill(en["scores.mode"], mode=en["mode.elimination"], target=500)
    expect(page.locator("#scores-mode")).to_have_text(f"{mode} · {en['final.next_round']}")

    # Knock-out play has no teams; chips show the bust line and name the bust player.
    page.locator("#tab-new").tap()
    while page.locator("#seats li").count() < 4:
        page.locator("#seat-add").tap()
    more_rules(page)
    page.locator("#teams").select_option(index=1)
    page.locator('input[name="mode"][value="knock_out"]').check()
    expect(page.locator("#teams")).to_be_disabled()
    expect(final).to_be_hidden()
    page.locator('input[name="mode"][value="chips"]').check()
    page.locator('input[name="target"][value="100"]').check()
    new_game(page, ["Ann", "Bob", "Cy"])
    page.locator("#setup-start").tap()  # a second tap: the game in play is put away
    expect(page.locator("#tab-table")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    game = daemon_process.get("/api/game")["game"]
    assert (game["mode"], game["target"], game["final"], game["teams"]) == ("chips", 100, None, None)
    for winner, hands in [("Ann", {"Bob": 30, "Cy": 20}), ("Bob", {"Ann": 10, "Cy": 85})]:
        assert daemon_process.post("/api/games/current/rounds", {"winner": winner, "hands": hands})[0] == 201
    page.locator("#tab-scores").tap()
    expect(page.locator("#totals tbody .total")).to_have_text(["40", "65", "-105"], timeout=WAIT_MS)
    expect(page.locator("#scores-mode")).to_have_text(fill(en["scores.mode_chips"], mode=en["mode.chips"], target=100))
    expect(page.locator("#over")).to_have_text("🏆 " + fill(en["scores.over_losers"], winners="Bob", losers="Cy"))
    expect(page.locator("#chart .target")).to_have_count(1)
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#game").screenshot(path=ARTIFACTS / "browser-game-chips.png")
    page.context.close()


def test_the_last_card_is_asked_with_the_house_rule_and_offered_from_the_table(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    en = catalogue("en")
    foreign_requests, console_errors = [], []
    game = {"players": ["Ann", "Bob", "Cy"], "house_rules": {"last_card_not_action": True}}
    assert daemon_process.post("/api/games", game)[0] == 201
    page = phone(browser, playwright, home, foreign_requests, console_errors)
    open_joined(page, daemon_process)
    page.locator("#tab-table").tap()
    expect(page.get_by_role("button", name=en["decl.went_out"], exact=True)).to_have_count(0)  # not knock-out
    page.get_by_role("button", name=en["kind.skip"], exact=True).tap()  # Bob (whose turn it is) plays a Skip
    expect(page.locator("#table-status")).to_contain_text(fill(en["table.turn"], player="Ann"), timeout=WAIT_MS)

    page.locator("#tab-round").tap()
    expect(page.locator("#last-card-row")).to_be_visible()
    page.locator("#winner").select_option("Ann")
    page.locator("#entry-save").tap()
    expect(page.locator("#entry-error")).to_have_text(fill(en["entry.no_last_card"], player="Ann"))
    page.locator("#winner").select_option("Bob")
    expect(page.locator("#last-card")).to_have_value("skip")  # what the table was told Bob played
    page.locator("#entry-save").tap()
    expect(page.locator("#entry-error")).to_contain_text("Bob cannot go out on a Skip", timeout=WAIT_MS)
    assert daemon_process.get("/api/game")["game"]["scoreboard"]["rounds"] == []
    page.locator("#last-card").select_option("7")
    page.locator("#entry-save").tap()
    expect(page.locator("#tab-scores")).to_have_attribute("aria-selected", "true", timeout=WAIT_MS)
    assert daemon_process.get("/api/game")["game"]["scoreboard"]["rounds"][0]["last_card"] == "7"
    expect(page.locator("#rounds li .badge")).to_have_text(f"🃏\ufe0f {fill(en['scores.last_card'], card='7')}")
    page.context.close()
    assert foreign_requests == []
    assert [e.split(" <")[0] for e in console_errors] == [
        "Failed to load resource: the server responded with a status of 400 (BAD REQUEST)"
    ]
