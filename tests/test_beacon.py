"""The drand quicknet beacon (docs/FAIRNESS.md, "A public beacon"): a recorded real round verifies, and a wrong
signature, a wrong round or a swapped randomness is caught; a shuffle binds to a round signed after its reveals close,
waits for it through the fetcher it is given (no network here), and, when the relays cannot be reached, is fixed
without it and says so in its record."""

from __future__ import annotations

import contextlib
import copy
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from launcher import daemon_parts
from launcher.cli import main
from launcher.daemon import Daemon
from launcher.fairplay import beacon, fairness
from launcher.fairplay.beacon import BeaconRound, fetch_signature, randomness_of, round_after, round_time
from launcher.fairplay.beacon_wait import WAIT_S, BeaconSource
from launcher.fairplay.mixing import REVEAL_S
from launcher.fairplay.sealing import commitment_of
from tests.conftest import joined_client
from tests.test_fairness_api import REVEAL, URL, current, events, fast, phone, sealing_press, value
from tests.virtual_clock import VirtualClock

# A real quicknet round, as the relays answer GET /<chain>/public/657413 (published by python-drand-verify's README;
# its randomness checked here as the SHA-256 of the signature).
ROUND = 657413
SIGNATURE = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
RANDOMNESS = "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587"
ANSWER = json.dumps({"round": ROUND, "randomness": RANDOMNESS, "signature": SIGNATURE}).encode()


def test_the_chain_facts_are_quicknets() -> None:
    assert beacon.CHAIN == "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
    assert (beacon.GENESIS, beacon.PERIOD) == (1692803367, 3)
    assert round_time(1) == 1692803367 and round_time(ROUND) == 1692803367 + 3 * (ROUND - 1)
    assert round_after(beacon.GENESIS) == 2  # strictly after: round 1 is signed at that very second
    assert round_after(round_time(ROUND) - 0.001) == ROUND and round_after(round_time(ROUND)) == ROUND + 1
    assert randomness_of(SIGNATURE) == RANDOMNESS


