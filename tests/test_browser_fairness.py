"""Fairness checked on each phone, in Debian's Chromium against the real daemon on simulated hardware: the page's
own SHA-256, HMAC and schedule (webui/static/fairverify.js) give the known-answer vector of docs/FAIRNESS.md and the
same outcomes as the daemon's Python for every profile; a changed record fails in both; every joined phone adds
its randomness before the first press and checks the shuffle by itself when it ends, in its language, also on plain
http by the launcher's name on the home network, where the browser has no crypto.subtle."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
import shutil
import socket
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from launcher.fairplay.fairness import commitment, new_seed, replay, verify
from launcher.fairplay.schedule import PROFILES, profile_from_mapping, profile_to_mapping
from launcher.fairplay.sealing import commitment_of
from tests import test_browser
from tests.conftest import join, start_daemon, wait_until
from tests.test_browser import CHROMIUM_ARGS, WAIT_MS, catalogue, fill, open_joined, origin, watch
from tests.test_fairness import SEED, known_answers, play_shuffle
from tests.test_fairness_api import value
from tests.test_fairness_sealed import VALUES, entries, play_sealed

playwright_chromium = test_browser.playwright_chromium

pytestmark = pytest.mark.browser

# A custom profile that pauses, jackpots and skips zero weights often, so those draws are compared too.
WILD = profile_from_mapping(
    "custom",
    {**profile_to_mapping(PROFILES["classic"]), "hazard": [0.5, 0.7, 1.0], "max_fires_in_row": 3,
     "card_weights": [1, 0, 2.5, 0, 0.25], "jackpot_probability": 0.3, "jackpot_cards": [12, 16],
     "pause_probability": 0.4, "pause_ms": [100, 900]},
)  # fmt: skip
EVERY_PROFILE = {**PROFILES, "wild": WILD}
SEALED = play_sealed(PROFILES["classic"], SEED, 40, entries(list(VALUES), withheld=(1,)))


def phone(browser: Any, playwright: Any, locale: str = "en-US") -> Page:
    return browser.new_context(**playwright.devices["Pixel 5"], locale=locale).new_page()


def page_verdict(page: Page, record: dict[str, Any], seen: dict[str, Any] | None = None) -> dict[str, Any]:
    return page.evaluate(
        'async ([record, seen]) => (await import("/static/fairverify.js")).fairVerify(record, seen)',
        [record, seen or {}],
    )


@pytest.fixture
def verifier(daemon_process: Any, playwright_chromium: Any) -> Any:
    """The page, opened on the daemon (at 127.0.0.1: a secure page, so crypto.subtle is there to compare with)."""
    playwright, browser = playwright_chromium
    page = phone(browser, playwright)
    page.goto(daemon_process.url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    yield page
    page.context.close()


def test_the_pages_verifier_gives_the_published_known_answers(verifier: Page) -> None:
    vector = known_answers()
    got = verifier.evaluate(
        """async (v) => {
            const { fairDraws, fairHex, fairHmac, fairReplay, fairSha256, fairShuffleKey, fairUtf8 } =
                await import("/static/fairverify.js");
            const key = fairShuffleKey(v.seed, v.contributions);
            const draw = fairDraws(key);
            return {
                commitment: fairHex(fairSha256(fairUtf8(v.seed))),
                key: fairHex(key),
                key0: fairHex(fairShuffleKey(v.seed, [])),
                block0: fairHex(fairHmac(key, new Uint8Array(8))),
                draws: [0, 1, 2, 3, 4, 5].map(() => draw() * 2 ** 53),
                cases: v.cases.map((c) => fairReplay(
                    c.profile, fairShuffleKey(v.seed, c.contributions ? v.contributions : []), c.outcomes.length,
                    c.restarts)),
            };
        }""",
        vector,
    )
    assert got["commitment"] == vector["commitment"]
    assert got["key"] == vector["key"] and got["key0"] == vector["key_without_contributions"]
    assert got["block0"] == vector["block_0"]
    assert got["draws"] == vector["draws_times_2_53"]
    for case, outcomes in zip(vector["cases"], got["cases"], strict=True):
        assert outcomes == case["outcomes"], case["name"]


def test_the_pages_sha256_and_hmac_are_the_browsers_own(verifier: Page) -> None:
    """Where crypto.subtle exists (a page on 127.0.0.1), the page's hashing agrees with it on every length that
    matters to the padding (55, 56, 63, 64, 65 bytes...) and on keys longer than a block."""
    differ = verifier.evaluate(
        """async () => {
            const { fairHex, fairHmac, fairSha256 } = await import("/static/fairverify.js");
            const differ = [];
            const hex = (buffer) => fairHex(new Uint8Array(buffer));
            for (let n = 0; n <= 200; n++) {
                const data = crypto.getRandomValues(new Uint8Array(n));
                const key = crypto.getRandomValues(new Uint8Array((n * 7) % 150 + 1));
                const sha = hex(await crypto.subtle.digest("SHA-256", data));
                const imported = await crypto.subtle.importKey(
                    "raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
                const mac = hex(await crypto.subtle.sign("HMAC", imported, data));
                if (fairHex(fairSha256(data)) !== sha) differ.push(["sha256", n]);
                if (fairHex(fairHmac(key, data)) !== mac) differ.push(["hmac", n, key.length]);
            }
            return differ;
        }"""
    )
    assert differ == []


@pytest.mark.parametrize("name", EVERY_PROFILE)
def test_a_shuffle_replays_the_same_in_python_and_in_the_page(verifier: Page, name: str) -> None:
    profile = EVERY_PROFILE[name]
    contributions = [value() for _ in range(5)]
    record = play_shuffle(profile, SEED, 300, restarts=(0, 30, 31, 150), contributions=contributions)
    python = [{k: o[k] for k in ("press", "cards", "jackpot", "pause_ms")} for o in record["outcomes"]]
    assert python == [
        {"press": o.press, "cards": o.cards, "jackpot": o.jackpot, "pause_ms": o.pause_ms}
        for o in replay(profile, SEED, 300, record["restarts"], contributions)
    ]
    page = verifier.evaluate(
        """async (r) => {
            const { fairReplay, fairShuffleKey } = await import("/static/fairverify.js");
            return fairReplay(r.profile, fairShuffleKey(r.seed, r.contributions), r.outcomes.length, r.restarts);
        }""",
        record,
    )
    assert page == python
    result = page_verdict(verifier, record, {"commitment": record["commitment"], "mine": contributions[3]})
    assert result["ok"] and result["mismatch"] is None and result["shortfalls"] == []
    assert result["mine"] == {"ok": True, "place": 4}
    assert verify(record).ok


# Each with a seed whose first press comes out otherwise from a fresh start: after a drought a press fires for
# certain and after the most fires in a row it misses, but from a fresh start it may do the same, and then the two
# replays are one.
@pytest.mark.parametrize(
    ("carried", "seed"),
    [((2, 0), "5eed0000000000000000000000000002"), ((0, 3), SEED)],
    ids=["after a drought", "after fires"],
)
def test_a_shuffle_that_went_on_from_a_run_checks_the_same_in_python_and_in_the_page(
    verifier: Page, carried: tuple[int, int], seed: str
) -> None:
    record = play_shuffle(WILD, seed, 200, carried=carried)
    assert verify(record).ok
    result = page_verdict(verifier, record)
    assert result["ok"] and result["mismatch"] is None
    fresh = {**record, "carried": {"misses_in_row": 0, "fires_in_row": 0}}
    assert not verify(fresh).ok and not page_verdict(verifier, fresh)["ok"]
    impossible = page_verdict(verifier, {**record, "carried": {"misses_in_row": 1, "fires_in_row": 1}})
    assert impossible["error"].startswith("carried")
    older = {**{k: v for k, v in record.items() if k != "carried"}, "format": "uno-launcher-shuffle/3"}
    assert page_verdict(verifier, older)["mismatch"] is not None  # read as before: every shuffle started afresh


def test_the_page_checks_a_record_from_before_the_rename_as_it_did(verifier: Page) -> None:
    """A shuffle that ended before the rename is still served in its format (uno-launcher-round/2): the page checks
    it like today's, and a changed one still fails."""
    played = play_shuffle(EVERY_PROFILE["classic"], SEED, 60)
    record = {**{k: v for k, v in played.items() if k != "carried"}, "format": "uno-launcher-round/2", "round": 7}
    assert page_verdict(verifier, record, {"commitment": record["commitment"]})["ok"]
    fired = next(i for i, o in enumerate(record["outcomes"]) if o["cards"])
    record["outcomes"][fired]["cards"] += 1
    assert page_verdict(verifier, record, {})["mismatch"]["press"] == fired + 1


def changes(record: dict[str, Any]) -> dict[str, Any]:
    """Ways to change a record, each of which must fail a check."""
    outcomes = record["outcomes"]
    fired = next(i for i, o in enumerate(outcomes) if o["cards"])
    paused = next(i for i, o in enumerate(outcomes) if o["pause_ms"])
    other = new_seed()

    def changed(path: str, value: Any) -> dict[str, Any]:
        copied = copy.deepcopy(record)
        target, *keys = path.split(".")
        holder: Any = copied
        for key in [target, *keys][:-1]:
            holder = holder[int(key)] if isinstance(holder, list) else holder[key]
        last = [target, *keys][-1]
        holder[int(last) if isinstance(holder, list) else last] = value
        return copied

    contributions = record["contributions"]
    return {
        "cards": changed(f"outcomes.{fired}.cards", outcomes[fired]["cards"] + 1),
        "the first press's cards": changed("outcomes.0.cards", 0 if outcomes[0]["cards"] else 3),
        "jackpot": changed(f"outcomes.{fired}.jackpot", not outcomes[fired]["jackpot"]),
        "pause": changed(f"outcomes.{paused}.pause_ms", outcomes[paused]["pause_ms"] + 1),
        "press number": changed("outcomes.4.press", 6),
        "a press removed": {**record, "outcomes": outcomes[:10] + outcomes[11:]},
        "a contribution dropped": {**record, "contributions": contributions[1:]},
        "a contribution changed": {**record, "contributions": [value(), *contributions[1:]]},
        "contributions reordered": {**record, "contributions": contributions[::-1]},
        "a contribution added": {**record, "contributions": [*contributions, value()]},
        "the seed swapped": {**record, "seed": other},
        "the seed swapped with its own commitment": {**record, "seed": other, "commitment": commitment(other)},
        "the commitment": {**record, "commitment": commitment("another")},
        "a lid opening forgotten": {**record, "restarts": []},
        "a profile parameter": changed("profile.card_weights", [0.5, *record["profile"]["card_weights"][1:]]),
    }


def test_a_changed_record_fails_in_python_and_in_the_page(verifier: Page) -> None:
    record = play_shuffle(PROFILES["extreme"], SEED, 120, contributions=[value() for _ in range(4)])
    assert verify(record).ok and page_verdict(verifier, record)["ok"]
    for name, changed in changes(record).items():
        if name == "a lid opening forgotten":  # only a pattern cares about the lid
            changed = play_shuffle(PROFILES["pattern"], SEED, 60, restarts=(7,), contributions=record["contributions"])
            assert verify(changed).ok and page_verdict(verifier, changed)["ok"]
            changed = {**changed, "restarts": []}
        assert not verify(changed).ok, name
        result = page_verdict(verifier, changed)
        assert result["error"] is None and not result["ok"], name
    # What only this phone knows: the fingerprint it was shown, its own randomness.
    assert not page_verdict(verifier, record, {"commitment": commitment("shown to me")})["ok"]
    mine = page_verdict(verifier, record, {"mine": value()})
    assert not mine["ok"] and mine["mine"] == {"ok": False, "place": 0}
    seen = page_verdict(verifier, record, {"contributions": [record["contributions"][1]]})
    assert not seen["ok"] and seen["seenContributions"] is False


def test_an_unreadable_record_is_named_in_the_page_as_in_python(verifier: Page) -> None:
    record = play_shuffle(PROFILES["classic"], SEED, 5)
    for change, field in [
        ({"contributions": ["NOT HEX"]}, "contributions"),
        ({"seed": 5}, "seed"),
        ({"outcomes": [{"press": 1, "cards": 0}]}, "outcomes[0]"),
        ({"format": "other/9"}, "format"),
    ]:
        result = page_verdict(verifier, {**record, **change})
        assert result["error"].startswith(field), (change, result["error"])
    assert page_verdict(verifier, {k: v for k, v in record.items() if k != "format"})["older"] is True


def joined_phone(browser: Any, playwright: Any, daemon_process: Any, locale: str) -> Page:
    """A phone that joined the table (a session of its own) before it opened the page, so that its event stream is a
    joined phone's from the start: the daemon takes only two streams of phones that have not joined from one address,
    and every phone of a test comes from 127.0.0.1."""
    name, token = join(daemon_process.url, daemon_process.table_pin).split("=", 1)
    context = browser.new_context(**playwright.devices["Pixel 5"], locale=locale)
    context.add_cookies(
        [{"name": name, "value": token, "url": daemon_process.url, "httpOnly": True, "sameSite": "Strict"}]
    )
    return context.new_page()


def open_live(page: Page, daemon_process: Any, *, joined: bool) -> None:
    page.goto(daemon_process.url + "/")
    expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)
    if joined:
        expect(page.locator("#role")).to_be_visible(timeout=WAIT_MS)


