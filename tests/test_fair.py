"""launcher/fair.py: turns across parties, the least served of late first: the count and the lock handed out by it
(the sessions' writes, launcher/access.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from launcher.fair import MEMORY_S, PartyLock, Usage


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_least_served_of_late_goes_first_and_a_flood_is_forgotten_in_time() -> None:
    clock = Clock()
    usage = Usage(clock)
    for _ in range(40):
        usage.served("flood")
    usage.served("phone")
    assert usage.first(["flood", "phone", "new"]) == "new"
    assert usage.first(["flood", "phone"]) == "phone"
    clock.now += 10 * MEMORY_S
    usage.served("phone")  # the phone now, the flood long ago
    assert usage.first(["flood", "phone"]) == "flood"


def test_a_new_party_waits_for_the_holder_only_whatever_a_flood_has_waiting() -> None:
    """20 parties that joined before each have a session write waiting; a new phone's comes last and is next."""
    lock = PartyLock(Clock())
    flood = [f"10.0.0.{n}" for n in range(20)]
    for party in flood:
        with lock.turn(party):
            pass
    order: list[str] = []
    release = threading.Event()

    def write(party: str, hold: threading.Event | None = None) -> None:
        with lock.turn(party):
            order.append(party)
            if hold is not None:
                hold.wait(10)

    holder = threading.Thread(target=write, args=("10.0.0.99", release))
    holder.start()
    until(lambda: order == ["10.0.0.99"])
    threads = [threading.Thread(target=write, args=(p,)) for p in flood]
    for thread in threads:
        thread.start()
    until(lambda: lock.waiting == len(flood))
    phone = threading.Thread(target=write, args=("192.168.1.20",))
    phone.start()
    until(lambda: lock.waiting == len(flood) + 1)
    release.set()
    for thread in [holder, phone, *threads]:
        thread.join(10)
    assert order[:2] == ["10.0.0.99", "192.168.1.20"], order
    assert sorted(order[2:]) == sorted(flood)


def until(done: Callable[[], bool]) -> None:
    """Wait for the threads to reach their waits (bounded): what the test looks at, not a time it asserts."""
    deadline = time.monotonic() + 10
    while not done():
        assert time.monotonic() < deadline, "the threads never got there"
        time.sleep(0.001)
