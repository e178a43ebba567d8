"""The Pi's own power warnings: under-voltage and throttling, as its firmware reports them in sysfs.

A motor starting or stalling is the classic cause of a Raspberry Pi's brown-outs: the supply's voltage dips, the
firmware flags it and slows the processor, and a weak supply can reset the Pi mid-fire. `PowerMonitor` reads the
flags every few seconds on a thread of its own, logs a line when a condition starts and when it ends, publishes
`power.changed`, and keeps the current warnings for `/api/state`, so that every phone can say so while it lasts.

Raspberry Pi kernels give the firmware's bitmask in `get_throttled`; mainline kernels only the `rpi_volt` hwmon's
under-voltage alarm. A machine with neither (not a Pi) has no warnings and says nothing.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from launcher.clock import REAL_CLOCK, Clock
from launcher.errors import LauncherError
from launcher.events import EventType
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

POLL_S = 5.0  # a brown-out lasts as long as the motor runs; a few seconds is soon enough to tell the table
THROTTLED_FILE = "sys/devices/platform/soc/soc:firmware/get_throttled"  # under the root; a hex bitmask
HWMON_DIR = "sys/class/hwmon"
HWMON_NAME = "rpi_volt"
HWMON_ALARM = "in0_lcrit_alarm"
SINCE_BOOT_SHIFT = 16  # bits 16-19: the same four conditions, "has occurred since boot"


class PowerWarning(enum.StrEnum):
    UNDER_VOLTAGE = "under_voltage"  # bit 0: the supply is too weak now
    FREQUENCY_CAPPED = "frequency_capped"  # bit 1: the processor's clock is held down
    THROTTLED = "throttled"  # bit 2: the processor is slowed down
    SOFT_TEMPERATURE_LIMIT = "soft_temperature_limit"  # bit 3: hot enough that the firmware holds back


BITS = tuple(PowerWarning)  # in bit order
DESCRIPTIONS = {  # for the journal
    PowerWarning.UNDER_VOLTAGE: "under-voltage: the power supply is too weak (the motor may draw it down)",
    PowerWarning.FREQUENCY_CAPPED: "ARM frequency capped",
    PowerWarning.THROTTLED: "throttled: the processor is slowed down",
    PowerWarning.SOFT_TEMPERATURE_LIMIT: "soft temperature limit reached: the Pi is hot",
}


class PowerFlagsUnreadable(LauncherError, ValueError):
    """The flags' file exists but does not hold what the kernel writes there."""


@dataclass(frozen=True, slots=True)
class PowerFlags:
    now: frozenset[PowerWarning]
    since_boot: frozenset[PowerWarning]


NONE = PowerFlags(frozenset(), frozenset())


class SysfsPowerFlags:
    """Reads the flags under `root` (`/` on the Pi; a scratch tree in tests)."""

    def __init__(self, root: Path = Path("/")) -> None:
        self._root = root

    def read(self) -> PowerFlags | None:
        """The flags; None where the kernel gives none (not a Pi). Raises PowerFlagsUnreadable."""
        throttled = self._root / THROTTLED_FILE
        text = self._text(throttled)
        if text is not None:
            try:
                mask = int(text, 16)
            except ValueError:
                raise PowerFlagsUnreadable(f"{throttled} holds {text[:40]!r}, not a hexadecimal bitmask") from None
            return PowerFlags(_bits(mask), _bits(mask >> SINCE_BOOT_SHIFT))
        alarm = self._hwmon_alarm()
        if alarm is None:
            return None
        text = self._text(alarm)
        if text not in ("0", "1"):
            raise PowerFlagsUnreadable(f"{alarm} holds {text!r}, not 0 or 1")
        return PowerFlags(frozenset({PowerWarning.UNDER_VOLTAGE}) if text == "1" else frozenset(), frozenset())

    def _hwmon_alarm(self) -> Path | None:
        try:
            devices = sorted((self._root / HWMON_DIR).iterdir())
        except OSError:
            return None
        for device in devices:
            if self._text(device / "name") == HWMON_NAME:
                return device / HWMON_ALARM
        return None

    @staticmethod
    def _text(path: Path) -> str | None:
        """The file's text, stripped; None when there is no such file."""
        try:
            return path.read_bytes().decode("ascii").strip()
        except FileNotFoundError:
            return None
        except UnicodeDecodeError:
            raise PowerFlagsUnreadable(f"{path} is not text") from None
        except OSError as e:
            raise PowerFlagsUnreadable(f"cannot read {path}: {e.strerror}") from None


def _bits(mask: int) -> frozenset[PowerWarning]:
    return frozenset(warning for bit, warning in enumerate(BITS) if mask >> bit & 1)


class FlagReader(Protocol):
    def read(self) -> PowerFlags | None: ...


class Publisher(Protocol):
    def publish(self, type: EventType, data: dict[str, Any]) -> object: ...


class PowerMonitor:
    """Polls the flags, tells the journal and the phones when a condition starts and ends."""

    def __init__(
        self,
        reader: FlagReader,
        *,
        bus: Publisher,
        clock: Clock = REAL_CLOCK,
        poll_s: float = POLL_S,
    ) -> None:
        self._reader = reader
        self._bus = bus
        self._clock = clock
        self._poll_s = poll_s
        self._flags = NONE
        self._since: dict[PowerWarning, float] = {}
        self._unreadable: str | None = None  # the last complaint, logged once until the file reads again
        self._thread = StoppableThread(self._run, "power-monitor", clock=clock)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._thread.stop()

    def snapshot(self) -> dict[str, Any]:
        flags = self._flags
        return {"warnings": _names(flags.now), "since_boot": _names(flags.since_boot)}

    def poll(self) -> None:
        """Read once: log and publish what changed. Never raises (a bad read is logged once)."""
        try:
            flags = self._reader.read()
        except PowerFlagsUnreadable as e:
            if str(e) != self._unreadable:
                log.warning("power warnings unknown: %s", e)
                self._unreadable = str(e)
            return  # what was known stays shown: a damaged read says nothing about the supply
        if self._unreadable is not None:
            log.info("power warnings readable again")
            self._unreadable = None
        flags = flags or NONE
        if flags == self._flags:
            return
        started, ended = flags.now - self._flags.now, self._flags.now - flags.now
        now = self._clock.now()
        for warning in sorted(started):
            self._since[warning] = now
            log.warning("power: %s", DESCRIPTIONS[warning])
        for warning in sorted(ended):
            lasted = now - self._since.pop(warning, now)
            log.info("power: %s ended after %.0f s", DESCRIPTIONS[warning].split(":")[0], lasted)
        self._flags = flags
        if started or ended:
            self._bus.publish(
                EventType.POWER_CHANGED,
                {**self.snapshot(), "started": _names(started), "ended": _names(ended)},
            )

    def _run(self) -> None:
        stopping = self._thread.stopping
        while not stopping.is_set():
            self.poll()
            stopping.wait(self._poll_s)


def _names(warnings: frozenset[PowerWarning]) -> list[str]:
    return [str(w) for w in BITS if w in warnings]
