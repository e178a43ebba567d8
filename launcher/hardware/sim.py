"""Simulated hardware: what a Pi's header runs, down to the pins, with a simulated world acting on those pins.

The motor, the button, the lid and the exit beam are run by firmware/main.py, the code a Pico and the Pi's header
process run, on the header process's `machine` (header_board.HeaderMachine) made of gpiozero devices, here on mock
pins. The daemon drives it through the same link as the header process (header_link.HeaderHardware over
serial_link.SerialHardware); only the wire differs: bytes in memory (`MemoryWire`) in place of the process's
pipes, so that the board's loop and the world run on the daemon's clock (a test's virtual one included) and the
world's pins are the firmware's. The light, the buzzer and the servo are the daemon's, as on a Pi.

`SimulatedWorld` plays the physical world around the pins: while the motor's forward pin is driven, cards leave
the hopper at a rate that grows with the duty; each card blocks the exit beam for a few milliseconds. A jam, a
stuck card, an open lid or an empty hopper can be injected; a person can press the button.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Protocol

from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import Config, PinsConfig
from launcher.errors import LauncherError
from launcher.hardware.header_board import HeaderMachine, loop_timeout, start_firmware
from launcher.hardware.header_link import HeaderHardware, wiring
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

HISTORY_KEPT = 2000  # state changes kept per mock pin, enough for any test to look back on
HISTORY_TRIM_S = 5.0
MOTOR_LOG_KEPT = 10_000  # (time, running) changes of the motor, for tests and the self-test to look back on


class SimPin(MockPWMPin):  # type: ignore[misc]  # gpiozero has no type hints
    """A mock PWM pin that tells the simulated world when a motor pin changes, so the world needs no polling; and
    a line the world drives keeps its level when a pull-up is set on it (a closed switch holds its line low), where
    a mock pin would be pulled high."""

    driven = False

    def drive_low(self) -> None:
        self.driven = True
        super().drive_low()

    def drive_high(self) -> None:
        self.driven = True
        super().drive_high()

    def _set_pull(self, value: str) -> None:
        if self.driven and value == "up":
            self._pull = value
        else:
            super()._set_pull(value)

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
        self.button_down()
        self._clock.sleep(hold_s)
        self.button_up()
        self._clock.sleep(rest_s)

    def button_down(self) -> None:
        self._button.drive_low()

    def button_up(self) -> None:
        self._button.drive_high()

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


class MemoryWire:
    """A cable in memory on a clock between a board (`receive`, `send`) and its host. `open()` is the host's
    opener: one `MemoryPort` at a time (as exclusive as a real port), gone with the cable."""

    def __init__(self, clock: Clock = REAL_CLOCK, name: str = "memory") -> None:
        self.link = name
        self._clock = clock
        self._cond = clock.condition()
        self._to_board = bytearray()
        self._to_host = bytearray()
        self._port: MemoryPort | None = None
        self._woken = False
        self.plugged = True

    def open(self) -> MemoryPort:
        with self._cond:
            if not self.plugged:
                raise FileNotFoundError(2, "No such file or directory", self.link)
            if self._port is not None:
                raise OSError(11, "Resource temporarily unavailable: could not exclusively lock port", self.link)
            self._to_host.clear()  # what the board said before anyone listened is gone
            self._to_board += b"\n"  # as SerialPort does: end any half line
            self._port = MemoryPort(self)
            self._cond.notify_all()
            return self._port

    def plug(self) -> None:
        with self._cond:
            self.plugged = True

    def unplug(self) -> None:
        with self._cond:
            self.plugged = False
            self._to_board.clear()
            self._cond.notify_all()

    # --- the board's end ---

    def receive(self, timeout: float) -> bytes:
        """What the host sent, waiting up to `timeout` for the first byte or a `wake()`."""
        with self._cond:
            deadline = self._clock.now() + timeout
            while not self._to_board and not self._woken and (left := deadline - self._clock.now()) > 0:
                self._cond.wait(left)
            self._woken = False
            data = bytes(self._to_board)
            self._to_board.clear()
            return data

    def wake(self) -> None:
        """End the board's `receive` now: an edge wants a pass of its loop."""
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def send(self, data: bytes) -> None:
        """To the host; OSError when nobody listens (a USB CDC port drops it too)."""
        with self._cond:
            if self._port is None:
                raise OSError(5, "nobody is listening")
            self._to_host += data
            self._cond.notify_all()

    # --- the host's end, through MemoryPort ---

    def _read(self, port: MemoryPort) -> bytes:
        with self._cond:
            while not self._to_host and self.plugged and not port.cancelled and self._port is port:
                self._cond.wait()
            if not self.plugged or self._port is not port:
                raise OSError(5, "Input/output error: the device went away")
            port.cancelled = False
            data = bytes(self._to_host)
            self._to_host.clear()
            return data

    def _write(self, port: MemoryPort, data: bytes) -> None:
        with self._cond:
            if not self.plugged or self._port is not port:
                raise OSError(5, "Input/output error: the device went away")
            self._to_board += data
            self._cond.notify_all()

    def _cancel(self, port: MemoryPort) -> None:
        with self._cond:
            port.cancelled = True
            self._cond.notify_all()

    def _close(self, port: MemoryPort) -> None:
        with self._cond:
            if self._port is port:
                self._port = None
            self._cond.notify_all()


class MemoryPort:
    """The host's end of a MemoryWire: a `serial_port.Port` whose reads wait on the wire's clock."""

    def __init__(self, wire: MemoryWire) -> None:
        self._wire = wire
        self.cancelled = False

    def read(self) -> bytes:
        return self._wire._read(self)

    def write(self, data: bytes) -> None:
        self._wire._write(self, data)

    def cancel_read(self) -> None:
        self._wire._cancel(self)

    def close(self) -> None:
        self._wire._close(self)


