"""Configuration: a TOML file read into frozen dataclasses.

Strict, like Klipper's config: an unknown section or key, a wrong type or a value out of range stops start-up
with one line that names the key, the value and what is accepted. Every default works on a laptop: simulated
hardware, state in ./var/, the page on 127.0.0.1:8080.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launcher.errors import LauncherError
from launcher.schedule import PROFILES, Profile, ProfileError, custom_profile


class ConfigError(LauncherError, ValueError):
    """A configuration problem, worded for the person who edits the file."""


def _opt(default: Any, *, lo: float | None = None, hi: float | None = None, choices: tuple[Any, ...] = ()) -> Any:
    return field(default=default, metadata={"lo": lo, "hi": hi, "choices": choices})


@dataclass(frozen=True)
class HardwareConfig:
    backend: str = _opt("sim", choices=("sim", "gpio", "serial"))
    # SCHED_FIFO priority of the threads that bring the button's edge and start the motor (0: left as they are)
    edge_priority: int = _opt(10, lo=0, hi=99)


@dataclass(frozen=True)
class PinsConfig:
    """BCM pin numbers of the parts on the Pi header (docs/HARDWARE.md has the wiring)."""

    button: int = _opt(17, lo=0, hi=27)
    motor_forward: int = _opt(20, lo=0, hi=27)
    motor_backward: int = _opt(21, lo=0, hi=27)
    motor_enable: int = _opt(12, lo=0, hi=27)
    exit_beam: int = _opt(27, lo=0, hi=27)
    lid: int = _opt(22, lo=0, hi=27)
    light: int = _opt(13, lo=0, hi=27)
    buzzer: int = _opt(18, lo=0, hi=27)
    servo: int = _opt(19, lo=0, hi=27)  # only used when [aim] seat_angles is set


@dataclass(frozen=True)
class DispenseConfig:
    pwm: float = _opt(0.8, lo=0.05, hi=1.0)  # motor duty while shooting
    max_run_ms: int = _opt(4000, lo=100, hi=20000)  # hard limit per fire, enforced by a watchdog
    jam_ms: int = _opt(1200, lo=50, hi=10000)  # motor on and no card at the exit for this long: a jam
    min_rest_ms: int = _opt(250, lo=0, hi=10000)  # motor rest between two fires
    card_gap_ms: int = _opt(4, lo=0, hi=500)  # beam edges closer than this are one card (chatter)
    stuck_ms: int = _opt(400, lo=20, hi=10000)  # beam blocked this long: a card stuck at the exit
    ramp_ms: int = _opt(80, lo=0, hi=2000)  # soft start: from a third of the duty up to pwm over this time
    reverse_ms: int = _opt(40, lo=0, hi=500)  # pull back a card left sticking out after each fire
    debounce_ms: int = _opt(30, lo=0, hi=500)  # the button must rest released this long before a press counts
    hopper_cards: int = _opt(112, lo=1, hi=500)  # cards in the hopper on a first start (hopper.MAX_HOPPER_CARDS)


@dataclass(frozen=True)
class SerialConfig:
    """A launcher board on USB serial (firmware/), best named by its /dev/serial/by-id/ path: it survives a replug."""

    port: str = _opt("")
    baudrate: int = _opt(115200, lo=1200, hi=4000000)


@dataclass(frozen=True)
class SimConfig:
    """The simulated hopper and card exit."""

    cards_per_second: float = _opt(12.0, lo=0.5, hi=1000.0)  # at full motor duty
    card_block_ms: float = _opt(6.0, lo=0.1, hi=200.0)  # how long one card blocks the beam
    stall_duty: float = _opt(0.15, lo=0.0, hi=0.9)  # below this duty the roller does not move cards


def _custom_profile(table: Any) -> Profile:
    """[schedule.custom]: parameters over those of `classic`, so a table may change only a few."""
    try:
        return custom_profile(PROFILES["classic"], table, "schedule.custom")
    except ProfileError as e:
        raise ConfigError(str(e)) from None


# A shuffle ends by itself after this many presses and the next begins, going on from the same run of misses or
# fires: what a restart replays, what the daemon holds in memory and what the event log must keep stay bounded.
SHUFFLE_PRESSES = 500


@dataclass(frozen=True)
class ScheduleConfig:
    profile: str = _opt("classic")
    custom: Profile = field(default=PROFILES["custom"], metadata={"parse": _custom_profile})
    shuffle_presses: int = _opt(SHUFFLE_PRESSES, lo=20, hi=100_000)

    @property
    def active_profile(self) -> Profile:
        return self.custom if self.profile == "custom" else PROFILES[self.profile]


def _seat_angles(value: Any) -> tuple[float, ...]:
    """[aim] seat_angles: one angle per seat, in seat order, from -90 to 90 degrees."""
    bad = ConfigError(
        f"aim.seat_angles = {value!r} is not accepted: expected a list of up to 10 angles from -90 to 90 (degrees), "
        "one per seat in seat order"
    )
    if not isinstance(value, list) or len(value) > 10:
        raise bad
    for angle in value:
        if isinstance(angle, bool) or not isinstance(angle, int | float) or not -90 <= angle <= 90:
            raise bad
    return tuple(float(a) for a in value)


@dataclass(frozen=True)
class FairnessConfig:
    """[fairness] beacon: "drand-quicknet" binds each shuffle's key to a public drand round too (docs/FAIRNESS.md)."""

    beacon: str = _opt("off", choices=("off", "drand-quicknet"))


