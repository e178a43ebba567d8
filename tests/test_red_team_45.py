"""Red team on issue #45's two walls, as an attacker on the family's Wi-Fi would go at them.

1. The next press is the board's secret (docs/FAIRNESS.md, "The next press is secret"): between two presses a joined
   guest, the admin and a stranger do everything they may (every read endpoint gzipped, the pages, the export, a
   late contribution, a reload, a new game, a declaration and its undo, a reset) and every answer's status, code,
   fields, headers, the virtual time it took, the events it published and the lines it made the host send to the
   board are compared before fires and before misses; on the classic profile, and on the extreme one (suspense
   pauses) with a hopper that runs empty and shuffles that end by themselves.
2. A right and a wrong waiting PIN look the same, and every PIN check spends the network's one budget (docs/
   RELIABILITY.md, "Guessing the PIN, and the doorbell"): forwarding headers, spellings of one address, a rebound
   Host, PIN formats, a burst at the budget's last try, a guest farming the refund of its right PIN, the waiting
   phone's polls, a guest's let-in of the admin PIN, strangers and forged cookies at the let-in. Two doors found
   for phones on the home's IPv6 /64 were fixed: each phone's own ticket, and joins spent only once proved right.

The daemon runs in this process on simulated hardware and a virtual clock (its waits are exact, so a difference
in time is a difference in what the daemon waited for, never noise); the doorbell's attacks come over loopback from
addresses of 127.0.0.0/8, through tests/test_doorbell.py's table. Wall-clock timings were measured apart, not here.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.access.book import PinGuard
from launcher.access.budgets import PerMinute
from launcher.access.doorbell import WAIT_S
from launcher.config import LimitsConfig
from launcher.daemon import Daemon
from launcher.hardware.sim import MemoryWire
from launcher.refusals import Refusal
from tests.conftest import joined_client, local_config
from tests.test_doorbell import (
    CHECKS_PER_PIN,
    Answer,
    Table,
    address,
    table,  # noqa: F401  (the fixture, which `door` hands on)
)
from tests.test_press_secret import predictors, shape
from tests.virtual_clock import VirtualClock

PRESSES = 40
QUIET = (b"PING", b"STATUS")  # the heartbeat, on a timer whatever the next press
HEADERS_OF_THE_MOMENT = ("date",)
# Functions of the body, which is checked apart: its length, its tag, and gzip for an answer of 1 KiB or more.
HEADERS_OF_THE_BODY = ("content-length", "etag", "content-encoding")
GAME = {"players": ["Ann", "Bob", "Cy"]}


# --- 1. the next press ------------------------------------------------------------------------------------------


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every write from the host to the simulated board, in order."""
    written: list[bytes] = []
    write = MemoryWire._write

    def recorded(self: MemoryWire, port: Any, data: bytes) -> None:
        written.append(data)
        write(self, port, data)

    monkeypatch.setattr(MemoryWire, "_write", recorded)
    return written


def _seen(
    client: FlaskClient, clock: VirtualClock, wire: list[bytes], method: str, path: str, body: Any = None
) -> dict[str, Any]:
    """What an attacker can observe of one call: its status and error code, the fields it answers (not their
    values, which tell the presses already made), its headers but the body's own length, tag and gzip, how long it took
    on the daemon's clock, and the shape of each line it made the host send to the board, with when."""
    start, wrote = clock.now(), len(wire)
    reply = client.open(path, method=method, json=body, headers={"Accept-Encoding": "gzip"})
    took = round(clock.now() - start, 6)
    clock.advance(0.01)  # the lines the call queued have gone out (the link writes them on its own thread)
    data = reply.get_data()
    if reply.headers.get("Content-Encoding") == "gzip":
        plain = gzip.decompress(data)
        # The compressed bytes are a function of the plain answer alone (whose values the press-secret test checks).
        assert data == gzip.compress(plain, compresslevel=6, mtime=0), path
        data = plain
    assert int(reply.headers.get("Content-Length", len(reply.get_data()))) == len(reply.get_data()), path
    try:
        answer = json.loads(data)
    except ValueError:
        answer = None  # a page, not JSON
    error = answer.get("error", {}).get("code") if isinstance(answer, dict) else None
    lines = [shape(line) for chunk in wire[wrote:] for line in chunk.split(b"\n") if line]
    return {
        "status": reply.status_code,
        "error": error,
        "fields": sorted(answer) if isinstance(answer, dict) else None,
        "headers": sorted(
            (name.lower(), value)
            for name, value in reply.headers.items()
            if name.lower() not in (*HEADERS_OF_THE_MOMENT, *HEADERS_OF_THE_BODY)
        ),
        "took": took,
        "wire": [[cmd, list(lengths)] for cmd, lengths in lines if cmd not in QUIET],
    }


