"""firmware/main.py under CPython on the header's `machine` over mock pins, with the simulated world on them: on a
virtual clock moved a millisecond at a time, and, as the simulator's board, on a pty against the real host. Its
`run()`, the Pico's own loop, runs under the real MicroPython (tests/test_firmware_micropython.py)."""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from launcher.config import Config, DispenseConfig, SimConfig
from launcher.hardware.base import StopReason
from launcher.hardware.framing import EVENT, Frame, Parser, encode
from launcher.hardware.header_board import HeaderMachine, Ticks, pin_map
from launcher.hardware.header_link import wiring
from launcher.hardware.serial_link import SerialHardware
from launcher.hardware.sim import SimulatedWorld
from tests.conftest import wait_until
from tests.sim_board import Motor, NotedPin, SimBoard, board, firmware, on_clock
from tests.virtual_clock import VirtualClock

BOOT_ID = "C0FFEE01"
WRAP = 1 << 30


class Hand:
    """A hand on an input line: `drive(0)` pulls it low, `drive(None)` lets it go to its pull-up, `drive(1)` high."""

    def __init__(self, pin: Any) -> None:
        self._pin = pin

    def drive(self, level: int | None) -> None:
        self._pin.drive_low() if level == 0 else self._pin.drive_high()

    def value(self) -> int:
        return int(bool(self._pin.state))


class Feeds:
    """The firmware's watchdog, counting its feeds."""

    def __init__(self) -> None:
        self.feeds = 0

    def feed(self) -> None:
        self.feeds += 1


class Lamp:
    """The board's LED (`Pin(n, Pin.OUT)`, a Pico's on-board one): each change as (ms, lit)."""

    def __init__(self, now_ms: Callable[[], int]) -> None:
        self._now_ms = now_ms
        self.changes: list[tuple[int, bool]] = []

    def value(self, on: object) -> None:
        if not self.changes or self.changes[-1][1] != bool(on):
            self.changes.append((self._now_ms(), bool(on)))


class PinsWithLamp:
    """The header's `machine.Pin` with `lamp` on pin `led` (the header has no LED of its own: its light is the
    daemon's)."""

    def __init__(self, pins: Any, led: int, lamp: Lamp) -> None:
        self._pins, self._led, self._lamp = pins, led, lamp

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pins, name)

    def __call__(self, id: int, mode: int = 0, pull: int | None = None) -> Any:
        return self._lamp if id == self._led else self._pins(id, mode, pull)


