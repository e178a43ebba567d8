"""Accessible to every player (issue #47): axe-core finds no serious or critical violation on the phone page (before
and after joining, with a game on, every dialog and panel, the admin's sections, the doorbell's waiting view) and on
/table, in English, 简体 and 繁體, in the dark and the light scheme; and every state the page tells by colour has a
second cue, a symbol or words.

axe-core is vendored in tests/vendor/axe-core/ (see its README) and put into the page under test only."""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from launcher.config import Config
from launcher.daemon import Daemon
from tests import test_browser
from tests.conftest import app_parts, http_json, join, start_daemon
from tests.test_browser import WAIT_MS, catalogue, open_joined
from tests.test_browser_jam import JAM_TOML
from tests.test_pin_guessing import spend_the_budget

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
SIZES = {"393": {"width": 393, "height": 851}, "320": {"width": 320, "height": 640}}
TV = {"width": 1280, "height": 720}  # the table screen, on a television
# Colours do not change with the width: both schemes at 393, the light one (where contrast is tighter) at 320.
SCHEMES = {"393": ("dark", "light"), "320": ("light",)}
LOCALES = {"en": "en-US", "zh-Hans": "zh-CN", "zh-Hant": "zh-TW"}
PLAYERS = ["Dad", "Mum", "Ann", "Ben"]
SERIOUS = ("serious", "critical")

# axe's findings of the impacts that fail the issue, as "rule: target (summary)" lines; and the elements whose
# contrast axe could not judge because their background is a gradient or their text has a shadow (it says so in
# `incomplete`), to be measured from the pixels instead.
AXE_RUN = """async (impacts) => {
  // What pops in is judged as it stays, not half faded in: finite animations end first.
  const ending = document.getAnimations().filter((a) => a.effect?.getComputedTiming().endTime !== Infinity);
  await Promise.all(ending.map((a) => a.finished.catch(() => null)));
  const result = await axe.run(document, { resultTypes: ["violations", "incomplete"] });
  // What axe leaves undecided counts too, but contrast (measured below, or no text) and a visible name that is only
  // a symbol (↑ ↓ ✕ 🔊: WCAG 2.5.3 is about words).
  const undecided = result.incomplete.filter((v) => !["color-contrast", "label-content-name-mismatch"].includes(v.id));
  const found = [...result.violations, ...undecided]
    .filter((v) => impacts.includes(v.impact))
    .flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(" ")} (${(n.failureSummary ?? "").split("\\n")[1]})`));
  const unjudged = result.incomplete
    .filter((v) => v.id === "color-contrast")
    .flatMap((v) => v.nodes)
    .filter((n) => n.any.some((c) => ["bgGradient", "complexTextShadows"].includes(c.data?.messageKey)))
    .map((n) => n.target.join(" "));
  return [found, unjudged];
}"""

