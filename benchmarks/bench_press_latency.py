"""Press → motor on, through the full daemon on mock pins, against bare gpiozero in the same run.

Baseline: a gpiozero Button whose `when_pressed` is `motor.forward`, nothing else.
Daemon: the real Daemon (controller, schedule, event bus with its SQLite writer, web app built) on the same
kind of mock pins. Mock pins call back synchronously, so both figures are pure software overhead.
Only presses that fire start the motor; misses are pressed through and not timed.

    .venv/bin/python benchmarks/bench_press_latency.py [--fires 1000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from gpiozero import Button, Motor
from gpiozero.pins.mock import MockFactory, MockPWMPin
from measure import exit_code, parse, percentile

from launcher.config import Config
from launcher.daemon import Daemon
from launcher.hardware.gpio import GpioHardware

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
    config = Config().replace("state", dir=str(state_dir)).replace("web", port=0)
    # Presses at machine speed: no debounce (a finger needs 30 ms), no rest, no reverse pulse.
    config = config.replace("dispense", min_rest_ms=0, card_gap_ms=0, hopper_cards=500, debounce_ms=0, reverse_ms=0)
    factory = MockFactory(pin_class=TimedPin)
    hardware = GpioHardware(pins=config.pins, dispense=config.dispense, pin_factory=factory)
    daemon = Daemon(config, hardware=hardware)
    factory.pin(PINS.lid).drive_low()  # closed
    button_pin, forward, beam = (factory.pin(p) for p in (PINS.button, PINS.motor_forward, PINS.exit_beam))
    samples: list[float] = []
    for _ in range(fires * 20):  # about one press in three fires; bounded all the same
        if len(samples) == fires:
            break
        before = forward.on_at
        pressed = time.perf_counter()
        button_pin.drive_low()
        fired = forward.on_at != before
        if fired:
            samples.append(forward.on_at - pressed)
        button_pin.drive_high()
        if fired:
            while forward.state:  # the card exit: pass cards until the dispenser has its count
                beam.drive_low()
                beam.drive_high()
            while daemon.controller.snapshot()["busy"]:
                time.sleep(0.0002)
        if daemon.controller.snapshot()["hopper"]["remaining"] < 20:
            daemon.controller.reload_hopper(500)
    daemon.close()
    if len(samples) < fires:
        raise RuntimeError(f"only {len(samples)} of {fires} presses fired: is the daemon refusing presses?")
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fires", type=int, default=1000)
    args = parse(parser, fires=20)
    with tempfile.TemporaryDirectory() as tmp:
        full_daemon(50, Path(tmp) / "warm")  # warm-up: imports, first SQLite file
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