class Rig:
    """The firmware on the header's `machine` over mock pins, with the simulated world on those pins, on a virtual
    clock that moves when told: a hand on its pins, its output parsed. `start_ms`: the board's time once its lid
    has settled closed; `hopper_sensor`: the pin of a sensor under the deck (a Pico may have one); `led`: the pin
    of an LED, whose changes `lamp` keeps."""

    def __init__(
        self,
        *,
        start_ms: int = 0,
        hopper: int = 100,
        cards_per_second: float = 31.25,  # one card every 40 ms at the FIREs' 80 % duty
        hopper_sensor: int | None = None,
        led: int | None = None,
    ) -> None:
        self.clock = VirtualClock(start=start_ms / 1000)
        config = Config(
            sim=SimConfig(cards_per_second=cards_per_second, card_block_ms=5),
            dispense=DispenseConfig(hopper_cards=hopper),
        )
        wired = wiring(config.pins)
        self.pins = types.SimpleNamespace(
            **{**vars(pin_map(wired, board.MAX_RUN_MS)), "HOPPER": hopper_sensor, "LED": led}
        )
        self.factory = MockFactory(pin_class=NotedPin)
        self.factory.note = self._pin_changed
        self.world = SimulatedWorld(config, self.factory, clock=self.clock)
        self.world.close_lid()  # before the firmware starts: it boots with the lid closed
        self._hopper = None if hopper_sensor is None else self.factory.pin(hopper_sensor)
        self.machine = HeaderMachine(
            motor=(wired["forward"], wired["backward"], wired["enable"]), pin_factory=self.factory
        )
        self.forward, self.reverse = Motor(), Motor()
        self.ticks = Ticks(self.clock)
        self.frames: list[Frame] = []
        self._parser = Parser()
        self.wdt = Feeds()
        self.lamp = Lamp(self.now_ms)
        machine: Any = self.machine
        if led is not None:
            machine = types.SimpleNamespace(Pin=PinsWithLamp(machine.Pin, led, self.lamp), PWM=machine.PWM)
        self.launcher = firmware.Launcher(machine, self.ticks, self._write, BOOT_ID, wdt=self.wdt, pins=self.pins)
        self.seq = 0
        RIGS.append(self)

    def _write(self, data: bytes) -> None:
        self.frames += self._parser.feed(data)

    def send_line(self, line: bytes) -> list[Frame]:
        """Feed raw bytes; return what the firmware wrote meanwhile."""
        before = len(self.frames)
        self.launcher.receive(line)
        return self.frames[before:]

    def send(self, cmd: str, *args: object) -> Frame:
        self.seq += 1
        written = self.send_line(encode(self.seq, cmd, args))
        replies = [f for f in written if f.seq == self.seq]
        assert len(replies) == 1, written
        return replies[0]

    def run(self, ms: int) -> None:
        """`ms` passes of the firmware's loop, one a millisecond, the world moving on between them."""
        for _ in range(ms):
            self.clock.advance(0.001)
            if self._hopper is not None:  # the sensor under the deck: low while cards remain
                self._hopper.drive_low() if self.world.hopper else self._hopper.drive_high()
            self.launcher.poll()

    def now_ms(self) -> int:
        """The board's time in ms, not wrapped."""
        return round(self.clock.now() * 1000)

    def line(self, pin: int) -> Hand:
        return Hand(self.factory.pin(pin))

    def _pin_changed(self, pin: NotedPin, value: float) -> None:
        if pin.info.name == f"GPIO{self.pins.MOTOR_IN1}":
            self.forward.changed(self.now_ms(), value)
        elif pin.info.name == f"GPIO{self.pins.MOTOR_IN2}":
            self.reverse.changed(self.now_ms(), value)

    def close(self) -> None:
        self.machine.close()
        on_clock(self.clock, self.world.close)
        self.factory.close()
        self.clock.close()

    def events(self, name: str) -> list[tuple[str, ...]]:
        return [f.args for f in self.frames if f.seq == EVENT and f.cmd == name]

    def press(self) -> int:
        """The big button down, cleanly: the interrupt counts the press at once, the loop sees it at its next pass.
        Returns the board's tick count at the press, as E BTN reports it."""
        pressed_at = self.ticks.ticks_ms()
        self.world.button_down()
        return pressed_at

    def release(self) -> None:
        self.world.button_up()

    def index(self, name: str) -> int:
        """Where the first event `name` is in the board's output."""
        return next(i for i, f in enumerate(self.frames) if f.seq == EVENT and f.cmd == name)

    def armed(self, **config: int) -> Rig:
        assert self.send("HELLO").cmd == "OK"
        if config:
            assert self.send("CONFIG", *(f"{k}={v}" for k, v in config.items())).cmd == "OK"
        return self


RIGS: list[Rig] = []


@pytest.fixture(autouse=True)
def _close_rigs() -> Iterator[None]:
    yield
    while RIGS:
        RIGS.pop().close()


def fields(frame: Frame) -> dict[str, str]:
    return dict(a.split("=", 1) for a in frame.args)


def test_boots_safe_and_refuses_to_fire_until_hello() -> None:
    rig = Rig()
    assert rig.frames[0] == Frame(EVENT, "BOOT", (BOOT_ID,))
    assert rig.send("FIRE", 3, 4000, 80) == Frame(1, "ERR", ("safe",))
    rig.run(100)
    assert rig.forward.starts == 0
    hello = rig.send("HELLO")
    assert fields(hello)["boot"] == BOOT_ID and fields(hello)["state"] == "IDLE" and fields(hello)["lid"] == "closed"


