"""Simulated hardware: a virtual hopper of cards and card exit acting on gpiozero's mock pins.

Nothing here replaces `gpio.py`: the daemon builds the very same `GpioHardware` on a mock pin factory, and this
module plays the physical world around it. While the motor's forward pin is driven, cards leave the hopper at a
rate that grows with the PWM duty; each card blocks the exit beam for a few milliseconds. A jam or an empty
hopper can be injected.
"""

from __future__ import annotations

import threading
from collections import deque

from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import Config
from launcher.hardware.gpio import GpioHardware
from launcher.threads import StoppableThread

HISTORY_KEPT = 2000  # state changes kept per mock pin, enough for any test to look back on
HISTORY_TRIM_S = 5.0
MOTOR_LOG_KEPT = 10_000  # (time, running) changes of the motor, for tests and the self-test to look back on


class SimPin(MockPWMPin):  # type: ignore[misc]  # gpiozero has no type hints
    """A mock PWM pin that tells the simulated world when a motor pin changes, so the world needs no polling."""

    def _change_state(self, value: float) -> bool:
        changed = super()._change_state(value)
        world = getattr(self.factory, "world", None)
        if changed and world is not None and self in world.motor_pins:
            world.motor_moved()
        return bool(changed)


class SimulatedWorld:
    """The hopper and the card exit around the launcher's pins."""

    def __init__(self, config: Config, factory: MockFactory, *, clock: Clock = REAL_CLOCK) -> None:
        self._sim = config.sim
        self._clock = clock
        pins = config.pins
        self._forward = factory.pin(pins.motor_forward)
        self._backward = factory.pin(pins.motor_backward)
        self._enable = factory.pin(pins.motor_enable)
        self._beam = factory.pin(pins.exit_beam)
        self._button = factory.pin(pins.button)
        self._lid = factory.pin(pins.lid)
        self._light = factory.pin(pins.light)
        self._buzzer = factory.pin(pins.buzzer)
        self.motor_pins = (self._forward, self._backward, self._enable)
        self._lock = threading.Lock()
        self._hopper = config.dispense.hopper_cards  # the cards in the virtual hopper
        self._jammed = False
        self._stuck = False
        self.cards_out = 0
        self.motor_log: deque[tuple[float, bool]] = deque(maxlen=MOTOR_LOG_KEPT)
        self._changed = clock.condition()  # the motor's pins changed, or the world did
        self._moved = False
        factory.world = self
        self._thread = StoppableThread(self._run, "sim-world", clock=clock, wake=self._wake)
        self._thread.start()

    # --- what a person at the table does -------------------------------------------------------------------

    def press_button(self, hold_s: float = 0.03, rest_s: float = 0.05) -> None:
        """Press and release the big button, and lift the finger away as a person does (the debounce needs it)."""
        self._button.drive_low()
        self._clock.sleep(hold_s)
        self._button.drive_high()
        self._clock.sleep(rest_s)

    def open_lid(self) -> None:
        self._lid.drive_high()

    def close_lid(self) -> None:
        self._lid.drive_low()

    def stick_card(self, stuck: bool = True) -> None:
        """A card wedged in the exit: the beam stays blocked (and cards stop moving) until unstuck."""
        with self._lock:
            self._stuck = stuck
        self._beam.drive_low() if stuck else self._beam.drive_high()
        self._wake()

    def refill(self, cards: int) -> None:
        with self._lock:
            self._hopper = cards

    def jam(self, jammed: bool = True) -> None:
        """A card wedged in the roller: the motor turns, nothing comes out."""
        with self._lock:
            self._jammed = jammed
        self._wake()

    @property
    def hopper(self) -> int:
        """The cards left in the virtual hopper."""
        with self._lock:
            return self._hopper

    @property
    def motor_running(self) -> bool:
        """The roller turns (either way): the driver is enabled and exactly one direction is driven."""
        try:
            forward, backward = float(self._forward.state), float(self._backward.state)
            return bool(self._enable.state) and (forward > 0) != (backward > 0)
        except Exception:  # pins closed during shutdown: released pins idle low
            return False

    def motor_moved(self) -> None:
        """A motor pin changed (called from the thread that drove it)."""
        self.motor_log.append((self._clock.now(), self.motor_running))
        self._wake()

    def close(self) -> None:
        self._thread.stop()

    def _wake(self) -> None:
        with self._changed:
            self._moved = True
            self._changed.notify()

    # --- physics -------------------------------------------------------------------------------------------

    def _duty(self) -> float:
        """How hard the roller pushes cards out (0 when stalled, jammed, empty or reversing)."""
        try:
            forward = float(self._forward.state) if self._enable.state else 0.0
        except Exception:  # pins closed during shutdown
            return 0.0
        with self._lock:
            if self._jammed or self._stuck or self._hopper == 0:
                return 0.0
        return forward if forward > self._sim.stall_duty else 0.0

    def _run(self) -> None:
        progress = 0.0  # fraction of the next card already pushed out
        while True:
            with self._changed:
                if self._thread.stopping.is_set():
                    return
                self._moved = False
            duty = self._duty()
            if duty == 0.0:
                self._trim_pin_history()
                self._wait_for_change(HISTORY_TRIM_S)
                continue
            rate = self._sim.cards_per_second * duty
            began = self._clock.now()
            if self._wait_for_change((1.0 - progress) / rate):
                progress = min(1.0, progress + (self._clock.now() - began) * rate)
                continue
            progress = 0.0
            self._card_passes()

    def _wait_for_change(self, seconds: float) -> bool:
        """True when the motor or the world changed within `seconds`."""
        deadline = self._clock.now() + seconds
        with self._changed:
            while not self._moved and not self._thread.stopping.is_set():
                left = deadline - self._clock.now()
                if left <= 0:
                    return False
                self._changed.wait(left)
            return True

    def _card_passes(self) -> None:
        with self._lock:
            if self._hopper == 0:
                return
            self._hopper -= 1
            self.cards_out += 1
        self._beam.drive_low()  # the exit callbacks run here, in this thread, as on mock pins they do
        self._clock.sleep(self._sim.card_block_ms / 1000)
        self._beam.drive_high()

    def _trim_pin_history(self) -> None:
        # Mock pins record every change for ever (the breathing light 40 times a second): keep the recent ones.
        for pin in (*self.motor_pins, self._beam, self._button, self._lid, self._light, self._buzzer):
            if len(pin.states) > HISTORY_KEPT:
                del pin.states[:-HISTORY_KEPT]


class SimulatedHardware(GpioHardware):
    """`GpioHardware` on mock pins, with the simulated world attached."""

    def __init__(self, config: Config, *, clock: Clock = REAL_CLOCK) -> None:
        self.pin_factory = MockFactory(pin_class=SimPin)
        self.world = SimulatedWorld(config, self.pin_factory, clock=clock)
        try:
            super().__init__(
                pins=config.pins,
                dispense=config.dispense,
                pin_factory=self.pin_factory,
                clock=clock,
                describe={"backend": "sim"},
                seat_angles=config.aim.seat_angles,
            )
        except Exception:  # re-raised: the world's thread is stopped on the way
            self.world.close()
            raise
        self.world.close_lid()  # the simulated launcher starts ready to play

    def refill(self, cards: int) -> None:
        """Whoever refills the hopper in the simulation also fills the virtual one."""
        self.world.refill(cards)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "sim_hopper": self.world.hopper, "sim_cards_out": self.world.cards_out}

    def close(self) -> None:
        super().close()
        self.world.close()
        self.pin_factory.close()
