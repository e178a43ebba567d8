"""The motor obeys its limits under every interleaving: thousands of seeded fires with something striking mid-fire.

Each fire runs on the firmware (firmware/main.py) as a Pi runs it, on the header process's `machine` over gpiozero's
mock pins with the simulated world around them, driven by the daemon's side of the link (`SimulatedHardware`), on a
virtual clock that also yields to other threads at random (every `now()` may give the interpreter away), with a tiny
switch interval. The firmware's loop, its interrupt handlers (on the world's and the striker's threads, as on the
GPIO library's thread in the header process) and the link's threads interleave. Strikes come from their own thread
at a random virtual moment or while a motor write is in flight: the lid opens, the launcher is stopped (as a FAULT
or shutdown does), the roller jams, a card sticks in the exit, or the fire simply outlives `max_run_ms`. After every
fire:

- the motor is off when the fire's job returns, and stays off until the next fire starts;
- once the lid opens it is off within the lid's settling time and one pass of the loop, and stays off while open;
- no run lasts longer than `max_run_ms` (plus one pass of the loop and the millisecond ticks' rounding).
"""

from __future__ import annotations

import dataclasses
import random
import sys
import threading
import time
import traceback
from collections.abc import Iterator

import pytest

from launcher.config import Config, DispenseConfig, SimConfig
from launcher.hardware.base import DispenseResult
from launcher.hardware.header_board import LOOP_S, load_firmware
from launcher.hardware.sim import SimulatedHardware
from tests.sim_board import on_clock
from tests.virtual_clock import VirtualClock

PASS_S = LOOP_S + 0.001  # one pass of the firmware's loop, and its millisecond ticks rounded either way
LID_S = load_firmware().LID_SETTLE_MS / 1000 + PASS_S  # from the lid opening to the motor off, at the latest
FIRES_PER_SEED = 1250
# 2 x 1,250 = 2,500 fires in every run; 8 x 1,250 = 10,000 in the long mode
SEEDS = [0, 1, *(pytest.param(seed, marks=pytest.mark.long) for seed in range(2, 8))]
STRIKES = ("none", "lid", "stop", "jam", "stick", "overrun")

DISPENSE = DispenseConfig(
    pwm=0.8, max_run_ms=400, jam_ms=120, stuck_ms=60, ramp_ms=80, reverse_ms=40, min_rest_ms=0, card_gap_ms=2
)
SIM = SimConfig(cards_per_second=25.0, card_block_ms=3.0, stall_duty=0.15)


class YieldingClock(VirtualClock):
    """A virtual clock whose every reading may hand the interpreter to another thread, inside any lock."""

    def __init__(self, seed: int) -> None:
        # The stall bound only ends a deadlock: with a 1 µs switch interval on a machine busy with other work, a
        # runnable thread can go 20 s without the interpreter (it did: "fire 35 (stick) did not end").
        super().__init__(stall_s=300.0)
        self._random = random.Random(seed)

    def now(self) -> float:
        if self._random.random() < 0.3:
            time.sleep(0)  # a yield point: any other runnable thread goes first
        return super().now()


@dataclasses.dataclass
class Violation:
    fire: int
    strike: str
    what: str


@pytest.fixture
def tiny_switch_interval() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def watch_the_motor(hw: SimulatedHardware, clock: VirtualClock) -> threading.Condition:
    """A condition notified at every motor write, from inside the write: a striker woken by it runs while the
    firmware's loop is still inside its pass."""
    moved = clock.condition()
    world_moved = hw.world.motor_moved

    def motor_moved() -> None:
        world_moved()
        with moved:
            moved.notify_all()

    hw.world.motor_moved = motor_moved  # type: ignore[method-assign]
    return moved


def _stacks() -> str:
    """Where every thread is: what a fire that did not end is waiting for."""
    names = {t.ident: t.name for t in threading.enumerate()}
    return "\n".join(
        f"--- {names.get(ident, ident)}\n" + "".join(traceback.format_stack(frame))
        for ident, frame in sys._current_frames().items()
    )


def runs_of(log: list[tuple[float, bool]]) -> list[float]:
    """The lengths of the motor's runs in a (time, running) log."""
    runs, began = [], None
    for t, running in log:
        if running and began is None:
            began = t
        elif not running and began is not None:
            runs.append(t - began)
            began = None
    return runs


def motor_at(log: list[tuple[float, bool]], t: float) -> bool:
    """Whether the motor ran at time `t`, from a (time, running) log that began with it off."""
    running = False
    for when, state in log:
        if when > t:
            break
        running = state
    return running


