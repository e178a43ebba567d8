"""One config, one behaviour: the same table of fires on both backends, on a virtual clock.

- header: `SimulatedHardware`, the Pi's header as the simulator runs it (firmware/main.py on gpiozero mock pins,
  the simulated hopper and exit around them, reached through `header_link.HeaderHardware`);
- serial: a board on USB, the real host link (`SerialHardware`) and the same simulated board and world
  (tests/sim_board.py), joined by a MemoryWire.

Each case gives what both must report (cards requested and dispensed, why the fire stopped) and how many reverse
pulses the motor made (the jam retry, the pull-back after the count, a jam or a stuck card).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import pytest
from gpiozero.pins.mock import MockFactory

from launcher.config import Config, DispenseConfig, PinsConfig, from_mapping
from launcher.hardware.base import DispenseResult, StopReason
from launcher.hardware.serial_link import SerialHardware
from launcher.hardware.serial_session import BOARD_SETTINGS, HOST_ONLY, PER_FIRE
from launcher.hardware.sim import MemoryWire, SimulatedHardware, SimulatedWorld
from tests.sim_board import SimBoard, board, firmware, on_clock
from tests.virtual_clock import VirtualClock


class Side(Protocol):
    """One backend and the launcher around it."""

    @property
    def cards_out(self) -> int: ...

    @property
    def beam_blocked(self) -> bool: ...

    @property
    def reverses(self) -> int:
        """Reverse pulses of the motor so far."""
        ...

    def jam(self, jammed: bool) -> None: ...

    def stick_card(self) -> None: ...

    def open_lid(self) -> None: ...

    def fire(self, cards: int) -> Callable[[], DispenseResult]:
        """Start a fire; returns its blocking wait."""
        ...

    def close(self) -> None: ...


class _OnTheWorld:
    """A side whose launcher is the simulated world on `factory`'s mock pins."""

    def __init__(self, world: SimulatedWorld, factory: MockFactory, pins: PinsConfig, clock: VirtualClock) -> None:
        self._world = world
        self._backward = factory.pin(pins.motor_backward)
        self._beam = factory.pin(pins.exit_beam)
        self._clock = clock

    @property
    def cards_out(self) -> int:
        return self._world.cards_out

    @property
    def beam_blocked(self) -> bool:
        return not self._beam.state  # low while a card blocks it

    @property
    def reverses(self) -> int:
        states = [bool(s.state) for s in self._backward.states]
        return sum(1 for before, after in itertools.pairwise(states) if after and not before)

    def jam(self, jammed: bool) -> None:
        self._world.jam(jammed)

    def stick_card(self) -> None:
        self._world.stick_card()

    def open_lid(self) -> None:
        self._world.open_lid()


class HeaderSide(_OnTheWorld):
    def __init__(self, clock: VirtualClock, config: Config, hopper: int) -> None:
        self.hardware = SimulatedHardware(config, clock=clock)
        self.hardware.refill(hopper)
        super().__init__(self.hardware.world, self.hardware.pin_factory, config.pins, clock)

    def fire(self, cards: int) -> Callable[[], DispenseResult]:
        return self.hardware.dispenser.start(cards).wait  # its wait runs the control loop

    def close(self) -> None:
        on_clock(self._clock, self.hardware.close)


class SerialSide(_OnTheWorld):
    def __init__(self, clock: VirtualClock, config: Config, hopper: int) -> None:
        wire = MemoryWire(clock)
        self.pico = SimBoard(wire, clock=clock, hopper=hopper, cards_per_second=config.sim.cards_per_second)
        self.host = SerialHardware(port="memory", dispense=config.dispense, clock=clock, opener=wire.open)
        super().__init__(self.pico.world, self.pico.factory, self.pico.config.pins, clock)
        clock.run_until(lambda: self.host.describe()["link"] == "up", within=5)

    def fire(self, cards: int) -> Callable[[], DispenseResult]:
        return self.host.dispenser.start(cards).wait

    def close(self) -> None:
        on_clock(self._clock, self.host.close)
        on_clock(self._clock, self.pico.close)


