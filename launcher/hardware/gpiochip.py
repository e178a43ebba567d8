"""Which gpiochip carries the 40-pin header, found by its label and line count rather than by its number.

The number moves: a Pi 5 had its header on gpiochip4 until kernel 6.6.45 and has it on gpiochip0 since, and later
kernels may renumber again; a Pi 4 or older has it on gpiochip0. The label and the number of lines stay put.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from launcher.errors import LauncherError

# The header's chip on each Raspberry Pi, by label, and the line counts it has.
HEADER_CHIPS: dict[str, frozenset[int]] = {
    "pinctrl-rp1": frozenset({54}),  # Pi 5: the RP1 I/O chip
    "pinctrl-bcm2711": frozenset({58}),  # Pi 4, Pi 400, CM4
    # Pi 1 to 3 and the Zeros (54); a BCM2711 (58) under a kernel that gives it the BCM2835's label
    "pinctrl-bcm2835": frozenset({54, 58}),
}
WANTED = "pinctrl-rp1 (54 lines), pinctrl-bcm2711 (58) or pinctrl-bcm2835 (54 or 58)"
CHIP_DEVICE = re.compile(r"gpiochip([0-9]+)")


class NoHeaderChip(LauncherError, RuntimeError):
    """No gpiochip, or more than one, has the label and line count of the header's."""


@dataclass(frozen=True)
class Chip:
    number: int | None  # the N of /dev/gpiochipN, which lgpio opens; None where sysfs does not tell it
    label: str
    lines: int

    def __str__(self) -> str:
        return f"gpiochip{'?' if self.number is None else self.number} [{self.label}] ({self.lines} lines)"


def chips(root: Path = Path("/")) -> list[Chip]:
    """The GPIO chips listed in root/sys/class/gpio (the kernel's legacy GPIO sysfs, on in Raspberry Pi kernels).

    An entry there is named after the chip's first global GPIO number (gpiochip512 for a Pi 4's header under
    Bookworm), not after its /dev/gpiochipN, so N is read from the chip's device, which sits beside the entry
    under the same parent device: platform/soc/fe200000.gpio/gpio/gpiochip512 and platform/soc/fe200000.gpio/gpiochip0.
    A parent with several chips (the Pi 5's two-bank brcmstb controllers) leaves N unknown.
    """
    found = []
    for entry in (root / "sys/class/gpio").glob("gpiochip*"):
        label = (entry / "label").read_text().strip()
        lines = int((entry / "ngpio").read_text())
        numbers = [int(m[1]) for p in (entry / "device").glob("gpiochip*") if (m := CHIP_DEVICE.fullmatch(p.name))]
        found.append(Chip(numbers[0] if len(numbers) == 1 else None, label, lines))
    return sorted(found, key=lambda c: (c.number is None, c.number or 0, c.label))


def header_chip(found: list[Chip]) -> Chip:
    """The one chip of found with the label and line count of the header's, or NoHeaderChip saying what there is."""
    matches = [c for c in found if c.number is not None and c.lines in HEADER_CHIPS.get(c.label, ())]
    if len(matches) == 1:
        return matches[0]
    if matches:  # never seen on a Pi; guessing could drive the motor through the wrong pins
        raise NoHeaderChip(f"more than one gpiochip looks like the 40-pin header: {', '.join(map(str, matches))}")
    there = ", ".join(map(str, found)) if found else "none listed in /sys/class/gpio"
    raise NoHeaderChip(f"no gpiochip of the 40-pin header, which is {WANTED}; this machine's chips: {there}")
