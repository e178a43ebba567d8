"""Red team on the new doors' fixes (#45) and the drand beacon (#50), as an attacker on the family's Wi-Fi, a hostile
relay or a dishonest daemon would go at them. Each attack is a test; a door found is `xfail(strict=True)` with what
broke (the file and line, the figure, a fix), the attacks that hold stay as regression tests.

Doors found:
- event streams asking for the log from id 0, never read: one wave of 128 from strangers (no PIN) held every
  server thread in replays from the disk for tens of seconds (20,000 events: 48 s; 6,000: 16 s; 3,500: 5 s), so
  no new phone joined and the family's phone could not press; a guest did it with sessions too (closed since: a
  replay reads a bounded part of the log, then a `gap`; the two tests below hold);
- a stranger's 100 wrong PINs spend the network's guessing budget: every new phone's right PIN then waits for a
  person (the doorbell, as designed; the invite link still works, which holds);
Closed since (#50's fix, the xfails taken off): a relay answering JSON nested too deep, or a line that is not HTTP,
killed the thread waiting for the round (the shuffle's presses waited for good, a good relay after it was never
asked); a relay trickling its answer was never cut (the timeout bounded each read, not the answer); a record whose
`beacon` was taken out verified as a clean OK.
Held: wrong relay answers (another round, upper case, wrong randomness, cut, not UTF-8), every digit of a record's
QR text changed, the game's ETag and its 304 between presses, a stranger's QR-code flood from 64 addresses.
"""

from __future__ import annotations

import http.client
import json
import multiprocessing
import resource
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from launcher.fairplay import fairness, record_qr
from launcher.fairplay.beacon import FETCH_TIMEOUT_S, PERIOD, BeaconRound, http_get, round_time
from launcher.fairplay.beacon_wait import WAIT_S, BeaconSource
from tests.conftest import RunningDaemon, joined_client, start_daemon_with_log
from tests.test_attack_connections import PROBE_S, _host_port, _join_from, new_phone
from tests.test_beacon import ANSWER, BEACON, ROUND, SIGNATURE, beacon_record
from tests.test_red_team_45 import GAME, daemon_playing
from tests.test_red_team_45_net import _press
from tests.virtual_clock import VirtualClock

# --- 3. the beacon: a hostile relay ----------------------------------------------------------------------------------

NESTED = b"[" * 4000  # within MAX_ANSWER (4,096 bytes), four times Python's recursion limit deep


@pytest.fixture
def thread_errors(monkeypatch: pytest.MonkeyPatch) -> list[BaseException]:
    """Exceptions that end a thread, kept here (the test judges them) instead of failing the run at teardown."""
    raised: list[BaseException] = []

    def keep(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            raised.append(args.exc_value)

    monkeypatch.setattr(threading, "excepthook", keep)
    return raised


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    running = VirtualClock()
    yield running
    running.close()


def _settled_by_the_deadline(clock: VirtualClock, answers: dict[str, bytes]) -> BeaconRound | None:
    """Round ROUND waited for from 1 s before its time, each relay answering as `answers` says; what the wait
    settled on once the bound (WAIT_S and a last pass over the relays) is over."""
    start = clock.now()

    def fetch(url: str, timeout: float) -> bytes:
        relay = url.split("/", 3)[2]
        if relay not in answers:
            raise OSError("no route to host")
        return answers[relay]

    relays = tuple(f"https://{name}" for name in answers)
    source = BeaconSource(fetch, lambda: round_time(ROUND) - 1.0 + clock.now() - start, relays)
    pending = source.wait_for(ROUND, clock)
    settled = threading.Event()
    pending.start(settled.set)
    clock.run_until(settled.is_set, within=1.0 + WAIT_S + pending.last_try_s + PERIOD)
    return pending.settled


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ({"evil.relay": NESTED}, BeaconRound(ROUND)),  # alone: the key goes without, in time
        ({"evil.relay": NESTED, "good.relay": ANSWER}, BeaconRound(ROUND, SIGNATURE)),  # the good one is asked
    ],
    ids=["alone", "before-a-good-relay"],
)
def test_a_relay_answering_json_nested_too_deep_neither_stalls_the_shuffle_nor_hides_a_good_relay(
    clock: VirtualClock, thread_errors: list[BaseException], answers: dict[str, bytes], expected: BeaconRound
) -> None:
    settled = _settled_by_the_deadline(clock, answers)
    assert not thread_errors, f"the thread waiting for the round died: {thread_errors!r}"
    assert settled == expected, f"the round was settled as {settled} by its deadline (None: never)"


