"""Shared fixtures: the real daemon on simulated hardware, in-process or in a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import Config
from launcher.daemon import Daemon
from tests.virtual_clock import VirtualClock
from webui.parts import Parts, parts

# Every phone of the tests comes from 127.0.0.1 (at a table each has its own address), and tests play many games
# in a row (in virtual time that stands still): the budgets of one phone at their highest, for every daemon a test
# starts unless its config has a [limits] of its own. tests/test_hostile_table.py meets the defaults.
TESTS_LIMITS = {
    "games_per_minute": 600,
    "declarations_per_minute": 6000,
    "joins_per_minute": 600,
    "shuffles_per_minute": 600,
    "reloads_per_minute": 600,
    "presses_per_minute": 60000,
    "let_ins_per_minute": 600,
}
TESTS_LIMITS_TOML = "\n[limits]\n" + "".join(f"{key} = {value}\n" for key, value in TESTS_LIMITS.items())

# Fast simulated hardware, so a few hundred presses take seconds, not minutes. Not faster: the board stops the motor
# at the first pass of its loop after the last card, and at 250 cards a second a loaded machine's 16 ms between two
# passes let 4 more out (a deal of 7 counted 11, honestly).
FAST_SIM_TOML = """
[dispense]
min_rest_ms = 10
jam_ms = 400
hopper_cards = 500

[sim]
cards_per_second = 80.0
card_block_ms = 2.0

[web]
heartbeat_s = 0.5
"""


@dataclass(frozen=True)
class Joined:
    """A state directory's PINs, shown on its first start, and a session cookie of each role."""

    table_pin: str
    admin_pin: str
    table_cookie: str
    admin_cookie: str


# Sessions outlive a restart of the daemon, as the PINs do: a restarted daemon's tests carry on joined.
_JOINED: dict[Path, Joined] = {}


@dataclass
class RunningDaemon:
    process: subprocess.Popen[str]
    url: str  # e.g. http://127.0.0.1:54321 (no trailing slash)
    state_dir: Path
    output: list[str]
    joined: Joined
    reader: threading.Thread  # appends to `output` until the process's stdout ends

    @property
    def table_pin(self) -> str:
        return self.joined.table_pin

    @property
    def admin_pin(self) -> str:
        return self.joined.admin_pin

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return json.load(response)

    def request(self, method: str, path: str, body: Any = None, *, admin: bool = False) -> tuple[int, Any]:
        """A call from a phone joined at the table (or as the admin)."""
        cookie = self.joined.admin_cookie if admin else self.joined.table_cookie
        return http_json(self.url + path, method, body, cookie=cookie)

    def post(self, path: str, body: Any = None) -> tuple[int, Any]:
        return self.request("POST", path, body)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout)
        self.reader.join(timeout)  # its last lines, read after it exited, are in `output` too
        return code

    def close(self) -> None:
        """Stopped (if still running) and its output pipe closed."""
        if self.process.poll() is None:
            self.stop()
        if self.process.stdout:
            self.process.stdout.close()


def http_json(url: str, method: str, body: Any = None, *, cookie: str | None = None) -> tuple[int, Any]:
    return http_json_with_headers(url, method, body, cookie=cookie)[:2]


def http_json_with_headers(
    url: str, method: str, body: Any = None, *, cookie: str | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, Any]:
    """(status, JSON body, response headers) of one call; `cookie` is a `name=value` session cookie."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if cookie is not None:
        request.add_header("Cookie", cookie)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response), response.headers
    except urllib.error.HTTPError as e:
        with e:
            return e.code, json.load(e), e.headers


def join(url: str, pin: str) -> str:
    """Join with a PIN; the session cookie as `name=value`."""
    status, answer, headers = http_json_with_headers(url + "/api/session", "POST", {"pin": pin})
    assert status == 201, answer
    return headers["Set-Cookie"].split(";", 1)[0]


def _pins_shown(output: list[str]) -> tuple[str, str]:
    """The first start's PINs: to a pipe they go to the file its output names (launcher/cli.py)."""
    text = "".join(output)
    where = re.search(r"first start are in (\S+) ", text)
    if where is not None:
        text = Path(where.group(1)).read_text(encoding="utf-8")
    table, admin = re.search(r"Table PIN: (\d+)", text), re.search(r"Admin PIN: (\d+)", text)
    assert table and admin, "the first start did not show the PINs:\n" + text
    return table.group(1), admin.group(1)


def start_daemon(tmp_path: Path, config_text: str = FAST_SIM_TOML, *args: str) -> RunningDaemon:
    """Start `python -m launcher run` on simulated hardware on a free port and wait for its URL."""
    state = tmp_path / "state"
    config = tmp_path / "config.toml"
    limits = "" if "[limits]" in config_text else TESTS_LIMITS_TOML
    config.write_text(config_text + limits + f'\n[state]\ndir = "{state}"\n', encoding="utf-8")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "launcher", "run", "--sim", "--port", "0", "--config", str(config), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    output: list[str] = []
    url_seen = threading.Event()
    found: list[str] = []

    def pump() -> None:  # keep reading, or a full pipe would block the daemon
        assert process.stdout is not None
        try:
            for line in process.stdout:
                output.append(line)
                match = re.search(r"Open (http://\S+?)/? (?:on a phone|in a browser)", line)
                if match and not found:
                    found.append(match.group(1))
                if found and re.match(
                    r"(Admin PIN|Players join|The PINs made up)", line
                ):  # the last before the QR code
                    url_seen.set()
        except ValueError:  # the test closed the pipe while lines were still coming: it has read what it wants
            pass
        finally:
            url_seen.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    if not url_seen.wait(30) or not found:
        _stop(process)
        raise RuntimeError("the daemon did not start within 30 s:\n" + "".join(output))
    url = found[0]
    if state not in _JOINED:
        try:
            table_pin, admin_pin = _pins_shown(output)
            _JOINED[state] = Joined(table_pin, admin_pin, join(url, table_pin), join(url, admin_pin))
        except BaseException:
            _stop(process)  # no daemon left running behind a failed start
            raise
    return RunningDaemon(process=process, url=url, state_dir=state, output=output, joined=_JOINED[state], reader=reader)


