"""The config loader fuzzed with Hypothesis: whatever a config file holds, start-up stops with a
ConfigError whose message names the key at fault or the file, and never with another exception. What it accepts
is a config the daemon can run: its custom profile has finite figures.

The serial frame parser is fuzzed in tests/test_framing.py.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from launcher.config import Config, ConfigError, from_mapping, load
from launcher.fairplay.schedule import PARAMETERS, PROFILES, profile_to_mapping

FUZZ = settings(
    derandomize=True,  # a pass stays a pass (as in test_framing.py)
    max_examples=400,
    deadline=None,  # other test runs share the cores
    suppress_health_check=[HealthCheck.too_slow],  # nested TOML-like documents are large examples
)

SECTIONS: dict[str, list[str]] = {
    f.name: [g.name for g in dataclasses.fields(f.default_factory)]  # type: ignore[misc]
    for f in dataclasses.fields(Config)
}
DOTTED_KEYS = {f"{section}.{key}" for section, keys in SECTIONS.items() for key in keys}

# --- TOML-shaped values: what tomllib can hand to from_mapping -----------------------------------------------------

scalars = st.one_of(
    st.booleans(),
    st.integers(),  # TOML says 64 bits, but tomllib hands over any size
    st.integers(-(2**63), 2**63 - 1),
    st.integers(-5, 70000),  # around the ranges: pins, ports, milliseconds
    st.floats(),  # nan and inf are TOML too
    st.floats(-2.0, 2.0),  # around the duties and probabilities
    st.text(max_size=12),
    st.sampled_from(["sim", "gpio", "serial", "classic", "custom", "extreme", "127.0.0.1", "/dev/ttyACM0"]),
    st.datetimes(),
    st.dates(),
    st.times(),
    st.datetimes(timezones=st.just(datetime.UTC)),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.dictionaries(st.text(max_size=8), inner, max_size=4),
    ),
    max_leaves=12,
)
weights = st.lists(st.one_of(st.floats(0, 1), st.floats(), st.integers(-1, 5)), max_size=10)
probabilities = st.lists(st.floats(-0.1, 1.1), min_size=1, max_size=8).map(sorted)


def _profile(base: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A built-in profile's parameters with a few changed, removed or added: mostly near what is accepted."""
    near = {
        "hazard": st.one_of(probabilities.map(lambda h: [*h, 1.0]), probabilities, values),
        "pattern": st.one_of(st.lists(st.integers(-1, 100), max_size=8).map(sorted), values),
        "card_weights": st.one_of(weights, values),
        "max_fires_in_row": st.one_of(st.integers(-1, 12), values),
        "jackpot_probability": st.one_of(st.floats(-0.1, 1.1), values),
        "jackpot_cards": st.one_of(st.lists(st.integers(-1, 600), max_size=3).map(sorted), values),
        "pause_probability": st.one_of(st.floats(-0.1, 1.1), values),
        "pause_ms": st.one_of(st.lists(st.integers(-1, 11000), max_size=3).map(sorted), values),
    }
    changed = st.lists(st.sampled_from(sorted(near)), max_size=2, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({key: near[key] for key in keys})
    )
    removed = st.sets(st.sampled_from(sorted(base)), max_size=1)
    unknown = st.one_of(
        *[st.just({})] * 4, st.dictionaries(st.sampled_from(["name", "hazzard", ""]), values, max_size=1)
    )
    return st.builds(
        lambda change, gone, extra: {**{k: v for k, v in base.items() if k not in gone}, **change, **extra},
        changed,
        removed,
        unknown,
    )


custom_profile = st.one_of(
    *[_profile(profile_to_mapping(p)) for p in PROFILES.values()],
    st.dictionaries(st.one_of(st.sampled_from(PARAMETERS), st.text(max_size=10)), values, max_size=4),
)


def _near(section: str, field: dataclasses.Field[Any]) -> st.SearchStrategy[Any]:
    """A value for one key: mostly of its kind and around its range, sometimes anything at all."""
    meta, kind = field.metadata, str(field.type)
    if "parse" in meta:  # tables and lists parsed by their own function
        if field.name == "custom":
            return custom_profile
        return st.one_of(st.lists(st.one_of(st.floats(-100, 100), st.integers(-100, 100)), max_size=12), values)
    if meta["choices"]:
        near = st.sampled_from([*meta["choices"], "x"])
    elif meta["lo"] is not None and kind == "int":
        near = st.integers(int(meta["lo"]) - 2, int(meta["hi"]) + 2)
    elif meta["lo"] is not None:
        near = st.one_of(st.floats(meta["lo"] - 0.5, meta["hi"] + 0.5), st.integers(int(meta["lo"]), int(meta["hi"])))
    elif section == "schedule":
        near = st.sampled_from([*PROFILES, "x"])
    else:
        near = st.text(max_size=20)
    return st.one_of(near, near, near, values)


def _unknown_key(value: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.text(max_size=10), value, min_size=1, max_size=1)


