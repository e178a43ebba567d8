"""The thread that brings the button's edge to the firmware in the header process is raised to real-time priority at
its first edge, once, so that on a busy Pi the press wins the processor (docs/BENCHMARKS.md has what it buys): the
header process's `machine` on gpiozero's mock pins, with the scheduler call recorded, and once for real on this
kernel where the test may set it."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.config import Config, ConfigError, PinsConfig, from_mapping
from launcher.daemon import build_hardware
from launcher.hardware import header_link
from launcher.hardware.header_board import HeaderMachine
from launcher.hardware.priority import EdgePriority

PINS = PinsConfig()


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    made = MockFactory(pin_class=MockPWMPin)
    yield made
    made.close()


class Scheduler:
    """Stands for os.sched_setscheduler: notes each call and the thread it came from, or refuses as told."""

    def __init__(self, refuse: OSError | None = None) -> None:
        self.calls: list[tuple[int, int, int, int]] = []  # (thread, pid, policy, priority)
        self._refuse = refuse

    def __call__(self, pid: int, policy: int, param: Any) -> None:
        self.calls.append((threading.get_ident(), pid, policy, param.sched_priority))
        if self._refuse is not None:
            raise self._refuse


class Button:
    """The big button as the firmware opens it on the header process's `machine`: presses note their thread."""

    def __init__(self, factory: MockFactory, priority: EdgePriority) -> None:
        motor = (PINS.motor_forward, PINS.motor_backward, PINS.motor_enable)
        self.machine = HeaderMachine(motor=motor, pin_factory=factory, priority=priority)
        self.presses: list[int] = []
        self.policies: list[int] = []  # the scheduling policy of the thread that brought each press
        pin = self.machine.Pin(PINS.button, self.machine.Pin.IN, self.machine.Pin.PULL_UP)
        pin.irq(self._pressed, self.machine.Pin.IRQ_FALLING)

    def _pressed(self, pin: object) -> None:
        self.presses.append(threading.get_ident())
        self.policies.append(os.sched_getscheduler(0))

    def close(self) -> None:
        self.machine.close()


def inputs(factory: MockFactory, priority: EdgePriority) -> tuple[Button, list[int]]:
    made = Button(factory, priority)
    return made, made.presses


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
    hardware = build_hardware(Config())
    try:
        press_from_a_thread(hardware.pin_factory)  # type: ignore[attr-defined]
    finally:
        hardware.close()
    assert scheduler.calls == []
    # The header process on mock pins is told priority 0.
    asked: list[int] = []
    real_command = header_link.board_command

    def command(pins: PinsConfig, *, max_run_ms: int, priority: int) -> list[str]:
        asked.append(priority)
        return real_command(pins, max_run_ms=max_run_ms, priority=priority)

    monkeypatch.setattr(header_link, "board_command", command)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    monkeypatch.setenv("GPIOZERO_MOCK_PIN_CLASS", "mockpwmpin")  # the motor is driven by PWM
    build_hardware(Config().replace("hardware", backend="gpio")).close()
    assert asked == [0]


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
    button, _ = inputs(factory, EdgePriority(1))
    press_from_a_thread(factory)  # the thread ends: the priority goes with it
    assert button.policies == [os.SCHED_FIFO]
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