@contextmanager
def daemon_playing(tmp_path: Path, shuffle_presses: int) -> Iterator[Daemon]:
    """The daemon in this process on a virtual clock (tests/conftest.py's local daemon), its shuffles that long."""
    clock = VirtualClock()
    running = Daemon(local_config(tmp_path).replace("schedule", shuffle_presses=shuffle_presses), clock=clock)
    try:
        yield running
    finally:
        running.close()
        clock.close()


@pytest.mark.parametrize(
    ("profile", "reload", "shuffle_presses"),
    [("classic", 500, 1000), ("extreme", 2, 20)],
    ids=["classic-full-hopper", "extreme-pauses-empty-hopper-shuffles-ending"],
)
def test_nothing_a_guest_or_the_admin_does_between_presses_tells_a_fire_from_a_miss(
    tmp_path: Path, wire: list[bytes], profile: str, reload: int, shuffle_presses: int
) -> None:
    """Between every two presses (the big button and a phone in turn), each action anyone may take, in turn: the
    same answer, the same time taken, the same events and the same lines to the board before a press that fires as
    before one that misses. Played on the `extreme` profile too (suspense pauses, jackpots) with a hopper reloaded
    with 2 cards (fires that empty it) and shuffles of 20 presses (each ends by itself, the next opens to
    contributions)."""
    with daemon_playing(tmp_path, shuffle_presses) as daemon:
        clock = daemon.clock
        assert isinstance(clock, VirtualClock)
        stranger, guest, admin = daemon.app.test_client(), joined_client(daemon), joined_client(daemon, admin=True)
        world = daemon.hardware.world  # type: ignore[attr-defined]

        def settle() -> None:
            clock.advance(0.5)  # the button's debounce, the link, the fire
            clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=10.0)
            clock.advance(0.05)  # whatever follows the outcome (the next arm) has gone out

        assert guest.post("/api/shuffles", json={"profile": profile}).status_code == 201
        assert guest.post("/api/press").status_code == 200  # closes the contributions: from now on, armed
        settle()
        after_fire = [daemon.controller.snapshot()["last_outcome"]["cards"] > 0]
        readings: list[dict[str, Any]] = []
        fired: list[bool] = []
        for n in range(PRESSES):
            shuffle = stranger.get("/api/state").get_json()["shuffle"]
            number = shuffle["number"]
            actions: dict[str, tuple[FlaskClient, str, str, Any]] = {
                "state": (stranger, "GET", "/api/state", None),
                "game": (guest, "GET", "/api/game", None),
                "record": (stranger, "GET", f"/api/shuffles/{number}", None),
                "contribution": (
                    guest,
                    "POST",
                    "/api/shuffles/current/contributions",
                    {"shuffle": number, "value": "ab" * 16},
                ),
                "care": (admin, "GET", "/api/care", None),
                "reset": (admin, "POST", "/api/reset", {}),
                "reload": (guest, "POST", "/api/hopper", {"cards": reload}),
                "new game": (guest, "POST", "/api/games", GAME),
                "declaration": (guest, "POST", "/api/attacks", {"kind": "played", "by": "Ann"}),
                "undo": (guest, "POST", "/api/game/undo-declaration", {}),
                "table screen": (stranger, "GET", "/table", None),
                "page": (stranger, "GET", "/", None),
                "openapi": (stranger, "GET", "/api/openapi.json", None),
                "profiles": (stranger, "GET", "/api/profiles", None),
                "session": (guest, "GET", "/api/session", None),
                "invite": (guest, "GET", "/api/invite", None),
                "history": (guest, "GET", "/api/history/games", None),
                "leaderboard": (guest, "GET", "/api/history/leaderboard", None),
                "export": (guest, "GET", "/api/history/export?format=json", None),
                "tournament": (guest, "GET", "/api/tournament", None),
            }
            seen = daemon.bus.last_id
            reading = {name: _seen(c, clock, wire, m, p, b) for name, (c, m, p, b) in actions.items()}
            reading["events"] = [[e.type, sorted(e.data)] for e in daemon.bus.events_after(seen)]
            # Before a shuffle's first press its contributions are open and nobody is armed, as every phone sees.
            reading["open"] = shuffle["contributions_open"]
            readings.append(reading)
            if n % 2:
                world.press_button()
            else:
                assert guest.post("/api/press").status_code == 200
            settle()
            last = daemon.controller.snapshot()["last_outcome"]
            fired.append(last["cards"] > 0)
            after_fire.append(fired[-1])
        assert 5 <= sum(fired) <= PRESSES - 5, fired
        paused = [e for e in daemon.bus.events_after(0) if e.type == "launcher.suspense"]
        assert profile != "extreme" or paused, "no suspense pause was played"
        # An action that decides takes the arm back and gives it again: the wire saw arms, as it must.
        assert any([c for c, _ in r["reset"]["wire"]] == [b"DISARM", b"ARM"] for r in readings), readings
        armed = [i for i, r in enumerate(readings) if not r.pop("open")]
        leaks = predictors([readings[i] for i in armed], [fired[i] for i in armed], [after_fire[i] for i in armed])
        assert not leaks, "observable between presses, and telling a fire from a miss:\n" + "\n".join(
            f"  {path}: before fires {sorted(f)}, before misses {sorted(m)}" for path, (f, m) in sorted(leaks.items())
        )


