"""The event log as the table's outbox on the broker.

A thread of ours (`mqtt-outbox`) reads the bus from the last event the broker acknowledged (kept in the store, with
the presses counted), publishes what the table tells (QoS 1), waits for every acknowledgement, then moves the mark
on. A broker that is down for an hour, or a daemon restarted meanwhile, loses nothing: the table plays on, and the
backlog goes out in order once the broker is back. paho keeps unacknowledged messages over a reconnect (a persistent
session: clean_start false, a session expiry) and sends them again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from launcher.clock import REAL_CLOCK, Clock
from launcher.events import EventBus, EventType
from launcher.home.topics import Message, messages_for
from launcher.home.tournament_post import TournamentPost
from launcher.store import Store, StoreError, mqtt_table
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

BATCH = 256  # events read and published before their acknowledgements are awaited
IDLE_S = 1.0  # how long the outbox waits for a new event before it looks again
RETRY_S = 1.0  # after a failure to save the mark


class MqttOutbox:
    """The `mqtt-outbox` thread, its mark in the store, and whether the broker is there to send to."""

    def __init__(
        self,
        *,
        table: str,
        bus: EventBus,
        store: Store,
        tournaments: TournamentPost,
        publish: Callable[[Message], int],
        clock: Clock = REAL_CLOCK,
    ) -> None:
        """`publish`: sends one message (QoS 1) and answers its message id, whose acknowledgement comes to
        `acknowledged`. `tournaments`: each event's tournament messages go out with it."""
        self._table = table
        self._bus = bus
        self._store = store
        self._tournaments = tournaments
        self._publish = publish
        with store.connect() as conn:
            kept = mqtt_table.load(conn)
            if kept is None:  # MQTT is new here: the broker hears from now on, not the whole log
                kept = (bus.last_id, 0)
                mqtt_table.save(conn, *kept)
        self._sent, self._presses = kept
        self._acked: set[int] = set()
        self._changed = clock.condition()
        self._connected = False
        self._thread = StoppableThread(self._drain, "mqtt-outbox", clock=clock, wake=self._wake)

    def _wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    @property
    def connected(self) -> bool:
        with self._changed:
            return self._connected

    @property
    def sent(self) -> int:
        """The last event id the broker acknowledged."""
        with self._changed:
            return self._sent

    @property
    def presses(self) -> int:
        """The presses counted up to the mark."""
        with self._changed:
            return self._presses

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop()

    def resume(self) -> None:
        """The broker is there: the outbox sends from its mark."""
        with self._changed:
            self._connected = True
            self._changed.notify_all()

    def pause(self) -> bool:
        """The broker is gone: the outbox waits for it. True if it was there."""
        with self._changed:
            was, self._connected = self._connected, False
        return was

    def acknowledged(self, mid: int) -> None:
        """paho's network thread: the broker has the message `mid`."""
        with self._changed:
            self._acked.add(mid)
            self._changed.notify_all()

    def _drain(self) -> None:
        stopping = self._thread.stopping
        while not stopping.is_set():
            with self._changed:
                self._changed.wait_for(lambda: self._connected or stopping.is_set(), timeout=IDLE_S)
                if not self._connected:
                    continue
                sent, presses = self._sent, self._presses
            events = self._bus.events_after(sent, limit=BATCH)
            if not events:
                self._bus.wait(sent, timeout=IDLE_S)
                continue
            with self._changed:  # acknowledgements heard meanwhile were of the connection's own messages: a
                self._acked.clear()  # message id of theirs, come round again, must not pass for this batch's
            mids = []
            for event in events:
                if event.type == EventType.BUTTON_PRESSED:
                    presses += 1
                out = messages_for(self._table, event, presses)
                out += [Message(t, p, retain=True) for t, p in self._tournaments.outgoing(event)]
                for message in out:
                    mids.append(self._publish(message))
            if not self._await(mids):
                return  # stopping: what was not acknowledged goes out at the next start
            self._mark(events[-1].id, presses)

    def _await(self, mids: list[int]) -> bool:
        """Wait until the broker acknowledged every message (over reconnects, paho sends them again)."""
        stopping = self._thread.stopping
        with self._changed:
            while not all(mid in self._acked for mid in mids):
                if stopping.is_set():
                    return False
                self._changed.wait(timeout=IDLE_S)
            # Cleared, not only these: the acknowledgements of what the connection sent itself (status, discovery)
            # must not stay to be taken for a later message's when paho's message ids come round again.
            self._acked.clear()
        return True

    def _mark(self, sent: int, presses: int) -> None:
        stopping = self._thread.stopping
        while not stopping.is_set():
            try:
                with self._store.connect() as conn:
                    mqtt_table.save(conn, sent, presses)
                break
            except StoreError as e:  # sent again after a restart if it never saves: duplicates, never a loss
                log.error("%s; the MQTT outbox's mark is saved again in %g s", e, RETRY_S)
                stopping.wait(RETRY_S)
        with self._changed:
            self._sent, self._presses = sent, presses
