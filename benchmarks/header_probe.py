"""The header process as bench_press_under_load.py runs it: launcher/hardware/header_board.py's real HeaderBoard on
gpiozero's mock pins, with a thread that stands for lgpio's alert thread.

The daemon starts it in place of `python -m launcher.hardware.header_board`; it speaks the protocol on stdin and
stdout as the real one does. Besides, it reads one byte at a time from the FIFO `edges` (the benchmark's presses:
p press, r release, c a card past the beam, a "is the board armed to fire?") and writes lines to the FIFO
`report`: for each time the motor goes on, when the edge thread woke and when the forward pin went on
(time.perf_counter, the system's monotonic clock, the same in every process); for each "a", armed or idle.

    python benchmarks/header_probe.py PINS_JSON EDGES_FIFO REPORT_FIFO PRIORITY
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from gpiozero.pins.mock import MockFactory, MockPWMPin

from launcher.hardware.header_board import HeaderBoard
from launcher.hardware.priority import EdgePriority


class ReportingPin(MockPWMPin):
    """Calls `went_on` the moment the pin goes from off to on."""

    went_on = None

    def _change_state(self, value: float) -> bool:
        if value and not self._state and self.went_on is not None:
            self.went_on(time.perf_counter())
        return super()._change_state(value)


def main() -> int:
    pins, edges_path, report_path, priority = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    factory = MockFactory(pin_class=ReportingPin)
    edge_priority = EdgePriority(priority)
    edge_priority.raise_caller()
    board = HeaderBoard(
        pins=pins,
        max_run_ms=20000,
        pin_factory=factory,
        commands=sys.stdin.fileno(),
        replies=sys.stdout.fileno(),
        priority=edge_priority,
    )
    factory.pin(pins["lid"]).drive_low()  # closed (its pull-up was set as the board took it)
    edges = os.open(edges_path, os.O_RDONLY)
    report = os.open(report_path, os.O_WRONLY)
    woke_at = [0.0]
    factory.pin(pins["forward"]).went_on = lambda at: os.write(report, f"{woke_at[0]!r} {at!r}\n".encode())
    button, beam = factory.pin(pins["button"]), factory.pin(pins["beam"])

    def edge_thread() -> None:  # lgpio's alert thread: blocked in a read until the kernel reports an edge
        while byte := os.read(edges, 1):
            if byte == b"p":
                woke_at[0] = time.perf_counter()
                button.drive_low()
            elif byte == b"r":
                button.drive_high()
            elif byte == b"c":
                beam.drive_low()
                beam.drive_high()
            elif byte == b"a":
                arm = board.launcher._arm  # an arm of 0 cards is a miss's: the press will not start the motor
                os.write(report, b"armed\n" if arm is not None and arm[0] else b"idle\n")

    threading.Thread(target=edge_thread, name="edge", daemon=True).start()
    try:
        board.serve()
    finally:
        board.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
