"""The one way a thread of ours stops: an event, a wake-up for a loop that waits, and a bounded join."""

from __future__ import annotations

import logging
import threading

import pytest

from launcher.threads import StoppableThread
from tests.virtual_clock import VirtualClock


def test_a_waiting_loop_is_woken_and_joined() -> None:
    cond = threading.Condition()
    seen: list[str] = []

    def run() -> None:
        with cond:
            while not worker.stopping.is_set():
                cond.wait()
        seen.append("ended")

    def wake() -> None:
        with cond:
            cond.notify_all()

    worker = StoppableThread(run, "waiter", wake=wake)
    worker.start()
    assert worker.alive
    assert worker.stop() is True
    assert seen == ["ended"] and not worker.alive
    assert worker.stop() is True  # twice is fine


def test_a_stuck_thread_does_not_hold_up_the_shutdown_and_is_named(caplog: pytest.LogCaptureFixture) -> None:
    never = threading.Event()
    worker = StoppableThread(never.wait, "stuck-one")
    worker.start()
    with caplog.at_level(logging.ERROR, logger="launcher.threads"):
        assert worker.stop(timeout=0.01) is False
    assert "stuck-one" in caplog.text
    never.set()
    assert worker.join(5)


def test_stop_from_the_thread_itself_does_not_wait_for_itself() -> None:
    answers: list[bool] = []
    worker = StoppableThread(lambda: answers.append(worker.stop()), "self-stopper")
    worker.start()
    assert worker.join(5)
    assert answers == [False]  # it was still running when it asked
    assert worker.stopping.is_set()


def test_stop_before_start_and_threads_from_a_virtual_clock() -> None:
    assert StoppableThread(lambda: None, "never-started").stop() is True
    clock = VirtualClock()
    try:
        ticks: list[float] = []

        def run() -> None:
            while not worker.stopping.wait(1.0):  # virtual seconds: the clock jumps while every thread waits
                ticks.append(clock.now())
                if len(ticks) == 3:
                    return

        worker = StoppableThread(run, "ticker", clock=clock)
        worker.start()
        clock.run_until(lambda: not worker.alive, within=10)  # this thread waits on the clock too, so it moves
        assert ticks == [1.0, 2.0, 3.0]
    finally:
        clock.close()
