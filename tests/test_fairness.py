"""Commit, contribute, reveal: a finished shuffle replays exactly from its seed and its contributions, any change to
the record is caught, and both the daemon's code and an implementation written from docs/FAIRNESS.md alone give the
known-answer vector published there. Records of the formats before still verify: the first on its own path."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.fairplay.fairness import (
    FORMAT_V1,
    FORMAT_V2,
    FORMAT_V3,
    FORMAT_V4,
    CameOut,
    RecordError,
    commitment,
    is_contribution,
    legacy_record,
    new_seed,
    replay,
    replay_presses,
    replay_v1,
    shuffle_key,
    verify,
    verify_file,
)
from launcher.fairplay.schedule import (
    PROFILES,
    Profile,
    Schedule,
    block,
    draw_stream,
    profile_from_mapping,
    profile_to_mapping,
)

ROOT = Path(__file__).resolve().parent.parent
SEED = "5eed0000000000000000000000000001"
CONTRIBUTIONS = ["00112233445566778899aabbccddeeff", "0123456789abcdef0123456789abcdef", "f" * 32]


def known_answers() -> dict[str, Any]:
    """The known-answer vector, read from the JSON block that follows its marker in docs/FAIRNESS.md."""
    text = (ROOT / "docs" / "FAIRNESS.md").read_text(encoding="utf-8")
    found = re.search(r"<!-- known-answer vector[^>]*-->\s*```json\n(.*?)\n```", text, re.S)
    assert found, "docs/FAIRNESS.md has no known-answer vector"
    return json.loads(found.group(1))


def play_shuffle(
    profile: Profile,
    seed: str,
    n: int,
    restarts: tuple[int, ...] = (),
    contributions: list[str] = CONTRIBUTIONS,
    carried: tuple[int, int] = (0, 0),
) -> dict[str, Any]:
    """A shuffle as the daemon played it before format 5 (contributions in the clear): a live schedule under the
    shuffle's key, going on from the run `carried`,
    the lid opened after the presses listed in restarts, every card drawn counted at the exit."""
    schedule = Schedule(profile, shuffle_key(seed, contributions))
    schedule.go_on_from(*carried)
    outcomes = replay_presses(schedule, n, restarts)
    came_out = {o.press: CameOut(o.cards, "count" if o.cards else "miss") for o in outcomes}
    return legacy_record(profile, seed, contributions, outcomes, restarts, came_out, carried)


def play_shuffle_v1(profile: Profile, seed: str, n: int, restarts: tuple[int, ...] = ()) -> dict[str, Any]:
    """A record as versions before the contributions wrote it: Python's random, no contributions, no counts."""
    outcomes = replay_presses(Schedule(profile, seed, draw=random.Random(seed).random), n, restarts)
    return {
        "format": FORMAT_V1,
        "profile": {"name": profile.name, **profile_to_mapping(profile)},
        "commitment": commitment(seed),
        "seed": seed,
        "restarts": list(restarts),
        "outcomes": [
            {"press": o.press, "cards": o.cards, "jackpot": o.jackpot, "pause_ms": o.pause_ms} for o in outcomes
        ],
    }


