"""The GPIO dispenser on gpiozero's mock pins: exact counts, and a motor that never runs unbounded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.clock import VirtualClock
from launcher.config import DispenseConfig, PinsConfig
from launcher.hardware.base import StopReason
from launcher.hardware.gpio import GpioDispenser, GpioHardware, Interlocked

PINS = PinsConfig()


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    clock = VirtualClock(start=1000.0)
    yield clock
    clock.close()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()
    factory.close()


def make(factory: MockFactory, clock: VirtualClock, **settings: int | float) -> GpioDispenser:
    # The test's cards follow each other at once, so no chatter filter unless a test sets one;
    # no soft start or reverse pulse either, unless the test is about them.
    settings = {"card_gap_ms": 0, "ramp_ms": 0, "reverse_ms": 0, **settings}
    return GpioDispenser(pins=PINS, dispense=DispenseConfig(**settings), pin_factory=factory, clock=clock)


def card(factory: MockFactory) -> None:
    beam = factory.pin(PINS.exit_beam)
    beam.drive_low()
    beam.drive_high()


def motor_duty(factory: MockFactory) -> float:
    return float(factory.pin(PINS.motor_forward).state)


def test_counts_the_requested_cards_then_stops(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, pwm=0.6)
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


def test_beam_chatter_within_the_card_gap_counts_once(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, card_gap_ms=200)
    job = dispenser.start(2)
    for _ in range(5):
        card(factory)  # one card, five edges
    assert motor_duty(factory) > 0
    dispenser.stop()
    assert job.wait().dispensed == 1
    dispenser.close()


def test_watchdog_cuts_the_motor_even_when_nobody_waits(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, max_run_ms=150, jam_ms=10000)
    job = dispenser.start(5)
    clock.sleep(0.1499)
    assert motor_duty(factory) > 0
    clock.sleep(0.0002)
    assert motor_duty(factory) == 0  # at max_run_ms
    assert job.wait().stop is StopReason.TIMEOUT
    dispenser.close()


def test_watchdog_holds_when_the_counting_callback_breaks(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, max_run_ms=150, jam_ms=10000)

    def broken() -> None:
        raise RuntimeError("counting loop crashed")

    dispenser._beam.when_activated = broken
    dispenser.start(5)
    with pytest.raises(RuntimeError):
        card(factory)
    clock.sleep(0.1502)
    assert motor_duty(factory) == 0
    dispenser.close()


def test_no_card_within_jam_ms_is_a_jam(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, jam_ms=80, max_run_ms=5000)
    job = dispenser.start(4)
    card(factory)
    result = job.wait()
    assert (result.dispensed, result.stop) == (1, StopReason.JAM)
    assert motor_duty(factory) == 0
    dispenser.close()


def test_stop_from_another_thread_aborts(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock)
    job = dispenser.start(4)
    clock.thread(lambda: (clock.sleep(0.05), dispenser.stop()), "stopper").start()
    assert job.wait().stop is StopReason.ABORTED
    assert clock.now() == pytest.approx(1000.05)
    assert motor_duty(factory) == 0
    dispenser.close()


def test_one_fire_at_a_time_and_sane_counts(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock)
    with pytest.raises(ValueError):
        dispenser.start(0)
    dispenser.start(2)
    with pytest.raises(RuntimeError, match="already in progress"):
        dispenser.start(1)
    dispenser.close()
    assert motor_duty(factory) == 0


def test_hardware_closes_twice_and_works_in_with(factory: MockFactory, clock: VirtualClock) -> None:
    presses: list[int] = []
    with GpioHardware(pins=PINS, dispense=DispenseConfig(), pin_factory=factory, clock=clock) as hardware:
        hardware.inputs.when_pressed = lambda: presses.append(1)
        factory.pin(PINS.button).drive_low()
        factory.pin(PINS.button).drive_high()
        assert hardware.describe()["backend"] == "gpio"
    hardware.close()
    assert presses == [1]
    # Every pin is free again: a second launcher can be built on the same factory.
    GpioHardware(pins=PINS, dispense=DispenseConfig(), pin_factory=factory, clock=clock).close()


def duties(factory: MockFactory, pin: int) -> list[float]:
    return [float(s.state) for s in factory.pin(pin).states]


def test_soft_start_ramps_up_to_the_duty(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, pwm=0.9, ramp_ms=60, jam_ms=5000)
    factory.pin(PINS.motor_forward).clear_states()
    job = dispenser.start(1)
    assert motor_duty(factory) == pytest.approx(0.3)  # a third of the duty at once
    waiter = clock.thread(job.wait, "waiter")
    waiter.start()
    clock.sleep(0.03)
    assert 0.3 < motor_duty(factory) < 0.9  # halfway up
    clock.sleep(0.0301)
    assert motor_duty(factory) == pytest.approx(0.9)  # all of it at ramp_ms
    card(factory)
    waiter.join(5)
    rising = [d for d in duties(factory, PINS.motor_forward) if d > 0]
    assert rising == sorted(rising) and rising[0] == pytest.approx(0.3) and rising[-1] == pytest.approx(0.9)
    dispenser.close()


def test_a_worker_500_ms_late_still_gives_full_duty_at_once(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, pwm=0.9, ramp_ms=300, jam_ms=5000)
    job = dispenser.start(1)
    clock.sleep(0.5)  # the thread that should ramp the motor up comes half a second late (a busy Pi, a GC pause)
    assert motor_duty(factory) == pytest.approx(0.3)
    waiter = clock.thread(job.wait, "late-waiter")
    waiter.start()
    clock.sleep(0.001)
    assert motor_duty(factory) == pytest.approx(0.9)
    card(factory)
    waiter.join(5)
    dispenser.close()


def test_a_reverse_pulse_pulls_back_the_last_card(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, reverse_ms=30)
    factory.pin(PINS.motor_backward).clear_states()
    job = dispenser.start(1)
    card(factory)
    assert job.wait().stop is StopReason.COUNT
    assert duties(factory, PINS.motor_backward) == [0.0, pytest.approx(0.8), 0.0]  # one pulse, then off
    assert motor_duty(factory) == 0
    dispenser.close()


def test_a_jam_is_retried_once_after_pulling_back(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, jam_ms=60, reverse_ms=20, max_run_ms=5000)
    factory.pin(PINS.motor_forward).clear_states()
    factory.pin(PINS.motor_backward).clear_states()
    result = dispenser.start(2).wait()
    assert result.stop is StopReason.JAM
    forward_starts = sum(
        1
        for a, b in zip(duties(factory, PINS.motor_forward), duties(factory, PINS.motor_forward)[1:], strict=False)
        if a == 0 and b > 0
    )
    assert forward_starts == 2, "the first try and one retry"
    assert duties(factory, PINS.motor_backward).count(pytest.approx(0.8)) >= 2  # before the retry, and after
    assert motor_duty(factory) == 0
    dispenser.close()


def test_a_retry_that_brings_cards_is_not_a_jam(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, jam_ms=80, reverse_ms=20, max_run_ms=5000)
    job = dispenser.start(1)
    retried: list[bool] = []

    def card_after_the_retry() -> None:
        clock.sleep(0.09)  # jam_ms has passed: the motor pulls back
        retried.append(float(factory.pin(PINS.motor_backward).state) > 0)
        clock.sleep(0.02)  # reverse_ms later: forward again
        retried.append(motor_duty(factory) > 0)
        card(factory)

    helper = clock.thread(card_after_the_retry, "helper")
    helper.start()
    result = job.wait()
    helper.join(5)
    assert retried == [True, True] and (result.dispensed, result.stop) == (1, StopReason.COUNT)
    dispenser.close()


def test_a_card_stuck_in_the_beam_stops_the_motor(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, stuck_ms=50, jam_ms=5000)
    job = dispenser.start(3)
    factory.pin(PINS.exit_beam).drive_low()  # a card goes in and stays
    result = job.wait()
    assert (result.dispensed, result.stop) == (1, StopReason.STUCK)
    assert motor_duty(factory) == 0
    factory.pin(PINS.exit_beam).drive_high()
    dispenser.close()


def test_1000_presses_with_5_ms_of_contact_bounce_are_1000_presses(factory: MockFactory, clock: VirtualClock) -> None:
    hardware = GpioHardware(pins=PINS, dispense=DispenseConfig(debounce_ms=30), pin_factory=factory, clock=clock)
    factory.pin(PINS.lid).drive_low()
    presses: list[float] = []
    hardware.inputs.when_pressed = lambda: presses.append(clock.now())
    button = factory.pin(PINS.button)
    for _ in range(1000):
        for _ in range(4):  # the contact bounces for 5 ms as it closes...
            button.drive_low()
            clock.sleep(0.0006)
            button.drive_high()
            clock.sleep(0.0006)
        button.drive_low()
        clock.sleep(0.08)  # ...held down...
        for _ in range(4):  # ...and bounces again as it opens
            button.drive_high()
            clock.sleep(0.0006)
            button.drive_low()
            clock.sleep(0.0006)
        button.drive_high()
        clock.sleep(0.2)  # the finger comes back a moment later
    hardware.close()
    assert len(presses) == 1000


def test_opening_the_lid_stops_the_motor_at_once_and_blocks_fires(factory: MockFactory, clock: VirtualClock) -> None:
    hardware = GpioHardware(pins=PINS, dispense=DispenseConfig(jam_ms=5000), pin_factory=factory, clock=clock)
    lid = factory.pin(PINS.lid)
    lid.drive_low()  # closed
    changes: list[bool] = []
    hardware.inputs.when_lid_changed = changes.append
    job = hardware.dispenser.start(3)
    assert motor_duty(factory) > 0
    lid.drive_high()  # opened: the motor stops inside this very callback
    assert motor_duty(factory) == 0
    assert job.wait().stop is StopReason.LID
    assert hardware.inputs.lid_open and changes == [True]
    with pytest.raises(Interlocked):
        hardware.dispenser.start(1)
    assert motor_duty(factory) == 0
    lid.drive_low()
    assert changes == [True, False]
    hardware.close()


def test_a_card_already_in_the_exit_is_stuck_not_a_jam(factory: MockFactory, clock: VirtualClock) -> None:
    dispenser = make(factory, clock, stuck_ms=50, jam_ms=5000)
    factory.pin(PINS.exit_beam).drive_low()  # left there by the last fire
    result = dispenser.start(2).wait()
    assert (result.dispensed, result.stop) == (0, StopReason.STUCK)
    assert clock.now() == pytest.approx(1000.05, abs=GpioDispenser.TICK_S)
    factory.pin(PINS.exit_beam).drive_high()
    dispenser.close()