def _stop(process: subprocess.Popen[str]) -> None:
    """Kill a daemon that failed to start, and close its pipe (left open, a later test's garbage collection would
    report it as an unclosed file: it did, failing an unrelated test)."""
    process.kill()
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def start_daemon_with_log(tmp_path: Path, events: int) -> RunningDaemon:
    """`start_daemon`, its event log `events` misses long, written into its store between two starts as weeks of
    play leave it: a stream resuming from id 0 replays the log from the disk, past what memory holds."""
    from launcher.events import EventBus, EventType
    from launcher.store import STORE_FILE, Store

    start_daemon(tmp_path).close()
    bus = EventBus(Store(tmp_path / "state" / STORE_FILE))
    for n in range(events):
        bus.publish(EventType.LAUNCHER_MISSED, {"press": 1 + n % 1000, "tension": 0.5, "misses_in_row": 1})
    bus.close()
    return start_daemon(tmp_path)


@pytest.fixture
def daemon_process(tmp_path: Path) -> Iterator[RunningDaemon]:
    running = start_daemon(tmp_path)
    try:
        yield running
    finally:
        running.close()


def local_config(tmp_path: Path, *, limits: dict[str, int] = TESTS_LIMITS) -> Config:
    """A daemon in this process: its state in `tmp_path`, any free port, fast simulated hardware, no rest;
    `limits`: its [limits] settings."""
    config = Config().replace("state", dir=str(tmp_path)).replace("web", port=0).replace("limits", **limits)
    return config.replace("sim", cards_per_second=300.0).replace("dispense", min_rest_ms=0)


@contextmanager
def local_daemon(tmp_path: Path, *, limits: dict[str, int] = TESTS_LIMITS) -> Iterator[Daemon]:
    """The daemon in this process, whose app Flask's test client reaches, on fast simulated hardware timed by a
    virtual clock (fires exact, whatever else the machine is doing)."""
    clock = VirtualClock()
    running = Daemon(local_config(tmp_path, limits=limits), clock=clock)
    try:
        yield running
    finally:
        running.close()
        clock.close()


MakeDaemon = Callable[..., Daemon]


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    """A virtual clock at 0, closed after the test; a test file that needs another start declares its own."""
    virtual = VirtualClock()
    try:
        yield virtual
    finally:
        virtual.close()


@pytest.fixture
def make_daemon() -> Iterator[MakeDaemon]:
    """Daemons in this process, each closed at the test's end: `make_daemon(config)` on real time,
    `make_daemon(config, clock=clock)` on that clock, `make_daemon(config, virtual=True)` on a virtual clock of its
    own (fires exact, whatever else the machine is doing), closed with it."""
    made: list[tuple[Daemon, VirtualClock | None]] = []

    def make(config: Config, *, clock: Clock | None = None, virtual: bool = False) -> Daemon:
        own = VirtualClock() if virtual else None
        running = Daemon(config, clock=own or clock or REAL_CLOCK)
        made.append((running, own))
        return running

    yield make
    for running, own in reversed(made):
        running.close()
        if own is not None:
            own.close()


def app_parts(daemon: Daemon) -> Parts:
    """The parts an in-process daemon's app hands its views (webui/parts.py)."""
    with daemon.app.app_context():
        return parts()


def hand_the_app(daemon: Daemon, **changed: Any) -> Parts:
    """The daemon's app with some of its parts replaced, as if create_app() had been handed them."""
    replaced = replace(app_parts(daemon), **changed)
    replaced.install(daemon.app)
    return replaced


def joined_client(daemon: Daemon, *, admin: bool = False) -> FlaskClient:
    """A Flask test client joined at the table (or as the admin) of an in-process daemon on its first start."""
    assert daemon.new_pins is not None, "the daemon's store had PINs already"
    client = daemon.app.test_client()
    reply = client.post("/api/session", json={"pin": daemon.new_pins.admin if admin else daemon.new_pins.table})
    assert reply.status_code == 201, reply.get_json()
    return client


class ManualClock:
    """A clock that moves only when a test moves it: waits and timeouts without real waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def wait_until(predicate: Any, timeout: float = 10.0, what: str = "", *, interval: float = 0.01) -> Any:
    """Poll until predicate() is truthy; return its value or fail the test, naming `what` it waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout} s waiting for {what or predicate}")


# The long mode (UNO_LONG=1, README "Run the tests"): repetitions beyond what proves a point (more seeds, kills,
# examples), for a release or a night; the suite's own run proves each point once, within CI's time.
LONG = os.environ.get("UNO_LONG") == "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first: spread over the workers, the minute-long ones then run beside the rest, not after.
    Tests marked `long` are skipped unless the long mode is on."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
    if not LONG:
        for item in items:
            if item.get_closest_marker("long"):
                item.add_marker(pytest.mark.skip(reason="a repetition of the long mode: run with UNO_LONG=1"))
