"""A family's table for the browser journeys (issue #47): the real daemon in this process on simulated hardware, so
that a test can jam the roller, open the lid, slow the cards, empty the hopper and pull the board's cable as a family
would meet them; and the family's screens (phones and a /table screen), each checked as its person sees it.

Screenshots of each step go to $UNO_SCREENSHOTS (else the test's tmp_path) as
<journey>-<seat>-<lang>-<width>x<height>-<step>.png."""

from __future__ import annotations

import dataclasses
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from launcher.config import load
from launcher.daemon import Daemon
from launcher.hardware.sim import SimulatedHardware
from tests.conftest import TESTS_LIMITS_TOML
from tests.test_browser import WAIT_MS, catalogue, fill, origin, small_targets, tap_still
from tests.test_browser_journeys import KEY_LIKE, SHOWN_TEXT, english_words
from tests.test_browser_prompt import CUT_OFF, drawn_lines

# Every press fires six cards (so a fire is long enough to cut in the middle); the hopper holds three fires; a jam is
# told within jam_ms, a reverse and jam_ms again (about 1.1 s), well inside a fire's 1.8 s at most.
FAMILY_TOML = """
[dispense]
min_rest_ms = 10
jam_ms = 500
max_run_ms = 1800
hopper_cards = 18

[sim]
cards_per_second = 80.0
card_block_ms = 2.0

[web]
host = "127.0.0.1"
port = 0
heartbeat_s = 0.5

[hardware]
backend = "sim"

[schedule]
profile = "custom"

[schedule.custom]
hazard = [1.0, 1.0]
max_fires_in_row = 20
card_weights = [0, 0, 0, 0, 0, 1]
jackpot_probability = 0.0
"""
CARDS_A_FIRE = 6
HOPPER = 18
# Cards a second at full duty (the motor runs at 0.8 of it): a worn roller, a card every 0.33 s, which the 1.8 s
# limit cuts after four or five cards (a loaded machine only slows it), with 0.17 s to spare before jam_ms would
# call a gap a jam; and full speed, six cards in 0.13–0.45 s on a loaded machine. (A roller slowed for the TV's wait
# to be watched, 6.5 a second, took 1.1–1.7 s there and now and then met the 1.8 s limit: a FAULT in place of the
# six cards. The TV's moments are recorded as they change (RECORD_MOMENTS): no speed is needed to see them.)
WORN = 3.75
FAST = 80.0


