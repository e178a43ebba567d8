"""The status light and the buzzer: a "ding" on every press, suspense that speeds up after each miss, fanfares.

Patterns are pure data: a tuple of `Step(seconds, light, hz)` built by the functions below, so their timing is
tested without a clock. `CueSequencer` decides which step plays next (queued one-shot cues first, then the
background loop); `GpioCues` owns the gpiozero devices and one thread that plays steps. Cue methods only post to
the sequencer and return at once: the controller calls them on its hot path.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from gpiozero import PWMLED, PWMOutputDevice
from gpiozero.pins import Factory

from launcher.clock import REAL_CLOCK, Clock
from launcher.hardware.base import Closing
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)


SLOWEST_BEAT = 1.6  # seconds per beat at tension 0
FASTEST_BEAT = 0.2  # seconds per beat at tension 1
FRAME = 0.025  # light update interval while breathing: smooth to the eye, 40 wakeups a second
MAX_SUSPENSE_MS = 60_000  # a runaway pause from the caller must not build an endless pattern
MAX_PENDING = 4  # one-shot cues waiting to play; older ones are dropped first

# Tones stay within A4 ± 1 octave (220-880 Hz), where a small passive buzzer sounds well.
A3, E4, A4, CS5, D5, E5, A5 = 220.0, 329.63, 440.0, 554.37, 587.33, 659.26, 880.0
SILENT_HZ = 100.0  # the buzzer's PWM while silent: lgpio's thread wakes at every period, even at a duty of 0


class Step(NamedTuple):
    seconds: float
    light: float  # PWM duty of the status light, 0..1
    hz: float | None  # buzzer tone, None for silence


Pattern = tuple[Step, ...]


def _unit(value: float) -> float:
    """Clamp to 0..1; anything that is not a number counts as 0, so a cue call never raises."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(x) else min(max(x, 0.0), 1.0)


def _count(value: int, limit: int) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
    return min(max(n, 0), limit)


def beat_period(level: float) -> float:
    """Seconds per beat: 1.6 s at tension 0 down to 0.2 s at 1, geometric so each miss feels a step faster."""
    period = SLOWEST_BEAT * (FASTEST_BEAT / SLOWEST_BEAT) ** _unit(level)
    return float(min(max(period, FASTEST_BEAT), SLOWEST_BEAT))


def beat_steps(level: float) -> Pattern:
    """One beat of the background loop: the light breathes (brightest on the beat) and, above 0, the buzzer ticks.

    Tension raises the tempo, the brightness and the pitch of the tick; level 0 is calm breathing without a tick.
    """
    return _beat(_unit(level))  # clamped first: the cache only ever sees floats in 0..1


@lru_cache(maxsize=128)  # tension takes few distinct values (misses / drought); pressed() is on the hot path
def _beat(level: float) -> Pattern:
    period = beat_period(level)
    frames = max(4, round(period / FRAME))
    low, high = 0.03, 0.3 + 0.7 * level
    tick = E4 * 2**level if level > 0 else None  # E4 up to E5 at full tension
    return tuple(
        Step(
            period / frames,
            low + (high - low) * (1 + math.cos(2 * math.pi * i / frames)) / 2,
            tick if i == 0 else None,
        )
        for i in range(frames)
    )


CALM = beat_steps(0.0)


def suspense_steps(pause_ms: int) -> Pattern:
    """The fastest beat, repeated for the pause; the last step is shortened so the total is the pause exactly."""
    left = _count(pause_ms, MAX_SUSPENSE_MS) / 1000
    beat = beat_steps(1.0)
    steps: list[Step] = []
    while left > 1e-9:
        for step in beat:
            if left <= 1e-9:
                break
            steps.append(step._replace(seconds=min(step.seconds, left)))
            left -= step.seconds
    return tuple(steps)


def ding_steps() -> Pattern:
    """A short high bell note: the press was registered."""
    return (Step(0.09, 1.0, A5), Step(0.06, 0.5, None))


def lid_beep_steps() -> Pattern:
    """One plain mid beep: the lid is closed."""
    return (Step(0.15, 0.6, D5), Step(0.05, 0.0, None))


def fired_steps(cards: int) -> Pattern:
    """A rising two-tone and a bright flash, then one blink per card shot (at most 12) so the table can count."""
    steps = [Step(0.12, 1.0, A4), Step(0.25, 1.0, E5)]
    for _ in range(_count(cards, 12)):
        steps += [Step(0.07, 0.0, None), Step(0.07, 1.0, None)]
    steps.append(Step(0.2, 0.0, None))
    return tuple(steps)


def jackpot_steps(cards: int) -> Pattern:
    """A longer fanfare: a major arpeggio twice with a strobe, a held top note, then a silent strobe per card."""
    steps: list[Step] = []
    for hz in (A4, CS5, E5, A5) * 2:
        steps += [Step(0.06, 1.0, hz), Step(0.06, 0.0, hz)]  # strobe within each note
    for _ in range(4):
        steps += [Step(0.06, 1.0, A5), Step(0.06, 0.0, A5)]
    for _ in range(_count(cards, 24)):
        steps += [Step(0.04, 1.0, None), Step(0.04, 0.0, None)]
    steps.append(Step(0.2, 0.0, None))
    return tuple(steps)


def fault_steps() -> Pattern:
    """One cycle of the fault loop: a fast blink with a low beep on each flash (a steady tone would be unbearable)."""
    return (Step(0.15, 1.0, A3), Step(0.15, 0.0, None))


