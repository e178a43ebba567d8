"""sd_notify and the service watchdog against a fake NOTIFY_SOCKET: what systemd would receive, and when.

The watchdog runs on a virtual clock: each message is stamped with the virtual moment it was sent (and still goes
through the real socket), so its rhythm is checked exactly and five quiet intervals cost no real second.
"""

from __future__ import annotations

import os
import queue
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from launcher.events import EventBus
from launcher.fairplay.schedule import PROFILES, Outcome
from launcher.fairplay.shuffles import ShuffleBook
from launcher.hardware.base import DispenseResult, NoCues, StopReason
from launcher.press.controller import Controller
from launcher.press.hopper import Hopper, HopperCount
from launcher.store import Store
from launcher.system import sdnotify
from tests.conftest import start_daemon
from tests.virtual_clock import VirtualClock

INTERVAL_USEC = 200_000  # a watchdog of 0.2 s: pings every 0.1 s while healthy, retries every 0.02 s when not
START = 1000.0  # the virtual clock's start


class FakeSystemd:
    """The receiving end of $NOTIFY_SOCKET, as systemd holds it: read at once, as each message comes.

    A unix datagram socket holds only a few unread messages (net.unix.max_dgram_qlen, 10 by default) before
    sendto() blocks, and a watchdog thread blocked in real time would stop the virtual clock for good.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._messages: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="fake-systemd", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                self._messages.put(self._sock.recv(4096).decode())
            except OSError:  # the socket was closed: the test is over
                return

    def receive(self, timeout: float = 5.0) -> str | None:
        """The next message, or None when none arrives within `timeout` seconds."""
        try:
            return self._messages.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self) -> list[str]:
        """Every message already sent (they reach the reader within microseconds)."""
        messages = []
        while (message := self.receive(timeout=0.05)) is not None:
            messages.append(message)
        return messages

    def close(self) -> None:
        self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._reader.join(timeout=5)


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
    fake = FakeSystemd(_bind(str(path)))
    yield fake
    fake.close()


@pytest.fixture
def watchdog_env(systemd: FakeSystemd, monkeypatch: pytest.MonkeyPatch) -> FakeSystemd:
    monkeypatch.setenv("WATCHDOG_USEC", str(INTERVAL_USEC))
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    return systemd


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    clock = VirtualClock(start=START)
    yield clock
    clock.close()


@pytest.fixture
def pings(clock: VirtualClock, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The virtual moments (seconds after START) at which a WATCHDOG=1 went to the socket."""
    sent: list[float] = []
    send = sdnotify.notify

    def stamped(message: str) -> bool:
        if message == "WATCHDOG=1":
            sent.append(round(clock.now() - START, 9))
        return send(message)

    monkeypatch.setattr(sdnotify, "notify", stamped)
    return sent


@pytest.fixture
def watchdogs(clock: VirtualClock) -> Iterator[Callable[..., sdnotify.Watchdog]]:
    """Build Watchdogs on the virtual clock that are closed after the test, whatever happens in it."""
    made: list[sdnotify.Watchdog] = []

    def build(healthy: Callable[[], bool]) -> sdnotify.Watchdog:
        made.append(sdnotify.Watchdog(healthy, clock=clock))
        return made[-1]

    yield build
    for watchdog in made:
        watchdog.close()


def grid(first: float, step: float, until: float) -> list[float]:
    """first, first + step, … up to `until` (exclusive), as the watchdog's own sums make them."""
    out, t = [], first
    while t < until - 1e-9:
        out.append(round(t, 9))
        t += step
    return out


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


def test_pings_every_half_interval_while_healthy_none_while_not_and_resume_at_the_next_retry(
    watchdog_env: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog], clock: VirtualClock, pings: list[float]
) -> None:
    healthy = [True]
    failed_checks: list[float] = []

    def check() -> bool:
        if not healthy[0]:
            failed_checks.append(round(clock.now() - START, 9))
        return healthy[0]

    assert watchdogs(check).start()
    clock.sleep(0.35)
    assert pings == [0.0, 0.1, 0.2, 0.3]

    healthy[0] = False
    clock.sleep(1.0)  # five whole intervals: systemd would have restarted the service
    assert pings == [0.0, 0.1, 0.2, 0.3]
    assert failed_checks == grid(0.4, 0.02, 1.35)  # retried every tenth of the interval, not every half

    healthy[0] = True
    clock.sleep(0.15)
    assert pings == [0.0, 0.1, 0.2, 0.3, 1.36, 1.46]  # the first retry after it recovered pings
    assert watchdog_env.drain() == ["WATCHDOG=1"] * 6  # and each went through the socket