@contextmanager
def family_daemon(tmp_path: Path) -> Iterator[Daemon]:
    """The daemon on simulated hardware in this process, serving on a free port of 127.0.0.1."""
    config_file = tmp_path / "family.toml"
    config_file.write_text(FAMILY_TOML + TESTS_LIMITS_TOML + f'\n[state]\ndir = "{tmp_path / "state"}"\n', "utf-8")
    running = Daemon(load(config_file))
    serving = threading.Thread(target=running.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        yield running
    finally:
        running.close()
        serving.join(5)


def hardware(daemon: Daemon) -> SimulatedHardware:
    assert isinstance(daemon.hardware, SimulatedHardware)
    return daemon.hardware


def roller_speed(daemon: Daemon, cards_per_second: float) -> None:
    """The simulated roller's speed from now on (a worn roller, or one slow enough to watch)."""
    world = hardware(daemon).world
    world._sim = dataclasses.replace(world._sim, cards_per_second=cards_per_second)


@dataclass(frozen=True)
class Seat:
    """A screen at the table: whose it is, its language and size, the players it presses for (none: the /table
    screen), and whether it joined with the admin PIN."""

    name: str
    lang: str
    size: tuple[int, int]
    players: tuple[str, ...] = ()
    admin: bool = False

    @property
    def tv(self) -> bool:
        return not self.players

    @property
    def strings(self) -> dict[str, str]:
        return catalogue(self.lang)

    def say(self, key: str, **values: object) -> str:
        return fill(self.strings[key], **values)


LOCALES = {"en": "en-GB", "zh-Hans": "zh-CN", "zh-Hant": "zh-TW"}


@dataclass
class Family:
    """The screens of one journey, opened on `daemon`, each checked and saved at every step."""

    journey: str
    daemon: Daemon
    browser: Browser
    seats: tuple[Seat, ...]
    folder: Path
    names: list[str]
    pages: dict[str, Page] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return str(self.daemon.urls[0]).rstrip("/")

    def seat(self, name: str) -> Seat:
        return next(seat for seat in self.seats if seat.name == name)

    def page(self, name: str) -> Page:
        return self.pages[name]

    def phones(self) -> Iterator[tuple[Seat, Page]]:
        return ((seat, self.pages[seat.name]) for seat in self.seats if not seat.tv)

    def screens(self) -> Iterator[tuple[Seat, Page]]:
        return ((seat, self.pages[seat.name]) for seat in self.seats)

    def open(self) -> None:
        """Every screen opened: the phones joined by the console's link (each taking part in the shuffle before
        anyone presses, as at a table where everyone joins first), the /table screen live."""
        pins, home = self.daemon.new_pins, origin(self.url)
        assert pins is not None
        for seat in self.seats:
            width, height = seat.size
            context = self.browser.new_context(
                viewport={"width": width, "height": height},
                device_scale_factor=1,  # the layout is the same at any; the screenshots cost less
                is_mobile=not seat.tv and width < 1000,
                has_touch=not seat.tv,
                locale=LOCALES[seat.lang],
            )
            page = self.pages[seat.name] = context.new_page()
            page.on("request", lambda r: origin(r.url) != home and self.errors.append(f"left the table: {r.url}"))
            page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
            page.on("pageerror", lambda e: self.errors.append(str(e)))
            if seat.tv:
                page.goto(self.url + "/table")
            else:
                page.goto(f"{self.url}/#pin={pins.admin if seat.admin else pins.table}")
                expect(page.locator("#role")).to_be_visible(timeout=3 * WAIT_MS)  # a first start's PINs: hashed
                taken = re.escape(seat.strings["fair.mine_in"]).replace(re.escape("{place}"), r"\d+")
                expect(page.locator("#fair-mine")).to_have_text(re.compile(taken), timeout=WAIT_MS)
            expect(page.locator("#conn")).to_have_attribute("data-state", "live", timeout=WAIT_MS)

    def told(self, key: str, **values: object) -> None:
        """Every screen's prompt says `key`'s words in its own language."""
        for seat, page in self.screens():
            where = "#tv-prompt" if seat.tv else "#prompt-text"
            expect(page.locator(where)).to_have_text(seat.say(key, **values), timeout=WAIT_MS)

    def trouble(self, what: str, do: str, **values: object) -> None:
        """Every screen tells the trouble: what happened and what to do, in its own words."""
        for seat, page in self.screens():
            prefix = "#tv-trouble" if seat.tv else "#trouble"
            expect(page.locator(f"{prefix}-what")).to_have_text(seat.say(what, **values), timeout=WAIT_MS)
            expect(page.locator(f"{prefix}-do")).to_have_text(seat.say(do, **values))

    def no_trouble(self, timeout: float = WAIT_MS) -> None:
        for seat, page in self.screens():
            expect(page.locator("#tv-trouble" if seat.tv else "#trouble")).to_be_hidden(timeout=timeout)

    def shoot(self, step: str, *only: str, landed: tuple[str, ...] = ()) -> None:
        """Every screen (or those `only`) saved as its person sees it, and checked; `landed`: the parts a phone's
        page scrolled to for the next thing to do, whole on its screen instead of the top of the page."""
        for seat, page in self.screens():
            if not only or seat.name in only:
                width, height = seat.size
                path = self.folder / f"{self.journey}-{seat.name}-{seat.lang}-{width}x{height}-{step}.png"
                page.screenshot(path=path, animations="disabled")
                self.check(seat, page, step, landed)

    def check(self, seat: Seat, page: Page, step: str, landed: tuple[str, ...] = ()) -> None:
        """The first screen as its person sees it: the prompt and the button whole, the trouble whole when there is
        some, nothing cut or wider than the screen, every control big enough to tap, and only the words of the
        screen's own language (no catalogue key, no English on a Chinese screen but the names)."""
        where = f"{step} on {seat.name}'s screen ({seat.lang}, {seat.size[0]}×{seat.size[1]})"
        scroll_width, inner_width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll_width <= inner_width, f"{where}: the page scrolls sideways"
        if seat.tv:
            expect(page.locator("#stage")).to_be_visible()
            for part in ("#tv-prompt", "#tv-trouble", "#stage"):
                if page.locator(part).is_visible():
                    whole_on_first_screen(page, part, where)
        elif landed:
            for part in landed:
                whole_in_view(page, part, where)
        else:
            expect(page.locator("#press")).to_be_visible()
            for part in ("#prompt", "#press", "#trouble", "#prompt-fix", "#press-for"):
                if page.locator(part).is_visible():
                    whole_on_first_screen(page, part, where)
            assert page.evaluate(CUT_OFF) == [], f"{where}: cut off at the top of the page"
            caption, button = page.locator("#press-caption").bounding_box(), page.locator("#press").bounding_box()
            if caption is not None and button is not None and caption["height"]:  # hidden while an outcome shows
                bottom = caption["y"] + caption["height"]
                assert button["y"] <= caption["y"] and bottom <= button["y"] + button["height"], f"{where}: words cut"
            for part in ("#prompt-text", "#prompt-me-text", "#trouble-what", "#trouble-do", "#trouble-next"):
                if page.locator(part).is_visible():
                    lines = drawn_lines(page, part)
                    ends = list(accumulate(len(line) for line in lines[:-1]))
                    text = "".join(lines)
                    split = [m for name in self.names for m in re.finditer(re.escape(name), text)]
                    assert not [m for m in split if any(m.start() < end < m.end() for end in ends)], (
                        f"{where}: a name split in {part}: {lines}"
                    )
            small = small_targets(page)
            assert small == [], f"{where}: controls too small to tap: {small}"
        text = page.evaluate(SHOWN_TEXT)
        prefixes = {key.split(".", 1)[0] for key in seat.strings}
        raw = [m.group(0) for m in KEY_LIKE.finditer(text) if m.group(1) in prefixes]
        assert raw == [], f"{where}: catalogue keys shown raw"
        if seat.lang != "en":
            assert english_words(text, seat.strings, self.names) == [], f"{where}: English on a Chinese screen"

    def close(self) -> None:
        for page in self.pages.values():
            page.context.close()
        assert self.errors == []


def whole_on_first_screen(page: Page, selector: str, where: str) -> None:
    """The element is inside the screen as the page is left: top, bottom, left and right, not scrolled away."""
    box, view = page.locator(selector).bounding_box(), page.viewport_size
    assert box is not None and view is not None
    assert page.evaluate("window.scrollY") == 0, f"{where}: the page is left scrolled down, {selector} off the top"
    inside = box["y"] >= 0 and box["x"] >= 0 and box["y"] + box["height"] <= view["height"]
    assert inside and box["x"] + box["width"] <= view["width"], f"{where}: {selector} not whole at {box}"


def whole_in_view(page: Page, selector: str, where: str) -> None:
    box, view = page.locator(selector).bounding_box(), page.viewport_size
    assert box is not None and view is not None
    assert box["y"] >= 0 and box["y"] + box["height"] <= view["height"], f"{where}: {selector} not whole at {box}"


def confirm(page: Page) -> None:
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.locator("#confirm-yes").tap()
    expect(page.locator("#confirm-dialog")).to_be_hidden()


def press(page: Page) -> None:
    """A press on this phone, and the launcher done with it (its button may stay off: a hopper it emptied)."""
    expect(page.locator("#press")).to_be_enabled(timeout=WAIT_MS)
    tap_still(page.locator("#press"))
    expect(page.locator("#press")).to_have_attribute("aria-busy", "false", timeout=WAIT_MS)


# What the stage shows, each time it changes: [moment, caption, outcome], so a moment of 1.5 s is seen however
# slowly the test reads the screens.
RECORD_MOMENTS = """() => {
  window.moments = [];
  const stage = document.querySelector("#stage"), text = (id) => document.getElementById(id)?.textContent ?? "";
  new MutationObserver(() => moments.push([stage.dataset.moment ?? "", text("tv-outcome"), text("press-outcome")]))
    .observe(stage, { attributes: true, subtree: true, childList: true, characterData: true });
}"""


def screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("UNO_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