def test_a_fingerprint_that_changes_during_a_shuffle_is_called_out(verifier: Page) -> None:
    """A daemon that shows a shuffle with one fingerprint and later the same shuffle with another is caught at once."""
    english = catalogue("en")
    shown, later = commitment("shown first"), commitment("shown later")
    verifier.evaluate(
        """async ([shown, later]) => {
            const { fairFollow } = await import("/static/verify.js");
            fairFollow({number: 90, commitment: shown, profile: "classic", presses: 0, commitments: []});
            fairFollow({number: 90, commitment: later, profile: "classic", presses: 2, commitments: []});
        }""",
        [shown, later],
    )
    expect(verifier.locator("#fair-swapped")).to_have_text(
        fill(english["fair.swapped"], shuffle=90, before=shown[:12] + "…")
    )


def mix_text(strings: dict[str, str], count: int, closed: bool = False) -> str:
    kind = "mix_closed" if closed else "mix"
    key = {0: f"fair.{kind}_none", 1: f"fair.{kind}_one"}.get(count, f"fair.{kind}_many")
    return fill(strings[key], count=count)


def test_every_phone_adds_its_randomness_and_checks_the_shuffle_by_itself(
    daemon_process: Any, playwright_chromium: Any
) -> None:
    playwright, browser = playwright_chromium
    home = origin(daemon_process.url)
    foreign_requests: list[str] = []
    console_errors: list[str] = []
    langs = {"a": "en", "b": "zh-Hans", "watcher": "zh-Hant", "late": "en"}
    locales = {"en": "en-US", "zh-Hans": "zh-CN", "zh-Hant": "zh-TW"}
    strings = {lang: catalogue(lang) for lang in set(langs.values())}
    phones = {
        name: phone(browser, playwright, locales[lang])
        if name == "watcher"
        else joined_phone(browser, playwright, daemon_process, locales[lang])
        for name, lang in langs.items()
    }
    for page in phones.values():
        watch(page, home, foreign_requests, console_errors)
    first = daemon_process.get("/api/state")["shuffle"]
    for name in ("a", "b", "watcher"):
        open_live(phones[name], daemon_process, joined=name != "watcher")

    # Both joined phones commit to bytes of their own by themselves; every phone says so, the watcher is asked to join.
    mixed = wait_until(lambda: len(r := daemon_process.get("/api/state")["shuffle"]["commitments"]) == 2 and r)
    for name in ("a", "b", "watcher"):
        expect(phones[name].locator("#fair-mix-text")).to_have_text(mix_text(strings[langs[name]], 2), timeout=WAIT_MS)
    places = {}
    for name in ("a", "b"):
        mine = phones[name].locator("#fair-mine")
        expect(mine).to_have_text(
            re.compile(re.escape(strings[langs[name]]["fair.mine_in"]).replace(r"\{place\}", "[12]"))
        )
        places[name] = int(re.search(r"\d", mine.text_content() or "").group())  # behind the fair mark: not shown
    assert sorted(places.values()) == [1, 2]
    expect(phones["watcher"].locator("#fair-mine")).to_have_text(strings["zh-Hant"]["fair.mine_join"])

    # The first press closes the commitments and waits while both phones reveal their bytes, by themselves; then it
    # draws. A phone that joins after it is told the shuffle was fixed without it.
    phones["a"].locator("#press").tap()
    expect(phones["a"].locator("#press")).to_be_enabled(timeout=WAIT_MS)
    assert all(daemon_process.get("/api/state")["shuffle"]["revealed"])
    for name in ("a", "b", "watcher"):
        expect(phones[name].locator("#fair-mix-text")).to_have_text(mix_text(strings[langs[name]], 2, closed=True))
    open_live(phones["late"], daemon_process, joined=True)
    late = fill(strings["en"]["refused.contributions_closed"], shuffle=first["number"])
    expect(phones["late"].locator("#fair-mine")).to_have_text(late, timeout=WAIT_MS)
    assert daemon_process.get("/api/state")["shuffle"]["commitments"] == mixed

    phones["a"].locator("#new-shuffle").tap()
    phones["a"].locator("#confirm-yes").tap()  # it asks first

    # Every phone checks the shuffle by itself and says so in its language, the fingerprint it saw still shown.
    for name, page in phones.items():
        texts = strings[langs[name]]
        expect(page.locator("#fair-verdict")).to_have_text(
            fill(texts["fair.verdict_ok"], shuffle=first["number"]), timeout=WAIT_MS
        )
        expect(page.locator("#fair-verdict-symbol")).to_have_text("✓")
        expect(page.locator("#fair-commitment")).to_have_text(first["commitment"])
        page.locator("#fair-chip").tap()  # the header\'s fair mark opens the details
        page.locator("#fair-check summary").tap()
        # Where to get a checker the launcher did not serve, and how to check it.
        expect(page.locator("#fair-checker")).to_have_text(texts["fair.checker"])
        lines = page.locator("#fair-lines li .fair-text")
        expect(lines).to_contain_text([texts["fair.replay_ok_one"]])
        if name in ("a", "b"):
            expect(lines).to_contain_text(
                [
                    texts["fair.seal_seen"],
                    fill(texts["fair.mine_ok"], place=places[name], count=2),
                    texts["fair.seen_ok"],
                ]
            )
        elif name == "watcher":
            expect(lines).to_contain_text([texts["fair.seal_seen"], fill(texts["fair.mine_none"], count=2)])
        else:
            expect(lines).to_contain_text([texts["fair.seal_late"], texts["fair.mine_late_check"]])
    # The shuffle now in play has its own fingerprint in the shuffle bar; the checked one stays in the panel.
    second = daemon_process.get("/api/state")["shuffle"]
    expect(phones["a"].locator("#seal-full")).to_have_text(second["commitment"])
    expect(phones["a"].locator("#fair-commitment")).to_have_text(first["commitment"])
    kept = json.loads(phones["a"].evaluate("localStorage.getItem('uno-launcher.access.party_lock')"))
    assert kept[first["commitment"]]["before"] is True and commitment_of(kept[first["commitment"]]["mine"]) in mixed
    test_browser.ARTIFACTS.mkdir(exist_ok=True)
    phones["b"].screenshot(path=test_browser.ARTIFACTS / "browser-fair-zh-Hans.png", full_page=True)
    for page in phones.values():
        page.context.close()
    assert foreign_requests == []
    assert console_errors == []


