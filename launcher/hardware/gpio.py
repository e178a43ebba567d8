"""The launcher on the Raspberry Pi's GPIO header, built from gpiozero devices.

The same classes run on a real Pi and, in simulated mode, on gpiozero's mock pins driven by `sim.py`. The pin
factory is always passed in, never taken from gpiozero's global default.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from gpiozero import AngularServo, Button, DigitalInputDevice, Motor
from gpiozero.pins import Factory

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import DispenseConfig, PinsConfig
from launcher.hardware.base import DispenseResult, StopReason
from launcher.hardware.cues import GpioCues

log = logging.getLogger(__name__)


class MotorWatchdog:
    """Cuts the motor when a fire outlives its deadline, whatever the counting loop is doing.

    One long-lived thread that sleeps until the armed deadline; it knows nothing of cards or jams.
    """

    def __init__(self, stop_motor: Callable[[StopReason], None], *, clock: Clock = REAL_CLOCK) -> None:
        self._stop_motor = stop_motor
        self._clock = clock
        self._deadline: float | None = None
        self._cond = clock.condition()
        self._closed = False
        self._thread = clock.thread(self._run, "motor-watchdog")
        self._thread.start()

    def arm(self, seconds: float) -> None:
        with self._cond:
            self._deadline = self._clock.now() + seconds
            self._cond.notify()

    def disarm(self) -> None:
        with self._cond:
            self._deadline = None
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (self._deadline is None or self._deadline > self._clock.now()):
                    left = None if self._deadline is None else self._deadline - self._clock.now()
                    self._cond.wait(left)
                if self._closed:
                    return
                self._deadline = None
            self._stop_motor(StopReason.TIMEOUT)  # outside the lock: it calls back into disarm()


class Interlocked(RuntimeError):
    """The dispenser may not fire now (the lid is open)."""


class _Fire:
    """One fire in progress: what was asked, what has come out, and how it ended."""

    def __init__(self, dispenser: GpioDispenser, cards: int, started: float) -> None:
        self._dispenser = dispenser
        self.requested = cards
        self.dispensed = 0
        self.started = started
        self.last_card = started  # or the retry's start: jam_ms counts from here
        self.blocked_since: float | None = None  # while a card is in the beam
        self.retried = False
        self.result: DispenseResult | None = None

    def wait(self) -> DispenseResult:
        return self._dispenser._wait(self)


class GpioDispenser:
    """Motor on an H-bridge and a break-beam at the card exit: shoots an exact number of cards.

    `start()` turns the motor on at once, at a third of the duty; the thread that then calls `wait()` ramps it
    up, watches for a jam (stop, reverse, one retry) and a card stuck in the beam, and pulls back a card left
    sticking out after the count. `may_fire()` is an interlock (the lid) checked at every start.
    """

    def __init__(
        self,
        *,
        pins: PinsConfig,
        dispense: DispenseConfig,
        pin_factory: Factory,
        may_fire: Callable[[], bool] = lambda: True,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._settings = dispense
        self._may_fire = may_fire
        self._clock = clock
        self._cond = clock.condition()
        self._fire: _Fire | None = None
        self._motor = Motor(
            pins.motor_forward, pins.motor_backward, enable=pins.motor_enable, pwm=True, pin_factory=pin_factory
        )
        try:
            # Active (low) while a card blocks the beam.
            self._beam = DigitalInputDevice(pins.exit_beam, pull_up=True, pin_factory=pin_factory)
        except Exception:
            self._motor.close()
            raise
        self._beam.when_activated = self._on_card
        self._beam.when_deactivated = self._on_beam_clear
        self._watchdog = MotorWatchdog(self._end_fire, clock=clock)

    @property
    def firing(self) -> bool:
        with self._cond:
            return self._fire is not None

    @property
    def beam_blocked(self) -> bool:
        return self._beam.is_active

    def start(self, cards: int) -> _Fire:
        if cards < 1:
            raise ValueError(f"cards must be at least 1, not {cards}")
        if not self._may_fire():
            raise Interlocked("the lid is open")
        with self._cond:
            if self._fire is not None:
                raise RuntimeError("a fire is already in progress")
            fire = _Fire(self, cards, self._clock.now())
            self._fire = fire
        self._watchdog.arm(self._settings.max_run_ms / 1000)  # armed before the motor can turn
        try:
            self._motor.forward(self._start_duty)
        except BaseException:
            self._end_fire(StopReason.ERROR)
            raise
        return fire

    def stop(self, reason: StopReason = StopReason.ABORTED) -> None:
        self._end_fire(reason)

    def close(self) -> None:
        """Motor off, then release every pin. Safe to call twice."""
        if self._motor.closed:
            return
        self.stop()
        self._watchdog.close()
        self._beam.close()
        self._motor.close()

    @property
    def _start_duty(self) -> float:
        pwm = self._settings.pwm
        return pwm if self._settings.ramp_ms == 0 else pwm / 3

    def _motor_off(self) -> None:
        if self._motor.closed:
            return  # closed devices have released their pins, which idle low: the driver is off
        try:
            self._motor.stop()
        except Exception:
            log.exception("could not stop the motor")

    def _end_fire(self, reason: StopReason) -> None:
        # Motor first, bookkeeping after: this runs from the watchdog, pin callbacks and signal handlers.
        self._motor_off()
        with self._cond:
            fire, self._fire = self._fire, None
            if fire is not None and fire.result is None:
                ms = round((self._clock.now() - fire.started) * 1000)
                fire.result = DispenseResult(fire.requested, fire.dispensed, ms, reason)
            self._cond.notify_all()
        self._watchdog.disarm()

    def _on_card(self) -> None:
        with self._cond:
            fire = self._fire
            if fire is None:
                return
            now = self._clock.now()
            fire.blocked_since = now
            if fire.dispensed and (now - fire.last_card) * 1000 < self._settings.card_gap_ms:
                return  # beam chatter from the same card
            fire.dispensed += 1
            fire.last_card = now
            done = fire.dispensed >= fire.requested
        if done:
            self._end_fire(StopReason.COUNT)

    def _on_beam_clear(self) -> None:
        with self._cond:
            if self._fire is not None:
                self._fire.blocked_since = None
            self._cond.notify_all()

    def _wait(self, fire: _Fire) -> DispenseResult:
        """Ramp up, watch for a jam and a stuck card, and end the fire; the motor is off on return."""
        s = self._settings
        tick = 0.01  # the control loop's period: ramp steps and the stuck-card check
        with self._cond:
            while fire.result is None:
                now = self._clock.now()
                if fire.blocked_since is not None and now - fire.blocked_since >= s.stuck_ms / 1000:
                    break
                if now - fire.last_card >= s.jam_ms / 1000:
                    if fire.retried or s.reverse_ms == 0:
                        break
                    self._retry_after_jam(fire)
                    continue
                self._ramp(now - fire.last_card if fire.retried else now - fire.started)
                self._cond.wait(tick)
            stuck = fire.result is None and fire.blocked_since is not None
        if fire.result is None:
            self._end_fire(StopReason.STUCK if stuck else StopReason.JAM)
        assert fire.result is not None
        if fire.result.stop in (StopReason.COUNT, StopReason.JAM, StopReason.STUCK):
            self._pulse_back()
        return fire.result

    def _ramp(self, running_s: float) -> None:
        """With the lock held and a fire in progress: the duty for this moment of the soft start."""
        s = self._settings
        if s.ramp_ms == 0 or running_s * 1000 >= s.ramp_ms + 10:
            return
        share = min(1.0, running_s * 1000 / s.ramp_ms)
        self._motor.forward(s.pwm / 3 + share * (s.pwm - s.pwm / 3))

    def _retry_after_jam(self, fire: _Fire) -> None:
        """With the lock held: stop, pull back, and try once more with a fresh jam window."""
        fire.retried = True
        self._motor.stop()
        self._motor.backward(self._settings.pwm)
        self._cond.wait(self._settings.reverse_ms / 1000)
        if fire.result is not None or not self._may_fire():
            return
        self._motor.forward(self._start_duty)
        fire.last_card = self._clock.now()

    def _pulse_back(self) -> None:
        """A short reverse pulse pulls back a card left sticking out. Bounded by the watchdog too."""
        reverse_s = self._settings.reverse_ms / 1000
        if reverse_s == 0 or self._motor.closed or not self._may_fire():
            return
        with self._cond:
            if self._fire is not None:
                return  # a new fire has already begun
            self._watchdog.arm(reverse_s + 0.1)
            try:
                self._motor.backward(self._settings.pwm)
                self._cond.wait(reverse_s)
            finally:
                self._motor_off()
        self._watchdog.disarm()


class GpioInputs:
    """The big button (debounced in software, as mock pins and real contacts both need) and the lid switch."""

    def __init__(
        self,
        *,
        pins: PinsConfig,
        debounce_ms: int,
        pin_factory: Factory,
        on_lid_open: Callable[[], None],
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.when_pressed: Callable[[], None] | None = None
        self.when_lid_changed: Callable[[bool], None] | None = None
        self._debounce_s = debounce_ms / 1000
        self._clock = clock
        self._released_at = -1e9  # long ago: the first press counts
        self._on_lid_open = on_lid_open
        self._button = Button(pins.button, pull_up=True, bounce_time=None, pin_factory=pin_factory)
        try:
            # Active (low) while the lid is closed.
            self._lid = DigitalInputDevice(pins.lid, pull_up=True, pin_factory=pin_factory)
        except Exception:
            self._button.close()
            raise
        self._button.when_pressed = self._pressed
        self._button.when_released = self._released
        self._lid.when_deactivated = self._lid_opened
        self._lid.when_activated = self._lid_closed

    @property
    def lid_open(self) -> bool:
        return not self._lid.is_active

    def close(self) -> None:
        self._button.close()
        self._lid.close()

    def _pressed(self) -> None:
        # A press counts only after the button rested released for debounce_ms: contact bounce never does.
        if self._clock.now() - self._released_at < self._debounce_s:
            return
        if self.when_pressed is not None:
            self.when_pressed()

    def _released(self) -> None:
        self._released_at = self._clock.now()

    def _lid_opened(self) -> None:
        self._on_lid_open()  # safety first, in this very callback
        if self.when_lid_changed is not None:
            self.when_lid_changed(True)

    def _lid_closed(self) -> None:
        if self.when_lid_changed is not None:
            self.when_lid_changed(False)


class GpioHardware:
    """The launcher's parts on the GPIO header: button and lid, the dispenser, the light and the buzzer."""

    def __init__(
        self,
        *,
        pins: PinsConfig,
        dispense: DispenseConfig,
        pin_factory: Factory,
        clock: Clock = REAL_CLOCK,
        describe: dict[str, object] | None = None,
        seat_angles: tuple[float, ...] = (),
    ) -> None:
        self._description = {"backend": "gpio", **(describe or {})}
        self._seat_angles = seat_angles
        self._servo: AngularServo | None = None
        with contextlib.ExitStack() as undo:  # a part that fails to open releases the ones before it
            self.dispenser = GpioDispenser(
                pins=pins,
                dispense=dispense,
                pin_factory=pin_factory,
                may_fire=lambda: not self.inputs.lid_open,  # read only at a start, once the inputs exist
                clock=clock,
            )
            undo.callback(self.dispenser.close)
            self.inputs = GpioInputs(
                pins=pins,
                debounce_ms=dispense.debounce_ms,
                pin_factory=pin_factory,
                on_lid_open=lambda: self.dispenser.stop(StopReason.LID),
                clock=clock,
            )
            undo.callback(self.inputs.close)
            self.cues = GpioCues(light=pins.light, buzzer=pins.buzzer, pin_factory=pin_factory, clock=clock)
            undo.callback(self.cues.close)
            if seat_angles:
                self._servo = AngularServo(pins.servo, min_angle=-90, max_angle=90, pin_factory=pin_factory)
            undo.pop_all()

    def describe(self) -> dict[str, object]:
        return {**self._description, "cues": self.cues.running, "aim": self.aim_angle}

    @property
    def aim_angle(self) -> float | None:
        return None if self._servo is None or self._servo.closed else self._servo.angle

    def aim_at(self, seat: int) -> None:
        """Turn the launcher to face the player in this seat (0 = the first), when an aiming servo is fitted."""
        if self._servo is not None and not self._servo.closed and 0 <= seat < len(self._seat_angles):
            self._servo.angle = self._seat_angles[seat]

    def close(self) -> None:
        self.dispenser.close()
        self.cues.close()
        self.inputs.close()
        if self._servo is not None:
            self._servo.close()

    def __enter__(self) -> GpioHardware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
