"""The board's reflex: armed in advance with the next press's fire, it starts the motor on its own button.

The controller, the serial link and the simulator's board (firmware/main.py on mock pins, tests/sim_board.py) on
one MemoryWire and one VirtualClock. What is promised: the motor starts within a pass of the board's loop, without the
host; the press is the one the shuffle's schedule holds (the record replays); a phone's press, a lost line, the lid
or a new game never make two fires or a press the schedule did not draw.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from launcher.config import DispenseConfig
from launcher.events import EventBus
from launcher.fairplay.fairness import verify
from launcher.fairplay.schedule import profile_from_mapping
from launcher.fairplay.shuffles import ShuffleBook
from launcher.hardware.serial_link import SerialHardware
from launcher.hardware.sim import MemoryWire
from launcher.press.controller import Controller, PressRefused
from launcher.press.hopper import Hopper, HopperCount
from launcher.store import Store
from launcher.table.games import GameDesk
from launcher.table.history import History
from tests.sim_board import SimBoard, Tamper, older_firmware, on_clock
from tests.virtual_clock import VirtualClock

# Fires two presses in three or so, never after a pause: most presses can be armed for.
OFTEN = profile_from_mapping(
    "custom",
    {"hazard": [0.6, 1.0], "max_fires_in_row": 3, "card_weights": [1, 1, 1], "pause_probability": 0.0},
)


class Table:
    """A launcher on the serial backend, as the daemon wires it, with a board at the other end of the wire."""

    def __init__(self, tmp_path: Path, clock: VirtualClock, *, to_host: Tamper | None = None) -> None:
        self.clock = clock
        self.wire = MemoryWire(clock)
        self.to_host = to_host or Tamper()
        self.pico = SimBoard(self.wire, clock=clock, to_host=self.to_host)
        self.hardware = SerialHardware(
            port="memory", dispense=DispenseConfig(jam_ms=500, min_rest_ms=0), clock=clock, opener=self.wire.open
        )
        self.store = Store(tmp_path / "launcher.sqlite3")
        self.bus = EventBus(self.store)
        self.shuffles = ShuffleBook(self.store, self.bus)
        self.games = GameDesk(self.store, self.bus, history=History(self.store))
        self.controller = Controller(
            hardware=self.hardware,
            shuffles=self.shuffles,
            profile=OFTEN,
            bus=self.bus,
            hopper=Hopper(HopperCount(loaded=100, dispensed=0), clock=clock),
            min_rest_ms=0,
            game=self.games,
            clock=clock,
        )
        self.games.starting = self.controller.arming_paused
        self.link_downs = 0

        def link_changed(ok: bool, message: str) -> None:
            self.link_downs += not ok
            self.controller.link_changed(ok, message)

        self.hardware.when_link_changed = link_changed
        self.until(lambda: self.hardware.describe()["link"] == "up")
        self.controller.link_changed(True, "up")  # the daemon's start does the same for a board already there

    def until(self, done: Any, within: float = 10.0) -> None:
        self.clock.run_until(done, within=within)

    def armed(self) -> int | None:
        """The cards the board holds ready (0: a miss), as the host has heard it (never in what phones read)."""
        return self.hardware._fires.armed

    def idle(self) -> None:
        self.until(lambda: not self.controller.snapshot()["busy"] and self.hardware._fires.job is None)

    def press_until_armed(self) -> int:
        """Phone presses until the board is armed to fire the next (the first press closes the contributions)."""
        for _ in range(20):
            self.controller.press("web").wait(5)
            self.idle()
            self.clock.advance(0.02)  # an ARM, if any, has been answered
            if self.armed():
                # The host counts the arm from when it sends it: wait for the board to hold it too.
                self.until(lambda: self.pico.launcher._arm is not None)
                return self.armed()  # type: ignore[return-value]
        pytest.fail("the board was never armed")

    def sent(self, cmd: bytes) -> list[bytes]:
        """Lines of `cmd` the board received."""
        return [line for line in list(self.pico.received) if line.split(b" ")[1:2] == [cmd]]

    def click(self) -> None:
        """The big button, pressed and let go after 40 ms."""
        self.pico.press()
        self.clock.advance(0.04)
        self.pico.release()

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [e.data for e in self.bus.events_after(0) if e.type == kind]

    def record(self) -> dict[str, Any]:
        ended, _ = self.controller.new_shuffle()
        return ended

    def close(self) -> None:
        on_clock(self.clock, self.controller.close)
        on_clock(self.clock, self.hardware.close)
        on_clock(self.clock, self.pico.close)
        self.bus.close()


def fired_on_its_own(t: Table) -> bool:
    """The board's last BTN event carries a fire number (E BTN <ms> <fire>): it fired from its arm."""
    return len(t.pico.events(b"BTN")[-1].split()) == 5


