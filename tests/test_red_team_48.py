"""Red team on the stream-replay fix (#45) and the beacon fix (#50), as an attacker on the family's Wi-Fi (or a
relay, or the network between the Pi and the League's relays) would go at them. Each attack is a test; a door found
is `xfail(strict=True)` with what broke (the file and line, the figure, a fix), the attacks that hold stay as
regression tests. Loopback only: fake relays on 127.0.0.N, the daemon in this process or as a subprocess.

Doors found:
- http_get's 2 s bound is a timer that shuts `connection.sock`; while the name is still being resolved or the
  socket still connecting, `sock` is None, so a timer firing then shuts nothing and is never armed again: a resolver
  that stalls past 2 s (or a relay name whose first addresses never answer a SYN) and then a relay trickling its
  answer holds one fetch for as long as it trickles, and the shuffle's key is never fixed (every press refused
  `shuffle_sealing`), far past FAIRNESS.md's "about 27 seconds";
- a stream handed to the writer is sent all memory holds after its id in one write (up to 1,000 events), past the
  256 KiB the server holds for a connection: a stranger's 128 streams never read (no PIN, 64 addresses) grew the
  daemon by 88 MiB (a guest's memory of 717 KiB of frames), where 128 x 256 KiB is 32 MiB; measured apart (memory
  of 1,281 KiB of frames, streams behind by different amounts), the writer's first pass over 512 streams took 569 ms
  here (every stream, the family's too, waits for it) and handed out 337 MiB;
- memory's 512 KiB bound counts characters, not the bytes streams are sent: with long Chinese names it holds
  1,281 KiB of frames, which multiplies the door above.
All three are closed, and their tests pass: the lookup and the connection run within the fetch's 2 s (on a thread
awaited until the deadline); the writer hands a stream at most what BEHIND_BYTES leaves; memory counts frames' bytes.
Held: the replay's ids (negative, huge, 4,301 digits, not numbers, other scripts' digits, in the header and the
query); the gap (the same before a fire as before a miss); the largest event a guest can make (round.scored of a
10-player classic game with 40-character names: 10.5 KB) far below REPLAY_BYTES; a reconnect storm of 128 streams
from 64 addresses, each replaying 64 KiB of a 20,000-event log to its gap (775 replays in a few seconds): new phones 8
of 8 within 2 s and the press 200; relays answering a huge Content-Length, a huge chunk, endless chunks, a chunk-size
line without end, a redirect, more headers than http.client takes, or the answer and then a held connection: each
given up within the bound and the good relay after it asked.
"""

from __future__ import annotations

import json
import multiprocessing
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.access.channel import HAND_OVER, MARK_STREAM
from launcher.clock import REAL_CLOCK
from launcher.daemon import OUTBUF_HIGH_WATERMARK, Daemon
from launcher.events import EventBus, EventType
from launcher.fairplay import beacon_wait
from launcher.fairplay.beacon import FETCH_TIMEOUT_S, fetch_signature, http_get, round_time
from launcher.fairplay.beacon_wait import BeaconSource
from tests.conftest import MakeDaemon, RunningDaemon, joined_client, local_config, wait_until
from tests.test_attack_connections import _host_port, new_phone
from tests.test_beacon import ANSWER, ROUND, SIGNATURE
from tests.test_red_team_45_net import _press
from tests.test_red_team_47 import daemon_with_a_long_log  # noqa: F401  (a fixture)
from webui.stream import REPLAY_BYTES

# --- 2. the beacon: the 2 s bound of one fetch --------------------------------------------------------------------

RELAY_NAME = "relay.invalid"  # resolved only by the test's resolver (`_resolver`), to loopback addresses
TRICKLE_S = 0.1  # the relay's pace: a byte this often, far within each read's own timeout
SLACK_S = 1.5  # beyond the bound, what a loaded machine may take to notice it
WATCHED_S = 6.0  # how long a fetch past its bound is watched before the relay is closed


