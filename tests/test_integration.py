"""The whole daemon on simulated hardware, in a subprocess, driven over HTTP like the phones drive it."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from launcher.config import load
from launcher.daemon import Daemon
from launcher.hardware.header_board import load_firmware
from launcher.press.controller import PressRefused
from tests.conftest import FAST_SIM_TOML, RunningDaemon, start_daemon, wait_until
from tests.sse_client import SseClient

OUTCOMES = {"launcher.missed", "launcher.fired", "launcher.jammed", "launcher.empty"}


def test_200_presses_over_http_reach_every_phone_in_order(daemon_process: RunningDaemon) -> None:
    start_id = daemon_process.get("/api/state")["last_event_id"]
    follower = SseClient(daemon_process.url, last_event_id=start_id, cookie=daemon_process.joined.table_cookie)
    replies = []
    late_client: SseClient | None = None
    late_last_id = 0
    for n in range(1, 201):
        if n == 50:
            late_client = SseClient(daemon_process.url, cookie=daemon_process.joined.table_cookie)
            late_client.connected.wait(5)
        if n == 100:
            assert late_client is not None
            late_last_id = daemon_process.get("/api/state")["last_event_id"]
            wait_until(lambda c=late_client, last=late_last_id: c.ids() and c.ids()[-1] == last)
            late_client.close()
        status, body = daemon_process.post("/api/press", {})
        assert status == 200, body
        replies.append(body)
    state = daemon_process.get("/api/state")
    wait_until(lambda: follower.ids() and follower.ids()[-1] == state["last_event_id"])
    follower.close()

    # Ids strictly increasing without a gap, in the order they were published.
    ids = follower.ids()
    assert ids == list(range(start_id + 1, state["last_event_id"] + 1))

    # Every press: exactly one button.pressed and exactly one outcome.
    events = [e for _, e, _ in follower.events]
    pressed = Counter(e["data"]["press"] for e in events if e["type"] == "button.pressed")
    outcomes = Counter(e["data"]["press"] for e in events if e["type"] in OUTCOMES)
    assert pressed == outcomes == Counter(range(1, 201))
    assert [r["press"] for r in replies] == list(range(1, 201))

    # Cards: what the events say left == what the controller counted == what left the simulated hopper.
    dispensed = sum(e["data"]["dispensed"] for e in events if e["type"] in OUTCOMES - {"launcher.missed"})
    assert dispensed == sum(r["dispensed"] for r in replies)
    assert dispensed == state["hopper"]["dispensed"] == state["hardware"]["sim_cards_out"]
    assert state["hopper"]["remaining"] == state["hardware"]["sim_hopper"] == 500 - dispensed
    assert state["presses"] == 200
    assert 40 < sum(1 for e in events if e["type"] == "launcher.fired") < 120  # about one press in three fires

    # A phone that dropped out and reconnects with Last-Event-ID gets exactly what it missed.
    catch_up = SseClient(daemon_process.url, last_event_id=late_last_id, cookie=daemon_process.joined.table_cookie)
    wait_until(lambda: catch_up.ids() and catch_up.ids()[-1] == state["last_event_id"])
    catch_up.close()
    assert catch_up.ids() == [i for i in ids if i > late_last_id]
    assert [e for _, e, _ in catch_up.events] == [e for e in events if e["id"] > late_last_id]


def test_streams_start_with_a_comment_and_keep_a_heartbeat(daemon_process: RunningDaemon) -> None:
    client = SseClient(daemon_process.url, cookie=daemon_process.joined.table_cookie)
    assert client.connected.wait(5)
    wait_until(lambda: client.comments.count("heartbeat") >= 2, timeout=5)  # heartbeat_s = 0.5 in the test config
    assert daemon_process.get("/api/state")["connection"]["sse_clients"] == 1
    client.close()
    assert client.comments[0] == "connected"
    wait_until(lambda: daemon_process.get("/api/state")["connection"]["sse_clients"] == 0, timeout=5)


@pytest.mark.parametrize(
    ("path", "method", "body", "status", "code"),
    [
        ("/api/press", "POST", {"who": "x"}, 400, "unknown_field"),
        ("/api/press", "POST", [1, 2], 400, "bad_json"),
        ("/api/press", "GET", None, 405, "method_not_allowed"),
        ("/api/nothing", "GET", None, 404, "not_found"),
    ],
)
def test_bad_requests_get_a_clear_4xx(
    daemon_process: RunningDaemon, path: str, method: str, body: object, status: int, code: str
) -> None:
    got, reply = daemon_process.request(method, path, body)
    assert got == status
    assert reply["error"]["code"] == code and reply["error"]["message"]
    assert daemon_process.get("/api/state")["presses"] == 0, "a refused request changes nothing"


SLOW_SIM = FAST_SIM_TOML.replace("cards_per_second = 250.0", "cards_per_second = 1.5")


def _press_until_firing(running: RunningDaemon) -> None:
    def press_in_background() -> None:
        threading.Thread(target=running.post, args=("/api/press", {}), daemon=True).start()

    for _ in range(30):
        press_in_background()
        try:
            wait_until(lambda: running.get("/api/state")["busy"], timeout=0.5)
            return
        except pytest.fail.Exception:
            continue
    pytest.fail("no press fired in 30 tries")


def test_sigterm_during_a_fire_exits_0_within_3_s(tmp_path: Path) -> None:
    running = start_daemon(tmp_path, SLOW_SIM)
    try:
        _press_until_firing(running)
        began = time.monotonic()
        assert running.stop(signal.SIGTERM, timeout=10) == 0
        assert time.monotonic() - began < 3
        assert "Stopped; motor off." in "".join(running.output)
        assert "Traceback" not in "".join(running.output)
    finally:
        if running.process.poll() is None:
            running.process.kill()
        running.process.wait()
        assert running.process.stdout is not None
        running.process.stdout.close()


@pytest.mark.parametrize("delay_s", [0.01, 0.05, 0.2])
def test_a_second_signal_does_not_cut_the_shutdown_short(tmp_path: Path, delay_s: float) -> None:
    """Ctrl-C pressed twice, or `timeout` signalling the process and its group: the first signal's orderly shutdown
    (events written, pins released) still finishes, with exit code 0."""
    running = start_daemon(tmp_path)
    try:
        assert running.post("/api/press")[0] == 200
        running.process.send_signal(signal.SIGTERM)
        time.sleep(delay_s)
        if running.process.poll() is None:
            running.process.send_signal(signal.SIGINT)
        assert running.process.wait(10) == 0
        wait_until(lambda: "Stopped; motor off." in "".join(running.output), timeout=5)
        assert "Traceback" not in "".join(running.output)
    finally:
        running.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_a_fire_stops_the_motor_before_anything_else(tmp_path: Path, signum: int) -> None:
    config_file = tmp_path / "c.toml"
    config_file.write_text(SLOW_SIM + f'\n[state]\ndir = "{tmp_path}"\n')
    daemon = Daemon(load(config_file).replace("web", port=0))
    forward = daemon.hardware.pin_factory.pin(daemon.config.pins.motor_forward)  # type: ignore[attr-defined]
    duty_when_teardown_began: list[float] = []
    close_hardware = daemon.hardware.close

    def record_then_close() -> None:
        duty_when_teardown_began.append(float(forward.state))
        close_hardware()

    daemon.hardware.close = record_then_close  # type: ignore[method-assign]

    def press_then_signal() -> None:
        wait_until(lambda: signal.getsignal(signum) == daemon._on_signal, timeout=5)  # serve() is running
        for _ in range(30):
            with contextlib.suppress(PressRefused):
                daemon.controller.press("web")
            if daemon.controller.snapshot()["busy"]:
                break
            time.sleep(0.05)
        wait_until(lambda: float(forward.state) > 0, timeout=5)
        os.kill(os.getpid(), signum)

    threading.Thread(target=press_then_signal, daemon=True).start()
    daemon.serve()  # returns once the signal has been handled
    assert duty_when_teardown_began == [0.0]
    daemon.close()  # twice is fine


def test_the_simulated_daemon_runs_the_firmware_and_says_which(daemon_process: RunningDaemon) -> None:
    """`uno-launcher run --sim`, as a newcomer starts it, runs the motor on firmware/main.py as a Pi's header does."""
    hardware = daemon_process.get("/api/state")["hardware"]
    assert (hardware["backend"], hardware["runs_on"], hardware["link"]) == ("sim", "the simulated header", "up")
    assert hardware["firmware"] == int(load_firmware().VERSION)
