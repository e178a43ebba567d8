"""Attacks from the Wi-Fi, against the real daemon over loopback: none of them stops the table.

Every attacker here has no session. They come from many addresses of 127.0.0.0/8 (Linux answers the whole block
on the loopback interface), their loops are bounded, and each test closes what it opened. Meanwhile a phone that
joined with the PIN keeps pressing, reading the state and following the stream.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import resource
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from launcher.access.book import PinGuard
from tests.conftest import FAST_SIM_TOML, RunningDaemon, http_json_with_headers, start_daemon
from tests.sse_client import SseClient
from webui.stream_gate import StreamGate

pytestmark = pytest.mark.slow

ANSWER_WITHIN_S = 3.0  # a frozen daemon took 26-56 s; a healthy one answers in milliseconds


@pytest.fixture(scope="module")
def daemon_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDaemon]:
    running = start_daemon(tmp_path_factory.mktemp("hostile"))
    try:
        yield running
    finally:
        running.close()


def _address(n: int) -> str:
    return f"127.{1 + n // 62500}.{n // 250 % 250}.{2 + n % 250}"


@contextlib.contextmanager
def _sockets(daemon_process: RunningDaemon, count: int, first_bytes: bytes) -> Iterator[list[socket.socket]]:
    """`count` connections from as many loopback addresses, each having sent `first_bytes` and then nothing."""
    parts = urlsplit(daemon_process.url)
    opened: list[socket.socket] = []
    try:
        for n in range(count):
            sock = socket.create_connection((parts.hostname, parts.port), timeout=5, source_address=(_address(n), 0))
            opened.append(sock)
            sock.sendall(first_bytes)
        yield opened
    finally:
        for sock in opened:
            sock.close()


def _timed(call: object) -> tuple[float, object]:
    began = time.monotonic()
    result = call()  # type: ignore[operator]
    return time.monotonic() - began, result


def _joined_phone_carries_on(daemon_process: RunningDaemon) -> list[float]:
    """A joined phone presses, reads the state and opens its stream; the seconds each took."""
    took = []
    seconds, (status, _) = _timed(lambda: daemon_process.request("GET", "/api/state"))
    assert status == 200
    took.append(seconds)
    seconds, (status, answer) = _timed(lambda: daemon_process.post("/api/press", {}))
    assert status == 200, answer
    took.append(seconds)
    began = time.monotonic()
    stream = SseClient(daemon_process.url, cookie=daemon_process.joined.table_cookie)
    try:
        assert stream.connected.wait(ANSWER_WITHIN_S)
        took.append(time.monotonic() - began)
    finally:
        stream.close()
    assert max(took) < ANSWER_WITHIN_S, took
    return took


def test_200_idle_streams_and_100_slowloris_connections_do_not_freeze_the_table(daemon_process: RunningDaemon) -> None:
    stream_request = b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
    slowloris = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    with _sockets(daemon_process, 200, stream_request) as streams, _sockets(daemon_process, 100, slowloris):
        statuses = [_status_line(s) for s in streams]
        took = _joined_phone_carries_on(daemon_process)
    admitted = statuses.count(b"200")
    # Strangers hold at most a quarter of the places (webui/stream.py), whatever their addresses.
    assert admitted == StreamGate.MOST // 4, f"{admitted} streams of strangers admitted"
    assert statuses.count(b"503") == 200 - admitted
    shown = ", ".join(f"{t:.3f}" for t in took)
    print(f"\n{admitted} of 200 strangers' streams admitted; the joined phone took {shown} s")


def _status_line(sock: socket.socket) -> bytes:
    sock.settimeout(ANSWER_WITHIN_S)
    head = sock.recv(64)
    return head.split(b" ")[1] if head.startswith(b"HTTP/1.1 ") else head


def test_a_gigabyte_body_is_refused_before_it_is_read(daemon_process: RunningDaemon) -> None:
    parts = urlsplit(daemon_process.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=ANSWER_WITHIN_S) as sock:
        sock.sendall(
            b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1073741824\r\n\r\n" + b" " * 65536
        )
        assert _status_line(sock) == b"413"


def test_a_rebound_name_is_refused_and_the_press_not_made(daemon_process: RunningDaemon) -> None:
    before = daemon_process.get("/api/state")["presses"]
    status, answer, _ = http_json_with_headers(
        daemon_process.url + "/api/press",
        "POST",
        {},
        cookie=daemon_process.joined.table_cookie,
        headers={"Host": "evil.example", "Origin": "http://evil.example"},
    )
    assert (status, answer["error"]["code"]) == (421, "bad_host")
    assert daemon_process.get("/api/state")["presses"] == before


@pytest.mark.parametrize(
    ("body", "code"),
    [("[" * 30_000 + "]" * 30_000, "bad_json"), ('{"players": ["Ann", "\\udc00", "Cy"]}', "bad_text")],
    ids=["30,000 brackets deep", "a lone surrogate"],
)
def test_bodies_that_are_not_honest_text_are_refused(daemon_process: RunningDaemon, body: str, code: str) -> None:
    for path in ("/api/session", "/api/games"):
        parts = urlsplit(daemon_process.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        conn.request(
            "POST",
            path,
            body.encode(),
            {"Content-Type": "application/json", "Cookie": daemon_process.joined.table_cookie},
        )
        response = conn.getresponse()
        assert response.status == 400, (path, response.read())
        assert code.encode() in response.read()
        conn.close()
    assert daemon_process.request("GET", "/api/game")[0] == 200


def test_guesses_from_300_addresses_run_out_of_budget_and_joined_phones_carry_on(daemon_process: RunningDaemon) -> None:
    parts = urlsplit(daemon_process.url)
    statuses = []
    began = time.monotonic()
    for n in range(300):
        conn = http.client.HTTPConnection(
            parts.hostname, parts.port, timeout=10, source_address=(_address(1000 + n), 0)
        )
        conn.request("POST", "/api/session", b'{"pin": "000000"}', {"Content-Type": "application/json"})
        statuses.append(conn.getresponse().status)
        conn.close()
    # The budget, and what refilled meanwhile at its documented rate (on a busy machine the guesses take a while).
    refilled = math.ceil((time.monotonic() - began) * PinGuard.BUDGET_PER_HOUR / 3600)
    assert statuses.count(401) <= PinGuard.BUDGET + refilled
    assert statuses[-1] == 202  # the budget is spent: a PIN now only waits for the launcher's button
    _joined_phone_carries_on(daemon_process)


def test_a_phone_that_hangs_up_frees_its_place_to_follow_at_once(tmp_path) -> None:
    # Phones not joined get two streams per address. A phone that reloads, or closes the page, hangs up its stream:
    # its place must be free again at once, not when the next heartbeat finds the connection dead (a minute here).
    config = FAST_SIM_TOML.replace("heartbeat_s = 0.5", "heartbeat_s = 60")
    assert config != FAST_SIM_TOML  # a heartbeat this short would free the places by itself
    running = start_daemon(tmp_path, config)
    parts = urlsplit(running.url)
    stream_request = b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"

    def follow() -> tuple[socket.socket, bytes]:
        sock = socket.create_connection((parts.hostname, parts.port), timeout=5, source_address=("127.0.0.77", 0))
        sock.sendall(stream_request)
        return sock, _status_line(sock)

    def following() -> int:
        return running.get("/api/state")["connection"]["sse_clients"]

    try:
        streams = [follow() for _ in range(3)]
        assert [status for _, status in streams] == [b"200", b"200", b"503"]
        assert following() == 2
        for sock, _ in streams:
            sock.close()
        began = time.monotonic()
        while following() and time.monotonic() - began < ANSWER_WITHIN_S:
            time.sleep(0.05)  # polls what the daemon says; the daemon's own checks run on their own
        assert following() == 0, "the places of streams hung up are still held"
        again = [follow() for _ in range(2)]
        assert [status for _, status in again] == [b"200", b"200"]
        for sock, _ in again:
            sock.close()
    finally:
        running.close()


# --- connections that never finish a request (launcher/access/connections.py) -----------------------------------------

NEW_PHONE_WITHIN_S = 2.0  # opens the page and joins
RECOVERED_WITHIN_S = 1.0  # after the attack's end
SLOW_STARTS = (
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",  # headers never finished
    b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Content-Length: 60000\r\n\r\n{",  # a body never finished
    b"",  # nothing at all
)


def phone_call(url: str, source: str, method: str, path: str, body: bytes | None = None) -> int:
    """One request from a phone at `source` (a loopback address of its own) on a fresh connection: its status."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10, source_address=(source, 0))
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def slow_connection(url: str, source: str, start: bytes) -> socket.socket | None:
    """A connection from `source` that has sent `start` (one of SLOW_STARTS); None if the daemon refused it."""
    parts = urlsplit(url)
    try:
        sock = socket.create_connection((parts.hostname, parts.port), timeout=1, source_address=(source, 0))
    except OSError:
        return None
    try:
        sock.sendall(start)
    except OSError:  # reset: the guard at work
        sock.close()
        return None
    return sock


