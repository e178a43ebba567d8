"""The thread that brings the button's edge is raised to real-time priority at its first edge, once, so that on a
busy Pi the press wins the processor (docs/BENCHMARKS.md has what it buys): on gpiozero's mock pins, with the
scheduler call recorded, and once for real on this kernel where the test may set it."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from launcher.config import Config, ConfigError, PinsConfig, from_mapping
from launcher.daemon import build_hardware
from launcher.hardware.gpio import GpioInputs
from launcher.hardware.priority import EdgePriority
from tests import test_gpio

PINS = PinsConfig()


factory = test_gpio.factory  # the same mock pins as the dispenser's tests


class Scheduler:
    """Stands for os.sched_setscheduler: notes each call and the thread it came from, or refuses as told."""

    def __init__(self, refuse: OSError | None = None) -> None:
        self.calls: list[tuple[int, int, int, int]] = []  # (thread, pid, policy, priority)
        self._refuse = refuse

    def __call__(self, pid: int, policy: int, param: Any) -> None:
        self.calls.append((threading.get_ident(), pid, policy, param.sched_priority))
        if self._refuse is not None:
            raise self._refuse


def inputs(factory: MockFactory, priority: EdgePriority) -> tuple[GpioInputs, list[int]]:
    made = GpioInputs(pins=PINS, debounce_ms=0, pin_factory=factory, on_lid_open=lambda: None, edge_priority=priority)
    presses: list[int] = []
    made.when_pressed = lambda: presses.append(threading.get_ident())
    return made, presses


def press_from_a_thread(factory: MockFactory) -> int:
    """Press and release the button from a thread of its own, as the GPIO library's thread brings edges."""
    button = factory.pin(PINS.button)
    thread = threading.Thread(target=lambda: (button.drive_low(), button.drive_high()))
    thread.start()
    thread.join()
    assert thread.ident is not None
    return thread.ident


def test_the_thread_that_brings_the_edge_is_raised_once_and_the_press_is_delivered(factory: MockFactory) -> None:
    scheduler = Scheduler()
    button, presses = inputs(factory, EdgePriority(10, set_scheduler=scheduler))
    edge = threading.get_ident()
    pin = factory.pin(PINS.button)
    for _ in range(3):
        pin.drive_low()
        pin.drive_high()
    assert presses == [edge] * 3
    assert scheduler.calls == [(edge, 0, os.SCHED_FIFO, 10)]  # pid 0: the calling thread alone, and only once
    other = press_from_a_thread(factory)  # another thread bringing edges is raised in its turn
    assert scheduler.calls[1:] == [(other, 0, os.SCHED_FIFO, 10)] and presses[-1] == other
    button.close()


def test_a_refusal_is_logged_once_with_what_allows_it_and_every_press_still_counts(
    factory: MockFactory, caplog: pytest.LogCaptureFixture
) -> None:
    scheduler = Scheduler(refuse=PermissionError(1, "Operation not permitted"))
    button, presses = inputs(factory, EdgePriority(10, set_scheduler=scheduler))
    pin = factory.pin(PINS.button)
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            pin.drive_low()
            pin.drive_high()
    assert len(presses) == 3 and len(scheduler.calls) == 1  # not asked again at every edge
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "LimitRTPRIO" in warning and "Operation not permitted" in warning
    button.close()


def test_priority_0_leaves_every_thread_as_it_is(factory: MockFactory) -> None:
    scheduler = Scheduler()
    button, presses = inputs(factory, EdgePriority(0, set_scheduler=scheduler))
    press_from_a_thread(factory)
    assert len(presses) == 1 and scheduler.calls == []
    button.close()


def test_the_daemon_never_raises_a_thread_on_mock_pins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulated hardware and GPIOZERO_PIN_FACTORY=mock: the edges come on a test's or the simulation's threads."""
    scheduler = Scheduler()
    monkeypatch.setattr(os, "sched_setscheduler", scheduler)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    monkeypatch.setenv("GPIOZERO_MOCK_PIN_CLASS", "mockpwmpin")  # the motor is driven by PWM
    for backend in ("gpio", "sim"):
        hardware = build_hardware(Config().replace("hardware", backend=backend))
        try:
            hardware.inputs.when_pressed = lambda: None
            factory = hardware.inputs._button.pin_factory  # the factory the daemon chose
            press_from_a_thread(factory)
        finally:
            hardware.close()
    assert scheduler.calls == []


def test_the_priority_is_configured_from_0_to_99_and_10_by_default() -> None:
    assert Config().hardware.edge_priority == 10
    assert from_mapping({"hardware": {"edge_priority": 0}}).hardware.edge_priority == 0
    with pytest.raises(ConfigError, match=r"hardware\.edge_priority.*100"):
        from_mapping({"hardware": {"edge_priority": 100}})


def test_on_this_kernel_the_thread_really_runs_first_in_first_out(factory: MockFactory) -> None:
    """Real: the kernel's scheduler, where this test may set a real-time priority (root, CAP_SYS_NICE or an
    RLIMIT_RTPRIO, as the service's LimitRTPRIO= gives)."""
    if not _may_take_real_time_priority():
        pytest.skip("this process may not set a real-time priority (no CAP_SYS_NICE, RLIMIT_RTPRIO 0)")
    policies: list[int] = []
    button, _ = inputs(factory, EdgePriority(1))
    button.when_pressed = lambda: policies.append(os.sched_getscheduler(0))
    press_from_a_thread(factory)  # the thread ends: the priority goes with it
    assert policies == [os.SCHED_FIFO]
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the test's own thread is left as it was
    button.close()


def _may_take_real_time_priority() -> bool:
    allowed: list[bool] = []

    def attempt() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        except OSError:
            allowed.append(False)
        else:
            allowed.append(True)

    thread = threading.Thread(target=attempt)  # a thread of its own, which ends with its priority
    thread.start()
    thread.join()
    return allowed == [True]
