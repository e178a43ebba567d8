"""Sound, motion, call-outs, the screen kept on and the stream reopened: the page in Chromium against the daemon.

Headless Chromium has no loudspeaker, no voices and no screen to keep on, so the page runs with small recorders
put in before its scripts (`add_init_script`): every tone or noise that starts (by its kind: the ding is made of
sine tones, the ticks of square ones, a fire's burst of noise, a jackpot's sting of triangle tones), every
utterance, every wake lock asked for, every event stream opened.
"""

import re

import pytest
from playwright.sync_api import expect

from tests.conftest import FAST_SIM_TOML, start_daemon
from tests.test_browser import WAIT_MS, catalogue, fill, open_joined, origin, playwright_chromium, watch

pytestmark = pytest.mark.browser
__all__ = ["playwright_chromium"]  # the fixture, shared with the other browser tests

# Press 1 and 2 miss, press 3 fires: no pause, no jackpot.
MISS_MISS_FIRE_TOML = """
[schedule]
profile = "custom"

[schedule.custom]
hazard = [0.0, 0.0, 1.0]
pause_probability = 0.0
jackpot_probability = 0.0
"""

RECORD_SOUNDS = """
window.__sounds = [];
const oscillatorStart = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) {
  __sounds.push(this.type);
  return oscillatorStart.apply(this, args);
};
const bufferStart = AudioBufferSourceNode.prototype.start;
AudioBufferSourceNode.prototype.start = function (...args) {
  __sounds.push("noise");
  return bufferStart.apply(this, args);
};
"""

RECORD_SPEECH = """
window.__said = [];
window.SpeechSynthesisUtterance = class { constructor(text) { this.text = text; } };
const voices = [{ lang: "en-US", name: "English" }, { lang: "zh-CN", name: "Mandarin" }];
Object.defineProperty(window, "speechSynthesis", {
  value: { getVoices: () => voices, speak: (u) => __said.push([u.text, u.lang]), cancel: () => {} },
});
"""

RECORD_WAKE_LOCKS = """
window.__locks = 0;
Object.defineProperty(navigator, "wakeLock", {
  value: { request: async () => (__locks++, { release: async () => {}, addEventListener: () => {} }) },
});
"""

RECORD_STREAMS = """
window.__streams = [];
const NativeEventSource = EventSource;
window.EventSource = class extends NativeEventSource {
  constructor(...args) {
    super(...args);
    __streams.push(this);
    this.addEventListener("message", (message) => { this.lastSeen = JSON.parse(message.data).id; });
  }
};
"""

# The daemon's state held back from the page (the replayed events come first, as on a slow network) until released.
HOLD_STATE = """
const nativeFetch = window.fetch;
window.__holdState = null;
window.__hold = () => {
  let release;
  const promise = new Promise((resolve) => (release = resolve));
  window.__holdState = { promise, release: () => ((window.__holdState = null), release()) };
};
window.fetch = async (...args) => {
  if (String(args[0]).startsWith("/api/state") && window.__holdState) await window.__holdState.promise;
  return nativeFetch(...args);
};
"""

# The page hidden, then shown again, as a phone does when it is put away and picked up.
SHOW_AGAIN = """(state) => {
  Object.defineProperty(document, "visibilityState", { configurable: true, get: () => state });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => state === "hidden" });
  document.dispatchEvent(new Event("visibilitychange"));
}"""


@pytest.fixture
def sound_daemon(tmp_path):
    running = start_daemon(tmp_path, FAST_SIM_TOML + MISS_MISS_FIRE_TOML)
    try:
        yield running
    finally:
        running.close()


def new_phone(browser, playwright, daemon_process, *scripts: str, locale="en-US", reduced_motion="no-preference"):
    context = browser.new_context(**playwright.devices["Pixel 5"], locale=locale, reduced_motion=reduced_motion)
    for script in scripts:
        context.add_init_script(script)
    page = context.new_page()
    foreign_requests, console_errors = [], []
    watch(page, origin(daemon_process.url), foreign_requests, console_errors)
    return context, page, foreign_requests, console_errors


def outcome_line(page, press: int):
    outcome = ':is([data-type="launcher.missed"], [data-type="launcher.fired"])'
    return page.locator(f'#feed li[data-press="{press}"]{outcome}')


def sounds_after(page, count: int, kind: str) -> None:
    """Wait until a sound of `kind` started after the first `count` recorded."""
    page.wait_for_function(f"() => __sounds.slice({count}).includes({kind!r})", timeout=WAIT_MS)


