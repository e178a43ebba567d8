"""On the workbench: the wiring table, a self-test of every part, and calibration of the motor.

All three run on the configured hardware, simulated included. Where a person must act (press the button, block
the beam, open the lid), `Person` asks on the console; on simulated hardware `SimulatedPerson` does it.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.config import Config, PinsConfig
from launcher.hardware.base import StopReason
from launcher.hardware.header_link import HeaderHardware
from launcher.threads import StoppableThread

# BCM number -> physical pin on the 40-pin header.
HEADER_PIN = {
    2: 3, 3: 5, 4: 7, 17: 11, 27: 13, 22: 15, 10: 19, 9: 21, 11: 23, 0: 27, 5: 29, 6: 31, 13: 33, 19: 35, 26: 37,
    14: 8, 15: 10, 18: 12, 23: 16, 24: 18, 25: 22, 8: 24, 7: 26, 1: 28, 12: 32, 16: 36, 20: 38, 21: 40,
}  # fmt: skip

WIRING = {
    "button": "big button to GND (internal pull-up)",
    "motor_forward": "H-bridge IN1, PWM; 10 kOhm pull-down to GND",
    "motor_backward": "H-bridge IN2; 10 kOhm pull-down to GND",
    "motor_enable": "H-bridge EN/PWMA, high while running; 10 kOhm pull-down to GND",
    "exit_beam": "IR break-beam receiver output (low while a card blocks it)",
    "lid": "lid switch to GND, closed = low",
    "light": "status LED through 330 Ohm to GND",
    "buzzer": "passive buzzer (through a transistor if it draws > 8 mA)",
    "servo": "aiming servo signal, only with [aim] seat_angles (servo power from its own 5 V)",
}


def wiring_table(pins: PinsConfig) -> str:
    """`uno-launcher pins`: where each part goes on the header, for the config in use."""
    rows = [("part", "BCM", "header pin", "wiring")]
    for field in dataclasses.fields(pins):
        bcm = getattr(pins, field.name)
        rows.append((field.name, f"GPIO{bcm}", str(HEADER_PIN.get(bcm, "?")), WIRING[field.name]))
    rows.append(("ground", "GND", "6, 9, 14, 20, 25, 30, 34, 39", "common ground with the motor supply"))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d}" for a, b, c, d in rows) + "\n"


# --- self-test ---------------------------------------------------------------------------------------------------


class Assistant(Protocol):
    """Whoever does what the self-test asks: a person at the launcher, or the simulated world."""

    def ask(self, instruction: str) -> None: ...


class Person:
    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say

    def ask(self, instruction: str) -> None:
        self._say(f"  -> {instruction}")


class SimulatedPerson:
    """Plays the person's part on simulated hardware, `REACTION_S` after being asked (on the hardware's clock)."""

    REACTION_S = 0.1
    # How long the card blocks the beam, or the lid stays open: as long as a hand does. Far shorter, and the board's
    # loop on a busy machine could miss the lid (it must see it open for LID_SETTLE_MS) or the self-test the beam.
    HOLD_S = 0.5

    def __init__(self, hardware: HeaderHardware, *, clock: Clock = REAL_CLOCK) -> None:
        self._world = hardware.world  # type: ignore[attr-defined]
        self._clock = clock

    def ask(self, instruction: str) -> None:
        world, sleep = self._world, self._clock.sleep
        actions: dict[str, Callable[[], object]] = {
            "press": lambda: world.press_button(),
            "block": lambda: (world.stick_card(True), sleep(self.HOLD_S), world.stick_card(False)),
            "lid": lambda: (world.open_lid(), sleep(self.HOLD_S), world.close_lid()),
        }
        action = next(act for word, act in actions.items() if instruction.lower().startswith(word))
        StoppableThread(lambda: (sleep(self.REACTION_S), action()), "simulated-person", clock=self._clock).start()


@dataclass(frozen=True)
class Check:
    part: str
    passed: bool
    detail: str

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'}  {self.part:<8} {self.detail}"


POLL_S = 0.01  # how often the self-test looks at a part it waits for


def _wait_for(condition: Callable[[], bool], seconds: float, clock: Clock) -> bool:
    """True once `condition()` holds; False when it still does not after exactly `seconds`."""
    deadline = clock.now() + seconds
    while not condition():
        left = deadline - clock.now()
        if left <= 0:
            return False
        clock.sleep(min(POLL_S, left))
    return True


def selftest(
    hardware: HeaderHardware, assistant: Assistant, *, patience_s: float = 20.0, clock: Clock = REAL_CLOCK
) -> Iterator[Check]:
    """Walk every part; yields one Check per part as it finishes. Each wait for the person lasts `patience_s`."""

    def wait_for(condition: Callable[[], bool]) -> bool:
        return _wait_for(condition, patience_s, clock)

    presses = []
    hardware.inputs.when_pressed = lambda: presses.append(1)
    assistant.ask("Press the big button once.")
    yield Check("button", wait_for(lambda: bool(presses)), "a press registered")

    def beam() -> str | None:  # as the firmware reads it
        return hardware.status().get("beam")

    assistant.ask("Block the exit beam with a card, then take it away.")
    blocked = wait_for(lambda: beam() == "blocked")
    cleared = blocked and wait_for(lambda: beam() == "clear")
    yield Check("beam", cleared, "blocked, then clear" if cleared else "no change seen at the exit beam")

    lid = hardware.inputs
    assistant.ask("Lid: open it, then close it again.")
    opened = wait_for(lambda: lid.lid_open is True)
    closed = opened and wait_for(lambda: lid.lid_open is False)
    yield Check("lid", closed, "opened, then closed" if closed else "the lid switch did not change")

    if lid.lid_open:
        yield Check("motor", False, "skipped: the lid is open")
    else:
        result = hardware.dispenser.start(1).wait()
        ok = result.stop is StopReason.COUNT and result.dispensed == 1
        yield Check("motor", ok, f"one card in {result.ms} ms" if ok else f"ended by {result.stop}: {result}")

    hardware.cues.fired(1)
    yield Check("light", hardware.cues.running, "flashing now: look at it")
    hardware.cues.lid_closed()
    yield Check("buzzer", hardware.cues.running, "beeping now: listen for it")


# --- calibration -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    pwm: float
    ms_per_card: float
    jam_ms: int
    tried: list[tuple[float, int, int]]  # (duty, single cards out of tries, mean ms)


def calibrate(
    make_hardware: Callable[[Config], HeaderHardware], config: Config, *, tries: int = 5
) -> Calibration | None:
    """The lowest duty that shoots exactly one card every time, one step up for margin, and a jam time to match.

    A low duty is gentler on the cards and throws them less far; a duty that sometimes jams is no good at all.
    """
    tried: list[tuple[float, int, int]] = []
    reliable: list[tuple[float, float]] = []
    for duty in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        hardware = make_hardware(config.replace("dispense", pwm=duty))
        try:
            results = []
            for _ in range(tries):
                results.append(hardware.dispenser.start(1).wait())
                hardware.clock.sleep(config.dispense.min_rest_ms / 1000)  # the firmware refuses a fire sooner
        finally:
            hardware.close()
        singles = [r for r in results if r.stop is StopReason.COUNT and r.dispensed == 1]
        mean_ms = round(statistics.mean(r.ms for r in singles)) if singles else 0
        tried.append((duty, len(singles), mean_ms))
        if len(singles) == tries:
            reliable.append((duty, statistics.mean(r.ms for r in singles)))
            if len(reliable) == 2:
                break
    if not reliable:
        return None
    pwm, ms = reliable[-1]
    slowest = max(ms for _, ms in reliable)
    return Calibration(pwm=pwm, ms_per_card=round(ms, 1), jam_ms=max(300, min(10000, round(4 * slowest))), tried=tried)


def set_toml_values(text: str, section: str, values: dict[str, float | int]) -> str:
    """Set `key = value` lines in `[section]` of a TOML text, keeping everything else as it was."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[([^\]]+)\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if (m := header.match(line)) and m[1].strip() == section), None)
    if start is None:
        lines += ["", f"[{section}]"]
        start = len(lines) - 1
    end = next((i for i in range(start + 1, len(lines)) if header.match(lines[i])), len(lines))
    for key, value in values.items():
        assignment = f"{key} = {value}"
        found = next((i for i in range(start + 1, end) if re.match(rf"^\s*{re.escape(key)}\s*=", lines[i])), None)
        if found is None:
            after = max((i for i in range(start, end) if lines[i].strip()), default=start) + 1  # before blank lines
            lines.insert(after, assignment)
            end += 1
        else:
            lines[found] = assignment
    return "\n".join(lines).lstrip("\n") + "\n"