def test_a_contribution_that_reaches_the_daemon_after_the_first_press_is_told_why(
    daemon_process: Any, playwright_chromium: Any
) -> None:
    playwright, browser = playwright_chromium
    english = catalogue("en")
    page = joined_phone(browser, playwright, daemon_process, "en-US")
    held: list[Route] = []
    page.route("**/api/shuffles/current/contributions", lambda route: held.append(route))  # the bytes, held
    open_live(page, daemon_process, joined=True)
    while not held:
        page.wait_for_timeout(50)
    first = daemon_process.get("/api/state")["shuffle"]
    assert daemon_process.post("/api/press", {})[0] == 200  # another phone presses first
    held[0].continue_()
    late = fill(english["refused.contributions_closed"], shuffle=first["number"])
    expect(page.locator("#fair-mine")).to_have_text(late, timeout=WAIT_MS)
    expect(page.locator("#fair-mix-text")).to_have_text(mix_text(english, 0, closed=True))
    assert daemon_process.get("/api/state")["shuffle"]["commitments"] == []
    page.unroute("**/api/shuffles/current/contributions")
    assert daemon_process.post("/api/shuffles", {})[0] == 201
    expect(page.locator("#fair-verdict")).to_have_text(fill(english["fair.verdict_ok"], shuffle=first["number"]))
    page.locator("#fair-chip").tap()  # the header\'s fair mark opens the details
    page.locator("#fair-check summary").tap()
    expect(page.locator("#fair-lines li .fair-text")).to_contain_text([english["fair.mine_late_check"]])
    page.context.close()