def slow_attack(url: str, sources: list[str]) -> list[socket.socket]:
    """A connection from each source that starts a request (or not) and never finishes it; those the daemon
    refuses at once are not kept."""
    opened = (slow_connection(url, source, SLOW_STARTS[n % len(SLOW_STARTS)]) for n, source in enumerate(sources))
    return [sock for sock in opened if sock is not None]


def _trickle(sockets: list[socket.socket]) -> None:
    """A byte more on each connection still open, as a slow sender does now and then."""
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.sendall(b"a")


@pytest.mark.parametrize(
    "sources",
    [["127.0.5.1"] * 2000, [f"127.0.6.{1 + n % 250}" for n in range(1000)]],
    ids=["2000-from-one-address", "1000-from-250-addresses"],
)
def test_slow_connections_stop_neither_a_new_phone_nor_a_joined_ones_presses(
    tmp_path: Path, sources: list[str]
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4096)), hard))  # this process holds the attack
    daemon = start_daemon(tmp_path)
    try:
        attack = slow_attack(daemon.url, sources)
        try:
            _trickle(attack)
            held = len(os.listdir(f"/proc/{daemon.process.pid}/fd"))  # its connections, and its files
            began = time.monotonic()
            assert phone_call(daemon.url, "127.0.9.1", "GET", "/") == 200
            join = json.dumps({"pin": daemon.table_pin}).encode()
            assert phone_call(daemon.url, "127.0.9.1", "POST", "/api/session", join) == 201
            new_phone_s = time.monotonic() - began
            assert new_phone_s < NEW_PHONE_WITHIN_S, "a new phone opened the page and joined"
            took = [_joined_phone_carries_on(daemon) for _ in range(3)]
            assert max(max(t) for t in took) < NEW_PHONE_WITHIN_S, took
        finally:
            for sock in attack:
                sock.close()
        ended = time.monotonic()
        assert phone_call(daemon.url, "127.0.9.2", "GET", "/api/state") == 200
        recovered_s = time.monotonic() - ended
        assert recovered_s < RECOVERED_WITHIN_S, "recovered after the attack's end"
    finally:
        daemon.close()
    slowest = max(max(t) for t in took)
    print(
        f"\n{len(sources)} slow connections from {len(set(sources))} addresses, the daemon holding {held} files: "
        f"a new phone opened the page and joined in {new_phone_s:.3f} s, the joined phone's slowest call "
        f"{slowest:.3f} s, recovered {recovered_s:.3f} s after"
    )