def test_seeds_are_fresh_hex_and_commitments_are_sha256_of_the_utf8_seed() -> None:
    seeds = {new_seed() for _ in range(20)}
    assert len(seeds) == 20
    assert all(len(s) == 32 and int(s, 16) >= 0 for s in seeds)
    assert commitment("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert commitment("été") == hashlib.sha256("été".encode()).hexdigest()


def test_a_contribution_is_32_lowercase_hex_characters() -> None:
    assert is_contribution("0123456789abcdef" * 2)
    for bad in ("0" * 31, "0" * 33, "A" * 32, "g" * 32, "0" * 31 + "\n", 12, None, ["0" * 32], "０" * 32):
        assert not is_contribution(bad), bad


# --- the known-answer vector of docs/FAIRNESS.md ------------------------------------------------------------------


def test_the_daemon_gives_the_published_known_answers() -> None:
    vector = known_answers()
    key = shuffle_key(vector["seed"], vector["contributions"])
    assert commitment(vector["seed"]) == vector["commitment"]
    assert key.hex() == vector["key"]
    assert shuffle_key(vector["seed"], []).hex() == vector["key_without_contributions"]
    assert block(key, 0).hex() == vector["block_0"]
    draw = draw_stream(key)
    assert [draw() * 2**53 for _ in range(6)] == vector["draws_times_2_53"]
    for case in vector["cases"]:
        profile = profile_from_record(case["profile"])
        contributions = vector["contributions"] if case["contributions"] else []
        outcomes = replay(profile, vector["seed"], len(case["outcomes"]), case["restarts"], contributions)
        assert [as_recorded(o) for o in outcomes] == case["outcomes"], case["name"]


def test_the_documented_derivation_gives_the_published_known_answers() -> None:
    vector = known_answers()
    key = documented_key(vector["seed"], vector["contributions"])
    assert key.hex() == vector["key"]
    assert documented_key(vector["seed"], []).hex() == vector["key_without_contributions"]
    draws = DocumentedStream(key)
    assert [int(draws.random() * 2**53) for _ in range(6)] == vector["draws_times_2_53"]
    for case in vector["cases"]:
        contributions = vector["contributions"] if case["contributions"] else []
        stream = DocumentedStream(documented_key(vector["seed"], contributions))
        replayed = documented_replay(case["profile"], stream.random, len(case["outcomes"]), set(case["restarts"]))
        assert replayed == case["outcomes"], case["name"]


def profile_from_record(mapping: dict[str, Any]) -> Profile:
    return profile_from_mapping(mapping["name"], {k: v for k, v in mapping.items() if k != "name"})


def as_recorded(outcome: Any) -> dict[str, Any]:
    return {"press": outcome.press, "cards": outcome.cards, "jackpot": outcome.jackpot, "pause_ms": outcome.pause_ms}


# --- shuffles that verify, and changes that are caught --------------------------------------------------------------


@pytest.mark.parametrize("name", PROFILES)
def test_a_played_shuffle_verifies(name: str) -> None:
    record = play_shuffle(PROFILES[name], SEED, 150, restarts=(40, 41, 97))
    report = verify(record)
    assert report.ok and report.commitment_ok and report.first_bad_press is None
    assert report.presses == 150 and report.profile == name and report.contributions == 3
    assert report.shortfalls == ()
    assert str(report) == (
        "OK: the seed matches its commitment and, with its 3 contribution(s), replays all 150 presses "
        f"of profile {name!r} exactly"
    )


def test_replay_gives_the_live_outcomes() -> None:
    schedule = Schedule(PROFILES["extreme"], shuffle_key(SEED, CONTRIBUTIONS))
    live = [schedule.next_outcome() for _ in range(500)]
    assert replay(PROFILES["extreme"], SEED, 500, (), CONTRIBUTIONS) == live


def test_the_contributions_change_every_shuffle_they_are_in() -> None:
    alone = [o.cards for o in replay(PROFILES["classic"], SEED, 100)]
    mixed = [o.cards for o in replay(PROFILES["classic"], SEED, 100, (), CONTRIBUTIONS[:1])]
    assert alone != mixed


def test_replay_restarts_a_pattern_where_the_lid_opened() -> None:
    outcomes = replay(PROFILES["pattern"], SEED, 10, restarts=[3])
    assert [o.press for o in outcomes if o.fired] == [2, 5, 9]  # pattern presses 2, then 2 and 6 after a restart


def test_the_record_survives_a_json_file(tmp_path: Path) -> None:
    path = tmp_path / "shuffle.json"
    record = play_shuffle(PROFILES["classic"], SEED, 80)
    path.write_text(json.dumps(record), encoding="utf-8")
    assert verify_file(path).ok
    assert record["format"] == FORMAT_V4 == "uno-launcher-shuffle/4"
    assert record["commitment"] == commitment(SEED) and record["contributions"] == CONTRIBUTIONS
    first = record["outcomes"][0]
    assert set(first) == {"press", "cards", "jackpot", "pause_ms", "dispensed", "stop"}
    assert first["dispensed"] == first["cards"] and first["stop"] == ("count" if first["cards"] else "miss")


RECORD = play_shuffle(PROFILES["extreme"], SEED, 60)


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
    record["outcomes"].insert(5, {**record["outcomes"][5], "cards": 3})
    assert verify(record).first_bad_press in range(6, 62)


def test_a_wrong_seed_fails_the_commitment() -> None:
    record = copy.deepcopy(RECORD)
    record["seed"] = new_seed()
    report = verify(record)
    assert not report.ok and not report.commitment_ok
    assert "FAILED: the seed does not match the commitment" in str(report)


def test_a_seed_swapped_with_its_own_commitment_fails_the_replay() -> None:
    other = new_seed()
    report = verify({**RECORD, "seed": other, "commitment": commitment(other)})
    assert report.commitment_ok and not report.ok and report.first_bad_press is not None


@pytest.mark.parametrize(
    "change",
    [
        lambda c: c[1:],  # the first dropped
        lambda c: c[:-1],  # the last dropped
        lambda c: [c[1], c[0], *c[2:]],  # two swapped
        lambda c: [*c, "0" * 32],  # one added
        lambda c: ["1" + c[0][1:], *c[1:]],  # one changed
        lambda c: [],  # all dropped
    ],
    ids=["first dropped", "last dropped", "swapped", "added", "changed", "all dropped"],
)
def test_a_contribution_dropped_added_changed_or_moved_fails(change: Any) -> None:
    record = {**RECORD, "contributions": change(RECORD["contributions"])}
    report = verify(record)
    assert report.commitment_ok and not report.ok and report.first_bad_press is not None


def test_a_changed_commitment_fails() -> None:
    record = {**RECORD, "commitment": commitment("something else")}
    assert not verify(record).commitment_ok
    assert verify({**RECORD, "commitment": RECORD["commitment"].upper()}).ok


def test_what_the_reader_saw_and_added_is_checked() -> None:
    assert verify(RECORD, seen_commitment=RECORD["commitment"], mine=[CONTRIBUTIONS[2]]).ok
    report = verify(RECORD, seen_commitment=commitment("the host showed another"))
    assert not report.ok and report.seen_commitment_ok is False
    assert "FAILED: the record's commitment is not the one you saw before the first press" in str(report)
    missing = "9" * 32
    report = verify(RECORD, mine=[missing])
    assert not report.ok and report.missing == (missing,)
    assert f"FAILED: your contribution {missing} is not in the record" in str(report)


def test_presses_that_did_not_dispense_what_was_drawn_are_named_beside_the_ok() -> None:
    record = copy.deepcopy(RECORD)
    fired = [o for o in record["outcomes"] if o["cards"] > 1]
    fired[0].update(dispensed=1, stop="jam")
    fired[1].update(dispensed=0, stop="empty")
    fired[2].update(dispensed=None, stop=None)
    report = verify(record)
    assert report.ok
    assert [(s.press, s.dispensed, s.stop) for s in report.shortfalls] == [
        (fired[0]["press"], 1, "jam"),
        (fired[1]["press"], 0, "empty"),
        (fired[2]["press"], None, None),
    ]
    text = str(report)
    assert f"NOTE: press {fired[0]['press']}: the seed gives {fired[0]['cards']} cards, 1 came out (jam)" in text
    assert f"NOTE: press {fired[2]['press']}: the seed gives {fired[2]['cards']} cards, an unknown number" in text


def test_a_forgotten_restart_fails_a_pattern_round() -> None:
    record = play_shuffle(PROFILES["pattern"], SEED, 30, restarts=(12,))
    assert verify(record).ok
    report = verify({**record, "restarts": []})
    assert not report.ok and report.first_bad_press is not None and report.first_bad_press > 12


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seed": None}, "seed = None is not accepted: expected a JSON string"),
        ({"seed": "\ud800"}, "seed = '\\ud800' is not accepted"),
        ({"outcomes": {}}, "outcomes = {} is not accepted: expected a JSON array"),
        ({"outcomes": [{"press": 1, "cards": 0}]}, "outcomes[0] = {'press': 1, 'cards': 0} is not accepted"),
        ({"restarts": [-1]}, "restarts = [-1] is not accepted"),
        ({"format": "other/9"}, "format = 'other/9' is not accepted"),
        ({"profile": {**RECORD["profile"], "hazard": [0.5]}}, "profile: hazard = [0.5] is not accepted"),
        ({"profile": {"name": "x", "speed": 1}}, "profile: speed = 1 is not accepted: unknown parameter"),
        ({"contributions": "abc"}, "contributions = 'abc' is not accepted: expected a JSON array"),
        ({"contributions": ["ABC"]}, "contributions[0] = 'ABC' is not accepted: expected 32 lowercase hex"),
        ({"contributions": ["0" * 32] * 33}, "contributions has 33 entries: a shuffle takes at most 32"),
        (
            {"outcomes": [{**RECORD["outcomes"][0], "dispensed": -1}]},
            "outcomes[0].dispensed = -1 is not accepted: expected a whole number of cards or null",
        ),
        (
            {"outcomes": [{**RECORD["outcomes"][0], "stop": "boom"}]},
            "outcomes[0].stop = 'boom' is not accepted: expected one of miss, count, jam",
        ),
    ],
)
def test_malformed_records_name_the_field(change: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError) as raised:
        verify({**RECORD, **change})
    assert message in str(raised.value)