def test_the_relays_are_tried_in_turn_and_a_wrong_answer_is_not_taken() -> None:
    asked: list[str] = []
    answers = [
        OSError("offline"),
        json.dumps({"round": ROUND + 1, "signature": SIGNATURE}).encode(),  # another round
        json.dumps({"round": ROUND, "signature": SIGNATURE, "randomness": "0" * 64}).encode(),  # not its randomness
        b"<html>",
        ANSWER,
    ]

    def fetch(url: str, timeout: float) -> bytes:
        asked.append(url)
        answer = answers[len(asked) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    relays = tuple(f"https://relay{n}" for n in range(5))
    assert fetch_signature(ROUND, fetch, relays) == SIGNATURE
    assert asked == [f"{relay}/{beacon.CHAIN}/public/{ROUND}" for relay in relays]
    assert fetch_signature(ROUND, lambda url, timeout: b"{}", relays) is None


# --- records: verify and the standalone checker agree on these (tests/test_checker.py) ---


def beacon_record(signature: str | None = SIGNATURE) -> dict[str, Any]:
    """A format-5 record whose key mixes the recorded round, as the daemon writes it (signature None: the round
    was not had in time)."""
    from launcher.fairplay.fairness import CameOut, replay_presses, shuffle_record
    from launcher.fairplay.schedule import PROFILES, Schedule
    from launcher.fairplay.sealing import profile_text, seal, sealed_key
    from tests.test_fairness_sealed import VALUES, entries

    profile, seed, mixed = PROFILES["classic"], "5eed00000000000000000000000000b1", entries(list(VALUES))
    sealed = seal(seed, profile_text(profile))
    outcomes = replay_presses(Schedule(profile, sealed_key(sealed, seed, mixed, BeaconRound(ROUND, signature))), 24)
    came_out = {o.press: CameOut(o.cards, "count" if o.cards else "miss") for o in outcomes}
    record = shuffle_record(profile, seed, outcomes, (), mixed, came_out)
    return {**record, "beacon": BeaconRound(ROUND, signature).as_record()}


BEACON = beacon_record()


def with_beacon(**changes: Any) -> dict[str, Any]:
    record = copy.deepcopy(BEACON)
    record["beacon"].update(changes)
    return record


# Checks a signed record, then reads a stored game nested past Python's recursion limit, in one process.
CHECK_THEN_READ_DEEP = """
from launcher.fairplay import fairness
from launcher.table.history import UNREADABLE, read_state
from tests.test_beacon import BEACON
assert fairness.verify(BEACON).beacon_signature_ok
try:
    read_state("[" * 100_000 + "]" * 100_000)
except UNREADABLE:
    print("left out")
"""


def test_a_signature_check_leaves_a_damaged_store_refused_and_the_process_alive() -> None:
    """The BLS library raises the process's recursion limit as it loads; with it raised, state nested too deep
    overflows the C stack and kills the process instead of being left out."""
    done = subprocess.run([sys.executable, "-c", CHECK_THEN_READ_DEEP], capture_output=True, text=True,
                          cwd=Path(__file__).parent.parent, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "left out"), done.stderr[-2000:]


def test_a_record_bound_to_a_recorded_round_verifies() -> None:
    report = fairness.verify(BEACON)
    assert report.ok and report.beacon_signature_ok is True
    assert f"OK: the key mixes drand quicknet round {ROUND}, signed by the League of Entropy" in str(report)
    # The round's randomness is in the key: the same record replayed without it does not match.
    assert not fairness.verify({k: v for k, v in BEACON.items() if k != "beacon"}).ok


@pytest.mark.parametrize(
    ("name", "changes", "line"),
    [
        ("signature", {"signature": SIGNATURE[:-2] + "9c"}, "is not the League of Entropy's"),
        ("round", {"round": ROUND + 1}, f"round {ROUND + 1} is not the League of Entropy's"),
        ("randomness", {"randomness": "ab" * 32}, "the beacon's randomness is not the SHA-256 of its signature"),
    ],
)
def test_a_wrong_signature_round_or_randomness_fails(name: str, changes: dict[str, Any], line: str) -> None:
    report = fairness.verify(with_beacon(**changes))
    assert not report.ok, name
    assert any(text.startswith("FAILED") and line in text for text in str(report).splitlines()), str(report)


def test_the_verify_command_fails_a_wrong_signature(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "uno-shuffle-9.json"
    path.write_text(json.dumps(with_beacon(signature=SIGNATURE[:-2] + "9c")), encoding="utf-8")
    assert main(["verify", str(path)]) == 1
    assert "FAILED: the signature of drand quicknet round" in capsys.readouterr().out
    path.write_text(json.dumps(BEACON), encoding="utf-8")
    assert main(["verify", str(path)]) == 0


def test_a_beacon_that_is_not_quicknets_or_half_written_is_unreadable() -> None:
    for bad in (
        {"chain": "0" * 64},
        {"signature": None},  # a randomness left without its signature
        {"round": 0},
        {"round": 2**53},  # past where a JSON number is exact: the page could not read it as written
        {"signature": SIGNATURE.upper()},
    ):
        with pytest.raises(fairness.RecordError, match="beacon = "):
            fairness.verify(with_beacon(**bad))


# --- the daemon: binding, waiting, going without ---


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[VirtualClock, list[str], list[bytes | None]]]:
    """The daemon's beacon source: a virtual clock whose wall time is 6.5 s before ROUND is signed when the test
    starts, and a fetcher that answers from `answers` (None: the relay cannot be reached) and keeps what it asked."""
    clock = VirtualClock()
    start = clock.now()
    asked: list[str] = []
    answers: list[bytes | None] = []

    def fetch(url: str, timeout: float) -> bytes:
        asked.append(url)
        answer = answers[0] if answers else None
        if answer is None or not url.endswith(f"/public/{ROUND}"):
            raise OSError("no route to host")
        return answer

    source = BeaconSource(fetch, lambda: round_time(ROUND) - 6.5 + clock.now() - start, ("https://relay",))
    monkeypatch.setattr(daemon_parts, "BeaconSource", lambda: source)
    yield clock, asked, answers
    clock.close()


def beacon_daemon(tmp_path: Path, clock: VirtualClock) -> Daemon:
    return Daemon(fast(tmp_path).replace("fairness", beacon="drand-quicknet"), clock=clock)


def test_a_shuffle_binds_the_round_after_its_reveals_and_its_key_mixes_it(
    tmp_path: Path, served: tuple[VirtualClock, list[str], list[bytes | None]]
) -> None:
    clock, asked, answers = served
    answers.append(ANSWER)
    running = beacon_daemon(tmp_path, clock)
    try:
        client = joined_client(running)
        number, mine = current(client)["number"], value()
        assert client.post(URL, json={"shuffle": number, "commitment": commitment_of(mine)}).status_code == 201
        before = clock.now()
        pressing = clock.thread(lambda: running.controller.press("web").wait(30), "press")
        pressing.start()
        while not events(running, "shuffle.sealed"):
            clock.sleep(0.01)
        (sealed,) = events(running, "shuffle.sealed")
        assert sealed["beacon_round"] == ROUND  # signed after the reveal window: nobody revealing can know it
        assert current(client)["beacon_round"] == ROUND  # a phone that missed the event still learns it
        assert client.post(REVEAL, json={"shuffle": number, "value": mine}).get_json()["fixed"] is False
        assert asked == [] and events(running, "button.pressed") == []  # the round is not out yet: the press waits
        while pressing.is_alive():
            clock.sleep(0.1)  # virtual time: moves on while this test waits
        assert clock.now() - before >= REVEAL_S  # the round's time (wall) came after the reveal window
        assert events(running, "button.pressed") and asked  # it was asked for once signed
        (fixed,) = events(running, "shuffle.fixed")
        assert fixed["beacon"] == BeaconRound(ROUND, SIGNATURE).as_record()
        for _ in range(10):
            assert running.controller.press("web").wait(10)
        record, _ = running.controller.new_shuffle()
    finally:
        running.close()
    assert record["beacon"] == {"chain": beacon.CHAIN, "round": ROUND, "signature": SIGNATURE, "randomness": RANDOMNESS}
    report = fairness.verify(record)
    assert report.ok and report.beacon_signature_ok, str(report)


def test_offline_the_key_goes_without_the_beacon_and_the_record_says_so(
    tmp_path: Path, served: tuple[VirtualClock, list[str], list[bytes | None]]
) -> None:
    clock, asked, _ = served  # every relay unreachable
    running = beacon_daemon(tmp_path, clock)
    try:
        before = clock.now()
        assert running.controller.press("web").wait(60)  # no commitment at all: it still waits for the round
        waited = clock.now() - before
        assert REVEAL_S + WAIT_S <= waited <= REVEAL_S + beacon.PERIOD + WAIT_S + 1.0
        assert len(asked) >= 5  # tried again and again until the bound
        record, _ = running.controller.new_shuffle()
    finally:
        running.close()
    assert record["beacon"] == {"chain": beacon.CHAIN, "round": ROUND, "signature": None, "randomness": None}
    report = fairness.verify(record)
    assert report.ok
    assert f"NOTE: drand quicknet round {ROUND} was not had in time: the key was fixed without it" in str(report)


def test_with_the_beacon_off_nothing_is_asked_and_the_record_has_none(
    tmp_path: Path, served: tuple[VirtualClock, list[str], list[bytes | None]]
) -> None:
    clock, asked, _ = served
    running = Daemon(fast(tmp_path), clock=clock)
    try:
        assert running.controller.press("web").wait(10)
        record, _ = running.controller.new_shuffle()
    finally:
        running.close()
    assert asked == [] and "beacon" not in record and fairness.verify(record).ok


def test_a_restart_while_the_round_is_awaited_waits_for_the_same_round(
    tmp_path: Path, served: tuple[VirtualClock, list[str], list[bytes | None]]
) -> None:
    clock, asked, answers = served
    answers.append(ANSWER)
    first = beacon_daemon(tmp_path, clock)
    try:
        client = joined_client(first)
        number, mine = current(client)["number"], value()
        assert client.post(URL, json={"shuffle": number, "commitment": commitment_of(mine)}).status_code == 201
        sealing_press(first)  # the button's first press closes the commitments and binds the round
        assert events(first, "shuffle.sealed")[0]["beacon_round"] == ROUND
    finally:
        first.close()
    second = beacon_daemon(tmp_path, clock)
    try:
        client = phone(second)  # a restart keeps the sessions: the same phone, on its way back
        assert client.post(REVEAL, json={"shuffle": number, "value": mine}).get_json()["fixed"] is False
        assert second.controller.press("web").wait(60)  # waits for ROUND again, not a new one
        (fixed,) = events(second, "shuffle.fixed")
        assert fixed["beacon"]["round"] == ROUND and fixed["beacon"]["signature"] == SIGNATURE
        for _ in range(5):
            assert second.controller.press("web").wait(10)
    finally:
        second.close()
    fetches = len(asked)
    third = beacon_daemon(tmp_path, clock)  # the key was fixed with the round: the log gives it back, nothing asked
    try:
        for _ in range(5):
            assert third.controller.press("web").wait(10)
        record, _ = third.controller.new_shuffle()
    finally:
        third.close()
    assert len(asked) == fetches and all(url.endswith(f"/public/{ROUND}") for url in asked)
    assert len(record["outcomes"]) == 11 and record["beacon"]["signature"] == SIGNATURE
    assert fairness.verify(record).ok


def test_with_the_beacon_withholding_chooses_nothing() -> None:
    """The red team's withholder (tests/test_fairness_redteam.py) once more: after the honest phone revealed, the
    host's phone keeps whichever of revealing or withholding makes the first press fire. Without a beacon that
    works (1 - 0.75^2 = 44 %); with one, the round is signed after the reveals close, so the host can only judge
    the two keys without it, and the press fires as often as chance (25 %)."""
    import random

    from launcher.fairplay.sealing import Contribution, sealed_key
    from tests.test_fairness_redteam import chi_square_p, first_press_fires, token

    shuffles = 8_000
    won_without = won_with = 0
    draw = random.Random(5)  # seeded: see tests/test_fairness_redteam.py's token()
    for _ in range(shuffles):
        seal, seed, honest, mine = (token(draw) for _ in range(4))
        table = [Contribution(commitment_of(honest), honest)]

        def key(revealed: bool, beacon: BeaconRound | None = None) -> bytes:
            host = Contribution(commitment_of(mine), mine if revealed else None)  # noqa: B023 (this shuffle's)
            return sealed_key(seal, seed, [*table, host], beacon)  # noqa: B023

        reveal = first_press_fires(key(True)) or not first_press_fires(key(False))  # the best it can judge
        won_without += first_press_fires(key(reveal))
        round_had = BeaconRound(ROUND, draw.randbytes(48).hex())  # published after the choice
        won_with += first_press_fires(key(reveal, round_had))
    best_of_two = 1 - 0.75**2
    assert chi_square_p([shuffles - won_without, won_without], [1 - best_of_two, best_of_two]) > 0.01
    assert chi_square_p([shuffles - won_with, won_with], [0.75, 0.25]) > 0.01
    assert chi_square_p([shuffles - won_with, won_with], [1 - best_of_two, best_of_two]) < 1e-6


def test_a_round_not_had_in_time_still_keys_the_shuffle() -> None:
    """Its number is in the key without a signature: a record cannot drop the round, nor name another, unseen."""
    unsigned = beacon_record(None)
    assert fairness.verify(unsigned).ok
    assert not fairness.verify({k: v for k, v in unsigned.items() if k != "beacon"}).ok
    moved = copy.deepcopy(unsigned)
    moved["beacon"]["round"] = ROUND + 1
    assert not fairness.verify(moved).ok


@pytest.mark.parametrize(
    ("reply", "paced"),
    [
        (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 60 + b"\r\n" + ANSWER, True),  # headers a line at a time, slowly
        (b"HTTP/1.1 404 Not Found\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER), False),
    ],
    ids=["trickled-headers", "not-found"],
)
def test_a_relay_s_answer_is_had_whole_and_in_time_or_not_at_all(reply: bytes, paced: bool) -> None:
    """The fetch's bound is for the whole answer, headers included, and only a 200 counts as an answer."""
    server = socket.create_server(("127.0.0.11", 0))
    server.settimeout(10)

    def serve() -> None:
        with contextlib.suppress(OSError):
            conn, _ = server.accept()
            with conn:
                conn.recv(4096)
                for line in reply.splitlines(keepends=True) if paced else [reply]:
                    conn.sendall(line)
                    if paced:
                        time.sleep(0.1)  # the relay's pace (60 lines: 6 s), each line well within a read's timeout

    threading.Thread(target=serve, daemon=True).start()
    # The paced answer is whole and a 200 after 6 s: only a bound on the whole of it turns it down.
    with server, pytest.raises(OSError):  # TimeoutError and the 404 alike: not had
        beacon.http_get(f"http://127.0.0.11:{server.getsockname()[1]}/public/{ROUND}", beacon.FETCH_TIMEOUT_S)
