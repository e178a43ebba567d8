"""Commit and reveal: a finished round replays exactly from its seed, and any change to the record is caught."""

from __future__ import annotations

import copy
import hashlib
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.fairness import (
    FORMAT,
    RecordError,
    commitment,
    new_seed,
    replay,
    round_record,
    verify,
    verify_file,
)
from launcher.schedule import PROFILES, Profile, Schedule

SEED = "5eed0000000000000000000000000001"


def play_round(profile: Profile, seed: str, n: int, restarts: tuple[int, ...] = ()) -> dict[str, Any]:
    """A round as the daemon plays it: a live schedule, the lid opened after the presses listed in restarts."""
    schedule = Schedule(profile, seed)
    outcomes = []
    for done in range(n):
        if done in restarts:
            schedule.restart()
        outcomes.append(schedule.next_outcome())
    return round_record(profile, seed, outcomes, restarts)


def test_seeds_are_fresh_hex_and_commitments_are_sha256_of_the_utf8_seed() -> None:
    seeds = {new_seed() for _ in range(20)}
    assert len(seeds) == 20
    assert all(len(s) == 32 and int(s, 16) >= 0 for s in seeds)
    assert commitment("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert commitment("été") == hashlib.sha256("été".encode()).hexdigest()


@pytest.mark.parametrize("name", PROFILES)
def test_a_played_round_verifies(name: str) -> None:
    record = play_round(PROFILES[name], SEED, 150, restarts=(40, 41, 97))
    report = verify(record)
    assert report.ok and report.commitment_ok and report.first_bad_press is None
    assert report.presses == 150 and report.profile == name
    assert str(report).startswith("OK: the seed matches its commitment and replays all 150 presses")


def test_replay_gives_the_live_outcomes() -> None:
    schedule = Schedule(PROFILES["extreme"], SEED)
    live = [schedule.next_outcome() for _ in range(500)]
    assert replay(PROFILES["extreme"], SEED, 500) == live


def test_replay_restarts_a_pattern_where_the_lid_opened() -> None:
    outcomes = replay(PROFILES["pattern"], SEED, 10, restarts=[3])
    assert [o.press for o in outcomes if o.fired] == [2, 5, 9]  # pattern presses 2, then 2 and 6 after a restart


def test_the_record_survives_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "round.json"
    record = play_round(PROFILES["classic"], SEED, 80)
    path.write_text(json.dumps(record), encoding="utf-8")
    assert verify_file(path).ok
    assert record["format"] == FORMAT and record["commitment"] == commitment(SEED)
    assert record["outcomes"][0] == {"press": 1, "cards": 0, "jackpot": False, "pause_ms": 0}


RECORD = play_round(PROFILES["extreme"], SEED, 60)


@settings(max_examples=80, deadline=None)
@given(
    index=st.integers(0, 59),
    field=st.sampled_from(["press", "cards", "jackpot", "pause_ms"]),
    value=st.one_of(st.integers(-1, 40), st.booleans(), st.none(), st.text(max_size=2)),
)
def test_changing_any_recorded_outcome_fails_at_that_press(index: int, field: str, value: Any) -> None:
    record = copy.deepcopy(RECORD)
    original = record["outcomes"][index][field]
    if type(value) is type(original) and value == original:
        value = original + 1  # bool, int: still the same type family but a different value
    record["outcomes"][index][field] = value
    report = verify(record)
    assert not report.ok and report.commitment_ok
    assert report.first_bad_press == index + 1
    assert f"FAILED: press {index + 1}: recorded {field} = {value!r}" in str(report)


def test_a_dropped_or_inserted_press_fails_where_it_happened() -> None:
    record = copy.deepcopy(RECORD)
    del record["outcomes"][10]
    assert verify(record).first_bad_press == 11
    record = copy.deepcopy(RECORD)
    record["outcomes"].insert(5, {"press": 6, "cards": 3})
    assert verify(record).first_bad_press in range(6, 62)


def test_a_wrong_seed_fails_the_commitment() -> None:
    record = copy.deepcopy(RECORD)
    record["seed"] = new_seed()
    report = verify(record)
    assert not report.ok and not report.commitment_ok
    assert "FAILED: the seed does not match the commitment" in str(report)


def test_a_changed_commitment_fails() -> None:
    record = {**RECORD, "commitment": commitment("something else")}
    assert not verify(record).commitment_ok
    assert verify({**RECORD, "commitment": RECORD["commitment"].upper()}).ok


def test_a_forgotten_restart_fails_a_pattern_round() -> None:
    record = play_round(PROFILES["pattern"], SEED, 30, restarts=(12,))
    assert verify(record).ok
    report = verify({**record, "restarts": []})
    assert not report.ok and report.first_bad_press is not None and report.first_bad_press > 12


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seed": None}, "seed = None is not accepted: expected a JSON string"),
        ({"seed": "\ud800"}, "seed = '\\ud800' is not accepted"),
        ({"outcomes": {}}, "outcomes = {} is not accepted: expected a JSON array"),
        ({"outcomes": [{"press": 1}]}, "outcomes[0] = {'press': 1} is not accepted"),
        ({"restarts": [-1]}, "restarts = [-1] is not accepted"),
        ({"format": "other/9"}, "format = 'other/9' is not accepted"),
        ({"profile": {**RECORD["profile"], "hazard": [0.5]}}, "profile: hazard = [0.5] is not accepted"),
        ({"profile": {"name": "x", "speed": 1}}, "profile: speed = 1 is not accepted: unknown parameter"),
    ],
)
def test_malformed_records_name_the_field(change: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError) as raised:
        verify({**RECORD, **change})
    assert message in str(raised.value)