def test_a_contribution_that_reaches_the_daemon_after_its_shuffle_ended_goes_to_the_next_one(
    daemon_process: Any, playwright_chromium: Any
) -> None:
    """The words of shuffle_over promise it: this phone adds its randomness to the shuffle in play.

    Forced here, the race that makes it hard: the state reads the page makes as its stream opens are answered
    while shuffle 1 is still in play but reach the page only after it has heard of shuffle 2. Being older than
    what the page knows, they must not take it back to shuffle 1.
    """
    playwright, browser = playwright_chromium
    page = joined_phone(browser, playwright, daemon_process, "en-US")
    held: list[Route] = []
    # The first bytes held, any after them let through.
    page.route("**/api/shuffles/current/contributions", lambda r: r.continue_() if held else held.append(r))
    reads: list[Any] = []  # the page's first state read let through; later ones answered now, delivered later
    stale: list[tuple[Route, Any]] = []

    def state_read(route: Route) -> None:
        if not reads:
            reads.append(route.request)
            route.continue_()
        elif reads[-1] is not None:
            stale.append((route, route.fetch()))
        else:
            route.continue_()

    page.route("**/api/state", state_read)
    open_live(page, daemon_process, joined=True)
    while not held or not stale:
        page.wait_for_timeout(50)
    first = daemon_process.get("/api/state")["shuffle"]
    assert daemon_process.post("/api/shuffles", {})[0] == 201  # another phone starts the next shuffle
    second = daemon_process.get("/api/state")["shuffle"]
    expect(page.locator("#seal-full")).to_have_text(second["commitment"], timeout=WAIT_MS)  # the page heard of it
    reads.append(None)  # reads from now on let through
    for route, answer in stale:
        assert json.loads(answer.body())["shuffle"]["commitment"] == first["commitment"]
        with page.expect_response("**/api/state") as delivered:
            route.fulfill(response=answer)
        delivered.value.finished()
    held[0].continue_()  # refused: shuffle_over
    # Waited for on the page: the route that lets the next bytes through is served while Playwright waits.
    expect(page.locator("#fair-mine")).to_have_text(fill(catalogue("en")["fair.mine_in"], place=1), timeout=WAIT_MS)
    expect(page.locator("#seal-full")).to_have_text(second["commitment"])
    assert len(daemon_process.get("/api/state")["shuffle"]["commitments"]) == 1
    page.context.close()