def armed_with_lines_lost(table: Any, *lines: bytes) -> tuple[Table, int, int]:
    """A table whose board is armed, the next of each of `lines` to the host to be lost: (table, the cards armed,
    the presses so far)."""
    drop = Tamper()
    t = table(to_host=drop)
    cards = t.press_until_armed()
    for line in lines:
        drop.drop(line)
    return t, cards, t.controller.snapshot()["presses"]


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Any]:
    clock = VirtualClock()
    made: list[Table] = []

    def make(**options: Any) -> Table:
        made.append(Table(tmp_path / str(len(made)), clock, **options))
        return made[-1]

    yield make
    for each in made:
        each.close()
    clock.close()


def test_an_armed_board_starts_the_motor_on_its_own_button_within_a_pass_of_its_loop(table: Any) -> None:
    t = table()
    cards = t.press_until_armed()
    presses = t.controller.snapshot()["presses"]
    starts = t.pico.motor.starts
    t.pico.press()
    pressed_at = t.pico.now_ms()
    t.until(lambda: t.pico.motor.starts > starts, within=0.01)
    started_at = next(ms for ms, duty in t.pico.motor.history if ms >= pressed_at and duty)
    assert started_at - pressed_at <= 1  # one pass of the board's 1 kHz loop
    assert t.pico.events(b"BTN")[-1].split(b" ")[3] == str(t.pico.launcher.fires).encode()  # the fire it made
    t.clock.advance(0.04)
    t.pico.release()
    t.idle()
    press = t.events("button.pressed")[-1]
    fired = t.events("launcher.fired")[-1]
    assert press == {"press": presses + 1, "source": "button"}
    assert (fired["press"], fired["requested"], fired["dispensed"]) == (presses + 1, cards, cards)
    assert t.pico.world.cards_out == t.controller.snapshot()["hopper"]["dispensed"]


def test_presses_fired_by_the_board_replay_from_the_shuffle_s_record(table: Any) -> None:
    t = table()
    reflexes = 0
    for _ in range(12):
        t.press_until_armed()
        before = t.pico.motor.starts
        t.click()
        t.idle()
        reflexes += t.pico.motor.starts > before
    record = t.record()
    report = verify(record)
    assert report.ok and report.mismatch is None, report
    assert reflexes == 12
    dispensed = sum(e["dispensed"] for e in t.events("launcher.fired"))
    assert dispensed == t.pico.world.cards_out


def test_a_phone_s_press_takes_the_arm_back_first_and_is_the_press_it_was_armed_for(table: Any) -> None:
    t = table()
    cards = t.press_until_armed()
    starts = t.pico.motor.starts
    ticket = t.controller.press("web")
    ticket.wait(5)
    t.idle()
    commands = [b"".join(line.split()[1:2]) for line in t.pico.received]
    fire = len(commands) - 1 - commands[::-1].index(b"FIRE")
    disarm = len(commands) - 1 - commands[::-1].index(b"DISARM")
    assert disarm < fire and b"ARM" not in commands[disarm:fire]  # no arm was left on the board
    assert ticket.outcome.cards == cards and ticket.result is not None and ticket.result.dispensed == cards
    assert t.pico.motor.starts == starts + 1


