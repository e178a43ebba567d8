"""What the table tells about its broker. `MqttLink`: connected, trying (since when, and the last reason), or refused
by the broker (a wrong password, a client id it will not take). Never silent: a link that is not up is logged
FIRST_LOG_S after it went down, then at doubling intervals while it stays down, and a refusal at once; /api/state
carries `view()`. `RefusalLog`: a line for each message from the broker the table refuses, but not a flood of them."""

from __future__ import annotations

import enum
import logging
import threading
from typing import Any

from launcher.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

FIRST_LOG_S = 5.0  # a broker that cannot be reached is in the log this soon (the issue asked for within 10 s)
MAX_LOG_S = 3600.0  # then again at doubling intervals, up to an hour apart
REFUSALS_PER_MINUTE = 30  # refused messages logged a minute, each on its line; beyond, counted in one line


class LinkState(enum.StrEnum):
    CONNECTED = "connected"
    TRYING = "trying"  # not connected: no answer, the network, DNS or TLS failed, or the connection was lost
    REFUSED = "refused"  # the broker answered and refused us (its reason code says why)


class MqttLink:
    def __init__(self, broker: str, *, clock: Clock = REAL_CLOCK) -> None:
        self._broker = broker
        self._clock = clock
        self._lock = threading.Lock()
        self._state = LinkState.TRYING
        self._reason = "not connected yet"
        self._since = clock.now()
        self._next_log = FIRST_LOG_S

    def up(self) -> None:
        with self._lock:
            self._state, self._reason, self._since = LinkState.CONNECTED, "", self._clock.now()

    def down(self, reason: str, *, refused: bool = False) -> None:
        """The link is not up, for `reason`; a refusal by the broker is logged at once (it will not go away)."""
        state = LinkState.REFUSED if refused else LinkState.TRYING
        with self._lock:
            if self._state == LinkState.CONNECTED:  # down from now on: its first log line FIRST_LOG_S from now
                self._since, self._next_log = self._clock.now(), FIRST_LOG_S
            told = refused and (self._state, self._reason) != (state, reason)
            self._state, self._reason = state, reason
        if told:
            log.error("the MQTT broker %s refuses this table: %s", self._broker, reason)

    def tick(self) -> float:
        """Log the link if it has been down long enough; the seconds until it is looked at again."""
        now = self._clock.now()
        with self._lock:
            if self._state == LinkState.CONNECTED:
                return MAX_LOG_S
            down_s = now - self._since
            if down_s < self._next_log:
                return self._next_log - down_s
            self._next_log = min(self._next_log * 2, down_s + MAX_LOG_S)
            state, reason, wait = self._state, self._reason, self._next_log - down_s
        log.warning(
            "no MQTT broker for %.0f s (%s at %s: %s): the table plays on, its events wait",
            down_s,
            state,
            self._broker,
            reason,
        )
        return wait

    def view(self) -> dict[str, Any]:
        """What /api/state tells: the state, for how many whole seconds, and why it is not connected."""
        with self._lock:
            return {
                "state": str(self._state),
                "for_s": int(self._clock.now() - self._since),
                "reason": self._reason or None,
            }


class RefusalLog:
    """A warning line per refused message, REFUSALS_PER_MINUTE a minute: a client flooding the broker with forgeries
    gets its first ones named and the rest counted, not a disk filled with log lines."""

    def __init__(self, *, clock: Clock = REAL_CLOCK) -> None:
        self._clock = clock
        self._window = clock.now()
        self._told = 0
        self._untold = 0

    def refused(self, topic: str, why: object) -> None:
        """Called from the inbox thread only."""
        now = self._clock.now()
        if now - self._window >= 60:
            if self._untold:
                log.warning("%d more MQTT messages refused in the last minute", self._untold)
            self._window, self._told, self._untold = now, 0, 0
        if self._told < REFUSALS_PER_MINUTE:
            self._told += 1
            log.warning("MQTT message on %.120r refused: %s", topic, why)
        else:
            self._untold += 1
