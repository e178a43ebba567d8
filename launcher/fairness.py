"""Seal, commit, reveal: players can check that a shuffle's outcomes were fixed before the first press, and that
nobody chose them.

At a shuffle's start the daemon draws a seed with `new_seed()` and publishes only its seal with the profile
(launcher/sealing.py). The phones commit to bytes of their own, and reveal them once the commitments have closed
(launcher/mixing.py); every outcome is a deterministic function of the key, the press number and the schedule state
(launcher/schedule.py lists the draws). At its end the daemon reveals the seed in a record (`shuffle_record`) and
anyone can replay the shuffle (`verify`, `verify_file`, `uno-launcher verify`, each phone's page with
webui/static/fairverify.js, and the standalone checker built from it). The record format and the derivation are
documented in docs/FAIRNESS.md.

Records of the formats before are still read: format 4 (contributions in the clear, the seed alone committed:
`commitment`, `shuffle_key`; a daemon that resumes such a shuffle also writes it, `legacy_record`), format 3 and the
one from before shuffles had their name (`uno-launcher-round/2`), which differ from it only in a name or two, and
the first format (`uno-launcher-round/1`, made before contributions existed), which drew from Python's
`random.Random(seed)` and is replayed on its own path (`replay_v1`).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeGuard

from launcher import beacon_bls, record_qr
from launcher.beacon import BeaconRound, parse_record
from launcher.errors import LauncherError
from launcher.schedule import Outcome, Profile, ProfileError, Schedule, profile_from_mapping, profile_to_mapping
from launcher.sealing import FORMAT5, Contribution, Opened, is_commitment, open_record, sealed_record
from launcher.text import MAX_DEPTH, nests_deeper

FORMAT = FORMAT5  # commit-then-reveal, the profile sealed with the seed (launcher/sealing.py)
FORMAT_V4 = "uno-launcher-shuffle/4"  # contributions taken in the clear until the first press; read, replayed the same
FORMAT_V3 = "uno-launcher-shuffle/3"  # FORMAT before `carried`: every shuffle started afresh; read, replayed the same
FORMAT_V2 = "uno-launcher-round/2"  # FORMAT before the rename: `round` for `shuffle`; read, and replayed the same
FORMAT_V1 = "uno-launcher-round/1"  # seed only, Python's random; read for shuffles played by older versions
SEED_BYTES = 16  # 128 bits: nobody can find the seed from its commitment
CONTRIBUTION_BYTES = 16  # what a phone adds: 16 random bytes, written as 32 lowercase hex characters
MAX_CONTRIBUTIONS = 32  # a shuffle takes at most this many (one per session), so nobody can flood the record
# The first bytes hashed into a shuffle's key (docs/FAIRNESS.md): the format's name when the key was made, kept
# through the rename so that every shuffle recorded before it still replays.
KEY_LABEL = FORMAT_V2.encode("utf-8")
FORMATS = (FORMAT, FORMAT_V4, FORMAT_V3, FORMAT_V2, FORMAT_V1)  # what verify reads, newest first
CHECKED_FIELDS = ("cards", "jackpot", "pause_ms")  # what the key decides, compared with the replay
# What ended each press, as the record says: no fire drawn, all counted, or why fewer cards came out.
STOPS = ("miss", "count", "jam", "stuck", "empty", "lid", "aborted", "fault")
_CONTRIBUTION = re.compile(r"[0-9a-f]{32}")


class RecordError(LauncherError, ValueError):
    """The record is not a shuffle record this version can read; the message names the bad field."""


def new_seed() -> str:
    """A fresh secret seed for one shuffle, as lowercase hex."""
    return secrets.token_hex(SEED_BYTES)


def commitment(seed: str) -> str:
    """What the page shows at a shuffle's start: the SHA-256 of the seed's UTF-8 bytes, as lowercase hex."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def is_contribution(value: object) -> TypeGuard[str]:
    """A phone's contribution: exactly 32 lowercase hex characters (16 bytes)."""
    return isinstance(value, str) and _CONTRIBUTION.fullmatch(value) is not None