def test_a_board_press_whose_line_is_lost_is_taken_when_a_phone_presses_at_that_moment(table: Any) -> None:
    t, cards, presses = armed_with_lines_lost(table, b"E BTN ")
    t.pico.press()
    t.clock.advance(0.002)  # the board has fired; the host has heard nothing of it
    with pytest.raises(PressRefused) as refused:
        t.controller.press("web")
    assert refused.value.code == "busy"
    t.pico.release()
    t.idle()
    fired = t.events("launcher.fired")[-1]
    assert (fired["press"], fired["dispensed"]) == (presses + 1, cards)
    assert t.events("button.pressed")[-1] == {"press": presses + 1, "source": "button"}
    assert t.pico.launcher.fires == len(t.events("launcher.fired"))
    assert verify(t.record()).ok


def test_a_board_press_whose_line_is_lost_is_taken_from_the_end_of_its_fire(table: Any) -> None:
    t, cards, presses = armed_with_lines_lost(table, b"E BTN ")
    t.click()
    t.until(lambda: len(t.events("button.pressed")) == presses + 1)
    t.idle()
    fired = t.events("launcher.fired")[-1]
    assert (fired["press"], fired["dispensed"]) == (presses + 1, cards)
    assert verify(t.record()).ok


def test_the_lid_takes_the_arm_away_and_closing_it_arms_the_board_again(table: Any) -> None:
    t = table()
    t.press_until_armed()
    arms = len(t.sent(b"ARM"))
    t.pico.world.open_lid()
    t.until(lambda: t.events("launcher.lid") == [{"open": True}])
    assert t.armed() is None
    starts = t.pico.motor.starts
    t.click()
    t.clock.advance(0.05)
    assert t.pico.motor.starts == starts  # the lid is open: nothing fires
    t.pico.world.close_lid()
    t.until(lambda: len(t.events("launcher.lid")) == 2)
    t.until(lambda: len(t.sent(b"ARM")) > arms and t.pico.launcher._arm is not None)
    assert t.armed()  # the press it was armed for before the lid opened: a fire
    t.click()
    t.idle()
    assert t.pico.motor.starts == starts + 1
    assert verify(t.record()).ok


def test_a_classic_game_takes_the_arm_back_and_deals_its_exact_cards(table: Any) -> None:
    t = table()
    t.press_until_armed()
    t.games.new_game({"players": ["Ann", "Bo"], "ruleset": "classic"})
    t.clock.advance(0.01)
    assert t.armed() is None and t.sent(b"DISARM")
    starts = t.pico.motor.starts
    t.click()  # the host decides: a plain draw of one card for whoever must press
    t.idle()
    assert t.pico.motor.starts == starts + 1
    assert t.events("launcher.dealt")[-1]["dispensed"] == 1
    assert t.armed() is None