@pytest.mark.parametrize("field", ["commitment", "contributions", "seed", "profile", "outcomes"])
def test_a_missing_field_is_named(field: str) -> None:
    with pytest.raises(RecordError, match=f"{field} is missing"):
        verify({k: v for k, v in RECORD.items() if k != field})
    with pytest.raises(RecordError, match="must be a JSON object"):
        verify([])  # type: ignore[arg-type]


def test_unreadable_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="cannot read shuffle record"):
        verify_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    with pytest.raises(RecordError, match="is not valid JSON"):
        verify_file(bad)


# --- one shuffle after another: the run of misses or fires goes on ----------------------------------------------


def runs(cards: list[int]) -> tuple[int, int]:
    """The longest run of misses and of fires in a row."""
    longest = [0, 0]
    current = [0, 0]
    for n in cards:
        fired = int(n > 0)
        current[fired] += 1
        current[1 - fired] = 0
        longest[fired] = max(longest[fired], current[fired])
    return longest[0], longest[1]


HAZARDS = [name for name, profile in PROFILES.items() if not profile.pattern]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(HAZARDS), st.integers(1, 60), st.integers(0, 2**32))
def test_shuffles_one_after_another_keep_the_profiles_promises_across_the_change(
    name: str, ends: int, key: int
) -> None:
    """A shuffle that ends in a drought (or a run of fires) hands it on: the next never adds a whole drought of its
    own, so no more misses (or fires) in a row come out than the profile promises, across any number of shuffles."""
    profile = PROFILES[name]
    cards: list[int] = []
    carried = (0, 0)
    for shuffle in range(4):
        schedule = Schedule(profile, f"{key}-{shuffle}")
        schedule.go_on_from(*carried)
        cards += [schedule.next_outcome().cards for _ in range(ends)]
        carried = (schedule.misses_in_row, schedule.fires_in_row)
    misses, fires = runs(cards)
    assert misses <= profile.longest_drought and fires <= profile.max_fires_in_row


