"""SerialHardware against the firmware: lost and doubled frames, a silent host, a pulled cable, a reset, a wrap.

On a pty, on real time: the simulator's board (firmware/main.py on mock pins, and its world) runs on one end of a
pty pair; the host opens
the other end by a symlink, as it opens /dev/serial/by-id/... on a Pi (pyserial, exclusive opening, replugging).
On a MemoryWire, on a VirtualClock: the same board and host, with timing asserted to the millisecond and no
real waiting. `Tamper` drops or duplicates whole lines on the wire.
"""

from __future__ import annotations

import collections
import itertools
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import serial

from launcher.config import DispenseConfig
from launcher.hardware import framing, serial_fires
from launcher.hardware.base import StopReason
from launcher.hardware.serial_link import LinkDown, SerialHardware
from launcher.hardware.sim import MemoryWire
from tests.conftest import wait_until
from tests.sim_board import SimBoard, Tamper, on_clock
from tests.virtual_clock import VirtualClock


class Watch:
    """Records when_link_changed calls."""

    def __init__(self) -> None:
        self.changes: list[tuple[bool, str]] = []
        self.threads: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, ok: bool, message: str) -> None:
        with self._lock:
            self.changes.append((ok, message))
            self.threads.add(threading.current_thread().name)

    def wait(self, ok: bool, after: int = 0, timeout: float = 10) -> str:
        """The message of the first change to `ok` at or after index `after`."""

        def seen() -> str | None:
            with self._lock:
                return next((m for o, m in self.changes[after:] if o is ok), None)

        return wait_until(seen, timeout, f"link {'up' if ok else 'down'} after {self.changes[:after]}")


@pytest.fixture
def link(tmp_path: Path) -> Path:
    return tmp_path / "usb-Raspberry_Pi_Pico_E6614C311B7A3B2A-if00"


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def make_host(link: Path, watch: Watch) -> Iterator[Any]:
    made: list[SerialHardware] = []

    def make(*, when_link_changed: Any = watch, **dispense: Any) -> SerialHardware:
        settings = DispenseConfig(**{"jam_ms": 500, "min_rest_ms": 0, **dispense})
        host = SerialHardware(port=str(link), dispense=settings, when_link_changed=when_link_changed)
        made.append(host)
        return host

    yield make
    for host in made:
        host.close()


def up(host: SerialHardware, watch: Watch | None = None) -> None:
    """Wait for the link; with `watch`, also for its callback, which comes a moment later from the dispatcher."""
    wait_until(lambda: host.describe()["link"] == "up", 10, "link up")
    if watch is not None:
        watch.wait(True)


def fire_replies(pico: SimBoard) -> dict[int, set[int]]:
    """fire number -> the sequence numbers of the FIRE replies that carry it."""
    seqs: dict[int, set[int]] = collections.defaultdict(set)
    for line in list(pico.sent):
        match = re.match(rb"(\d+) OK fire=(\d+) ", line)
        if match:
            seqs[int(match[2])].add(int(match[1]))
    return seqs


def test_dropped_and_duplicated_frames_never_fire_twice(link: Path, make_host: Any) -> None:
    to_board, to_host = Tamper(), Tamper()
    with SimBoard(link, to_board=to_board, to_host=to_host) as pico:
        host = make_host()
        up(host)
        to_board.drop(b" FIRE ")  # the first FIRE never arrives,
        to_board.duplicate(b" FIRE ")  # its retransmission arrives twice,
        to_host.drop(b" OK fire=")  # the answer to the first copy is lost,
        to_host.duplicate(b"E DONE ")  # and the end of the fire is heard twice
        result = host.dispenser.start(3).wait(10)
        assert (result.dispensed, result.stop) == (3, StopReason.COUNT)
        assert pico.launcher.fires == 1 and pico.motor.starts == 1 and pico.world.cards_out == 3
        assert [action for action, line in to_board.log if b" FIRE " in line] == ["drop", "duplicate"]
        assert pico.launcher.replays >= 1 and host.describe()["retransmits"] >= 1
        again = host.dispenser.start(1).wait(10)  # the link is still in step
        assert (again.dispensed, again.stop) == (1, StopReason.COUNT) and pico.launcher.fires == 2


def test_a_lost_done_is_recovered_from_status(link: Path, make_host: Any) -> None:
    to_host = Tamper()
    with SimBoard(link, to_host=to_host) as pico:
        host = make_host()
        up(host)
        to_host.drop(b"E DONE ")
        result = host.dispenser.start(2).wait(10)
        assert (result.dispensed, result.stop) == (2, StopReason.COUNT) and pico.launcher.fires == 1
        assert any(b" STATUS " in line for line in pico.received)


