"""The launcher on the Raspberry Pi's GPIO header, built from gpiozero devices.

The same classes run on a real Pi and, in simulated mode, on gpiozero's mock pins driven by `sim.py`. The pin
factory is always passed in, never taken from gpiozero's global default.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

from gpiozero import Button, DigitalInputDevice, Motor
from gpiozero.pins import Factory

from launcher.config import DispenseConfig, PinsConfig
from launcher.hardware.base import DispenseResult, StopReason
from launcher.hardware.cues import GpioCues

log = logging.getLogger(__name__)

Clock = Callable[[], float]


class MotorWatchdog:
    """Cuts the motor when a fire outlives its deadline, whatever the counting loop is doing.

    One long-lived thread that sleeps until the armed deadline; it knows nothing of cards or jams.
    """

    def __init__(self, stop_motor: Callable[[StopReason], None], *, clock: Clock = time.monotonic) -> None:
        self._stop_motor = stop_motor
        self._clock = clock
        self._deadline: float | None = None
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="motor-watchdog", daemon=True)
        self._thread.start()

    def arm(self, seconds: float) -> None:
        with self._cond:
            self._deadline = self._clock() + seconds
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
                while not self._closed and (self._deadline is None or self._deadline > self._clock()):
                    left = None if self._deadline is None else self._deadline - self._clock()
                    self._cond.wait(left)
                if self._closed:
                    return
                self._deadline = None
            self._stop_motor(StopReason.TIMEOUT)  # outside the lock: it calls back into disarm()


class _Fire:
    """One fire in progress: what was asked, what has come out, and how it ended."""

    def __init__(self, dispenser: GpioDispenser, cards: int, started: float) -> None:
        self._dispenser = dispenser
        self.requested = cards
        self.dispensed = 0
        self.started = started
        self.last_card = started
        self.result: DispenseResult | None = None

    def wait(self) -> DispenseResult:
        return self._dispenser._wait(self)


class GpioDispenser:
    """Motor on an H-bridge and a break-beam at the card exit: shoots an exact number of cards."""

    def __init__(
        self,
        *,
        pins: PinsConfig,
        dispense: DispenseConfig,
        pin_factory: Factory,
        clock: Clock = time.monotonic,
    ) -> None:
        self._settings = dispense
        self._clock = clock
        self._cond = threading.Condition()
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
        self._watchdog = MotorWatchdog(self._end_fire, clock=clock)

    @property
    def firing(self) -> bool:
        with self._cond:
            return self._fire is not None

    def start(self, cards: int) -> _Fire:
        if cards < 1:
            raise ValueError(f"cards must be at least 1, not {cards}")
        with self._cond:
            if self._fire is not None:
                raise RuntimeError("a fire is already in progress")
            fire = _Fire(self, cards, self._clock())
            self._fire = fire
        self._watchdog.arm(self._settings.max_run_ms / 1000)  # armed before the motor can turn
        try:
            self._motor.forward(self._settings.pwm)
        except BaseException:
            self._end_fire(StopReason.ERROR)
            raise
        return fire

    def stop(self) -> None:
        self._end_fire(StopReason.ABORTED)

    def close(self) -> None:
        """Motor off, then release every pin. Safe to call twice."""
        if self._motor.closed:
            return
        self.stop()
        self._watchdog.close()
        self._beam.close()
        self._motor.close()

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
                ms = round((self._clock() - fire.started) * 1000)
                fire.result = DispenseResult(fire.requested, fire.dispensed, ms, reason)
            self._cond.notify_all()
        self._watchdog.disarm()

    def _on_card(self) -> None:
        with self._cond:
            fire = self._fire
            if fire is None:
                return
            now = self._clock()
            if fire.dispensed and (now - fire.last_card) * 1000 < self._settings.card_gap_ms:
                return  # beam chatter from the same card
            fire.dispensed += 1
            fire.last_card = now
            done = fire.dispensed >= fire.requested
        if done:
            self._end_fire(StopReason.COUNT)

    def _wait(self, fire: _Fire) -> DispenseResult:
        """Wait for the fire to end; call it a jam when no card comes out for jam_ms."""
        jam_s = self._settings.jam_ms / 1000
        with self._cond:
            while fire.result is None:
                left = fire.last_card + jam_s - self._clock()
                if left <= 0:
                    break
                self._cond.wait(left)
        if fire.result is None:
            self._end_fire(StopReason.JAM)
        assert fire.result is not None
        return fire.result


class GpioHardware:
    """The launcher's parts on the GPIO header: the big button and the dispenser."""

    def __init__(
        self,
        *,
        pins: PinsConfig,
        dispense: DispenseConfig,
        pin_factory: Factory,
        clock: Clock = time.monotonic,
        describe: dict[str, object] | None = None,
    ) -> None:
        self._description = {"backend": "gpio", **(describe or {})}
        with contextlib.ExitStack() as undo:  # a part that fails to open releases the ones before it
            self.inputs = Button(pins.button, pull_up=True, bounce_time=None, pin_factory=pin_factory)
            undo.callback(self.inputs.close)
            self.dispenser = GpioDispenser(pins=pins, dispense=dispense, pin_factory=pin_factory, clock=clock)
            undo.callback(self.dispenser.close)
            self.cues = GpioCues(light=pins.light, buzzer=pins.buzzer, pin_factory=pin_factory, clock=clock)
            undo.pop_all()

    def describe(self) -> dict[str, object]:
        return {**self._description, "cues": self.cues.running}

    def close(self) -> None:
        self.dispenser.close()
        self.cues.close()
        self.inputs.close()

    def __enter__(self) -> GpioHardware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
