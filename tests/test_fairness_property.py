"""Properties of format-4 records (contributions in the clear) over many seeds and lists of contributions: every
shuffle such a daemon could play verifies, and no change to the seed or to the list of contributions leaves a shuffle
of a few dozen presses verifying. Format 5's are in tests/test_fairness_sealed.py."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.fairplay.fairness import (
    KEY_LABEL,
    MAX_CONTRIBUTIONS,
    CameOut,
    commitment,
    key_material,
    legacy_record,
    replay_presses,
    shuffle_key,
    verify,
)
from launcher.fairplay.schedule import PROFILES, Schedule

PRESSES = 60  # a different key gives the same 60 outcomes with a chance far below one in a billion
contribution = st.binary(min_size=16, max_size=16).map(bytes.hex)
contributions = st.lists(contribution, max_size=MAX_CONTRIBUTIONS)
seeds = st.one_of(st.binary(min_size=16, max_size=16).map(bytes.hex), st.text(max_size=40))
profiles = st.sampled_from(list(PROFILES.values()))
restarts = st.lists(st.integers(0, PRESSES), max_size=3, unique=True).map(sorted)


def played(profile: Any, seed: str, mixed: list[str], lid: list[int]) -> dict[str, Any]:
    outcomes = replay_presses(Schedule(profile, shuffle_key(seed, mixed)), PRESSES, lid)
    came_out = {o.press: CameOut(o.cards, "count" if o.cards else "miss") for o in outcomes}
    return legacy_record(profile, seed, mixed, outcomes, lid, came_out)


@settings(max_examples=150, deadline=None)
@given(profile=profiles, seed=seeds, mixed=contributions, lid=restarts)
def test_every_shuffle_verifies_with_the_contributions_it_took(
    profile: Any, seed: str, mixed: list[str], lid: Any
) -> None:
    record = played(profile, seed, mixed, lid)
    report = verify(record, seen_commitment=commitment(seed), mine=mixed[:1])
    assert report.ok and report.contributions == len(mixed) and report.shortfalls == ()


@settings(max_examples=150, deadline=None)
@given(profile=profiles, seed=seeds, mixed=contributions.filter(bool), data=st.data())
def test_dropping_adding_or_changing_a_contribution_fails(
    profile: Any, seed: str, mixed: list[str], data: st.DataObject
) -> None:
    record = played(profile, seed, mixed, [])
    index = data.draw(st.integers(0, len(mixed) - 1), label="index")
    changed = data.draw(contribution.filter(lambda value: value != mixed[index]), label="changed")
    variants = {
        "dropped": mixed[:index] + mixed[index + 1 :],
        "changed": [*mixed[:index], changed, *mixed[index + 1 :]],
        "added": [*mixed[:index], changed, *mixed[index:]][:MAX_CONTRIBUTIONS],
    }
    if len(set(mixed)) > 1:
        variants["moved"] = mixed[index + 1 :] + mixed[: index + 1]
    for name, other in variants.items():
        if other == mixed:
            continue
        report = verify({**record, "contributions": other})
        assert report.commitment_ok and not report.ok, name


@settings(max_examples=100, deadline=None)
@given(profile=profiles, seed=seeds, other=seeds, mixed=contributions)
def test_another_seed_fails_even_with_its_own_commitment(profile: Any, seed: str, other: str, mixed: list[str]) -> None:
    if other == seed:
        return
    record = played(profile, seed, mixed, [])
    assert not verify({**record, "seed": other}).commitment_ok
    report = verify({**record, "seed": other, "commitment": commitment(other)})
    assert report.commitment_ok and not report.ok


def unframe(material: bytes) -> tuple[str, list[str]]:
    """Read (seed, contributions) back from a key's material: it holds them, so no two lists hash the same bytes."""
    assert material.startswith(KEY_LABEL + b"\0")
    at = len(KEY_LABEL) + 1

    def take(size: int) -> bytes:
        nonlocal at
        part = material[at : at + size]
        assert len(part) == size
        at += size
        return part

    def text() -> str:
        return take(int.from_bytes(take(4), "big")).decode("utf-8")

    seed = text()
    count = int.from_bytes(take(4), "big")
    values = [text() for _ in range(count)]
    assert at == len(material)
    return seed, values


@settings(max_examples=300, deadline=None)
@given(seed=seeds, mixed=st.lists(st.text(max_size=40), max_size=6))
def test_the_key_material_holds_the_seed_and_every_contribution_in_order(seed: str, mixed: list[str]) -> None:
    assert unframe(key_material(seed, mixed)) == (seed, mixed)