def test_unplug_and_replug_without_recreating_the_host(link: Path, make_host: Any, watch: Watch) -> None:
    pico = SimBoard(link, jammed=True)
    try:
        host = make_host()
        up(host, watch)
        job = host.dispenser.start(2)
        wait_until(lambda: pico.motor.duty > 0, 5, "motor on")
        changes = len(watch.changes)
        pico.unplug()
        down = watch.wait(False, after=changes)
        assert str(link) in down
        assert job.wait(5).stop is StopReason.ERROR
        with pytest.raises(LinkDown):
            host.dispenser.start(1)
        host.dispenser.stop()  # harmless while the board is away
        assert host.describe()["link"] == "down"
    finally:
        pico.close()
    changes = len(watch.changes)
    with SimBoard(link, boot_id="B0A7D002") as replugged:
        assert "B0A7D002" in watch.wait(True, after=changes)
        described = host.describe()
        assert described["boot_id"] == "B0A7D002" and described["restarts"] == 1
        result = host.dispenser.start(2).wait(10)
        assert (result.dispensed, result.stop) == (2, StopReason.COUNT) and replugged.launcher.fires == 1


def test_a_board_reset_mid_fire_never_fires_again(link: Path, make_host: Any, watch: Watch) -> None:
    to_host = Tamper()
    with SimBoard(link, to_host=to_host, jammed=True) as pico:
        host = make_host()
        up(host, watch)
        changes = len(watch.changes)
        to_host.drop(b" OK fire=")  # the host never hears that the FIRE started, so it will retransmit...
        job = host.dispenser.start(3)
        wait_until(lambda: pico.launcher.fires == 1, 5, "the FIRE to run")
        pico.reset("B0A7D00F")  # ...to a board that browned out meanwhile
        assert job.wait(10).stop is StopReason.ERROR
        assert "restarted" in watch.wait(False, after=changes)
        watch.wait(True, after=changes)
        assert host.describe()["boot_id"] == "B0A7D00F" and pico.launcher.fires == 0
        assert pico.motor.starts == 0
        pico.world.jam(False)
        result = host.dispenser.start(1).wait(10)
        assert (result.dispensed, result.stop) == (1, StopReason.COUNT) and pico.launcher.fires == 1


def test_the_port_is_opened_exclusively(link: Path, make_host: Any) -> None:
    with SimBoard(link):
        host = make_host()
        up(host)
        with pytest.raises(serial.SerialException):
            serial.Serial(str(link), exclusive=True)
        other = Watch()
        second = make_host(when_link_changed=other)
        assert "cannot open" in other.wait(False)
        assert host.describe()["link"] == "up"
        second.close()


def test_started_before_the_board_is_plugged_in(link: Path, make_host: Any, watch: Watch) -> None:
    host = make_host()
    assert "cannot open" in watch.wait(False)
    with pytest.raises(LinkDown, match="cannot open"):
        host.dispenser.start(1)
    with SimBoard(link):
        watch.wait(True)
        assert watch.changes[0][0] is False and watch.threads == {"serial-dispatch"}


def test_a_board_that_does_not_answer_is_reported(link: Path, make_host: Any, watch: Watch) -> None:
    to_host = Tamper()
    to_host.block = True
    with SimBoard(link, to_host=to_host):
        make_host()
        assert "no answer" in watch.wait(False)


def test_stop_and_close_end_a_fire_and_close_is_idempotent(link: Path, make_host: Any) -> None:
    with SimBoard(link, jammed=True) as pico:
        host = make_host()
        up(host)
        job = host.dispenser.start(3)
        wait_until(lambda: pico.motor.duty > 0, 5, "motor on")
        host.dispenser.stop()
        assert job.wait(5).stop is StopReason.ABORTED
        assert pico.motor.duty == 0 and b" stop " in pico.events(b"DONE")[-1]
        with pytest.raises(ValueError):
            host.dispenser.start(0)
        job = host.dispenser.start(3)
        with pytest.raises(RuntimeError, match="already"):
            host.dispenser.start(1)
        wait_until(lambda: pico.motor.duty > 0, 5, "motor on")
        with host:
            pass  # leaving the block closes it
        assert job.wait(5).stop is StopReason.ABORTED
        wait_until(lambda: pico.motor.duty == 0, 5, "motor off")
        host.close()
        assert not [t.name for t in threading.enumerate() if t.name.startswith("serial-")]
        with pytest.raises(LinkDown):
            host.dispenser.start(1)
        host.dispenser.stop()


