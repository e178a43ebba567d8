"""The motor obeys its limits under every interleaving: thousands of seeded fires with something striking mid-fire.

Each fire runs on the real `gpio.py` over gpiozero's mock pins and the simulated world, on a virtual clock that
also yields to other threads at random inside the dispenser's lock (every `now()` may give the interpreter away),
with a tiny switch interval. Strikes come from their own thread at a random virtual moment: the lid opens, the
launcher is stopped (as a FAULT or shutdown does), the roller jams, a card sticks in the exit, or the fire simply
outlives `max_run_ms`. After every fire:

- the motor is off when the fire's job returns, and stays off until the next fire starts;
- it never runs after the lid-open callback has returned, until the lid is closed again;
- no run lasts longer than `max_run_ms` (plus one control tick).
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

from launcher.clock import VirtualClock
from launcher.config import Config, DispenseConfig, SimConfig
from launcher.hardware.base import DispenseResult
from launcher.hardware.gpio import Interlocked
from launcher.hardware.sim import SimulatedHardware

TICK_S = 0.01  # the dispenser's control loop period
FIRES_PER_SEED = 1250
SEEDS = range(8)  # 8 x 1,250 = 10,000 fires
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
    writing thread may still hold the dispenser's lock."""
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


def one_fire(
    hw: SimulatedHardware, clock: YieldingClock, moved: threading.Condition, rng: random.Random, n: int
) -> list[Violation]:
    world, dispenser = hw.world, hw.dispenser
    strike = rng.choice(STRIKES)
    cards = rng.randint(1, 6)
    at = rng.uniform(0.0, 0.35)
    on_change = rng.choice((None, rng.randint(1, 12)))  # or strike as the k-th motor write is still in flight
    found: list[Violation] = []
    lid_log_index: list[int] = []

    def strike_now() -> None:
        if on_change is None:
            clock.sleep(at)
        else:
            with moved:
                deadline = clock.now() + 1.0
                while len(world.motor_log) < on_change and clock.now() < deadline:
                    moved.wait(deadline - clock.now())
        if strike == "lid":
            world.open_lid()  # the lid's callback stops the motor before this returns
            lid_log_index.append(len(world.motor_log))
            if world.motor_running:
                found.append(Violation(n, strike, "motor on just after the lid-open callback"))
        elif strike == "stop":
            dispenser.stop()
        elif strike == "jam":
            world.jam(True)
        elif strike == "stick":
            world.stick_card(True)

    world.motor_log.clear()
    try:
        job = dispenser.start(cards)
    except Interlocked:
        return [Violation(n, strike, "a closed lid refused the start")]
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
    if lid_log_index and any(running for _, running in log[lid_log_index[0] :]):
        found.append(Violation(n, strike, "motor switched on while the lid was open"))
    longest = max(runs_of(log), default=0.0)
    if longest > DISPENSE.max_run_ms / 1000 + TICK_S:
        found.append(Violation(n, strike, f"a run of {longest * 1000:.0f} ms"))
    # Put the world right for the next fire.
    world.jam(False)
    world.stick_card(False)
    world.close_lid()
    world.refill(500)
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
        hw.close()
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
