"""Guessing is bounded for the table, not per address, and the doorbell tells nothing (issue #45).

Every PIN checked without a person asking spends the network's one budget (100, then 240 an hour), whatever the
addresses. Once it is spent, a PIN waits unchecked: a right and a wrong PIN look the same in every way a stranger
can observe (the answer, its headers, /api/state, the events, the board's wire, the hashing done), until a person
at the table lets it in: a joined phone types the code the waiting phone shows, or the launcher's button is held.

The daemon runs in this process on simulated hardware and a virtual clock, served by waitress on 127.0.0.1; the
phones are real HTTP clients over loopback, each bound to an address of its own in 127.0.0.0/8 (the daemon counts
guesses by the peer's address). PBKDF2 runs with fewer rounds here: the tests count hashes, they never time them.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from launcher.access import book as access_module
from launcher.access.book import PinGuard, Role, TooManyTries
from launcher.access.doorbell import (
    CHECKED_PER_HOLD,
    CODE_ALPHABET,
    CODE_LENGTH,
    WAIT_S,
    Admitted,
    Doorbell,
    NoSuchCode,
)
from launcher.access.doorbell_hold import HOLD_S
from launcher.config import LimitsConfig
from launcher.daemon import Daemon
from launcher.hardware.sim import MemoryWire
from tests.conftest import TESTS_LIMITS, ManualClock, hand_the_app, local_config, start_daemon
from tests.virtual_clock import VirtualClock

HOUR_S = 3600.0
CHECKS_PER_PIN = 2  # one hash per PIN the table has (table and admin), whatever the PIN


def address(n: int) -> str:
    """The n-th phone's address: 250 of a /24 first (as a home network's), then the next /24s."""
    return f"127.0.{1 + n // 250}.{2 + n % 250}"


@dataclass
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    cookie: str | None


@dataclass
class Table:
    """The daemon, what it hashed and what it wrote to the board, and how to reach it from an address."""

    daemon: Daemon
    clock: VirtualClock
    port: int
    hashes: list[str] = field(default_factory=list)  # each PIN hashed, in order
    wire: list[bytes] = field(default_factory=list)  # every write from the host to the board

    @property
    def table_pin(self) -> str:
        assert self.daemon.new_pins is not None and self.daemon.new_pins.table is not None
        return self.daemon.new_pins.table

    @property
    def admin_pin(self) -> str:
        assert self.daemon.new_pins is not None and self.daemon.new_pins.admin is not None
        return self.daemon.new_pins.admin

    def call(
        self, source: str, method: str, path: str, body: Any = None, cookie: str | None = None, **headers: str
    ) -> Answer:
        """A call from `source`, with the session `cookie` and headers of the caller's choosing (_ for -)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10, source_address=(source, 0))
        try:
            sent = {name.replace("_", "-"): value for name, value in headers.items()}
            if body is not None:
                sent["Content-Type"] = "application/json"
            if cookie:
                sent["Cookie"] = cookie
            conn.request(method, path, None if body is None else json.dumps(body), sent)
            reply = conn.getresponse()
            got = {name.lower(): value for name, value in reply.getheaders()}
            data = json.loads(reply.read() or b"null")
        finally:
            conn.close()
        cookie_set = got.get("set-cookie")
        return Answer(reply.status, data, got, cookie_set.split(";", 1)[0] if cookie_set else None)

    def join(self, source: str, pin: str) -> str:
        joined = self.call(source, "POST", "/api/session", {"pin": pin})
        assert joined.status == 201 and joined.cookie, joined.body
        return joined.cookie

    def guard(self) -> ManualClock:
        """A PinGuard on a clock of the test's, so that its refill is exact; that clock."""
        clock = ManualClock()
        hand_the_app(self.daemon, pin_guard=PinGuard(clock=clock))
        return clock

    def spend_the_budget(self, first: int = 0) -> int:
        """Wrong PINs from ever new addresses until one waits; how many were checked."""
        for n in range(first, first + PinGuard.BUDGET + 1):
            answer = self.call(address(n), "POST", "/api/session", {"pin": "000000"})
            if answer.status == 202:
                return n - first
            assert answer.status == 401, answer.body
        pytest.fail("the budget was never spent")


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Table]:
    monkeypatch.setattr(access_module, "PBKDF2_ITERATIONS", 1_000)
    hashes: list[str] = []
    hash_pin = access_module._hash

    def counted(pin: str, salt: bytes) -> bytes:
        hashes.append(pin)
        return hash_pin(pin, salt)

    monkeypatch.setattr(access_module, "_hash", counted)
    wire: list[bytes] = []
    write = MemoryWire._write

    def recorded(self: MemoryWire, port: Any, data: bytes) -> None:
        wire.append(data)
        write(self, port, data)

    monkeypatch.setattr(MemoryWire, "_write", recorded)
    clock = VirtualClock()
    # The let-ins at their default: a test below counts them.
    limits = TESTS_LIMITS | {"let_ins_per_minute": LimitsConfig().let_ins_per_minute}
    daemon = Daemon(local_config(tmp_path, limits=limits).replace("web", host="127.0.0.1", port=0), clock=clock)
    serving = threading.Thread(target=daemon.server.run, name="waitress", daemon=True)
    serving.start()
    try:
        daemon.access.close()  # the made-up PINs' hashes saved: the store has both
        port = int(daemon.urls[0].rstrip("/").rsplit(":", 1)[1])
        yield Table(daemon, clock, port, hashes, wire)
    finally:
        daemon.close()
        serving.join(5)
        clock.close()