def test_a_carried_run_is_part_of_the_record_and_of_its_check() -> None:
    profile = PROFILES["classic"]
    record = play_shuffle(profile, SEED, 60, carried=(2, 0))
    assert record["carried"] == {"misses_in_row": 2, "fires_in_row": 0}
    assert verify(record).ok
    fresh = play_shuffle(profile, SEED, 60)
    assert [o["cards"] for o in fresh["outcomes"]] != [o["cards"] for o in record["outcomes"]]
    assert not verify({**record, "carried": {"misses_in_row": 0, "fires_in_row": 0}}).ok  # the run changed
    for bad in ({"misses_in_row": 2, "fires_in_row": 1}, {"misses_in_row": profile.longest_drought + 1,
                "fires_in_row": 0}, {"misses_in_row": -1, "fires_in_row": 0}, {"misses_in_row": 2}, []):  # fmt: skip
        with pytest.raises(RecordError, match=r"^carried"):
            verify({**record, "carried": bad})
    with pytest.raises(RecordError, match="carried is missing"):
        verify({k: v for k, v in record.items() if k != "carried"})


def test_a_pattern_starts_over_at_each_shuffle_and_its_record_says_no_run() -> None:
    pattern = Schedule(PROFILES["pattern"], SEED)
    with pytest.raises(ValueError, match="pattern"):
        pattern.go_on_from(1, 0)
    record = play_shuffle(PROFILES["pattern"], SEED, 30)
    assert record["carried"] == {"misses_in_row": 0, "fires_in_row": 0} and verify(record).ok
    with pytest.raises(RecordError, match=r"^carried .* pattern"):
        verify({**record, "carried": {"misses_in_row": 1, "fires_in_row": 0}})


