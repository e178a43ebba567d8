"""The launcher on the Raspberry Pi's GPIO header, built from gpiozero devices.

The same classes run on a real Pi and, in simulated mode, on gpiozero's mock pins driven by `sim.py`. The pin
factory is always passed in, never taken from gpiozero's global default.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from gpiozero import AngularServo, DigitalInputDevice, Motor
from gpiozero.pins import Factory

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import DispenseConfig, PinsConfig
from launcher.errors import LauncherError
from launcher.hardware.base import Closing, DispenseResult, StopReason
from launcher.hardware.cues import GpioCues
from launcher.hardware.priority import EdgePriority
from launcher.threads import Alarm

log = logging.getLogger(__name__)


class MotorWatchdog(Alarm):
    """Cuts the motor when a fire outlives its deadline, whatever the counting loop is doing.

    One long-lived thread that sleeps until the armed deadline; it knows nothing of cards or jams. Each arming
    carries the fire it guards, so a late alarm for a fire that has already ended cannot stop the next one. The
    callback takes the dispenser's lock, which arms this one: it is called outside the alarm's lock.
    """

    def __init__(self, on_deadline: Callable[[object], None], *, clock: Clock = REAL_CLOCK) -> None:
        super().__init__(on_deadline, "motor-watchdog", clock=clock)


class Interlocked(LauncherError, RuntimeError):
    """The dispenser may not fire now (the lid is open, or it is closed)."""


class _Fire:
    """One fire in progress: what was asked, what has come out, and how it ended."""

    def __init__(self, dispenser: GpioDispenser, cards: int, started: float) -> None:
        self._dispenser = dispenser
        self.requested = cards
        self.dispensed = 0
        self.started = started
        self.forward_since = started  # the start or the retry's: the soft start and jam_ms count from here
        self.last_card = started
        self.blocked_since: float | None = None  # while a card is in the beam
        self.retried = False
        self.result: DispenseResult | None = None  # set once the counting is over; the motor is then off

    def wait(self) -> DispenseResult:
        return self._dispenser._wait(self)


class GpioDispenser:
    """Motor on an H-bridge and a break-beam at the card exit: shoots an exact number of cards.

    `start()` turns the motor on at once, at a third of the duty; the thread that then calls `wait()` ramps it
    up, watches for a jam (stop, reverse, one retry) and a card stuck in the beam, and pulls back a card left
    sticking out after the count.

    The motor has one owner: `_drive()`. Every write goes through it, under the dispenser's lock, and only while
    the fire it belongs to is current and the interlock (the lid, closing) allows; anything else leaves the
    motor off. Ending a fire (`_end()`: the count, a jam, the lid, a stop, the watchdog) switches the motor off
    at once, then again under the lock once the fire is cleared, and only then disarms the watchdog: a write
    still in flight when the fire ends can never outlive it.
    """

    TICK_S = 0.01  # the soft start's step; past the ramp the loop sleeps until its next deadline or a card

    def __init__(
        self,
        *,
        pins: PinsConfig,
        dispense: DispenseConfig,
        pin_factory: Factory,
        may_fire: Callable[[], bool] = lambda: True,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.when_card: Callable[[], None] | None = None
        self._settings = dispense
        self._may_fire = may_fire
        self._clock = clock
        self._cond = clock.condition()  # reentrant: a signal handler may stop the motor in a thread holding it
        self._fire: _Fire | None = None
        self._closed = False
        self._duty = 0.0  # as last written to the motor: > 0 forward, < 0 backward
        self._motor = Motor(
            pins.motor_forward, pins.motor_backward, enable=pins.motor_enable, pwm=True, pin_factory=pin_factory
        )
        try:
            # Active (low) while a card blocks the beam.
            self._beam = DigitalInputDevice(pins.exit_beam, pull_up=True, pin_factory=pin_factory)
        except Exception:  # re-raised: the motor's pins are released on the way
            self._motor.close()
            raise
        self._beam.when_activated = self._on_card
        self._beam.when_deactivated = self._on_beam_clear
        self._watchdog = MotorWatchdog(self._deadline_passed, clock=clock)

    @property
    def firing(self) -> bool:
        with self._cond:
            return self._fire is not None

    @property
    def beam_blocked(self) -> bool:
        return bool(self._beam.is_active)

    def start(self, cards: int) -> _Fire:
        if cards < 1:
            raise ValueError(f"cards must be at least 1, not {cards}")
        with self._cond:
            if self._closed:
                raise Interlocked("the dispenser is closed")
            if not self._may_fire():
                raise Interlocked("the lid is open")
            if self._fire is not None:
                raise RuntimeError("a fire is already in progress")
            fire = self._fire = _Fire(self, cards, self._clock.now())
            if self._beam.is_active:
                fire.blocked_since = fire.started  # a card already sits in the exit: stuck, as the board says
            self._watchdog.arm(fire, self._settings.max_run_ms / 1000)  # armed before the motor can turn
            try:
                self._drive(fire, self._ramp_duty(0.0))
            except BaseException:  # re-raised: whatever stopped the first write, the fire ends with the motor off
                self._end(StopReason.ERROR)
                raise
        return fire

    def stop(self, reason: StopReason = StopReason.ABORTED) -> None:
        self._end(reason)

    def close(self) -> None:
        """Motor off, then release every pin. Safe to call twice."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
        self.stop()
        self._watchdog.close()
        self._beam.close()
        self._motor.close()

    # --- the motor's one owner -------------------------------------------------------------------------

    def _drive(self, fire: _Fire, duty: float) -> None:
        """With the lock held: forward at `duty` (> 0), backward at -`duty` (< 0), or off; only for the current
        fire and while the interlock allows. Forward only while the fire is still counting."""
        allowed = self._fire is fire and not self._closed and self._may_fire()
        if not allowed or duty == 0 or (duty > 0 and fire.result is not None):
            self._motor_off()
        elif duty != self._duty:  # a PWM rewritten every tick would restart its cycle on some drivers
            if duty > 0:
                self._motor.forward(duty)
            else:
                self._motor.backward(-duty)
            self._duty = duty

    def _motor_off(self) -> None:
        self._duty = 0.0
        if self._motor.closed:
            return  # closed devices have released their pins, which idle low: the driver is off
        try:
            self._motor.stop()
        except Exception:  # stop() is called on every way out, closing included: it must not raise in turn
            log.exception("could not stop the motor")

    def _end(self, reason: StopReason, only: object = None) -> None:
        """End the current fire (or only `only`, when given and still current). Safe from any thread."""
        self._motor_off()  # first, before waiting for the lock: this runs from pin callbacks and signal handlers
        with self._cond:
            fire = self._fire
            if fire is None or (only is not None and fire is not only):
                return
            self._conclude(fire, reason)
            self._fire = None
            self._motor_off()  # again: a write in flight when the first one ran has finished by now
            self._watchdog.disarm(fire)
            self._cond.notify_all()

    def _conclude(self, fire: _Fire, reason: StopReason) -> None:
        """With the lock held: the counting is over; the motor stops and the result is fixed."""
        self._motor_off()
        if fire.result is None:
            ms = round((self._clock.now() - fire.started) * 1000)
            fire.result = DispenseResult(fire.requested, fire.dispensed, ms, reason)
        self._cond.notify_all()

    def _deadline_passed(self, guarded: object) -> None:
        self._end(StopReason.TIMEOUT, only=guarded)

    # --- the exit beam ---------------------------------------------------------------------------------

    def _on_card(self) -> None:
        with self._cond:
            fire = self._fire
            if fire is None or fire.result is not None:
                return
            now = self._clock.now()
            fire.blocked_since = now
            self._cond.notify_all()  # the control loop now watches for a stuck card
            if fire.dispensed and (now - fire.last_card) * 1000 < self._settings.card_gap_ms:
                return  # beam chatter from the same card
            fire.dispensed += 1
            fire.last_card = now
            if fire.dispensed >= fire.requested:
                self._conclude(fire, StopReason.COUNT)
        if self.when_card is not None:
            self.when_card()  # outside the lock: the motor is already off if that was the last card

    def _on_beam_clear(self) -> None:
        with self._cond:
            if self._fire is not None:
                self._fire.blocked_since = None
            self._cond.notify_all()

    # --- the control loop, on the thread that waits for the fire ---------------------------------------

    def _wait(self, fire: _Fire) -> DispenseResult:
        """Ramp up, watch for a jam and a stuck card, pull back, and end the fire; the motor is off on return."""
        s = self._settings
        with self._cond:
            while fire.result is None:
                now = self._clock.now()
                stuck_at = None if fire.blocked_since is None else fire.blocked_since + s.stuck_ms / 1000
                jam_at = max(fire.last_card, fire.forward_since) + s.jam_ms / 1000
                if stuck_at is not None and now >= stuck_at:
                    self._conclude(fire, StopReason.STUCK)
                elif now >= jam_at:
                    if fire.retried or s.reverse_ms == 0:
                        self._conclude(fire, StopReason.JAM)
                    else:
                        self._retry_after_jam(fire)
                else:
                    self._drive(fire, self._ramp_duty(now - fire.forward_since))
                    # Sleep until the next thing to check: a ramp step, the jam or stuck deadline; a card or a
                    # stop wakes the loop sooner.
                    deadlines = [jam_at] if stuck_at is None else [jam_at, stuck_at]
                    ramp_end = fire.forward_since + s.ramp_ms / 1000
                    if ramp_end > now:
                        deadlines.append(min(now + self.TICK_S, ramp_end))
                    self._cond.wait(min(deadlines) - now)
            if fire.result.stop in (StopReason.COUNT, StopReason.JAM, StopReason.STUCK):
                self._pull_back(fire)
        self._end(fire.result.stop, only=fire)
        return fire.result

    def _ramp_duty(self, running_s: float) -> float:
        """The duty for this moment of the soft start: a third of `pwm` at first, all of it from `ramp_ms` on,
        however late the loop comes round."""
        s = self._settings
        if s.ramp_ms == 0 or running_s * 1000 >= s.ramp_ms - 1e-6:  # a rounding error short counts as there
            return s.pwm
        return s.pwm / 3 + (running_s * 1000 / s.ramp_ms) * (s.pwm - s.pwm / 3)

    def _hold(self, fire: _Fire, seconds: float) -> None:
        """With the lock held: let `seconds` pass, unless the fire ends (or is replaced) first."""
        deadline = self._clock.now() + seconds
        while self._fire is fire and (left := deadline - self._clock.now()) > 0:
            self._cond.wait(left)

    def _retry_after_jam(self, fire: _Fire) -> None:
        """With the lock held: stop, pull back, and try once more with a fresh jam window."""
        fire.retried = True
        self._drive(fire, -self._settings.pwm)
        self._hold(fire, self._settings.reverse_ms / 1000)
        fire.forward_since = self._clock.now()
        self._drive(fire, self._ramp_duty(0.0))

    def _pull_back(self, fire: _Fire) -> None:
        """With the lock held, the counting over: a short reverse pulse pulls back a card left sticking out."""
        reverse_s = self._settings.reverse_ms / 1000
        if reverse_s == 0:
            return
        self._drive(fire, -self._settings.pwm)
        self._hold(fire, reverse_s)
        self._drive(fire, 0)


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
        edge_priority: EdgePriority | None = None,
    ) -> None:
        self.when_pressed: Callable[[], None] | None = None
        self.when_lid_changed: Callable[[bool], None] | None = None
        # Every edge of the button, bounce and all (True: pressed), after any press it made: for holding it down.
        self.when_button_changed: Callable[[bool], None] | None = None
        self._debounce_s = debounce_ms / 1000
        self._clock = clock
        self._released_at = -1e9  # long ago: the first press counts
        self._on_lid_open = on_lid_open
        self._priority = edge_priority or EdgePriority(0)
        # Active (low) while pressed. A plain input, not gpiozero's Button: its hold thread, which nothing here
        # uses, costs a tenth of a second of real time at every close.
        self._button = DigitalInputDevice(pins.button, pull_up=True, pin_factory=pin_factory)
        try:
            # Active (low) while the lid is closed.
            self._lid = DigitalInputDevice(pins.lid, pull_up=True, pin_factory=pin_factory)
        except Exception:  # re-raised: the button's pin is released on the way
            self._button.close()
            raise
        self._button.when_activated = self._pressed
        self._button.when_deactivated = self._released
        self._lid.when_deactivated = self._lid_opened
        self._lid.when_activated = self._lid_closed

    @property
    def lid_open(self) -> bool:
        return not self._lid.is_active

    def close(self) -> None:
        self._button.close()
        self._lid.close()

    def _pressed(self) -> None:
        self._priority.raise_caller()  # the GPIO library's thread, at its first edge
        # A press counts only after the button rested released for debounce_ms: contact bounce never does.
        if self._clock.now() - self._released_at >= self._debounce_s and self.when_pressed is not None:
            self.when_pressed()
        if self.when_button_changed is not None:  # after the press: the motor never waits for it
            self.when_button_changed(True)

    def _released(self) -> None:
        self._priority.raise_caller()
        self._released_at = self._clock.now()
        if self.when_button_changed is not None:
            self.when_button_changed(False)

    def _lid_opened(self) -> None:
        self._on_lid_open()  # safety first, in this very callback
        self._priority.raise_caller()
        if self.when_lid_changed is not None:
            self.when_lid_changed(True)

    def _lid_closed(self) -> None:
        self._priority.raise_caller()
        if self.when_lid_changed is not None:
            self.when_lid_changed(False)