# --- 2. the doorbell and the one budget ---------------------------------------------------------------------------


@pytest.fixture
def door(request: pytest.FixtureRequest) -> Table:
    """tests/test_doorbell.py's daemon, reached over loopback from any 127.0.0.0/8 address."""
    found: Table = request.getfixturevalue("table")
    return found


def _look(answer: Answer) -> dict[str, Any]:
    """A 202 as a stranger sees it: all but the ticket's and the code's own random values and the date."""
    return {
        "status": answer.status,
        "body": {k: (len(v) if k in ("waiting", "code") else v) for k, v in answer.body.items()},
        "headers": {k: v for k, v in answer.headers.items() if k != "date"},
        "cookie": answer.cookie,
    }


SPOOFS = (
    {"X_Forwarded_For": "127.0.5.{n}"},
    {"X_Real_IP": "127.0.5.{n}"},
    {"Forwarded": "for=127.0.5.{n}"},
    {"Client_IP": "127.0.5.{n}", "True_Client_IP": "127.0.5.{n}"},
    {"X_Forwarded_For": "::ffff:127.0.5.{n}, 127.0.5.{n}"},
)


@pytest.mark.parametrize("spoof", SPOOFS, ids=lambda s: "+".join(s))
def test_forwarding_headers_do_not_make_one_guesser_many(door: Table, spoof: dict[str, str]) -> None:
    """One address claiming to speak for others: its own limit still holds, and its next PIN (the right one)
    waits unchecked."""
    door.guard()
    for n in range(PinGuard.FREE_TRIES):
        headers = {name: value.format(n=n + 2) for name, value in spoof.items()}
        assert door.call("127.0.7.7", "POST", "/api/session", {"pin": "000001"}, **headers).status == 401
    hashed = len(door.hashes)
    headers = {name: value.format(n=99) for name, value in spoof.items()}
    waits = door.call("127.0.7.7", "POST", "/api/session", {"pin": door.table_pin}, **headers)
    assert waits.status == 202, f"the header {spoof} made a new client: the PIN was checked ({waits.body})"
    assert len(door.hashes) == hashed


@pytest.mark.parametrize("host", ["evil.example", "127.0.0.1.evil.example", "launcher.evil.example:80"])
def test_a_rebound_name_is_refused_before_a_pin_is_counted_or_checked(door: Table, host: str) -> None:
    """DNS rebinding: a page of another name reaching the daemon (with its own Origin) to guess from the phone's
    browser. Refused before the PIN is read: nothing hashed, no try taken from the budget."""
    door.guard()
    hashed = len(door.hashes)
    for n in range(20):
        refused = door.call(address(n), "POST", "/api/session", {"pin": door.table_pin}, Host=host)
        assert refused.status == 421 and refused.cookie is None, refused.body
    assert len(door.hashes) == hashed
    assert door.spend_the_budget(first=20) == PinGuard.BUDGET