def shuffle_key(seed: str, contributions: Sequence[str]) -> bytes:
    """The shuffle's HMAC key: the SHA-256 of `key_material(seed, contributions)`."""
    return hashlib.sha256(key_material(seed, contributions)).digest()


def key_material(seed: str, contributions: Sequence[str]) -> bytes:
    """What a shuffle's key hashes: KEY_LABEL, a zero byte, the seed, the number of contributions (4 bytes big-endian)
    and the contributions in the order received, the seed and each contribution as 4 bytes of big-endian length
    then its UTF-8 bytes. No two (seed, contributions) give the same bytes."""
    parts = [KEY_LABEL, b"\0", _framed(seed), len(contributions).to_bytes(4, "big")]
    return b"".join(parts + [_framed(value) for value in contributions])


def _framed(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(4, "big") + data


def replay(
    profile: Profile,
    seed: str,
    n_presses: int,
    restarts: Iterable[int] = (),
    contributions: Sequence[str] = (),
    carried: tuple[int, int] = (0, 0),
) -> list[Outcome]:
    """The outcomes of a shuffle's first `n_presses` presses, keyed by the seed and the contributions. `restarts`
    holds, for each lid opening, how many presses had been made when it happened (only a pattern profile cares);
    `carried` the run (misses, fires in a row) the shuffle went on from (Schedule.go_on_from)."""
    schedule = Schedule(profile, shuffle_key(seed, contributions))
    schedule.go_on_from(*carried)
    return replay_presses(schedule, n_presses, restarts)


def replay_v1(profile: Profile, seed: str, n_presses: int, restarts: Iterable[int] = ()) -> list[Outcome]:
    """The first format's replay: the same press rules on Python's `random.Random(seed).random()`."""
    return replay_presses(Schedule(profile, seed, draw=random.Random(seed).random), n_presses, restarts)


class Replayable(Protocol):
    """A schedule as a replay drives it."""

    def next_outcome(self) -> Outcome: ...

    def restart(self) -> None: ...


def replay_presses(
    schedule: Replayable,
    n_presses: int,
    restarts: Iterable[int] = (),
    *,
    draw: Callable[[], Outcome] | None = None,
) -> list[Outcome]:
    """The one replay of a record's presses: `n_presses` draws of `schedule`, with each lid opening of `restarts`
    where it happened (after that many presses; one after the last press too, which a resumed shuffle goes on
    from). `draw` takes the place of `schedule.next_outcome` for a caller that records each press as it is drawn."""
    restart_after = set(restarts)
    outcomes = []
    for done in range(n_presses + 1):
        if done in restart_after:
            schedule.restart()  # a pattern's restart gives the schedule another next_outcome: looked up each press
        if done < n_presses:
            outcomes.append(draw() if draw is not None else schedule.next_outcome())
    return outcomes


@dataclass(frozen=True)
class CameOut:
    """What one press dispensed: the cards counted at the exit (None: not known), and what ended it (`STOPS`;
    None: not known, the daemon stopped before the press ended)."""

    dispensed: int | None
    stop: str | None


def shuffle_record(
    profile: Profile,
    seed: str,
    outcomes: Sequence[Outcome],
    restarts: Sequence[int] = (),
    contributions: Sequence[Contribution] = (),
    came_out: Mapping[int, CameOut] | None = None,
    carried: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """The record of a finished shuffle, seed revealed, ready for json.dump (docs/FAIRNESS.md). `came_out` holds
    what each press (by number) dispensed; `carried` the run of misses or fires it went on from."""
    return sealed_record(profile, seed, contributions, **played_fields(outcomes, restarts, came_out, carried))


def legacy_record(
    profile: Profile,
    seed: str,
    contributions: Sequence[str],
    outcomes: Sequence[Outcome],
    restarts: Sequence[int] = (),
    came_out: Mapping[int, CameOut] | None = None,
    carried: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """The record of a shuffle started before format 5 (contributions in the clear, only the seed committed), as a
    daemon of this version ends one it resumes."""
    return {
        "format": FORMAT_V4,
        "profile": {"name": profile.name, **profile_to_mapping(profile)},
        "commitment": commitment(seed),
        "seed": seed,
        "contributions": list(contributions),
        **played_fields(outcomes, restarts, came_out, carried),
    }


def played_fields(
    outcomes: Sequence[Outcome],
    restarts: Sequence[int] = (),
    came_out: Mapping[int, CameOut] | None = None,
    carried: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """What a record says of how the shuffle was played: the lid's restarts, the run it went on from, and each
    press: what the key decided and what came out."""
    came_out = came_out or {}
    unknown = CameOut(None, None)
    return {
        "restarts": list(restarts),
        "carried": {"misses_in_row": carried[0], "fires_in_row": carried[1]},
        "outcomes": [
            {
                "press": o.press,
                "cards": o.cards,
                "jackpot": o.jackpot,
                "pause_ms": o.pause_ms,
                "dispensed": came_out.get(o.press, unknown).dispensed,
                "stop": came_out.get(o.press, unknown).stop,
            }
            for o in outcomes
        ],
    }


@dataclass(frozen=True)
class Mismatch:
    """The first recorded value that the seed (and the contributions) do not give."""

    press: int
    field: str
    recorded: Any
    replayed: Any


_STOP_TEXTS = {None: "not known: the daemon stopped before the press ended", "count": "the hopper's count ran out"}


@dataclass(frozen=True)
class Shortfall:
    """A press that did not dispense what was drawn: a jam, an empty hopper, the lid, a fault, or not known."""

    press: int
    cards: int
    dispensed: int | None
    stop: str | None

    def __str__(self) -> str:
        came = "an unknown number of cards" if self.dispensed is None else f"{self.dispensed}"
        why = _STOP_TEXTS.get(self.stop, self.stop)
        return f"press {self.press}: the seed gives {self.cards} cards, {came} came out ({why})"


@dataclass(frozen=True)
class VerifyReport:
    profile: str
    presses: int
    commitment_ok: bool
    mismatch: Mismatch | None
    format: str = FORMAT
    contributions: int = 0
    shortfalls: tuple[Shortfall, ...] = ()
    seen_commitment_ok: bool | None = None  # against the commitment the reader saw, when given
    missing: tuple[str, ...] = field(default=())  # contributions the reader made that the record lacks
    withheld: tuple[int, ...] = ()  # places of commitments never revealed (format 5)
    mismatched: tuple[int, ...] = ()  # places whose value is not what was committed (format 5: a tampered record)
    beacon: BeaconRound | None = None  # the drand round the shuffle bound to, when it did
    beacon_randomness_ok: bool = True  # the record's randomness is its signature's
    beacon_signature_ok: bool | None = None  # the signature is quicknet's for the round (None: no signature)

    @property
    def ok(self) -> bool:
        return (
            self.commitment_ok
            and self.mismatch is None
            and self.seen_commitment_ok is not False
            and not self.missing
            and not self.mismatched
            and self.beacon_randomness_ok
            and self.beacon_signature_ok is not False
        )

    @property
    def first_bad_press(self) -> int | None:
        return self.mismatch.press if self.mismatch else None

    def __str__(self) -> str:
        lines = []
        if self.ok:
            mixed = "" if self.format == FORMAT_V1 else f" and, with its {self.contributions} contribution(s),"
            lines.append(
                f"OK: the seed matches its commitment{mixed} replays all {self.presses} presses "
                f"of profile {self.profile!r} exactly"
            )
        if self.seen_commitment_ok is False:
            lines.append("FAILED: the record's commitment is not the one you saw before the first press")
        if not self.commitment_ok:
            lines.append("FAILED: the seed does not match the commitment published at the shuffle's start")
        lines.extend(f"FAILED: your contribution {value} is not in the record" for value in self.missing)
        lines.extend(f"FAILED: contribution {n}'s value is not the one committed" for n in self.mismatched)
        lines.extend(self._beacon_lines())
        if self.mismatch:
            m = self.mismatch
            lines.append(f"FAILED: press {m.press}: recorded {m.field} = {m.recorded!r}, the seed gives {m.replayed!r}")
        lines.extend(
            f"NOTE: contribution {n} was committed and never revealed: it counts by its commitment alone, and whoever "
            "held it could choose between two outcomes"
            for n in self.withheld
        )
        lines.extend(f"NOTE: {s}" for s in self.shortfalls)
        if self.format == FORMAT_V1:
            lines.append(f"NOTE: a {FORMAT_V1} record: no contributions, and it does not say what each press dispensed")
        return "\n".join(lines)

    def _beacon_lines(self) -> list[str]:
        """What the record's drand round proves (checkers/checker.js words the same)."""
        if self.beacon is None:
            return []
        number = self.beacon.round
        if self.beacon.signature is None:
            return [
                f"NOTE: drand quicknet round {number} was not had in time: the key was fixed without it, as at a table "
                "without internet, and whoever ran the launcher could choose between two outcomes"
            ]
        lines = []
        if not self.beacon_randomness_ok:
            lines.append("FAILED: the beacon's randomness is not the SHA-256 of its signature")
        if self.beacon_signature_ok:
            lines.append(f"OK: the key mixes drand quicknet round {number}, signed by the League of Entropy")
        else:
            lines.append(f"FAILED: the signature of drand quicknet round {number} is not the League of Entropy's")
        return lines


def verify(record: Mapping[str, Any], *, seen_commitment: str | None = None, mine: Iterable[str] = ()) -> VerifyReport:
    """Check a shuffle record: the seed against its commitment, then every recorded outcome against a replay.
    `seen_commitment` is the commitment the reader saw before the first press, `mine` the contributions they
    made; both are checked against the record when given.

    Raises RecordError when the record is malformed (a missing or mistyped field).
    """
    if not isinstance(record, Mapping):
        raise RecordError("a shuffle record must be a JSON object")
    form = record.get("format", FORMAT_V1)  # records of the first format could leave it out
    if form not in FORMATS:
        raise RecordError(f"format = {form!r} is not accepted: expected {FORMAT!r} (or {', '.join(FORMATS[1:])})")
    seed = _seed(record)
    published = _field(record, "commitment", str)
    restarts = _restarts(record.get("restarts", []))
    outcomes = _field(record, "outcomes", list)
    opened: Opened | None = None
    entries: list[Contribution] = []
    beacon: BeaconRound | None = None
    stated: str | None = None
    if form == FORMAT:
        text: str = _field(record, "profile", str)
        profile = _profile(_profile_mapping(text))
        entries = _commitments(_field(record, "contributions", list))
        beacon, stated = _beacon(record)
        opened = open_record(seed, text, published, entries, beacon)
        contributions = list(opened.revealed)
        carried = _carried(profile, _field(record, "carried", dict))
        schedule = Schedule(profile, opened.key)
        schedule.go_on_from(*carried)
        replayed = replay_presses(schedule, len(outcomes), restarts)
    elif form == FORMAT_V1:
        profile = _profile(_field(record, "profile", dict))
        contributions = []
        replayed = replay_v1(profile, seed, len(outcomes), restarts)
    else:
        profile = _profile(_field(record, "profile", dict))
        contributions = _contributions(_field(record, "contributions", list))
        carried = _carried(profile, _field(record, "carried", dict)) if form == FORMAT_V4 else (0, 0)
        replayed = replay(profile, seed, len(outcomes), restarts, contributions, carried)
    strict = form != FORMAT_V1
    mine = list(mine)
    return VerifyReport(
        profile=profile.name,
        presses=len(outcomes),
        commitment_ok=opened.seal_ok if opened else commitment(seed) == published.lower(),
        mismatch=_first_mismatch(outcomes, replayed, strict=strict),
        format=form,
        contributions=len(entries) if opened else len(contributions),
        shortfalls=tuple(_shortfalls(outcomes)) if strict else (),
        seen_commitment_ok=None if seen_commitment is None else seen_commitment.lower() == published.lower(),
        missing=tuple(value for value in mine if value not in contributions),
        withheld=opened.withheld if opened else (),
        mismatched=opened.mismatched if opened else (),
        beacon=beacon,
        beacon_randomness_ok=beacon is None or stated == beacon.randomness,
        beacon_signature_ok=_signed(beacon),
    )


def _beacon(record: Mapping[str, Any]) -> tuple[BeaconRound | None, str | None]:
    """Format 5's optional `beacon`: the drand round and its signature, and the randomness the record states."""
    if "beacon" not in record:
        return None, None
    try:
        return parse_record(record["beacon"])
    except ValueError as e:
        raise RecordError(f"beacon = {record['beacon']!r} is not accepted: {e}") from None


def _signed(beacon: BeaconRound | None) -> bool | None:
    if beacon is None or beacon.signature is None:
        return None
    return beacon_bls.signature_ok(beacon.round, beacon.signature)


def verify_file(path: str | Path, *, seen_commitment: str | None = None, mine: Iterable[str] = ()) -> VerifyReport:
    """Verify an exported shuffle record (a JSON file)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RecordError(f"cannot read shuffle record {path}: {e}") from None
    if text.lstrip().startswith(record_qr.PREFIX):  # a QR code's text, as the page shows it
        try:
            return verify(record_qr.unpacked(text), seen_commitment=seen_commitment, mine=mine)
        except ValueError as e:
            raise RecordError(f"{path}: {e}") from None
    if nests_deeper(text):
        raise RecordError(f"{path} is not a shuffle record: it nests deeper than {MAX_DEPTH} levels")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path} is not valid JSON: {e}") from None
    return verify(record, seen_commitment=seen_commitment, mine=mine)


def _field(record: Mapping[str, Any], key: str, kind: type) -> Any:
    if key not in record:
        raise RecordError(f"{key} is missing from the shuffle record")
    value = record[key]
    if not isinstance(value, kind):
        raise RecordError(f"{key} = {value!r} is not accepted: expected a JSON {_JSON_NAMES[kind]}")
    return value


_JSON_NAMES = {dict: "object", list: "array", str: "string", int: "whole number", bool: "true or false"}


def _profile(mapping: dict[str, Any]) -> Profile:
    params = dict(mapping)
    name = params.pop("name", None)
    try:
        return profile_from_mapping(name, params)
    except ProfileError as e:
        raise RecordError(f"profile: {e}") from None


def _seed(record: Mapping[str, Any]) -> str:
    seed: str = _field(record, "seed", str)
    try:
        seed.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError(f"seed = {seed!r} is not accepted: expected text that UTF-8 can encode") from None
    return seed


def _profile_mapping(text: str) -> dict[str, Any]:
    """Format 5's profile: the text the seal covers, which must hold a JSON object."""
    try:
        mapping = None if nests_deeper(text) else json.loads(text)
    except json.JSONDecodeError:
        mapping = None
    if not isinstance(mapping, dict):
        raise RecordError(f"profile = {text[:80]!r} is not accepted: expected the text of a JSON object")
    return mapping


def _commitments(values: list[Any]) -> list[Contribution]:
    """Format 5's contributions: each a commitment and its value, or null for one never revealed."""
    if len(values) > MAX_CONTRIBUTIONS:
        raise RecordError(
            f"contributions has {len(values)} entries: a shuffle takes at most {MAX_CONTRIBUTIONS}, one per phone"
        )
    entries = []
    for index, value in enumerate(values):
        if not (
            isinstance(value, dict)
            and set(value) == {"commitment", "value"}
            and is_commitment(value["commitment"])
            and (value["value"] is None or is_contribution(value["value"]))
        ):
            raise RecordError(
                f"contributions[{index}] = {value!r} is not accepted: expected {{commitment: 64 lowercase hex "
                "characters, value: 32 lowercase hex characters or null}"
            )
        entries.append(Contribution(value["commitment"], value["value"]))
    return entries


def _contributions(values: list[Any]) -> list[str]:
    if len(values) > MAX_CONTRIBUTIONS:
        raise RecordError(
            f"contributions has {len(values)} entries: a shuffle takes at most {MAX_CONTRIBUTIONS}, one per phone"
        )
    for index, value in enumerate(values):
        if not is_contribution(value):
            raise RecordError(
                f"contributions[{index}] = {value!r} is not accepted: expected 32 lowercase hex characters"
            )
    return values


def _restarts(value: Any) -> list[int]:
    if not isinstance(value, list) or not all(_is_whole(n) and n >= 0 for n in value):
        raise RecordError(f"restarts = {value!r} is not accepted: expected an array of press counts")
    return value


def _carried(profile: Profile, value: dict[str, Any]) -> tuple[int, int]:
    """The record's run of misses or fires that the shuffle went on from, checked against its profile."""
    misses, fires = value.get("misses_in_row"), value.get("fires_in_row")
    if set(value) != {"misses_in_row", "fires_in_row"} or not (_is_whole(misses) and _is_whole(fires)):
        raise RecordError(f"carried = {value!r} is not accepted: expected misses_in_row and fires_in_row, counts")
    try:
        Schedule(profile, b"").go_on_from(misses, fires)
    except ValueError as e:
        raise RecordError(f"carried = {value!r} is not accepted: {e}") from None
    return misses, fires


def _is_whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _first_mismatch(outcomes: list[Any], replayed: list[Outcome], *, strict: bool) -> Mismatch | None:
    for index, (recorded, expected) in enumerate(zip(outcomes, replayed, strict=True)):
        mismatch = _compare(index, recorded, expected, strict=strict)
        if mismatch:
            return mismatch
    return None


def _compare(index: int, recorded: Any, replayed: Outcome, *, strict: bool) -> Mismatch | None:
    """The first field of one recorded outcome that differs from the replay; types count (true is not 1).
    The first format checks jackpot and pause_ms only when present; the second needs every field."""
    needed = ("press", *CHECKED_FIELDS, "dispensed", "stop") if strict else ("press", "cards")
    if not isinstance(recorded, dict) or any(key not in recorded for key in needed):
        raise RecordError(
            f"outcomes[{index}] = {recorded!r} is not accepted: expected an object with {', '.join(needed)}"
        )
    if strict:
        _check_came_out(index, recorded)
    press = index + 1
    if not (_is_whole(recorded["press"]) and recorded["press"] == press):
        return Mismatch(press, "press", recorded["press"], press)
    for name in CHECKED_FIELDS:
        if name in recorded:
            value, expected = recorded[name], getattr(replayed, name)
            if type(value) is not type(expected) or value != expected:
                return Mismatch(press, name, value, expected)
    return None


def _check_came_out(index: int, recorded: dict[str, Any]) -> None:
    dispensed, stop = recorded["dispensed"], recorded["stop"]
    if dispensed is not None and not (_is_whole(dispensed) and dispensed >= 0):
        raise RecordError(
            f"outcomes[{index}].dispensed = {dispensed!r} is not accepted: expected a whole number of cards or null"
        )
    if stop is not None and stop not in STOPS:
        raise RecordError(f"outcomes[{index}].stop = {stop!r} is not accepted: expected one of {', '.join(STOPS)}")


def _shortfalls(outcomes: list[dict[str, Any]]) -> list[Shortfall]:
    """Presses whose cards did not all come out (or of which that is not known)."""
    return [
        Shortfall(o["press"], o["cards"], o["dispensed"], o["stop"])
        for o in outcomes
        if o["dispensed"] != o["cards"] or o["stop"] is None
    ]