class SeatServo:
    """The aiming servo, when `seat_angles` are set (none is opened without them): turns to face a seat."""

    def __init__(self, pin: int, seat_angles: tuple[float, ...], *, pin_factory: Factory) -> None:
        self._seat_angles = seat_angles
        self._servo = AngularServo(pin, min_angle=-90, max_angle=90, pin_factory=pin_factory) if seat_angles else None

    @property
    def angle(self) -> float | None:
        return None if self._servo is None or self._servo.closed else self._servo.angle

    def aim_at(self, seat: int) -> None:
        """Turn the launcher to face the player in this seat (0 = the first)."""
        if self._servo is not None and not self._servo.closed and 0 <= seat < len(self._seat_angles):
            self._servo.angle = self._seat_angles[seat]

    def close(self) -> None:
        if self._servo is not None:
            self._servo.close()


class GpioHardware(Closing):
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
        edge_priority: int = 0,
    ) -> None:
        self._description = {"backend": "gpio", **(describe or {})}
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
                edge_priority=EdgePriority(edge_priority),
            )
            undo.callback(self.inputs.close)
            self.cues = GpioCues(light=pins.light, buzzer=pins.buzzer, pin_factory=pin_factory, clock=clock)
            undo.callback(self.cues.close)
            self.servo = SeatServo(pins.servo, seat_angles, pin_factory=pin_factory)
            undo.pop_all()

    def describe(self) -> dict[str, object]:
        return {**self._description, "cues": self.cues.running, "aim": self.servo.angle}

    def aim_at(self, seat: int) -> None:
        self.servo.aim_at(seat)

    def close(self) -> None:
        self.dispenser.close()
        self.cues.close()
        self.inputs.close()
        self.servo.close()