def test_on_plain_http_by_the_launchers_name_the_page_still_contributes_and_checks(
    daemon_process: Any, playwright_chromium: Any
) -> None:
    """A phone on the home network opens http://<the Pi's name>:8080/: not a secure page, so no crypto.subtle."""
    name = socket.gethostname().lower()
    executable = shutil.which("chromium")
    assert executable, "Chromium is not installed: `apt-get install -y chromium` (the browser tests need it)"
    args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {name} 127.0.0.1"]
    port = daemon_process.url.rsplit(":", 1)[1]
    by_name = dataclasses.replace(daemon_process, url=f"http://{name}:{port}")
    english = catalogue("en")
    playwright, _ = playwright_chromium
    browser = playwright.chromium.launch(executable_path=executable, args=args)
    try:
        page = phone(browser, playwright)
        console_errors: list[str] = []
        page.on("pageerror", lambda e: console_errors.append(str(e)))
        open_joined(page, by_name)
        assert page.evaluate("[window.isSecureContext, typeof crypto.subtle, typeof crypto.getRandomValues]") == [
            False,
            "undefined",
            "function",
        ]
        first = daemon_process.get("/api/state")["shuffle"]
        wait_until(lambda: len(daemon_process.get("/api/state")["shuffle"]["commitments"]) == 1)
        expect(page.locator("#fair-mine")).to_have_text(fill(english["fair.mine_in"], place=1), timeout=WAIT_MS)
        for _ in range(3):
            page.locator("#press").tap()
            expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
        page.locator("#new-shuffle").tap()
        page.locator("#confirm-yes").tap()  # it asks first
        expect(page.locator("#fair-verdict")).to_have_text(
            fill(english["fair.verdict_ok"], shuffle=first["number"]), timeout=WAIT_MS
        )
        assert console_errors == []
    finally:
        browser.close()


