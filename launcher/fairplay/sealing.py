"""Format 5's commit-then-reveal (docs/FAIRNESS.md): pure functions, no I/O.

The daemon seals the seed and the profile together (`seal`) before any phone commits. Each phone commits to 16 random
bytes of its own (`commitment_of`) while commitments are open; only once they are closed does any phone reveal its
bytes. The key (`sealed_key`) mixes the seal, the seed and, for each commitment in order, its commitment and its
revealed value, or for a commitment never revealed (withheld, late, or a mismatch, which is refused) its
commitment alone. Nobody who commits can know the other phones' bytes yet, so no choice made while committing can
steer the key; what is left after commitments close is each withholder's choice between revealing or not.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from launcher.fairplay.beacon import CHAIN, BeaconRound
from launcher.fairplay.schedule import Profile, profile_to_mapping

FORMAT5 = "uno-launcher-shuffle/5"
SEAL_LABEL = b"uno-launcher-seal/5"  # first bytes of the seal's SHA-256
KEY_LABEL5 = FORMAT5.encode("utf-8")  # first bytes of the key's SHA-256
_COMMITMENT = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Contribution:
    """One phone's commitment, and its value once revealed (None: never revealed, so it counts by the commitment)."""

    commitment: str
    value: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"commitment": self.commitment, "value": self.value}


def profile_text(profile: Profile) -> str:
    """The profile as the seal covers it and the record carries it: JSON of its name and parameters, keys sorted,
    no spaces, ASCII only. A verifier hashes this text as given and parses it; it never writes it again."""
    return json.dumps({"name": profile.name, **profile_to_mapping(profile)}, sort_keys=True, separators=(",", ":"))


def seal(seed: str, profile: str) -> str:
    """What phones see at a shuffle's start: the SHA-256 of the label, a zero byte, the framed seed and the framed
    profile text, as lowercase hex. Nobody can find the seed from it, and no other seed or profile gives it."""
    return hashlib.sha256(SEAL_LABEL + b"\0" + _framed(seed) + _framed(profile)).hexdigest()


def commitment_of(value: str) -> str:
    """A phone's commitment to its contribution: the SHA-256 of the value's UTF-8 bytes (its 32 hex characters),
    as lowercase hex; `printf %s VALUE | sha256sum` gives the same."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def is_commitment(value: object) -> TypeGuard[str]:
    """A commitment: exactly 64 lowercase hex characters."""
    return isinstance(value, str) and _COMMITMENT.fullmatch(value) is not None


def sealed_key(
    sealed: str, seed: str, contributions: Sequence[Contribution], beacon: BeaconRound | None = None
) -> bytes:
    """The shuffle's HMAC key: SHA-256 of KEY_LABEL5, a zero byte, the framed seal and seed, the number of
    commitments (4 bytes big-endian), then for each commitment in order, the framed commitment and the framed value
    (an empty text for one never revealed); then, for a beacon round bound, the framed chain hash, the round (8 bytes
    big-endian) and its framed randomness (an empty text when it was not had: the round still keys the shuffle, so
    a record cannot drop it unseen). Only a value that matches its commitment may be passed."""
    parts = [KEY_LABEL5, b"\0", _framed(sealed), _framed(seed), len(contributions).to_bytes(4, "big")]
    for c in contributions:
        if c.value is not None and commitment_of(c.value) != c.commitment:
            raise ValueError(f"value {c.value} does not match its commitment {c.commitment}")
        parts += [_framed(c.commitment), _framed(c.value or "")]
    if beacon is not None:
        parts += [_framed(CHAIN), beacon.round.to_bytes(8, "big"), _framed(beacon.randomness or "")]
    return hashlib.sha256(b"".join(parts)).digest()


def _framed(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(4, "big") + data


def sealed_record(profile: Profile, seed: str, contributions: Sequence[Contribution], **played: Any) -> dict[str, Any]:
    """The head of a format-5 record: the profile as sealed, the seal, the seed and the contributions in order;
    `played` (restarts, carried, outcomes) follows it (fairness.shuffle_record)."""
    text = profile_text(profile)
    return {
        "format": FORMAT5,
        "profile": text,
        "commitment": seal(seed, text),
        "seed": seed,
        "contributions": [c.as_dict() for c in contributions],
        **played,
    }


@dataclass(frozen=True)
class Opened:
    """What a format-5 record's seal and contributions give: the key, and what a reader is told of them."""

    key: bytes
    seal_ok: bool
    revealed: tuple[str, ...]  # the values that match their commitments
    withheld: tuple[int, ...] = ()  # 1-based places of commitments never revealed
    mismatched: tuple[int, ...] = ()  # 1-based places whose value is not what was committed


def open_record(
    seed: str, profile: str, published: str, entries: Sequence[Contribution], beacon: BeaconRound | None = None
) -> Opened:
    """Check a record's seal and contributions and derive its key (with the beacon's round as the record gives
    it); a mismatched value (which the daemon refuses, so only a tampered record has one) is reported and counted as
    never revealed."""
    counted = []
    mismatched = []
    for place, c in enumerate(entries, 1):
        if c.value is not None and commitment_of(c.value) != c.commitment:
            mismatched.append(place)
            c = Contribution(c.commitment)
        counted.append(c)
    return Opened(
        key=sealed_key(published, seed, counted, beacon),
        seal_ok=seal(seed, profile) == published,
        revealed=tuple(c.value for c in counted if c.value is not None),
        withheld=tuple(place for place, c in enumerate(counted, 1) if c.value is None and place not in mismatched),
        mismatched=tuple(mismatched),
    )
