"""Choosing the gpiozero pin factory for real hardware, explicitly rather than through gpiozero's global default."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable
from importlib.metadata import entry_points, version
from pathlib import Path

from gpiozero.pins import Factory

from launcher.errors import LauncherError
from launcher.hardware.gpiochip import NoHeaderChip, chips, header_chip

log = logging.getLogger(__name__)

# lgpio works on every Pi under Raspberry Pi OS Bookworm, the Pi 5 included; RPi.GPIO on older systems. RPi.GPIO
# needs no chip choice: it maps the BCM283x/BCM2711 GPIO registers, which are always the header's (and a Pi 5 has none).
PREFERRED = ("lgpio", "rpigpio")
CHIP_OVERRIDE = "GPIOZERO_LGPIO_CHIP"  # read by the launcher, not by gpiozero
# These take LGPIOFactory(chip=...) but overwrite it with gpiochip4 on any Pi 5, gpiochip0 elsewhere (gpiozero's
# GitHub issue 1166): on a Pi 5 since kernel 6.6.45 that is no chip, or another one. Later releases open the chip given.
IGNORES_CHIP = frozenset({"2.0", "2.0.1"})
FIXED_GPIOZERO = "gpiozero>=2.0.1.post3"


class NoPinFactory(LauncherError, RuntimeError):
    """No GPIO library works here: most likely this is not a Raspberry Pi."""


def pin_factory(*, root: Path = Path("/")) -> Factory:
    """The factory named by GPIOZERO_PIN_FACTORY, else the first of PREFERRED that works on this machine.

    root is where the kernel's /sys is looked for (a fake tree in tests).
    """
    available = {e.name: e for e in entry_points(group="gpiozero_pin_factories")}
    wanted = os.environ.get("GPIOZERO_PIN_FACTORY")
    names = [wanted] if wanted else list(PREFERRED)
    problems = []
    for name in names:
        entry = available.get(name)
        if entry is None:
            problems.append(f"{name}: not installed")
            continue
        try:
            factory_class = entry.load()
            return _lgpio(factory_class, root) if name == "lgpio" else factory_class()
        except Exception as e:  # a factory fails in its own ways (no chip, no daemon, no module): try the next
            problems.append(f"{name}: {e}")
    raise NoPinFactory(
        "no GPIO pin library works on this machine ("
        + "; ".join(problems)
        + "). On a laptop, run on simulated hardware with --sim; on a Pi, install the extra: pip install '.[pi]'"
    )


def _lgpio(factory_class: Callable[..., Factory], root: Path) -> Factory:
    """lgpio on the gpiochip that GPIOZERO_LGPIO_CHIP names, else on the one labelled as the header's."""
    override = os.environ.get(CHIP_OVERRIDE)
    if override is not None:
        if not re.fullmatch(r"[0-9]+", override):
            raise ValueError(f"{CHIP_OVERRIDE} must be a gpiochip number such as 0, not {override!r}")
        number, chip = int(override), f"gpiochip{override} (from {CHIP_OVERRIDE})"
    else:
        try:
            header = header_chip(chips(root))
        except NoHeaderChip as e:
            raise NoHeaderChip(f"{e}; to name the header's chip yourself, set {CHIP_OVERRIDE} to its number") from None
        assert header.number is not None  # header_chip only picks chips whose number is known
        number, chip = header.number, str(header)
    installed = version("gpiozero")
    if installed in IGNORES_CHIP:
        raise RuntimeError(
            f"gpiozero {installed} cannot be told to use {chip} (it ignores chip=): pip install '{FIXED_GPIOZERO}'"
        )
    factory = factory_class(chip=number)
    log.info("GPIO through lgpio on %s", chip)
    return factory
