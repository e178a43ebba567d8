"""Choosing the gpiozero pin factory for real hardware, explicitly rather than through gpiozero's global default."""

from __future__ import annotations

import os
from importlib.metadata import entry_points

from gpiozero.pins import Factory

# lgpio works on every Pi under Raspberry Pi OS Bookworm, the Pi 5 included; RPi.GPIO on older systems.
PREFERRED = ("lgpio", "rpigpio")


class NoPinFactory(RuntimeError):
    """No GPIO library works here: most likely this is not a Raspberry Pi."""


def pin_factory() -> Factory:
    """The factory named by GPIOZERO_PIN_FACTORY, else the first of PREFERRED that works on this machine."""
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
            return entry.load()()
        except Exception as e:
            problems.append(f"{name}: {e}")
    raise NoPinFactory(
        "no GPIO pin library works on this machine ("
        + "; ".join(problems)
        + "). On a laptop, run on simulated hardware with --sim; on a Pi, install the extra: pip install '.[pi]'"
    )
