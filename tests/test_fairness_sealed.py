"""Format 5 (commit, then reveal; the seed and the profile sealed together): a played record verifies, every change an
attacker could make to it fails and says what, a commitment never revealed is noted, and the derivation is the one
docs/FAIRNESS.md writes down (a second implementation from the page's words, and its known-answer vector)."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.fairplay.fairness import CameOut, RecordError, replay_presses, shuffle_record, verify
from launcher.fairplay.schedule import PROFILES, Profile, Schedule
from launcher.fairplay.sealing import Contribution, commitment_of, profile_text, seal, sealed_key

ROOT = Path(__file__).resolve().parent.parent
SEED = "5eed0000000000000000000000000001"
VALUES = ["00112233445566778899aabbccddeeff", "0123456789abcdef0123456789abcdef", "f" * 32]


def entries(values: list[str | None], withheld: tuple[int, ...] = ()) -> list[Contribution]:
    """Contributions committed to `values`, those at the 0-based places `withheld` never revealed."""
    return [Contribution(commitment_of(v), None if i in withheld else v) for i, v in enumerate(values) if v is not None]


def play_sealed(
    profile: Profile,
    seed: str,
    n: int,
    contributions: list[Contribution] | None = None,
    restarts: tuple[int, ...] = (),
    carried: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """A format-5 shuffle as the daemon plays it: the schedule under the sealed key, every card counted."""
    mixed = entries(list(VALUES)) if contributions is None else contributions
    schedule = Schedule(profile, sealed_key(seal(seed, profile_text(profile)), seed, mixed))
    schedule.go_on_from(*carried)
    outcomes = replay_presses(schedule, n, restarts)
    came_out = {o.press: CameOut(o.cards, "count" if o.cards else "miss") for o in outcomes}
    return shuffle_record(profile, seed, outcomes, restarts, mixed, came_out, carried)


RECORD = play_sealed(PROFILES["extreme"], SEED, 60)


def test_a_played_record_verifies_and_carries_the_profile_as_sealed() -> None:
    report = verify(RECORD, seen_commitment=RECORD["commitment"], mine=[VALUES[1]])
    assert report.ok and report.contributions == 3 and report.withheld == () and report.mismatched == ()
    assert RECORD["format"] == "uno-launcher-shuffle/5"
    assert json.loads(RECORD["profile"])["name"] == "extreme"
    assert RECORD["contributions"][0] == {
        "commitment": hashlib.sha256(VALUES[0].encode()).hexdigest(),
        "value": VALUES[0],
    }
    assert str(report).startswith("OK: the seed matches its commitment and, with its 3 contribution(s), replays all 60")


def test_a_commitment_never_revealed_is_noted_and_counts_by_itself() -> None:
    record = play_sealed(PROFILES["classic"], SEED, 30, entries(list(VALUES), withheld=(1,)))
    report = verify(record)
    assert report.ok and report.withheld == (2,)
    assert "NOTE: contribution 2 was committed and never revealed: it counts by its commitment alone" in str(report)
    # Its value, added to the record after the fact, gives another key: the replay fails.
    revealed = copy.deepcopy(record)
    revealed["contributions"][1]["value"] = VALUES[1]
    assert verify(revealed).mismatch is not None


def tampered(change: Any) -> dict[str, Any]:
    record = copy.deepcopy(RECORD)
    change(record)
    return record


def _set(path: list[Any], value: Any) -> Any:
    def change(record: dict[str, Any]) -> None:
        target = record
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def test_a_value_that_is_not_the_one_committed_fails_naming_its_place() -> None:
    record = tampered(_set(["contributions", 0, "value"], "0" * 32))
    report = verify(record)
    assert not report.ok and report.mismatched == (1,)
    assert "FAILED: contribution 1's value is not the one committed" in str(report)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda r: r["contributions"].pop(1), id="dropped"),
        pytest.param(lambda r: r["contributions"].reverse(), id="moved"),
        pytest.param(lambda r: r["contributions"].append(entries(["e" * 32])[0].as_dict()), id="added"),
        pytest.param(_set(["contributions", 2, "value"], None), id="withheld after the fact"),
    ],
)
def test_a_contribution_dropped_moved_added_or_hidden_changes_the_replay(change: Any) -> None:
    report = verify(tampered(change))
    assert not report.ok and report.mismatch is not None


def test_a_profile_changed_after_the_seal_fails_the_seal() -> None:
    profile = json.loads(RECORD["profile"])
    profile["hazard"] = [1.0] * len(profile["hazard"])
    report = verify(tampered(_set(["profile"], json.dumps(profile, sort_keys=True, separators=(",", ":")))))
    assert not report.ok and not report.commitment_ok
    # The same profile written otherwise (spaces) is other text: the seal covers the text, not its meaning.
    assert not verify(tampered(_set(["profile"], json.dumps(json.loads(RECORD["profile"]))))).commitment_ok


def test_another_seed_with_its_own_commitment_fails_the_replay() -> None:
    other = "5eed0000000000000000000000000002"
    report = verify(tampered(lambda r: r.update(seed=other, commitment=seal(other, r["profile"]))))
    assert report.commitment_ok and not report.ok and report.mismatch is not None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            _set(["profile"], {"name": "classic"}),
            "profile = {'name': 'classic'} is not accepted: expected a JSON string",
        ),
        (_set(["profile"], "[1]"), "profile = '[1]' is not accepted: expected the text of a JSON object"),
        (_set(["profile"], "{"), "expected the text of a JSON object"),
        (_set(["contributions"], ["0" * 32]), "contributions[0] = '" + "0" * 32 + "' is not accepted"),
        (_set(["contributions", 0, "value"], "ABC"), "contributions[0] = "),
        (_set(["contributions", 0, "commitment"], "0" * 63), "64 lowercase hex"),
        (_set(["contributions", 0], {"commitment": "0" * 64, "value": None, "x": 1}), "contributions[0] = "),
        (_set(["contributions"], entries(["0" * 32]) * 33), "contributions has 33 entries"),
    ],
)
def test_an_unreadable_format_5_record_names_the_field(change: Any, message: str) -> None:
    record = tampered(change)
    record["contributions"] = [c.as_dict() if isinstance(c, Contribution) else c for c in record["contributions"]]
    with pytest.raises(RecordError, match=re.escape(message)):
        verify(record)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.binary(min_size=16, max_size=16).map(bytes.hex), max_size=6, unique=True),
    withheld=st.sets(st.integers(0, 5)),
    profile=st.sampled_from(list(PROFILES.values())),
)
def test_every_format_5_shuffle_verifies_and_notes_exactly_what_was_withheld(
    values: list[str], withheld: set[int], profile: Profile
) -> None:
    mixed = entries(list(values), withheld=tuple(withheld))
    report = verify(play_sealed(profile, SEED, 40, mixed))
    assert report.ok
    assert report.withheld == tuple(i + 1 for i in range(len(values)) if i in withheld)


# --- the derivation as docs/FAIRNESS.md writes it, implemented again from its words ---


def documented_frame(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(4, "big") + data


def documented_seal(seed: str, profile: str) -> str:
    return hashlib.sha256(b"uno-launcher-seal/5\x00" + documented_frame(seed) + documented_frame(profile)).hexdigest()


def documented_key(sealed: str, seed: str, pairs: list[tuple[str, str | None]]) -> bytes:
    material = b"uno-launcher-shuffle/5\x00" + documented_frame(sealed) + documented_frame(seed)
    material += len(pairs).to_bytes(4, "big")
    for commitment, value in pairs:
        material += documented_frame(commitment) + documented_frame(value or "")
    return hashlib.sha256(material).digest()


def sealed_vector() -> dict[str, Any]:
    text = (ROOT / "docs" / "FAIRNESS.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- format 5 known-answer vector[^>]*-->\s*```json\n(.*?)\n```", text, re.S)
    assert found, "docs/FAIRNESS.md has no format 5 known-answer vector"
    vector: dict[str, Any] = json.loads(found.group(1))
    return vector


def vector_record(v: dict[str, Any]) -> dict[str, Any]:
    """The vector as a record: every card drawn came out."""
    played = [{**o, "dispensed": o["cards"], "stop": "count" if o["cards"] else "miss"} for o in v["outcomes"]]
    head = {key: v[key] for key in ("profile", "commitment", "seed", "contributions")}
    carried = {"misses_in_row": 0, "fires_in_row": 0}
    return {"format": "uno-launcher-shuffle/5", **head, "restarts": [], "carried": carried, "outcomes": played}


def test_the_documented_derivation_gives_the_published_vector_and_the_daemons_key() -> None:
    v = sealed_vector()
    pairs = [(c["commitment"], c["value"]) for c in v["contributions"]]
    assert [hashlib.sha256(value.encode()).hexdigest() for _, value in pairs if value] == [
        c for c, value in pairs if value
    ]
    assert documented_seal(v["seed"], v["profile"]) == v["commitment"]
    assert documented_key(v["commitment"], v["seed"], pairs).hex() == v["key"]
    # The daemon's code gives the same.
    assert seal(v["seed"], v["profile"]) == v["commitment"]
    assert sealed_key(v["commitment"], v["seed"], [Contribution(c, x) for c, x in pairs]).hex() == v["key"]
    assert profile_text(PROFILES["classic"]) == v["profile"]
    record = {"format": "uno-launcher-shuffle/5", **{k: v[k] for k in ("profile", "commitment", "seed")}}
    record |= {"contributions": v["contributions"], "restarts": [], "carried": {"misses_in_row": 0, "fires_in_row": 0}}
    record["outcomes"] = [
        {**o, "dispensed": o["cards"], "stop": "count" if o["cards"] else "miss"} for o in v["outcomes"]
    ]
    report = verify(record)
    assert report.ok and report.withheld == (2,)
