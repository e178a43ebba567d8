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

from launcher.fairplay import sealing
from tests.conftest import FAST_SIM_TOML, start_daemon
from webui.words import page_catalogue

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
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
    """The words as the page has them: in Chinese with the places a line may break (webui/linebreak.py)."""
    return page_catalogue(lang)


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


def test_phone_presses_sees_the_outcome_live_and_switches_language(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    english, simplified = catalogue("en"), catalogue("zh-Hans")

    context = browser.new_context(**playwright.devices["Pixel 5"], locale="en-US")
    page = context.new_page()
    foreign_requests, console_errors = [], []
    page.on("request", lambda r: origin(r.url) != home and foreign_requests.append(r.url))
    page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
    page.on("pageerror", lambda e: console_errors.append(str(e)))

    open_joined(page, daemon_process)
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
def test_first_visit_picks_the_language_from_the_browser(daemon_process, playwright_chromium, locale, lang):
    playwright, browser = playwright_chromium
    context = browser.new_context(**playwright.devices["Pixel 5"], locale=locale)
    page = context.new_page()
    page.goto(daemon_process.url + "/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("#lang-label")).to_have_text(catalogue(lang)["lang.label"])
    expect(page.locator("#lang")).to_have_value(lang)
    context.close()


def test_the_words_come_with_the_page_before_any_script_and_the_picked_language_with_the_next(
    daemon_process, playwright_chromium
):
    playwright, browser = playwright_chromium
    traditional, english = catalogue("zh-Hant"), catalogue("en")
    # A slow Wi-Fi, as good as: no script has run yet. The words are there already.
    still = browser.new_context(**playwright.devices["Pixel 5"], locale="zh-TW", java_script_enabled=False)
    page = still.new_page()
    page.goto(daemon_process.url + "/")
    expect(page.locator("h1")).to_have_text(traditional["app.title"])
    expect(page.locator("#lang-label")).to_have_text(traditional["lang.label"])
    still.close()

    # With the scripts, no catalogue is fetched for the page's own language: it came inside the page.
    context = browser.new_context(**playwright.devices["Pixel 5"], locale="zh-TW")
    page = context.new_page()
    fetched: list[str] = []
    page.route("**/i18n/*.json", lambda route: (fetched.append(route.request.url), route.continue_()))
    open_joined(page, daemon_process)
    expect(page.locator("#press-caption")).to_have_text(traditional["button.caption"])
    assert fetched == []

    # Another language, picked on the phone, is fetched once and the daemon sends the next page in it.
    page.locator("#lang").select_option("en")
    expect(page.locator("#lang-label")).to_have_text(english["lang.label"])
    assert [url.rsplit("/", 1)[-1] for url in fetched] == ["en.json"]
    again = context.request.get(daemon_process.url + "/")
    assert '<html lang="en">' in again.text()
    context.close()


def test_refilling_the_hopper_from_a_phone_shows_on_every_phone(daemon_process, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    phones = [browser.new_context(**playwright.devices["Pixel 5"], locale="en-US").new_page() for _ in range(2)]
    for page in phones:
        open_joined(page, daemon_process)
    loaded = daemon_process.get("/api/state")["hopper"]["loaded"]

    phones[0].locator("#reload").tap()
    phones[0].locator("#confirm-yes").tap()  # it asks first: the count of cards left starts again

    refilled = english["feed.reloaded"].replace("{loaded}", str(loaded))
    for page in phones:  # the other phone learns it over the event stream
        expect(page.locator("#feed li[data-type='hopper.reloaded'] .feed-text")).to_have_text(refilled)
        expect(page.locator("#hopper-text")).to_have_text(
            english["hopper.level"].replace("{remaining}", str(loaded)).replace("{loaded}", str(loaded))
        )
        page.context.close()


def fill(template: str, **values: object) -> str:
    """A catalogue text with its placeholders filled, as the page's t() does."""
    return re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), template)


def watch(page, home: str, foreign_requests: list[str], console_errors: list[str]) -> None:
    page.on("request", lambda r: origin(r.url) != home and foreign_requests.append(r.url))
    page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
    page.on("pageerror", lambda e: console_errors.append(str(e)))


# Resolves once the element's own animations that end have ended (an endless one, such as a pulse, is left out).
STILL = """(e) => Promise.all(
  e.getAnimations().filter((a) => a.effect.getComputedTiming().endTime !== Infinity).map((a) => a.finished)
)"""


def tap_still(locator) -> None:
    """Tap as a finger does: at once, where the element is. Playwright taps only an element that has stopped moving,
    and while it moves (the big button kicks or sags for half a second at every outcome, on every phone) tries again
    with the element scrolled to the screen's edge, leaving the page scrolled where nobody scrolled it."""
    locator.evaluate(STILL)
    locator.tap()


def open_joined(page, daemon_process, pin: str | None = None) -> None:
    """Open the page by the console's QR link (the table PIN, or `pin`): live, and joined once its role shows."""
    page.goto(f"{daemon_process.url}/#pin={pin or daemon_process.table_pin}")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    expect(page.locator("#role")).to_be_visible(timeout=WAIT_MS)


def test_a_new_shuffle_from_one_phone_reveals_the_seed_on_every_phone(daemon_process, playwright_chromium, tmp_path):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    english = catalogue("en")
    foreign_requests, console_errors = [], []
    phones = []
    for _ in range(2):
        page = browser.new_context(**playwright.devices["Pixel 5"], locale="en-US").new_page()
        watch(page, home, foreign_requests, console_errors)
        open_joined(page, daemon_process)
        phones.append(page)
    phone_a, phone_b = phones
    first = daemon_process.get("/api/state")["shuffle"]
    classic = english["profile.classic"]

    # The shuffle bar shows the shuffle, its profile and the commitment, short and (in the details) whole.
    for page in phones:
        expect(page.locator("#shuffle-title")).to_have_text(
            fill(english["shuffle.title"], shuffle=first["number"], profile=classic)
        )
    expect(phone_b.locator("#seal-short")).to_have_text(first["commitment"][:12] + "…")
    phone_b.locator("#fair-chip").tap()  # the header\'s fair mark opens the details
    phone_b.locator("#seal summary").tap()
    expect(phone_b.locator(".seal-explain")).to_have_text(english["shuffle.explain"])
    shown_at_start = phone_b.locator("#seal-full").inner_text()
    assert shown_at_start == first["commitment"]

    # A press in the first shuffle, so its record has an outcome to check.
    phone_a.locator("#press").tap()
    expect(phone_b.locator("#shuffle-presses")).to_have_text(english["shuffle.presses_one"], timeout=WAIT_MS)
    expect(phone_a.locator("#press")).to_be_enabled(timeout=WAIT_MS)

    phone_a.locator("#profile").select_option("gentle")
    expect(phone_a.locator("#profile-about")).to_have_text(english["profile.gentle_about"])
    phone_a.locator("#new-shuffle").tap()
    phone_a.locator("#confirm-yes").tap()  # it asks first

    second = first["number"] + 1
    gentle = english["profile.gentle"]
    started = fill(english["feed.shuffle_started"], shuffle=second, profile=gentle)
    expect(phone_a.locator("#toast")).to_have_text(started, timeout=WAIT_MS)
    new_commitment = daemon_process.get("/api/state")["shuffle"]["commitment"]
    assert new_commitment != first["commitment"]
    for page in phones:  # phone B learns it over the event stream
        expect(page.locator(f'#feed li[data-type="shuffle.started"][data-shuffle="{second}"] .feed-text')).to_have_text(
            started, timeout=WAIT_MS
        )
        expect(page.locator("#shuffle-title")).to_have_text(
            fill(english["shuffle.title"], shuffle=second, profile=gentle)
        )
        expect(page.locator("#seal-short")).to_have_text(new_commitment[:12] + "…")
        expect(page.locator("#shuffle-presses")).to_have_text(fill(english["shuffle.presses"], presses=0))
    expect(phone_b.locator("#profile")).to_have_value("gentle")  # B's select follows the shuffle in play

    # The ended shuffle's line reveals the seed, which with the profile seals to the commitment shown at its start
    # (docs/FAIRNESS.md; the seal itself is checked against the doc in tests/test_fairness_sealed.py).
    # The quiet feed's line, as players see it (the whole history, folded, has it too).
    ended = phone_b.locator(f'#feed-lines li[data-type="shuffle.ended"][data-shuffle="{first["number"]}"]')
    expect(ended.locator(".feed-text")).to_have_text(fill(english["feed.shuffle_ended"], shuffle=first["number"]))
    seed = ended.locator(".seed").inner_text()
    record_link = ended.locator("a.record")
    expect(record_link).to_have_text(english["feed.record"])
    with urllib.request.urlopen(home + record_link.get_attribute("href")) as response:
        record = json.load(response)
    assert record["seed"] == seed and record["commitment"] == shown_at_start
    assert sealing.seal(seed, record["profile"]) == shown_at_start
    assert [o["press"] for o in record["outcomes"]] == [1]
    with phone_b.expect_download() as download:  # the link saves the record as a file
        record_link.click()
    saved = tmp_path / "record.json"
    download.value.save_as(saved)
    assert json.loads(saved.read_text(encoding="utf-8")) == record

    # The rules page lists every profile with its long-run figures; the one in play is marked in words.
    profiles = daemon_process.get("/api/profiles")["profiles"]
    phone_b.locator("#rules summary").tap()
    tables = phone_b.locator("#rules-tables table")
    expect(tables).to_have_count(len(profiles))
    assert [p["name"] for p in profiles] == ["classic", "gentle", "brutal", "pattern", "extreme", "custom"]
    for figures in profiles:
        table = phone_b.locator(f'#rules-tables table[data-profile="{figures["name"]}"]')
        expect(table.locator(".profile-title")).to_have_text(english[f"profile.{figures['name']}"])
        expect(table.locator(".profile-about")).to_have_text(english[f"profile.{figures['name']}_about"])
        fire_rate = f"{figures['fire_rate'] * 100:.1f}".removesuffix(".0") + "%"
        expect(table.locator("tr").first.locator("td")).to_have_text(fire_rate)
    expect(phone_b.locator("#rules-tables table[data-active]")).to_have_attribute("data-profile", "gentle")
    expect(phone_b.locator('table[data-profile="gentle"] .profile-active')).to_have_text(english["rules.active"])

    ARTIFACTS.mkdir(exist_ok=True)
    phone_b.screenshot(path=ARTIFACTS / "browser-new-shuffle.png", full_page=True)
    for page in phones:
        page.context.close()
    assert foreign_requests == []
    assert console_errors == []


# Every press of this profile pauses, then fires a jackpot: what the page does is then certain.
SUSPENSE_JACKPOT_TOML = """
[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
pause_probability = 1.0
pause_ms = [1500, 1500]
jackpot_probability = 1.0
jackpot_cards = [12, 14]
"""


@pytest.mark.parametrize("reduced_motion", ["no-preference", "reduce"])
def test_suspense_then_jackpot_show_on_the_page_and_the_pressing_phone_vibrates(
    tmp_path, playwright_chromium, reduced_motion
):
    playwright, browser = playwright_chromium
    running = start_daemon(tmp_path, FAST_SIM_TOML + SUSPENSE_JACKPOT_TOML)
    try:
        home = origin(running.url)
        english = catalogue("en")
        foreign_requests, console_errors = [], []
        context = browser.new_context(**playwright.devices["Pixel 5"], locale="en-US", reduced_motion=reduced_motion)
        # Record what the page asks to vibrate (headless Chromium has no motor to ask).
        context.add_init_script("window.__vibrations = []; navigator.vibrate = (p) => (__vibrations.push(p), true);")
        page = context.new_page()
        watch(page, home, foreign_requests, console_errors)
        open_joined(page, running)
        expect(page.locator("#shuffle-title")).to_have_text(
            fill(english["shuffle.title"], shuffle=1, profile=english["profile.custom"])
        )

        page.locator("#press").tap()

        # During the pause: the suspense line, and the ring at its fastest.
        expect(page.locator('#feed li[data-type="launcher.suspense"] .feed-text')).to_have_text(
            fill(english["feed.suspense"], press=1), timeout=WAIT_MS
        )
        # Read together in the page: on a loaded machine the 1.5 s pause may be over by a second look.
        fastest = "0s" if reduced_motion == "reduce" else "0.3s"
        page.wait_for_function(
            f"""() => {{
                const ring = document.getElementById("ring");
                return ring.dataset.suspense === "true" && getComputedStyle(ring).animationDuration === "{fastest}";
            }}""",
            timeout=WAIT_MS,
        )
        # Then the jackpot: its own symbol and words in the feed, the badge and the stage's celebration.
        jackpot = page.locator('#feed li[data-type="launcher.fired"][data-jackpot="true"]')
        jackpot_text = re.escape(fill(english["feed.jackpot"], press=1, dispensed="NN")).replace("NN", "1[2-4]")
        expect(jackpot.locator(".feed-text")).to_have_text(re.compile(f"^{jackpot_text}$"), timeout=WAIT_MS)
        expect(jackpot.locator(".feed-symbol")).to_have_text("★")
        expect(page.locator("#ring")).not_to_have_attribute("data-suspense", "true")
        expect(page.locator("#stage")).to_have_attribute("data-jackpot", "true")
        expect(page.locator("#jackpot-badge")).to_be_visible()
        expect(page.locator("#jackpot-badge")).to_contain_text(english["stage.jackpot"])
        shaking = page.locator("#press").evaluate("e => getComputedStyle(e).animationName")
        assert shaking == ("none" if reduced_motion == "reduce" else "shake")
        if reduced_motion == "no-preference":
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=ARTIFACTS / "browser-jackpot.png")
        expect(page.locator("#jackpot-badge")).to_be_hidden(timeout=WAIT_MS)

        # This phone pressed, so it vibrated once, with the jackpot's pattern.
        expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
        assert page.evaluate("window.__vibrations") == [[90, 60, 90, 60, 240]]
        context.close()
        assert foreign_requests == []
        assert console_errors == []
    finally:
        running.stop()
        if running.process.stdout:
            running.process.stdout.close()