@pytest.mark.parametrize(
    "answer",
    [
        b'{"round": %d, "signature": "%s"}' % (ROUND + 1, SIGNATURE.encode()),  # another round's answer
        b'{"round": %d, "signature": "%s"}' % (ROUND, SIGNATURE.upper().encode()),  # not as quicknet writes it
        b'{"round": %d, "signature": "%s", "randomness": "%s"}' % (ROUND, SIGNATURE.encode(), b"ab" * 32),
        b'{"round": %d, "signature": "%s"' % (ROUND, SIGNATURE.encode()) + b" " * 5000 + b"}",  # past MAX_ANSWER
        b'{"round": %d, "round": %d, "signature": "%s"}' % (ROUND + 1, ROUND, SIGNATURE.encode()) + b"\xff",
    ],
    ids=["other-round", "upper-case", "wrong-randomness", "huge", "not-utf8"],
)
def test_a_relay_s_wrong_answer_is_not_taken_and_a_good_relay_after_it_is(
    clock: VirtualClock, thread_errors: list[BaseException], answer: bytes
) -> None:
    """The fetcher here is handed the whole body: MAX_ANSWER's cut is http_get's, so "huge" is cut as it would be."""
    settled = _settled_by_the_deadline(clock, {"evil.relay": answer[:4096], "good.relay": ANSWER})
    assert not thread_errors
    assert settled == BeaconRound(ROUND, SIGNATURE)


@contextmanager
def _relay(address: str, reply: bytes) -> Iterator[str]:
    """An HTTP relay on loopback answering every connection with `reply`, as it is; its base URL."""
    server = socket.socket()
    server.bind((address, 0))
    server.listen(8)

    def serve() -> None:
        with suppress(OSError):
            while True:
                conn, _ = server.accept()
                with conn:
                    conn.recv(4096)
                    conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://{address}:{server.getsockname()[1]}"
    finally:
        server.close()


GOOD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER)


def test_a_relay_answering_garbage_instead_of_http_does_not_hide_a_good_relay(
    clock: VirtualClock, thread_errors: list[BaseException]
) -> None:
    with _relay("127.0.0.9", b"HELLO\r\n\r\n") as garbage, _relay("127.0.0.10", GOOD) as good:
        start = clock.now()
        source = BeaconSource(http_get, lambda: round_time(ROUND) + clock.now() - start, (garbage, good))
        pending = source.wait_for(ROUND, clock)
        settled = threading.Event()
        pending.start(settled.set)
        with suppress(AssertionError):
            clock.run_until(settled.is_set, within=WAIT_S + pending.last_try_s)
    assert not thread_errors, f"the thread waiting for the round died: {thread_errors!r}"
    assert pending.settled == BeaconRound(ROUND, SIGNATURE), pending.settled


TRICKLE_S = 0.1  # the relay's pace: a byte this often, well within each read's timeout


@pytest.mark.slow
def test_a_relay_trickling_its_answer_is_given_up_within_the_fetch_timeout() -> None:
    sent = [0]
    server = socket.socket()
    server.bind(("127.0.0.9", 0))
    server.listen(1)
    server.settimeout(10)

    def trickle() -> None:
        with suppress(OSError):
            conn, _ = server.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n")
                for _ in range(100):
                    conn.sendall(b" ")
                    sent[0] += 1
                    time.sleep(TRICKLE_S)

    relay = threading.Thread(target=trickle, daemon=True)
    relay.start()
    outcome: list[object] = []

    def fetch() -> None:
        try:
            outcome.append(http_get(f"http://127.0.0.9:{server.getsockname()[1]}/public/1", FETCH_TIMEOUT_S))
        except Exception as e:  # whatever it raises: the time it took is the point here
            outcome.append(e)

    fetching = threading.Thread(target=fetch, daemon=True)
    fetching.start()
    relay.join(30)
    server.close()
    fetching.join(10)
    given_up_after = sent[0] * TRICKLE_S
    print(f"\nthe trickling relay sent {sent[0]} bytes ({given_up_after:.1f} s) before the fetch gave up")
    assert given_up_after <= 2.5 * FETCH_TIMEOUT_S, f"a fetch bounded at {FETCH_TIMEOUT_S} s took {sent[0]} bytes"