@dataclass
class _Trickler:
    """A relay on loopback that answers 200 with a Content-Length of 4,000 and then a byte every TRICKLE_S."""

    address: str
    sent: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    server: socket.socket = field(default_factory=socket.socket)

    def start(self) -> int:
        self.server.bind((self.address, 0))
        self.server.listen(4)
        threading.Thread(target=self._serve, daemon=True).start()
        port: int = self.server.getsockname()[1]
        return port

    def _serve(self) -> None:
        with suppress(OSError):
            conn, _ = self.server.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n")
                while not self.stop.wait(TRICKLE_S):
                    conn.sendall(b" ")
                    self.sent += 1

    def close(self) -> None:
        self.stop.set()
        self.server.close()


@contextmanager
def _dead_address(address: str, port: int) -> Iterator[None]:
    """`address:port` takes no connection: its queue is full, so the kernel drops every SYN (a host that is down)."""
    server = socket.socket()
    server.bind((address, port))
    server.listen(0)
    filling = []
    for _ in range(3):
        sock = socket.socket()
        sock.setblocking(False)
        with suppress(BlockingIOError):
            sock.connect((address, port))
        filling.append(sock)
    try:
        yield
    finally:
        for sock in filling:
            sock.close()
        server.close()


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Any:
    """`resolver(addresses, stall_s)`: RELAY_NAME resolves, after `stall_s`, to those loopback addresses, in order
    (as a DNS answer with several A records does); every other name as the system resolves it."""
    real = socket.getaddrinfo

    def set_up(addresses: list[str], stall_s: float) -> None:
        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            if host != RELAY_NAME:
                return real(host, port, *args, **kwargs)
            time.sleep(stall_s)  # the resolver's own wait: a nameserver that does not answer
            return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, port)) for a in addresses]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    return set_up


@contextmanager
def _relay_behind(resolver: Any, case: str) -> Iterator[tuple[str, _Trickler]]:
    """A trickling relay reached by RELAY_NAME as `case` says: after a resolver stalling 2.3 s, or behind two
    addresses that never answer; its URL and the relay."""
    trickler = _Trickler("127.0.0.22")
    port = trickler.start()
    try:
        if case == "resolver-stalls":
            resolver(["127.0.0.22"], 2.3)
            yield f"http://{RELAY_NAME}:{port}", trickler
        else:
            with _dead_address("127.0.0.20", port), _dead_address("127.0.0.21", port):
                resolver(["127.0.0.20", "127.0.0.21", "127.0.0.22"], 0.0)
                yield f"http://{RELAY_NAME}:{port}", trickler
    finally:
        trickler.close()


@pytest.mark.slow
@pytest.mark.parametrize("case", ["resolver-stalls", "first-addresses-dead"])
def test_a_fetch_is_given_up_within_its_bound_however_slowly_the_relay_is_reached(resolver: Any, case: str) -> None:
    outcome: list[object] = []
    with _relay_behind(resolver, case) as (url, trickler):
        began = time.monotonic()

        def fetch() -> None:
            try:
                outcome.append(http_get(f"{url}/public/{ROUND}", FETCH_TIMEOUT_S))
            except Exception as e:  # whatever it raises: the time it took is the point
                outcome.append(e)

        fetching = threading.Thread(target=fetch, daemon=True)
        fetching.start()
        fetching.join(FETCH_TIMEOUT_S + SLACK_S)
        held = fetching.is_alive()
        fetching.join(max(0.0, began + WATCHED_S - time.monotonic()))  # how long it goes on, for the figure
        still, sent = fetching.is_alive(), trickler.sent
    fetching.join(10)  # the relay closed: the read ends
    took = time.monotonic() - began
    print(f"\n{case}: the fetch ended after {took:.1f} s, when the relay was closed ({outcome}); it sent {sent} B")
    assert not held, (
        f"{case}: a fetch bounded at {FETCH_TIMEOUT_S} s was still reading after {FETCH_TIMEOUT_S + SLACK_S} s"
        + (f", and after {WATCHED_S} s (the relay had trickled {sent} bytes)" if still else "")
    )


