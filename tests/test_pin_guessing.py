"""Guessing the table PIN from a network with unlimited addresses: an expected month or more, while the phones
already joined carry on and the admin is never locked out for good."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.access.book import PinGuard, Role, TooManyTries, make_up_pin
from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, ManualClock, hand_the_app, joined_client, local_config

DAY_S = 24 * 3600


def attack(guard: PinGuard, clock: ManualClock, guesses: int, addresses: int, spread_s: float) -> int:
    """`guesses` wrong PINs from `addresses` rotating addresses over `spread_s` seconds; how many were checked."""
    checked = 0
    for n in range(guesses):
        address = f"10.{n % addresses // 250}.{n % 250}.{1 + n % addresses // 62500}"
        try:
            guard.take(address)
            checked += 1
        except TooManyTries:
            pass
        clock.now += spread_s / guesses
    return checked


@pytest.mark.parametrize("spread_s", [50.0, 10 * 3600.0], ids=["a burst", "spread over 10 hours"])
def test_10000_guesses_from_5000_addresses_would_take_a_month_to_find_the_table_pin(spread_s: float) -> None:
    clock = ManualClock()
    guard = PinGuard(clock=clock)
    checked = attack(guard, clock, guesses=10_000, addresses=5_000, spread_s=spread_s)
    # An attacker who keeps this up checks `checked` PINs per `spread_s`; on average half of all PINs are tried
    # before the right one. The burst's start-up allowance does not repeat, so the spread attack is the rate.
    per_second = checked / spread_s if spread_s > 3600 else (checked - PinGuard.BUDGET) / spread_s
    space = 10 ** len(make_up_pin(Role.TABLE))
    expected_days = space / 2 / max(per_second, 1e-12) / DAY_S
    assert expected_days >= 30, f"{checked} of 10,000 guesses checked: found in {expected_days:.1f} days"
    assert checked <= PinGuard.BUDGET + PinGuard.BUDGET_PER_HOUR * spread_s / 3600 + 1


def test_a_waiting_client_is_never_forgotten_however_many_others_guess() -> None:
    clock = ManualClock()
    guard = PinGuard(clock=clock)
    for _ in range(PinGuard.FREE_TRIES):
        guard.take("192.168.1.66")
    with pytest.raises(TooManyTries):
        guard.take("192.168.1.66")
    attack(guard, clock, guesses=10_000, addresses=5_000, spread_s=20.0)
    with pytest.raises(TooManyTries):
        guard.take("192.168.1.66")  # still waiting: 20 s of its 30 s have passed


def spend_the_budget(guard: PinGuard) -> None:
    """Wrong PINs from ever new addresses until the table's budget is spent."""
    for n in range(PinGuard.BUDGET + 1):
        try:
            guard.take(f"10.9.{n // 250}.{n % 250}")
        except TooManyTries as e:
            assert e.everyone
            return
    pytest.fail("the budget was never spent")


def test_the_admin_is_locked_out_only_until_the_attack_stops() -> None:
    clock = ManualClock()
    guard = PinGuard(clock=clock)
    attack(guard, clock, guesses=10_000, addresses=5_000, spread_s=60.0)
    spend_the_budget(guard)
    with pytest.raises(TooManyTries) as refused:
        guard.take("192.168.1.2")  # the admin's phone, never wrong before: the table's budget is spent
    assert refused.value.everyone and "on this network" in str(refused.value)
    assert 0 < refused.value.retry_after_s <= 3600 / PinGuard.BUDGET_PER_HOUR + 1
    clock.now += refused.value.retry_after_s
    assert guard.take("192.168.1.2") == PinGuard.FREE_TRIES - 1  # a try is checked again
    guard.forgive("192.168.1.2")  # it was the right PIN: the try goes back to the budget
    assert guard.take("192.168.1.3") == PinGuard.FREE_TRIES - 1


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path), virtual=True)


def test_joined_phones_carry_on_while_the_budget_is_spent(daemon: Daemon) -> None:
    clock = ManualClock()
    guard = hand_the_app(daemon, pin_guard=PinGuard(clock=clock)).pin_guard
    phone = joined_client(daemon)
    attack(guard, clock, guesses=2_000, addresses=1_000, spread_s=30.0)
    spend_the_budget(guard)
    stranger = daemon.app.test_client()
    stranger.environ_base["REMOTE_ADDR"] = "192.168.1.77"
    waits = stranger.post("/api/session", json={"pin": "123456"})  # not checked against the budget: it waits
    assert waits.status_code == 202 and waits.get_json()["role"] == "none"  # for the button (tests/test_doorbell.py)
    assert phone.post("/api/press").status_code == 200
    assert phone.get("/api/session").get_json()["role"] == "table"
