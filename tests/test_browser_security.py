"""Hostile text and the page's own policy, in Debian's Chromium as a Pixel 5, against the real daemon on simulated
hardware: player names that are HTML and script show as text in every panel, read on load or delivered live; the
page's Content-Security-Policy allows no inline script and the page keeps to it; it asks nothing of any other site.
"""

import re
import urllib.request
from html.parser import HTMLParser

import pytest
from playwright.sync_api import Page, expect

from tests import test_browser
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, origin

playwright_chromium = test_browser.playwright_chromium  # the same module-scoped fixture: one Chromium per module

pytestmark = pytest.mark.browser

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=2</script>"
SVG = '"><svg onload=window.__pwned=3>'
LEE = "李小龍"
PLAYERS = [IMG, SCRIPT, SVG, LEE]
TABS = ["table", "round", "scores", "new", "rules"]
# Every policy violation, recorded from before the page's first script runs.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => __violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`), true);
"""
# What a name taken as markup would leave behind: a handler attribute, a script not the page's, or a flag set.
INJECTED = """() => ({
  pwned: typeof window.__pwned,
  handlers: [...document.querySelectorAll("*")].flatMap((e) =>
    [...e.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${e.tagName} ${a.name}`)),
  scripts: [...document.scripts].filter((s) => s.type !== "application/json").map((s) => s.getAttribute("src")),
  planted: document.querySelectorAll('img[src="x"], svg[onload], script:not([src]):not(#strings)').length,
})"""


# The page's catalogue comes inside it as a data block (webui/page.py): a script of a type no browser runs.
DATA_BLOCK = "application/json"


class Markup(HTMLParser):
    """The served page's scripts, and any inline code: script or style text, style or on* attributes, javascript:."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.scripts: list[str | None] = []
        self.inline: list[str] = []
        self.data_blocks = 0
        self._in = ""
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name.startswith("on") or name == "style" or (value or "").strip().lower().startswith("javascript:"):
                self.inline.append(f"<{tag} {name}={value!r}>")
        if tag == "script" and dict(attrs).get("type") == DATA_BLOCK:
            self.data_blocks += 1  # data, never run: its text is no code
            self._in = "data"
            return
        if tag == "script":
            self.scripts.append(dict(attrs).get("src"))
        self._in = tag

    def handle_endtag(self, tag: str) -> None:
        self._in = ""

    def handle_data(self, data: str) -> None:
        if self._in in ("script", "style") and data.strip():
            self.inline.append(f"<{self._in}>{data.strip()[:60]}")


def served_page(url: str) -> tuple[str, list[str]]:
    """The HTML of GET / and its Content-Security-Policy headers."""
    with urllib.request.urlopen(url + "/") as response:
        return response.read().decode("utf-8"), response.headers.get_all("Content-Security-Policy") or []


def policy(header: str) -> dict[str, list[str]]:
    directives = (part.split() for part in header.split(";") if part.strip())
    return {words[0].lower(): words[1:] for words in directives}


def chart_label(index: int, name: str) -> str:
    """A name at the end of its chart line: its marker, and cut to 9 characters as the chart does."""
    short = name if len(name) <= 9 else name[:8] + "…"
    return f"{'●■▲◆'[index]} {short}"


def set_the_table(daemon_process) -> None:
    """A game of the hostile names with one scored round and an attack open, as the page finds it on load."""
    calls = [
        ("/api/games", {"players": PLAYERS}),
        ("/api/games/current/rounds", {"winner": SVG, "hands": {IMG: 10, SCRIPT: 20, LEE: 30}}),
        ("/api/attacks", {"kind": "turn", "player": SCRIPT}),
        ("/api/attacks", {"kind": "wild_all_hit", "by": SCRIPT}),  # SVG presses, then 李小龍, then IMG
    ]
    for path, body in calls:
        status, answer = daemon_process.post(path, body)
        assert status in (200, 201), answer


def phone(browser, playwright, **options) -> Page:
    context = browser.new_context(**{**playwright.devices["Pixel 5"], "locale": "en-US", **options})
    context.add_init_script(RECORD_VIOLATIONS)
    return context.new_page()


def expect_inert(page: Page, own_scripts: list[str | None]) -> None:
    """No name became markup: nothing ran, and the DOM holds no handler or script but the page's own."""
    found = page.evaluate(INJECTED)
    assert found == {"pwned": "undefined", "handlers": [], "scripts": own_scripts, "planted": 0}


def test_hostile_names_show_as_text_in_every_panel_on_load_and_live(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    en = catalogue("en")
    own_scripts = Markup(served_page(daemon_process.url)[0]).scripts
    set_the_table(daemon_process)
    # Without the policy, so that a name taken as markup would run: the escaping is proven on its own.
    page = phone(browser, playwright, bypass_csp=True)
    page.goto(daemon_process.url + "/")  # reading needs no PIN
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)

    # The prompt: who must press, who played the card, who comes next.
    expect(page.locator("#prompt-text")).to_have_text(fill(en["prompt.once"], player=SVG), timeout=WAIT_MS)
    expect(page.locator("#prompt-cause")).to_have_text(fill(en["prompt.by"], cause=en["kind.wild_all_hit"], by=SCRIPT))
    expect(page.locator("#prompt-queue li")).to_have_text([LEE, IMG])
    # The feed, replayed from before the page opened.
    started = page.locator('#feed li[data-type="game.started"] .feed-text')
    for name in PLAYERS:
        expect(started).to_contain_text(name)
    declared = fill(en["feed.declared"], player=SCRIPT, what=en["kind.wild_all_hit"])
    expect(page.locator('#feed li[data-type="attack.started"] .feed-text').first).to_have_text(declared)
    expect(page.locator('#feed li[data-type="round.scored"] .feed-text')).to_have_text(
        fill(en["feed.round_scored"], round=1, winner=SVG)
    )
    expect_inert(page, own_scripts)

    for tab in TABS:
        page.locator(f"#tab-{tab}").tap()
        expect(page.locator(f"#panel-{tab}")).to_be_visible()
        if tab == "table":
            expect(page.locator("#table-status")).to_contain_text(fill(en["table.dealer"], player=SVG))
            expect(page.locator("#me option:not([value=''])")).to_have_text(PLAYERS)
            expect(page.locator("#who label")).to_have_text(PLAYERS)
            for name in PLAYERS:
                expect(page.locator("#who").get_by_text(name, exact=True)).to_be_visible()
        if tab == "round":
            expect(page.locator("#winner option:not([value=''])")).to_have_text(PLAYERS)
            expect(page.locator("#hands .hand-name")).to_have_text(PLAYERS)
        if tab == "scores":
            expect(page.locator("#totals .side-name")).to_have_text(PLAYERS)
            expect(page.locator("#stats tbody th")).to_have_text(PLAYERS)
            expect(page.locator("#chart .series .name")).to_have_text([chart_label(*s) for s in enumerate(PLAYERS)])
            expect(page.locator("#rounds li strong")).to_have_text([fill(en["scores.round"], round=1, winner=SVG)])
        if tab == "new":  # the form starts from the game in play
            seats = page.locator("#seats input")
            expect(seats).to_have_count(len(PLAYERS))
            assert [seat.input_value() for seat in seats.all()] == PLAYERS
            expect(page.locator("#setup-dealer option")).to_have_text(PLAYERS)
        expect_inert(page, own_scripts)

    # Live, over the event stream: a penalty naming IMG, then a round that IMG wins.
    page.locator("#tab-scores").tap()
    cancel_everything_owed(daemon_process)  # the Wild All Hit: a card may be played again only once nothing holds play
    assert (
        daemon_process.post("/api/attacks", {"kind": "played", "by": IMG})[0] == 200
    )  # caught on the card just played
    status, answer = daemon_process.post("/api/attacks", {"kind": "uno_penalty", "player": IMG})
    assert status == 200, answer
    penalty = fill(en["feed.declared"], player=IMG, what=fill(en["decl.uno_penalty"], forgot_uno_penalty=2))
    expect(page.locator('#feed li[data-type="attack.started"] .feed-text').first).to_have_text(penalty, timeout=WAIT_MS)
    cancel_everything_owed(daemon_process)
    status, answer = daemon_process.post(
        "/api/games/current/rounds", {"winner": IMG, "hands": {SCRIPT: 1, SVG: 2, LEE: 3}}
    )
    assert status == 201, answer
    expect(page.locator('#feed li[data-type="round.scored"] .feed-text').first).to_have_text(
        fill(en["feed.round_scored"], round=2, winner=IMG), timeout=WAIT_MS
    )
    expect(page.locator("#rounds li strong").first).to_have_text(fill(en["scores.round"], round=2, winner=IMG))
    expect_inert(page, own_scripts)
    page.context.close()


def cancel_everything_owed(daemon_process) -> None:
    """A cancel drops the newest of what is owed (a penalty, a Wild All Hit): cancel until nothing is."""
    for _ in range(len(PLAYERS) + 2):
        if not daemon_process.get("/api/game")["game"]["table"]["demands"]:
            return
        status, answer = daemon_process.post("/api/attacks", {"kind": "cancel"})
        assert status == 200, answer
    raise AssertionError("demands still owed after cancelling every one")


def test_the_policy_allows_no_inline_script_and_the_page_has_none(daemon_process):
    html, headers = served_page(daemon_process.url)
    assert len(headers) == 1, headers
    rules = policy(headers[0])
    # Only the page's own files may run; a <base> or a plugin could otherwise bring script from elsewhere.
    assert rules.get("script-src", rules.get("default-src")) == ["'self'"], headers[0]
    assert "'unsafe-inline'" not in rules.get("style-src", rules.get("default-src", [])), headers[0]
    assert rules.get("object-src") == ["'none'"], headers[0]
    assert rules.get("base-uri") in (["'none'"], ["'self'"]), headers[0]
    markup = Markup(html)
    assert markup.inline == []
    assert markup.data_blocks == 1  # the catalogue, and nothing else without a src
    assert markup.scripts and all(src and src.startswith("/static/") for src in markup.scripts), markup.scripts


def visit_every_part(page: Page, daemon_process) -> None:
    """Open the page joined, press, switch through the languages, open every tab and section, and show a QR code."""
    en = catalogue("en")
    open_joined(page, daemon_process)
    expect(page.locator("#prompt")).to_have_attribute("data-state", "demand", timeout=WAIT_MS)
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    page.locator("#press").tap()  # SVG's press for the Wild All Hit
    expect(page.locator('#feed li[data-type="attack.progress"]')).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    for lang in ["zh-Hans", "zh-Hant", "en"]:
        page.locator("#lang").select_option(lang)
        expect(page.locator("#lang-label")).to_have_text(catalogue(lang)["lang.label"])
        for tab in TABS:
            page.locator(f"#tab-{tab}").tap()
            expect(page.locator(f"#panel-{tab}")).to_be_visible()
    page.locator("#fair-chip").tap()  # the header's fair mark opens the fairness details
    for section in ["#seal", "#rules", "#access"]:
        page.locator(f"{section} summary").tap()
    expect(page.locator("#rules-tables table")).to_have_count(6)
    # The admin's QR code of a new table PIN: an image from a data: address.
    page.get_by_label(en["admin.pin"], exact=True).fill(daemon_process.admin_pin)
    page.locator("#admin-join button").tap()
    expect(page.locator("#role")).to_have_text(en["role.admin"], timeout=WAIT_MS)
    page.locator("#pin-table").fill("258025" if daemon_process.table_pin != "258025" else "369036")  # 6 digits at least
    page.locator("#pins button[type=submit]").tap()
    expect(page.locator("#join-qr")).to_have_attribute("src", re.compile(r"^data:image/svg\+xml;base64,"))
    assert page.locator("#join-qr").evaluate("(img) => img.complete && img.naturalWidth > 0")


def test_the_page_keeps_to_its_own_policy(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    set_the_table(daemon_process)
    page = phone(browser, playwright)
    console_errors = []
    page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
    page.on("pageerror", lambda e: console_errors.append(str(e)))

    visit_every_part(page, daemon_process)

    assert page.evaluate("window.__violations") == []
    page.context.close()
    assert console_errors == []  # Chromium logs a blocked script or style here too


def test_no_request_leaves_the_launcher(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    set_the_table(daemon_process)
    # Without the policy, which would block (and hide) a request elsewhere: the page itself asks nothing of others.
    page = phone(browser, playwright, bypass_csp=True)
    requests = []
    page.context.on("request", lambda r: requests.append(r.url))

    visit_every_part(page, daemon_process)

    page.context.close()
    assert any(url.startswith(home + "/api/events") for url in requests)  # the recording saw the page's own
    assert [url for url in requests if origin(url) != home and not url.startswith("data:")] == []
