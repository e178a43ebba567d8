"""The phone page in Debian's Chromium on a Pixel 5, against the real daemon on simulated hardware.

Needs `chromium` on the PATH (`apt-get install -y chromium`); Playwright drives it, no `playwright install`.
The screenshot lands in test-artifacts/ for a human to look at.
"""

import json
import re
import shutil
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect, sync_playwright

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
I18N = ROOT / "webui" / "static" / "i18n"
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WAIT_MS = 10_000


def catalogue(lang: str) -> dict[str, str]:
    return json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))


def outcome_pattern(strings: dict[str, str], press: int) -> re.Pattern[str]:
    """What the feed may say about the outcome of `press`: no fire, or fired some cards."""

    def fill(template: str) -> str:
        # Literal text stays literal, {press} is the press we made, any other placeholder is a number.
        parts = re.split(r"\{(\w+)\}", template)
        return "".join(
            re.escape(part) if i % 2 == 0 else (str(press) if part == "press" else r"\d+")
            for i, part in enumerate(parts)
        )

    texts = [strings[key] for key in ("feed.missed", "feed.fired", "feed.fired_one")]
    return re.compile("^(?:" + "|".join(fill(text) for text in texts) + ")$")


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture(scope="module")
def playwright_chromium():
    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Chromium is not installed: `apt-get install -y chromium` (the browser tests need it)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield playwright, browser
        browser.close()


def test_phone_presses_sees_the_outcome_live_and_switches_language(daemon, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon.url)
    english, simplified = catalogue("en"), catalogue("zh-Hans")

    context = browser.new_context(**playwright.devices["Pixel 5"], locale="en-US")
    page = context.new_page()
    foreign_requests, console_errors = [], []
    page.on("request", lambda r: origin(r.url) != home and foreign_requests.append(r.url))
    page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
    page.on("pageerror", lambda e: console_errors.append(str(e)))

    page.goto(home + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    expect(page.locator("#lang-label")).to_have_text(english["lang.label"])

    with urllib.request.urlopen(home + "/api/state") as response:
        press = json.load(response)["presses"] + 1
    page.locator("#press").tap()

    # The feed only ever shows what came over the event stream.
    outcome = page.locator(
        f'#feed li[data-press="{press}"]:is([data-type="launcher.missed"], [data-type="launcher.fired"])'
    ).locator(".feed-text")
    expect(outcome).to_have_text(outcome_pattern(english, press), timeout=WAIT_MS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "browser-pixel5-en.png")

    page.locator("#lang").select_option("zh-Hans")
    expect(page.locator("#lang-label")).to_have_text(simplified["lang.label"])
    expect(page.locator("html")).to_have_attribute("lang", "zh-Hans")
    expect(outcome).to_have_text(outcome_pattern(simplified, press))
    page.screenshot(path=ARTIFACTS / "browser-pixel5.png")

    # The choice is remembered across visits.
    page.reload()
    expect(page.locator("#lang-label")).to_have_text(simplified["lang.label"])

    context.close()
    assert foreign_requests == []
    assert console_errors == []


@pytest.mark.parametrize(
    ("locale", "lang"),
    [("zh-TW", "zh-Hant"), ("zh-HK", "zh-Hant"), ("zh-CN", "zh-Hans"), ("zh-SG", "zh-Hans"), ("fr-FR", "en")],
)
def test_first_visit_picks_the_language_from_the_browser(daemon, playwright_chromium, locale, lang):
    playwright, browser = playwright_chromium
    context = browser.new_context(**playwright.devices["Pixel 5"], locale=locale)
    page = context.new_page()
    page.goto(daemon.url + "/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("#lang-label")).to_have_text(catalogue(lang)["lang.label"])
    expect(page.locator("#lang")).to_have_value(lang)
    context.close()


def test_refilling_the_deck_from_a_phone_shows_on_every_phone(daemon, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon.url)
    english = catalogue("en")
    phones = [browser.new_context(**playwright.devices["Pixel 5"], locale="en-US").new_page() for _ in range(2)]
    for page in phones:
        page.goto(home + "/")
        expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    loaded = daemon.get("/api/state")["deck"]["loaded"]

    phones[0].locator("#reload").tap()

    refilled = english["feed.reloaded"].replace("{loaded}", str(loaded))
    for page in phones:  # the other phone learns it over the event stream
        expect(page.locator("#feed li[data-type='deck.reloaded'] .feed-text")).to_have_text(refilled)
        expect(page.locator("#deck-text")).to_have_text(
            english["deck.level"].replace("{remaining}", str(loaded)).replace("{loaded}", str(loaded))
        )
        page.context.close()