def _footprint(table: Table, source: str, pin: str) -> tuple[Answer, dict[str, Any]]:
    """Everything a stranger (and the board) could tell of one PIN sent once the budget is spent."""
    hashed, wrote, events = len(table.hashes), len(table.wire), table.daemon.bus.last_id
    answer = table.call(source, "POST", "/api/session", {"pin": pin})
    state = table.call("127.0.0.250", "GET", "/api/state").body
    seen = {
        "status": answer.status,
        "fields": sorted(answer.body),
        "role": answer.body.get("role"),
        "wait_s": answer.body.get("wait_s"),
        "lengths": (len(answer.body.get("waiting", "")), len(answer.body.get("code", ""))),
        "headers": {k: v for k, v in answer.headers.items() if k != "date"},
        "cookie": answer.cookie,
        "state": state,
        "hashes": len(table.hashes) - hashed,
        "events": table.daemon.bus.last_id - events,
        "wire": table.wire[wrote:],
    }
    return answer, seen


def test_a_right_and_a_wrong_waiting_pin_look_the_same(table: Table) -> None:
    for _ in range(50):  # the table presses until the board is armed (its next press fires at once)
        table.daemon.controller.press("phone")
        table.clock.run_until(lambda: not table.daemon.controller.snapshot()["busy"], within=5.0)
        if table.daemon.controller._arm.armed is not None:
            break
    else:
        pytest.fail("the board was never armed")
    table.guard()
    spent = table.spend_the_budget()
    assert spent == PinGuard.BUDGET
    _, wrong = _footprint(table, "127.0.9.2", "000001")
    right_answer, right = _footprint(table, "127.0.9.3", table.table_pin)
    _, admin = _footprint(table, "127.0.9.4", table.admin_pin)
    assert right == wrong == admin
    assert right["status"] == 202 and right["fields"] == ["code", "role", "wait_s", "waiting"]
    assert right["hashes"] == 0 and right["events"] == 0 and right["wire"] == [] and right["cookie"] is None
    assert right["wait_s"] == WAIT_S
    code = right_answer.body["code"]
    assert len(code) == CODE_LENGTH and set(code) <= set(CODE_ALPHABET)
    assert table.call("127.0.9.3", "POST", "/api/press").status == 401  # not joined
    assert table.daemon.controller._arm.armed is not None  # the arm was never taken back


def test_a_400_candidate_sweep_from_250_addresses_finds_nothing(table: Table) -> None:
    table.guard()
    table.spend_the_budget()
    candidates = [f"{n:06d}" for n in range(400)]
    candidates[236] = table.table_pin  # the sweep found it at #237
    hashed = len(table.hashes)
    seen = []
    for n, pin in enumerate(candidates):
        answer = table.call(address(500 + n), "POST", "/api/session", {"pin": pin})
        seen.append((answer.status, tuple(sorted(answer.body)), answer.body.get("wait_s"), answer.cookie))
    assert set(seen) == {(202, ("code", "role", "wait_s", "waiting"), WAIT_S, None)}
    assert len(table.hashes) == hashed  # not one PIN of the sweep was checked
    table.clock.advance(WAIT_S + 1)  # nobody let any in
    looked = table.call(address(500 + 236), "POST", "/api/session", {"pin": "000000"})
    assert looked.status == 202 and looked.cookie is None


