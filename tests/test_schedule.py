"""The firing schedule: limits that hold for every profile, classic's published figures, the Mattel pattern,
and custom profiles that are refused with a message naming the parameter."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import math
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.fairplay.schedule import (
    CLASSIC_FIRE_RATE,
    MATTEL_PATTERN,
    PROFILES,
    Outcome,
    Profile,
    ProfileError,
    Schedule,
    block,
    draw_stream,
    key_of,
    profile_from_mapping,
    profile_to_mapping,
)

PROPERTY_SETTINGS = settings(max_examples=120, deadline=None)


# --- helpers --------------------------------------------------------------------------------------------------------


def presses(profile: Profile, seed: int | str, n: int) -> list[Outcome]:
    schedule = Schedule(profile, seed)
    return [schedule.next_outcome() for _ in range(n)]


def run_lengths(outcomes: list[Outcome], fired: bool) -> list[int]:
    """Lengths of the runs of fires (fired=True) or of misses (fired=False)."""
    runs, current = [0], 0
    for outcome in outcomes:
        current = current + 1 if outcome.fired == fired else 0
        runs.append(current)
    return runs


def chi_square_survival(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable: the regularized upper incomplete gamma Q(dof/2, x/2)."""
    a, z = dof / 2, x / 2
    if z <= 0:
        return 1.0
    log_prefix = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1:  # the series for P converges fast here
        term = total = 1 / a
        n = 0
        while abs(term) > 1e-15 * abs(total):
            n += 1
            term *= z / (a + n)
            total += term
        return 1.0 - total * math.exp(log_prefix)
    # Otherwise Lentz's continued fraction for Q.
    tiny = 1e-300
    b = z + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h * math.exp(log_prefix)


@st.composite
def custom_profiles(draw: st.DrawFn) -> Profile:
    """Any valid custom profile with a hazard: a rising curve ending at 1, any cap, weights, jackpot, pause."""
    steps = draw(st.lists(st.floats(0, 1), min_size=1, max_size=7))
    hazard = [*sorted(steps), 1.0]
    weights = draw(st.lists(st.floats(0, 10), min_size=1, max_size=12).filter(lambda w: any(x > 0 for x in w)))
    low = draw(st.integers(1, 30))
    shortest = draw(st.integers(0, 10_000))
    mapping = {
        "hazard": hazard,
        "max_fires_in_row": draw(st.integers(1, 5)),
        "card_weights": weights,
        "jackpot_probability": draw(st.sampled_from([0.0, 0.05, 0.5, 1.0])),
        "jackpot_cards": [low, draw(st.integers(low, 30))],
        "pause_probability": draw(st.sampled_from([0.0, 0.3, 1.0])),
        "pause_ms": [shortest, draw(st.integers(shortest, 10_000))],
    }
    return profile_from_mapping("custom", mapping)


@st.composite
def pattern_profiles(draw: st.DrawFn) -> Profile:
    """Any valid fixed pattern: its cap is the longest run of fires it has."""
    cycle = draw(st.integers(2, 40))
    fires = draw(st.sets(st.integers(1, cycle - 1), max_size=cycle - 2))
    pattern = sorted({*fires, cycle})
    for cap in range(1, 6):
        try:
            return profile_from_mapping("custom", {"pattern": pattern, "max_fires_in_row": cap, "card_weights": [1]})
        except ProfileError:
            continue
    return profile_from_mapping("custom", {"pattern": [2], "max_fires_in_row": 1, "card_weights": [1]})


any_profile = st.one_of(st.sampled_from(list(PROFILES.values())), custom_profiles(), pattern_profiles())
seeds = st.one_of(st.integers(0, 2**64), st.text(max_size=20))


# --- limits that hold for every profile ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(profile=any_profile, seed=seeds)
def test_droughts_and_fire_streaks_stay_within_the_profile_limits(profile: Profile, seed: int | str) -> None:
    outcomes = presses(profile, seed, 800)
    assert max(run_lengths(outcomes, fired=False)) <= profile.longest_drought
    assert max(run_lengths(outcomes, fired=True)) <= profile.max_fires_in_row