FAULT = fault_steps()


class CueSequencer:
    """Which step plays next: queued one-shot cues in order, then the background pattern, looped.

    Not thread-safe on its own; `GpioCues` calls it under its lock. Background patterns are latest-wins and the
    one-shot queue is bounded, so a burst of calls costs neither memory nor a backlog of stale sounds.
    """

    def __init__(self, *, max_pending: int = MAX_PENDING) -> None:
        self._pending: deque[Pattern] = deque(maxlen=max_pending)
        self._background = CALM
        self._playing: Iterator[Step] = iter(())
        self._in_background = True

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def background(self) -> Pattern:
        return self._background

    def post(self, once: Pattern = (), background: Pattern | None = None, *, clear: bool = False) -> bool:
        """Take a cue. Returns True when the step playing now should be cut short for it.

        `once` queues a one-shot; `background` replaces the loop; `clear` drops queued and playing one-shots.
        A one-shot or a new background interrupts the background loop at once (a ding must not wait for the
        beat to end), but never another one-shot.
        """
        cut = False
        if clear:
            cut = not self._in_background
            self._pending.clear()
        if background is None and self._background == FAULT:
            background = CALM  # any other cue ends a fault
        if background is not None and background != self._background:
            self._background = background
            cut = cut or self._in_background
        if once:
            self._pending.append(once)
            cut = cut or self._in_background
        if cut:
            self._playing = iter(())
        return cut

    def next_step(self) -> Step:
        while True:
            step = next(self._playing, None)
            if step is not None:
                return step
            if self._pending:
                self._playing, self._in_background = iter(self._pending.popleft()), False
            else:
                self._playing, self._in_background = iter(self._background), True


class GpioCues(Closing):
    """Status light (gpiozero PWMLED) and passive buzzer (a PWM at the tone's frequency) driven by one cue thread.

    Every cue method returns at once and never raises; after `close()` they do nothing. The thread holds each
    step on its condition, so a new cue cuts the step short.
    """

    def __init__(
        self,
        *,
        light: int,
        buzzer: int,
        pin_factory: Factory,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._clock = clock
        self._light = PWMLED(light, pin_factory=pin_factory)
        try:
            # One PWM for the buzzer's whole life, silent at a duty of 0: lgpio's software PWM can freeze every
            # PWM line of the process, the motor's included, when one of its PWMs is switched off (HARDWARE.md).
            self._buzzer = PWMOutputDevice(buzzer, frequency=SILENT_HZ, pin_factory=pin_factory)
        except Exception:  # re-raised: the light's pin is released on the way
            self._light.close()
            raise
        self._sequencer = CueSequencer()
        self._cond = clock.condition()
        self._cut = False
        self._shown_light: float | None = None
        self._shown_hz: float | None = None
        self._thread = StoppableThread(self._run, "cues", clock=clock, wake=self._wake)
        self._stop = self._thread.stopping
        self._thread.start()

    @property
    def running(self) -> bool:
        """False once closed, or if the cue thread died on a device error (the status page can say so)."""
        return self._thread.alive

    def pressed(self, tension: float) -> None:
        self._post(ding_steps(), beat_steps(tension))

    def tension(self, level: float) -> None:
        self._post(background=beat_steps(level))

    def suspense(self, pause_ms: int) -> None:
        self._post(suspense_steps(pause_ms))

    def fired(self, cards: int) -> None:
        self._post(fired_steps(cards), CALM)

    def jackpot(self, cards: int) -> None:
        self._post(jackpot_steps(cards), CALM)

    def fault(self) -> None:
        self._post(background=FAULT, clear=True)

    def lid_closed(self) -> None:
        self._post(lid_beep_steps())

    def idle(self) -> None:
        self._post(background=CALM, clear=True)

    def close(self) -> None:
        """Stop the thread, light and buzzer off, release the pins. Safe to call twice."""
        if self._stop.is_set():
            return
        self._thread.stop()
        self._buzzer.close()
        self._light.close()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def _post(self, once: Pattern = (), background: Pattern | None = None, *, clear: bool = False) -> None:
        if self._stop.is_set():
            return
        with self._cond:
            if self._sequencer.post(once, background, clear=clear):
                self._cut = True
                self._cond.notify()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                with self._cond:
                    self._cut = False
                    step = self._sequencer.next_step()
                self._show(step)
                self._hold(step.seconds)
        except Exception:  # cues are not safety: a failing device leaves them dark and the launcher going
            log.exception("the cue thread failed; light and buzzer stay off")
        finally:
            self._all_off()

    def _show(self, step: Step) -> None:
        # Only changes reach the pins: fewer writes, and the mock pins' history shows each note once.
        if step.light != self._shown_light:
            self._light.value = step.light
            self._shown_light = step.light
        if step.hz != self._shown_hz:
            if step.hz is None:
                self._buzzer.value = 0
                self._buzzer.frequency = SILENT_HZ
            else:
                self._buzzer.frequency = step.hz
                self._buzzer.value = 0.5
            self._shown_hz = step.hz

    def _hold(self, seconds: float) -> None:
        deadline = self._clock.now() + seconds
        with self._cond:
            while not self._cut and not self._stop.is_set():
                left = deadline - self._clock.now()
                if left <= 0:
                    return
                self._cond.wait(left)

    def _all_off(self) -> None:
        for off in (self._buzzer.off, self._light.off):
            try:
                off()
            except Exception:  # the other device is still switched off
                log.exception("could not switch a cue device off")