# --- 3. the beacon: a dishonest daemon -------------------------------------------------------------------------------


def test_a_record_whose_bound_round_is_taken_out_is_not_an_unremarked_ok() -> None:
    # The same shuffle keyed without the round, as the daemon may key it whenever the round's outcomes do not suit it.
    unsigned = fairness.verify(_keyed_without_the_round())
    assert unsigned.ok and "was not had in time" in str(unsigned), str(unsigned)
    stripped = {k: v for k, v in _keyed_without_the_round().items() if k != "beacon"}
    report = fairness.verify(stripped)
    assert not report.ok or "NOTE" in str(report), (
        "a shuffle bound to a round, its record's `beacon` taken out, verifies as a clean OK:\n" + str(report)
    )


def _keyed_without_the_round() -> dict[str, Any]:
    """A record of the beacon's shuffle keyed with no signature, `beacon` saying the round was not had."""
    return beacon_record(None)


# --- 3. the record as a QR code: tampered ---------------------------------------------------------------------------


def test_every_digit_of_a_records_qr_text_changed_is_caught() -> None:
    """Each digit of the QR text of a beacon-bound record, changed to the next digit: the text is refused, the
    record is unreadable, or it fails its check; a record that still passes says exactly what the original says
    (found: one change turns `restarts: []` into an unknown key, which verification ignores, as FAIRNESS.md says)."""
    text = record_qr.packed(BEACON)
    digits = text.removeprefix(record_qr.PREFIX)
    said = str(fairness.verify(BEACON))
    other: list[int] = []
    for at, digit in enumerate(digits):
        changed = record_qr.PREFIX + digits[:at] + str((int(digit) + 1) % 10) + digits[at + 1 :]
        try:
            report = fairness.verify(record_qr.unpacked(changed))
        except (ValueError, fairness.RecordError):
            continue  # caught: refused as a QR text, or as a record
        if report.ok and str(report) != said:
            other.append(at)
    assert not other, f"{len(other)} of {len(digits)} digits changed make a record passing with another verdict"


# --- 2. the game's ETag and its 304 between presses -----------------------------------------------------------------


def test_the_game_s_etag_and_its_304_between_presses_tell_nothing_of_the_next(tmp_path: Path) -> None:
    """A guest keeps the game's ETag as each press settles, then just before the next press asks again with it
    (If-None-Match, gzip or not) and reads the ETag given: a 304 before a fire and a 200 before a miss (or a new
    tag), would tell the next press. Between presses the state is read by a stranger too (what a phone does)."""
    with daemon_playing(tmp_path, 1000) as daemon:
        clock = daemon.clock
        assert isinstance(clock, VirtualClock)
        guest, stranger = joined_client(daemon), daemon.app.test_client()

        def settle() -> None:
            clock.advance(0.5)
            clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=10.0)
            clock.advance(0.05)

        assert guest.post("/api/games", json=GAME).status_code == 201
        assert guest.post("/api/shuffles", json={"profile": "classic"}).status_code == 201
        assert guest.post("/api/press").status_code == 200  # contributions close: armed from now on
        settle()
        seen: list[tuple[Any, ...]] = []
        fired: list[bool] = []
        for n in range(40):
            kept = guest.get("/api/game").headers["ETag"]
            clock.advance(1.0)
            stranger.get("/api/state")
            plain = guest.get("/api/game", headers={"If-None-Match": kept})
            zipped = guest.get("/api/game", headers={"If-None-Match": kept, "Accept-Encoding": "gzip"})
            seen.append((plain.status_code, plain.headers.get("ETag") == kept, zipped.status_code))
            if n % 2:
                daemon.hardware.world.press_button()  # type: ignore[attr-defined]
            else:
                assert guest.post("/api/press").status_code == 200
            settle()
            fired.append(daemon.controller.snapshot()["last_outcome"]["cards"] > 0)
        assert 5 <= sum(fired) <= 35, fired
        before_fires = {s for s, f in zip(seen, fired, strict=True) if f}
        before_misses = {s for s, f in zip(seen, fired, strict=True) if not f}
        assert before_fires == before_misses, f"before fires {before_fires}, before misses {before_misses}"