@PROPERTY_SETTINGS
@given(profile=any_profile, seed=seeds)
def test_cards_pauses_and_tension_stay_within_bounds(profile: Profile, seed: int | str) -> None:
    misses = 0
    for outcome in presses(profile, seed, 500):
        if outcome.fired:
            assert profile.min_cards <= outcome.cards <= profile.max_cards
            assert outcome.cards in profile.cards_distribution()
            if outcome.jackpot:
                assert profile.jackpot_cards[0] <= outcome.cards <= profile.jackpot_cards[1]
            misses = 0
        else:
            assert outcome.cards == 0 and not outcome.jackpot
            misses += 1
        assert outcome.tension == misses / profile.longest_drought
        shortest, longest = profile.pause_ms
        assert outcome.pause_ms == 0 or shortest <= outcome.pause_ms <= longest
        if profile.pause_probability == 0:
            assert outcome.pause_ms == 0


@PROPERTY_SETTINGS
@given(profile=any_profile, seed=seeds)
def test_the_same_seed_gives_the_same_outcomes(profile: Profile, seed: int | str) -> None:
    assert presses(profile, seed, 300) == presses(profile, seed, 300)


@PROPERTY_SETTINGS
@given(profile=any_profile, seed=seeds, warm_up=st.integers(0, 300))
def test_wild_hit_fire_ends_within_the_longest_drought_plus_one(
    profile: Profile, seed: int | str, warm_up: int
) -> None:
    """From whatever state earlier presses left, "press until it fires" needs at most longest drought + 1."""
    schedule = Schedule(profile, seed)
    for _ in range(warm_up):
        schedule.next_outcome()
    for _ in range(profile.longest_drought + 1):
        if schedule.next_outcome().fired:
            return
    pytest.fail(f"no fire within {profile.longest_drought + 1} presses after press {warm_up}")


@PROPERTY_SETTINGS
@given(profile=any_profile, seed=seeds)
def test_the_schedule_state_follows_the_outcomes(profile: Profile, seed: int | str) -> None:
    schedule = Schedule(profile, seed)
    assert (schedule.presses, schedule.misses_in_row, schedule.fires_in_row, schedule.tension) == (0, 0, 0, 0.0)
    misses = fires = 0
    for n in range(1, 200):
        outcome = schedule.next_outcome()
        misses, fires = (0, fires + 1) if outcome.fired else (misses + 1, 0)
        assert (outcome.press, schedule.presses) == (n, n)
        assert (schedule.misses_in_row, schedule.fires_in_row) == (misses, fires)
        assert schedule.tension == outcome.tension


def test_different_seeds_give_different_rounds() -> None:
    assert presses(PROFILES["classic"], "a", 100) != presses(PROFILES["classic"], "b", 100)


def test_outcomes_do_not_change_across_versions() -> None:
    """Recorded rounds must stay verifiable: the first presses of a known seed are pinned here, on the keyed
    stream (the text seed as the HMAC key) and on Python's random, which records of the first format replay on."""
    cards = [o.cards for o in presses(PROFILES["classic"], "00c0ffee", 20)]
    assert cards == [0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, 1, 0, 0, 0, 4, 0]
    first_format = Schedule(PROFILES["classic"], "00c0ffee", draw=random.Random("00c0ffee").random)
    cards = [first_format.next_outcome().cards for _ in range(20)]
    assert cards == [0, 0, 0, 0, 2, 0, 0, 5, 1, 0, 0, 0, 0, 2, 0, 0, 0, 6, 1, 0]