@pytest.mark.slow
def test_the_shuffle_s_round_is_settled_by_its_deadline_however_the_relay_is_reached(
    resolver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(beacon_wait, "WAIT_S", 1.0)  # the deadline 1 s after the round's time, not 10
    with _relay_behind(resolver, "resolver-stalls") as (url, trickler):
        source = BeaconSource(http_get, lambda: round_time(ROUND), (url,))
        pending = source.wait_for(ROUND, REAL_CLOCK)
        settled = threading.Event()
        pending.start(settled.set)
        bound = beacon_wait.WAIT_S + pending.last_try_s
        in_time = settled.wait(bound + SLACK_S)
        pending.cancel()
        sent = trickler.sent
    print(f"\nsettled within {bound + SLACK_S:.1f} s: {in_time} ({pending.settled}); the relay sent {sent} bytes")
    assert in_time, (
        f"the round was not settled {bound:.1f} s after its time (WAIT_S and the last pass over one relay): the "
        f"fetch was still reading the trickling relay ({sent} bytes), and the shuffle's presses still waited"
    )


# --- 2. the beacon: hostile answers ---------------------------------------------------------------------------------

GOOD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(ANSWER), ANSWER)
HOSTILE = {
    # a 200 saying a terabyte comes: at most MAX_ANSWER is asked for, and the wait for it is cut
    "huge-content-length": b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n" + ANSWER,
    # chunked, one chunk said to be 2^64 - 1 bytes long
    "huge-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\n" + ANSWER,
    # chunked, a chunk-size line that never ends (http.client reads a line up to 64 KiB)
    "endless-chunk-line": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"0" * 70_000,
    # chunked, chunks of a byte that never end
    "endless-chunks": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1\r\n \r\n" * 20_000,
    # a redirect to a good relay: not followed (a relay may not send the daemon anywhere)
    "redirect": b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.31/\r\nContent-Length: 0\r\n\r\n",
    # more headers than http.client takes
    "many-headers": b"HTTP/1.1 200 OK\r\n" + b"X-A: b\r\n" * 200 + b"\r\n" + ANSWER,
    # a 200 with the answer, then the connection held open with a Content-Length promising more
    "answer-then-held": b"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + ANSWER,
}


@contextmanager
def _holding_relay(address: str, reply: bytes) -> Iterator[str]:
    """A relay on loopback answering each connection with `reply` and then holding it open until the block ends."""
    server = socket.socket()
    server.bind((address, 0))
    server.listen(8)
    stop = threading.Event()

    def serve() -> None:
        with suppress(OSError):
            while True:
                conn, _ = server.accept()
                threading.Thread(target=answer, args=(conn,), daemon=True).start()

    def answer(conn: socket.socket) -> None:
        with conn, suppress(OSError):
            conn.recv(4096)
            conn.sendall(reply)
            stop.wait(30)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://{address}:{server.getsockname()[1]}"
    finally:
        stop.set()
        server.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_relay_s_answer_is_given_up_within_the_bound_and_the_good_relay_after_it_is_asked(name: str) -> None:
    with _holding_relay("127.0.0.30", HOSTILE[name]) as evil, _holding_relay("127.0.0.31", GOOD) as good:
        began = time.monotonic()
        signature = fetch_signature(ROUND, http_get, (evil, good))
        took = time.monotonic() - began
    print(f"\n{name}: the signature {'had' if signature else 'not had'} in {took:.2f} s")
    assert signature == SIGNATURE, f"{name}: the good relay after it was not had"
    assert took <= 2 * FETCH_TIMEOUT_S + SLACK_S, f"{name}: two relays' fetches took {took:.1f} s"


# --- 1. the replay's start: ids an attacker sends -------------------------------------------------------------------

MEMORY_EVENTS = 400  # a long game's large events: memory (512 KiB) holds about 250 of them, the rest are on the disk
SCOREBOARD = "x" * 2000


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    running = make_daemon(local_config(tmp_path).replace("web", heartbeat_s=0.2), virtual=True)
    for n in range(MEMORY_EVENTS):
        running.bus.publish(EventType.ROUND_SCORED, {"n": n, "scoreboard": SCOREBOARD})
    return running


def _gap_from_the_start(client: FlaskClient) -> dict[str, int] | None:
    """A stream from id 0: its gap's data, or None when the replay reached memory without one."""
    answer = client.get("/api/events", headers={"Last-Event-ID": "0"}, buffered=False)
    assert answer.status_code == 200
    body = iter(answer.response)
    assert next(body) == b": connected\n\n"
    try:
        for chunk in body:
            if b"event: gap" in chunk:
                found: dict[str, int] = json.loads(chunk.split(b"data: ", 1)[1])
                return found
            if not chunk.startswith(b"id: "):
                return None
        return None
    finally:
        answer.close()