section_tables = {
    f.name: st.fixed_dictionaries(
        {},
        optional={g.name: _near(f.name, g) for g in dataclasses.fields(f.default_factory)},  # type: ignore[misc]
    ).flatmap(
        lambda table: st.one_of(
            *[st.just(table)] * 4, st.builds(lambda extra: {**table, **extra}, _unknown_key(values))
        )
    )
    for f in dataclasses.fields(Config)
}


documents = st.one_of(
    st.fixed_dictionaries({}, optional={name: table for name, table in section_tables.items()}),
    st.fixed_dictionaries({}, optional={name: st.one_of(table, values) for name, table in section_tables.items()}),
    st.dictionaries(st.one_of(st.sampled_from(list(SECTIONS)), st.text(max_size=10)), values, max_size=3),
)


def _names_a_key(message: str, data: dict[str, Any]) -> bool:
    """The message points at what to edit: a section of the document, or a key as `section.key`."""
    sections = {f"[{section}" for section in data}
    keys = {f"{section}.{key}" for section, table in data.items() if isinstance(table, dict) for key in table}
    return any(name in message for name in sections | keys | DOTTED_KEYS)


def _check_accepted(config: Config) -> None:
    """A config that passed can run: its profile's figures are finite and its cards' chances add up."""
    profile = config.schedule.active_profile
    custom = config.schedule.custom
    for p in (profile, custom):
        assert math.isfinite(p.expected_fire_rate()), p
        chances = p.cards_distribution()
        assert all(0 <= c <= 1 for c in chances.values()), (p, chances)
        # Loose: weights of 5e-324 (subnormal) round the plain share up to 1; the jackpots then add 0.5 %.
        assert abs(sum(chances.values()) - 1.0) < 0.01, (p, chances)
        assert math.isfinite(p.expected_cards_per_fire()), p


@FUZZ
@given(documents)
def test_from_mapping_accepts_or_names_the_key_at_fault(data: dict[str, Any]) -> None:
    try:
        config = from_mapping(data)
    except ConfigError as refused:
        message = str(refused)
        event("refused", message.split(" ")[0].split("=")[0])
        assert _names_a_key(message, data), message
    else:
        event("accepted", "custom profile" if "custom" in data.get("schedule", {}) else "")
        _check_accepted(config)


@FUZZ
@given(custom_profile)
def test_a_custom_profile_is_accepted_or_refused_by_its_parameter(table: dict[str, Any]) -> None:
    data = {"schedule": {"profile": "custom", "custom": table}}
    try:
        config = from_mapping(data)
    except ConfigError as refused:
        message = str(refused)
        event("refused", message.split(" ")[0])
        assert message.startswith(("schedule.custom.", "[schedule.custom]")), message
    else:
        event("accepted")
        _check_accepted(config)


toml_literals = st.sampled_from(
    [
        "1", "-1", "0", "27", "65535", "99999999999999999999999", "0x1F", "1e400", "-0.0", "0.5", "1.5", "inf",
        "nan", "-inf", "true", "false", '"sim"', '"serial"', '"custom"', '""', "'x'", "[]", "[0.5, 1.0]",
        "[1, 2, 3]", '["a"]', "{}", "{a = 1}", "1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", '"""\nx\n"""',
    ]
)  # fmt: skip
toml_keys = st.one_of(
    st.sampled_from(sorted({key for keys in SECTIONS.values() for key in keys} | set(PARAMETERS))),
    st.text("abcdefghijklmnopqrstuvwxyz_.-", min_size=1, max_size=12),
    st.text(max_size=6),
)
toml_lines = st.one_of(
    st.builds("[{}]".format, st.one_of(st.sampled_from([*SECTIONS, "schedule.custom"]), st.text(max_size=8))),
    st.builds("{} = {}".format, toml_keys, toml_literals),
    st.text(max_size=20),
)
toml_texts = st.one_of(st.lists(toml_lines, max_size=10).map("\n".join), st.text(max_size=200))


def _bytes(content: str | bytes) -> bytes:
    if isinstance(content, str):
        return content.encode("utf-8", "surrogatepass")  # a lone surrogate makes bytes that are not UTF-8
    return content


@FUZZ
@given(st.one_of(toml_texts, st.binary(max_size=200)))
def test_load_accepts_or_names_the_file_or_the_key(content: str | bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "uno-launcher.toml"
        path.write_bytes(_bytes(content))
        try:
            config = load(path)
        except ConfigError as refused:
            message = str(refused)
        else:
            _check_accepted(config)
            return
    try:
        data = tomllib.loads(_bytes(content).decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        assert str(path) in message, message  # not TOML: the file is named
    else:
        assert _names_a_key(message, data), message  # TOML: the key at fault is named


def test_a_file_that_is_not_text_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b"\xff\xfe[web]\nport = 1\n")
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        load(path)


def test_a_huge_whole_number_for_a_decimal_key_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=re.escape("sim.cards_per_second = 1000000")):
        from_mapping({"sim": {"cards_per_second": 10**400}})