@dataclass(frozen=True)
class AimConfig:
    """The optional aiming servo turns the launcher to face the player who must press, as the rules ask."""

    seat_angles: tuple[float, ...] = field(default=(), metadata={"parse": _seat_angles})


@dataclass(frozen=True)
class WebConfig:
    host: str = _opt("127.0.0.1")
    port: int = _opt(8080, lo=0, hi=65535)  # 0: any free port
    threads: int = _opt(32, lo=4, hi=256)  # for requests: a live stream holds none (webui/stream_hub.py)
    heartbeat_s: float = _opt(15.0, lo=0.05, hi=300.0)


@dataclass(frozen=True)
class StateConfig:
    dir: str = _opt("./var")
    keep_events_days: int = _opt(90, lo=1, hi=3650)  # the event log's; games and shuffle records are kept for ever


@dataclass(frozen=True)
class LimitsConfig:
    """What one joined phone may do (launcher/budgets.py): far above a family's game, far below filling a disk."""

    games_per_minute: int = _opt(6, lo=1, hi=600)  # per session
    declarations_per_minute: int = _opt(120, lo=1, hi=6000)  # per session
    joins_per_minute: int = _opt(10, lo=1, hi=600)  # per address
    shuffles_per_minute: int = _opt(6, lo=1, hi=600)  # per session
    reloads_per_minute: int = _opt(6, lo=1, hi=600)  # per session
    presses_per_minute: int = _opt(240, lo=1, hi=60000)  # per session; a refused press is logged too
    # Codes typed to let a waiting phone in, per session: a PIN checked outside the guessing budget needs a person,
    # and this keeps a script holding a session from making that an oracle (and the launcher a hashing mill).
    let_ins_per_minute: int = _opt(10, lo=1, hi=600)
    store_mb: int = _opt(2048, lo=16, hi=1_000_000)  # the store with its write-ahead log


MIN_HOLD_S = 2.0  # shorter, and an ordinary press held a little long could power the Pi off