def test_a_record_from_before_runs_were_carried_still_verifies() -> None:
    record = play_shuffle(PROFILES["brutal"], SEED, 90)
    older = {**{k: v for k, v in record.items() if k != "carried"}, "format": FORMAT_V3}
    report = verify(older)
    assert report.ok and report.format == FORMAT_V3


# --- records of the formats before ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROFILES)
def test_a_record_from_before_the_rename_still_verifies(name: str) -> None:
    """The second format is today's with two other names: the format's, and `round` for the number."""
    record = {
        **{k: v for k, v in play_shuffle(PROFILES[name], SEED, 120, restarts=(30, 31)).items() if k != "carried"},
        "format": "uno-launcher-round/2",
        "round": 3,
    }
    report = verify(record)
    assert report.ok and report.format == FORMAT_V2 and report.contributions == len(CONTRIBUTIONS)
    assert str(report).startswith("OK: the seed matches its commitment and, with its 3 contribution(s), replays all")
    fired = next(i for i, o in enumerate(record["outcomes"]) if o["cards"])
    record["outcomes"][fired]["cards"] += 1
    assert verify(record).first_bad_press == fired + 1
    with pytest.raises(RecordError, match="dispensed, stop"):  # checked as strictly as today's
        verify({**record, "outcomes": [{"press": 1, "cards": 0, "jackpot": False, "pause_ms": 0}]})


# --- records of the first format --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROFILES)
def test_a_first_format_record_still_verifies_on_its_own_path(name: str) -> None:
    record = play_shuffle_v1(PROFILES[name], SEED, 150, restarts=(40, 41, 97))
    report = verify(record)
    assert report.ok and report.format == FORMAT_V1 and report.contributions == 0
    assert str(report).startswith("OK: the seed matches its commitment replays all 150 presses")
    assert "NOTE: a uno-launcher-round/1 record" in str(report)
    assert verify({k: v for k, v in record.items() if k != "format"}).ok  # the first format could leave it out
    # Read as the second format (its key, not Python's random), the same outcomes would not replay.
    with pytest.raises(RecordError, match="contributions is missing"):
        verify({**record, "format": FORMAT_V4})


