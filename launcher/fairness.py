"""Commit and reveal: players can check that a round's outcomes were fixed before the first press.

At round start the daemon draws a seed with `new_seed()` and publishes only `commitment(seed)`, its SHA-256.
Every outcome is a deterministic function of the seed, the press number and the schedule state (launcher/schedule.py
lists the draws), so at round end it reveals the seed in a record (`round_record`) and anyone can replay the round
(`verify`, `verify_file`, `uno-launcher verify`). The record format is documented in docs/FAIRNESS.md.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher.schedule import Outcome, Profile, ProfileError, Schedule, profile_from_mapping, profile_to_mapping

FORMAT = "uno-launcher-round/1"
SEED_BYTES = 16  # 128 bits: nobody can find the seed from its commitment
CHECKED_FIELDS = ("cards", "jackpot", "pause_ms")  # compared when present; "cards" must be


class RecordError(ValueError):
    """The record is not a round record this version can read; the message names the bad field."""


def new_seed() -> str:
    """A fresh secret seed for one round, as lowercase hex."""
    return secrets.token_hex(SEED_BYTES)


def commitment(seed: str) -> str:
    """What the page shows at round start: the SHA-256 of the seed's UTF-8 bytes, as lowercase hex."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def replay(profile: Profile, seed: str, n_presses: int, restarts: Iterable[int] = ()) -> list[Outcome]:
    """The outcomes of a round's first `n_presses` presses. `restarts` holds, for each lid opening, how many
    presses had been made when it happened (only a pattern profile cares)."""
    restart_after = set(restarts)
    schedule = Schedule(profile, seed)
    outcomes = []
    for done in range(n_presses):
        if done in restart_after:
            schedule.restart()
        outcomes.append(schedule.next_outcome())
    return outcomes


def round_record(
    profile: Profile, seed: str, outcomes: Sequence[Outcome], restarts: Sequence[int] = ()
) -> dict[str, Any]:
    """The record of a finished round, seed revealed, ready for json.dump (docs/FAIRNESS.md)."""
    return {
        "format": FORMAT,
        "profile": {"name": profile.name, **profile_to_mapping(profile)},
        "commitment": commitment(seed),
        "seed": seed,
        "restarts": list(restarts),
        "outcomes": [
            {"press": o.press, "cards": o.cards, "jackpot": o.jackpot, "pause_ms": o.pause_ms} for o in outcomes
        ],
    }


@dataclass(frozen=True)
class Mismatch:
    """The first recorded value that the seed does not give."""

    press: int
    field: str
    recorded: Any
    replayed: Any


@dataclass(frozen=True)
class VerifyReport:
    profile: str
    presses: int
    commitment_ok: bool
    mismatch: Mismatch | None

    @property
    def ok(self) -> bool:
        return self.commitment_ok and self.mismatch is None

    @property
    def first_bad_press(self) -> int | None:
        return self.mismatch.press if self.mismatch else None

    def __str__(self) -> str:
        if self.ok:
            return (
                f"OK: the seed matches its commitment and replays all {self.presses} presses "
                f"of profile {self.profile!r} exactly"
            )
        lines = []
        if not self.commitment_ok:
            lines.append("FAILED: the seed does not match the commitment published at round start")
        if self.mismatch:
            m = self.mismatch
            lines.append(f"FAILED: press {m.press}: recorded {m.field} = {m.recorded!r}, the seed gives {m.replayed!r}")
        return "\n".join(lines)


def verify(record: Mapping[str, Any]) -> VerifyReport:
    """Check a round record: the seed against its commitment, then every recorded outcome against a replay.

    Raises RecordError when the record is malformed (a missing or mistyped field).
    """
    if not isinstance(record, Mapping):
        raise RecordError("a round record must be a JSON object")
    if record.get("format", FORMAT) != FORMAT:
        raise RecordError(f"format = {record['format']!r} is not accepted: expected {FORMAT!r}")
    profile = _profile(_field(record, "profile", dict))
    seed = _seed(record)
    published = _field(record, "commitment", str)
    restarts = _restarts(record.get("restarts", []))
    outcomes = _field(record, "outcomes", list)
    replayed = replay(profile, seed, len(outcomes), restarts)
    return VerifyReport(
        profile=profile.name,
        presses=len(outcomes),
        commitment_ok=commitment(seed) == published.lower(),
        mismatch=_first_mismatch(outcomes, replayed),
    )


def verify_file(path: str | Path) -> VerifyReport:
    """Verify an exported round record (a JSON file)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RecordError(f"cannot read round record {path}: {e}") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path} is not valid JSON: {e}") from None
    return verify(record)


def _field(record: Mapping[str, Any], key: str, kind: type) -> Any:
    if key not in record:
        raise RecordError(f"{key} is missing from the round record")
    value = record[key]
    if not isinstance(value, kind):
        raise RecordError(f"{key} = {value!r} is not accepted: expected a JSON {_JSON_NAMES[kind]}")
    return value


_JSON_NAMES = {dict: "object", list: "array", str: "string", int: "whole number", bool: "true or false"}


def _profile(mapping: dict[str, Any]) -> Profile:
    params = dict(mapping)
    name = params.pop("name", None)
    try:
        return profile_from_mapping(name, params)  # type: ignore[arg-type]
    except ProfileError as e:
        raise RecordError(f"profile: {e}") from None


def _seed(record: Mapping[str, Any]) -> str:
    seed = _field(record, "seed", str)
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError(f"seed = {seed!r} is not accepted: expected text that UTF-8 can encode") from None
    return seed


def _restarts(value: Any) -> list[int]:
    if not isinstance(value, list) or not all(_is_whole(n) and n >= 0 for n in value):
        raise RecordError(f"restarts = {value!r} is not accepted: expected an array of press counts")
    return value


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _first_mismatch(outcomes: list[Any], replayed: list[Outcome]) -> Mismatch | None:
    for index, (recorded, expected) in enumerate(zip(outcomes, replayed, strict=True)):
        mismatch = _compare(index, recorded, expected)
        if mismatch:
            return mismatch
    return None


def _compare(index: int, recorded: Any, replayed: Outcome) -> Mismatch | None:
    """The first field of one recorded outcome that differs from the replay; types count (true is not 1)."""
    if not isinstance(recorded, dict) or "press" not in recorded or "cards" not in recorded:
        raise RecordError(f"outcomes[{index}] = {recorded!r} is not accepted: expected an object with press and cards")
    press = index + 1
    if not (_is_whole(recorded["press"]) and recorded["press"] == press):
        return Mismatch(press, "press", recorded["press"], press)
    for field in CHECKED_FIELDS:
        if field in recorded:
            value, expected = recorded[field], getattr(replayed, field)
            if type(value) is not type(expected) or value != expected:
                return Mismatch(press, field, value, expected)
    return None