# Every press fires; the simulated roller stalls below 0.9 duty and the motor runs at 0.5: no card ever comes out.
JAM_TOML = """
[dispense]
pwm = 0.5
jam_ms = 200
min_rest_ms = 10

[sim]
stall_duty = 0.9

[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
"""


def test_a_jam_and_a_changed_record_show_on_the_check(tmp_path: Any, playwright_chromium: Any) -> None:
    playwright, browser = playwright_chromium
    running = start_daemon(tmp_path, JAM_TOML)
    try:
        hant = catalogue("zh-Hant")
        page = phone(browser, playwright, "zh-TW")
        open_joined(page, running)
        wait_until(lambda: len(running.get("/api/state")["shuffle"]["commitments"]) == 1)
        page.locator("#press").tap()
        expect(page.locator('#feed li[data-type="launcher.jammed"]')).to_have_count(1, timeout=WAIT_MS)
        expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
        assert running.post("/api/shuffles", {})[0] == 201

        # The draws were fair; what came out was not what was drawn, and the check says so, press by press.
        expect(page.locator("#fair-verdict")).to_have_text(fill(hant["fair.verdict_short"], shuffle=1), timeout=WAIT_MS)
        record = running.get("/api/shuffles/1")
        drawn = record["outcomes"][0]["cards"]
        words = hant["fair.short_one" if drawn == 1 else "fair.short"]
        short = fill(words, press=1, cards=drawn, dispensed=0, why=hant["fair.stop_jam"])
        page.locator("#fair-chip").tap()  # the header's fair mark opens the details
        page.locator("#fair-check summary").tap()
        expect(page.locator('#fair-lines li[data-state="note"] .fair-text')).to_have_text([short])

        # A record changed on its way to this phone (here by the test) fails, and the check opens to say where.
        def tampered(route: Route) -> None:
            response = route.fetch()
            changed = response.json()
            changed["outcomes"][0]["cards"] += 1
            route.fulfill(response=response, json=changed)

        page.route("**/api/shuffles/2", tampered)
        wait_until(lambda: len(running.get("/api/state")["shuffle"]["commitments"]) == 1)
        page.locator("#press").tap()
        expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
        assert running.post("/api/shuffles", {})[0] == 201
        expect(page.locator("#fair-verdict")).to_have_text(fill(hant["fair.verdict_bad"], shuffle=2), timeout=WAIT_MS)
        expect(page.locator("#fair-check")).to_have_attribute("open", "")
        drawn = running.get("/api/shuffles/2")["outcomes"][0]["cards"]
        bad = fill(hant["fair.replay_bad"], press=1, field="cards", recorded=drawn + 1, replayed=drawn)
        expect(page.locator('#fair-lines li[data-state="bad"] .fair-text')).to_have_text([bad])
        page.context.close()
    finally:
        running.close()


