"""The controller on simulated hardware: what each press becomes, refusals, FAULT, jams and an empty hopper.

Everything runs on a virtual clock: the simulated world, the dispenser, the cues and the controller's worker. The
motor's runs are read from the world's log, stamped with virtual time, so jam times, the watchdog, the suspense
pause and the rest between fires are checked to the millisecond they are configured to.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from launcher.config import Config
from launcher.events import EventBus
from launcher.fairplay.schedule import PROFILES, Outcome
from launcher.fairplay.shuffles import ShuffleBook
from launcher.hardware.header_board import load_firmware
from launcher.hardware.serial_fires import SerialFireJob
from launcher.hardware.sim import SimulatedHardware
from launcher.press.controller import Controller, PressRefused
from launcher.press.hopper import Hopper, HopperCount
from launcher.store import Store
from tests.virtual_clock import VirtualClock

LID_SETTLE_MS = load_firmware().LID_SETTLE_MS


class ScriptedSchedule:
    """A schedule that fires exactly the card counts it is given (0 = miss), so tests know what to expect."""

    def __init__(self, cards: list[int]) -> None:
        self._cards = list(cards)
        self.presses = 0
        self.misses_in_row = 0
        self.fires_in_row = 0
        self.tension = 0.0

    def restart(self) -> None:
        pass

    def go_on_from(self, misses_in_row: int, fires_in_row: int) -> None:
        pass  # the script says every press

    def next_outcome(self) -> Outcome:
        if self.presses >= len(self._cards):
            raise StopIteration  # the script is over: a test that presses more is wrong
        outcome = self.peek()
        self.presses += 1
        self.misses_in_row = 0 if outcome.cards else self.misses_in_row + 1
        return outcome

    def peek(self) -> Outcome:
        """The next press's outcome, not drawn (the firmware is armed with it)."""
        if self.presses >= len(self._cards):
            return Outcome(press=self.presses + 1, cards=0, tension=self.tension, pause_ms=0)  # nothing to arm
        cards = self._cards[self.presses]
        pause_ms = 0
        if cards < 0:  # a negative count: that many cards after a suspense pause of 100 ms
            cards, pause_ms = -cards, 100
        return Outcome(press=self.presses + 1, cards=cards, tension=self.tension, pause_ms=pause_ms)


@dataclass
class Rig:
    controller: Controller
    hardware: SimulatedHardware
    bus: EventBus
    config: Config
    clock: VirtualClock

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        """Everything after the first shuffle.started."""
        return [(e.type, e.data) for e in self.bus.events_after(1)]

    def types(self) -> list[str]:
        return [t for t, _ in self.events()]

    def motor_duty(self) -> float:
        return float(self.hardware.pin_factory.pin(self.config.pins.motor_forward).state)

    def motor_runs(self, since: float) -> list[tuple[float, float | None]]:
        """(on, off) of each run of the roller, either way, in seconds after `since`; off is None while it runs."""
        runs: list[tuple[float, float | None]] = []
        on = None
        for t, running in list(self.hardware.world.motor_log):
            if t < since:
                continue
            if running and on is None:
                on = t
            elif not running and on is not None:
                runs.append((round(on - since, 9), round(t - since, 9)))
                on = None
        if on is not None:
            runs.append((round(on - since, 9), None))
        return runs


def fast_config(**dispense: int) -> Config:
    config = Config().replace("sim", cards_per_second=300.0, card_block_ms=1.0)
    return config.replace("dispense", **{"min_rest_ms": 5, "jam_ms": 300, **dispense})


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    clock = VirtualClock(start=100.0)
    yield clock
    clock.close()