# --- 1. event streams asking for the whole log ----------------------------------------------------------------------

LOG_EVENTS = 20_000  # some weeks of evenings (a press makes a few events; the log keeps 90 days): ~3 MB, past memory
PROBES = 8
STREAM_FROM_THE_START = b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n%sLast-Event-ID: 0\r\n\r\n"


@pytest.fixture
def daemon_with_a_long_log(tmp_path: Path) -> Iterator[RunningDaemon]:
    """The daemon as a subprocess, its event log LOG_EVENTS long (written into its store between two starts, as
    weeks of play leave it), so a stream resuming from id 0 replays most of it from the disk."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4096)), hard))
    running = start_daemon_with_log(tmp_path, LOG_EVENTS)
    try:
        yield running
    finally:
        running.close()


def _stream_never_read(daemon_process: RunningDaemon, source: str, cookie: str) -> socket.socket | None:
    """A stream asking for the log from its start, on a 1 KB receive buffer, never read."""
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.settimeout(1)
        sock.bind((source, 0))
        host, port = daemon_process.url.removeprefix("http://").rsplit(":", 1)
        sock.connect((host, int(port)))
        sock.sendall(STREAM_FROM_THE_START % (f"Cookie: {cookie}\r\n".encode() if cookie else b""))
        sock.setblocking(False)
        return sock
    except OSError:
        sock.close()
        return None


@contextmanager
def _streams_from_the_start(
    daemon_process: RunningDaemon, holders: list[tuple[str, str]], every_s: float
) -> Iterator[list[socket.socket]]:
    """Each (address, cookie) in `holders` opens one such stream, again every `every_s` s, keeping the old ones
    open, while the block runs (at most 20 waves)."""
    stop = threading.Event()
    opened: list[socket.socket] = []

    def run() -> None:
        for _ in range(20):
            opened.extend(s for a, c in holders if (s := _stream_never_read(daemon_process, a, c)) is not None)
            if stop.wait(every_s):
                return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        time.sleep(1.5)
        yield opened
    finally:
        stop.set()
        thread.join(60)
        for sock in opened:
            sock.close()


def _probes(daemon_process: RunningDaemon, first: int) -> list[bool]:
    results = []
    for n in range(PROBES):
        results.append(new_phone(daemon_process, first + n))
        time.sleep(0.25)
    return results


@pytest.mark.slow
def test_strangers_streams_asking_for_the_whole_log_never_read_do_not_close_the_table(
    daemon_with_a_long_log: RunningDaemon,
) -> None:
    """A stranger without a PIN, one wave of 128 streams (2 from each of 64 addresses) from Last-Event-ID 0 on a
    20,000-event log, never read. Before the fix (each replayed the whole log on its request's thread, counted in no
    party's share, waiting for its reader until DRAIN_S): new phones 0 of 8, 0 of 19 probes for 48 s, and the family's
    press unanswered for 30 s. Now a replay reads at most REPLAY_BYTES from the disk (webui/stream.py)."""
    daemon = daemon_with_a_long_log
    holders = [(f"127.0.0.{2 + n // 2}", "") for n in range(128)]
    with _streams_from_the_start(daemon, holders, every_s=60.0):  # one wave within the probes
        results = _probes(daemon, first=1)
        pressed = _press(daemon)
    print(f"\nstrangers' 128 streams from the log's start: new phones {sum(results)} of {len(results)}; {pressed}")
    assert all(results) and pressed == 200, f"new phones got in {sum(results)} of {len(results)}; press: {pressed}"


@pytest.mark.slow
@pytest.mark.long
def test_a_guests_streams_asking_for_the_whole_log_never_read_do_not_lock_new_phones_out(
    daemon_with_a_long_log: RunningDaemon,
) -> None:
    """A guest with 32 sessions (joined from 8 addresses, 4 each, within the default 10 a minute) opening 4 streams
    each from Last-Event-ID 0 every 4 s, never read. Before the fix: new phones 1 of 8 (5 and 4 of 16 apart)."""
    daemon = daemon_with_a_long_log
    addresses = [f"127.0.0.{n}" for n in range(2, 10)]
    cookies = [_join_from(daemon, addresses[n % 8], {"pin": daemon.table_pin}) for n in range(32)]
    holders = [(addresses[n % 8], cookie) for n, cookie in enumerate(cookies) for _ in range(4)]
    with _streams_from_the_start(daemon, holders, every_s=4.0):
        results = _probes(daemon, first=1)
    print(f"\na guest's 128 streams from the log's start: new phones {sum(results)} of {len(results)} in {PROBE_S} s")
    assert all(results), f"new phones got in {sum(results)} of {len(results)}"


# --- 1. the network's guessing budget, spent by a stranger -----------------------------------------------------------


def _join_status(daemon_process: RunningDaemon, source: str, body: dict[str, str]) -> int | str:
    conn = http.client.HTTPConnection(*_host_port(daemon_process), timeout=PROBE_S, source_address=(source, 0))
    try:
        conn.request("POST", "/api/session", body=json.dumps(body), headers={"Content-Type": "application/json"})
        answer = conn.getresponse()
        answer.read()
        return answer.status
    except OSError as e:
        return f"no answer: {e!r}"
    finally:
        conn.close()


@contextmanager
def _budget_spent_by_a_stranger(daemon_process: RunningDaemon) -> Iterator[list[int | str]]:
    """A stranger's 5 wrong PINs from each of 20 addresses at once (each address's free tries): the network's 100
    checks, two PBKDF2 hashes each, in a burst; the block runs while they are checked, then waits for them."""
    answers: list[int | str] = []
    wrong = "000000" if daemon_process.table_pin != "000000" else "111111"

    def guess(source: str) -> None:
        answers.extend(_join_status(daemon_process, source, {"pin": wrong}) for _ in range(5))

    threads = [threading.Thread(target=guess, args=(f"127.0.0.{n}",)) for n in range(2, 22)]
    for thread in threads:
        thread.start()
    try:
        yield answers
    finally:
        for thread in threads:
            thread.join(120)


def test_while_a_stranger_spends_the_guessing_budget_new_phones_join_by_the_invite_link(
    daemon_process: RunningDaemon,
) -> None:
    """The household's way in needs no budget (RELIABILITY.md): during the stranger's burst of 100 checks and after
    it, a new phone given the invite link loads the page and joins within PROBE_S, 8 of 8 each time."""
    status, invite = daemon_process.request("GET", "/api/invite")
    assert status == 200, invite
    token = {"token": invite["join_url"].split("#join=", 1)[1]}

    def by_invite(n: int) -> bool:
        began = time.monotonic()
        return _join_status(daemon_process, f"127.0.1.{n}", token) == 201 and time.monotonic() - began < PROBE_S

    with _budget_spent_by_a_stranger(daemon_process) as guesses:
        during = [by_invite(n) for n in range(1, 1 + PROBES)]
    after = [by_invite(n) for n in range(20, 20 + PROBES)]
    print(f"\nthe stranger's guesses {sorted(map(str, guesses))[:3]}...; invite joins {sum(during)}, {sum(after)} of 8")
    assert all(during) and all(after), f"by the invite link: during {during}, after {after}"


@pytest.mark.xfail(
    strict=True,
    reason="DOOR (the doorbell's price, as designed): launcher/access/pin_guard.py's one budget of 100 checks "
    "(refilled "
    "at 240 an hour) is spent by a stranger's 100 wrong PINs (5 from each of 20 addresses, in ~15 s); from then on "
    "every new phone typing the right table PIN is answered 202 and waits for a person at the launcher: 0 of 8 "
    "joined, for as long as the stranger spends the 4 tries a minute that refill. RELIABILITY.md says the "
    "household needs no budget (invite link, sessions), but the table PIN, the way the page first offers, is "
    "locked for everyone by anyone. Fix to weigh: keep part of the budget for addresses never seen guessing "
    "wrong, or have the page offer the invite link / the code at once when a join waits.",
)
def test_after_a_stranger_spends_the_guessing_budget_new_phones_join_with_the_table_pin(
    daemon_process: RunningDaemon,
) -> None:
    with _budget_spent_by_a_stranger(daemon_process):
        pass
    joined = [
        _join_status(daemon_process, f"127.0.1.{n}", {"pin": daemon_process.table_pin}) for n in range(1, 1 + PROBES)
    ]
    print(f"\nnew phones with the right PIN after the stranger's burst: {joined}")
    assert joined == [201] * PROBES, f"new phones typing the right PIN were answered {joined}"


# --- 1. expensive answers from many strangers ------------------------------------------------------------------------


def _reads_in_a_loop(address: tuple[str, int], path: str, sources: list[str], signals: Any) -> None:
    """The stranger's process (its own device, so its loops do not starve this process's probes of the GIL): one
    keep-alive connection per source asking `path` again and again, reading every answer; the count at the end."""
    started, stop, answered = signals
    count = [0]

    def run(source: str) -> None:
        conn = http.client.HTTPConnection(*address, timeout=10, source_address=(source, 0))
        try:
            while not stop.is_set():
                conn.request("GET", path)
                conn.getresponse().read()
                count[0] += 1
        except OSError:
            pass
        finally:
            conn.close()

    threads = [threading.Thread(target=run, args=(source,), daemon=True) for source in sources]
    for thread in threads:
        thread.start()
    started.set()
    stop.wait()
    for thread in threads:
        thread.join(10)
    answered.put(count[0])


@pytest.mark.slow
def test_strangers_asking_a_shuffles_qr_code_from_64_addresses_leave_new_phones_their_join(
    daemon_process: RunningDaemon,
) -> None:
    """A record's QR code is drawn in pure Python (6-114 ms a code, measured apart; kept for 64 records); 64
    strangers' addresses ask an ended shuffle's QR code as fast as it is answered (some 800 a second): new phones
    still load the page and join within PROBE_S, 8 of 8."""
    for _ in range(20):
        assert daemon_process.post("/api/press", {})[0] == 200
    assert (
        daemon_process.post("/api/shuffles", {"profile": "classic"})[0] == 201
    )  # shuffle 1 ends: its record is public
    status, code = http_status_and_body(daemon_process, "/api/shuffles/1/qr")
    assert status == 200 and code["size"] > 0, code
    spawn = multiprocessing.get_context("spawn")
    signals = (spawn.Event(), spawn.Event(), spawn.Queue())
    sources = [f"127.0.0.{n}" for n in range(2, 66)]
    stranger = spawn.Process(
        target=_reads_in_a_loop, args=(_host_port(daemon_process), "/api/shuffles/1/qr", sources, signals)
    )
    stranger.start()
    try:
        assert signals[0].wait(60), "the stranger's process did not start"
        time.sleep(1)
        results = _probes(daemon_process, first=1)
    finally:
        signals[1].set()
        answered = signals[2].get(timeout=60)
        stranger.join(30)
    print(f"\n{answered} QR codes asked by 64 strangers; new phones {sum(results)} of {len(results)}")
    assert answered > 100 and all(results), f"new phones got in {sum(results)} of {len(results)}"


def http_status_and_body(daemon_process: RunningDaemon, path: str) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(*_host_port(daemon_process), timeout=10)
    try:
        conn.request("GET", path)
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()
