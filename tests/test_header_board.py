"""The board's firmware on the Pi's header, in a process of its own (launcher/hardware/header_board.py).

The board runs the real firmware (firmware/main.py) on gpiozero's mock pins through the real `machine` made of
gpiozero devices, served on pipes by its real loop, in a thread here so that the test can drive its pins; the last
tests start the real process. Expected values come from docs/FIRMWARE.md's protocol and the [dispense] settings.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.config import DispenseConfig, PinsConfig, from_mapping
from launcher.daemon import build_hardware
from launcher.hardware import framing
from launcher.hardware.base import DispenseResult, FireJob, StopReason
from launcher.hardware.header_board import HeaderBoard, Watchdog
from launcher.hardware.header_link import HeaderHardware, HeaderProcess, PipePort, Starter, board_command
from launcher.hardware.serial_link import SerialHardware
from tests.conftest import wait_until
from tests.virtual_clock import VirtualClock

PINS = PinsConfig()
WIRING = {
    "button": PINS.button,
    "beam": PINS.exit_beam,
    "lid": PINS.lid,
    "forward": PINS.motor_forward,
    "backward": PINS.motor_backward,
    "enable": PINS.motor_enable,
}
FAST = DispenseConfig(
    jam_ms=150, min_rest_ms=0, card_gap_ms=0, ramp_ms=0, reverse_ms=40, debounce_ms=0, max_run_ms=2000
)


@dataclass
class Bench:
    """A header board served in a thread on pipes, its mock pins, and the host's ends of the pipes."""

    factory: MockFactory
    board: HeaderBoard
    commands: int  # the host writes here
    replies: int  # and reads here
    thread: threading.Thread

    def pin(self, name: str) -> MockPWMPin:
        return self.factory.pin(WIRING[name])

    @property
    def forward(self) -> bool:
        return bool(self.pin("forward").state) and bool(self.pin("enable").state)

    @property
    def backward(self) -> bool:
        return bool(self.pin("backward").state) and bool(self.pin("enable").state)

    def press(self) -> None:
        self.pin("button").drive_low()
        self.pin("button").drive_high()

    def send(self, seq: int, cmd: str, *args: object) -> None:
        os.write(self.commands, framing.encode(seq, cmd, args))

    def ok(self) -> framing.Frame:
        """The board's answer to the command just sent, which must be OK."""
        answer = next(f for f in self.frames(until=("OK", "ERR")) if f.seq != framing.EVENT)
        assert answer.cmd == "OK", f"the board refused: {answer}"
        return answer

    def frames(self, until: tuple[str, ...], timeout: float = 5.0) -> list[framing.Frame]:
        """What the board said, up to and including the first frame whose command is one of `until`."""
        parser, seen = framing.Parser(), []
        while True:
            ready = wait_until(lambda: _readable(self.replies), timeout)
            assert ready, f"the board said nothing more; so far: {seen}"
            for frame in parser.feed(os.read(self.replies, 4096)):
                seen.append(frame)
                if frame.cmd in until:
                    return seen


def _readable(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0)[0])


@pytest.fixture
def bench() -> Iterator[Bench]:
    factory = MockFactory(pin_class=MockPWMPin)
    board_in, commands = os.pipe()
    replies, board_out = os.pipe()
    board = HeaderBoard(pins=WIRING, max_run_ms=2000, pin_factory=factory, commands=board_in, replies=board_out)
    factory.pin(PINS.lid).drive_low()  # closed
    thread = threading.Thread(target=board.serve, name="header-board")
    thread.start()
    wait_until(lambda: not board.launcher.lid_open, 2)  # the firmware lets the lid settle before it believes it
    bench = Bench(factory, board, commands, replies, thread)
    try:
        yield bench
    finally:
        os.close(commands)  # the daemon's end: the board's loop ends
        thread.join(5)
        board.close()
        for fd in (board_in, replies, board_out):
            os.close(fd)
        factory.reset()


def greet(bench: Bench) -> None:
    bench.send(1, "HELLO")
    bench.ok()
    bench.send(2, "CONFIG", "jam_ms=150", "min_rest_ms=0", "ramp_ms=0", "debounce_ms=0", "card_gap_ms=0")
    bench.ok()