@pytest.mark.parametrize(
    "spellings",
    [
        ("127.0.7.8", "::ffff:127.0.7.8", "::ffff:7f00:708", "0:0:0:0:0:ffff:7f00:708"),
        ("2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:0db8:0001:0002:0000:0000:0000:0002", "2001:db8:1:2::1"),
        ("fe80::1%wlan0", "fe80::2%wlan0", "fe80::3%eth0", "fe80::abcd"),
    ],
    ids=["v4-mapped", "one-ipv6-64", "link-local"],
)
def test_spellings_of_one_address_are_one_client(door: Table, spellings: tuple[str, ...]) -> None:
    """The peer's address as waitress hands it (a dual-stack socket gives a v4 phone as ::ffff:a.b.c.d): every
    spelling of one client, and every address of one IPv6 /64, counts against the same limit."""
    door.guard()
    client = door.daemon.app.test_client()
    for n in range(PinGuard.FREE_TRIES):
        wrong = client.post(
            "/api/session", json={"pin": "000001"}, environ_overrides={"REMOTE_ADDR": spellings[n % len(spellings)]}
        )
        assert wrong.status_code == 401, wrong.get_json()
    for spelling in spellings:
        hashed = len(door.hashes)
        waits = client.post("/api/session", json={"pin": door.table_pin}, environ_overrides={"REMOTE_ADDR": spelling})
        assert waits.status_code == 202, f"{spelling} is another client: {waits.get_json()}"
        assert len(door.hashes) == hashed


BAD_PINS = [
    "１２３４５６",  # fullwidth digits: str.isdigit() says yes
    "١٢٣٤٥٦",  # Arabic-Indic digits
    "¹²³⁴⁵⁶",  # superscripts
    " 123456",
    "123456\n",
    "123 456",
    "+123456",
    "-123456",
    "0x1E240",
    "1" * 60_000,  # a body within the 64 KiB a request may be
    "",
    123456,
    1.5,
    None,
    ["123456"],
    {"pin": "123456"},
]


def test_pins_of_any_other_shape_are_refused_before_a_try_is_taken(door: Table) -> None:
    """Every odd PIN a script could send: a 400 naming the PIN, nothing hashed, nothing taken from the budget; the
    right PIN in other digits, with a space or as a number opens nothing."""
    door.guard()
    right, hashed = door.table_pin, len(door.hashes)
    odd = [*BAD_PINS, "".join(chr(0xFF10 + int(c)) for c in right), f" {right}", f"{right} ", f"{right}\t"]
    if right[0] != "0":
        odd.append(int(right))
    for n, pin in enumerate(odd):
        refused = door.call(address(n), "POST", "/api/session", {"pin": pin})
        assert refused.status == 400, (pin if not isinstance(pin, str) or len(pin) < 20 else "long", refused)
        assert refused.body["error"]["code"] == "bad_pin" and right not in refused.body["error"]["message"]
        assert refused.cookie is None
    assert len(door.hashes) == hashed
    # The guard's clock never moved (no refill): the whole budget is still there, untouched by the odd PINs.
    assert door.spend_the_budget(first=len(odd)) == PinGuard.BUDGET