def test_a_refused_fire_ends_its_job_with_an_error(link: Path, make_host: Any) -> None:
    with SimBoard(link) as pico:
        host = make_host()
        up(host)
        opened: list[bool] = []
        host.inputs.when_lid_changed = opened.append
        pico.world.open_lid()
        wait_until(lambda: opened == [True], 5, "lid open")
        assert host.inputs.lid_open is True
        result = host.dispenser.start(2).wait(5)
        assert (result.dispensed, result.stop) == (0, StopReason.ERROR) and pico.motor.starts == 0


def test_a_failing_callback_does_not_stop_the_link(link: Path, make_host: Any) -> None:
    with SimBoard(link) as pico:
        host = make_host()
        up(host)
        presses: list[int] = []

        def pressed() -> None:
            presses.append(1)
            raise RuntimeError("a bug in the controller")

        host.inputs.when_pressed = pressed
        pico.click()
        wait_until(lambda: presses, 5, "first press")
        wait_until(lambda: pico.launcher._btn_armed, 5, "button released")
        pico.click()
        wait_until(lambda: len(presses) == 2, 5, "second press")
        assert host.describe()["link"] == "up"


# --- on a virtual clock --------------------------------------------------------------------------------------------


class Bench:
    """The host and the board on one MemoryWire and one VirtualClock. `heard` and `said` are (time, line) of what
    the board got and what it sent that got through."""

    def __init__(
        self, clock: VirtualClock, *, to_board: Tamper, to_host: Tamper, board_options: dict[str, Any], **dispense: Any
    ) -> None:
        self.clock = clock
        self.heard: list[tuple[float, bytes]] = []
        self.said: list[tuple[float, bytes]] = []
        self.to_board = to_board
        self.to_host = to_host
        self.watch = Watch()
        self.wire = MemoryWire(clock)
        self.pico = SimBoard(
            self.wire,
            clock=clock,
            to_board=lambda line: self._log(self.heard, self.to_board(line)),
            to_host=lambda line: self._log(self.said, self.to_host(line)),
            **board_options,
        )
        self.host = SerialHardware(
            port="memory",
            dispense=DispenseConfig(**{"jam_ms": 500, "min_rest_ms": 0, **dispense}),
            when_link_changed=self.watch,
            clock=clock,
            opener=self.wire.open,
        )
        self.until(lambda: self.host.describe()["link"] == "up")

    def _log(self, log: list[tuple[float, bytes]], passed: list[bytes]) -> list[bytes]:
        log += [(self.clock.now(), piece) for piece in passed]
        return passed

    def until(self, done: Any, within: float = 10.0) -> None:
        self.clock.run_until(done, within=within)

    def link_went(self, ok: bool, after: int) -> str | None:
        """The message of the first link change to `ok` at or after index `after`, once it has come."""
        return next((message for went, message in self.watch.changes[after:] if went is ok), None)

    def times(self, cmd: bytes) -> list[float]:
        return [t for t, line in self.heard if line.split(b" ")[1:2] == [cmd]]

    def seqs(self, cmd: bytes) -> list[int]:
        return [int(line.split(b" ")[0]) for _, line in self.heard if line.split(b" ")[1:2] == [cmd]]

    def close(self) -> None:
        on_clock(self.clock, self.host.close)
        on_clock(self.clock, self.pico.close)


@pytest.fixture
def bench() -> Iterator[Any]:
    clock = VirtualClock()
    made: list[Bench] = []

    def make(
        board_options: dict[str, Any] | None = None,
        *,
        to_board: Tamper | None = None,
        to_host: Tamper | None = None,
        **dispense: Any,
    ) -> Bench:
        tampers = {"to_board": to_board or Tamper(), "to_host": to_host or Tamper()}
        made.append(Bench(clock, board_options=board_options or {}, **tampers, **dispense))
        return made[-1]

    yield make
    for each in made:
        each.close()
    clock.close()
    assert clock.stalls == 0  # every wait was on the clock: nothing hung until the stall guard woke it


def test_each_card_is_told_as_the_board_reports_it(bench: Any) -> None:
    b = bench()
    cards: list[int] = []
    b.host.dispenser.when_card = lambda: cards.append(b.pico.world.cards_out)
    job = b.host.dispenser.start(3)
    b.until(lambda: job.done)
    assert job.wait(0).dispensed == 3 and b.host.describe()["board_state"] == "IDLE"
    b.until(lambda: len(cards) == 3)
    assert cards == [1, 2, 3]  # one call per card, each before the next card left