def test_pins_checked_from_any_number_of_addresses_never_exceed_the_budget(table: Table) -> None:
    clock = table.guard()
    hashed = len(table.hashes)
    statuses: list[int] = []
    for _ in range(60):  # an hour of guessing, 30 a minute, each guess from the next of 250 addresses
        for _guess in range(30):
            n = len(statuses)
            statuses.append(table.call(address(n % 250), "POST", "/api/session", {"pin": f"{n:06d}"}).status)
        clock.now += 60
    work = len(table.hashes) - hashed
    assert work % CHECKS_PER_PIN == 0
    checked = work // CHECKS_PER_PIN
    assert checked == statuses.count(401)
    assert statuses.count(202) == len(statuses) - checked  # the rest waits, unchecked
    # The budget, and 240 an hour: what refilled over the 59 minutes between the first guesses and the last.
    assert PinGuard.BUDGET + PinGuard.BUDGET_PER_HOUR * 59 / 60 - 1 <= checked <= PinGuard.BUDGET + 236
    print(f"\n{len(statuses)} guesses from 250 addresses over an hour: {checked} PINs checked")


def test_a_joined_phone_lets_in_a_right_pin_by_its_code_and_a_wrong_one_is_told(table: Table) -> None:
    host = table.join("127.0.0.1", table.table_pin)
    table.guard()
    table.spend_the_budget()
    right = table.call("127.0.9.3", "POST", "/api/session", {"pin": table.table_pin}).body
    wrong = table.call("127.0.9.4", "POST", "/api/session", {"pin": "000001"}).body
    hashed = len(table.hashes)
    let_in = table.call("127.0.0.1", "POST", "/api/let-in", {"code": right["code"].lower()}, host)
    assert let_in.status == 200 and let_in.body == {"role": "table"}
    assert len(table.hashes) - hashed == CHECKS_PER_PIN  # that one PIN, checked once
    joined = table.call("127.0.9.3", "POST", "/api/session", {"waiting": right["waiting"]})
    assert joined.status == 201 and joined.body == {"role": "table"} and joined.cookie
    assert table.call("127.0.9.3", "GET", "/api/session", cookie=joined.cookie).body == {"role": "table"}
    assert table.call("127.0.9.3", "GET", "/api/invite", cookie=joined.cookie).body["pin"] == table.table_pin
    assert table.call("127.0.0.1", "POST", "/api/let-in", {"code": right["code"]}, host).status == 404  # used

    still = table.call("127.0.9.4", "POST", "/api/session", {"waiting": wrong["waiting"]})
    assert still.status == 202 and still.body["code"] == wrong["code"]
    refused = table.call("127.0.0.1", "POST", "/api/let-in", {"code": wrong["code"]}, host)
    assert refused.status == 200 and refused.body == {"role": "none"}
    told = table.call("127.0.9.4", "POST", "/api/session", {"waiting": wrong["waiting"]})
    assert told.status == 401 and told.body["error"]["code"] == "pin_was_wrong" and told.cookie is None


def test_a_guests_phone_cannot_let_in_or_find_the_admin_pin_the_admins_can(table: Table) -> None:
    guest = table.join("127.0.0.1", table.table_pin)
    admin = table.join("127.0.0.1", table.admin_pin)
    table.guard()
    table.spend_the_budget()
    first = table.call("127.0.9.5", "POST", "/api/session", {"pin": table.admin_pin}).body
    as_guest = table.call("127.0.0.1", "POST", "/api/let-in", {"code": first["code"]}, guest)
    assert as_guest.body == {"role": "none"}  # as for a wrong PIN: the guest learns nothing
    told = table.call("127.0.9.5", "POST", "/api/session", {"waiting": first["waiting"]})
    assert told.status == 401 and told.body["error"]["code"] == "pin_was_wrong"
    again = table.call("127.0.9.5", "POST", "/api/session", {"pin": table.admin_pin}).body
    as_admin = table.call("127.0.0.1", "POST", "/api/let-in", {"code": again["code"]}, admin)
    assert as_admin.body == {"role": "admin"}
    joined = table.call("127.0.9.5", "POST", "/api/session", {"waiting": again["waiting"]})
    assert joined.status == 201 and joined.body == {"role": "admin"}


