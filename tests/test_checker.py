"""The standalone checker (docs/FAIRNESS.md, "A checker the launcher did not serve"): the file in the repository is a
fresh, reproducible build of the page's own verifier, its SHA-256 is the README's and `uno-launcher verify
--checker`'s, it needs no network, and, opened in Chromium from a file:// address with the network off, it gives
`uno-launcher verify`'s verdict, in the same words, on every record of the suite below, changed ones included."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from launcher import checker
from launcher.cli import main
from launcher.fairness import FORMAT_V2, FORMAT_V3, RecordError, verify
from launcher.schedule import PROFILES
from tests import test_browser
from tests.test_beacon import BEACON, ROUND, SIGNATURE, with_beacon
from tests.test_fairness import CONTRIBUTIONS, SEED, play_shuffle
from tests.test_fairness_sealed import RECORD, VALUES, entries, play_sealed, sealed_vector, vector_record

ROOT = Path(__file__).resolve().parent.parent
BUILT = ROOT / checker.BUILT

playwright_chromium = test_browser.playwright_chromium


def test_the_checker_in_the_repository_is_a_fresh_build_and_small() -> None:
    assert BUILT.read_bytes() == checker.build() == checker.build()  # reproducible: no date, no machine in it
    assert len(BUILT.read_bytes()) <= 100_000
    assert (ROOT / "webui" / "static" / "fairverify.js").read_text(encoding="utf-8") in BUILT.read_text("utf-8")


def test_the_checker_asks_for_nothing_from_any_network() -> None:
    page = BUILT.read_text(encoding="utf-8")
    assert "default-src 'none'" in page  # its Content-Security-Policy forbids every connection
    # The vendored library's licence, at the end, names its author's site: words, not an address anything loads.
    page, licence = page.split("<!-- The drand signature check is @noble/curves")
    assert "MIT" in licence and (ROOT / "webui/checker/vendor/LICENSE-noble").read_text("utf-8") in licence
    assert not re.search(
        r"\b(src|href)\s*=|https?://|^\s*import\b|import\(|fetch\(|XMLHttpRequest|WebSocket", page, re.M
    )


def test_the_readme_and_the_command_print_the_built_files_sha256(capsys: pytest.CaptureFixture[str]) -> None:
    digest = hashlib.sha256(BUILT.read_bytes()).hexdigest()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.findall(r"`([0-9a-f]{64})`", readme) == [digest]
    assert main(["verify", "--checker"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"{digest}  uno-checker.html" and str(checker.BUILT) in out


def test_the_command_writes_the_checker_where_asked(tmp_path: Path) -> None:
    assert main(["verify", "--checker", "--out", str(tmp_path / "c.html")]) == 0
    assert (tmp_path / "c.html").read_bytes() == BUILT.read_bytes()


def test_out_without_checker_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "x.json", "--out", "y.html"]) == 2
    assert "--out goes with --checker" in capsys.readouterr().err


# --- the suite: records of every format the page reads, as played and changed, and what the reader saw ---


def changed(record: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    record = copy.deepcopy(record)
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return record


def jammed() -> dict[str, Any]:
    record = copy.deepcopy(RECORD)
    fired = next(o for o in record["outcomes"] if o["cards"] > 1)
    fired.update(dispensed=1, stop="jam")
    record["outcomes"][0].update(dispensed=None, stop=None)
    return record


V4 = play_shuffle(PROFILES["brutal"], SEED, 40)
WITHHELD = play_sealed(PROFILES["classic"], SEED, 30, entries(list(VALUES), withheld=(0, 2)))
SUITE: list[tuple[str, Any, dict[str, Any]]] = [
    ("format 5", RECORD, {}),
    ("withheld", WITHHELD, {}),
    ("jammed", jammed(), {}),
    ("seen", RECORD, {"commitment": RECORD["commitment"].upper(), "mine": VALUES[1]}),
    ("seen another", RECORD, {"commitment": "0" * 64, "mine": "1" * 32}),
    ("withheld mine", WITHHELD, {"mine": VALUES[0]}),
    ("value changed", changed(RECORD, ["contributions", 1, "value"], "0" * 32), {}),
    ("value hidden", changed(RECORD, ["contributions", 1, "value"], None), {}),
    ("commitment changed", changed(RECORD, ["contributions", 0, "commitment"], "a" * 64), {}),
    ("cards", changed(RECORD, ["outcomes", 7, "cards"], 9), {}),
    ("jackpot", changed(RECORD, ["outcomes", 3, "jackpot"], 1), {}),
    ("pause", changed(RECORD, ["outcomes", 11, "pause_ms"], "1500"), {}),
    ("press", changed(RECORD, ["outcomes", 2, "press"], 4), {}),
    ("seal", changed(RECORD, ["commitment"], "b" * 64), {}),
    (
        "profile",
        changed(RECORD, ["profile"], RECORD["profile"].replace('"max_fires_in_row":2', '"max_fires_in_row":3')),
        {},
    ),
    ("seed", changed(RECORD, ["seed"], "5eed0000000000000000000000000002"), {}),
    ("format 4", V4, {"mine": CONTRIBUTIONS[2]}),
    ("format 4 changed", changed(V4, ["contributions", 0], "0" * 32), {}),
    ("format 3", {**{k: v for k, v in V4.items() if k != "carried"}, "format": FORMAT_V3}, {}),
    (
        "format 2",
        {**{k: v for k, v in V4.items() if k not in ("carried", "shuffle")}, "format": FORMAT_V2, "round": 3},
        {},
    ),
    ("no seed", {k: v for k, v in RECORD.items() if k != "seed"}, {}),
    ("profile object", changed(RECORD, ["profile"], {"name": "classic"}), {}),
    ("bad contribution", changed(RECORD, ["contributions", 0], "0" * 32), {}),
    ("bad outcome", changed(RECORD, ["outcomes", 0], {"press": 1}), {}),
    ("not an object", [1, 2], {}),
    ("beacon", BEACON, {}),
    ("beacon not had", with_beacon(signature=None, randomness=None), {}),
    ("beacon signature", with_beacon(signature=SIGNATURE[:-2] + "9c"), {}),
    ("beacon round", with_beacon(round=ROUND + 1), {}),
    ("beacon randomness", with_beacon(randomness="ab" * 32), {}),
    ("beacon of another chain", with_beacon(chain="0" * 64), {}),
    ("beacon round past 2^53", with_beacon(round=2**53), {}),
]


def cli_verdict(record: Any, seen: dict[str, Any]) -> tuple[str, list[str]]:
    try:
        report = verify(record, seen_commitment=seen.get("commitment"), mine=[seen["mine"]] if "mine" in seen else [])
    except RecordError:
        return "unreadable", []
    return ("ok" if report.ok else "failed"), str(report).split("\n")


@pytest.fixture
def checker_page(playwright_chromium: Any) -> Any:
    """The checker from its file, in a context with the network off; every request it makes is kept."""
    _, browser = playwright_chromium
    context = browser.new_context(offline=True)
    requests: list[str] = []
    page = context.new_page()
    page.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(BUILT.as_uri())
    yield page
    assert [url for url in requests if not url.startswith("file://")] == []
    assert errors == []
    context.close()


def checker_verdict(page: Page, record: Any, seen: dict[str, Any]) -> tuple[str, list[str]]:
    """The checker's verdict on a record (or, as text, what a QR code holds) pasted into it."""
    page.fill("#record", record if isinstance(record, str) else json.dumps(record))
    page.fill("#commitment", seen.get("commitment", ""))
    page.fill("#mine", seen.get("mine", ""))
    page.click("#check")
    expect(page.locator("#verdict")).not_to_have_attribute("data-state", "checking", timeout=60_000)
    state = page.locator("#verdict").get_attribute("data-state")
    lines = page.locator("#lines").text_content() or ""
    return str(state), lines.split("\n")


