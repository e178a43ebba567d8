"""sd_notify and the service watchdog against a fake NOTIFY_SOCKET: what systemd would receive, and when."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from launcher import sdnotify
from launcher.controller import Controller, Deck
from launcher.events import EventBus
from launcher.hardware.base import DispenseResult, NoCues, StopReason
from launcher.rounds import RoundBook
from launcher.schedule import PROFILES, Outcome
from launcher.store import Store
from tests.conftest import start_daemon, wait_until

INTERVAL_USEC = 200_000  # a watchdog of 0.2 s: pings every 0.1 s while healthy
QUIET_S = 5 * INTERVAL_USEC / 1_000_000  # "no ping" means none during five whole intervals


class FakeSystemd:
    """The receiving end of $NOTIFY_SOCKET, as systemd holds it."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def receive(self, timeout: float = 5.0) -> str | None:
        """The next message, or None when none arrives within `timeout` seconds."""
        self._sock.settimeout(timeout)
        try:
            return self._sock.recv(4096).decode()
        except TimeoutError:
            return None

    def drain(self) -> list[str]:
        """Every message already waiting."""
        messages = []
        while (message := self.receive(timeout=0.01)) is not None:
            messages.append(message)
        return messages

    def pings_within(self, seconds: float) -> int:
        """How many WATCHDOG=1 arrive in the next `seconds`."""
        pings = 0
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            if self.receive(timeout=left) == "WATCHDOG=1":
                pings += 1
        return pings


def _bind(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    return sock


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSystemd]:
    """A socket file in tmp_path, named in NOTIFY_SOCKET; no watchdog unless a test sets WATCHDOG_USEC."""
    path = tmp_path / "notify"
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    with _bind(str(path)) as sock:
        yield FakeSystemd(sock)


@pytest.fixture
def watchdog_env(systemd: FakeSystemd, monkeypatch: pytest.MonkeyPatch) -> FakeSystemd:
    monkeypatch.setenv("WATCHDOG_USEC", str(INTERVAL_USEC))
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    return systemd


@pytest.fixture
def watchdogs() -> Iterator[Callable[..., sdnotify.Watchdog]]:
    """Build Watchdogs that are closed after the test, whatever happens in it."""
    made: list[sdnotify.Watchdog] = []

    def build(healthy: Callable[[], bool]) -> sdnotify.Watchdog:
        made.append(sdnotify.Watchdog(healthy))
        return made[-1]

    yield build
    for watchdog in made:
        watchdog.close()


# --- notify ------------------------------------------------------------------------------------------------


def test_ready_status_and_stopping_reach_the_socket(systemd: FakeSystemd) -> None:
    assert sdnotify.ready("serving http://raspberrypi.local:8080/")
    assert systemd.receive() == "READY=1\nSTATUS=serving http://raspberrypi.local:8080/"
    assert sdnotify.status("launcher board: waiting for the board to answer")
    assert systemd.receive() == "STATUS=launcher board: waiting for the board to answer"
    assert sdnotify.stopping()
    assert systemd.receive() == "STOPPING=1"


def test_an_abstract_socket_is_named_with_an_at_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"uno-launcher-test-{uuid.uuid4().hex}"
    with _bind("\0" + name) as sock:
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert sdnotify.notify("READY=1")
        sock.settimeout(5)
        assert sock.recv(4096) == b"READY=1"


@pytest.mark.parametrize("address", [None, "", "relative/notify", "vsock:2:1234", "/nonexistent/notify"])
def test_without_a_usable_socket_notify_is_a_quiet_no_op(address: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if address is None:
        monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    else:
        monkeypatch.setenv("NOTIFY_SOCKET", address)
    assert sdnotify.notify("READY=1") is False
    assert sdnotify.ready("up") is False
    assert sdnotify.stopping() is False


# --- the watchdog's interval ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usec", "pid", "expected"),
    [
        (None, None, None),
        ("0", None, None),
        ("ten", None, None),
        ("200000", None, 0.2),
        ("10000000", "self", 10.0),
        ("10000000", "other", None),
    ],
)
def test_watchdog_interval_follows_the_environment(
    usec: str | None, pid: str | None, expected: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (("WATCHDOG_USEC", usec), ("WATCHDOG_PID", pid)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, {"self": str(os.getpid()), "other": str(os.getpid() + 1)}.get(value, value))
    assert sdnotify.watchdog_interval() == expected


# --- the watchdog's pings --------------------------------------------------------------------------------------


def test_pings_arrive_while_healthy_stop_when_not_and_resume(
    watchdog_env: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog]
) -> None:
    healthy = threading.Event()
    healthy.set()
    answers: list[bool] = []

    def check() -> bool:
        answers.append(healthy.is_set())
        return answers[-1]

    assert watchdogs(check).start()
    for _ in range(3):
        assert watchdog_env.receive() == "WATCHDOG=1"

    healthy.clear()
    wait_until(lambda: False in answers)  # every ping sent before this failed check has been sent
    watchdog_env.drain()
    assert watchdog_env.pings_within(QUIET_S) == 0
    assert answers.count(False) >= 2  # it kept checking, and retried sooner than every half interval

    healthy.set()
    assert watchdog_env.receive() == "WATCHDOG=1"


