"""The broker as this table sees it: connected, trying (since when, and the last reason), or refused by the broker
(a wrong password, a client id it will not take). Never silent: a link that is not up is logged FIRST_LOG_S after
it went down, then at doubling intervals while it stays down, and a refusal at once; /api/state carries `view()`."""

from __future__ import annotations

import enum
import logging
import threading
from typing import Any

from launcher.clock import REAL_CLOCK, Clock

log = logging.getLogger(__name__)

FIRST_LOG_S = 5.0  # a broker that cannot be reached is in the log this soon (the issue asked for within 10 s)
MAX_LOG_S = 3600.0  # then again at doubling intervals, up to an hour apart


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