@pytest.mark.browser
def test_the_checker_from_a_file_agrees_with_verify_on_every_record(checker_page: Page) -> None:
    for name, record, seen in SUITE:
        expected_state, expected_lines = cli_verdict(record, seen)
        state, lines = checker_verdict(checker_page, record, seen)
        assert state == expected_state, name
        if expected_state != "unreadable":
            assert lines == expected_lines, name
    # The suite holds every verdict: fair, fair with notes, failed and unreadable.
    assert {cli_verdict(r, s)[0] for _, r, s in SUITE} == {"ok", "failed", "unreadable"}


@pytest.mark.browser
def test_the_checker_reads_a_record_from_a_file_and_says_what_is_not_json(checker_page: Page, tmp_path: Path) -> None:
    path = tmp_path / "uno-shuffle-3.json"
    path.write_text(json.dumps(WITHHELD), encoding="utf-8")
    checker_page.set_input_files("#file", str(path))
    expect(checker_page.locator("#verdict")).to_have_attribute("data-state", "ok")
    assert checker_page.locator("#lines").text_content() == str(verify(WITHHELD))
    checker_page.fill("#record", "{")
    checker_page.click("#check")
    expect(checker_page.locator("#verdict")).to_have_attribute("data-state", "unreadable")
    expect(checker_page.locator("#lines")).to_contain_text("not valid JSON")


@pytest.mark.browser
def test_the_checkers_javascript_gives_the_format_5_known_answers(checker_page: Page) -> None:
    v = sealed_vector()
    state, lines = checker_verdict(checker_page, vector_record(v), {})
    assert state == "ok" and lines == str(verify(vector_record(v))).split("\n")
    assert "NOTE: contribution 2 was committed and never revealed" in lines[1]


@pytest.mark.browser
def test_the_checker_takes_the_text_of_the_pages_qr_code_as_verify_does(checker_page: Page) -> None:
    from launcher import record_qr

    for record in (RECORD, BEACON, changed(RECORD, ["outcomes", 7, "cards"], 9)):
        expected = cli_verdict(record, {})
        assert checker_verdict(checker_page, record_qr.packed(record), {}) == expected
    state, lines = checker_verdict(checker_page, record_qr.packed(RECORD)[:-2], {})
    assert state == "unreadable" and lines[0].startswith("the QR code's text does not hold a record")
