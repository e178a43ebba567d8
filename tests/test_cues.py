"""Light and buzzer cues: pure pattern timing, the sequencer's rules, and the cue thread on gpiozero mock pins.

The cue thread runs on a virtual clock: every note and every change of the light is recorded at its virtual
moment, so the pins are checked to play each pattern exactly as written, step by step.
"""

from __future__ import annotations

import math
import threading
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
from tests.virtual_clock import VirtualClock

LIGHT, BUZZER = 13, 18

Timeline = list[tuple[float, float | None]]  # (seconds after a cue, value) at each change


class RecordingPWMPin(MockPWMPin):
    """A mock PWM pin that records, at the virtual moment, every frequency written, every change of duty, and
    what a buzzer on it sounds: its frequency while the duty is above 0, None for silence."""

    def __init__(self, factory: MockFactory, info: object) -> None:
        self.clock: VirtualClock = factory.clock  # type: ignore[attr-defined]
        self.duties: list[tuple[float, float]] = []
        self.frequencies: list[tuple[float, float | None]] = []
        self.sounds: list[tuple[float, float | None]] = []
        self.fail = False  # set to make every tone fail, like a broken pin driver
        super().__init__(factory, info)

    def _change_state(self, value: float) -> bool:
        changed = super()._change_state(value)
        if changed:
            self.duties.append((self.clock.now(), float(value)))
            self._sounded()
        return changed

    def _set_frequency(self, value: float | None) -> None:
        if self.fail and value is not None:
            raise OSError("pin driver gone")
        super()._set_frequency(value)
        self.frequencies.append((self.clock.now(), value))
        self._sounded()

    def _sounded(self) -> None:
        sound = self.frequency if self.frequency is not None and self.state > 0 else None
        if (self.sounds[-1][1] if self.sounds else None) != sound:
            self.sounds.append((self.clock.now(), sound))


@pytest.fixture
def clock() -> Iterator[VirtualClock]:
    clock = VirtualClock(start=500.0)
    yield clock
    clock.close()


@pytest.fixture
def factory(clock: VirtualClock) -> Iterator[MockFactory]:
    factory = MockFactory(pin_class=RecordingPWMPin)
    factory.clock = clock  # type: ignore[attr-defined]
    yield factory
    factory.reset()
    factory.close()


def make(factory: MockFactory, clock: VirtualClock) -> GpioCues:
    cues = GpioCues(light=LIGHT, buzzer=BUZZER, pin_factory=factory, clock=clock)
    buzzer_pin(factory).frequencies.clear()  # the PWM the buzzer keeps for its whole life, set as it opens
    return cues


def buzzer_pin(factory: MockFactory) -> RecordingPWMPin:
    pin = factory.pin(BUZZER)
    assert isinstance(pin, RecordingPWMPin)
    return pin


def light_pin(factory: MockFactory) -> RecordingPWMPin:
    pin = factory.pin(LIGHT)
    assert isinstance(pin, RecordingPWMPin)
    return pin


def tones_written(factory: MockFactory) -> list[float]:
    return [hz for _, hz in list(buzzer_pin(factory).sounds) if hz is not None]


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


def written(records: list[tuple[float, float | None]], start: float, end: float) -> Timeline:
    """What a pin was given from `start` (inclusive) to `end` (exclusive), timed from `start`."""
    return [(round(t - start, 9), v) for t, v in list(records) if start - 1e-9 <= t < end - 1e-9]


def held_before(records: list[tuple[float, float | None]], moment: float, initial: float | None) -> float | None:
    """What a pin held just before `moment`."""
    earlier = [v for t, v in list(records) if t < moment - 1e-9]
    return earlier[-1] if earlier else initial


def score(pattern: Pattern, field: str, before: float | None) -> Timeline:
    """The changes a pattern asks of one pin (`light` or `hz`), timed from its start: what the pin must show."""
    out: Timeline = []
    t, last = 0.0, before
    for step in pattern:
        value = getattr(step, field)
        if value != last:
            out.append((round(t, 9), value))
            last = value
        t += step.seconds
    return out


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
            assert step.hz is None or 220.0 <= step.hz <= 880.0  # A4 ± 1 octave


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


# --- the cue thread on mock pins, on the virtual clock ----------------------------------------------------