def test_a_health_check_that_raises_withholds_pings(
    watchdog_env: FakeSystemd,
    watchdogs: Callable[..., sdnotify.Watchdog],
    clock: VirtualClock,
    pings: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[float] = []

    def broken() -> bool:
        calls.append(round(clock.now() - START, 9))
        raise RuntimeError("controller gone")

    assert watchdogs(broken).start()
    clock.sleep(0.99)
    assert pings == []
    assert calls == grid(0.0, 0.02, 0.99)
    assert "controller gone" in caplog.text
    assert watchdog_env.drain() == []


def test_a_watchdog_meant_for_another_process_never_pings(
    watchdog_env: FakeSystemd,
    watchdogs: Callable[..., sdnotify.Watchdog],
    clock: VirtualClock,
    pings: list[float],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))  # e.g. systemd watching a parent shell
    watchdog = watchdogs(lambda: True)
    assert watchdog.interval is None
    assert watchdog.start() is False
    clock.sleep(1.0)
    assert pings == []
    assert watchdog_env.drain() == []


def test_without_a_watchdog_start_does_nothing(
    systemd: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog], clock: VirtualClock, pings: list[float]
) -> None:
    watchdog = watchdogs(lambda: True)
    assert watchdog.start() is False
    clock.sleep(1.0)
    assert pings == []
    assert systemd.drain() == []


def test_close_stops_the_pings_and_is_idempotent(
    watchdog_env: FakeSystemd, watchdogs: Callable[..., sdnotify.Watchdog], clock: VirtualClock, pings: list[float]
) -> None:
    watchdog = watchdogs(lambda: True)
    watchdog.close()  # before start: fine, and it stays closed
    assert watchdog.start() is False

    watchdog = watchdogs(lambda: True)
    assert watchdog.start()
    assert watchdog.start() is False  # one thread only
    clock.sleep(0.15)
    assert pings == [0.0, 0.1]
    watchdog.close()
    watchdog.close()
    clock.sleep(1.0)
    assert pings == [0.0, 0.1]
    assert watchdog_env.drain() == ["WATCHDOG=1"] * 2
    assert not any(t.name == "sd-watchdog" and t.is_alive() for t in threading.enumerate())


# --- with the controller and the daemon --------------------------------------------------------------------


class AlwaysOneCard:
    """A schedule that fires one card on every press."""

    presses = 0
    misses_in_row = 0
    fires_in_row = 0
    tension = 0.0

    def next_outcome(self) -> Outcome:
        self.presses += 1
        return Outcome(press=self.presses, cards=1, tension=0.0)

    def restart(self) -> None:
        pass

    def go_on_from(self, misses_in_row: int, fires_in_row: int) -> None:
        pass


class HangingDispenser:
    """A dispenser whose fire never ends until the test lets it: the controller's worker hangs in `wait()`."""

    def __init__(self, clock: VirtualClock) -> None:
        self.release = clock.event()  # the worker waits on the clock, so virtual time goes on while it hangs

    def start(self, cards: int) -> HangingDispenser:
        return self

    def wait(self) -> DispenseResult:
        self.release.wait()
        return DispenseResult(requested=1, dispensed=1, ms=1, stop=StopReason.COUNT)

    def stop(self) -> None:
        pass  # hung: stopping changes nothing


class HangingHardware:
    def __init__(self, clock: VirtualClock) -> None:
        self.dispenser = HangingDispenser(clock)
        self.cues = NoCues()
        self.inputs = self  # when_pressed, when_lid_changed and lid_open, set by the controller
        self.when_pressed = self.when_lid_changed = None
        self.lid_open = False

    def describe(self) -> dict[str, object]:
        return {"backend": "hanging"}

    def close(self) -> None:
        self.dispenser.release.set()


def test_a_hung_controller_loop_gets_no_pings(
    watchdog_env: FakeSystemd,
    watchdogs: Callable[..., sdnotify.Watchdog],
    clock: VirtualClock,
    pings: list[float],
    tmp_path: Path,
) -> None:
    hardware = HangingHardware(clock)
    store = Store(tmp_path / "store.sqlite3")
    bus = EventBus(store)
    controller = Controller(
        hardware=hardware,  # type: ignore[arg-type]
        shuffles=ShuffleBook(store, bus, schedule_factory=lambda profile, seed: AlwaysOneCard()),
        profile=PROFILES["classic"],
        bus=bus,
        hopper=Hopper(HopperCount(loaded=112, dispensed=0), clock=clock),
        min_rest_ms=0,
        clock=clock,
    )
    try:
        assert watchdogs(lambda: controller.alive(stuck_after=0.5, timeout=0.05)).start()
        clock.sleep(0.25)
        assert pings == [0.0, 0.1, 0.2]  # idle: the worker waits for a press

        controller.press("web")  # at 0.25 the worker takes the fire, and the fire never ends
        clock.sleep(1.76)
        # healthy while the press is younger than stuck_after (0.7 s: 0.45 s old); at 0.8 it is 0.55 s old
        assert pings == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
        assert not controller.alive(stuck_after=0.5, timeout=0.05)

        hardware.close()  # at 2.01 the fire ends: the worker answers again, and the next retry pings
        clock.sleep(0.1)
        assert pings[8:] == [2.02]
        assert controller.alive(stuck_after=0.5, timeout=0.05)
    finally:
        hardware.close()
        controller.close()
        bus.close()
    assert watchdog_env.drain() == ["WATCHDOG=1"] * 9


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