def _hold_to_poweroff(value: Any) -> float:
    """[power] hold_to_poweroff_s: 0 (never), or how long the big button must be held while idle."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not (value == 0 or MIN_HOLD_S <= value <= 60):
        raise ConfigError(
            f"power.hold_to_poweroff_s = {value!r} is not accepted: expected 0 (never) or a number of seconds "
            f"from {MIN_HOLD_S:g} to 60"
        )
    return float(value)


@dataclass(frozen=True)
class PowerConfig:
    """Holding the big button while the launcher is idle powers the Pi off (systemd/README.md says what it needs)."""

    hold_to_poweroff_s: float = field(default=0.0, metadata={"parse": _hold_to_poweroff})


# A table's name is one level of its MQTT topics (uno-launcher/<table>/…) and of Home Assistant's ids.
TABLE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
TOURNAMENT_LEVEL = "tournament"  # uno-launcher/tournament/… is shared by every table: no table may be called that
DISCOVERY_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,64}(/[A-Za-z0-9_-]{1,64}){0,3}")


def _broker(value: Any) -> str:
    """[mqtt] broker: "mqtt://host[:port]" or "mqtts://host[:port]" (TLS); "" (the default) is no MQTT at all."""
    bad = ConfigError(
        f'mqtt.broker = {value!r} is not accepted: expected "mqtt://host:1883" or "mqtts://host:8883" '
        "(the port may be left out)"
    )
    if not isinstance(value, str):
        raise bad
    if value == "":
        return value
    try:
        url = urllib.parse.urlsplit(value)
        port = url.port
    except ValueError:
        raise bad from None
    if url.scheme not in ("mqtt", "mqtts") or not url.hostname or url.path not in ("", "/") or url.query:
        raise bad
    if url.username is not None or port == 0:  # credentials have keys of their own, not hidden in a URL
        raise bad
    return value


def _table_name(value: Any) -> str:
    if not isinstance(value, str) or not TABLE_NAME.fullmatch(value) or value == TOURNAMENT_LEVEL:
        raise ConfigError(
            f"mqtt.table = {value!r} is not accepted: expected 1 to 32 lower-case letters, digits, - or _, "
            f"starting with a letter or digit, and not {TOURNAMENT_LEVEL!r}"
        )
    return value


def _discovery_prefix(value: Any) -> str:
    if not isinstance(value, str) or not DISCOVERY_PREFIX.fullmatch(value):
        raise ConfigError(
            f'mqtt.discovery_prefix = {value!r} is not accepted: expected a topic such as "homeassistant" '
            "(letters, digits, - and _, up to four levels, no wildcards)"
        )
    return value


@dataclass(frozen=True)
class MqttConfig:
    """The table on a home MQTT broker (docs/HOME.md): its events, Home Assistant's device, a shared tournament."""

    broker: str = field(default="", metadata={"parse": _broker})  # "": no MQTT
    table: str = field(default="", metadata={"parse": _table_name})  # needed with a broker: "kitchen"
    username: str = _opt("")
    password: str = _opt("")
    password_file: str = _opt("")  # read at start-up; keeps the secret out of a config file others may read
    ca_file: str = _opt("")  # mqtts only: the CA that signed the broker's certificate (else the system's CAs)
    discovery_prefix: str = field(default="homeassistant", metadata={"parse": _discovery_prefix})
    discovery: bool = _opt(True)  # announce the launcher to Home Assistant
    allow_new_shuffle: bool = _opt(False)  # Home Assistant may start a new shuffle (never a press)
    keepalive_s: int = _opt(30, lo=5, hi=3600)

    @property
    def enabled(self) -> bool:
        return bool(self.broker)

    @property
    def tls(self) -> bool:
        return self.broker.startswith("mqtts:")

    @property
    def host(self) -> str:
        return urllib.parse.urlsplit(self.broker).hostname or ""

    @property
    def port(self) -> int:
        return urllib.parse.urlsplit(self.broker).port or (8883 if self.tls else 1883)