def test_heartbeats_go_every_half_second_exactly(bench: Any) -> None:
    b = bench()
    b.clock.advance(3.0)
    pings = b.times(b"PING")
    assert len(pings) == 6
    assert [round(later - earlier, 9) for earlier, later in itertools.pairwise(pings)] == [0.5] * 5
    assert b.pico.launcher.state == "IDLE"


def test_a_silent_board_is_retried_at_250_ms_and_given_up_after_three_tries(bench: Any) -> None:
    b = bench()
    b.to_host.block = True  # from here on the host hears nothing
    b.until(lambda: b.link_went(False, 0))
    sent = [(t, line) for t, line in b.heard if b" PING " in line]
    assert [line for _, line in sent] == [sent[0][1]] * 3  # the very same line, three times
    first = sent[0][0]
    assert [round(t - first, 9) for t, _ in sent] == [0.0, 0.25, 0.5]
    assert b.watch.changes[-1] == (False, "no reply from the board after 3 tries")
    assert round(b.clock.now() - first, 3) <= 0.751  # down at the end of the third try
    b.until(lambda: b.times(b"HELLO")[-1] > first)
    assert round(b.times(b"HELLO")[-1] - first, 9) == 1.25  # greeted again REOPEN_S later
    b.to_host.block = False
    b.until(lambda: b.host.describe()["link"] == "up")
    assert b.host.describe()["retransmits"] >= 2


def test_a_fire_the_board_never_ends_is_given_up_at_max_run_plus_slack(bench: Any) -> None:
    b = bench({"jammed": True}, max_run_ms=400, jam_ms=10000)
    job = b.host.dispenser.start(2)
    b.until(lambda: b.pico.motor.duty > 0)
    b.pico.launcher._fire_max_ms = 10**6  # a board bug: it ignores max_ms and keeps saying FIRING
    started = job.started
    b.until(lambda: job.done)
    assert job.wait(0).stop is StopReason.ERROR
    assert b.times(b"STOP") == [pytest.approx(started + 0.4 + serial_fires.JOB_SLACK_S, abs=1e-9)]
    b.until(lambda: b.pico.motor.duty == 0)
    assert b" stop " in b.pico.events(b"DONE")[0]


@pytest.mark.parametrize("distance", [65533, 65534, 65535, 65536, 65537])
def test_a_fire_after_the_sequence_number_wraps_is_fired_not_answered_from_memory(bench: Any, distance: int) -> None:
    b = bench()
    first = b.host.dispenser.start(3)
    b.until(lambda: first.done)
    assert first.wait(0).stop is StopReason.COUNT
    [seq] = b.seqs(b"FIRE")
    b.clock.advance(0.5)  # a heartbeat: the board has heard another line since the FIRE
    assert b.seqs(b"PING")[-1] > seq
    # Time stands still while this thread runs: nothing is sent between these two lines.
    b.host._session.seq = (seq - 2 + distance) % framing.MAX_SEQ + 1  # as if distance - 1 commands had been sent
    second = b.host.dispenser.start(3)
    b.until(lambda: second.done)
    assert b.seqs(b"FIRE")[1] == (seq - 1 + distance) % framing.MAX_SEQ + 1
    assert (second.wait(0).dispensed, second.wait(0).stop) == (3, StopReason.COUNT)
    assert b.pico.launcher.fires == 2 and b.pico.world.cards_out == 6 and b.pico.launcher.replays == 0


def test_an_acknowledgement_naming_an_old_fire_is_never_taken(bench: Any) -> None:
    # A board that answers from a stale memory (a firmware without the rule above): no cards are reported.
    b = bench()
    first = b.host.dispenser.start(3)
    b.until(lambda: first.done)
    [seq] = b.seqs(b"FIRE")
    b.clock.advance(0.5)
    next_seq = b.host._session.seq % framing.MAX_SEQ + 1
    stale = next(line for line in b.pico.sent if line.startswith(f"{seq} OK fire=1 ".encode()))
    b.pico.launcher._remembered = ((next_seq, "FIRE", ("3", "4000", "80")), ["OK", "fire=1"])
    changes = len(b.watch.changes)
    second = b.host.dispenser.start(3)
    b.until(lambda: second.done)
    assert (second.wait(0).dispensed, second.wait(0).stop) == (0, StopReason.ERROR)
    assert b.pico.launcher.fires == 1 and stale
    b.until(lambda: b.link_went(False, changes))
    assert "not a new fire" in str(b.link_went(False, changes))
    b.until(lambda: b.host.describe()["link"] == "up")  # HELLO puts the two ends back in step
    third = b.host.dispenser.start(1)
    b.until(lambda: third.done)
    assert third.wait(0).stop is StopReason.COUNT and b.pico.launcher.fires == 2


