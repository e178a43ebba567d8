"""Press → motor on, through the full daemon as a Pi runs it on mock pins, against bare gpiozero in the same run.

Baseline: a gpiozero Button whose `when_pressed` is `motor.forward`, nothing else, its edge driven in this thread.
Daemon: the real Daemon (controller, schedule, event bus with its SQLite writer, web app built) with the header
process (the firmware on mock pins in a process of its own, armed by the daemon with each next press), its edge
brought by a thread of that process woken through a pipe (bench_press_under_load.py's header row, without the
load). Every press fires; a shuffle's first press, the host's, is not timed.

    .venv/bin/python benchmarks/bench_press_latency.py [--fires 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_press_under_load import CONFIG, header_daemon
from gpiozero import Button, Motor
from gpiozero.pins.mock import MockFactory, MockPWMPin
from measure import exit_code, parse, percentile

from launcher.config import Config

PINS = Config().pins


class TimedPin(MockPWMPin):
    """Notes the moment a pin goes from off to on."""

    on_at: float = 0.0

    def _change_state(self, value: float) -> bool:
        if value and not self._state:
            self.on_at = time.perf_counter()
        return super()._change_state(value)


def bare_gpiozero(fires: int) -> list[float]:
    factory = MockFactory(pin_class=TimedPin)
    button = Button(PINS.button, pull_up=True, bounce_time=None, pin_factory=factory)
    motor = Motor(PINS.motor_forward, PINS.motor_backward, enable=PINS.motor_enable, pin_factory=factory)
    button.when_pressed = motor.forward
    button_pin, forward = factory.pin(PINS.button), factory.pin(PINS.motor_forward)
    samples = []
    for _ in range(fires):
        pressed = time.perf_counter()
        button_pin.drive_low()
        samples.append(forward.on_at - pressed)
        button_pin.drive_high()
        motor.stop()
    button.close()
    motor.close()
    factory.close()
    return samples


def full_daemon(fires: int, state_dir: Path) -> list[float]:
    state_dir.mkdir()
    config = state_dir / "config.toml"
    config.write_text(CONFIG + f'\n[state]\ndir = "{state_dir / "state"}"\n', encoding="utf-8")
    return header_daemon(fires, config, 0, under_load=False).totals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fires", type=int, default=1000)
    args = parse(parser, fires=20)
    with tempfile.TemporaryDirectory() as tmp:
        full_daemon(10, Path(tmp) / "warm")  # warm-up: imports, first SQLite file
        base = bare_gpiozero(args.fires)
        ours = full_daemon(args.fires, Path(tmp) / "run")
    rows = []
    for name, samples in (("bare gpiozero", base), ("full daemon", ours)):
        p50, p99 = percentile(samples, 50) * 1e6, percentile(samples, 99) * 1e6
        rows.append((name, p50, p99, statistics.mean(samples) * 1e6))
    print(f"press -> motor on, {args.fires} fires each, microseconds")
    print(f"{'path':<15}{'p50':>10}{'p99':>10}{'mean':>10}")
    for name, p50, p99, mean in rows:
        print(f"{name:<15}{p50:>10.1f}{p99:>10.1f}{mean:>10.1f}")
    (_, b50, b99, _), (_, d50, d99, _) = rows
    overhead_ms = (d99 - b99) / 1000
    print(f"ratio daemon/bare: p50 {d50 / b50:.2f}x, p99 {d99 / b99:.2f}x")
    print(f"p99 overhead {overhead_ms:.3f} ms (target < 1 ms): {'PASS' if overhead_ms < 1 else 'FAIL'}")
    return exit_code(overhead_ms < 1, args)


if __name__ == "__main__":
    sys.exit(main())