# Small controls people tap: every one at least 48 px high and (but inline links) wide enough.
TARGETS = "button, select, summary, a, #lang"


def small_targets(page) -> list[list]:
    """The controls shown that are less than 48 px high: [name, height] each."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
            .filter((e) => e.getClientRects().length)
            .map((e) => [e.id || e.className || e.tagName, e.getBoundingClientRect().height])
            .filter(([, height]) => height < 47.5)""",
        TARGETS,
    )


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [393, 320])
def test_layout_fits_narrow_phones_with_48px_targets(daemon_process, playwright_chromium, color_scheme, width):
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    status, _ = daemon_process.post("/api/shuffles", {"profile": "brutal"})  # a shuffle.ended line with its record link
    assert status == 201
    device = {**playwright.devices["Pixel 5"], "viewport": {"width": width, "height": 727 if width == 393 else 568}}
    context = browser.new_context(**device, locale="zh-Hant" if width == 320 else "en-US", color_scheme=color_scheme)
    page = context.new_page()
    foreign_requests, console_errors = [], []
    watch(page, home, foreign_requests, console_errors)
    open_joined(page, daemon_process)
    expect(page.locator('#feed li[data-type="shuffle.ended"] a.record')).to_have_count(1, timeout=WAIT_MS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"browser-{width}-{color_scheme}.png")  # the first screen, as players see it
    page.locator("#fair-chip").tap()  # the header\'s fair mark opens the details
    page.locator("#seal summary").tap()
    page.locator("#rules summary").tap()
    page.locator("#access summary").tap()
    expect(page.locator("#rules-tables table")).to_have_count(6)
    expect(page.locator("#leave")).to_be_visible()

    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert small_targets(page) == []
    page.screenshot(path=ARTIFACTS / f"browser-{width}-{color_scheme}-full.png", full_page=True)
    context.close()
    assert foreign_requests == []
    assert console_errors == []