def test_fire_soft_starts_counts_the_cards_and_pulls_the_next_one_back() -> None:
    rig = Rig().armed()
    assert rig.send("FIRE", 3, 4000, 80) == Frame(2, "OK", ("fire=1",))
    full = 80 * 65535 // 100
    assert rig.forward.duty == full // 3  # on at once, before the loop runs, at a third of the duty
    rig.run(40)
    assert rig.forward.history[-1] == (40, full // 3 + (full - full // 3) * 40 // 80)  # halfway up the ramp
    rig.run(460)
    assert rig.events("CARD") == [("1",), ("2",), ("3",)]
    [(dispensed, ms, reason, fire)] = rig.events("DONE")
    assert (dispensed, reason, fire) == ("3", "count", "1") and int(ms) < 500
    assert rig.world.cards_out == 3
    assert max(duty for _, duty in rig.forward.history) == full
    assert rig.forward.duty == 0 and rig.reverse.duty == 0
    assert rig.forward.starts == 1 and rig.reverse.starts == 1  # one pull-back pulse
    assert rig.reverse.history == [(int(ms), full), (int(ms) + 40, 0)]  # reverse_ms long, after the count
    status = fields(rig.send("STATUS"))
    assert status["last"] == f"1:3:{ms}:count" and status["cards"] == "3" and status["state"] == "IDLE"


def test_the_last_card_stops_the_roller_even_while_the_loop_is_held_up() -> None:
    # A card's beam edge is an interrupt; the loop may not run for a while (a busy Pi runs the header's board
    # among other processes). The roller must stop at the card that makes the count, not at the loop's next pass.
    rig = Rig(cards_per_second=250).armed(ramp_ms=0)  # a card every 5 ms at 80 %
    rig.send("FIRE", 2, 4000, 80)
    rig.clock.advance(0.1)  # twenty cards' time, and no pass of the loop
    assert rig.world.cards_out == 2
    assert rig.forward.duty == 0
    rig.run(100)
    assert rig.events("CARD") == [("1",), ("2",)]
    [(dispensed, _, reason, _)] = rig.events("DONE")
    assert (dispensed, reason) == ("2", "count")
    assert rig.world.cards_out == 2 and rig.reverse.starts == 1  # and the pull-back pulse as after any count


def test_a_retransmission_is_answered_again_and_never_fires_again() -> None:
    rig = Rig().armed(min_rest_ms=0)
    fire = encode(7, "FIRE", (2, 4000, 80))
    [first] = rig.send_line(fire)
    assert first == Frame(7, "OK", ("fire=1",))
    assert rig.send_line(fire) == [first]
    rig.run(300)
    assert rig.send_line(fire) == [first]  # even after the fire is over
    assert rig.launcher.fires == 1 and rig.forward.starts == 1 and rig.world.cards_out == 2
    assert rig.launcher.replays == 2
    # The same number with other words is a new command, not a retransmission.
    [again] = rig.send_line(encode(7, "FIRE", (1, 4000, 80)))
    assert again == Frame(7, "OK", ("fire=2",))


def test_hello_forgets_the_last_command_so_a_new_host_session_is_not_mistaken_for_a_retransmission() -> None:
    rig = Rig().armed(min_rest_ms=0)
    fire = encode(3, "FIRE", (1, 4000, 80))
    rig.send_line(fire)
    rig.run(200)
    rig.send_line(encode(1, "HELLO"))
    assert rig.send_line(fire) == [Frame(3, "OK", ("fire=2",))]


def test_the_same_line_after_another_command_is_a_new_command() -> None:
    # A retransmission comes straight after its first copy; the same line later is a wrapped sequence number.
    rig = Rig().armed(min_rest_ms=0)
    fire = encode(9, "FIRE", (1, 4000, 80))
    assert rig.send_line(fire) == [Frame(9, "OK", ("fire=1",))]
    rig.run(200)
    rig.send_line(encode(10, "PING"))
    assert rig.send_line(fire) == [Frame(9, "OK", ("fire=2",))]
    rig.run(200)
    assert rig.launcher.fires == 2 and rig.world.cards_out == 2 and rig.launcher.replays == 0


def test_no_card_reverses_once_then_reports_a_jam_and_pulls_back() -> None:
    rig = Rig().armed(jam_ms=200, reverse_ms=60)
    rig.world.jam()
    rig.send("FIRE", 2, 4000, 80)
    rig.run(199)
    assert rig.reverse.starts == 0
    rig.run(1)
    assert rig.reverse.duty > 0 and rig.forward.duty == 0
    rig.run(60 + 199)
    assert rig.events("JAM") == [] and rig.forward.duty > 0
    rig.run(1)
    assert rig.events("JAM") == [()] and rig.events("DONE") == []
    assert rig.forward.duty == 0 and rig.reverse.duty > 0  # the pull-back pulse, then DONE
    rig.run(60)
    assert rig.events("DONE") == [("0", "460", "jam", "1")]
    assert rig.forward.duty == 0 and rig.reverse.duty == 0 and rig.reverse.starts == 2


def test_without_a_reverse_a_jam_is_reported_at_once() -> None:
    rig = Rig().armed(jam_ms=200, reverse_ms=0)
    rig.world.jam()
    rig.send("FIRE", 2, 4000, 80)
    rig.run(200)
    assert rig.events("DONE") == [("0", "200", "jam", "1")] and rig.reverse.starts == 0


def test_a_card_stuck_in_the_beam_is_reported_as_stuck() -> None:
    rig = Rig().armed(stuck_ms=300)
    rig.send("FIRE", 3, 4000, 80)
    while not rig.events("CARD"):
        rig.run(1)
    rig.run(10)  # the first card is out of the beam
    rig.world.stick_card()  # the next one stops in it
    rig.run(1)  # the loop sees the beam blocked
    rig.run(299)
    assert rig.events("STUCK") == []
    rig.run(1)
    assert rig.events("STUCK") == [()] and rig.forward.duty == 0
    rig.run(40)
    assert [d[::2] for d in rig.events("DONE")] == [("2", "stuck")] and rig.reverse.starts == 1


def test_an_empty_hopper_is_reported_as_empty() -> None:
    rig = Rig(hopper_sensor=5, hopper=2).armed(jam_ms=200)
    rig.send("FIRE", 5, 4000, 80)
    rig.run(400)
    assert rig.events("CARD") == [("1",), ("2",)]
    assert rig.events("EMPTY") == [()] and rig.events("DONE")[0][::2] == ("2", "empty")
    assert rig.reverse.starts == 1  # no point retrying an empty hopper: only the pull-back pulse
    assert fields(rig.send("STATUS"))["hopper"] == "empty"


@pytest.mark.parametrize("start_ms", [0, WRAP - 150], ids=["plain", "ticks-wrap"])
def test_the_board_enforces_max_ms_itself(start_ms: int) -> None:
    rig = Rig(start_ms=start_ms, cards_per_second=1.25).armed(jam_ms=10000)
    rig.send("FIRE", 5, 300, 80)
    started = rig.now_ms()
    rig.run(299)
    assert rig.forward.duty > 0
    rig.run(1)
    assert rig.forward.duty == 0
    assert rig.forward.history[-1] == (started + 300, 0)
    assert rig.events("DONE") == [("0", "300", "timeout", "1")]


def test_fire_arguments_are_checked() -> None:
    rig = Rig().armed()
    assert rig.send("FIRE", 3, board.MAX_RUN_MS + 1, 80).args == ("range",)
    assert rig.send("FIRE", 0, 1000, 80).args == ("range",)
    assert rig.send("FIRE", 3, 1000, 101).args == ("range",)
    assert rig.send("FIRE", 3, 1000).args == ("args",)
    assert rig.send("FIRE", "x", 1000, 80).args == ("args",)
    assert rig.send("FIRE", -1, 1000, 80).args == ("args",)
    assert rig.send("SPIN").args == ("cmd",)
    assert rig.forward.starts == 0


def test_a_command_that_does_not_fit_its_declaration_is_refused_and_changes_nothing() -> None:
    """framing.MESSAGES declares each command's fields: one too many, or not an integer, is `ERR args`, the same
    answer wherever the board would have read the fields."""
    rig = Rig().armed()
    assert rig.send("FIRE", 3, 1000, 80, 1).args == ("args",)
    assert rig.send("FIRE", 3, "1e3", 80).args == ("args",)
    assert rig.send("FIRE", "+3", 1000, 80).args == ("args",)
    assert rig.send("FIRE", 3, 1000, "80%").args == ("args",)
    assert rig.send("STOP", "now").args == ("args",)
    assert rig.send("DISARM", 1).args == ("args",)
    assert rig.forward.starts == 0
    status = dict(a.split("=", 1) for a in rig.send("STATUS").args)
    assert (status["state"], status["fire"]) == ("IDLE", "0")


@pytest.mark.parametrize("start_ms", [0, WRAP - 700], ids=["plain", "ticks-wrap"])
def test_host_silence_stops_the_motor_within_1500_ms_and_latches_safe(start_ms: int) -> None:
    rig = Rig(start_ms=start_ms, cards_per_second=0.5).armed(jam_ms=10000)
    rig.run(500)
    rig.send("FIRE", 5, board.MAX_RUN_MS, 80)  # the last the board hears
    rig.run(1499)
    assert rig.forward.duty > 0 and rig.launcher.state == "FIRING"
    rig.run(1)
    assert rig.forward.duty == 0 and rig.reverse.duty == 0
    assert rig.launcher.state == "SAFE" and rig.events("DONE")[0][2] == "safe"
    assert rig.send("FIRE", 1, 1000, 80).args == ("safe",)
    assert fields(rig.send("PING"))["state"] == "SAFE"  # a ping is heard, but only HELLO re-arms
    rig.run(3000)
    assert rig.forward.starts == 1
    assert fields(rig.send("HELLO"))["state"] == "IDLE"


def test_heartbeats_keep_the_board_armed() -> None:
    rig = Rig().armed()
    for _ in range(10):
        rig.run(500)
        assert fields(rig.send("PING"))["state"] == "IDLE"


def test_lid_open_stops_the_motor_and_refuses_fires_until_closed() -> None:
    rig = Rig(cards_per_second=1.25).armed(min_rest_ms=0)
    rig.send("FIRE", 3, 4000, 80)
    rig.run(10)
    lid = rig.line(rig.pins.LID)
    lid.drive(1)
    rig.run(19)
    assert rig.forward.duty > 0  # a 20 ms settle: a glitch on the switch is not an opening
    rig.run(1)
    assert rig.forward.duty == 0 and rig.events("LID") == [("open",)]
    assert rig.events("DONE")[0][2] == "lid"
    assert rig.send("FIRE", 1, 1000, 80).args == ("lid",)
    lid.drive(0)
    rig.run(20)
    assert rig.events("LID") == [("open",), ("closed",)]
    assert rig.send("FIRE", 1, 1000, 80).cmd == "OK"


def test_the_motor_rests_between_fires() -> None:
    rig = Rig().armed(min_rest_ms=300)
    rig.send("FIRE", 1, 4000, 80)
    rig.run(200)
    assert rig.events("DONE")
    assert rig.send("FIRE", 1, 4000, 80).args == ("rest",)
    rig.run(300)
    assert rig.send("FIRE", 1, 4000, 80).cmd == "OK"


def test_stop_and_hello_end_a_fire() -> None:
    rig = Rig(cards_per_second=1.25).armed(min_rest_ms=0)
    rig.send("FIRE", 3, 4000, 80)
    rig.run(50)
    assert rig.send("STOP") == Frame(rig.seq, "OK")
    assert rig.forward.duty == 0 and rig.events("DONE")[0][2] == "stop"
    rig.send("FIRE", 3, 4000, 80)
    rig.run(50)
    rig.send("HELLO")  # a new host session: the old one's fire ends
    assert rig.forward.duty == 0 and [d[2] for d in rig.events("DONE")] == ["stop", "stop"]


@pytest.mark.parametrize("debounce_ms", [30, 120])
def test_one_press_despite_contact_bounce(debounce_ms: int) -> None:
    rig = Rig().armed(debounce_ms=debounce_ms)
    button = rig.line(rig.pins.BUTTON)
    rig.run(10)
    pressed_at = rig.ticks.ticks_ms()
    for level in (0, None, 0, None, 0):  # bounce on the way down
        button.drive(level)
    rig.run(100)
    for level in (None, 0, None, 0):  # and on the way up
        button.drive(level)
        rig.run(2)
    button.drive(None)  # released for good
    rig.run(debounce_ms - 1)
    button.drive(0)  # a millisecond too soon: still bounce
    button.drive(None)
    assert rig.events("BTN") == [(str(pressed_at),)]
    rig.run(1)
    button.drive(0)
    rig.run(5)
    assert len(rig.events("BTN")) == 2


@pytest.mark.parametrize("debounce_ms", [0, 30, 120])
def test_the_release_is_told_once_the_button_has_rested_up_for_the_debounce(debounce_ms: int) -> None:
    """E UP <ms>: the button let go, told once it has rested released for debounce_ms, with the board's tick when
    it was last seen down; one for each press, so that the host can time a hold."""
    rig = Rig().armed(debounce_ms=debounce_ms)
    button = rig.line(rig.pins.BUTTON)
    rig.press()
    rig.run(5000)  # held down: no release, however long
    assert len(rig.events("BTN")) == 1 and rig.events("UP") == []
    for level in (None, 0, None, 0):  # bounce on the way up, each open shorter than any debounce here but 0
        button.drive(level)
        rig.run(1 if debounce_ms else 0)
    rig.run(1)
    last_down = rig.ticks.ticks_ms()
    button.drive(None)  # released for good
    rig.run(max(debounce_ms, 1) - 1)
    assert rig.events("UP") == []
    rig.run(1)
    assert rig.events("UP") == [(str(last_down),)] and rig.index("BTN") < rig.index("UP")
    rig.run(1000)
    assert len(rig.events("UP")) == 1 and len(rig.events("BTN")) == 1


def test_every_press_is_followed_by_its_release() -> None:
    rig = Rig().armed(debounce_ms=30)
    for held_ms in (40, 1, 300, 5):
        rig.press()
        rig.run(held_ms)
        rig.release()
        rig.run(31)
    names = [f.cmd for f in rig.frames if f.seq == EVENT and f.cmd in ("BTN", "UP")]
    assert names == ["BTN", "UP"] * 4


# --- the reflex: ARM holds the next press's fire, and the board starts it on its own button ---------------------


def test_an_armed_press_starts_the_motor_within_one_pass_of_the_loop() -> None:
    rig = Rig().armed()
    assert fields(rig.send("STATUS"))["armed"] == "none"
    assert rig.send("ARM", 3, 4000, 80) == Frame(rig.seq, "OK", ("fire=0",))
    assert fields(rig.send("STATUS"))["armed"] == "3"
    rig.run(10)
    assert rig.forward.starts == 0  # armed is not running
    pressed_at = rig.press()
    assert rig.forward.duty == 0  # the interrupt handler only counts
    rig.run(1)
    full = 80 * 65535 // 100
    assert rig.forward.duty == full // 3 and rig.launcher.state == "FIRING"  # the soft start, in that very pass
    assert rig.events("BTN") == [(str(pressed_at), "1")]
    rig.release()
    rig.run(500)
    assert rig.events("CARD") == [("1",), ("2",), ("3",)] and rig.index("BTN") < rig.index("CARD")
    [(dispensed, ms, reason, fire)] = rig.events("DONE")
    assert (dispensed, reason, fire) == ("3", "count", "1") and int(ms) < 500
    assert rig.world.cards_out == 3 and rig.forward.starts == 1 and rig.reverse.starts == 1  # and the pull-back
    status = fields(rig.send("STATUS"))
    assert status["armed"] == "none" and status["fire"] == "1" and status["last"] == f"1:3:{ms}:count"
    # Used: the next press, however long after, is the host's to decide.
    pressed_at = rig.press()
    rig.run(1)
    assert rig.events("BTN")[-1] == (str(pressed_at),) and rig.forward.starts == 1


def test_arm_is_checked_as_fire_is_then_refused_while_safe_busy_or_with_the_lid_open() -> None:
    rig = Rig(cards_per_second=1.25)
    assert rig.send("ARM", 3, 4000).args == ("args",)  # the arguments first, as FIRE checks them
    assert rig.send("ARM", 3, 4000, 80).args == ("safe",)
    assert rig.send("ARM", 0, 4000, 80).args == ("safe",)  # 0 cards is in range: a miss, armed as a fire is
    rig.armed(min_rest_ms=0, jam_ms=10000)
    assert rig.send("ARM", 3, board.MAX_RUN_MS + 1, 80).args == ("range",)
    assert rig.send("ARM", 3, 0, 80).args == ("range",)
    assert rig.send("ARM", firmware.MAX_CARDS + 1, 4000, 80).args == ("range",)
    assert rig.send("ARM", 3, 4000, 0).args == ("range",)
    assert rig.send("ARM", 3, 4000, 101).args == ("range",)
    assert rig.send("ARM", 3, 4000, 80, 1).args == ("args",)
    assert rig.send("ARM", "x", 4000, 80).args == ("args",)
    assert rig.send("ARM", -1, 4000, 80).args == ("args",)
    assert fields(rig.send("STATUS"))["armed"] == "none"
    rig.send("FIRE", 3, 4000, 80)
    rig.run(10)
    assert rig.send("ARM", 3, 4000, 80).args == ("busy",)
    rig.send("STOP")
    lid = rig.line(rig.pins.LID)
    lid.drive(1)
    rig.run(20)
    assert rig.send("ARM", 3, 4000, 80).args == ("lid",)
    lid.drive(0)
    rig.run(20)
    assert rig.send("ARM", 3, 4000, 80) == Frame(rig.seq, "OK", ("fire=1",))  # the fires so far, unchanged
    assert rig.send("ARM", 1, 2000, 60).cmd == "OK"  # a new arm replaces the old one
    assert fields(rig.send("STATUS"))["armed"] == "1"
    assert rig.forward.starts == 1 and rig.launcher.fires == 1


def test_an_arm_of_0_cards_tells_of_the_press_and_never_runs_the_motor() -> None:
    rig = Rig().armed(min_rest_ms=0)
    assert rig.send("FIRE", 0, 4000, 80).args == ("range",)  # a FIRE fires: at least one card
    assert rig.send("ARM", "00", 4000, 80) == Frame(rig.seq, "OK", ("fire=0",))  # two digits, as the host sends
    assert fields(rig.send("STATUS"))["armed"] == "0"
    pressed_at = rig.press()
    rig.run(1)
    assert rig.events("BTN") == [(str(pressed_at),)]  # a plain press: the host decides it
    rig.release()
    rig.run(300)
    assert rig.forward.history == [] and rig.reverse.history == [] and rig.launcher.fires == 0
    assert rig.events("DONE") == [] and rig.launcher.state == "IDLE"
    assert fields(rig.send("STATUS"))["armed"] == "none"  # used up, as any arm is by a press


def test_disarm_drops_the_arm_in_any_state() -> None:
    rig = Rig()
    assert rig.send("DISARM") == Frame(1, "OK", ("fire=0",))  # even SAFE
    rig.armed()
    assert rig.send("ARM", 3, 4000, 80).cmd == "OK"
    assert rig.send("DISARM") == Frame(rig.seq, "OK", ("fire=0",))
    assert fields(rig.send("STATUS"))["armed"] == "none"
    pressed_at = rig.press()
    rig.run(1)
    assert rig.events("BTN") == [(str(pressed_at),)]
    assert rig.forward.duty == 0 and rig.forward.starts == 0 and rig.launcher.fires == 0


def _hello(rig: Rig) -> None:
    rig.send("HELLO")


def _stop(rig: Rig) -> None:
    assert rig.send("STOP").cmd == "OK"


def _fire(rig: Rig) -> None:
    assert rig.send("FIRE", 1, 4000, 80) == Frame(rig.seq, "OK", ("fire=1",))
    rig.run(300)
    assert rig.events("DONE")


def _refused_fire(rig: Rig) -> None:
    assert rig.send("FIRE", 1, 4000).args == ("args",)  # whatever its reply


def _lid(rig: Rig) -> None:
    lid = rig.line(rig.pins.LID)
    lid.drive(1)
    rig.run(20)
    lid.drive(0)
    rig.run(20)
    assert rig.events("LID") == [("open",), ("closed",)]  # closed again: only the drop keeps the press plain


def _silence(rig: Rig) -> None:
    rig.run(1500)
    assert rig.launcher.state == "SAFE"


@pytest.mark.parametrize(
    "drop",
    [_hello, _stop, _fire, _refused_fire, _lid, _silence],
    ids=["hello", "stop", "fire", "refused-fire", "lid", "silence"],
)
def test_each_way_the_arm_is_dropped_leaves_the_next_press_to_the_host(drop: Callable[[Rig], None]) -> None:
    rig = Rig().armed(min_rest_ms=0)
    assert rig.send("ARM", 2, 4000, 80).cmd == "OK"
    drop(rig)
    assert fields(rig.send("STATUS"))["armed"] == "none"
    starts = rig.forward.starts
    pressed_at = rig.press()
    rig.run(1)
    assert rig.events("BTN") == [(str(pressed_at),)]
    assert rig.forward.duty == 0 and rig.forward.starts == starts


def test_a_press_seen_in_the_pass_the_lid_opens_does_not_start_the_motor() -> None:
    rig = Rig().armed()
    assert rig.send("ARM", 2, 4000, 80).cmd == "OK"
    rig.line(rig.pins.LID).drive(1)
    rig.run(19)
    pressed_at = rig.press()
    rig.run(1)  # the lid's settle ends in the pass that sees the press: the lid first, so no blip of the motor
    assert rig.events("LID") == [("open",)] and rig.events("BTN") == [(str(pressed_at),)]
    assert rig.forward.starts == 0 and rig.events("DONE") == []


def test_a_press_during_the_rest_does_not_fire_from_the_arm_and_drops_it() -> None:
    rig = Rig().armed(min_rest_ms=300)
    rig.send("FIRE", 1, 4000, 80)
    rig.run(200)
    assert rig.events("DONE")
    assert rig.send("ARM", 2, 4000, 80).cmd == "OK"  # arming in the rest is fine: the press may come later
    pressed_at = rig.press()
    rig.run(1)
    assert rig.events("BTN") == [(str(pressed_at),)] and rig.forward.starts == 1
    rig.release()
    rig.run(400)
    assert fields(rig.send("STATUS"))["armed"] == "none"
    pressed_at = rig.press()
    rig.run(1)
    assert rig.events("BTN")[-1] == (str(pressed_at),) and rig.forward.starts == 1 and rig.launcher.fires == 1


def test_a_retransmitted_arm_is_answered_from_memory_and_does_not_arm_again() -> None:
    rig = Rig().armed(min_rest_ms=0)
    arm = encode(7, "ARM", (2, 4000, 80))
    [first] = rig.send_line(arm)
    assert first == Frame(7, "OK", ("fire=0",))
    rig.press()  # the arm is used before the host's copy comes
    rig.run(1)
    rig.release()
    assert rig.send_line(arm) == [first]  # the copy after a lost reply: the same answer, and no new arm
    rig.run(300)
    assert rig.launcher.replays == 1 and fields(rig.send("STATUS"))["armed"] == "none"
    rig.press()
    rig.run(1)
    assert rig.launcher.fires == 1 and rig.forward.starts == 1 and rig.world.cards_out == 2


def test_only_the_first_of_presses_pending_in_one_pass_fires_from_the_arm() -> None:
    rig = Rig().armed(min_rest_ms=0)
    assert rig.send("ARM", 2, 4000, 80).cmd == "OK"
    pressed_at = rig.press()
    rig.release()
    rig.launcher._btn_armed = True  # as if debounced between the two: the loop has two presses to see at once
    rig.press()
    rig.run(1)
    assert rig.events("BTN") == [(str(pressed_at), "1"), (str(pressed_at),)]
    assert rig.launcher.fires == 1 and rig.forward.starts == 1
    rig.release()
    rig.run(300)
    assert [d[::2] for d in rig.events("DONE")] == [("2", "count")]


def test_a_fire_from_the_arm_keeps_the_bounds_of_any_fire() -> None:
    rig = Rig(cards_per_second=1.25).armed(jam_ms=10000)
    assert rig.send("ARM", 5, 300, 80).cmd == "OK"
    rig.press()
    rig.run(1)
    started = rig.now_ms()
    rig.run(299)
    assert rig.forward.duty > 0
    rig.run(1)
    assert rig.forward.duty == 0 and rig.forward.history[-1] == (started + 300, 0)
    assert rig.events("DONE") == [("0", "300", "timeout", "1")]  # its max_ms from the press's pass
    # And the host's silence ends it like any other.
    rig.release()
    rig.run(300)  # past min_rest_ms
    assert rig.send("ARM", 5, board.MAX_RUN_MS, 80).cmd == "OK"  # the last the board hears
    rig.press()
    rig.run(1499)
    assert rig.forward.duty > 0
    rig.run(1)
    assert rig.forward.duty == 0 and rig.events("DONE")[-1][2:] == ("safe", "2") and rig.launcher.state == "SAFE"


def test_hello_says_version_5_and_the_arm_last_in_the_status() -> None:
    rig = Rig()
    hello = rig.send("HELLO")
    assert firmware.VERSION == "5" and hello.args[-2:] == ("armed=none", "fw=5")
    assert rig.send("STATUS").args[-1] == "armed=none"
    rig.send("ARM", 12, 4000, 80)
    assert rig.send("STATUS").args[-1] == "armed=12"
    assert "armed" not in fields(rig.send("PING"))  # the heartbeat's short status stays short


def test_config_is_checked_and_applied_all_or_nothing() -> None:
    rig = Rig().armed()
    listing = rig.send("CONFIG", "jam_ms=300", "card_gap_ms=10")
    assert listing.cmd == "OK" and "jam_ms=300" in listing.args and "card_gap_ms=10" in listing.args
    assert rig.send("CONFIG", "jam_ms=500", "speed=3").args == ("key",)
    assert rig.send("CONFIG", "jam_ms=500", "card_gap_ms=501").args == ("range",)
    assert rig.send("CONFIG", "jam_ms").args == ("args",)
    assert rig.send("CONFIG", "=5").args == ("args",)
    assert rig.send("CONFIG", "jam_ms=-1").args == ("args",)
    assert rig.launcher.settings["jam_ms"] == 300
    assert len(rig.send("CONFIG").args) == len(firmware.SETTINGS)


def test_noise_ctrl_c_and_its_own_echo_do_nothing() -> None:
    rig = Rig().armed()
    own = b"".join(f.encode() for f in rig.frames)  # an echoing port sends our own lines back
    noise = b"\x03\x03\x04" + bytes(range(256)) + b"\n" + b"A" * 5000 + b"\n" + own
    for _ in range(3):
        assert rig.send_line(noise) == []
    assert rig.launcher._parser.bad > 0 and rig.forward.starts == 0
    rig.run(1500)
    assert rig.launcher.state == "SAFE"  # an echo is not the host


def test_the_watchdog_is_fed_by_every_pass_of_the_loop() -> None:
    rig = Rig()
    rig.run(50)
    assert rig.wdt.feeds == 50


# --- end to end: the firmware on one end of a pty, the real host link on the other ----------------------------


@pytest.fixture
def link(tmp_path: Path) -> Path:
    return tmp_path / "usb-Raspberry_Pi_Pico_E6614C311B7A3B2A-if00"


def test_a_press_on_the_board_fires_cards_through_the_host(link: Path) -> None:
    with SimBoard(link) as pico, SerialHardware(port=str(link), dispense=DispenseConfig(jam_ms=500)) as host:
        wait_until(lambda: host.describe()["link"] == "up", 5)
        jobs = []
        host.inputs.when_pressed = lambda: jobs.append(host.dispenser.start(3))
        pico.click()
        wait_until(lambda: jobs, 5)
        result = jobs[0].wait(5)
        assert (result.requested, result.dispensed, result.stop) == (3, 3, StopReason.COUNT)
        assert pico.motor.starts == 1 and pico.world.cards_out == 3 and pico.launcher.fires == 1
        described = host.describe()
        assert described["backend"] == "serial" and described["port"] == str(link)
        assert described["boot_id"] == "B0A7D001" and described["link"] == "up"