@pytest.mark.parametrize("seed", [b"", b"k" * 32, b"k" * 64, b"k" * 65, "été", 2**70])
def test_the_draw_stream_is_hmac_sha256_counter_blocks(seed: bytes | str | int) -> None:
    """Draw k: the k mod 4-th 64-bit word of HMAC-SHA256(key, k div 4 as 8 bytes big-endian), top 53 bits."""
    key = key_of(seed)
    assert key == (seed if isinstance(seed, bytes) else str(seed).encode("utf-8"))
    expected = []
    for k in range(150):  # more than one batch of blocks
        mac = hmac.new(key, (k // 4).to_bytes(8, "big"), hashlib.sha256).digest()
        expected.append((int.from_bytes(mac[8 * (k % 4) : 8 * (k % 4) + 8], "big") >> 11) / 2**53)
    draw = draw_stream(key)
    assert [draw() for _ in range(150)] == expected
    assert block(key, 7) == hmac.new(key, (7).to_bytes(8, "big"), hashlib.sha256).digest()
    assert all(0 <= u < 1 for u in expected)


# --- the built-in profiles ----------------------------------------------------------------------------------------


def test_all_profiles_are_built_in_and_immutable() -> None:
    assert list(PROFILES) == ["classic", "gentle", "brutal", "pattern", "extreme", "custom"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        PROFILES["classic"].max_fires_in_row = 5  # type: ignore[misc]


@pytest.mark.parametrize("profile", PROFILES.values(), ids=PROFILES)
def test_every_profile_round_trips_through_a_mapping(profile: Profile) -> None:
    assert profile_from_mapping(profile.name, profile_to_mapping(profile)) == profile


@pytest.mark.parametrize("profile", PROFILES.values(), ids=PROFILES)
def test_the_exact_fire_rate_matches_a_long_run(profile: Profile) -> None:
    outcomes = presses(profile, "rate", 60_000)
    assert sum(o.fired for o in outcomes) / len(outcomes) == pytest.approx(profile.expected_fire_rate(), abs=0.01)


def test_classic_is_mattel_like() -> None:
    classic = PROFILES["classic"]
    assert abs(classic.expected_fire_rate() - CLASSIC_FIRE_RATE) <= 0.005
    assert (classic.longest_drought, classic.max_fires_in_row) == (4, 2)
    distribution = classic.cards_distribution()
    assert sum(p for cards, p in distribution.items() if cards <= 6) >= 0.9


def test_the_other_profiles_keep_their_promises() -> None:
    classic, gentle, brutal, extreme = (PROFILES[n] for n in ("classic", "gentle", "brutal", "extreme"))
    assert gentle.max_cards <= 3 and gentle.jackpot_probability == 0
    assert brutal.expected_fire_rate() > classic.expected_fire_rate()
    assert brutal.expected_cards_per_fire() > classic.expected_cards_per_fire()
    assert extreme.pause_probability > 0 and extreme.pause_ms[0] >= 1000
    assert extreme.jackpot_probability > 0 and extreme.jackpot_cards[0] >= 12


def test_classic_over_200000_presses_matches_its_declared_figures() -> None:
    classic = PROFILES["classic"]
    outcomes = presses(classic, "classic-200k", 200_000)
    fires = [o.cards for o in outcomes if o.fired]
    assert abs(len(fires) / len(outcomes) - CLASSIC_FIRE_RATE) <= 0.01
    observed = Counter(fires)
    expected = {cards: p * len(fires) for cards, p in classic.cards_distribution().items()}
    assert set(observed) <= set(expected)
    statistic = sum((observed[cards] - e) ** 2 / e for cards, e in expected.items())
    assert chi_square_survival(statistic, len(expected) - 1) > 0.001, statistic


@pytest.mark.parametrize(
    ("x", "dof", "p"),
    [(3.841459, 1, 0.05), (29.588298, 10, 0.001), (0.5, 3, 0.918891), (31.264134, 11, 0.001), (0.0, 4, 1.0)],
)
def test_chi_square_survival_matches_published_tables(x: float, dof: int, p: float) -> None:
    assert chi_square_survival(x, dof) == pytest.approx(p, abs=1e-6)


# --- the published Mattel pattern ---------------------------------------------------------------------------------


def fired_presses(outcomes: list[Outcome]) -> list[int]:
    return [o.press for o in outcomes if o.fired]


@PROPERTY_SETTINGS
@given(
    profile=any_profile,
    seed=seeds,
    steps=st.lists(st.sampled_from(["draw", "peek", "restart"]), max_size=120),
)
def test_looking_ahead_changes_no_outcome(profile: Profile, seed: int | str, steps: list[str]) -> None:
    """A board armed in advance is told the next press's outcome: looking it up, any number of times, before or
    after a restart, leaves every press to come exactly as it is without looking (so the record replays)."""
    looked, plain = Schedule(profile, seed), Schedule(profile, seed)
    for step in steps:
        if step == "restart":
            looked.restart()
            plain.restart()
        elif step == "peek":
            before = (looked.presses, looked.misses_in_row, looked.fires_in_row, looked.tension)
            ahead = looked.peek()
            assert (looked.presses, looked.misses_in_row, looked.fires_in_row, looked.tension) == before
            assert ahead == looked.peek()
        else:
            assert looked.next_outcome() == plain.next_outcome()
    assert [looked.next_outcome() for _ in range(50)] == [plain.next_outcome() for _ in range(50)]


def test_the_outcome_looked_ahead_is_the_next_press_s() -> None:
    schedule = Schedule(PROFILES["classic"], 7)
    for _ in range(30):
        ahead = schedule.peek()
        assert schedule.next_outcome() == ahead
    assert [o.press for o in [schedule.peek(), schedule.next_outcome()]] == [31, 31]


def test_pattern_fires_on_the_published_presses_and_cycles() -> None:
    outcomes = presses(PROFILES["pattern"], 7, 3 * 96)
    expected = [n + cycle * 96 for cycle in range(3) for n in MATTEL_PATTERN]
    assert fired_presses(outcomes) == expected
    assert MATTEL_PATTERN[:5] == (2, 6, 9, 13, 17) and MATTEL_PATTERN[-1] == 96 and len(MATTEL_PATTERN) == 34


def test_pattern_restarts_at_its_first_press_when_the_lid_opens() -> None:
    schedule = Schedule(PROFILES["pattern"], 7)
    for _ in range(11):  # presses 9 fired, 10 and 11 missed
        schedule.next_outcome()
    schedule.restart()
    assert (schedule.presses, schedule.misses_in_row, schedule.fires_in_row, schedule.tension) == (11, 0, 0, 0.0)
    after = [schedule.next_outcome() for _ in range(96)]
    assert [o.press for o in after] == list(range(12, 108))
    assert [o.press - 11 for o in after if o.fired] == list(MATTEL_PATTERN)


@PROPERTY_SETTINGS
@given(
    profile=st.one_of(st.just(PROFILES["pattern"]), pattern_profiles()),
    restarts=st.lists(st.integers(0, 150), max_size=5),
)
def test_after_any_restart_a_pattern_plays_like_a_fresh_one(profile: Profile, restarts: list[int]) -> None:
    schedule, fresh = Schedule(profile, 1), Schedule(profile, 1)
    for n in range(160):
        if n in restarts:
            schedule.restart()
            fresh = Schedule(profile, 1)
        outcome, expected = schedule.next_outcome(), fresh.next_outcome()
        assert (outcome.fired, outcome.tension) == (expected.fired, expected.tension)
        assert (schedule.misses_in_row, schedule.fires_in_row) == (fresh.misses_in_row, fresh.fires_in_row)


def test_restart_changes_nothing_for_a_hazard_profile() -> None:
    schedule = Schedule(PROFILES["classic"], 7)
    outcomes = []
    for n in range(200):
        if n % 7 == 0:
            schedule.restart()
        outcomes.append(schedule.next_outcome())
    assert outcomes == presses(PROFILES["classic"], 7, 200)


# --- custom profiles ----------------------------------------------------------------------------------------------

VALID = {"hazard": [0.3, 0.5, 1.0], "max_fires_in_row": 2, "card_weights": [1, 2, 1]}


def test_a_minimal_custom_profile_takes_the_defaults() -> None:
    profile = profile_from_mapping("custom", VALID)
    assert profile.hazard == (0.3, 0.5, 1.0) and profile.card_weights == (1, 2, 1)
    assert (profile.jackpot_probability, profile.pause_probability, profile.pattern) == (0.0, 0.0, ())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hazard": [0.3, 0.5]}, "hazard = [0.3, 0.5] is not accepted: the last value must be 1"),
        ({"hazard": [0.5, 0.3, 1.0]}, "hazard = [0.5, 0.3, 1.0] is not accepted: value 1 falls below"),
        ({"hazard": [1.0]}, "hazard = [1.0] is not accepted"),
        ({"hazard": [-0.1, 1.0]}, "hazard = [-0.1, 1.0] is not accepted: value 0 is not a probability"),
        ({"hazard": [float("nan"), 1.0]}, "hazard = [nan, 1.0] is not accepted"),
        ({"hazard": "0.3, 1"}, "hazard = '0.3, 1' is not accepted: not a list"),
        ({"hazard": [0.5] * 50 + [1.0]}, "hazard = [0.5, 0.5,"),
        ({"max_fires_in_row": 0}, "max_fires_in_row = 0 is not accepted: out of range; expected a whole number"),
        ({"max_fires_in_row": 2.5}, "max_fires_in_row = 2.5 is not accepted: not a whole number"),
        ({"max_fires_in_row": True}, "max_fires_in_row = True is not accepted"),
        ({"card_weights": [0, 0]}, "card_weights = [0, 0] is not accepted: all weights are zero"),
        ({"card_weights": [1, -1]}, "card_weights = [1, -1] is not accepted: a weight is negative"),
        ({"card_weights": []}, "card_weights = [] is not accepted"),
        ({"card_weights": [1, float("inf")]}, "card_weights = [1, inf] is not accepted"),
        ({"card_weights": [1e308, 1e308]}, "the weights add up to more than a float can hold"),
        ({"jackpot_probability": 1.5}, "jackpot_probability = 1.5 is not accepted: not a probability"),
        ({"jackpot_probability": "rare"}, "jackpot_probability = 'rare' is not accepted"),
        ({"jackpot_cards": [15, 12]}, "jackpot_cards = [15, 12] is not accepted: out of order"),
        ({"jackpot_cards": [12]}, "jackpot_cards = [12] is not accepted"),
        ({"jackpot_cards": [0, 12]}, "jackpot_cards = [0, 12] is not accepted"),
        ({"pause_probability": -0.5}, "pause_probability = -0.5 is not accepted"),
        ({"pause_ms": [500, 60_000]}, "pause_ms = [500, 60000] is not accepted: out of order or out of range"),
        ({"pattern": [2, 4, 1.0]}, "pattern = [2, 4, 1.0] is not accepted: a profile has either a hazard or"),
        ({"turbo": True}, "turbo = True is not accepted: unknown parameter; expected one of hazard,"),
        ({"name": "x"}, "name = 'x' is not accepted: unknown parameter"),
    ],
)
def test_bad_custom_profiles_are_refused_naming_the_parameter(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError) as raised:
        profile_from_mapping("custom", {**VALID, **change})
    assert message in str(raised.value)
    assert "expected" in str(raised.value)


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"pattern": [2, 3, 4], "max_fires_in_row": 2, "card_weights": [1]}, "it fires 3 presses in a row"),
        ({"pattern": [1, 3, 4], "max_fires_in_row": 2, "card_weights": [1]}, "it fires 3 presses in a row"),
        ({"pattern": [1, 2], "max_fires_in_row": 2, "card_weights": [1]}, "every press fires"),
        ({"pattern": [3, 2], "max_fires_in_row": 2, "card_weights": [1]}, "press numbers must rise"),
        ({"pattern": [0, 2], "max_fires_in_row": 2, "card_weights": [1]}, "a press number out of range"),
        ({"pattern": [2, 1001], "max_fires_in_row": 2, "card_weights": [1]}, "a press number out of range"),
    ],
)
def test_bad_patterns_are_refused(mapping: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError, match=r"^pattern = ") as raised:
        profile_from_mapping("custom", mapping)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"hazard": [1.0, 1.0], "card_weights": [1]}, "max_fires_in_row is missing"),
        ({"max_fires_in_row": 1, "card_weights": [1]}, "hazard is missing"),
        ({"hazard": [1.0, 1.0], "max_fires_in_row": 1}, "card_weights is missing"),
    ],
)
def test_missing_parameters_are_named(mapping: dict[str, Any], message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        profile_from_mapping("custom", mapping)


def test_a_profile_needs_a_table_and_a_name() -> None:
    with pytest.raises(ProfileError, match="expected a table of parameters"):
        profile_from_mapping("custom", [1, 2])  # type: ignore[arg-type]
    with pytest.raises(ProfileError, match=r"^name = '' is not accepted"):
        profile_from_mapping("", VALID)


def test_a_profile_built_directly_is_validated_too() -> None:
    with pytest.raises(ProfileError, match=r"^hazard = "):
        Profile(name="x", hazard=(0.5, 0.9), max_fires_in_row=1, card_weights=(1.0,))


def test_zero_weights_are_never_drawn() -> None:
    profile = profile_from_mapping("custom", {**VALID, "card_weights": [0, 1, 0, 0, 1, 0]})
    assert {o.cards for o in presses(profile, 3, 3000) if o.fired} == {2, 5}
    assert (profile.min_cards, profile.max_cards) == (2, 5)
