"""Switching the Pi off without a keyboard: the big button held down for `[power] hold_to_poweroff_s` while the
launcher is idle.

`ButtonHold` times the hold from the button's edges with an `Alarm` (launcher/threads.py) and asks, once the
time is up, whether the launcher may go off now (never during a fire, a suspense pause or an attack at the
table). The daemon then announces it, stops, and only after its own orderly shutdown asks the system to power off
(`system_power_off`): logind, through `systemctl poweroff`, which polkit allows the service's user
(systemd/README.md).
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable
from typing import Any, Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.events import EventType
from launcher.threads import Alarm

log = logging.getLogger(__name__)

POWER_OFF_COMMAND = ("systemctl", "poweroff")  # unprivileged: logind's PowerOff, which asks polkit
COMMAND_TIMEOUT_S = 30.0
# Between the announcement and the end of the streams: a stream that wakes for an event after end_streams() sends
# nothing more, so each phone's stream is given this long to carry "Switching off…".
ANNOUNCE_S = 1.0


class ButtonEdges(Protocol):
    """Inputs that report the big button going down and coming up (every backend's)."""

    when_button_changed: Callable[[bool], None] | None


class Publisher(Protocol):
    def publish(self, type: EventType, data: dict[str, Any]) -> object: ...


class ButtonHold:
    """Calls `on_held()` once the button has been held for `hold_s` and `refusal()` has no objection (None).

    A release, or a new press edge (contact bounce), starts the timing again. A hold that is refused says why in
    the log and waits for the next one: holding on does not ask again.
    """

    def __init__(
        self,
        *,
        hold_s: float,
        refusal: Callable[[float], str | None],
        on_held: Callable[[], None],
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._hold_s = hold_s
        self._refusal = refusal  # given when the hold began; None: go ahead, else why not
        self._on_held = on_held
        self._clock = clock
        self._held_since: float | None = None  # the press's time, also what the alarm guards
        self._alarm = Alarm(self._held, "button-hold", clock=clock)

    def button_changed(self, pressed: bool) -> None:
        """The button's edge (from the GPIO library's thread): returns at once."""
        if pressed:
            self._held_since = since = self._clock.now()
            self._alarm.arm(since, self._hold_s)
        else:
            self._alarm.disarm(self._held_since)

    def close(self) -> None:
        self._alarm.close()

    def _held(self, since: object) -> None:
        """The alarm: held for `hold_s` since `since`. One answer per hold: held on, it asks nothing more."""
        assert isinstance(since, float)
        refusal = self._refusal(since)
        if refusal is not None:
            log.info("button held %.0f s: not switching off, %s", self._hold_s, refusal)
            return
        self._on_held()


class HoldToPowerOff:
    """The big button held while the launcher is quiet: every phone is told, the motor is stopped, and the daemon
    is asked to shut down (`shut_down`); `requested` then tells it to power the system off once it has closed."""

    def __init__(
        self,
        *,
        hold_s: float,
        inputs: ButtonEdges,
        quiet_since: Callable[[float], bool],
        attack_open: Callable[[], bool],
        bus: Publisher,
        stop_motor: Callable[[], None],
        shut_down: Callable[[], None],
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.requested = False
        self._hold_s = hold_s
        self._quiet_since = quiet_since
        self._attack_open = attack_open
        self._bus = bus
        self._stop_motor = stop_motor
        self._shut_down = shut_down
        self._clock = clock
        self._hold = ButtonHold(hold_s=hold_s, refusal=self._refusal, on_held=self._switch_off, clock=clock)
        inputs.when_button_changed = self._hold.button_changed

    def close(self) -> None:
        self._hold.close()

    def _refusal(self, since: float) -> str | None:
        if not self._quiet_since(since):
            return "the launcher was busy during the hold (a fire, a suspense pause or the rest after a fire)"
        if self._attack_open():
            return "an attack is under way at the table"
        return None

    def _switch_off(self) -> None:
        log.warning("button held %.0f s while the launcher was idle: switching off", self._hold_s)
        self.requested = True
        self._bus.publish(EventType.DAEMON_POWERING_OFF, {"hold_s": self._hold_s})
        self._stop_motor()
        self._clock.sleep(ANNOUNCE_S)
        self._shut_down()


def system_power_off() -> None:
    """Ask the system to power off; a refusal is logged with what the command said (a missing polkit rule)."""
    try:
        result = subprocess.run(POWER_OFF_COMMAND, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        log.error("could not power off: %s failed: %s", " ".join(POWER_OFF_COMMAND), e)
        return
    if result.returncode != 0:
        log.error(
            "could not power off: %s said %s (is [power] hold_to_poweroff_s set and systemd/install.sh run again?)",
            " ".join(POWER_OFF_COMMAND),
            (result.stderr or result.stdout).strip() or f"exit code {result.returncode}",
        )


def simulated_power_off() -> None:
    """On simulated hardware the machine is a laptop: never switch it off."""
    log.warning("simulated hardware: the Pi would power off now; the daemon exits instead")