def test_a_board_with_older_firmware_is_never_armed(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    older_firmware(monkeypatch, "2")
    t = table()
    for _ in range(5):
        t.controller.press("web").wait(5)
        t.idle()
    assert t.sent(b"ARM") == [] and t.armed() is None
    starts = t.pico.motor.starts
    t.click()
    t.idle()
    assert t.events("button.pressed")[-1]["source"] == "button"
    assert t.pico.motor.starts >= starts


def test_a_board_press_told_twice_while_a_phone_presses_is_one_press(table: Any) -> None:
    """Forced: the link's callbacks held back (a slow listener before them), so the board's BTN and the DISARM's
    answer both tell of the same fire while the phone's press holds the controller."""
    t = table()
    cards = t.press_until_armed()
    presses = t.controller.snapshot()["presses"]
    go_on = t.clock.event()
    t.hardware._dispatch.put(lambda: go_on.wait(10))  # the injected yield point: the dispatcher waits here
    t.pico.press()
    t.clock.advance(0.002)
    assert fired_on_its_own(t)
    with pytest.raises(PressRefused):
        t.controller.press("web")
    go_on.set()
    t.pico.release()
    t.idle()
    assert [e["press"] for e in t.events("button.pressed")][-1] == presses + 1
    assert len(t.events("button.pressed")) == presses + 1 and t.events("launcher.fired")[-1]["dispensed"] == cards
    assert t.pico.launcher.fires == len(t.events("launcher.fired"))
    assert verify(t.record()).ok


def test_a_board_press_whose_every_line_is_lost_is_found_by_the_heartbeat(table: Any) -> None:
    t, cards, presses = armed_with_lines_lost(table, b"E BTN ", b"E CARD ", b"E DONE ")
    t.click()
    t.until(lambda: len(t.events("launcher.fired")) and t.events("launcher.fired")[-1]["press"] == presses + 1)
    assert t.events("launcher.fired")[-1]["dispensed"] == cards
    assert verify(t.record()).ok


def test_a_new_shuffle_takes_the_arm_back_and_its_first_press_is_the_host_s(table: Any) -> None:
    t = table()
    t.press_until_armed()
    t.controller.new_shuffle()
    t.clock.advance(0.01)
    assert t.armed() is None
    arms = len(t.sent(b"ARM"))
    t.click()  # open to contributions: the host draws it (the key is fixed by this press)
    t.idle()
    assert not fired_on_its_own(t)
    assert t.events("button.pressed")[-1] == {"press": 1, "source": "button"}
    assert len(t.sent(b"ARM")) >= arms


def test_a_reload_arms_the_board_again_with_what_the_hopper_holds(table: Any) -> None:
    t = table()
    cards = t.press_until_armed()
    t.controller.reload_hopper(1)
    t.clock.advance(0.01)
    assert t.armed() == min(cards, 1)
    t.click()
    t.idle()
    assert t.events("launcher.fired")[-1]["dispensed"] == 1 or t.events("launcher.empty")


@pytest.mark.parametrize("seed", range(6))
def test_lost_and_doubled_lines_never_make_a_fire_the_host_does_not_record(table: Any, seed: int) -> None:
    """Both directions drop and double lines at random while the table presses the button and phones press: every
    fire the board makes is one press the host recorded, with the cards that came out, and the record replays.
    (A command that loses all three tries ends the session, and the fire in progress with it, as any fire: then
    only the record and the FAULT's clearing are checked.)"""
    t = table(to_host=Tamper(seed=seed, drop=0.03, duplicate=0.03))
    t.pico.to_board = Tamper(seed=seed + 100, drop=0.03, duplicate=0.03)
    t.press_until_armed()
    for n in range(40):
        if n % 5 == 4:
            with contextlib.suppress(PressRefused):  # busy: the board's own press came first
                t.controller.press("web")
        else:
            t.click()
        t.clock.advance(0.1)
        t.until(lambda: not t.controller.snapshot()["busy"])
    t.idle()
    t.clock.advance(1.0)  # a fire found by a heartbeat, and its end
    t.idle()
    if t.link_downs:  # a press in the moment before the FAULT latched may have latched one of its own
        t.controller.reset()
    assert t.controller.snapshot()["fault"] is None
    if not t.link_downs:
        ended = t.events("launcher.fired") + t.events("launcher.jammed") + t.events("launcher.empty")
        assert t.pico.launcher.fires == len(ended)
        assert t.pico.world.cards_out == t.controller.snapshot()["hopper"]["dispensed"]
    report = verify(t.record())
    assert report.ok, report


def test_a_press_in_the_moment_the_link_is_lost_leaves_a_fault_that_clears_when_the_board_is_back(
    table: Any,
) -> None:
    """The link's loss reaches the controller a moment after the link knows it (on the link's callbacks, held
    back here): a press in that moment finds no board. That FAULT is the lost link's, and clears by itself."""
    t = table()
    to_board = Tamper()
    t.pico.to_board = to_board
    go_on = t.clock.event()
    t.hardware._dispatch.put(lambda: go_on.wait(30))  # the injected yield point: callbacks wait here
    to_board.block = True  # the board hears nothing: no reply after three tries
    t.until(lambda: t.hardware.describe()["link"] == "down")
    for _ in range(20):  # until a press that fires: a miss needs no board
        t.controller.press("web").wait(5)
        if t.controller.snapshot()["fault"] is not None:
            break
    assert "board is not ready" in t.controller.snapshot()["fault"]
    to_board.block = False
    go_on.set()
    t.until(lambda: t.hardware.describe()["link"] == "up")
    t.until(lambda: t.controller.snapshot()["fault"] is None)
