"""Wear and care: the launcher's counters as docs/HARDWARE.md ("Wear and care") defines them, counted from the ends
of real fires on simulated hardware, the cleaning hint and its threshold, the cleaning, and the store keeping them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from launcher.config import Config
from launcher.events import EventBus
from launcher.fairplay.schedule import PROFILES
from launcher.fairplay.shuffles import ShuffleBook
from launcher.hardware.base import DispenseResult, StopReason
from launcher.hardware.sim import SimulatedHardware
from launcher.press.controller import Controller
from launcher.press.hopper import Hopper, HopperCount
from launcher.press.ticket import PressTicket
from launcher.press.wear import HINT_JAMS, JAM_LIMIT_PER_1000, WINDOW_FIRES, Period, Wear, WearRecord
from launcher.store import Store, wear_table
from tests.test_controller import ScriptedSchedule, fast_config
from tests.virtual_clock import VirtualClock

CARDS_LEFT = HopperCount(loaded=112, dispensed=10)
RAN_OUT = HopperCount(loaded=112, dispensed=112)


def fresh(since: float = 1000.0) -> WearRecord:
    return WearRecord(Period(since=since), Period(since=since))


def end(stop: StopReason, dispensed: int = 0, ms: int = 100, requested: int = 3) -> DispenseResult:
    return DispenseResult(requested=requested, dispensed=dispensed, ms=ms, stop=stop)


def fires(wear: Wear, jams: int, others: int) -> None:
    """`others` fires that counted their cards, then `jams` that jammed."""
    for _ in range(others):
        wear.fire_ended(end(StopReason.COUNT, dispensed=3), CARDS_LEFT)
    for _ in range(jams):
        wear.fire_ended(end(StopReason.JAM), CARDS_LEFT)


# --- what each counter counts -----------------------------------------------------------------------------------


def test_every_fire_counts_once_and_each_end_in_its_own_counter() -> None:
    wear = Wear(fresh())
    wear.fire_ended(end(StopReason.COUNT, dispensed=3, ms=420), CARDS_LEFT)
    wear.fire_ended(end(StopReason.JAM, dispensed=1, ms=2500), CARDS_LEFT)  # one card, then none even after a retry
    wear.fire_ended(end(StopReason.STUCK, dispensed=2, ms=600), CARDS_LEFT)
    wear.fire_ended(end(StopReason.TIMEOUT, dispensed=0, ms=8000), CARDS_LEFT)
    wear.fire_ended(end(StopReason.LID, dispensed=1, ms=150), CARDS_LEFT)
    wear.fire_ended(end(StopReason.ABORTED, dispensed=0, ms=30), CARDS_LEFT)
    wear.fire_ended(end(StopReason.ERROR, dispensed=0, ms=10), CARDS_LEFT)
    for period in ("lifetime", "since_cleaning"):
        shown = wear.report()[period]
        counted = {k: shown[k] for k in ("fires", "cards", "jams", "stuck", "timeouts", "motor_s")}
        assert counted == {"fires": 7, "cards": 7, "jams": 1, "stuck": 1, "timeouts": 1, "motor_s": 11.7}, period


def test_a_jam_with_the_hopper_counted_empty_is_the_hopper_running_out_not_a_jam() -> None:
    wear = Wear(fresh())
    wear.fire_ended(end(StopReason.JAM, dispensed=2), RAN_OUT)
    lifetime = wear.report()["lifetime"]
    assert (lifetime["fires"], lifetime["cards"], lifetime["jams"]) == (1, 2, 0)


def test_rates_are_per_1000_fires_and_none_before_the_first_fire() -> None:
    wear = Wear(fresh())
    assert wear.report()["lifetime"]["per_1000_fires"] == {"jams": None, "stuck": None, "timeouts": None}
    fires(wear, jams=3, others=117)
    wear.fire_ended(end(StopReason.STUCK), CARDS_LEFT)
    lifetime = wear.report()["lifetime"]
    assert lifetime["per_1000_fires"] == {"jams": 24.8, "stuck": 8.3, "timeouts": 0.0}  # 3 and 1 in 121
    assert lifetime["recent"] == {"fires": 121, "jams": 3, "jams_per_1000_fires": 24.8}


# --- the cleaning hint ------------------------------------------------------------------------------------------


def test_the_documented_threshold() -> None:
    """More than 20 jams per 1,000 fires over the last 200 fires: 5 of them or more."""
    assert (JAM_LIMIT_PER_1000, WINDOW_FIRES, HINT_JAMS) == (20, 200, 5)


def test_the_hint_comes_with_more_than_20_jams_per_1000_of_the_last_200_fires() -> None:
    wear = Wear(fresh())
    fires(wear, jams=4, others=196)  # 20 per 1,000: not more
    assert wear.report()["clean_roller"] is False
    fires(wear, jams=1, others=0)  # the oldest clean fire leaves the window: 5 in 200
    assert wear.report()["clean_roller"] is True
    assert wear.report()["since_cleaning"]["recent"] == {"fires": 200, "jams": 5, "jams_per_1000_fires": 25.0}


def test_the_hint_goes_once_the_jams_are_older_than_the_last_200_fires() -> None:
    wear = Wear(fresh())
    fires(wear, jams=6, others=0)
    assert wear.report()["clean_roller"] is True
    fires(wear, jams=0, others=WINDOW_FIRES - HINT_JAMS + 1)  # 4 of the 6 jams still among the last 200
    assert wear.report()["clean_roller"] is False
    assert wear.report()["lifetime"]["jams"] == 6  # the counters themselves forget nothing


def test_with_fewer_fires_since_cleaning_the_hint_waits_for_5_jams() -> None:
    wear = Wear(fresh())
    fires(wear, jams=4, others=0)  # 1,000 per 1,000, but four jams say little yet
    assert wear.report()["clean_roller"] is False
    fires(wear, jams=1, others=0)
    assert wear.report()["clean_roller"] is True


def test_stuck_cards_and_timeouts_do_not_ask_for_cleaning_the_roller() -> None:
    wear = Wear(fresh())
    for _ in range(10):
        wear.fire_ended(end(StopReason.STUCK), CARDS_LEFT)
        wear.fire_ended(end(StopReason.TIMEOUT), CARDS_LEFT)
        wear.fire_ended(end(StopReason.JAM), RAN_OUT)
    assert wear.report()["clean_roller"] is False


# --- cleaning ---------------------------------------------------------------------------------------------------


def test_cleaning_starts_the_counts_since_cleaning_again_and_keeps_the_lifetime_ones() -> None:
    now = [5000.0]
    wear = Wear(fresh(since=1000.0), wall=lambda: now[0])
    fires(wear, jams=6, others=10)
    assert wear.report()["clean_roller"] is True
    now[0] = 9000.0
    wear.cleaned()
    report = wear.report()
    assert report["clean_roller"] is False
    assert (report["lifetime"]["since"], report["lifetime"]["fires"], report["lifetime"]["jams"]) == (1000.0, 16, 6)
    assert report["since_cleaning"]["since"] == 9000.0
    assert [report["since_cleaning"][k] for k in ("fires", "cards", "jams", "motor_s")] == [0, 0, 0, 0.0]
    assert report["since_cleaning"]["recent"] == {"fires": 0, "jams": 0, "jams_per_1000_fires": None}
    fires(wear, jams=1, others=2)
    assert (wear.report()["lifetime"]["fires"], wear.report()["since_cleaning"]["fires"]) == (19, 3)


# --- kept in the store ------------------------------------------------------------------------------------------


def test_a_new_store_counts_from_zero_since_it_was_made(tmp_path: Path) -> None:
    wear = Wear.kept_in(Store(tmp_path / "store.sqlite3"))
    try:
        report = wear.report()
    finally:
        wear.close()
    assert report["lifetime"]["fires"] == report["since_cleaning"]["fires"] == 0
    assert report["lifetime"]["since"] == report["since_cleaning"]["since"] > 1.7e9  # the wall clock, in seconds


def test_the_counters_and_a_cleaning_outlive_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    wear = Wear.kept_in(Store(path), wall=lambda: 7000.0)
    fires(wear, jams=5, others=3)
    wear.cleaned()
    fires(wear, jams=1, others=1)
    wear.fire_ended(end(StopReason.TIMEOUT, ms=8000), CARDS_LEFT)
    before = wear.report()
    wear.close()  # what is pending is written
    again = Wear.kept_in(Store(path))
    try:
        assert again.report() == before
        assert before["lifetime"]["fires"] == 11 and before["since_cleaning"]["fires"] == 3
        assert before["since_cleaning"]["since"] == 7000.0
    finally:
        again.close()


def test_each_fire_is_saved_without_waiting_for_a_close(tmp_path: Path) -> None:
    """The saver writes as fires end: a kill (no close) keeps every fire whose save was done."""
    path = tmp_path / "store.sqlite3"
    store = Store(path)
    wear = Wear.kept_in(store)
    try:
        fires(wear, jams=1, others=2)
        wear.cleaned()  # waits for its own save, and so for every save handed over before it
        fires(wear, jams=1, others=0)
        wear.cleaned()
        with store.connect() as conn:
            rows = wear_table.load(conn)
    finally:
        wear.close()
    assert (rows["lifetime"]["fires"], rows["lifetime"]["jams"], rows["lifetime"]["cards"]) == (4, 2, 6)
    assert rows["cleaning"]["fires"] == 0


# --- counted from real fires, by the controller's worker --------------------------------------------------------


class Rig:
    def __init__(self, tmp_path: Path, clock: VirtualClock, cards: list[int], config: Config) -> None:
        self.config = config
        self.hardware = SimulatedHardware(config, clock=clock)
        store = Store(tmp_path / "store.sqlite3")
        self.bus = EventBus(store)
        self.wear = Wear(fresh())
        self.controller = Controller(
            hardware=self.hardware,
            shuffles=ShuffleBook(store, self.bus, schedule_factory=lambda profile, seed: ScriptedSchedule(cards)),
            profile=PROFILES["classic"],
            bus=self.bus,
            hopper=Hopper(HopperCount(loaded=config.dispense.hopper_cards, dispensed=0), clock=clock),
            min_rest_ms=config.dispense.min_rest_ms,
            wear=self.wear,
            clock=clock,
        )

    def press(self) -> PressTicket:
        ticket = self.controller.press("web")
        assert ticket.wait(5)
        return ticket

    def close(self) -> None:
        self.controller.close()
        self.hardware.close()
        self.bus.close()


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    clock = VirtualClock(start=100.0)
    yield clock
    clock.close()


def test_fires_on_the_simulated_launcher_are_counted_as_they_end(tmp_path: Path, clock: VirtualClock) -> None:
    config = fast_config()
    rig = Rig(tmp_path, clock, [3, 0, 4, 2, 5], config)
    world = rig.hardware.world
    try:
        rig.press()  # 3 cards
        rig.press()  # a miss: the motor never ran, so no fire
        world.jam()
        jammed = rig.press()  # nothing comes, even after the reverse and the retry
        world.jam(False)
        world.stick_card()
        stuck = rig.press()
        world.stick_card(False)
        rig.press()  # 5 cards
    finally:
        rig.close()
    assert jammed.result is not None and jammed.result.stop is StopReason.JAM
    assert stuck.result is not None and stuck.result.stop is StopReason.STUCK
    d = config.dispense
    assert jammed.result.ms == 2 * d.jam_ms + d.reverse_ms  # from the fire's start to its end, on the clock
    lifetime = rig.wear.report()["lifetime"]
    counted = {k: lifetime[k] for k in ("fires", "cards", "jams", "stuck", "timeouts")}
    assert counted == {"fires": 4, "cards": 8, "jams": 1, "stuck": 1, "timeouts": 0}
    assert rig.wear.report()["since_cleaning"]["fires"] == 4


def test_a_watchdog_cut_off_is_counted(tmp_path: Path, clock: VirtualClock) -> None:
    rig = Rig(tmp_path, clock, [6], fast_config(max_run_ms=100, jam_ms=5000))
    try:
        rig.hardware.world.jam()
        cut = rig.press()
    finally:
        rig.close()
    assert cut.result is not None and cut.result.stop is StopReason.TIMEOUT
    lifetime = rig.wear.report()["lifetime"]
    assert (lifetime["fires"], lifetime["timeouts"], lifetime["motor_s"]) == (1, 1, 0.1)  # max_run_ms


def test_the_motor_time_is_the_sum_of_what_the_fires_measured(tmp_path: Path, clock: VirtualClock) -> None:
    rig = Rig(tmp_path, clock, [3, 5, 2], fast_config())
    try:
        ran = [rig.press().result for _ in range(3)]
    finally:
        rig.close()
    assert rig.wear.record.lifetime.motor_ms == sum(r.ms for r in ran if r is not None) > 0