# The contrast of an element's text against the worst pixel of what is behind it, read from a screenshot of its box
# taken with its text (and any shadow) made transparent: ["what", ratio, ratio needed].
PIXELS_JS = """async ([selector, png]) => {
  const element = document.querySelector(selector);
  const style = getComputedStyle(element);
  const channel = (c) => ((c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  const luminance = (r, g, b) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const text = luminance(...style.color.match(/[\\d.]+/g).slice(0, 3).map(Number));
  const image = new Image();
  image.src = "data:image/png;base64," + png;
  await image.decode();
  const canvas = document.createElement("canvas");
  [canvas.width, canvas.height] = [image.width, image.height];
  const context = canvas.getContext("2d");
  context.drawImage(image, 0, 0);
  const data = context.getImageData(0, 0, image.width, image.height).data;
  let worst = Infinity;
  for (let i = 0; i < data.length; i += 4) {
    const back = luminance(data[i], data[i + 1], data[i + 2]);
    const ratio = (Math.max(text, back) + 0.05) / (Math.min(text, back) + 0.05);
    worst = Math.min(worst, ratio);
  }
  const px = parseFloat(style.fontSize), bold = Number(style.fontWeight) >= 700;
  const large = px >= 24 || (bold && px >= 18.66);
  return [`${selector} "${element.textContent.trim().slice(0, 30)}"`, worst, large ? 3 : 4.5];
}"""
HIDE_TEXT = "[data-a11y-probe], [data-a11y-probe] * { color: transparent !important; text-shadow: none !important; }"


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    """In this process, so that the test can spend the PIN budget at once and show the doorbell's waiting view."""
    running = Daemon(Config().replace("state", dir=str(tmp_path)).replace("web", host="127.0.0.1", port=0))
    serving = threading.Thread(target=running.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        yield running
    finally:
        running.close()
        serving.join(5)


class Audit:
    """axe run on the page as it is now, in each colour scheme; the serious and critical findings, by view."""

    def __init__(self, page: Page, schemes: tuple[str, ...]) -> None:
        self.page = page
        self.schemes = schemes
        self.findings: dict[str, list[str]] = {}
        self.measured: list[tuple[str, float]] = []  # contrast read from the pixels: (what, ratio)

    def check(self, view: str) -> None:
        if not self.page.evaluate("typeof axe !== 'undefined'"):
            self.page.add_script_tag(path=str(AXE))
            self.page.add_style_tag(content=HIDE_TEXT)
        for scheme in self.schemes:
            self.page.emulate_media(color_scheme=scheme)  # type: ignore[arg-type]
            found, unjudged = self.page.evaluate(AXE_RUN, list(SERIOUS))
            found += [low for selector in unjudged if (low := self.low_contrast(selector))]
            if found:
                self.findings[f"{view} ({scheme})"] = found

    def low_contrast(self, selector: str) -> str | None:
        """color-contrast measured from the pixels behind the text; a finding when it is too low, else None."""
        element = self.page.locator(selector)
        # In the middle of the screen, where nothing fixed (a toast at the bottom) lies over it.
        element.evaluate("(e) => { e.scrollIntoView({ block: 'center' }); e.setAttribute('data-a11y-probe', ''); }")
        png = element.screenshot(animations="disabled")
        element.evaluate("(e) => e.removeAttribute('data-a11y-probe')")
        what, ratio, needed = self.page.evaluate(PIXELS_JS, [selector, base64.b64encode(png).decode()])
        self.measured.append((what, ratio))
        return None if ratio >= needed else f"color-contrast: {what} {ratio:.2f}:1 on its background, {needed}:1 needed"

    def assert_clean(self) -> None:
        lines = [f"{view}: {finding}" for view, found in self.findings.items() for finding in found]
        assert not lines, "axe-core found serious or critical violations:\n" + "\n".join(lines)


def phone(browser: Any, lang: str, size: str) -> Page:
    # The page's CSP lets in its own scripts only; axe is a test asset put in by Playwright.
    context = browser.new_context(
        viewport=SIZES[size] if size != "tv" else TV,
        device_scale_factor=2 if size != "tv" else 1,
        is_mobile=size != "tv",
        has_touch=True,
        locale=LOCALES[lang],
        bypass_csp=True,
    )
    return context.new_page()


def url_of(daemon: Daemon) -> str:
    return str(daemon.urls[0]).rstrip("/")


def pins(daemon: Daemon) -> tuple[str, str]:
    assert daemon.new_pins is not None and daemon.new_pins.table and daemon.new_pins.admin
    return daemon.new_pins.table, daemon.new_pins.admin


def post(url: str, cookie: str, path: str, body: Any) -> Any:
    status, answer = http_json(url + path, "POST", body, cookie=cookie)
    assert status in (200, 201), answer
    return answer


@pytest.mark.parametrize("lang", list(LOCALES))
@pytest.mark.parametrize("size", list(SIZES))
def test_axe_finds_nothing_serious_on_the_page_its_dialogs_and_the_admins_sections(
    daemon, playwright_chromium, size, lang
):
    _, browser = playwright_chromium
    url = url_of(daemon)
    table_pin, admin_pin = pins(daemon)
    cookie = join(url, table_pin)
    post(url, cookie, "/api/games", {"players": PLAYERS, "dealer": "Ben", "mode": "elimination", "target": 100})
    page = phone(browser, lang, size)
    audit = Audit(page, SCHEMES[size])

    page.goto(url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    expect(page.locator("#join")).to_be_visible(timeout=WAIT_MS)
    audit.check("not joined")

    page.locator("#join-pin").fill(table_pin)
    page.locator("#join button").tap()
    expect(page.locator("#welcome")).to_be_visible(timeout=WAIT_MS)
    audit.check("joined, who are you")
    page.locator("#welcome-players button", has_text="Dad").tap()
    expect(page.locator("#prompt-me")).to_be_visible(timeout=WAIT_MS)
    audit.check("joined as Dad")

    # Dad plays a Hit 2 on Mum, then presses himself: the page asks "Press for Mum?" first.
    post(url, cookie, "/api/attacks", {"kind": "hit2", "by": "Dad"})
    expect(page.locator("#prompt-text")).to_contain_text("Mum", timeout=WAIT_MS)
    page.locator("#press").tap()
    expect(page.locator("#press-for")).to_be_visible(timeout=WAIT_MS)
    audit.check("press for Mum?")
    # "No", or the question's own 6 s ran out while axe read the page in both schemes: either way it has gone.
    page.locator("#press-for-no").evaluate("(no) => no.click()")
    expect(page.locator("#press-for")).to_be_hidden()
    post(url, cookie, "/api/attacks", {"kind": "cancel"})

    for tab in ("table", "round", "scores", "new", "rules"):
        page.locator(f"#tab-{tab}").tap()
        expect(page.locator(f"#panel-{tab}")).to_be_visible(timeout=WAIT_MS)
        if tab == "new":
            page.locator("#setup-more summary").tap()
        audit.check(f"game tab {tab}")
    for details in ("#fairness", "#feed-all", "#rules", "#tournament #tour-setup"):
        page.locator(f"{details} > summary").tap()
    audit.check("fairness, feed, rules reference and tournament opened")

    page.locator("#invite").tap()
    expect(page.locator("#invite-dialog")).to_be_visible(timeout=WAIT_MS)
    audit.check("invite dialog")
    page.locator("#invite-close").tap()

    page.locator("#reload").tap()
    expect(page.locator("#confirm-dialog")).to_be_visible(timeout=WAIT_MS)
    audit.check("confirm dialog")
    page.locator("#confirm-no").tap()
    expect(page.locator("#confirm-dialog")).to_be_hidden()

    page.locator("#access > summary").tap()
    page.locator("#admin-pin").fill(admin_pin)
    page.locator("#admin-join button").tap()
    expect(page.locator("#pins")).to_be_visible(timeout=WAIT_MS)
    audit.check("the admin's sections")

    # The game ends: 100 points to Dad knock the others out; the winner card comes on every phone.
    post(url, cookie, "/api/games/current/rounds", {"winner": "Dad", "hands": {"Mum": 100, "Ann": 100, "Ben": 100}})
    expect(page.locator("#winner-card")).to_be_visible(timeout=WAIT_MS)
    audit.check("winner card")

    # The doorbell: with the table's PIN budget spent, a phone that joins waits with a code to be let in.
    page.locator("#leave").tap()
    expect(page.locator("#join")).to_be_visible(timeout=WAIT_MS)
    spend_the_budget(app_parts(daemon).pin_guard)
    page.locator("#join-pin").fill(table_pin)
    page.locator("#join button").tap()
    expect(page.locator("#join-code")).to_be_visible(timeout=WAIT_MS)
    audit.check("doorbell waiting")

    page.context.close()
    audit.assert_clean()
    # The button's caption sits on its gradient: axe cannot judge it, so it was measured from the pixels.
    assert any(what.startswith("#press-caption") for what, _ in audit.measured), audit.measured


@pytest.mark.parametrize("lang", list(LOCALES))
def test_axe_finds_nothing_serious_on_the_table_screen(daemon, playwright_chromium, lang):
    _, browser = playwright_chromium
    url = url_of(daemon)
    table_pin, _ = pins(daemon)
    cookie = join(url, table_pin)
    post(url, cookie, "/api/games", {"players": PLAYERS, "dealer": "Ben"})
    for size in ("393", "tv"):  # a phone opened on /table, and the television it is made for (1280×720)
        page = phone(browser, lang, size)
        audit = Audit(page, SCHEMES["393"])
        page.goto(f"{url}/table")
        expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
        expect(page.locator("#tv-prompt")).not_to_be_empty(timeout=WAIT_MS)
        audit.check(f"/table at {size}")
        if size == "tv":
            # A Wild All Hit under way: the queue and who comes after it, the prompt's longest state.
            post(url, cookie, "/api/attacks", {"kind": "wild_all_hit", "by": "Dad"})
            expect(page.locator("#tv-next")).to_be_visible(timeout=WAIT_MS)
            audit.check(f"/table at {size}, a Wild All Hit")
            post(url, cookie, "/api/attacks", {"kind": "cancel"})
        page.context.close()
        audit.assert_clean()


# Two misses, then a fire that jams: the tension rises to the top, then the launcher is in trouble.
MISS_MISS_JAM = JAM_TOML.replace("hazard = [1.0, 1.0]", "hazard = [0.0, 0.0, 1.0]")


def test_every_state_told_by_colour_also_has_a_symbol_or_words(tmp_path, playwright_chromium):
    """The link, the fair mark, the ring's tension, trouble, FAULT, a picked option and the table screen: each state
    shows a symbol or words, so a player who does not tell red from green (or sees no colour) reads it as well."""
    _, browser = playwright_chromium
    en = catalogue("en")
    running = start_daemon(tmp_path, MISS_MISS_JAM)
    try:
        assert running.post("/api/games", {"players": ["Ann", "Bob", "Cy"], "dealer": "Cy"})[0] == 201
        page = phone(browser, "en", "393")
        open_joined(page, running)
        tv = phone(browser, "en", "393")
        tv.goto(running.url + "/table")

        for screen in (page, tv):  # the link: a symbol and words, not only its green
            expect(screen.locator("#conn-symbol")).to_have_text("●", timeout=WAIT_MS)
            expect(screen.locator("#conn-text")).to_have_text(en["conn.live"])
        expect(page.locator("#fair-chip-symbol")).to_have_text("🔒")  # sealed; ✓ and ✗ are its other states
        expect(page.locator("#fault")).to_contain_text("⚠")  # FAULT's banner carries its sign with its words

        # The ring's tension: no flame when calm, more flames with each miss, on the phone and the table screen.
        for screen in (page, tv):
            expect(screen.locator("#tension")).to_have_text("")
        flames = {screen: 0 for screen in (page, tv)}
        for _miss in range(2):
            assert running.post("/api/press", {})[0] == 200
            for screen, before in flames.items():
                mark = screen.locator("#tension")
                expect(mark).to_have_text(re.compile(f"^(?:🔥){{{before + 1},}}$"), timeout=WAIT_MS)
                flames[screen] = len(mark.inner_text())
                expect(mark).to_be_visible()

        # The third press fires and jams: trouble, told with ⚠ and words on the phone and on the table screen.
        running.post("/api/press", {})
        for screen, box in ((page, "#trouble"), (tv, "#tv-trouble")):
            expect(screen.locator(box)).to_be_visible(timeout=WAIT_MS)
            expect(screen.locator(f"{box} .trouble-what")).to_contain_text("⚠")
            expect(screen.locator(f"{box} .trouble-what")).to_have_text(re.compile(r"⚠\s*\w+"))

        # A picked option: its radio shows checked, not only a coloured ring round the chip.
        page.locator("#tab-table").tap()
        page.locator("#who label.chip", has_text="Bob").tap()
        picked = page.locator('#who input[value="Bob"]')
        expect(picked).to_be_checked()
        expect(picked).to_be_visible()
    finally:
        running.close()
