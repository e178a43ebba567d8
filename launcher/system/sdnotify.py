"""Telling systemd how the daemon is doing: sd_notify(3) and the service watchdog, without libsystemd.

Under `Type=notify` systemd hands the service a datagram socket in $NOTIFY_SOCKET and waits for READY=1 before it
counts the service as started. With `WatchdogSec=` it also sets $WATCHDOG_USEC and kills the service when no
WATCHDOG=1 arrives in time. `Watchdog` pings only while a health check passes, so a hung controller loop gets the
service restarted instead of pinged forever by a thread that is fine on its own. Outside systemd every function
here is a no-op.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable

from launcher.clock import REAL_CLOCK, Clock
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)


def notify(message: str) -> bool:
    """Send one sd_notify message ("READY=1", "WATCHDOG=1", …). False when not under systemd or on failure."""
    address = os.environ.get("NOTIFY_SOCKET", "")
    if address.startswith("@"):
        address = "\0" + address[1:]  # Linux's abstract namespace
    elif not address.startswith("/"):
        return False  # unset, or a transport this module does not speak (vsock)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.sendto(message.encode(), address)
    except OSError as e:
        log.debug("sd_notify %r failed: %s", message, e)
        return False
    return True


def ready(status: str) -> bool:
    """The service is up: systemd ends `systemctl start` and shows `status` in `systemctl status`."""
    return notify(f"READY=1\nSTATUS={status}")


def stopping() -> bool:
    """The service is shutting down on purpose, so systemd does not take the exit as a crash in progress."""
    return notify("STOPPING=1")


def status(text: str) -> bool:
    """One line for `systemctl status`."""
    return notify(f"STATUS={text}")


def watchdog_interval() -> float | None:
    """Seconds within which systemd expects WATCHDOG=1 from this process, or None when it expects none."""
    try:
        usec = int(os.environ.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    pid = os.environ.get("WATCHDOG_PID")
    if usec <= 0 or (pid and pid != str(os.getpid())):  # WATCHDOG_PID: meant for another process (a parent)
        return None
    return usec / 1_000_000


class Watchdog:
    """Pings systemd's watchdog every half interval, but only while `healthy()` says the daemon works.

    `healthy` runs on the watchdog's own thread and must return within a fraction of the interval: a check that
    blocks withholds pings, which is what it should do when what it checks has hung.
    """

    def __init__(self, healthy: Callable[[], bool], *, clock: Clock = REAL_CLOCK) -> None:
        self._healthy = healthy
        self._clock = clock
        self.interval = watchdog_interval()
        self._thread: StoppableThread | None = None
        self._closed = False

    def start(self) -> bool:
        """Start pinging; False (and no thread) when systemd runs no watchdog for this process."""
        if self.interval is None or self._thread is not None or self._closed:
            return False
        interval = self.interval
        self._thread = StoppableThread(lambda: self._run(interval), "sd-watchdog", clock=self._clock)
        self._thread.start()
        return True

    def close(self) -> None:
        """Stop pinging. Safe to call twice, and before start()."""
        self._closed = True
        if self._thread is not None:
            self._thread.stop()  # bounded: a health check stuck for good must not hold up the shutdown

    def _run(self, interval: float) -> None:
        was_healthy = True
        while True:
            began = self._clock.now()
            healthy = self._check()
            if healthy:
                notify("WATCHDOG=1")
                if not was_healthy:
                    log.warning("the health check passes again: watchdog pings resume")
            elif was_healthy:
                log.error("the health check fails: watchdog pings withheld; systemd restarts the service if it goes on")
            was_healthy = healthy
            # A failed check is retried soon, so one slow answer does not cost the service its life; a check that
            # keeps failing lets the deadline pass.
            period = interval / 2 if healthy else interval / 10
            assert self._thread is not None
            if self._thread.stopping.wait(max(0.0, began + period - self._clock.now())):
                return

    def _check(self) -> bool:
        try:
            return bool(self._healthy())
        except Exception:  # a check that raises is a failed check: pings are withheld, the thread goes on
            log.exception("the watchdog's health check failed")
            return False
