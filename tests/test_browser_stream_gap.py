"""The page told of a `gap` in its stream (docs/API.md: a phone resuming from further back than a stream replays from
the disk): it goes on live without an error, and a stream it opens again itself resumes after the gap (from the
events memory sent after it), not before it."""

import pytest
from playwright.sync_api import expect

from tests.conftest import start_daemon_with_log
from tests.test_browser import WAIT_MS, open_joined, playwright_chromium
from tests.test_browser_sound import SHOW_AGAIN, new_phone

pytestmark = pytest.mark.browser
__all__ = ["playwright_chromium"]

LOG = 2000  # some 300 KB of messages on the disk, far past what one stream replays from it

# The page's first stream asks for the whole log, as a phone away for weeks would; each stream keeps its gaps' ids.
FROM_THE_START = """
window.__streams = [];
const NativeEventSource = EventSource;
window.EventSource = class extends NativeEventSource {
  constructor(url, ...rest) {
    super(__streams.length ? url : url.replace(/last_event_id=\\d+/, "last_event_id=0"), ...rest);
    __streams.push(this);
    this.gaps = [];
    this.addEventListener("gap", (message) => this.gaps.push(Number(message.lastEventId)));
  }
};
"""


@pytest.fixture
def daemon_with_a_long_log(tmp_path):
    running = start_daemon_with_log(tmp_path, LOG)
    try:
        yield running
    finally:
        running.close()


def test_a_page_told_of_a_gap_follows_on_and_resumes_after_it(daemon_with_a_long_log, playwright_chromium):
    daemon = daemon_with_a_long_log
    playwright, browser = playwright_chromium
    context, page, foreign_requests, console_errors = new_phone(browser, playwright, daemon, FROM_THE_START)
    page.clock.install()  # the page's own clock, moved on below instead of waiting
    open_joined(page, daemon)
    page.wait_for_function("() => __streams[0].gaps.length === 1", timeout=WAIT_MS)
    gap = page.evaluate("__streams[0].gaps[0]")
    assert gap > LOG // 2  # the log's start was skipped, not replayed whole

    page.evaluate(SHOW_AGAIN, "hidden")
    page.clock.fast_forward("00:20")  # longer than the daemon's heartbeat: the page opens a new stream itself
    page.evaluate(SHOW_AGAIN, "visible")
    page.wait_for_function("() => __streams.length === 2", timeout=WAIT_MS)
    resumed_after = int(page.evaluate("__streams[1].url").rsplit("last_event_id=", 1)[1])
    assert resumed_after >= gap, f"the new stream asked from {resumed_after}, before the gap to {gap}"
    assert page.evaluate("__streams[1].gaps.length") == 0

    assert daemon.post("/api/press")[0] == 200
    expect(page.locator('#feed li[data-type="button.pressed"][data-press="1"]')).to_be_attached(timeout=WAIT_MS)
    expect(page.locator("#conn")).to_have_attribute("data-state", "live")
    context.close()
    assert foreign_requests == []
    assert console_errors == []