def test_letting_in_needs_a_session_a_known_code_and_keeps_to_its_budget(table: Table) -> None:
    host = table.join("127.0.0.1", table.table_pin)
    stranger = table.call("127.0.9.6", "POST", "/api/let-in", {"code": "ACDE"})
    assert stranger.status == 401 and stranger.body["error"]["code"] == "join_required"
    for bad in ({"code": "AC"}, {"code": 1234}, {"code": "AC E"}, {}, {"code": "ACDE", "pin": "1"}):
        refused = table.call("127.0.0.1", "POST", "/api/let-in", bad, host)
        assert refused.status == 400, (bad, refused.body)
    hashed = len(table.hashes)
    # The gate spends a let-in whatever the answer: the five refused bodies above took five of the minute's.
    left = LimitsConfig().let_ins_per_minute - 5
    codes = [table.call("127.0.0.1", "POST", "/api/let-in", {"code": "ACDE"}, host) for _ in range(12)]
    assert [c.status for c in codes[:left]] == [404] * left
    assert codes[-1].status == 429 and codes[-1].body["error"]["code"] == "too_many_let_ins"
    assert len(table.hashes) == hashed


def _hold(table: Table, seconds: float) -> None:
    world = table.daemon.hardware.world  # type: ignore[attr-defined]
    world.button_down()
    table.clock.advance(seconds)
    world.button_up()
    table.clock.advance(0.5)  # the release's debounce and the link
    table.clock.run_until(lambda: not table.daemon.controller.snapshot()["busy"], within=5.0)


def _types(table: Table, after: int) -> list[str]:
    return [event.type for event in table.daemon.bus.events_after(after)]


def test_the_button_held_lets_in_a_right_pin_and_not_a_wrong_one(table: Table) -> None:
    table.guard()
    table.spend_the_budget()
    right = table.call("127.0.9.3", "POST", "/api/session", {"pin": table.table_pin}).body
    wrong = table.call("127.0.9.4", "POST", "/api/session", {"pin": "000001"}).body
    hashed = len(table.hashes)
    _hold(table, HOLD_S - 0.2)  # not held long enough: a press, nothing checked
    assert len(table.hashes) == hashed
    assert table.call("127.0.9.3", "POST", "/api/session", {"waiting": right["waiting"]}).status == 202
    _hold(table, HOLD_S + 0.2)
    # the three waiting (the last guess of the spending too), each checked once
    assert sorted(table.hashes[hashed:]) == sorted(["000000", "000001", table.table_pin] * CHECKS_PER_PIN)
    joined = table.call("127.0.9.3", "POST", "/api/session", {"waiting": right["waiting"]})
    assert joined.status == 201 and joined.body == {"role": "table"}
    told = table.call("127.0.9.4", "POST", "/api/session", {"waiting": wrong["waiting"]})
    assert told.status == 401 and told.body["error"]["code"] == "pin_was_wrong"


def test_a_hold_checks_only_the_newest_few(table: Table) -> None:
    table.guard()
    table.spend_the_budget()
    oldest = table.call("127.0.9.2", "POST", "/api/session", {"pin": table.table_pin}).body
    for n in range(CHECKED_PER_HOLD):
        table.call(f"127.0.8.{2 + n}", "POST", "/api/session", {"pin": f"{n:06d}"})
    hashed = len(table.hashes)
    _hold(table, HOLD_S + 0.2)
    assert len(table.hashes) - hashed == CHECKED_PER_HOLD * CHECKS_PER_PIN
    still = table.call("127.0.9.2", "POST", "/api/session", {"waiting": oldest["waiting"]})
    assert still.status == 202  # not among the newest: a joined phone lets it in by its code


def test_a_game_press_while_pins_wait_is_a_game_press(table: Table) -> None:
    table.guard()
    table.spend_the_budget()
    right = table.call("127.0.9.3", "POST", "/api/session", {"pin": table.table_pin}).body
    hashed, before = len(table.hashes), table.daemon.bus.last_id
    presses = table.daemon.controller.snapshot()["presses"]
    world = table.daemon.hardware.world  # type: ignore[attr-defined]
    world.press_button()
    table.clock.advance(0.5)
    table.clock.run_until(lambda: not table.daemon.controller.snapshot()["busy"], within=5.0)
    assert "button.pressed" in _types(table, before)
    assert table.daemon.controller.snapshot()["presses"] == presses + 1
    assert len(table.hashes) == hashed  # the press checked no PIN
    assert table.call("127.0.9.3", "POST", "/api/session", {"waiting": right["waiting"]}).status == 202