@pytest.fixture
def rig_factory(tmp_path: Path, clock: VirtualClock) -> Iterator[Any]:
    made: list[Rig] = []

    def build(cards: list[int], config: Config | None = None, game: Any = None) -> Rig:
        config = config or fast_config()
        hardware = SimulatedHardware(config, clock=clock)
        store = Store(tmp_path / f"db{len(made)}.sqlite3")
        bus = EventBus(store)
        controller = Controller(
            hardware=hardware,
            shuffles=ShuffleBook(store, bus, schedule_factory=lambda profile, seed: ScriptedSchedule(cards)),
            profile=PROFILES["classic"],
            bus=bus,
            hopper=Hopper(HopperCount(loaded=config.dispense.hopper_cards, dispensed=0), clock=clock),
            min_rest_ms=config.dispense.min_rest_ms,
            game=game,
            clock=clock,
        )
        rig = Rig(controller, hardware, bus, config, clock)
        made.append(rig)
        return rig

    yield build
    for rig in made:
        rig.controller.close()
        rig.hardware.close()
        rig.bus.close()


def test_each_press_gives_one_pressed_and_one_outcome(rig_factory: Any) -> None:
    rig = rig_factory([0, 3, 0, 2])
    results = []
    for _ in range(4):
        ticket = rig.controller.press("web")
        assert ticket.wait(5)
        results.append((ticket.outcome.cards, ticket.result.dispensed if ticket.result else 0))
    assert results == [(0, 0), (3, 3), (0, 0), (2, 2)]
    assert rig.types() == [
        "button.pressed", "launcher.missed",
        "button.pressed", "launcher.fired", "hopper.changed",
        "button.pressed", "launcher.missed",
        "button.pressed", "launcher.fired", "hopper.changed",
    ]  # fmt: skip
    snapshot = rig.controller.snapshot()
    assert snapshot["hopper"] == {"loaded": 112, "dispensed": 5, "remaining": 107}
    assert rig.hardware.world.hopper == 107
    assert snapshot["presses"] == 4


def test_a_press_on_the_button_pin_is_the_same_as_a_phone_press(rig_factory: Any) -> None:
    rig = rig_factory([2, 0])
    rig.hardware.world.press_button()
    rig.clock.run_until(lambda: "hopper.changed" in rig.types(), within=1.0)
    rig.clock.run_until(lambda: not rig.controller.snapshot()["busy"], within=1.0)
    rig.hardware.world.press_button()
    rig.clock.run_until(lambda: "launcher.missed" in rig.types(), within=1.0)
    events = rig.events()
    assert events[0] == ("button.pressed", {"press": 1, "source": "button"})
    assert events[1][0] == "launcher.fired" and events[1][1]["dispensed"] == 2
    assert events[3] == ("button.pressed", {"press": 2, "source": "button"})


def test_presses_while_firing_are_refused_and_told(rig_factory: Any) -> None:
    rig = rig_factory([5, 1], fast_config())
    rig.hardware.world.jam()  # keeps the first fire running until jam_ms
    first = rig.controller.press("web")
    with pytest.raises(PressRefused) as refused:
        rig.controller.press("web")
    assert refused.value.code == "busy"
    rig.hardware.world.press_button()  # the physical button is ignored the same way, without raising
    assert first.wait(5)
    ignored = [d for t, d in rig.events() if t == "button.ignored"]
    assert ignored == [{"source": "web", "reason": "busy"}, {"source": "button", "reason": "busy"}]


def test_a_jam_is_reported_with_what_came_out(rig_factory: Any) -> None:
    rig = rig_factory([4])
    rig.hardware.world.jam()
    pressed = rig.clock.now()
    ticket = rig.controller.press("web")
    assert ticket.wait(5)
    assert ("launcher.jammed", {"press": 1, "requested": 4, "dispensed": 0, "reason": "no_card"}) in rig.events()
    assert rig.motor_duty() == 0
    # no card for jam_ms: stop and pull back for reverse_ms, one more try of jam_ms, pull back, and off for good
    jam, back = rig.config.dispense.jam_ms / 1000, rig.config.dispense.reverse_ms / 1000
    at = [round(t, 9) for t in (0, jam, jam + back, 2 * jam + back, 2 * jam + 2 * back)]
    assert rig.motor_runs(pressed) == list(pairwise(at))