def card(bench: Bench) -> None:
    bench.pin("beam").drive_low()
    bench.pin("beam").drive_high()


def test_an_armed_press_starts_the_motor_with_no_word_from_the_host(bench: Bench) -> None:
    greet(bench)
    bench.send(3, "ARM", 2, 2000, 80)
    bench.ok()
    assert not bench.forward
    bench.press()  # the host sends nothing from here on, and reads nothing until the fire is over
    assert wait_until(lambda: bench.forward, 2), "the motor did not start on the press"
    card(bench)
    card(bench)
    assert wait_until(lambda: not bench.forward, 2), "the motor did not stop after the two cards"
    said = [(f.cmd, f.args) for f in bench.frames(until=("DONE",)) if f.seq == framing.EVENT]
    assert ("CARD", ("1",)) in said and ("CARD", ("2",)) in said
    assert said[-1][0] == "DONE" and said[-1][1][0] == "2" and said[-1][1][2] == "count"
    assert next(args for cmd, args in said if cmd == "BTN")[1] == "1"  # the press made fire 1


def test_a_jam_reverses_the_roller_once_then_stops(bench: Bench) -> None:
    greet(bench)
    reversed_seen = threading.Event()

    def watch() -> None:
        while not reversed_seen.is_set() and bench.thread.is_alive():
            if bench.backward and not bench.forward:
                reversed_seen.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    bench.send(3, "FIRE", 1, 2000, 80)  # no card comes
    done = next(f for f in bench.frames(until=("DONE",)) if f.cmd == "DONE")
    assert done.args[0] == "0" and done.args[2] == "jam"
    assert reversed_seen.wait(1), "the roller never ran backward for the retry"
    assert not bench.forward and not bench.backward


def test_the_daemon_gone_mid_fire_stops_the_motor_and_ends_the_board(bench: Bench) -> None:
    greet(bench)
    bench.send(3, "FIRE", 5, 2000, 80)
    assert wait_until(lambda: bench.forward, 2)
    os.close(bench.commands)
    bench.commands = os.open(os.devnull, os.O_WRONLY)  # for the fixture to close
    bench.thread.join(5)
    assert not bench.thread.is_alive(), "the board's loop did not end when its commands ended"
    bench.board.close()
    assert not bench.forward


def test_a_host_that_stops_reading_never_holds_the_motor_on(bench: Bench) -> None:
    greet(bench)
    fcntl.fcntl(bench.replies, fcntl.F_SETPIPE_SZ, 4096)
    filler = os.open(f"/proc/self/fd/{bench.replies}", os.O_WRONLY | os.O_NONBLOCK)
    try:
        with pytest.raises(BlockingIOError):
            while True:
                os.write(filler, b"x" * 512)  # the pipe full: nothing the board says can go out now
        bench.send(3, "FIRE", 3, 300, 80)
        assert wait_until(lambda: bench.forward, 2)
        assert wait_until(lambda: not bench.forward, 2), "the fire outlived its max_ms while its replies were stuck"
        assert bench.board.dropped > 0
    finally:
        os.close(filler)


def test_a_loop_that_stalls_is_stopped_by_the_watchdog() -> None:
    clock = VirtualClock()
    stalls: list[float] = []
    watchdog = Watchdog(lambda: stalls.append(clock.now()), timeout=1.0, clock=clock)
    watchdog.start()
    try:
        for _ in range(30):
            clock.sleep(0.05)
            watchdog.feed()  # the loop passing: never stalled
        assert stalls == []
        fed = clock.now()
        clock.sleep(2.0)
        assert len(stalls) == 1 and fed + 1.0 <= stalls[0] <= fed + 1.1
    finally:
        watchdog.stop()


def link(bench: Bench) -> SerialHardware:
    port = PipePort(commands=os.dup(bench.commands), replies=os.dup(bench.replies))
    hardware = SerialHardware(port="the header process", dispense=FAST, opener=lambda: port)
    assert wait_until(lambda: hardware.describe()["link"] == "up", 5)
    return hardware