def test_a_changed_first_format_record_fails() -> None:
    record = play_shuffle_v1(PROFILES["classic"], SEED, 60)
    assert [as_recorded(o) for o in replay_v1(PROFILES["classic"], SEED, 60)] == record["outcomes"]
    fired = next(i for i, o in enumerate(record["outcomes"]) if o["cards"])
    record["outcomes"][fired]["cards"] += 1
    assert verify(record).first_bad_press == fired + 1
    del record["outcomes"][fired]["jackpot"]  # optional in the first format: still compared when present only
    assert verify(record).first_bad_press == fired + 1


# --- independent implementations, written from docs/FAIRNESS.md only -------------------------------------------


def documented_key(seed: str, contributions: list[str]) -> bytes:
    def frame(text: str) -> bytes:
        data = text.encode("utf-8")
        return len(data).to_bytes(4, "big") + data

    material = b"uno-launcher-round/2" + b"\x00" + frame(seed) + len(contributions).to_bytes(4, "big")
    return hashlib.sha256(material + b"".join(frame(c) for c in contributions)).digest()


class DocumentedStream:
    """u_k = floor(w_k / 2^11) / 2^53, w_k the k mod 4-th 8 bytes of HMAC-SHA256(key, BE64(k div 4))."""

    def __init__(self, key: bytes) -> None:
        self.key, self.k = key, 0

    def random(self) -> float:
        block_ = hmac.new(self.key, (self.k // 4).to_bytes(8, "big"), hashlib.sha256).digest()
        word = int.from_bytes(block_[8 * (self.k % 4) : 8 * (self.k % 4) + 8], "big")
        self.k += 1
        return (word >> 11) / 2**53


class DocumentedGenerator:
    """MT19937 seeded as docs/FAIRNESS.md describes for the first format, with the 53-bit random()."""

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


def documented_replay(profile: dict[str, Any], draw: Any, n: int, restarts: set[int]) -> list[dict[str, Any]]:
    """The press rules of docs/FAIRNESS.md, step by step, on a profile's JSON parameters."""
    misses = fires = place = 0
    sums = []
    for weight in profile["card_weights"]:
        sums.append((sums[-1] if sums else 0.0) + weight)
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
                cards = next((i for i in range(last_positive) if x < sums[i]), last_positive) + 1
        outcomes.append({"press": done + 1, "cards": cards, "jackpot": jackpot, "pause_ms": pause})
    return outcomes


def test_the_documented_stream_is_the_schedules() -> None:
    key = shuffle_key(SEED, CONTRIBUTIONS)
    ours, documented = draw_stream(key), DocumentedStream(key)
    assert [ours() for _ in range(1500)] == [documented.random() for _ in range(1500)]


@pytest.mark.parametrize("name", PROFILES)
def test_the_documented_press_rules_are_the_schedules(name: str) -> None:
    record = play_shuffle(PROFILES[name], SEED, 400, restarts=(50, 51, 200))
    stream = DocumentedStream(documented_key(SEED, CONTRIBUTIONS))
    replayed = documented_replay(record["profile"], stream.random, 400, {50, 51, 200})
    assert replayed == [{k: o[k] for k in ("press", "cards", "jackpot", "pause_ms")} for o in record["outcomes"]]


def test_the_documented_generator_of_the_first_format_is_pythons() -> None:
    ours, python = DocumentedGenerator(SEED), random.Random(SEED)
    assert [ours.random() for _ in range(1500)] == [python.random() for _ in range(1500)]


@pytest.mark.parametrize("name", PROFILES)
def test_the_first_format_replays_by_the_same_press_rules(name: str) -> None:
    record = play_shuffle_v1(PROFILES[name], SEED, 400, restarts=(50, 51, 200))
    replayed = documented_replay(record["profile"], DocumentedGenerator(SEED).random, 400, {50, 51, 200})
    assert replayed == record["outcomes"]