RESUME_IDS = ["-1", "-99999999999999999999", "9" * 40, "1" * 4301, "abc", "1e3", " 5 ", "+3", "1_0", "٣", "0x10", "²"]


def test_any_resume_id_an_attacker_sends_starts_a_stream_with_no_error_and_a_bounded_replay(daemon: Daemon) -> None:
    """Whatever id comes (negative, huge, past Python's 4,300 digits, a word, a float, spaced, signed, underscored,
    Arabic-Indic or superscript digits, hex), in the header or the query: the stream starts (200,
    text/event-stream, `: connected`), and what the request sends next is at most REPLAY_BYTES (and an event larger
    than it) and an event, a gap or a heartbeat: never a 500, never the whole log at once."""
    wrong: list[str] = []
    for raw in RESUME_IDS:
        for kwargs in ({"headers": {"Last-Event-ID": raw}}, {"query_string": {"last_event_id": raw}}):
            answer = daemon.app.test_client().get("/api/events", buffered=False, **kwargs)  # type: ignore[arg-type]
            if (answer.status_code, answer.mimetype) != (200, "text/event-stream"):
                wrong.append(f"{raw[:20]!r} {kwargs.keys()}: {answer.status_code} {answer.get_data()[:80]!r}")
                continue
            body = iter(answer.response)
            first = next(body)
            daemon.bus.publish(EventType.HOPPER_CHANGED, {"cards": 1})  # for a stream that follows from now
            second = next(body)  # an id past the newest follows from here: a heartbeat may come first
            answer.close()
            if first != b": connected\n\n" or len(second) > REPLAY_BYTES + len(SCOREBOARD) + 200:
                wrong.append(f"{raw[:20]!r} {kwargs.keys()}: {first[:40]!r}, then {len(second)} bytes")
            elif not (second.startswith(b"id: ") or second == b": heartbeat\n\n"):
                wrong.append(f"{raw[:20]!r} {kwargs.keys()}: then {second[:60]!r}")
    assert not wrong, wrong


# --- 1. the gap: does it tell anything before a press? --------------------------------------------------------------


