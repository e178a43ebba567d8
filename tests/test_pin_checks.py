"""launcher/access/book.py's PIN checks under a flood of joins: joins with the same PIN at once share one check (the red
team's 64 addresses' first joins at once hashed 128 times in a row, one at a time, while a new phone waited)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from launcher.access import book as access
from launcher.access.book import AccessBook, Role
from launcher.clock import Event, RealClock
from launcher.store import Store
from launcher.store.database import STORE_FILE
from tests.test_fair import until

JOINS = 16


class _Watched(RealClock):
    """The real clock, whose events count the threads that wait on them."""

    def __init__(self) -> None:
        self.waiting = 0
        self._lock = threading.Lock()

    def event(self) -> Event:
        watched = self

        class Counted(threading.Event):
            def wait(self, timeout: float | None = None) -> bool:
                with watched._lock:
                    watched.waiting += 1
                return super().wait(timeout)

        return Counted()


@pytest.mark.parametrize(("pin", "opens"), [("864200", Role.TABLE), ("111111", Role.NONE)], ids=["right", "wrong"])
def test_joins_with_the_same_pin_at_once_share_one_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pin: str, opens: Role
) -> None:
    clock = _Watched()
    book = AccessBook(Store(tmp_path / STORE_FILE), threads=clock)
    book.set_pin(Role.TABLE, "864200")
    book.set_pin(Role.ADMIN, "975310")
    hashed: list[str] = []
    release = threading.Event()
    real = access._hash

    def counted(pin: str, salt: bytes) -> bytes:
        hashed.append(pin)
        release.wait(10)  # the first check takes its time: every other join arrives meanwhile
        return real(pin, salt)

    monkeypatch.setattr(access, "_hash", counted)
    roles: list[Role] = []
    joins = [threading.Thread(target=lambda: roles.append(book.role_for_pin(pin, remember=True))) for _ in range(JOINS)]
    for join in joins:
        join.start()
    until(lambda: clock.waiting == JOINS - 1)
    release.set()
    for join in joins:
        join.join(10)
    assert roles == [opens] * JOINS
    assert len(hashed) == 2, f"{JOINS} joins at once hashed {len(hashed)} times (one check is a hash per role)"
    book.role_for_pin(pin, remember=True)
    assert len(hashed) == (2 if opens is Role.TABLE else 4), "a right PIN is remembered, a wrong one is not"
