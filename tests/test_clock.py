"""The virtual clock: time moves only when every thread taking part waits, and then exactly to the next deadline."""

from __future__ import annotations

import threading
import time

import pytest

from launcher.clock import REAL_CLOCK
from tests.virtual_clock import VirtualClock


@pytest.fixture
def clock():
    clock = VirtualClock(start=100.0)
    yield clock
    clock.close()


def test_time_stands_still_while_the_test_runs(clock):
    before = clock.now()
    time.sleep(0.02)  # real time passes; virtual time does not
    assert clock.now() == before


def test_a_sleep_returns_at_once_and_moves_time_exactly(clock):
    began = time.monotonic()
    clock.sleep(3600)
    assert clock.now() == 3700.0
    assert time.monotonic() - began < 5  # an hour of virtual time costs no real hour


def test_threads_wake_in_deadline_order_at_their_own_moments(clock):
    woke: list[tuple[str, float]] = []

    def sleeper(name: str, seconds: float) -> None:
        clock.sleep(seconds)
        woke.append((name, clock.now()))

    threads = [clock.thread(lambda n=n, s=s: sleeper(n, s), n) for n, s in (("b", 0.2), ("a", 0.1), ("c", 0.3))]
    for t in threads:
        t.start()
    clock.sleep(1.0)
    assert woke == [("a", 100.1), ("b", 100.2), ("c", 100.3)]


def test_a_notify_wakes_a_waiter_before_its_deadline(clock):
    cond = clock.condition()
    flag = []
    got: list[float] = []

    def waiter() -> None:
        with cond:
            while not flag:
                if not cond.wait(10.0) and clock.now() >= 110.0:
                    break
            got.append(clock.now())

    thread = clock.thread(waiter, "waiter")
    thread.start()
    clock.sleep(2.0)
    with cond:
        flag.append(True)
        cond.notify()
    clock.sleep(1.0)
    assert got == [102.0]


def test_a_timed_out_event_wait_says_so_and_a_set_one_says_so(clock):
    event = clock.event()
    assert event.wait(0.5) is False
    assert clock.now() == 100.5
    setter = clock.thread(lambda: (clock.sleep(0.25), event.set()), "setter")
    setter.start()
    assert event.wait(5.0) is True
    assert clock.now() == 100.75


def test_time_waits_for_a_thread_that_is_still_running():
    clock = VirtualClock()
    release = threading.Event()
    seen: list[float] = []

    def busy() -> None:
        release.wait()  # real work, not on the clock: time must not move meanwhile
        seen.append(clock.now())

    thread = clock.thread(busy, "busy")
    thread.start()
    helper = threading.Thread(target=lambda: (time.sleep(0.05), release.set()))
    helper.start()
    clock.sleep(1.0)
    helper.join()
    thread.join()
    clock.close()
    assert seen == [0.0]


def test_a_thread_takes_part_from_its_start_even_if_the_clock_looks_while_it_starts():
    """A starting thread has an ident a moment before `is_alive()` is true. The clock must not take that moment
    for the thread's end: it did, and the thread then ran unseen, and time jumped past its first sleep (the
    motor-safety hunt's "fire 453 (jam) did not end")."""
    clock = VirtualClock()
    go = threading.Event()
    seen: list[float] = []

    def starts_with_real_work() -> None:
        go.wait(0.5)  # real work before the first wait on the clock: time must stand still meanwhile
        seen.append(clock.now())

    thread = clock.thread(starts_with_real_work, "starting")
    set_native_id = thread._set_native_id  # type: ignore[attr-defined]

    def starting_slowly() -> None:  # between ident and "started": long enough for the clock's 10 ms look
        time.sleep(0.05)
        set_native_id()

    thread._set_native_id = starting_slowly  # type: ignore[attr-defined]
    thread.start()
    clock.sleep(1.0)
    go.set()
    thread.join()
    clock.close()
    assert seen == [0.0]


def test_the_real_clock_is_monotonic_seconds():
    a = REAL_CLOCK.now()
    REAL_CLOCK.sleep(0.001)
    assert REAL_CLOCK.now() > a