def test_the_gap_says_the_same_before_a_fire_as_before_a_miss(
    make_daemon: MakeDaemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before each press (a phone's, then the big button's, in turn), a stranger opens a stream from id 0 and reads
    its gap (`after`, `to` and the distance of `to` from the newest id in /api/state): the same before a press that
    fires as before one that misses, or the gap would tell the next press."""
    monkeypatch.setattr(EventBus, "RECENT", 40)  # memory short: a stream from 0 meets a gap after its 64 KiB
    daemon = make_daemon(local_config(tmp_path).replace("schedule", shuffle_presses=1000), virtual=True)
    for n in range(100):  # an evening's log before: 200 KB on the disk
        daemon.bus.publish(EventType.ROUND_SCORED, {"n": n, "scoreboard": SCOREBOARD})
    clock = daemon.clock
    guest, stranger = joined_client(daemon), daemon.app.test_client()
    assert guest.post("/api/shuffles", json={"profile": "classic"}).status_code == 201
    seen: list[tuple[int, ...]] = []
    fired: list[bool] = []

    def settle() -> None:
        clock.advance(0.5)  # type: ignore[attr-defined]
        clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=10.0)  # type: ignore[attr-defined]
        clock.advance(0.05)  # type: ignore[attr-defined]

    for n in range(60):
        newest = stranger.get("/api/state").get_json()["last_event_id"]
        gap = _gap_from_the_start(stranger)
        seen.append((-1,) if gap is None else (gap["after"], newest - gap["to"]))
        if n % 2:
            daemon.hardware.world.press_button()  # type: ignore[attr-defined]
        else:
            assert guest.post("/api/press").status_code == 200
        settle()
        fired.append(daemon.controller.snapshot()["last_outcome"]["cards"] > 0)
    assert 5 <= sum(fired) <= 55, fired
    before_fires = {s for s, f in zip(seen, fired, strict=True) if f and s != (-1,)}
    before_misses = {s for s, f in zip(seen, fired, strict=True) if not f and s != (-1,)}
    print(f"\ngaps before fires {sorted(before_fires)}, before misses {sorted(before_misses)}")
    assert before_fires == before_misses, f"before fires {before_fires}, before misses {before_misses}"


# --- 1. what the writer queues for a stream never read ---------------------------------------------------------------


class _UnreadPipe:
    """A connection handed to the writer whose phone never reads: every byte written stays queued (as in waitress's
    outbuf once the socket's own buffer is full)."""

    chunked = True  # HTTP/1.1, as a browser's stream

    def __init__(self) -> None:
        self.total_outbufs_len = 0

    def stream_open(self) -> bool:
        return True

    def write_stream(self, data: bytes) -> bool:
        self.total_outbufs_len += len(data)
        return True

    def end_stream(self) -> None:
        pass


STRANGERS = 128  # StreamGate's quarter of 512: two from each of 64 addresses, no PIN


def test_a_stream_never_read_is_queued_no_more_than_the_server_holds_for_a_connection(daemon: Daemon) -> None:
    pipes = [_UnreadPipe() for _ in range(STRANGERS)]
    oldest, newest = daemon.bus.kept_after(), daemon.bus.last_id
    for n, pipe in enumerate(pipes):
        resume_from = oldest + n * (newest - oldest) // STRANGERS  # each behind by a different amount
        answer = daemon.app.test_client().get(
            "/api/events",
            headers={"Last-Event-ID": str(resume_from)},
            buffered=False,
            environ_overrides={
                "REMOTE_ADDR": f"127.0.0.{2 + n // 2}",
                MARK_STREAM: lambda: None,
                HAND_OVER: lambda pipe=pipe: pipe,  # type: ignore[misc]
            },
        )
        assert answer.status_code == 200
        assert b"".join(answer.response) == b": connected\n\n"  # in memory: no replay, handed over at once
    wait_until(lambda: all(p.total_outbufs_len for p in pipes), what="the writer's first pass over every stream")
    queued = [p.total_outbufs_len for p in pipes]
    print(
        f"\nqueued for one stream never read: at most {max(queued) // 1024} KiB; for {STRANGERS} strangers' "
        f"streams {sum(queued) / 2**20:.1f} MiB (the server's bound: {OUTBUF_HIGH_WATERMARK // 1024} KiB each)"
    )
    assert max(queued) <= OUTBUF_HIGH_WATERMARK, (
        f"a stream never read was queued {max(queued) // 1024} KiB at once; {STRANGERS} strangers' streams "
        f"{sum(queued) / 2**20:.1f} MiB"
    )


# --- 1. the largest event a guest can cause -------------------------------------------------------------------------

LONGEST_NAMES = [("甲乙丙丁戊己庚辛壬癸" * 4)[: 40 - 1] + str(n) for n in range(10)]  # 40 characters, 3 bytes each


def test_the_largest_event_a_guest_can_cause_is_far_below_the_replay_bound(daemon: Daemon) -> None:
    """A guest's game with the most players (classic UNO: 10) of the longest names (40 CJK characters), declarations,
    presses and a round scored with every player's hand: every event it makes is far below REPLAY_BYTES, so no
    guest's event is replayed whole past the bound (the weak spot the author named needs an event of 64 KiB)."""
    guest = joined_client(daemon)
    start = daemon.bus.last_id
    house = {"multiple_identical": True}
    body = {"players": LONGEST_NAMES, "ruleset": "classic", "mode": "winner_collects", "house_rules": house}
    reply = guest.post("/api/games", json=body)
    assert reply.status_code == 201, reply.get_json()
    reply = guest.post("/api/attacks", json={"kind": "draw_two", "by": LONGEST_NAMES[0], "count": 4})
    assert reply.status_code == 200, reply.get_json()
    for player in LONGEST_NAMES[2:6]:
        reply = guest.post("/api/attacks", json={"kind": "turn", "player": player})
        assert reply.status_code == 200, reply.get_json()
    kinds = [str(n) for n in range(1, 10)] + ["skip", "reverse", "draw_two"]  # 8 of each in the deck
    hands: dict[str, Any] = {p: dict.fromkeys(kinds, 1) for p in LONGEST_NAMES[1:9]}
    hands[LONGEST_NAMES[9]] = 50
    reply = guest.post(
        "/api/games/current/rounds",
        json={"winner": LONGEST_NAMES[0], "hands": hands, "carry_open_attacks": True},
    )
    assert reply.status_code == 201, reply.get_json()
    made = daemon.bus.events_after(start)
    assert len(made) > 3, [e.type for e in made]
    largest = max(made, key=lambda e: len(e.frame))
    sizes = {e.type: len(e.frame) for e in sorted(made, key=lambda e: len(e.frame))}
    print(f"\n{len(made)} events from the guest's game, the largest of each type (bytes): {sizes}")
    assert len(largest.frame) < REPLAY_BYTES // 4, f"{largest.type}: {len(largest.frame)} bytes"


# --- 1. a reconnect storm from 64 addresses, each replaying 64 KiB of the log ----------------------------------------


def _reconnect_storm(address: tuple[str, int], sources: list[str], signals: Any) -> None:
    """The stranger's process (its own device, so its loops do not starve the probes of this process's GIL): two
    threads per source, each opening a stream from Last-Event-ID 0, reading it to its gap (64 KiB of the log read
    from the disk for it), hanging up and opening the next at once; the streams opened, at the end."""
    started, stop, answered = signals
    count = [0]

    def run(source: str) -> None:
        while not stop.is_set():
            try:
                with socket.create_connection(address, timeout=10, source_address=(source, 0)) as sock:
                    sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nLast-Event-ID: 0\r\n\r\n")
                    got = b""
                    while b"event: gap" not in got and len(got) < 256 * 1024:
                        chunk = sock.recv(65536)
                        if not chunk:
                            break
                        got += chunk
                    count[0] += b"event: gap" in got
            except OSError:
                stop.wait(0.05)  # refused (503, or cut): try again, as EventSource does, only sooner

    threads = [threading.Thread(target=run, args=(s,), daemon=True) for s in sources for _ in range(2)]
    for thread in threads:
        thread.start()
    started.set()
    stop.wait()
    for thread in threads:
        thread.join(15)
    answered.put(count[0])


@pytest.mark.slow
def test_a_reconnect_storm_from_64_addresses_replaying_the_log_leaves_new_phones_their_join_and_the_press(
    request: pytest.FixtureRequest,
) -> None:
    """A stranger (no PIN) from 64 addresses, two streams each, every one reconnecting the moment it has read its
    gap, each from Last-Event-ID 0 on a 20,000-event log: each costs a server thread a 64 KiB read of the disk. New
    phones still load the page and join within PROBE_S, 8 of 8, and the family's press is answered."""
    daemon: RunningDaemon = request.getfixturevalue("daemon_with_a_long_log")  # test_red_team_47's
    spawn = multiprocessing.get_context("spawn")
    signals = (spawn.Event(), spawn.Event(), spawn.Queue())
    sources = [f"127.0.0.{n}" for n in range(2, 66)]
    stranger = spawn.Process(target=_reconnect_storm, args=(_host_port(daemon), sources, signals))
    stranger.start()
    try:
        assert signals[0].wait(60), "the stranger's process did not start"
        time.sleep(1.5)  # the storm under way
        results = [new_phone(daemon, n) for n in range(1, 9)]
        pressed = _press(daemon)
    finally:
        signals[1].set()
        replays = signals[2].get(timeout=60)
        stranger.join(30)
    print(f"\n{replays} replays to a gap by the storm; new phones {sum(results)} of 8; the family's press: {pressed}")
    assert replays > 100, f"the storm made only {replays} replays: not a storm"
    assert all(results) and pressed == 200, f"new phones {sum(results)} of 8; the press {pressed}"


# --- 1. the same, against the daemon: its memory ---------------------------------------------------------------------


def _rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


# A phone's segments on the Wi-Fi (loopback's own are 64 KiB, and the kernel then takes a whole memory's worth into
# the daemon's socket buffer before waitress queues a byte: a loopback test would measure the kernel, not the daemon)
WIFI_MSS = 1400


def _stream_unread(daemon: RunningDaemon, source: str, last_event_id: int) -> socket.socket | None:
    """A stream from `last_event_id` on a 1 KB receive buffer, never read."""
    sock = socket.socket()
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, WIFI_MSS)
        sock.settimeout(2)
        sock.bind((source, 0))
        sock.connect(_host_port(daemon))
        sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nLast-Event-ID: %d\r\n\r\n" % last_event_id)
        return sock
    except OSError:
        sock.close()
        return None


def _memory_filled_by_a_guest(daemon: RunningDaemon) -> tuple[int, int]:
    """A guest's classic game of 10 players with the longest names, and corrections of whose turn it is, past what
    the daemon's memory holds (512 KiB of their events); the id after which memory holds every event (a stream's
    gap from id 0 says it) and the bytes of memory's events a phone reading from there is sent."""
    status, reply = daemon.post("/api/games", {"players": LONGEST_NAMES, "ruleset": "classic"})
    assert status == 201, reply
    for n in range(400):  # some 1.8 KB each
        status, reply = daemon.post("/api/attacks", {"kind": "turn", "player": LONGEST_NAMES[n % 10]})
        assert status == 200, reply
    newest = daemon.get("/api/state")["last_event_id"]
    sock = _stream_unread(daemon, "127.0.0.1", 0)
    assert sock is not None
    with sock:
        sock.settimeout(5)
        got = b""
        while b"id: %d\n" % newest not in got:
            got += sock.recv(65536)
    gap = got.find(b"event: gap\ndata: ")
    if gap < 0:  # memory holds all of it (its bound counts characters: the names' take 3 bytes each)
        return 0, len(got)
    kept_after = json.loads(got[gap:].split(b"\n", 2)[1].removeprefix(b"data: "))["to"]
    return kept_after, len(got) - got.index(b"\n\n", gap) - 2


@pytest.mark.slow
def test_strangers_streams_never_read_from_an_id_memory_holds_grow_the_daemon_by_what_the_server_bounds(
    daemon_process: RunningDaemon,
) -> None:
    """A stranger's 128 streams (2 from each of 64 addresses, no PIN) from the oldest id memory holds, never read
    (on a phone's segment size): the daemon's RSS grows by at most 128 × the 256 KiB the server holds for a
    connection, and 16 MiB."""
    kept_after, sent = _memory_filled_by_a_guest(daemon_process)
    pid = daemon_process.process.pid
    before = _rss_kib(pid)
    opened = [_stream_unread(daemon_process, f"127.0.0.{2 + n // 2}", kept_after) for n in range(STRANGERS)]
    try:
        time.sleep(3)  # the writer's passes
        after = _rss_kib(pid)
        results = [new_phone(daemon_process, n) for n in range(1, 9)]
        pressed = _press(daemon_process)
    finally:
        for sock in opened:
            if sock is not None:
                sock.close()
    grown = (after - before) / 1024
    bound = STRANGERS * OUTBUF_HIGH_WATERMARK / 2**20 + 16
    print(
        f"\na phone reading from 0 is sent {sent // 1024} KiB; {sum(s is not None for s in opened)} streams never "
        f"read: RSS {before // 1024} → {after // 1024} MiB (+{grown:.0f} MiB, bound {bound:.0f}); new phones "
        f"{sum(results)} of 8, press {pressed}"
    )
    assert all(results) and pressed == 200, f"new phones {sum(results)} of 8; the press {pressed}"
    assert grown <= bound, f"128 strangers' streams never read grew the daemon by {grown:.0f} MiB"


# --- 1. memory's bound, in bytes sent -------------------------------------------------------------------------------


def test_memory_s_bound_holds_the_bytes_a_stream_is_sent(make_daemon: MakeDaemon, tmp_path: Path) -> None:
    daemon = make_daemon(local_config(tmp_path), virtual=True)
    names = "、".join(LONGEST_NAMES)
    for n in range(1500):  # more than memory keeps
        daemon.bus.publish(EventType.ATTACK_STARTED, {"n": n, "players": names})
    held = sum(len(e.frame) for e in daemon.bus.events_after(daemon.bus.kept_after()))
    print(f"\nmemory holds {held // 1024} KiB of frames (bound {EventBus.RECENT_BYTES // 1024} KiB)")
    assert held <= EventBus.RECENT_BYTES * 1.1, f"memory holds {held // 1024} KiB of the frames streams are sent"