def test_a_missing_field_is_named() -> None:
    record = {k: v for k, v in RECORD.items() if k != "commitment"}
    with pytest.raises(RecordError, match="commitment is missing"):
        verify(record)
    with pytest.raises(RecordError, match="must be a JSON object"):
        verify([])  # type: ignore[arg-type]


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read round record"):
        verify_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    with pytest.raises(RecordError, match="is not valid JSON"):
        verify_file(bad)


# --- an independent replay, written from docs/FAIRNESS.md only ----------------------------------------------------


class DocumentedGenerator:
    """MT19937 seeded as docs/FAIRNESS.md describes, with the 53-bit random()."""

    N, M = 624, 397

    def __init__(self, seed: str) -> None:
        data = seed.encode("utf-8")
        key_int = int.from_bytes(data + hashlib.sha512(data).digest(), "big")
        words = []
        while key_int:
            words.append(key_int & 0xFFFFFFFF)
            key_int >>= 32
        self.mt = self._init_by_array(words or [0])
        self.index = self.N

    def _init_by_array(self, key: list[int]) -> list[int]:
        n = self.N
        mt = [19650218]
        for i in range(1, n):
            mt.append((1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & 0xFFFFFFFF)
        i, j = 1, 0
        for _ in range(max(n, len(key))):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525)) + key[j] + j) & 0xFFFFFFFF
            i, j = i + 1, (j + 1) % len(key)
            if i >= n:
                mt[0], i = mt[n - 1], 1
        for _ in range(n - 1):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941)) - i) & 0xFFFFFFFF
            i += 1
            if i >= n:
                mt[0], i = mt[n - 1], 1
        mt[0] = 0x80000000
        return mt

    def _next_word(self) -> int:
        mt, n = self.mt, self.N
        if self.index >= n:
            for k in range(n):
                y = (mt[k] & 0x80000000) | (mt[(k + 1) % n] & 0x7FFFFFFF)
                mt[k] = mt[(k + self.M) % n] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            self.index = 0
        y = mt[self.index]
        self.index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)

    def random(self) -> float:
        a, b = self._next_word() >> 5, self._next_word() >> 6
        return (a * 67108864 + b) / 2**53


def documented_replay(profile: dict[str, Any], seed: str, n: int, restarts: set[int]) -> list[dict[str, Any]]:
    """The press rules of docs/FAIRNESS.md, step by step, on a profile's JSON parameters."""
    draw = DocumentedGenerator(seed).random
    misses = fires = place = 0
    sums = [sum(profile["card_weights"][: i + 1]) for i in range(len(profile["card_weights"]))]
    last_positive = max(i for i, w in enumerate(profile["card_weights"]) if w > 0)
    outcomes = []
    for done in range(n):
        if done in restarts and profile["pattern"]:
            misses = fires = place = 0
        pause = 0
        if profile["pause_probability"] > 0 and draw() < profile["pause_probability"]:
            low, high = profile["pause_ms"]
            pause = low + int(draw() * (high - low + 1))
        if profile["pattern"]:
            place = place % profile["pattern"][-1] + 1
            threshold = 1.0 if place in profile["pattern"] else 0.0
        else:
            threshold = profile["hazard"][misses] if fires < profile["max_fires_in_row"] else 0.0
        fire = draw() < threshold
        cards, jackpot = 0, False
        if not fire:
            misses, fires = misses + 1, 0
        else:
            misses, fires = 0, fires + 1
            jackpot = profile["jackpot_probability"] > 0 and draw() < profile["jackpot_probability"]
            if jackpot:
                low, high = profile["jackpot_cards"]
                cards = low + int(draw() * (high - low + 1))
            else:
                x = draw() * sums[-1]
                cards = min(next((i for i, c in enumerate(sums) if x < c), last_positive), last_positive) + 1
        outcomes.append({"press": done + 1, "cards": cards, "jackpot": jackpot, "pause_ms": pause})
    return outcomes


def test_the_documented_generator_is_pythons() -> None:
    ours, python = DocumentedGenerator(SEED), random.Random(SEED)
    assert [ours.random() for _ in range(1500)] == [python.random() for _ in range(1500)]


@pytest.mark.parametrize("name", PROFILES)
def test_the_documented_press_rules_are_the_schedules(name: str) -> None:
    record = play_round(PROFILES[name], SEED, 400, restarts=(50, 51, 200))
    assert documented_replay(record["profile"], SEED, 400, {50, 51, 200}) == record["outcomes"]
