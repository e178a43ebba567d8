"""The GPIO dispenser on gpiozero's mock pins: exact counts, and a motor that never runs unbounded."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.config import DispenseConfig, PinsConfig
from launcher.hardware.base import StopReason
from launcher.hardware.gpio import GpioDispenser, GpioHardware
from tests.conftest import wait_until

PINS = PinsConfig()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()
    factory.close()


def make(factory: MockFactory, **settings: int | float) -> GpioDispenser:
    # The test's cards follow each other within microseconds, so no chatter filter unless a test sets one.
    settings = {"card_gap_ms": 0, **settings}
    return GpioDispenser(pins=PINS, dispense=DispenseConfig(**settings), pin_factory=factory)


def card(factory: MockFactory) -> None:
    beam = factory.pin(PINS.exit_beam)
    beam.drive_low()
    beam.drive_high()


def motor_duty(factory: MockFactory) -> float:
    return float(factory.pin(PINS.motor_forward).state)


def test_counts_the_requested_cards_then_stops(factory: MockFactory) -> None:
    dispenser = make(factory, pwm=0.6)
    job = dispenser.start(3)
    assert motor_duty(factory) == pytest.approx(0.6)
    card(factory)
    card(factory)
    assert motor_duty(factory) == pytest.approx(0.6)
    card(factory)
    assert motor_duty(factory) == 0
    result = job.wait()
    assert (result.requested, result.dispensed, result.stop) == (3, 3, StopReason.COUNT)
    card(factory)  # a card that falls out afterwards is nobody's fire
    dispenser.close()


def test_beam_chatter_within_the_card_gap_counts_once(factory: MockFactory) -> None:
    dispenser = make(factory, card_gap_ms=200)
    job = dispenser.start(2)
    for _ in range(5):
        card(factory)  # one card, five edges
    assert motor_duty(factory) > 0
    dispenser.stop()
    assert job.wait().dispensed == 1
    dispenser.close()


def test_watchdog_cuts_the_motor_even_when_nobody_waits(factory: MockFactory) -> None:
    dispenser = make(factory, max_run_ms=150, jam_ms=10000)
    job = dispenser.start(5)
    wait_until(lambda: motor_duty(factory) == 0, timeout=5)
    assert job.wait().stop is StopReason.TIMEOUT
    dispenser.close()


def test_watchdog_holds_when_the_counting_callback_breaks(factory: MockFactory) -> None:
    dispenser = make(factory, max_run_ms=150, jam_ms=10000)

    def broken() -> None:
        raise RuntimeError("counting loop crashed")

    dispenser._beam.when_activated = broken
    dispenser.start(5)
    with pytest.raises(RuntimeError):
        card(factory)
    wait_until(lambda: motor_duty(factory) == 0, timeout=5)
    dispenser.close()


def test_no_card_within_jam_ms_is_a_jam(factory: MockFactory) -> None:
    dispenser = make(factory, jam_ms=80, max_run_ms=5000)
    job = dispenser.start(4)
    card(factory)
    result = job.wait()
    assert (result.dispensed, result.stop) == (1, StopReason.JAM)
    assert motor_duty(factory) == 0
    dispenser.close()


def test_stop_from_another_thread_aborts(factory: MockFactory) -> None:
    dispenser = make(factory)
    job = dispenser.start(4)
    threading.Timer(0.05, dispenser.stop).start()
    assert job.wait().stop is StopReason.ABORTED
    assert motor_duty(factory) == 0
    dispenser.close()


def test_one_fire_at_a_time_and_sane_counts(factory: MockFactory) -> None:
    dispenser = make(factory)
    with pytest.raises(ValueError):
        dispenser.start(0)
    dispenser.start(2)
    with pytest.raises(RuntimeError, match="already in progress"):
        dispenser.start(1)
    dispenser.close()
    assert motor_duty(factory) == 0


def test_hardware_closes_twice_and_works_in_with(factory: MockFactory) -> None:
    presses: list[int] = []
    with GpioHardware(pins=PINS, dispense=DispenseConfig(), pin_factory=factory) as hardware:
        hardware.inputs.when_pressed = lambda: presses.append(1)
        factory.pin(PINS.button).drive_low()
        factory.pin(PINS.button).drive_high()
        assert hardware.describe()["backend"] == "gpio"
    hardware.close()
    assert presses == [1]
    # Every pin is free again: a second launcher can be built on the same factory.
    GpioHardware(pins=PINS, dispense=DispenseConfig(), pin_factory=factory).close()