@pytest.mark.parametrize("reduced_motion", ["no-preference", "reduce"])
def test_a_press_dings_a_miss_ticks_and_moves_a_fire_bursts(sound_daemon, playwright_chromium, reduced_motion):
    playwright, browser = playwright_chromium
    context, page, foreign_requests, console_errors = new_phone(
        browser, playwright, sound_daemon, RECORD_SOUNDS, reduced_motion=reduced_motion
    )
    open_joined(page, sound_daemon)
    expect(page.locator("#sound")).to_have_attribute("aria-pressed", "true")  # sound is on unless muted

    page.locator("#press").tap()  # the first tap also lets the page make sound
    expect(outcome_line(page, 1)).to_have_attribute("data-type", "launcher.missed", timeout=WAIT_MS)
    sounds_after(page, 0, "sine")  # the ding of the press
    sounds_after(page, 0, "square")  # the ticks of the tension
    expect(page.locator("#stage")).to_have_attribute("data-outcome", "missed")
    uno = page.locator("#press")
    moving = uno.evaluate("e => getComputedStyle(e).animationName")
    assert moving == ("none" if reduced_motion == "reduce" else "sag")

    # Presses from elsewhere (another phone, the big button) sound on this phone too.
    heard = page.evaluate("__sounds.length")
    assert sound_daemon.post("/api/press")[0] == 200
    expect(outcome_line(page, 2)).to_have_attribute("data-type", "launcher.missed", timeout=WAIT_MS)
    sounds_after(page, heard, "sine")
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    heard = page.evaluate("__sounds.length")
    assert sound_daemon.post("/api/press")[0] == 200
    expect(outcome_line(page, 3)).to_have_attribute("data-type", "launcher.fired", timeout=WAIT_MS)
    sounds_after(page, heard, "noise")  # the burst of a fire
    expect(page.locator("#stage")).to_have_attribute("data-outcome", "fired")
    moving = uno.evaluate("e => getComputedStyle(e).animationName")
    assert moving == ("none" if reduced_motion == "reduce" else "kick")
    context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_muted_the_phone_stays_silent_also_after_a_reload(sound_daemon, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    context, page, foreign_requests, console_errors = new_phone(browser, playwright, sound_daemon, RECORD_SOUNDS)
    open_joined(page, sound_daemon)
    sound = page.locator("#sound")
    expect(sound).to_have_accessible_name(english["sound.switch"])

    sound.tap()
    expect(sound).to_have_attribute("aria-pressed", "false")
    page.reload()
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    expect(sound).to_have_attribute("aria-pressed", "false")

    page.locator("#press").tap()
    expect(outcome_line(page, 1)).to_be_attached(timeout=WAIT_MS)
    assert page.evaluate("__sounds") == []

    sound.tap()  # and on again
    expect(sound).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    page.locator("#press").tap()
    sounds_after(page, 0, "sine")
    context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_a_phone_speaks_call_outs_in_its_language_only_when_asked_to(sound_daemon, playwright_chromium):
    """Three phones at a table would otherwise say each line at once in three languages: the table screen speaks."""
    playwright, browser = playwright_chromium
    simplified = catalogue("zh-Hans")
    assert sound_daemon.post("/api/games", {"players": ["Ann", "Ben"]})[0] == 201
    context, page, foreign_requests, console_errors = new_phone(
        browser, playwright, sound_daemon, RECORD_SPEECH, locale="zh-CN"
    )
    open_joined(page, sound_daemon)
    speech = page.locator("#speech")
    expect(speech).not_to_be_checked()  # off, until this phone is asked to speak
    expect(page.locator("#speech-label")).to_have_text(simplified["sound.speech"])

    assert sound_daemon.post("/api/attacks", {"kind": "played", "by": "Ann"})[0] == 200
    expect(page.locator("#prompt-text")).to_have_text(fill(simplified["prompt.turn"], player="Ben"), timeout=WAIT_MS)
    speech.check()
    assert sound_daemon.post("/api/attacks", {"kind": "hit2", "by": "Ben"})[0] == 200

    said = fill(simplified["prompt.times"], player="Ann", n=2)
    expect(page.locator("#prompt-text")).to_have_text(said, timeout=WAIT_MS)
    page.wait_for_function("() => __said.length > 1", timeout=WAIT_MS)
    # Nothing while it was off; at the first tap, nothing said at once (for iOS, which speaks only after that),
    # then, switched on again, the call-out.
    spoken = said.replace("\u200b", "")  # the places to break a line are not read out
    assert page.evaluate("__said") == [["", "zh-CN"], [spoken, "zh-CN"]]
    page.reload()
    expect(speech).to_be_checked()  # asked to, it goes on speaking on this phone
    speech.uncheck()
    page.reload()
    expect(speech).not_to_be_checked()
    context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_the_screen_is_kept_on_while_a_game_is_in_play(sound_daemon, playwright_chromium):
    playwright, browser = playwright_chromium
    context, page, foreign_requests, console_errors = new_phone(browser, playwright, sound_daemon, RECORD_WAKE_LOCKS)
    open_joined(page, sound_daemon)
    expect(page.locator("#awake-hint")).to_be_hidden()  # this browser may keep the screen on
    assert page.evaluate("__locks") == 0  # no game: the phone may sleep

    assert sound_daemon.post("/api/games", {"players": ["Ann", "Ben"]})[0] == 201
    page.wait_for_function("() => __locks === 1", timeout=WAIT_MS)
    context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_without_a_wake_lock_the_page_says_how_to_keep_the_screen_on(sound_daemon, playwright_chromium):
    playwright, browser = playwright_chromium
    english = catalogue("en")
    context, page, _, console_errors = new_phone(
        browser, playwright, sound_daemon, "Object.defineProperty(navigator, 'wakeLock', { value: undefined });"
    )
    open_joined(page, sound_daemon)
    expect(page.locator("#awake-hint")).to_have_text(english["sound.awake_hint"])
    context.close()
    assert console_errors == []


def test_the_stream_is_opened_again_from_the_last_event_when_the_page_is_shown(sound_daemon, playwright_chromium):
    playwright, browser = playwright_chromium
    context, page, foreign_requests, console_errors = new_phone(
        browser, playwright, sound_daemon, RECORD_STREAMS, HOLD_STATE
    )
    fairness_sent = []
    page.on("request", lambda r: fairness_sent.append(r.url) if "/api/shuffles/current/" in r.url else None)
    open_joined(page, sound_daemon)
    assert page.evaluate("__streams.length") == 1  # joined by the link before it followed
    # The phone committed to the shuffle (commit, then reveal: docs/FAIRNESS.md).
    expect(page.locator("#fair-mine")).to_have_text("Yours is no. 1.", timeout=WAIT_MS)

    # Put away for a moment with the stream still open: it is kept.
    page.evaluate(SHOW_AGAIN, "hidden")
    page.evaluate(SHOW_AGAIN, "visible")
    assert page.evaluate("__streams.length") == 1

    # In the background the stream dies (iOS closes it without a word) and a press happens meanwhile.
    page.evaluate(SHOW_AGAIN, "hidden")
    # The last event this stream brought (not the daemon's newest: one published a moment before may not have
    # reached the page yet, and the daemon replays it).
    last_seen = page.evaluate("__streams[0].close(), __streams[0].lastSeen")
    assert isinstance(last_seen, int) and last_seen > 0
    assert sound_daemon.post("/api/press")[0] == 200
    expect(page.locator('#feed li[data-type="button.pressed"]')).to_have_count(0)

    # Shown again, the stream replays the seal and the fix of the key before the state read answers: the phone must
    # not reveal into a key fixed without it (the daemon would refuse, 409, and the browser log an error).
    page.evaluate("__hold()")
    page.evaluate(SHOW_AGAIN, "visible")
    expect(page.locator('#feed li[data-type="button.pressed"][data-press="1"]')).to_be_attached(timeout=WAIT_MS)
    page.evaluate("__holdState.release()")
    expect(page.locator("#fair-mix-text")).to_contain_text("closed at the first press", timeout=WAIT_MS)
    assert page.evaluate("__streams.length") == 2
    assert re.search(rf"last_event_id={last_seen}$", page.evaluate("__streams[1].url"))
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    context.close()
    assert [url.rsplit("/", 1)[1] for url in fairness_sent] == ["contributions"]
    assert foreign_requests == []
    assert console_errors == []


def test_a_stream_that_looks_open_is_opened_again_after_longer_away_than_the_heartbeat(
    sound_daemon, playwright_chromium
):
    playwright, browser = playwright_chromium
    context, page, foreign_requests, console_errors = new_phone(browser, playwright, sound_daemon, RECORD_STREAMS)
    page.clock.install()  # the page's own clock, moved on below instead of waiting
    open_joined(page, sound_daemon)
    assert page.evaluate("__streams.length") == 1  # joined by the link before it followed

    page.evaluate(SHOW_AGAIN, "hidden")
    page.clock.fast_forward("00:20")  # longer than the daemon's default heartbeat (15 s): the stream may be dead
    page.evaluate(SHOW_AGAIN, "visible")
    assert page.evaluate("__streams.length") == 2
    assert page.evaluate("__streams[0].readyState === EventSource.CLOSED")  # the old one is let go

    assert sound_daemon.post("/api/press")[0] == 200
    expect(page.locator('#feed li[data-type="button.pressed"][data-press="1"]')).to_be_attached(timeout=WAIT_MS)
    expect(page.locator("#feed li[data-type='button.pressed']")).to_have_count(1)  # told once, not twice
    context.close()
    assert foreign_requests == []
    assert console_errors == []