@dataclass(frozen=True)
class Config:
    hardware: HardwareConfig = field(default_factory=HardwareConfig)
    pins: PinsConfig = field(default_factory=PinsConfig)
    dispense: DispenseConfig = field(default_factory=DispenseConfig)
    serial: SerialConfig = field(default_factory=SerialConfig)
    sim: SimConfig = field(default_factory=SimConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    fairness: FairnessConfig = field(default_factory=FairnessConfig)
    aim: AimConfig = field(default_factory=AimConfig)
    web: WebConfig = field(default_factory=WebConfig)
    state: StateConfig = field(default_factory=StateConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    power: PowerConfig = field(default_factory=PowerConfig)
    mqtt: MqttConfig = field(default_factory=MqttConfig)

    @property
    def state_dir(self) -> Path:
        return Path(self.state.dir)

    def replace(self, section: str, **values: Any) -> Config:
        """A copy with some values of one section changed, validated like the file (for CLI flags)."""
        checked = _build_section(section, values)
        changed = dataclasses.replace(getattr(self, section), **{key: getattr(checked, key) for key in values})
        return dataclasses.replace(self, **{section: changed})


_SECTIONS: dict[str, type] = {f.name: f.default_factory for f in dataclasses.fields(Config)}  # type: ignore[misc]


def _accepted(meta: Mapping[str, Any], kind: type) -> str:
    if meta["choices"]:
        return "one of " + ", ".join(repr(c) for c in meta["choices"])
    noun = {int: "a whole number", float: "a number", str: "a string", bool: "true or false"}[kind]
    if meta["lo"] is not None:
        return f"{noun} from {meta['lo']:g} to {meta['hi']:g}"
    return noun


def _check_value(key: str, value: Any, kind: type, meta: Mapping[str, Any]) -> Any:
    accepted = _accepted(meta, kind)
    bad = ConfigError(f"{key} = {value!r} is not accepted: expected {accepted}")
    if isinstance(value, bool) != (kind is bool):  # TOML true/false must not pass as 1/0, nor 1/0 as true/false
        raise bad
    if kind is float and isinstance(value, int):
        try:
            value = float(value)
        except OverflowError:  # a whole number too big for a float is out of any range
            raise bad from None
    if not isinstance(value, kind):
        raise bad
    if meta["choices"] and value not in meta["choices"]:
        raise bad
    if meta["lo"] is not None and not meta["lo"] <= value <= meta["hi"]:
        raise bad
    return value


def _build_section(section: str, table: Any) -> Any:
    cls = _SECTIONS[section]
    if not isinstance(table, dict):
        raise ConfigError(f"[{section}] must be a table of keys, not {table!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key in table:
        if key not in fields:
            raise ConfigError(f"{section}.{key}: unknown key; accepted keys are {', '.join(fields)}")
    kinds = {"int": int, "float": float, "str": str, "bool": bool}
    values = {}
    for name, value in table.items():
        meta = fields[name].metadata
        if "parse" in meta:
            values[name] = meta["parse"](value)
        else:
            values[name] = _check_value(f"{section}.{name}", value, kinds[str(fields[name].type)], meta)
    return cls(**values)


MOTOR_PINS = ("motor_forward", "motor_backward", "motor_enable")
FIXED_PULL_UPS = (2, 3)  # I2C pins with 1.8 kOhm pull-ups on the board: high while the Pi boots


def _check_pins(pins: PinsConfig) -> None:
    owners: dict[int, str] = {}
    for name, pin in dataclasses.asdict(pins).items():
        if pin in owners:
            raise ConfigError(f"pins.{name} = {pin} clashes with pins.{owners[pin]} = {pin}: one part per pin")
        owners[pin] = name
        if name in MOTOR_PINS and pin in FIXED_PULL_UPS:
            raise ConfigError(
                f"pins.{name} = {pin} is not accepted: GPIO2 and GPIO3 have fixed pull-ups, so the motor driver "
                "would be on while the Pi boots; use a pin that can be pulled down"
            )


def _check_serial(config: Config) -> None:
    if config.hardware.backend == "serial" and not config.serial.port:
        raise ConfigError(
            'hardware.backend = "serial" needs serial.port, e.g. "/dev/serial/by-id/usb-Raspberry_Pi_Pico_…-if00"'
        )


def _check_mqtt(mqtt: MqttConfig) -> None:
    if mqtt.enabled and not mqtt.table:
        raise ConfigError('mqtt.broker needs mqtt.table, this table\'s name on the broker, e.g. "kitchen"')
    if mqtt.password and mqtt.password_file:
        raise ConfigError("mqtt.password and mqtt.password_file are both set: keep one")
    if mqtt.ca_file and not mqtt.tls:
        raise ConfigError('mqtt.ca_file is set but mqtt.broker is not "mqtts://…": a CA file is only for TLS')
    if (mqtt.password or mqtt.password_file) and not mqtt.username:
        raise ConfigError("mqtt.password needs mqtt.username")


def from_mapping(data: dict[str, Any]) -> Config:
    """Build and validate a Config from parsed TOML."""
    for section in data:
        if section not in _SECTIONS:
            raise ConfigError(f"[{section}]: unknown section; accepted sections are {', '.join(_SECTIONS)}")
    config = Config(**{name: _build_section(name, table) for name, table in data.items()})
    _check_pins(config.pins)
    _check_serial(config)
    _check_mqtt(config.mqtt)
    if config.schedule.profile not in PROFILES:
        raise ConfigError(
            f"schedule.profile = {config.schedule.profile!r} is not accepted: "
            f"expected one of {', '.join(repr(p) for p in PROFILES)}"
        )
    return config


def load(path: Path | None) -> Config:
    """Read the config file; no path means every default."""
    if path is None:
        return Config()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read config file {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path} is not UTF-8 text: byte {e.start + 1} is {e.object[e.start]:#04x}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path} is not valid TOML: {e}") from None
    except RecursionError:  # tomllib recurses once per level of arrays and inline tables
        raise ConfigError(f"{path} is not valid TOML: it nests arrays or tables too deeply to be a config") from None
    return from_mapping(data)