class BoardWire(Protocol):
    """The board's end of a wire (`MemoryWire`'s, or a test's)."""

    def receive(self, timeout: float) -> bytes:
        """What the host sent, waiting up to `timeout` for the first byte or a `wake()`."""
        ...

    def send(self, data: bytes) -> None:
        """To the host; OSError when nobody listens."""
        ...

    def wake(self) -> None:
        """End the board's `receive` now."""
        ...

    def unplug(self) -> None: ...


class SimulatedBoard:
    """The header process's inside, in this process: the firmware on `HeaderMachine` over `pin_factory`, its loop
    (`header_board.HeaderBoard.serve`'s pace: at once after an edge or a command, every pass timed by
    `loop_timeout`) on a `sim-board` thread of `clock`, speaking on the board's end of `wire`; `boot_id` as
    `start_firmware`'s."""

    def __init__(
        self,
        *,
        pins: PinsConfig,
        max_run_ms: int,
        pin_factory: MockFactory,
        wire: BoardWire,
        clock: Clock,
        boot_id: str | None = None,
    ) -> None:
        self._wire = wire
        self.dropped = 0  # what the firmware said while no host listened (its BOOT, at first)
        wired = wiring(pins)
        self.machine = HeaderMachine(
            motor=(pins.motor_forward, pins.motor_backward, pins.motor_enable), pin_factory=pin_factory
        )
        self.machine.wake = wire.wake
        try:
            self.launcher = start_firmware(
                self.machine, pins=wired, max_run_ms=max_run_ms, write=self._write, clock=clock, boot_id=boot_id
            )
        except BaseException:  # re-raised: the pins are released on the way
            self.machine.close()
            raise
        self._thread = StoppableThread(self._run, "sim-board", clock=clock, wake=wire.wake)
        self._thread.start()

    def close(self) -> None:
        """The loop stopped, then the motor off and the pins released. Safe to call twice."""
        self._thread.stop()
        self.machine.close()

    def _write(self, data: bytes) -> None:
        try:
            self._wire.send(data)
        except OSError:
            self.dropped += 1

    def _run(self) -> None:
        launcher, wire = self.launcher, self._wire
        try:
            while not self._thread.stopping.is_set():
                data = wire.receive(loop_timeout(launcher))
                if data:
                    launcher.receive(data)
                launcher.poll()
        except Exception:
            # As the header process ends when its loop raises: the motor off, and its wire gone with it.
            log.exception("the simulated header's firmware failed: motor off, its link gone")
            self.machine.close()
            wire.unplug()


class SimulationError(LauncherError, RuntimeError):
    """The simulated launcher did not come up (its firmware did not answer on the wire)."""


LINK_UP_S = 10.0  # for the simulated board to answer the host's HELLO and settle its lid
READY_POLL_S = 0.005


class SimulatedHardware(HeaderHardware):
    """The header's hardware as a Pi runs it, on mock pins in this process, with the simulated world attached.

    Returns once the firmware has linked up with the lid closed, ready to fire."""

    def __init__(self, config: Config, *, clock: Clock = REAL_CLOCK, pin_class: type[SimPin] = SimPin) -> None:
        """`pin_class`: the mock pins' (a benchmark's subclass notes when the motor goes on)."""
        self.pin_factory = MockFactory(pin_class=pin_class)
        self.world = SimulatedWorld(config, self.pin_factory, clock=clock)
        self.wire = MemoryWire(clock, "the simulated header")
        with contextlib.ExitStack() as undo:  # a part that fails to open releases the ones before it
            undo.callback(self.pin_factory.close)
            undo.callback(self.world.close)
            self.board = SimulatedBoard(
                pins=config.pins,
                max_run_ms=config.dispense.max_run_ms,
                pin_factory=self.pin_factory,
                wire=self.wire,
                clock=clock,
            )
            undo.callback(self.board.close)
            # The simulated launcher starts ready to play: the lid closed, and settled before the host says HELLO,
            # whose answer then tells it closed.
            self.world.close_lid()
            self._wait(clock, lambda: not self.board.launcher.lid_open, "its lid closed")
            super().__init__(
                pins=config.pins,
                dispense=config.dispense,
                pin_factory=self.pin_factory,
                clock=clock,
                seat_angles=config.aim.seat_angles,
                opener=self.wire.open,
                backend="sim",
                name=self.wire.link,
            )
            undo.callback(super().close)
            self._wait(clock, lambda: self.describe()["link"] == "up" and self.inputs.lid_open is False, "its link")
            undo.pop_all()

    def _wait(self, clock: Clock, done: Callable[[], bool], what: str) -> None:
        deadline = clock.now() + LINK_UP_S
        while not done():
            if clock.now() >= deadline:
                raise SimulationError(f"the simulated launcher did not come up in {LINK_UP_S:.0f} s: {what}")
            clock.sleep(READY_POLL_S)

    def set_lid(self, is_open: bool) -> None:
        """Open or close the lid, and return once the firmware has let its contact settle and told the host."""
        self.world.open_lid() if is_open else self.world.close_lid()
        self._wait(
            self.clock, lambda: self.inputs.lid_open is is_open, "the lid told " + ("open" if is_open else "closed")
        )

    def refill(self, cards: int) -> None:
        """Whoever refills the hopper in the simulation also fills the virtual one."""
        self.world.refill(cards)

    def describe(self) -> dict[str, object]:
        return {**super().describe(), "sim_hopper": self.world.hopper, "sim_cards_out": self.world.cards_out}

    def close(self) -> None:
        super().close()
        self.board.close()
        self.world.close()
        self.pin_factory.close()
