"""A real-time priority for the thread that brings the button's edge.

On a Pi the edge comes on the GPIO library's own thread, which must get a processor, then Python's interpreter lock,
before the motor can start. While other threads of the daemon or other programs keep the processors busy, a thread
at the normal priority waits its turn; a SCHED_FIFO thread is run as soon as it is woken. The library's thread is
not ours to start, so it is raised from inside the first callback it runs (benchmarks/bench_press_under_load.py
measures the difference).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class EdgePriority:
    """Raises each thread that calls `raise_caller()` to SCHED_FIFO at `priority`, once per thread (0: never)."""

    def __init__(self, priority: int, *, set_scheduler: Callable[[int, int, Any], None] | None = None) -> None:
        self._priority = priority
        # os.sched_setscheduler exists on Linux only; elsewhere nothing is raised.
        self._set_scheduler = set_scheduler or getattr(os, "sched_setscheduler", None)
        self._tried: set[int] = set()  # threads raised, or refused: each is asked once

    def raise_caller(self) -> None:
        thread = threading.get_ident()
        if self._priority == 0 or self._set_scheduler is None or thread in self._tried:
            return
        self._tried.add(thread)
        try:
            self._set_scheduler(0, os.SCHED_FIFO, os.sched_param(self._priority))  # 0: this thread alone
        except OSError as e:
            log.warning(
                "the GPIO edge thread stays at normal priority (%s): a press may wait while the Pi is busy; "
                "the service allows real-time priority %d with LimitRTPRIO= (systemd/uno-launcher.service)",
                e.strerror or e,
                self._priority,
            )
        else:
            log.info("the GPIO edge thread runs at real-time priority %d", self._priority)