def test_a_burst_at_the_budget_s_last_try_checks_one_pin(door: Table) -> None:
    """One try left in the network's budget and 40 phones' PINs (the right one among them) at the same instant:
    one is checked, the other 39 wait, unchecked."""
    door.guard()
    for n in range(PinGuard.BUDGET - 1):
        assert door.call(address(n), "POST", "/api/session", {"pin": "000001"}).status == 401
    hashed = len(door.hashes)
    start = threading.Barrier(40)
    answers: list[int] = []

    def guess(n: int) -> None:
        start.wait()
        pin = door.table_pin if n % 2 else f"{n:06d}"
        answers.append(door.call(f"127.0.6.{2 + n}", "POST", "/api/session", {"pin": pin}).status)

    threads = [threading.Thread(target=guess, args=(n,)) for n in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert len(answers) == 40
    # A right PIN gives its try back (it was no guess), so the next PIN may be checked too: one wrong one at most.
    assert answers.count(401) <= 1 and answers.count(202) + answers.count(201) + answers.count(401) == 40, answers
    assert CHECKS_PER_PIN <= len(door.hashes) - hashed <= CHECKS_PER_PIN * (answers.count(201) + answers.count(401))
    assert answers.count(202) >= 40 // 2 - 1, answers  # the wrong ones that found no try wait


def test_a_guest_farming_the_refund_of_its_right_pin_gets_no_more_admin_guesses(door: Table) -> None:
    """A guest who knows the table PIN guesses the admin PIN, and joins with the table PIN after each guess: the
    right PIN forgives its wrong tries and gives its own try back. Over an hour, its admin guesses checked stay
    within the budget (100, then 240 an hour)."""
    clock = door.guard()
    checked = 0
    for n in range(3600 // 5):
        clock.now += 5.0
        guess = door.call("127.0.7.9", "POST", "/api/session", {"pin": f"{n:08d}"})
        checked += guess.status == 401
        door.call("127.0.7.9", "POST", "/api/session", {"pin": door.table_pin})
    assert checked <= PinGuard.BUDGET + PinGuard.BUDGET_PER_HOUR, f"{checked} admin guesses checked in an hour"


def _wait_with(door: Table, source: str, pin: str) -> Answer:
    answer = door.call(source, "POST", "/api/session", {"pin": pin})
    assert answer.status == 202, answer.body
    return answer


def test_a_waiting_phone_s_every_poll_looks_the_same_whatever_its_pin(door: Table) -> None:
    """A right, a wrong and the admin PIN wait; each phone looks at its ticket as the page does, over the two
    minutes: every answer alike, nothing hashed, nothing published, nothing sent to the board."""
    door.guard()
    door.spend_the_budget()
    pins = {"right": door.table_pin, "wrong": "000001", "admin": door.admin_pin}
    tickets = {name: _wait_with(door, f"127.0.9.{10 + i}", pin) for i, (name, pin) in enumerate(pins.items())}
    hashed, events, wrote = len(door.hashes), door.daemon.bus.last_id, len(door.wire)
    seen: dict[str, list[dict[str, Any]]] = {name: [] for name in pins}
    for _ in range(5):
        for i, (name, first) in enumerate(tickets.items()):
            polled = door.call(f"127.0.9.{10 + i}", "POST", "/api/session", {"waiting": first.body["waiting"]})
            assert polled.body.get("code") == first.body["code"]
            seen[name].append(_look(polled))
        door.clock.advance(WAIT_S / 5 - 1)
    assert seen["right"] == seen["wrong"] == seen["admin"], seen
    assert len(door.hashes) == hashed and door.daemon.bus.last_id == events
    assert [line for line in door.wire[wrote:] if not line.split(b" ")[1].startswith((b"PING", b"STATUS"))] == []


def test_a_guest_letting_in_the_admin_pin_sees_what_it_sees_for_a_wrong_one(door: Table) -> None:
    """A guest who makes its own ticket with a candidate for the admin PIN, and lets it in with its own code:
    the let-in's answer and headers, the waiting phone's verdict, the hashing, the events, the wire and the
    guest's own session are the same for the admin PIN as for a wrong one."""
    guest = door.join("127.0.0.1", door.table_pin)
    door.guard()
    door.spend_the_budget()
    seen: dict[str, dict[str, Any]] = {}
    for name, pin, source in (("admin", door.admin_pin, "127.0.9.21"), ("wrong", "00000001", "127.0.9.22")):
        ticket = _wait_with(door, source, pin).body
        hashed, events, wrote = len(door.hashes), door.daemon.bus.last_id, len(door.wire)
        let_in = door.call("127.0.0.1", "POST", "/api/let-in", {"code": ticket["code"]}, guest)
        verdict = door.call(source, "POST", "/api/session", {"waiting": ticket["waiting"]})
        again = door.call(source, "POST", "/api/session", {"waiting": ticket["waiting"]})
        seen[name] = {
            "let_in": _look(let_in),
            "verdict": _look(verdict),
            "again": _look(again),
            "hashes": len(door.hashes) - hashed,
            "events": door.daemon.bus.last_id - events,
            "wire": [line for line in door.wire[wrote:] if not line.split(b" ")[1].startswith((b"PING", b"STATUS"))],
            "guest": door.call("127.0.0.1", "GET", "/api/session", cookie=guest).body,
        }
    assert seen["admin"] == seen["wrong"], seen
    assert seen["admin"]["verdict"]["body"]["error"]["code"] == "pin_was_wrong"


def test_no_stranger_lets_a_pin_in_and_a_refused_try_leaves_the_ticket_waiting(door: Table) -> None:
    """The let-in from a stranger, a forged cookie, an ended session's, the ticket itself as a cookie, or a foreign
    Host: refused, nothing checked, and the waiting phone still waits to be let in by a real guest."""
    guest = door.join("127.0.0.1", door.table_pin)
    ended = door.join("127.0.0.3", door.table_pin)
    assert door.call("127.0.0.3", "DELETE", "/api/session", cookie=ended).status == 200
    door.guard()
    door.spend_the_budget()
    ticket = _wait_with(door, "127.0.9.30", door.table_pin).body
    name = guest.split("=", 1)[0]
    hashed = len(door.hashes)
    for cookie in (None, f"{name}=forged", ended, f"{name}={ticket['waiting']}", f"{name}={ticket['code']}"):
        refused = door.call("127.0.9.30", "POST", "/api/let-in", {"code": ticket["code"]}, cookie)
        assert refused.status in (401, 403), (cookie, refused.body)
    rebound = door.call("127.0.0.1", "POST", "/api/let-in", {"code": ticket["code"]}, guest, Host="evil.example")
    assert rebound.status == 421, rebound.body
    assert len(door.hashes) == hashed
    assert door.call("127.0.9.30", "POST", "/api/session", {"waiting": ticket["waiting"]}).status == 202
    assert door.call("127.0.0.1", "POST", "/api/let-in", {"code": ticket["code"]}, guest).body == {"role": "table"}
    assert door.call("127.0.9.30", "POST", "/api/session", {"waiting": ticket["waiting"]}).status == 201


def test_a_phone_in_its_own_wait_and_one_behind_a_spent_budget_get_the_same_answer(door: Table) -> None:
    """Why a PIN waits (this phone's own wrong tries, or the network's budget) is not in the answer either."""
    door.guard()
    for _ in range(PinGuard.FREE_TRIES):
        door.call("127.0.9.40", "POST", "/api/session", {"pin": "000001"})
    own = _wait_with(door, "127.0.9.40", door.table_pin)
    door.spend_the_budget()
    everyone = _wait_with(door, "127.0.9.41", door.table_pin)
    assert _look(own) == _look(everyone)


# A home's IPv6 network is one /64 for every device on it; the guard counts a /64 as one client (one device can fill
# it with addresses). These two apply when the daemon listens on IPv6 (`[web] host = "::"`, which public_urls()
# serves; the installer's config is "0.0.0.0"): waitress then hands each phone's own address, as given here.
FAMILY_PHONE, STRANGER = "2001:db8:1:2::10", "2001:db8:1:2:a9c3:77ff:fe01:66"  # two devices, one home /64


def test_a_stranger_on_the_home_ipv6_network_cannot_drop_a_family_phone_s_waiting_ticket(door: Table) -> None:
    guest = door.daemon.app.test_client()
    assert guest.post("/api/session", json={"pin": door.table_pin}).status_code == 201
    door.guard()
    door.spend_the_budget()
    phones = door.daemon.app.test_client()

    def waits(address: str, pin: str) -> dict[str, Any]:
        answer = phones.post("/api/session", json={"pin": pin}, environ_overrides={"REMOTE_ADDR": address})
        assert answer.status_code == 202, answer.get_json()
        found: dict[str, Any] = answer.get_json()
        return found

    family = waits(FAMILY_PHONE, door.table_pin)
    waits(STRANGER, "000000")  # one request, from another device of the same home network
    let_in = guest.post("/api/let-in", json={"code": family["code"]})
    assert let_in.status_code == 200, f"the family phone's code is gone: {let_in.get_json()}"
    joined = phones.post(
        "/api/session", json={"waiting": family["waiting"]}, environ_overrides={"REMOTE_ADDR": FAMILY_PHONE}
    )
    assert joined.status_code == 201, joined.get_json()


def test_a_stranger_on_the_home_ipv6_network_cannot_spend_the_family_s_joins(door: Table) -> None:
    door.daemon.budgets.joins = PerMinute(Refusal.TOO_MANY_JOINS, "joins", LimitsConfig().joins_per_minute, door.clock)
    phones = door.daemon.app.test_client()
    for _ in range(LimitsConfig().joins_per_minute):
        phones.post("/api/session", json={"pin": "000000"}, environ_overrides={"REMOTE_ADDR": STRANGER})
    invite = door.daemon.access.invite_token()
    joined = phones.post("/api/session", json={"token": invite}, environ_overrides={"REMOTE_ADDR": FAMILY_PHONE})
    assert joined.status_code == 201, f"the family phone's invite link was refused: {joined.get_json()}"