def one_fire(
    hw: SimulatedHardware, clock: YieldingClock, moved: threading.Condition, rng: random.Random, n: int
) -> list[Violation]:
    world, dispenser = hw.world, hw.dispenser
    strike = rng.choice(STRIKES)
    cards = rng.randint(1, 6)
    at = rng.uniform(0.0, 0.35)
    on_change = rng.choice((None, rng.randint(1, 12)))  # or strike as the k-th motor write is still in flight
    found: list[Violation] = []
    lid_opened: list[float] = []

    def strike_now() -> None:
        if on_change is None:
            clock.sleep(at)
        else:
            with moved:
                deadline = clock.now() + 1.0
                while len(world.motor_log) < on_change and clock.now() < deadline:
                    moved.wait(deadline - clock.now())
        if strike == "lid":
            lid_opened.append(clock.now())
            world.open_lid()
        elif strike == "stop":
            dispenser.stop()
        elif strike == "jam":
            world.jam(True)
        elif strike == "stick":
            world.stick_card(True)

    world.motor_log.clear()
    job = dispenser.start(cards)
    results: list[DispenseResult] = []
    ended, struck = clock.event(), clock.event()
    worker = clock.thread(lambda: (results.append(job.wait()), ended.set()), "test-worker")

    def strike_and_tell() -> None:
        try:
            strike_now()
        except Exception as e:  # reported as what it is, not as a fire that never ended
            found.append(Violation(n, strike, f"the strike raised {e!r}"))
        finally:
            struck.set()

    striker = clock.thread(strike_and_tell, "test-striker")
    worker.start()
    striker.start()
    assert ended.wait(10.0) and struck.wait(10.0), f"fire {n} ({strike}) did not end\n{_stacks()}"
    if world.motor_running:
        found.append(Violation(n, strike, f"motor on when the job returned {results[0].stop}"))
    clock.sleep(0.3)  # a while after the end: nothing may switch the motor back on
    log = list(world.motor_log)
    if world.motor_running:
        found.append(Violation(n, strike, "motor on 0.3 s after the fire ended"))
    if lid_opened:
        off_by = lid_opened[0] + LID_S
        if motor_at(log, off_by):
            found.append(Violation(n, strike, f"motor still on {LID_S * 1000:.0f} ms after the lid opened"))
        if any(running for t, running in log if t > off_by):
            found.append(Violation(n, strike, "motor switched on while the lid was open"))
    longest = max(runs_of(log), default=0.0)
    if longest > DISPENSE.max_run_ms / 1000 + PASS_S:
        found.append(Violation(n, strike, f"a run of {longest * 1000:.0f} ms"))
    # Put the world right for the next fire, the lid told closed again.
    world.jam(False)
    world.stick_card(False)
    world.close_lid()
    world.refill(500)
    deadline = clock.now() + 1.0
    while hw.inputs.lid_open is not False and clock.now() < deadline:
        clock.sleep(0.005)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_the_motor_obeys_its_limits_whatever_strikes_and_whenever(seed: int, tiny_switch_interval: None) -> None:
    clock = YieldingClock(seed)
    config = dataclasses.replace(Config(), dispense=DISPENSE, sim=SIM)
    hw = SimulatedHardware(config, clock=clock)
    hw.cues.close()  # the light and buzzer play no part in the motor's limits; their thread would only cost time
    moved = watch_the_motor(hw, clock)
    rng = random.Random(seed)
    violations: list[Violation] = []
    try:
        for n in range(FIRES_PER_SEED):
            violations += one_fire(hw, clock, moved, rng, n)
    finally:
        on_clock(clock, hw.close)
        clock.close()
    broken = len({v.fire for v in violations})
    assert violations == [], f"{broken} of {FIRES_PER_SEED} fires broke a limit, first: {violations[:5]}"


def test_a_strike_thread_and_the_worker_really_interleave() -> None:
    """The hunt is only worth something if the threads do interleave: a yield inside the lock lets others in."""
    clock = YieldingClock(1)
    order: list[str] = []
    lock = threading.Lock()

    def holder() -> None:
        with lock:
            order.append("in")
            # Clock readings only, until the other thread has run (bounded). The switch interval is made long,
            # so that only the clock's own yields can let it in.
            for _ in range(100_000):
                if "other" in order:
                    break
                clock.now()
            order.append("out")

    before = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        t = clock.thread(holder, "holder")
        t.start()
        while not order:
            clock.now()
        order.append("other")
        t.join()
    finally:
        sys.setswitchinterval(before)
        clock.close()
    assert order.index("other") < order.index("out")