def test_a_press_rings_the_ding_at_once_for_its_length_then_breathes_calm(
    factory: MockFactory, clock: VirtualClock
) -> None:
    with make(factory, clock) as cues:
        clock.sleep(0.31)  # mid-breath (between two of its 25 ms frames: no tie with the cue thread)
        pressed = clock.now()
        cues.pressed(0.0)
        clock.sleep(1.0)
        assert written(buzzer_pin(factory).sounds, pressed, pressed + 1.0) == [(0.0, 880.0), (0.09, None)]
        # the ding's flash, its half-light tail, then the calm beat from its brightest frame
        assert written(light_pin(factory).duties, pressed, pressed + 0.16) == [
            (0.0, 1.0),
            (0.09, 0.5),
            (0.15, CALM[0].light),
        ]


@pytest.mark.parametrize("cue", ["fired", "jackpot"])
def test_fired_and_jackpot_play_their_pattern_exactly_on_the_pins(
    factory: MockFactory, clock: VirtualClock, cue: str
) -> None:
    pattern = {"fired": fired_steps(3), "jackpot": jackpot_steps(3)}[cue]
    with make(factory, clock) as cues:
        clock.sleep(0.51)  # mid-frame of the calm beat: no tie with the cue thread
        light, buzzer = light_pin(factory), buzzer_pin(factory)
        began = clock.now()
        getattr(cues, cue)(3)
        clock.sleep(total(pattern) + 1.0)
        end = began + total(pattern)
        assert written(buzzer.sounds, began, end) == score(pattern, "hz", None)
        assert written(light.duties, began, end) == score(pattern, "light", held_before(light.duties, began, 0.0))
        assert written(buzzer.sounds, end, clock.now()) == []  # calm again: no tick
        assert written(light.duties, end, end + 1e-6) == [(0.0, CALM[0].light)]  # the calm beat starts right after


def test_the_ticks_follow_the_tension_beat_by_beat(factory: MockFactory, clock: VirtualClock) -> None:
    light = light_pin(factory)
    with make(factory, clock) as cues:
        slow, fast = beat_period(0.25), beat_period(1.0)
        clock.sleep(0.01)  # mid-frame of the calm beat
        first = clock.now()
        cues.tension(0.25)
        clock.sleep(2.5 * slow)  # cut mid-beat by the next tension
        second = clock.now()
        cues.tension(1.0)
        clock.sleep(0.9)
        ticks = [t for t, hz in buzzer_pin(factory).sounds if hz is not None]
        expected = [first, first + slow, first + 2 * slow, *(second + k * fast for k in range(5))]
        assert [round(t - first, 9) for t in ticks] == [round(t - first, 9) for t in expected]
        assert tones_written(factory) == [tones(beat_steps(0.25))[0]] * 3 + [tones(beat_steps(1.0))[0]] * 5
        # the light breathes through every frame of a beat, as the pattern says, not a blink
        beat = beat_steps(0.25)
        assert written(light.duties, first, first + slow) == score(beat, "light", held_before(light.duties, first, 0))
        assert len({v for _, v in written(light.duties, first, first + slow)}) > 5


def test_fault_blinks_with_a_low_tone_until_idle_which_silences_it_at_once(
    factory: MockFactory, clock: VirtualClock
) -> None:
    with make(factory, clock) as cues:
        clock.sleep(0.01)
        began = clock.now()
        cues.fault()
        clock.sleep(1.0)  # 0.3 s a blink: the fourth is sounding
        buzzer = buzzer_pin(factory)
        assert written(buzzer.sounds, began, clock.now()) == [
            (0.0, 220.0),
            (0.15, None),
            (0.3, 220.0),
            (0.45, None),
            (0.6, 220.0),
            (0.75, None),
            (0.9, 220.0),
        ]
        idle = clock.now()
        cues.idle()
        clock.sleep(0.5)
        assert written(buzzer.sounds, idle, clock.now()) == [(0.0, None)]  # not at the end of the blink
        closed = clock.now()
        cues.lid_closed()
        clock.sleep(1.0)
        assert written(buzzer.sounds, closed, clock.now()) == score(lid_beep_steps(), "hz", None)


def test_a_suspense_pause_plays_the_fast_beat_for_exactly_the_pause(factory: MockFactory, clock: VirtualClock) -> None:
    with make(factory, clock) as cues:
        clock.sleep(0.01)
        began = clock.now()
        cues.suspense(500)
        clock.sleep(1.0)
        ticks = [round(t - began, 9) for t, hz in buzzer_pin(factory).sounds if hz is not None]
        assert ticks == [0.0, 0.2, 0.4]  # the fastest beat, cut at 0.5 s
        light = light_pin(factory)
        assert written(light.duties, began + 0.5, began + 0.5 + 1e-6) == [(0.0, CALM[0].light)]


