"""The header process as bench_press_under_load.py runs it: launcher/hardware/header_board.py's real HeaderBoard on
gpiozero's mock pins, with a thread that stands for lgpio's alert thread.

The daemon starts it in place of `python -m launcher.hardware.header_board`; it speaks the protocol on stdin and
stdout as the real one does. With `bare` after the arguments it is instead the bare gpiozero program (a Button whose
`when_pressed` is `motor.forward`, a card stops the motor) placed as the header process is: a process of its own,
its edge thread at the same priority, so that the two are compared like with like; it then serves until its stdin
ends. Besides, it reads one byte at a time from the FIFO `edges` (the benchmark's presses:
p press, r release, c a card past the beam, a "is the board armed to fire?") and writes lines to the FIFO
`report`: for each time the motor goes on, when the edge thread woke and when the forward pin went on
(time.perf_counter, the system's monotonic clock, the same in every process); for each "a", armed or idle.

    python benchmarks/header_probe.py PINS_JSON EDGES_FIFO REPORT_FIFO PRIORITY [bare]
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from gpiozero import Button, Motor
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
    bare = sys.argv[5:] == ["bare"]
    factory = MockFactory(pin_class=ReportingPin)
    edge_priority = EdgePriority(priority)
    edge_priority.raise_caller()
    if bare:
        button_device = Button(pins["button"], pull_up=True, bounce_time=None, pin_factory=factory)
        motor = Motor(pins["forward"], pins["backward"], enable=pins["enable"], pin_factory=factory)
        button_device.when_pressed = motor.forward
        armed, card = (lambda: True), motor.stop
    else:
        board = HeaderBoard(
            pins=pins,
            max_run_ms=20000,
            pin_factory=factory,
            commands=sys.stdin.fileno(),
            replies=sys.stdout.fileno(),
            priority=edge_priority,
        )
        factory.pin(pins["lid"]).drive_low()  # closed (its pull-up was set as the board took it)
        beam = factory.pin(pins["beam"])

        def armed() -> bool:  # an arm of 0 cards is a miss's: the press will not start the motor
            arm = board.launcher._arm
            return arm is not None and bool(arm[0])

        def card() -> None:
            beam.drive_low()
            beam.drive_high()

    edges = os.open(edges_path, os.O_RDONLY)
    report = os.open(report_path, os.O_WRONLY)
    woke_at = [0.0]
    factory.pin(pins["forward"]).went_on = lambda at: os.write(report, f"{woke_at[0]!r} {at!r}\n".encode())
    button = factory.pin(pins["button"])

    def edge_thread() -> None:  # lgpio's alert thread: blocked in a read until the kernel reports an edge
        while byte := os.read(edges, 1):
            if byte == b"p":
                woke_at[0] = time.perf_counter()
                button.drive_low()
            elif byte == b"r":
                button.drive_high()
            elif byte == b"c":
                card()
            elif byte == b"a":
                os.write(report, b"armed\n" if armed() else b"idle\n")

    threading.Thread(target=edge_thread, name="edge", daemon=True).start()
    if bare:
        sys.stdin.read()
        return 0
    try:
        board.serve()
    finally:
        board.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