def test_the_daemon_arms_the_board_and_hears_of_the_fire_after(bench: Bench) -> None:
    hardware = link(bench)
    try:
        fired: list[FireJob] = []
        hardware.dispenser.when_reflex = fired.append
        assert hardware.dispenser.arm(2)
        assert "armed" not in hardware.describe()  # the next press is the board's secret
        assert wait_until(lambda: bench.board.launcher._arm is not None, 2)  # the ARM has reached the board
        assert bench.board.launcher._arm[0] == 2
        bench.press()
        assert wait_until(lambda: bench.forward, 2)
        card(bench)
        card(bench)
        assert wait_until(lambda: bool(fired), 2), "the daemon never heard of the board's fire"
        assert fired[0].wait() == DispenseResult(2, 2, fired[0].wait().ms, StopReason.COUNT)
    finally:
        hardware.close()


def test_the_daemon_hears_the_button_go_down_and_come_up(bench: Bench) -> None:
    """What holding the button to switch off rests on: the press and the release both reach the daemon."""
    hardware = link(bench)
    try:
        edges: list[bool] = []
        hardware.inputs.when_button_changed = edges.append
        bench.pin("button").drive_low()
        assert wait_until(lambda: edges == [True], 2), edges
        bench.pin("button").drive_high()
        assert wait_until(lambda: edges == [True, False], 2), edges
    finally:
        hardware.close()


def test_the_real_process_links_up_and_is_started_again_when_it_dies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    monkeypatch.setenv("GPIOZERO_MOCK_PIN_CLASS", "mockpwmpin")
    processes: list[HeaderProcess] = []

    def start() -> HeaderProcess:
        processes.append(HeaderProcess(board_command(PINS, max_run_ms=2000, priority=0)))
        return processes[-1]

    hardware = HeaderHardware(pins=PINS, dispense=FAST, pin_factory=MockFactory(pin_class=MockPWMPin), opener=start)
    try:
        assert wait_until(lambda: hardware.describe()["link"] == "up", 30)
        described = hardware.describe()
        assert (described["backend"], described["runs_on"], described["firmware"]) == ("gpio", "the header process", 5)
        first = described["boot_id"]
        processes[0]._process.kill()

        def again() -> bool:
            described = hardware.describe()
            return described["link"] == "up" and described["boot_id"] not in (None, first)

        assert wait_until(again, 30), "the board was not started again"
        assert len(processes) == 2
    finally:
        hardware.close()
    assert all(p._process.poll() is not None for p in processes), "a board process outlived the hardware"


def test_a_process_that_cannot_start_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-library")
    with pytest.raises(OSError, match=r"could not start \(exit status 1"):
        HeaderProcess(board_command(PINS, max_run_ms=2000, priority=0))


def test_a_board_that_keeps_failing_is_started_less_and_less_often() -> None:
    clock = VirtualClock()
    starts: list[float] = []

    def failing() -> PipePort:
        starts.append(clock.now())
        raise OSError("the header process could not start (exit status 1)")

    starter = Starter(failing, clock=clock)
    for _ in range(400):  # the link's keeper asks every half second
        with pytest.raises(OSError, match="could not start"):
            starter()
        clock.sleep(0.5)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert gaps[:6] == [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    assert max(gaps) == 60.0


@pytest.mark.parametrize("hold_s", [0, 5])
def test_real_pins_always_get_the_header_process(monkeypatch: pytest.MonkeyPatch, hold_s: int) -> None:
    """On real pins the firmware runs the motor in the header process, holding the button to switch off included
    (its firmware tells the release); there is no other way to drive the header (docs/CONFIG.md)."""
    import gpiozero.pins.mock

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")  # for the header process
    monkeypatch.setenv("GPIOZERO_MOCK_PIN_CLASS", "mockpwmpin")
    factory = MockFactory(pin_class=MockPWMPin)
    monkeypatch.setattr("launcher.hardware.factories.pin_factory", lambda: factory)
    monkeypatch.setattr(gpiozero.pins.mock, "MockFactory", type("RealPins", (), {}))  # these pins count as real
    config = from_mapping({"hardware": {"backend": "gpio"}, "power": {"hold_to_poweroff_s": hold_s}})
    hardware = build_hardware(config)
    try:
        assert isinstance(hardware, HeaderHardware)
    finally:
        hardware.close()
        factory.reset()