@pytest.mark.parametrize("seed", [3, 7])
def test_random_loss_and_duplication_never_fire_a_frame_twice(bench: Any, seed: int) -> None:
    to_board = Tamper(seed=seed, drop=0.15, duplicate=0.15)
    to_host = Tamper(seed=seed + 100, drop=0.15, duplicate=0.15)
    b = bench(to_board=to_board, to_host=to_host)
    starts = 0
    for _ in range(8):
        b.until(lambda: b.host.describe()["link"] == "up", within=30)
        try:
            job = b.host.dispenser.start(2)
        except LinkDown:  # the link faulted between the check and the start: fine, try again
            continue
        starts += 1
        job.wait(15)
    replies = fire_replies(b.pico)
    assert 0 < b.pico.launcher.fires <= starts
    assert all(len(seqs) == 1 for seqs in replies.values())  # one FIRE frame per fire...
    seq_fires = collections.Counter(seq for seqs in replies.values() for seq in seqs)
    assert all(n == 1 for n in seq_fires.values())  # ...and one fire per FIRE frame
    assert b.pico.world.cards_out <= 2 * b.pico.launcher.fires
    assert any(action == "drop" for action, _ in to_board.log + to_host.log)


def test_a_silent_host_stops_the_motor_at_1500_ms_and_the_link_recovers(bench: Any) -> None:
    b = bench({"jammed": True}, jam_ms=10000, max_run_ms=20000)
    job = b.host.dispenser.start(3)
    b.until(lambda: b.pico.motor.duty > 0)
    b.to_board.block = True  # from here on the board hears nothing from the host
    assert job.wait(10).stop is StopReason.ERROR
    b.until(lambda: b.link_went(False, 0))
    b.until(lambda: b.pico.events(b"DONE"))
    last_heard = b.heard[-1][0]
    [(done_at, done)] = [(t, line) for t, line in b.said if line.startswith(b"E DONE ")]
    assert b" safe " in done and round(done_at - last_heard, 9) == 1.5
    assert b.pico.launcher.state == "SAFE" and b.pico.motor.duty == 0  # stopped by the board alone
    changes = len(b.watch.changes)
    b.pico.world.jam(False)
    b.to_board.block = False
    b.until(lambda: b.link_went(True, changes))
    again = b.host.dispenser.start(1)
    b.until(lambda: again.done)
    assert (again.wait(0).dispensed, again.wait(0).stop) == (1, StopReason.COUNT)


class LidMovesAsTheBoardIsGreeted(Tamper):
    """On the way to the host: the lid moves the moment the board answers HELLO, and every reply after that one (the
    CONFIG reply and its retransmissions) is lost until the board has told the lid's news, so the news comes while
    the host is still greeting the board."""

    def __init__(self, world: Any, *, opens: bool) -> None:
        super().__init__()
        self._world = world
        self._opens = opens
        self._greeted = False
        self.told = False

    def __call__(self, line: bytes) -> list[bytes]:
        if not self._greeted and b" boot=" in line:
            self._greeted = True
            self._world.open_lid() if self._opens else self._world.close_lid()
        elif line.startswith(b"E LID "):
            self.told = True
        elif self._greeted and not self.told and not line.startswith(b"E "):
            return []
        return [line]


@pytest.mark.parametrize("opens", [True, False], ids=["opened", "closed"])
def test_the_lid_moved_while_the_host_greets_the_board_is_told(opens: bool) -> None:
    clock = VirtualClock()
    wire = MemoryWire(clock)
    pico = SimBoard(wire, clock=clock)
    if not opens:  # the board boots with the lid closed: open it first, so that it can close during the greeting
        pico.world.open_lid()
        clock.run_until(lambda: pico.launcher.lid_open, within=1)
    pico.to_host = greeting = LidMovesAsTheBoardIsGreeted(pico.world, opens=opens)
    host = SerialHardware(port="memory", dispense=DispenseConfig(), clock=clock, opener=wire.open)
    try:
        clock.run_until(lambda: host.describe()["link"] == "up", within=10)
        clock.advance(1.0)
        assert greeting.told and pico.launcher.lid_open is opens
        assert host.inputs.lid_open is opens  # the host believes what the board last said, not the greeting's news
    finally:
        on_clock(clock, host.close)
        on_clock(clock, pico.close)
        clock.close()