def test_a_wait_is_over_after_two_minutes_and_a_ticket_never_given_is_over(table: Table) -> None:
    host = table.join("127.0.0.1", table.table_pin)
    table.guard()
    table.spend_the_budget()
    right = table.call("127.0.9.3", "POST", "/api/session", {"pin": table.table_pin}).body
    table.clock.advance(WAIT_S + 0.5)
    over = table.call("127.0.9.3", "POST", "/api/session", {"waiting": right["waiting"]})
    assert over.status == 401 and over.body["error"]["code"] == "wait_over"
    late = table.call("127.0.0.1", "POST", "/api/let-in", {"code": right["code"]}, host)
    assert late.status == 404 and late.body["error"]["code"] == "no_such_code"
    never = table.call("127.0.9.7", "POST", "/api/session", {"waiting": "made-up"})
    assert never.status == 401 and never.body["error"]["code"] == "wait_over"


def test_a_phone_that_must_wait_gets_a_ticket_too_and_its_pin_unchecked(table: Table) -> None:
    table.guard()
    for _ in range(PinGuard.FREE_TRIES):
        assert table.call("127.0.9.8", "POST", "/api/session", {"pin": "000001"}).status == 401
    hashed = len(table.hashes)
    waits = table.call("127.0.9.8", "POST", "/api/session", {"pin": table.table_pin})
    assert waits.status == 202 and len(table.hashes) == hashed


def test_a_pin_check_does_the_same_work_whatever_the_pin(table: Table) -> None:
    book = table.daemon.access
    for pin, opens in ((table.admin_pin, "admin"), (table.table_pin, "table"), ("000001", "none")):
        hashed = len(table.hashes)
        assert book.role_for_pin(pin).label == opens
        assert table.hashes[hashed:] == [pin] * CHECKS_PER_PIN  # the admin PIN no sooner than a wrong one


def test_a_code_and_a_hold_at_once_check_a_pin_once() -> None:
    checked: list[str] = []
    both = threading.Barrier(2)

    def check(pin: str) -> Role:
        checked.append(pin)
        return Role.TABLE if pin == "246813" else Role.NONE

    doorbell = Doorbell(check=check)
    waiting = doorbell.wait("192.168.1.20", "246813")

    def hold() -> None:
        both.wait()
        doorbell.check_newest()

    holding = threading.Thread(target=hold)
    holding.start()
    both.wait()
    with contextlib.suppress(NoSuchCode):  # the hold took it first
        doorbell.let_in(waiting.code, most=Role.TABLE)
    holding.join(5)
    assert checked == ["246813"]
    let_in = doorbell.collect(waiting.ticket)
    assert isinstance(let_in, Admitted) and let_in.role is Role.TABLE and let_in.table_pin == "246813"


def test_guesses_from_any_number_of_ipv6_networks_share_the_one_budget() -> None:
    guard = PinGuard(clock=ManualClock())
    checked = 0
    for n in range(5_000):  # a /64 each: one device can hold any number of them
        try:
            guard.take(f"2001:db8:{n // 65536:x}:{n % 65536:x}::/64")
            checked += 1
        except TooManyTries:
            pass
    assert checked == PinGuard.BUDGET


@pytest.mark.slow
def test_the_daemon_process_answers_a_right_and_a_wrong_waiting_pin_alike(tmp_path: Path) -> None:
    """The same comparison against `uno-launcher run --sim` in a process of its own, at full PBKDF2 cost: what a
    stranger on the Wi-Fi sees (the answer, its headers, the state with its last event id) for a right PIN, a wrong
    one and the admin's."""
    running = start_daemon(tmp_path)
    port = urlsplit(running.url).port
    assert port is not None

    def send(n: int, pin: str) -> dict[str, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(address(n), 0))
        try:
            conn.request("POST", "/api/session", json.dumps({"pin": pin}), {"Content-Type": "application/json"})
            reply = conn.getresponse()
            body = json.loads(reply.read())
            headers = {k.lower(): v for k, v in reply.getheaders() if k.lower() != "date"}
        finally:
            conn.close()
        return {
            "status": reply.status,
            "fields": sorted(body),
            "sizes": sorted((k, len(str(v))) for k, v in body.items()),
            "headers": headers,
            "state": running.get("/api/state"),
        }

    try:
        for n in range(PinGuard.BUDGET + 10):  # the budget (and its refill meanwhile), from addresses of a /24
            if send(n, "000000")["status"] == 202:
                break
        else:
            pytest.fail("the budget was never spent")
        wrong = send(300, "000001")
        right = send(301, running.table_pin)
        admin = send(302, running.admin_pin)
        assert wrong == right == admin and right["status"] == 202
    finally:
        running.close()
