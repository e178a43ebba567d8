"""Light and buzzer cues: pure pattern timing, the sequencer's rules, and the cue thread on gpiozero mock pins."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from itertools import pairwise

import pytest
from gpiozero.exc import GPIOPinInUse
from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.hardware.cues import (
    CALM,
    FAULT,
    MAX_PENDING,
    CueSequencer,
    GpioCues,
    Pattern,
    Step,
    beat_period,
    beat_steps,
    ding_steps,
    fault_steps,
    fired_steps,
    jackpot_steps,
    lid_beep_steps,
    suspense_steps,
)
from tests.conftest import wait_until

LIGHT, BUZZER = 13, 18


class RecordingPWMPin(MockPWMPin):
    """A mock PWM pin that also records every frequency written (MockPWMPin keeps only the duty history)."""

    def __init__(self, factory: MockFactory, info: object) -> None:
        super().__init__(factory, info)
        self.frequencies: list[float | None] = []
        self.fail = False  # set to make every tone fail, like a broken pin driver

    def _set_frequency(self, value: float | None) -> None:
        if self.fail and value is not None:
            raise OSError("pin driver gone")
        super()._set_frequency(value)
        self.frequencies.append(value)


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    factory = MockFactory(pin_class=RecordingPWMPin)
    yield factory
    factory.reset()
    factory.close()


def fast_sleep(seconds: float) -> None:
    time.sleep(min(seconds, 0.001))  # the patterns' order is under test here, not their tempo


def make(factory: MockFactory, **kwargs: object) -> GpioCues:
    cues = GpioCues(light=LIGHT, buzzer=BUZZER, pin_factory=factory, **kwargs)  # type: ignore[arg-type]
    buzzer_pin(factory).frequencies.clear()  # TonalBuzzer's PWM device passes through 100 Hz while it opens
    return cues


def buzzer_pin(factory: MockFactory) -> RecordingPWMPin:
    pin = factory.pin(BUZZER)
    assert isinstance(pin, RecordingPWMPin)
    return pin


def tones_written(factory: MockFactory) -> list[float]:
    return [hz for hz in list(buzzer_pin(factory).frequencies) if hz is not None]


def tones(pattern: Pattern) -> list[float]:
    """The notes a pattern plays, each once, as the pins see them."""
    out: list[float] = []
    last = None
    for step in pattern:
        if step.hz is not None and step.hz != last:
            out.append(step.hz)
        last = step.hz
    return out


def total(pattern: Pattern) -> float:
    return sum(step.seconds for step in pattern)


# --- pure patterns -----------------------------------------------------------------------------------------


def test_beat_period_shortens_strictly_as_tension_rises_within_bounds() -> None:
    periods = [beat_period(i / 200) for i in range(201)]
    assert all(a > b for a, b in pairwise(periods))
    assert periods[0] == pytest.approx(1.6)
    assert periods[-1] == pytest.approx(0.2)
    assert all(0.2 <= p <= 1.6 for p in periods)


@pytest.mark.parametrize("level", [-1.0, 2.0, math.nan, math.inf, "high", None])
def test_beat_period_clamps_nonsense(level: object) -> None:
    assert 0.2 <= beat_period(level) <= 1.6  # type: ignore[arg-type]


def test_a_beat_lasts_its_period_and_ticks_only_above_zero() -> None:
    for level in (0.0, 0.25, 0.5, 0.75, 1.0):
        beat = beat_steps(level)
        assert total(beat) == pytest.approx(beat_period(level))
        assert max(step.light for step in beat) == beat[0].light  # brightest on the beat
    assert tones(beat_steps(0.0)) == []
    assert tones(beat_steps(0.5)) != [] and len(tones(beat_steps(0.5))) == 1
    assert tones(beat_steps(0.25))[0] < tones(beat_steps(1.0))[0]  # the tick rises in pitch with tension


def test_every_pattern_stays_in_the_buzzer_range_and_light_range() -> None:
    patterns = [
        *(beat_steps(i / 10) for i in range(11)),
        suspense_steps(1500),
        ding_steps(),
        lid_beep_steps(),
        fault_steps(),
        *(fired_steps(n) for n in (0, 1, 12, 99)),
        *(jackpot_steps(n) for n in (0, 12, 99)),
    ]
    for pattern in patterns:
        assert pattern
        for step in pattern:
            assert step.seconds > 0
            assert 0 <= step.light <= 1
            assert step.hz is None or 220.0 <= step.hz <= 880.0  # TonalBuzzer's A4 ± 1 octave


def test_suspense_runs_the_fastest_beat_for_the_pause() -> None:
    steps = suspense_steps(1000)
    assert total(steps) == pytest.approx(1.0)
    assert steps[: len(beat_steps(1.0))] == beat_steps(1.0)
    assert suspense_steps(0) == () and suspense_steps(-5) == ()
    assert total(suspense_steps(10**9)) == pytest.approx(60.0)  # a runaway pause is capped


def test_fired_and_jackpot_sound_different_and_the_jackpot_lasts_longer() -> None:
    fired, jackpot = tones(fired_steps(4)), tones(jackpot_steps(4))
    assert fired != jackpot
    assert fired == sorted(fired) and len(set(fired)) == 2  # a rising two-tone
    assert total(jackpot_steps(12)) > total(fired_steps(12))
    assert tones(ding_steps()) not in (fired, jackpot)


def test_one_blink_per_card_shot() -> None:
    def flashes(pattern: Pattern) -> int:
        return sum(1 for a, b in pairwise(pattern) if a.light == 0 and b.light == 1)

    assert [flashes(fired_steps(n)) for n in (1, 5, 12, 40)] == [1, 5, 12, 12]


# --- sequencer ---------------------------------------------------------------------------------------------


def play(sequencer: CueSequencer, n: int) -> list[Step]:
    return [sequencer.next_step() for _ in range(n)]


def test_a_press_cuts_the_beat_plays_the_ding_then_the_new_tempo() -> None:
    seq = CueSequencer()
    play(seq, 3)  # mid-breath
    assert seq.post(ding_steps(), beat_steps(0.5)) is True
    beat = beat_steps(0.5)
    assert play(seq, len(ding_steps()) + len(beat)) == [*ding_steps(), *beat]


def test_one_shots_queue_behind_a_playing_one_shot() -> None:
    seq = CueSequencer()
    seq.post(fired_steps(2), CALM)
    seq.next_step()
    assert seq.post(ding_steps()) is False  # the fanfare finishes first
    rest = play(seq, len(fired_steps(2)) - 1 + len(ding_steps()))
    assert rest == [*fired_steps(2)[1:], *ding_steps()]


def test_the_same_tempo_again_does_not_restart_the_beat() -> None:
    seq = CueSequencer()
    seq.post(background=beat_steps(0.5))
    seq.next_step()
    assert seq.post(background=beat_steps(0.5)) is False
    assert seq.post(background=beat_steps(0.75)) is True


def test_fault_loops_until_idle_or_another_cue() -> None:
    seq = CueSequencer()
    seq.post(suspense_steps(2000))
    seq.next_step()
    assert seq.post(background=FAULT, clear=True) is True  # a fault stops the suspense at once
    assert play(seq, 3 * len(FAULT)) == list(FAULT) * 3
    seq.post(background=CALM, clear=True)
    assert seq.background == CALM
    seq.post(background=FAULT, clear=True)
    seq.post(lid_beep_steps())
    assert seq.background == CALM
    assert play(seq, len(lid_beep_steps())) == list(lid_beep_steps())


def test_one_shot_queue_is_bounded_and_latest_wins() -> None:
    seq = CueSequencer()
    for n in range(1000):
        seq.post(fired_steps(n % 12 + 1), beat_steps(n / 1000))
    assert seq.pending <= MAX_PENDING
    assert seq.background == beat_steps(999 / 1000)


# --- the cue thread on mock pins ---------------------------------------------------------------------------


def test_a_press_rings_the_ding_on_the_buzzer_pin(factory: MockFactory) -> None:
    with make(factory) as cues:  # the real condition wait, not a test sleep
        cues.pressed(0.0)
        wait_until(lambda: 880.0 in tones_written(factory), timeout=5)
        wait_until(lambda: buzzer_pin(factory).frequency is None, timeout=5)  # then silence at tension 0
        assert tones_written(factory) == tones(ding_steps())


def test_fired_and_jackpot_play_different_tone_sequences(factory: MockFactory) -> None:
    played = []
    with make(factory, sleep=fast_sleep) as cues:
        for cue, expected in ((cues.fired, fired_steps(3)), (cues.jackpot, jackpot_steps(3))):
            buzzer_pin(factory).frequencies.clear()
            cue(3)
            wait_until(lambda expected=expected: tones_written(factory) == tones(expected), timeout=10)
            wait_until(lambda: buzzer_pin(factory).frequency is None, timeout=10)
            played.append(tones_written(factory))
    assert played[0] != played[1]


def test_the_light_breathes_and_the_ticks_follow_tension(factory: MockFactory) -> None:
    with make(factory, sleep=fast_sleep) as cues:
        cues.tension(1.0)
        wait_until(lambda: tones_written(factory).count(tones(beat_steps(1.0))[0]) >= 3, timeout=10)
        light = factory.pin(LIGHT)
        assert len({round(s.state, 3) for s in light.states}) > 5  # many brightness levels: a pulse, not a blink


def test_fault_blinks_with_a_low_tone_until_idle(factory: MockFactory) -> None:
    with make(factory, sleep=fast_sleep) as cues:
        cues.fault()
        wait_until(lambda: tones_written(factory).count(220.0) >= 3, timeout=10)
        cues.idle()
        wait_until(lambda: buzzer_pin(factory).frequency is None, timeout=10)
        count = len(tones_written(factory))
        cues.lid_closed()
        wait_until(lambda: len(tones_written(factory)) > count, timeout=10)
        assert tones_written(factory)[count:] == tones(lid_beep_steps())


def test_close_leaves_light_and_buzzer_off_and_twice_is_fine(factory: MockFactory) -> None:
    cues = make(factory)
    cues.jackpot(12)
    wait_until(lambda: tones_written(factory), timeout=5)  # mid-fanfare: light and tone on
    cues.close()
    assert not cues.running
    light, buzzer = factory.pin(LIGHT), buzzer_pin(factory)
    assert light.state == 0 and buzzer.state == 0
    assert buzzer.frequency is None
    cues.close()
    with cues:
        pass  # __exit__ after close is a third close


def test_cues_after_close_do_nothing(factory: MockFactory) -> None:
    cues = make(factory)
    cues.close()
    light, buzzer = factory.pin(LIGHT), buzzer_pin(factory)
    before = (len(light.states), len(buzzer.states), len(buzzer.frequencies))
    cues.pressed(0.5)
    cues.tension(0.9)
    cues.suspense(500)
    cues.fired(3)
    cues.jackpot(12)
    cues.fault()
    cues.lid_closed()
    cues.idle()
    assert (len(light.states), len(buzzer.states), len(buzzer.frequencies)) == before


def test_a_burst_from_many_threads_neither_raises_nor_blocks(factory: MockFactory) -> None:
    cues = make(factory, sleep=fast_sleep)
    errors: list[BaseException] = []

    def hammer(k: int) -> None:
        calls = [
            lambda i: cues.pressed(i / 125),
            lambda i: cues.tension(i / 125),
            lambda i: cues.suspense(i * 10),
            lambda i: cues.fired(i % 12),
            lambda i: cues.jackpot(i),
            lambda i: cues.fault(),
            lambda i: cues.lid_closed(),
            lambda i: cues.idle(),
        ]
        try:
            for i in range(125):
                calls[(i + k) % len(calls)](i)
        except BaseException as e:  # collected, so the test fails here rather than in a thread hook
            errors.append(e)

    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(8)]  # 8 x 125 = 1,000 calls
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert cues.running
    cues.close()
    assert factory.pin(LIGHT).state == 0 and buzzer_pin(factory).frequency is None


def test_nonsense_arguments_do_not_raise(factory: MockFactory) -> None:
    with make(factory, sleep=fast_sleep) as cues:
        cues.pressed(math.nan)
        cues.tension("loud")  # type: ignore[arg-type]
        cues.suspense(None)  # type: ignore[arg-type]
        cues.fired(-3)
        cues.jackpot(math.inf)  # type: ignore[arg-type]
        cues.tension(-1)
        cues.tension([0.5])  # type: ignore[arg-type]
        assert cues.running


def test_a_failing_buzzer_stops_the_thread_with_everything_off(
    factory: MockFactory, caplog: pytest.LogCaptureFixture
) -> None:
    cues = make(factory, sleep=fast_sleep)
    buzzer_pin(factory).fail = True
    cues.pressed(0.5)
    wait_until(lambda: not cues.running, timeout=10)
    assert "cue thread failed" in caplog.text
    assert factory.pin(LIGHT).state == 0 and buzzer_pin(factory).frequency is None
    cues.fired(3)  # still harmless
    cues.close()


def test_a_device_that_cannot_open_releases_the_other(factory: MockFactory) -> None:
    with pytest.raises(GPIOPinInUse):
        GpioCues(light=LIGHT, buzzer=LIGHT, pin_factory=factory)
    with GpioCues(light=LIGHT, buzzer=BUZZER, pin_factory=factory):
        pass  # the light pin was released