def test_close_leaves_light_and_buzzer_off_and_twice_is_fine(factory: MockFactory, clock: VirtualClock) -> None:
    cues = make(factory, clock)
    cues.jackpot(12)
    clock.sleep(0.03)  # mid-fanfare: light and tone on
    light, buzzer = light_pin(factory), buzzer_pin(factory)
    assert light.state == 1.0 and buzzer.frequency == 440.0
    cues.close()
    assert not cues.running
    assert light.state == 0 and buzzer.state == 0
    assert buzzer.frequency is None
    cues.close()
    with cues:
        pass  # __exit__ after close is a third close


def test_the_buzzer_keeps_one_pwm_from_open_to_close_and_falls_silent_at_a_duty_of_0(
    factory: MockFactory, clock: VirtualClock
) -> None:
    # lgpio's software PWM can freeze every PWM line of the process, the motor's included, when one of its PWMs
    # is switched off (docs/HARDWARE.md): while the cues run, no silence may switch the buzzer's PWM off.
    with GpioCues(light=LIGHT, buzzer=BUZZER, pin_factory=factory, clock=clock) as cues:
        buzzer = buzzer_pin(factory)
        cues.pressed(0.5)
        clock.sleep(1.0)
        cues.fault()
        clock.sleep(1.0)
        cues.idle()
        clock.sleep(0.5)
        cues.lid_closed()
        clock.sleep(1.0)
        sounded = [hz for _, hz in buzzer.sounds]
        assert sounded.count(None) >= 4 and len(sounded) - sounded.count(None) >= 4  # it rang and fell silent
        assert [t for t, hz in buzzer.frequencies if hz is None] == []
        assert buzzer.frequency is not None and buzzer.state == 0


def test_cues_after_close_do_nothing(factory: MockFactory, clock: VirtualClock) -> None:
    cues = make(factory, clock)
    cues.close()
    light, buzzer = light_pin(factory), buzzer_pin(factory)
    before = (len(light.states), len(buzzer.states), len(buzzer.frequencies))
    cues.pressed(0.5)
    cues.tension(0.9)
    cues.suspense(500)
    cues.fired(3)
    cues.jackpot(12)
    cues.fault()
    cues.lid_closed()
    cues.idle()
    clock.sleep(5.0)
    assert (len(light.states), len(buzzer.states), len(buzzer.frequencies)) == before


def test_a_burst_from_many_threads_neither_raises_nor_blocks(factory: MockFactory, clock: VirtualClock) -> None:
    cues = make(factory, clock)
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

    # Web request threads, not the clock's: they never wait on it, and a post must not wait for the cue thread.
    threads = [threading.Thread(target=hammer, args=(k,)) for k in range(8)]  # 8 x 125 = 1,000 calls
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    clock.sleep(20.0)  # whatever is left queued (at most 4 one-shots, each under 4 s) plays out
    assert cues.running
    cues.idle()
    clock.sleep(0.001)
    assert buzzer_pin(factory).state == 0  # idle silences it at once, whatever the burst left
    cues.close()
    assert light_pin(factory).state == 0 and buzzer_pin(factory).frequency is None


def test_nonsense_arguments_do_not_raise(factory: MockFactory, clock: VirtualClock) -> None:
    with make(factory, clock) as cues:
        cues.pressed(math.nan)
        cues.tension("loud")  # type: ignore[arg-type]
        cues.suspense(None)  # type: ignore[arg-type]
        cues.fired(-3)
        cues.jackpot(math.inf)  # type: ignore[arg-type]
        cues.tension(-1)
        cues.tension([0.5])  # type: ignore[arg-type]
        clock.sleep(10.0)
        assert cues.running


def test_a_failing_buzzer_stops_the_thread_with_everything_off(
    factory: MockFactory, clock: VirtualClock, caplog: pytest.LogCaptureFixture
) -> None:
    cues = make(factory, clock)
    buzzer_pin(factory).fail = True
    cues.pressed(0.5)
    clock.run_until(lambda: not cues.running, within=1.0)
    assert "cue thread failed" in caplog.text
    assert light_pin(factory).state == 0 and buzzer_pin(factory).state == 0
    cues.fired(3)  # still harmless
    cues.close()


def test_a_device_that_cannot_open_releases_the_other(factory: MockFactory, clock: VirtualClock) -> None:
    with pytest.raises(GPIOPinInUse):
        GpioCues(light=LIGHT, buzzer=LIGHT, pin_factory=factory, clock=clock)
    with GpioCues(light=LIGHT, buzzer=BUZZER, pin_factory=factory, clock=clock):
        pass  # the light pin was released