@dataclasses.dataclass(frozen=True)
class Case:
    cards: int
    dispensed: int
    stop: StopReason
    reverses: int
    ms: int | None = None  # when the settings alone fix how long the fire takes
    dispense: dict[str, int] = dataclasses.field(default_factory=dict)
    hopper: int = 100
    jammed: bool = False
    when: Callable[[Side], bool] | None = None  # once this holds during the fire...
    then: Callable[[Side], None] = lambda side: None  # ...this happens


CASES = {
    "count": Case(3, 3, StopReason.COUNT, reverses=1),
    "jam, reverse, one retry, jam": Case(
        2, 0, StopReason.JAM, reverses=2, ms=300 + 40 + 300, dispense={"jam_ms": 300}, jammed=True
    ),
    "jam cleared by the retry": Case(
        2,
        2,
        StopReason.COUNT,
        reverses=2,
        dispense={"jam_ms": 300},
        jammed=True,
        when=lambda side: side.reverses >= 1,
        then=lambda side: side.jam(False),
    ),
    "card stuck at the exit": Case(
        3,
        2,  # the stuck card has left the hopper: it counts
        StopReason.STUCK,
        reverses=1,
        dispense={"stuck_ms": 200},
        when=lambda side: side.cards_out >= 1 and not side.beam_blocked,
        then=lambda side: side.stick_card(),
    ),
    "lid opened mid-fire": Case(
        3, 1, StopReason.LID, reverses=0, when=lambda side: side.cards_out >= 1, then=lambda side: side.open_lid()
    ),
    "watchdog at max_run_ms": Case(
        2, 0, StopReason.TIMEOUT, reverses=0, ms=300, dispense={"max_run_ms": 300, "jam_ms": 10000}, jammed=True
    ),
    "empty hopper": Case(5, 2, StopReason.JAM, reverses=2, dispense={"jam_ms": 300}, hopper=2),
}

SIDES: dict[str, Callable[[VirtualClock, Config, int], Side]] = {"header": HeaderSide, "serial": SerialSide}


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    clock = VirtualClock()
    yield clock
    clock.close()
    assert clock.stalls == 0


@pytest.mark.parametrize("backend", SIDES)
@pytest.mark.parametrize("case", CASES.values(), ids=CASES)
def test_both_backends_report_the_same(clock: VirtualClock, case: Case, backend: str) -> None:
    config = from_mapping({"dispense": case.dispense})  # checked as a config file is
    side = SIDES[backend](clock, config, case.hopper)
    try:
        side.jam(case.jammed)
        wait = side.fire(case.cards)
        ended: list[DispenseResult] = []
        waiter = clock.thread(lambda: ended.append(wait()), "waiter")
        waiter.start()
        if case.when is not None:
            clock.run_until(lambda: case.when(side), within=10)
            case.then(side)
        clock.run_until(lambda: bool(ended), within=30)
        [result] = ended
        assert (result.requested, result.dispensed, result.stop, side.reverses) == (
            case.cards,
            case.dispensed,
            case.stop,
            case.reverses,
        )
        assert result.ms <= config.dispense.max_run_ms
        if case.ms is not None:
            assert result.ms == case.ms
    finally:
        side.close()


def test_the_board_knows_every_dispense_setting_by_the_same_name_default_and_range() -> None:
    assert set(BOARD_SETTINGS) == set(firmware.SETTINGS)
    assert set(BOARD_SETTINGS) | set(PER_FIRE) | set(HOST_ONLY) == {f.name for f in dataclasses.fields(DispenseConfig)}
    for f in dataclasses.fields(DispenseConfig):
        if f.name in firmware.SETTINGS:
            assert firmware.SETTINGS[f.name] == (f.default, f.metadata["lo"], f.metadata["hi"]), f.name
    max_run = next(f for f in dataclasses.fields(DispenseConfig) if f.name == "max_run_ms")
    assert max_run.metadata["hi"] <= board.MAX_RUN_MS


def test_the_host_configures_every_board_setting(clock: VirtualClock) -> None:
    # Every setting off its default, at the edge of its range: the board must end up with each one.
    changed: dict[str, Any] = {}
    for f in dataclasses.fields(DispenseConfig):
        if f.name in BOARD_SETTINGS:
            changed[f.name] = f.metadata["hi"] if f.default != f.metadata["hi"] else f.metadata["lo"]
    side = SerialSide(clock, from_mapping({"dispense": changed}), hopper=10)
    try:
        assert side.pico.launcher.settings == changed
    finally:
        side.close()
