"""What the controller needs from a hardware backend, whichever it is (GPIO header or a board on USB serial).

The controller never touches pins or bytes itself: it asks a `Dispenser` to shoot a number of cards and hears
about button presses through `Inputs.when_pressed`. Each backend keeps the motor bounded on its own side
(a watchdog independent of its counting loop), so a hung controller can never leave the motor running.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, Self, runtime_checkable

from launcher.errors import LauncherError


class HardwareGone(LauncherError, RuntimeError):
    """The hardware is not there for now (a board on USB whose link is down): it may come back by itself."""


class Closing(abc.ABC):
    """A part that a `with` block closes at its end, as gpiozero's devices are; closing twice does nothing more."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StopReason(enum.StrEnum):
    """Why a fire ended."""

    COUNT = "count"  # the exit sensor counted the requested cards
    TIMEOUT = "timeout"  # the max-run watchdog cut the motor
    JAM = "jam"  # the motor ran and no card reached the exit in time, even after a retry
    STUCK = "stuck"  # a card stayed in the exit beam: stuck sticking out
    LID = "lid"  # the lid was opened
    ABORTED = "aborted"  # stop() was called (shutdown, fault)
    ERROR = "error"  # the backend failed mid-fire; the motor was stopped


@dataclass(frozen=True, slots=True)
class DispenseResult:
    requested: int
    dispensed: int
    ms: int
    stop: StopReason


class FireJob(Protocol):
    """A fire in progress. The motor is already running when the job exists."""

    def wait(self) -> DispenseResult:
        """Block until the fire has ended, whatever the reason; the motor is off on return."""
        ...


class Dispenser(Protocol):
    when_card: Callable[[], None] | None  # each card of a fire as it leaves; from any thread, returns at once

    def start(self, cards: int) -> FireJob:
        """Start the motor at once and return the job that counts the cards out."""
        ...

    def stop(self) -> None:
        """Motor off now. Safe from any thread, repeatable, and never raises."""
        ...


class Inputs(Protocol):
    when_pressed: Callable[[], None] | None
    when_lid_changed: Callable[[bool], None] | None  # called with True when the lid opens
    when_button_changed: Callable[[bool], None] | None  # the button down (True) and let go, for holding it

    @property
    def lid_open(self) -> bool | None:
        """None while unknown."""
        ...


class Cues(Protocol):
    """Light and sound that build suspense. Every method returns at once and never raises."""

    def pressed(self, tension: float) -> None: ...

    def tension(self, level: float) -> None: ...

    def suspense(self, pause_ms: int) -> None: ...

    def fired(self, cards: int) -> None: ...

    def jackpot(self, cards: int) -> None: ...

    def fault(self) -> None: ...

    def lid_closed(self) -> None: ...

    def idle(self) -> None: ...


class NoCues:
    """For a backend with no light or buzzer on the host's side (the Pico board): cues go nowhere."""

    def pressed(self, tension: float) -> None:
        pass

    def tension(self, level: float) -> None:
        pass

    def suspense(self, pause_ms: int) -> None:
        pass

    def fired(self, cards: int) -> None:
        pass

    def jackpot(self, cards: int) -> None:
        pass

    def fault(self) -> None:
        pass

    def lid_closed(self) -> None:
        pass

    def idle(self) -> None:
        pass


class Hardware(Protocol):
    """One backend: its inputs, its dispenser, its cues, and a description for the status page. What only some
    backends can do is a protocol of its own below, checked where it is used."""

    @property
    def inputs(self) -> Inputs: ...

    @property
    def dispenser(self) -> Dispenser: ...

    @property
    def cues(self) -> Cues: ...

    def describe(self) -> dict[str, object]: ...

    def close(self) -> None: ...


@runtime_checkable
class Aims(Protocol):
    """A launcher with an aiming servo: it turns to face a seat."""

    def aim_at(self, seat: int) -> None: ...


@runtime_checkable
class Refills(Protocol):
    """A hopper that knows how many cards it holds (the simulated one): told the count, it holds that many."""

    def refill(self, cards: int) -> None: ...


@runtime_checkable
class Reflexes(Protocol):
    """A dispenser that fires on its own button once armed (a board on USB): the motor starts without waiting for
    the host, which hears of it after, through `when_reflex(job)`, on any thread, perhaps more than once."""

    when_reflex: Callable[[FireJob], None] | None

    def arm(self, cards: int) -> bool:
        """Fire `cards` at the next press of the button (0: none, the press is told and the host decides it),
        replacing an earlier arm. False if it cannot."""
        ...

    def disarm(self) -> FireJob | None:
        """Take the arm back, waiting until it is: the job of the last fire made from an arm, or None."""
        ...


@runtime_checkable
class Links(Protocol):
    """A launcher that can come and go (a board on USB): `when_link_changed(ok, message)` follows its link."""

    when_link_changed: Callable[[bool, str], None] | None