def test_an_empty_hopper_is_reported_and_the_motor_stays_off(rig_factory: Any) -> None:
    rig = rig_factory([3, 2], fast_config(hopper_cards=3))
    assert rig.controller.press("web").wait(5)
    assert rig.controller.snapshot()["hopper"]["remaining"] == 0
    forward = rig.hardware.pin_factory.pin(rig.config.pins.motor_forward)
    forward.clear_states()
    assert rig.controller.press("web").wait(5)
    assert rig.events()[-1] == ("launcher.empty", {"press": 2, "requested": 2, "dispensed": 0})
    assert [s.state for s in forward.states] == [0.0], "the motor must not start on an empty hopper"


def test_an_exception_in_the_dispense_loop_stops_the_motor_and_latches_fault(
    rig_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig = rig_factory([4, 0, 0])

    def broken_wait(job: Any) -> Any:
        rig.clock.run_until(lambda: rig.motor_duty() > 0, within=0.01)  # the motor runs when the waiting fails
        raise RuntimeError("beam sensor vanished")

    monkeypatch.setattr(SerialFireJob, "wait", broken_wait)
    rig.hardware.world.jam()  # no card would stop the motor on its own
    ticket = rig.controller.press("web")
    assert ticket.wait(5)
    rig.clock.run_until(lambda: rig.motor_duty() == 0, within=0.005)  # the STOP, at the firmware's next pass
    assert rig.controller.snapshot()["fault"] == "dispense failed: beam sensor vanished"
    fault = {"message": "dispense failed: beam sensor vanished", "cause": "dispenser"}
    told = {**fault, "press": 1, "requested": 4, "dispensed": 0}  # the press it cut short, and no card out
    assert ("hardware.fault", told) in rig.events()

    with pytest.raises(PressRefused) as refused:
        rig.controller.press("web")
    assert refused.value.code == "fault"

    rig.controller.reset()
    assert rig.events()[-1] == ("hardware.ok", {})
    assert rig.controller.press("web").wait(5)
    assert rig.events()[-1][0] == "launcher.missed"


class GameOnAFullDisk:
    """The game at the table, failing with an error its store should have turned into a StoreError (a bug) until
    `full` is cleared. The real GameDesk keeps a press the disk cannot take (tests/test_storage_faults.py)."""

    full = True

    def pressed(self, fired: bool, dispensed: int, player: str | None) -> str:
        if self.full:
            raise sqlite3.OperationalError("database or disk is full")
        return "Ann"

    def credited(self, player: str | None) -> str:
        return "Ann"

    def cards_owed(self, player: str | None) -> None:
        return None


@pytest.mark.parametrize("cards", [0, 3], ids=["miss", "fire"])
def test_a_press_whose_recording_fails_for_a_bug_latches_fault_and_never_leaves_the_launcher_busy(
    rig_factory: Any, cards: int
) -> None:
    game = GameOnAFullDisk()
    rig = rig_factory([cards, 2], game=game)
    ticket = rig.controller.press("web")
    assert ticket.wait(5), "the press must be concluded even so"
    assert rig.motor_duty() == 0
    state = rig.controller.snapshot()
    assert (state["busy"], state["fault"]) == (False, "could not record the press: database or disk is full")
    with pytest.raises(PressRefused) as refused:
        rig.controller.press("web")
    assert refused.value.code == "fault"  # not "busy": the admin sees why, and a reset brings it back
    game.full = False  # room made on the disk
    rig.clock.sleep(rig.config.dispense.min_rest_ms / 1000)  # the admin's reset is no quicker than the motor's rest
    rig.controller.reset()
    ticket = rig.controller.press("web")
    assert ticket.wait(5) and ticket.player == "Ann"
    assert ticket.result is not None and ticket.result.dispensed == 2


def test_a_motor_that_will_not_start_latches_fault(rig_factory: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    rig = rig_factory([2])

    def refuse(speed: float) -> None:
        raise OSError("H-bridge not answering")

    # The firmware's loop raises, as in the header process, which then ends with its motor off: the link is lost.
    monkeypatch.setattr(rig.hardware.board.machine._motor, "forward", refuse)
    assert rig.controller.press("web").wait(5)
    assert rig.controller.snapshot()["fault"] is not None
    assert rig.motor_duty() == 0


def test_the_watchdog_timeout_latches_fault(rig_factory: Any) -> None:
    rig = rig_factory([6], fast_config(max_run_ms=100, jam_ms=5000))
    rig.hardware.world.jam()
    pressed = rig.clock.now()
    assert rig.controller.press("web").wait(5)
    assert rig.motor_duty() == 0
    assert rig.motor_runs(pressed) == [(0.0, 0.1)]  # max_run_ms to the millisecond, and no pull-back after it
    assert rig.controller.snapshot()["fault"] == "the motor ran 100 ms without finishing; watchdog stopped it"


def test_a_fault_mid_fire_tells_the_press_and_the_cards_that_came_out(rig_factory: Any) -> None:
    """Issue #47: a FAULT in the middle of a fire hid how many cards had come out; every phone's line for that press
    now says them ("2 cards, then the launcher stopped")."""
    rig = rig_factory([6], fast_config(max_run_ms=100, jam_ms=5000))
    assert rig.controller.press("web") is not None
    rig.clock.run_until(lambda: rig.hardware.world.cards_out >= 2, within=1.0)
    rig.hardware.world.jam()  # the roller stalls with cards still to come: the watchdog cuts the motor
    rig.clock.run_until(lambda: rig.controller.snapshot()["fault"] is not None, within=1.0)
    out = rig.hardware.world.cards_out
    assert 2 <= out < 6
    faults = [d for t, d in rig.events() if t == "hardware.fault"]
    assert faults == [
        {
            "message": "the motor ran 100 ms without finishing; watchdog stopped it",
            "cause": "motor",
            "press": 1,
            "requested": 6,
            "dispensed": out,
        }
    ]


def test_a_suspense_pause_holds_the_outcome_back(rig_factory: Any) -> None:
    rig = rig_factory([-3, 0])
    pressed = rig.clock.now()
    ticket = rig.controller.press("web")
    assert rig.motor_duty() == 0, "the motor waits for the pause"
    rig.clock.sleep(0.099)
    assert rig.motor_runs(pressed) == []
    with pytest.raises(PressRefused):
        rig.controller.press("web")  # busy during the pause
    assert ticket.wait(5)
    assert rig.motor_runs(pressed)[0][0] == 0.1  # the motor starts when the 100 ms pause is over, not before
    types = rig.types()
    assert types[:2] == ["button.pressed", "launcher.suspense"]
    assert ("launcher.suspense", {"press": 1, "pause_ms": 100}) in rig.events()
    assert "launcher.fired" in types and types.index("launcher.fired") > types.index("launcher.suspense")
    assert ticket.result is not None and ticket.result.dispensed == 3


def test_a_new_shuffle_reveals_the_seed_and_commits_to_the_next(rig_factory: Any) -> None:
    rig = rig_factory([0, 2, 0])
    first = rig.controller.snapshot()["shuffle"]
    for _ in range(2):
        assert rig.controller.press("web").wait(5)
    record, started = rig.controller.new_shuffle(PROFILES["gentle"])
    assert record["shuffle"] == first["number"] and record["commitment"] == first["commitment"]
    assert [o["cards"] for o in record["outcomes"]] == [0, 2]
    assert started["number"] == first["number"] + 1 and started["profile"] == "gentle"
    assert started["commitment"] != first["commitment"] and started["presses"] == 0
    ended = [d for t, d in rig.events() if t == "shuffle.ended"]
    assert ended == [
        {"shuffle": 1, "profile": "classic", "commitment": first["commitment"], "seed": record["seed"], "presses": 2}
    ]


def test_no_new_shuffle_while_firing(rig_factory: Any) -> None:
    rig = rig_factory([4])
    rig.hardware.world.jam()
    ticket = rig.controller.press("web")
    with pytest.raises(PressRefused) as refused:
        rig.controller.new_shuffle()
    assert refused.value.code == "busy"
    assert ticket.wait(5)


def test_every_press_dings_and_a_fire_flashes(rig_factory: Any) -> None:
    rig = rig_factory([0, 3])
    pins = rig.config.pins
    buzzer = rig.hardware.pin_factory.pin(pins.buzzer)
    light = rig.hardware.pin_factory.pin(pins.light)
    buzzer.clear_states()
    assert rig.controller.press("web").wait(5)
    rig.clock.run_until(lambda: any(s.state > 0 for s in buzzer.states), within=0.01)  # the ding: at once
    light.clear_states()
    assert rig.controller.press("web").wait(5)
    rig.clock.run_until(lambda: any(s.state == 1.0 for s in light.states), within=0.2)  # a fire flashes at full


def test_no_press_while_the_lid_is_open_and_opening_it_mid_fire_stops(rig_factory: Any) -> None:
    rig = rig_factory([5, 0])
    rig.hardware.world.jam()  # the fire would run until jam_ms
    ticket = rig.controller.press("web")
    rig.clock.run_until(lambda: rig.motor_duty() > 0, within=0.01)
    opened = rig.clock.now()
    rig.hardware.world.open_lid()
    # The firmware lets the lid's contact settle, then stops the motor at its next pass.
    rig.clock.run_until(lambda: rig.motor_duty() == 0, within=(LID_SETTLE_MS + 2) / 1000)
    assert rig.clock.now() - opened <= (LID_SETTLE_MS + 2) / 1000
    assert ticket.wait(5)
    assert ("launcher.stopped", {"press": 1, "requested": 5, "dispensed": 0, "reason": "lid"}) in rig.events()
    assert ("launcher.lid", {"open": True}) in rig.events()
    with pytest.raises(PressRefused) as refused:
        rig.controller.press("web")
    assert refused.value.code == "lid_open"
    rig.hardware.world.jam(False)
    rig.hardware.world.close_lid()
    rig.clock.run_until(lambda: rig.events()[-1] == ("launcher.lid", {"open": False}), within=0.1)
    assert rig.controller.press("web").wait(5)


def test_the_motor_rests_between_fires(rig_factory: Any) -> None:
    rig = rig_factory([1, 1], fast_config(min_rest_ms=400))
    pressed = rig.clock.now()
    first = rig.controller.press("web")
    rig.clock.run_until(lambda: any(t == "launcher.fired" for t in rig.types()), within=1.0)
    with pytest.raises(PressRefused) as refused:
        rig.controller.press("web")  # the card is out, but the motor is resting
    assert refused.value.code == "busy"
    *_, (_, off) = rig.motor_runs(pressed)  # the fire's last run: its pull-back
    assert off is not None
    rig.clock.sleep(pressed + off + 0.399 - rig.clock.now())
    with pytest.raises(PressRefused):
        rig.controller.press("web")  # a millisecond before the rest is over
    assert first.wait(5)  # a phone's press is answered once the rest is over...
    assert round(rig.clock.now() - pressed, 9) == round(off + 0.4, 9)
    second = rig.controller.press("web")  # ...and then the next fire may start, at once
    assert second.wait(5) and second.result is not None and second.result.dispensed == 1
    runs = rig.motor_runs(pressed)
    assert len(runs) == 4 and round(runs[2][0] - off, 9) == 0.4  # fire, pull-back, 400 ms of rest, fire, pull-back


class Bob:
    """The game at the table with one player, Bob, who is asked for every press and gets whatever it shoots."""

    def __init__(self) -> None:
        self.pressed_for: list[tuple[bool, int]] = []

    def pressed(self, fired: bool, dispensed: int, player: str | None) -> str:
        self.pressed_for.append((fired, dispensed))
        return "Bob"

    def credited(self, player: str | None) -> str:
        return "Bob"

    def cards_owed(self, player: str | None) -> None:
        return None


def test_a_jammed_press_is_credited_to_its_player_costs_nothing_and_the_lid_keeps_it_until_a_press(
    rig_factory: Any,
) -> None:
    """Issue #47: opening the lid kept no word of the card to take out, and shutting it cleared the jam whether the
    card was out or not. No sensor sees a card jammed before the exit beam (docs/HARDWARE.md): while the lid is open
    the jam waits behind it, once it is shut the phones ask whether the card is out, and the next press that brings
    no jam ends it."""
    game = Bob()
    rig = rig_factory([4, 2], game=game)
    rig.hardware.world.jam()
    ticket = rig.controller.press("web")
    assert ticket.wait(5)
    assert ticket.player == "Bob" and game.pressed_for == [], "credited to Bob, but nobody's press is used up"
    jammed = [d for t, d in rig.events() if t == "launcher.jammed"]
    assert jammed == [{"press": 1, "requested": 4, "dispensed": 0, "reason": "no_card", "player": "Bob"}]
    jam = {"code": "jam", "player": "Bob", "press": 1, "owed": []}
    assert rig.controller.snapshot()["trouble"] == {**jam, "opened": False}
    rig.hardware.world.open_lid()
    rig.clock.run_until(lambda: "launcher.lid" in rig.types(), within=1.0)
    lid = {"code": "lid_open", "player": None, "press": None, "owed": []}
    assert rig.controller.snapshot()["trouble"] == {**lid, "player": "Bob", "press": 1, "behind": "jam"}
    rig.hardware.world.close_lid()  # the card perhaps still in: nothing can tell
    rig.clock.run_until(lambda: rig.types().count("launcher.lid") == 2, within=1.0)
    assert rig.controller.snapshot()["trouble"] == {**jam, "opened": True}
    rig.hardware.world.jam(False)  # it was taken out: the next press fires, and the jam is over
    assert rig.controller.press("web").wait(5)
    assert rig.controller.snapshot()["trouble"] is None
    rig.hardware.world.open_lid()  # a lid opened with no jam tells of nothing behind it
    rig.clock.run_until(lambda: rig.types().count("launcher.lid") == 3, within=1.0)
    assert rig.controller.snapshot()["trouble"] == lid


def test_a_short_fire_keeps_the_missing_cards_owed_until_a_refill(rig_factory: Any) -> None:
    """6 drawn, 1 card left in the hopper: 1 comes out, Bob is still owed 5, and the phones are asked to refill."""
    game = Bob()
    rig = rig_factory([6, 3], fast_config(hopper_cards=1), game=game)
    ticket = rig.controller.press("web")
    assert ticket.wait(5)
    assert (ticket.result.dispensed if ticket.result else None, ticket.player) == (1, "Bob")
    assert game.pressed_for == [(True, 1)], "the press fired: it is Bob's"
    fired = [d for t, d in rig.events() if t == "launcher.fired"]
    assert fired[0]["dispensed"] == 1 and fired[0]["owed"] == 5
    owed = [{"player": "Bob", "cards": 5}]
    assert rig.controller.snapshot()["trouble"] == {"code": "short", "player": "Bob", "press": 1, "owed": owed}
    assert rig.controller.press("web").wait(5)  # nothing left: told as an empty hopper, still owing Bob's 5
    trouble = rig.controller.snapshot()["trouble"]
    assert (trouble["code"], trouble["owed"]) == ("empty", owed)
    rig.controller.reload_hopper(112)
    assert rig.controller.snapshot()["trouble"] is None


def test_a_fault_and_a_lost_board_are_trouble_every_phone_reads(rig_factory: Any) -> None:
    rig = rig_factory([0])
    rig.controller.link_changed(False, "gone")
    assert rig.controller.snapshot()["trouble"] == {"code": "board_lost", "player": None, "press": None, "owed": []}
    rig.controller.link_changed(True, "back")
    assert rig.controller.snapshot()["trouble"] is None