def test_the_page_checks_a_format_5_record_against_what_it_saw_close(verifier: Page) -> None:
    """The commitments this phone saw close, its own bytes and the profile text it was shown, each checked."""
    assert page_verdict(verifier, SEALED)["ok"] and page_verdict(verifier, SEALED)["withheld"] == [2]
    commitments = [c["commitment"] for c in SEALED["contributions"]]
    seen = {"contributions": commitments, "mine": VALUES[0], "index": 0, "profile": "classic"}
    assert page_verdict(verifier, SEALED, {**seen, "profileText": SEALED["profile"]})["ok"]
    other_text = SEALED["profile"].replace('"max_fires_in_row":2', '"max_fires_in_row":3')
    assert not page_verdict(verifier, SEALED, {**seen, "profileText": other_text})["ok"]
    assert not page_verdict(verifier, SEALED, {**seen, "contributions": commitments[:2]})["ok"]  # one added after
    withheld_mine = page_verdict(verifier, SEALED, {**seen, "mine": VALUES[1], "index": 1})
    assert not withheld_mine["ok"] and withheld_mine["mine"]["ok"] is False


def test_the_page_fails_a_record_without_the_drand_round_it_saw_announced(verifier: Page) -> None:
    """A daemon with the beacon on announces the round when the commitments close; one that then keys the shuffle
    without it (and leaves `beacon` out, or names another round) writes a record that replays by itself, so only
    the phone that saw the announcement can catch it: it must."""
    from tests.test_beacon import BEACON, ROUND

    assert page_verdict(verifier, BEACON, {"beaconRound": ROUND})["ok"]
    other = page_verdict(verifier, BEACON, {"beaconRound": ROUND + 1})
    assert not other["ok"] and other["seenBeacon"] is False and other["mismatch"] is None
    dropped = page_verdict(verifier, SEALED, {"beaconRound": ROUND})
    assert not dropped["ok"] and dropped["mismatch"] is None  # the replay alone is fine: only the round gives it away

    # The whole way on the page: announced in shuffle.sealed, the record read when the shuffle ends.
    english = catalogue("en")
    dropped, other = english["fair.beacon_dropped"], english["fair.beacon_other"]
    for number, record, announced, words, late in [
        (91, SEALED, ROUND, fill(dropped, seen=ROUND), False),
        (92, BEACON, ROUND + 1, fill(other, seen=ROUND + 1, round=ROUND), False),
        # The page opened after the event (another shuffle: nothing of it remembered): the state says the round.
        (93, play_sealed(PROFILES["classic"], new_seed(), 12), ROUND, fill(dropped, seen=ROUND), True),
    ]:
        ended_with_round(verifier, number, record, announced, late)
        verdict = fill(english["fair.verdict_bad"], shuffle=number)
        expect(verifier.locator("#fair-verdict")).to_have_text(verdict, timeout=WAIT_MS)
        expect(verifier.locator('#fair-lines li[data-state="bad"] .fair-text')).to_have_text([words])


def ended_with_round(page: Page, number: int, record: dict[str, Any], announced: int, late: bool) -> None:
    """Shuffle `number` shown on the page, its commitments closing with drand round `announced` (`late`: the page
    is first shown the shuffle, round included, by a state read after they closed), then ended with `record`."""
    page.route(f"**/api/shuffles/{number}", lambda route: route.fulfill(json=record))
    page.evaluate(
        """async ([number, record, round, late]) => {
            const { fairFollow, plug } = await import("/static/verify.js");
            const commitment = record.commitment;
            const commitments = record.contributions.map((c) => c.commitment);
            const shown = {number, commitment, profile: "classic", profile_text: record.profile, presses: 0};
            if (late) fairFollow({...shown, phase: "revealing", commitments, beacon_round: round});
            else {
                fairFollow({...shown, phase: "committing", commitments: []});
                const sealed = {shuffle: number, commitments, reveal_s: 5, beacon_round: round};
                plug.event({id: 1e9 + 2 * number, type: "shuffle.sealed", data: sealed});
            }
            plug.event({id: 1e9 + 2 * number + 1, type: "shuffle.ended", data: {shuffle: number, commitment}});
        }""",
        [number, record, announced, late],
    )