def test_a_health_check_that_raises_withholds_pings(
    watchdog_env: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog], caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[None] = []

    def broken() -> bool:
        calls.append(None)
        raise RuntimeError("controller gone")

    assert watchdogs(broken).start()
    wait_until(lambda: len(calls) >= 2)
    assert watchdog_env.pings_within(QUIET_S) == 0
    assert "controller gone" in caplog.text


def test_a_watchdog_meant_for_another_process_never_pings(
    watchdog_env: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))  # e.g. systemd watching a parent shell
    watchdog = watchdogs(lambda: True)
    assert watchdog.interval is None
    assert watchdog.start() is False
    assert watchdog_env.pings_within(QUIET_S) == 0


def test_without_a_watchdog_start_does_nothing(
    systemd: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog]
) -> None:
    watchdog = watchdogs(lambda: True)
    assert watchdog.start() is False
    assert systemd.pings_within(QUIET_S) == 0


def test_close_stops_the_pings_and_is_idempotent(
    watchdog_env: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog]
) -> None:
    watchdog = watchdogs(lambda: True)
    watchdog.close()  # before start: fine, and it stays closed
    assert watchdog.start() is False

    watchdog = watchdogs(lambda: True)
    assert watchdog.start()
    assert watchdog.start() is False  # one thread only
    assert watchdog_env.receive() == "WATCHDOG=1"
    watchdog.close()
    watchdog.close()
    watchdog_env.drain()
    assert watchdog_env.pings_within(QUIET_S) == 0
    assert not any(t.name == "sd-watchdog" and t.is_alive() for t in threading.enumerate())


# --- with the controller and the daemon --------------------------------------------------------------------


class AlwaysOneCard:
    """A schedule that fires one card on every press."""

    presses = 0
    misses_in_row = 0
    tension = 0.0

    def next_outcome(self) -> Outcome:
        self.presses += 1
        return Outcome(press=self.presses, cards=1, tension=0.0)

    def restart(self) -> None:
        pass


class HangingDispenser:
    """A dispenser whose fire never ends until the test lets it: the controller's worker hangs in `wait()`."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def start(self, cards: int) -> HangingDispenser:
        return self

    def wait(self) -> DispenseResult:
        self.release.wait()
        return DispenseResult(requested=1, dispensed=1, ms=1, stop=StopReason.COUNT)

    def stop(self) -> None:
        pass  # hung: stopping changes nothing


class HangingHardware:
    def __init__(self) -> None:
        self.dispenser = HangingDispenser()
        self.cues = NoCues()
        self.inputs = self  # when_pressed, when_lid_changed and lid_open, set by the controller
        self.when_pressed = self.when_lid_changed = None
        self.lid_open = False

    def describe(self) -> dict[str, object]:
        return {"backend": "hanging"}

    def close(self) -> None:
        self.dispenser.release.set()


def test_a_hung_controller_loop_gets_no_pings(
    watchdog_env: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog], tmp_path: Path
) -> None:
    hardware = HangingHardware()
    store = Store(tmp_path / "store.sqlite3")
    bus = EventBus(store)
    controller = Controller(
        hardware=hardware,  # type: ignore[arg-type]
        rounds=RoundBook(store, bus, schedule_factory=lambda profile, seed: AlwaysOneCard()),
        profile=PROFILES["classic"],
        bus=bus,
        deck=Deck(loaded=112, dispensed=0),
        min_rest_ms=0,
    )
    try:
        assert watchdogs(lambda: controller.alive(stuck_after=0.5, timeout=0.05)).start()
        assert watchdog_env.receive() == "WATCHDOG=1"  # idle: the worker waits for a press

        controller.press("web")  # the worker takes the fire, and the fire never ends
        wait_until(lambda: not controller.alive(stuck_after=0.5, timeout=0.05))
        watchdog_env.drain()
        assert watchdog_env.pings_within(QUIET_S) == 0

        hardware.close()  # the fire ends: the worker answers again
        assert watchdog_env.receive() == "WATCHDOG=1"
    finally:
        hardware.close()
        controller.close()
        bus.close()


def test_the_daemon_says_ready_pings_and_says_stopping(
    systemd: FakeSystemd, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", str(INTERVAL_USEC))  # the daemon inherits the environment
    daemon = start_daemon(tmp_path)
    try:
        assert systemd.receive(timeout=30) == f"READY=1\nSTATUS=serving {daemon.url}/ on sim hardware"
        assert daemon.get("/api/state")  # READY came once the page answers
        for _ in range(3):
            assert systemd.receive() == "WATCHDOG=1"
        daemon.process.terminate()
        assert "STOPPING=1" in iter(lambda: systemd.receive(timeout=10), None)
        assert daemon.process.wait(10) == 0
    finally:
        if daemon.process.poll() is None:
            daemon.stop()
        if daemon.process.stdout:
            daemon.process.stdout.close()
