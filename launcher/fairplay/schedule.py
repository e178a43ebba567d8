"""The randomised firing schedule: which press fires, and how many cards.

Pure: no I/O, no clock. An outcome is a deterministic function of the key and the presses so far (and, for a
pattern profile, the restarts), so a shuffle can be replayed and checked. The controller only calls
`Schedule.next_outcome()` and, when the lid opens, `Schedule.restart()`.

Every random value is a draw of `draw_stream(key)`: an HMAC-SHA256 counter stream that a page can compute as well
(docs/FAIRNESS.md defines it to the bit; a shuffle's key comes from its seed and the phones' contributions,
launcher/fairplay/fairness.py). The draws of one press, in order (docs/FAIRNESS.md repeats this for independent
verifiers):

1. if the profile pauses (pause_probability > 0): one draw; below pause_probability, one more for the duration;
2. one draw, a fire if below the threshold: hazard[misses_in_row] for a hazard profile, or 0 once fires_in_row has
   reached max_fires_in_row; for a pattern profile 1 on a listed press of the cycle, otherwise 0;
3. on a fire: if the profile has a jackpot, one draw, a jackpot if below jackpot_probability; then one draw for
   the number of cards (uniform over jackpot_cards for a jackpot, otherwise by card_weights).
"""

from __future__ import annotations

import hmac
import math
import struct
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from itertools import accumulate, chain, count, pairwise
from typing import Any, TypeGuard

from launcher.errors import LauncherError

MAX_DROUGHT = 49  # longest hazard: a longer wait is no longer suspense
MAX_FIRES_IN_ROW = 20
MAX_CARDS = 30  # one fire never shoots more; the hopper holds about 112
MAX_PAUSE_MS = 10_000
MAX_PATTERN_PRESS = 1000


class ProfileError(LauncherError, ValueError):
    """A profile parameter is not accepted; the message names it, its value and what is accepted."""


@dataclass(slots=True)
class Outcome:
    """What one press does. Read-only by convention: not frozen, because a frozen dataclass takes several times
    longer to build and `next_outcome` is on the hot path (see benchmarks/bench_schedule.py)."""

    press: int  # 1-based press number since the schedule started
    cards: int  # 0 = a miss
    tension: float  # 0..1, how close the next fire feels; drives the cues
    jackpot: bool = False
    pause_ms: int = 0  # suspense pause before the motor starts

    @property
    def fired(self) -> bool:
        return self.cards > 0


@dataclass(frozen=True, slots=True)
class Profile:
    """A firing profile, validated on construction (ProfileError).

    Either a hazard or a fixed pattern decides which presses fire:
    `hazard[k]` is the fire probability after k misses in a row; it never falls, and its last value is 1, so a
    fire is certain after `len(hazard) - 1` misses. `pattern` lists the presses that fire in each cycle of
    `pattern[-1]` presses. `card_weights[i]` is the weight of firing i + 1 cards; a fire is instead a jackpot,
    uniform over `jackpot_cards` (lowest, highest), with `jackpot_probability`. Each press first pauses, with
    `pause_probability`, for a time uniform over `pause_ms` (shortest, longest), so a pause says nothing about
    the outcome.
    """

    name: str
    hazard: tuple[float, ...]
    max_fires_in_row: int
    card_weights: tuple[float, ...]
    jackpot_probability: float = 0.0
    jackpot_cards: tuple[int, int] = (12, 15)
    pause_probability: float = 0.0
    pause_ms: tuple[int, int] = (0, 0)
    pattern: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        _check_name(self.name)
        _check_firing(self.hazard, self.pattern)
        _check_whole("max_fires_in_row", self.max_fires_in_row, 1, MAX_FIRES_IN_ROW)
        if self.pattern:
            _check_pattern_runs(self.pattern, self.max_fires_in_row)
        _check_weights(self.card_weights)
        _check_probability("jackpot_probability", self.jackpot_probability)
        _check_range("jackpot_cards", self.jackpot_cards, 1, MAX_CARDS, "cards")
        _check_probability("pause_probability", self.pause_probability)
        _check_range("pause_ms", self.pause_ms, 0, MAX_PAUSE_MS, "milliseconds")

    @property
    def longest_drought(self) -> int:
        """Most misses in a row; the press after them fires for certain (between restarts)."""
        if self.pattern:
            return max(_pattern_gaps(self.pattern))
        return len(self.hazard) - 1

    @property
    def min_cards(self) -> int:
        lowest = next(i for i, w in enumerate(self.card_weights) if w > 0) + 1
        return min(lowest, self.jackpot_cards[0]) if self.jackpot_probability > 0 else lowest

    @property
    def max_cards(self) -> int:
        highest = _last_positive(self.card_weights) + 1
        return max(highest, self.jackpot_cards[1]) if self.jackpot_probability > 0 else highest

    def expected_fire_rate(self) -> float:
        """The exact long-run share of presses that fire (no restarts)."""
        if self.pattern:
            return len(self.pattern) / self.pattern[-1]
        # Renewal argument: a cycle is a run of fires (each further fire has hazard[0], up to the cap), then the
        # misses until the next fire; k misses end with probability hazard[k] * P(reaching k misses).
        fires = sum(self.hazard[0] ** j for j in range(self.max_fires_in_row))
        misses, reach = 0.0, 1.0
        for k in range(1, len(self.hazard)):
            misses += k * reach * self.hazard[k]
            reach *= 1.0 - self.hazard[k]
        return fires / (fires + misses)

    def cards_distribution(self) -> dict[int, float]:
        """Probability of each number of cards in one fire, jackpots included."""
        total = sum(self.card_weights)
        plain = 1.0 - self.jackpot_probability
        chances = {i + 1: plain * w / total for i, w in enumerate(self.card_weights) if w > 0}
        if self.jackpot_probability > 0:
            low, high = self.jackpot_cards
            for cards in range(low, high + 1):
                chances[cards] = chances.get(cards, 0.0) + self.jackpot_probability / (high - low + 1)
        return dict(sorted(chances.items()))

    def expected_cards_per_fire(self) -> float:
        return sum(cards * p for cards, p in self.cards_distribution().items())


# --- validation: every message is "<param> = <value> is not accepted: <why>; expected <what>" -------------------

_ACCEPTED = {
    "name": "a name of 1 to 40 characters",
    "hazard": f"a list of 2 to {MAX_DROUGHT + 1} fire probabilities from 0 to 1 that never falls and ends with 1",
    "pattern": f"a list of rising press numbers from 1 to {MAX_PATTERN_PRESS}, the last one ending the cycle",
    "max_fires_in_row": f"a whole number from 1 to {MAX_FIRES_IN_ROW}",
    "card_weights": f"a list of 1 to {MAX_CARDS} non-negative weights, not all zero (the first is for 1 card)",
    "jackpot_probability": "a number from 0 to 1",
    "jackpot_cards": f"[lowest, highest] cards with 1 <= lowest <= highest <= {MAX_CARDS}",
    "pause_probability": "a number from 0 to 1",
    "pause_ms": f"[shortest, longest] milliseconds with 0 <= shortest <= longest <= {MAX_PAUSE_MS}",
}


def _refuse(param: str, value: object, why: str) -> ProfileError:
    shown = list(value) if isinstance(value, tuple) else value
    return ProfileError(f"{param} = {shown!r} is not accepted: {why}; expected {_ACCEPTED[param]}")


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not 1 <= len(name) <= 40:
        raise _refuse("name", name, "not a name of the right length")


def _check_probability(param: str, value: object) -> None:
    if not _is_number(value) or not 0 <= value <= 1:
        raise _refuse(param, value, "not a probability")


def _check_whole(param: str, value: object, low: int, high: int) -> None:
    if not _is_whole(value) or not low <= value <= high:
        raise _refuse(param, value, "out of range" if _is_whole(value) else "not a whole number")


def _check_range(param: str, value: object, low: int, high: int, unit: str) -> None:
    if not isinstance(value, tuple) or len(value) != 2 or not all(_is_whole(v) for v in value):
        raise _refuse(param, value, f"not two whole numbers of {unit}")
    if not low <= value[0] <= value[1] <= high:
        raise _refuse(param, value, "out of order or out of range")


def _check_firing(hazard: object, pattern: object) -> None:
    if not isinstance(pattern, tuple):
        raise _refuse("pattern", pattern, "not a list")
    if pattern and hazard:
        raise _refuse("pattern", pattern, "a profile has either a hazard or a pattern, not both")
    if pattern:
        _check_pattern(pattern)
    else:
        _check_hazard(hazard)


def _check_hazard(hazard: object) -> None:
    if not isinstance(hazard, tuple):
        raise _refuse("hazard", hazard, "not a list")
    if not 2 <= len(hazard) <= MAX_DROUGHT + 1:
        raise _refuse("hazard", hazard, f"it has {len(hazard)} value(s) (or give a pattern instead)")
    for k, p in enumerate(hazard):
        if not _is_number(p) or not 0 <= p <= 1:
            raise _refuse("hazard", hazard, f"value {k} is not a probability")
        if k and p < hazard[k - 1]:
            raise _refuse("hazard", hazard, f"value {k} falls below the one before")
    if hazard[-1] != 1:
        raise _refuse("hazard", hazard, "the last value must be 1 so that a fire is certain after the drought")


def _check_pattern(pattern: tuple[Any, ...]) -> None:
    if not all(_is_whole(n) for n in pattern):
        raise _refuse("pattern", pattern, "not all whole numbers")
    if pattern[0] < 1 or pattern[-1] > MAX_PATTERN_PRESS:
        raise _refuse("pattern", pattern, "a press number out of range")
    if any(b <= a for a, b in pairwise(pattern)):
        raise _refuse("pattern", pattern, "press numbers must rise")


def _check_pattern_runs(pattern: tuple[int, ...], cap: int) -> None:
    if len(pattern) == pattern[-1]:
        raise _refuse("pattern", pattern, "every press fires; a cycle needs at least one miss")
    longest = max(_pattern_runs(pattern))
    if longest > cap:
        raise _refuse("pattern", pattern, f"it fires {longest} presses in a row but max_fires_in_row is {cap}")


def _check_weights(weights: object) -> None:
    if not isinstance(weights, tuple) or not 1 <= len(weights) <= MAX_CARDS:
        raise _refuse("card_weights", weights, "not a list of the right length")
    if not all(_is_number(w) and w >= 0 for w in weights):
        raise _refuse("card_weights", weights, "a weight is negative or not a number")
    if not any(w > 0 for w in weights):
        raise _refuse("card_weights", weights, "all weights are zero")
    if not math.isfinite(sum(weights)):  # each finite, and yet their total overflows: no chance is defined
        raise _refuse("card_weights", weights, "the weights add up to more than a float can hold")


def _pattern_gaps(pattern: tuple[int, ...]) -> list[int]:
    """Misses before each fire of a cycle; the first gap also closes the previous cycle (it ends on a fire)."""
    return [b - a - 1 for a, b in pairwise((0, *pattern))]


def _pattern_runs(pattern: tuple[int, ...]) -> list[int]:
    """Lengths of the runs of consecutive fires, joining the run that ends a cycle to one that starts the next."""
    runs = [1]
    for gap in _pattern_gaps(pattern)[1:]:
        runs.append(runs.pop() + 1 if gap == 0 else 1)
    if pattern[0] == 1 and len(runs) > 1:
        runs[0] += runs.pop()
    return runs


def _last_positive(weights: tuple[float, ...]) -> int:
    return max(i for i, w in enumerate(weights) if w > 0)


# --- building profiles from config and API mappings ---------------------------------------------------------------

PARAMETERS = tuple(f.name for f in fields(Profile) if f.name != "name")
_REQUIRED = ("max_fires_in_row", "card_weights")
_LISTS = ("hazard", "pattern", "card_weights", "jackpot_cards", "pause_ms")


def profile_from_mapping(name: str, mapping: Mapping[str, Any]) -> Profile:
    """Build a validated profile from config or API values (JSON or TOML types: lists for the sequences).

    Unknown parameters are refused; missing optional ones take the Profile defaults (no jackpot, no pause).
    """
    if not isinstance(mapping, Mapping):
        raise ProfileError(f"profile {name!r}: {mapping!r} is not accepted: expected a table of parameters")
    for key in mapping:
        if key not in PARAMETERS:
            raise ProfileError(
                f"{key} = {mapping[key]!r} is not accepted: unknown parameter; expected one of " + ", ".join(PARAMETERS)
            )
    for key in _REQUIRED:
        if key not in mapping:
            raise ProfileError(f"{key} is missing: expected {_ACCEPTED[key]}")
    if "hazard" not in mapping and "pattern" not in mapping:
        raise ProfileError(f"hazard is missing: expected {_ACCEPTED['hazard']} (or a pattern)")
    values: dict[str, Any] = {
        key: tuple(v) if key in _LISTS and isinstance(v, list | tuple) else v for key, v in mapping.items()
    }
    return Profile(name=name, **{"hazard": (), **values})


def profile_to_mapping(profile: Profile) -> dict[str, Any]:
    """The profile's parameters as JSON types; `profile_from_mapping(profile.name, ...)` rebuilds the profile."""
    params = {key: getattr(profile, key) for key in PARAMETERS}
    return {key: list(v) if isinstance(v, tuple) else v for key, v in params.items()}


def custom_profile(base: Profile, changes: object, where: str) -> Profile:
    """The custom profile: `changes` over the parameters of `base`, so that a config file or a phone gives only
    those it changes. A refusal names the parameter as `<where>.<param>`, or `where` when `changes` is no mapping."""
    if not isinstance(changes, Mapping):
        raise ProfileError(f"{where} must map profile parameters to values, not {changes!r:.60}")
    try:
        return profile_from_mapping("custom", {**profile_to_mapping(base), **changes})
    except ProfileError as e:
        raise ProfileError(f"{where}.{e}") from None


# --- the built-in profiles ----------------------------------------------------------------------------------------

CLASSIC_FIRE_RATE = 0.35  # declared; the classic hazard below gives 0.3492 exactly (docs/SCHEDULE.md)

# Mattel-like: about one press in three fires, never more than 4 misses in a row, never 3 fires in a row,
# mostly 1 to 6 cards, and now and then a big burst.
CLASSIC = Profile(
    name="classic",
    hazard=(0.25, 0.3, 0.38, 0.55, 1.0),
    max_fires_in_row=2,
    card_weights=(0.18, 0.22, 0.2, 0.15, 0.11, 0.08, 0.04, 0.02),
    jackpot_probability=0.005,
    jackpot_cards=(10, 12),
)

# Children: short waits, and never more than 3 cards.
GENTLE = Profile(
    name="gentle",
    hazard=(0.2, 0.3, 0.45, 1.0),
    max_fires_in_row=2,
    card_weights=(0.5, 0.35, 0.15),
)

# A crowd that wants pain: fires about one press in two, up to 3 in a row, bigger bursts and more jackpots.
BRUTAL = Profile(
    name="brutal",
    hazard=(0.4, 0.45, 0.6, 1.0),
    max_fires_in_row=3,
    card_weights=(0.04, 0.08, 0.12, 0.14, 0.14, 0.13, 0.11, 0.09, 0.08, 0.07),
    jackpot_probability=0.02,
    jackpot_cards=(12, 16),
)

# A published claim about the original launcher: it fires on these presses of a 96-press cycle (docs/SCHEDULE.md).
MATTEL_PATTERN = (2, 6, 9, 13, 17, 21, 24, 26, 27, 29, 32, 36, 37, 41, 44, 47, 48, 51, 54, 57, 58, 62, 66, 69,
                  72, 73, 77, 81, 84, 85, 88, 92, 93, 96)  # fmt: skip
PATTERN = Profile(
    name="pattern",
    hazard=(),
    max_fires_in_row=2,
    card_weights=CLASSIC.card_weights,
    pattern=MATTEL_PATTERN,
)

# Long droughts, long suspense pauses on a quarter of the presses, and a rare jackpot of 12 or more cards.
EXTREME = Profile(
    name="extreme",
    hazard=(0.15, 0.2, 0.25, 0.32, 0.42, 0.6, 1.0),
    max_fires_in_row=2,
    card_weights=(0.16, 0.2, 0.2, 0.16, 0.12, 0.08, 0.05, 0.03),
    jackpot_probability=0.03,
    jackpot_cards=(12, 20),
    pause_probability=0.25,
    pause_ms=(1500, 5000),
)

# The starting point for `custom`; the config and the admin page replace it through `profile_from_mapping`.
CUSTOM = profile_from_mapping("custom", profile_to_mapping(CLASSIC))

PROFILES: dict[str, Profile] = {p.name: p for p in (CLASSIC, GENTLE, BRUTAL, PATTERN, EXTREME, CUSTOM)}


# --- the draw stream ----------------------------------------------------------------------------------------------

DRAWS_PER_BLOCK = 4  # one HMAC-SHA256 output (32 bytes) gives four 64-bit words, each a draw
_BATCH_BLOCKS = 16  # blocks computed at a time: fewer Python calls per draw, the same values
_UNIT = 2.0**-53


def key_of(seed: int | bytes | str) -> bytes:
    """The HMAC key of a seed: bytes as they are (a shuffle's 32-byte key); text, or a number written as decimal
    text (simulations, tests), as its UTF-8 bytes."""
    return seed if isinstance(seed, bytes) else str(seed).encode("utf-8")


def block(key: bytes, index: int) -> bytes:
    """Block `index` of the stream: HMAC-SHA256(key, index as 8 bytes big-endian). For tests and verifiers: the
    schedule computes the same blocks in batches (`draw_stream`)."""
    return hmac.new(key, index.to_bytes(8, "big"), "sha256").digest()


def draw_stream(key: bytes) -> Callable[[], float]:
    """A function whose k-th call (k = 0, 1, ...) returns draw k of the stream keyed by `key`, a float in [0, 1):
    the 64-bit big-endian word k % 4 of block k // 4, shifted right by 11 bits, times 2**-53 (exact)."""
    keyed = hmac.new(key, digestmod="sha256").copy  # each block copies the keyed state rather than keying again
    words = struct.Struct(f">{DRAWS_PER_BLOCK * _BATCH_BLOCKS}Q").unpack
    counter = struct.Struct(">Q").pack

    def batch(first: int) -> list[float]:
        blocks = []
        for j in range(first, first + _BATCH_BLOCKS):
            mac = keyed()
            mac.update(counter(j))
            blocks.append(mac.digest())
        return [(w >> 11) * _UNIT for w in words(b"".join(blocks))]

    # chain's __next__ is one C call per draw; a batch is computed only when the one before is used up.
    return chain.from_iterable(map(batch, count(0, _BATCH_BLOCKS))).__next__


# --- the schedule -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Machine:
    """A profile as a state machine. In state i a press fires if its draw is below `threshold[i]`, then moves to
    `after_fire[i]` or `after_miss[i]`; `misses[i]` and `fires[i]` are the misses and fires in a row there."""

    threshold: tuple[float, ...]
    after_fire: tuple[int, ...]
    after_miss: tuple[int, ...]
    misses: tuple[int, ...]
    fires: tuple[int, ...]
    tension: tuple[float, ...]  # misses / longest drought


@lru_cache(maxsize=64)
def _machine(profile: Profile) -> _Machine:
    """State 0 is the start (and where a pattern restarts)."""
    return _pattern_machine(profile) if profile.pattern else _hazard_machine(profile)


def _hazard_machine(p: Profile) -> _Machine:
    cap, drought = p.max_fires_in_row, p.longest_drought
    # A state is (misses, fires) in a row: (0, 0) at the start, then (0, 1..cap) or (1..drought, 0).
    states = [(0, f) for f in range(cap + 1)] + [(m, 0) for m in range(1, drought + 1)]
    index = {state: i for i, state in enumerate(states)}
    return _Machine(
        threshold=tuple(p.hazard[m] if f < cap else 0.0 for m, f in states),  # at the cap: a miss, still drawn
        after_fire=tuple(index[0, min(f + 1, cap)] for m, f in states),
        after_miss=tuple(index[min(m + 1, drought), 0] for m, f in states),  # the drought's end always fires
        misses=tuple(m for m, _ in states),
        fires=tuple(f for _, f in states),
        tension=tuple(m / drought for m, _ in states),
    )


def _pattern_machine(p: Profile) -> _Machine:
    cycle = p.pattern[-1]
    # State k: k presses made since the start. From the second lap on the counts repeat (a cycle ends with a
    # fire and has a miss), so the end of the second lap loops back to its beginning.
    laps = 2 * cycle
    fire = [k % cycle + 1 in p.pattern for k in range(laps)]
    misses, fires = [0], [0]
    for k in range(laps - 1):
        misses.append(0 if fire[k] else misses[-1] + 1)
        fires.append(fires[-1] + 1 if fire[k] else 0)
    following = (*range(1, laps), cycle)
    return _Machine(
        threshold=tuple(1.0 if f else 0.0 for f in fire),  # drawn anyway, to keep one rule for every profile
        after_fire=following,
        after_miss=following,
        misses=tuple(misses),
        fires=tuple(fires),
        tension=tuple(m / p.longest_drought for m in misses),
    )


class Schedule:
    """Draws outcomes for one run of presses from a keyed draw stream.

    `next_outcome()` returns the next press's Outcome. It is the `__next__` of a generator that keeps its
    working values in local variables, which is much faster than a method reading attributes.

    The draws come from `draw_stream(key_of(seed))`; `draw` replaces them (records of the first format replay
    with Python's `random.Random(seed).random`, launcher/fairplay/fairness.py).
    """

    __slots__ = ("_ahead", "_machine", "_random", "_state", "_stream", "next_outcome", "presses", "profile")

    next_outcome: Callable[[], Outcome]

    def __init__(self, profile: Profile, seed: int | bytes | str, *, draw: Callable[[], float] | None = None) -> None:
        self.profile = profile
        self.presses = 0
        self._machine = _machine(profile)
        self._state = 0
        self._stream = draw if draw is not None else draw_stream(key_of(seed))
        self._random = self._stream
        self._ahead: deque[float] = deque()  # draws taken by peek(), given again before the stream's next
        self.next_outcome = self._outcomes().__next__

    def go_on_from(self, misses_in_row: int, fires_in_row: int) -> None:
        """Before the first press: go on from the run of misses or fires an earlier shuffle of this profile ended
        with, so that the profile's promises (the longest drought, the most fires in a row) hold across the two.
        A pattern starts over instead, as at a lid opening. ValueError for a run the profile cannot have."""
        if self.presses:
            raise RuntimeError("a schedule goes on from a run only before its first press")
        if self.profile.pattern:
            if misses_in_row or fires_in_row:
                raise ValueError(f"profile {self.profile.name!r} is a pattern: it starts over, from no run")
            return
        cap, drought = self.profile.max_fires_in_row, self.profile.longest_drought
        if (misses_in_row and fires_in_row) or not (0 <= misses_in_row <= drought and 0 <= fires_in_row <= cap):
            raise ValueError(
                f"a run of {misses_in_row} misses and {fires_in_row} fires is not one of profile "
                f"{self.profile.name!r} (at most {drought} misses or {cap} fires in a row, not both)"
            )
        self._state = cap + misses_in_row if misses_in_row else fires_in_row  # the states' order: _hazard_machine
        self.next_outcome = self._outcomes().__next__

    @property
    def misses_in_row(self) -> int:
        """Misses since the last fire (or a pattern's restart)."""
        return self._machine.misses[self._state]

    @property
    def fires_in_row(self) -> int:
        return self._machine.fires[self._state]

    @property
    def tension(self) -> float:
        """0 right after a fire, 1 when the next press must fire."""
        return self._machine.tension[self._state]

    def peek(self) -> Outcome:
        """The next press's outcome, not drawn: `next_outcome()` returns an equal one, and whatever happens first
        (a restart, another peek) every outcome to come is the same as without looking (the record replays)."""
        ahead, stream = self._ahead, self._stream
        used = 0

        def look() -> float:
            nonlocal used
            if used == len(ahead):
                ahead.append(stream())
            used += 1
            return ahead[used - 1]

        presses, state = self.presses, self._state
        outcome = next(self._outcomes(look))
        self.presses, self._state = presses, state  # the look-ahead's generator moved them
        self._random = self._given_again
        self.next_outcome = self._outcomes().__next__
        return outcome

    def _given_again(self) -> float:
        return self._ahead.popleft() if self._ahead else self._stream()

    def restart(self) -> None:
        """The lid opened or the power cycled: a pattern goes back to its first press. No-op for a hazard."""
        if self.profile.pattern:
            self._state = 0
            self.next_outcome = self._outcomes().__next__

    def _outcomes(self, draw: Callable[[], float] | None = None) -> Iterator[Outcome]:
        """Outcomes from the current state on, drawn as the module doc says (from `draw` if given)."""
        p = self.profile
        draw = draw or self._random
        presses, state = self.presses, self._state
        m = self._machine
        threshold, after_fire, after_miss, tension = m.threshold, m.after_fire, m.after_miss, m.tension
        cumulative_weights = tuple(accumulate(map(float, p.card_weights)))  # in double precision, as a page adds them
        total_weight = cumulative_weights[-1]
        last_card_index = _last_positive(p.card_weights)  # a rounding edge must not pick a zero weight
        jackpot_probability, jackpot_low = p.jackpot_probability, p.jackpot_cards[0]
        jackpot_span = p.jackpot_cards[1] - jackpot_low + 1
        pause_probability, pause_shortest = p.pause_probability, p.pause_ms[0]
        pause_span = p.pause_ms[1] - pause_shortest + 1
        new = object.__new__
        while True:
            presses += 1
            # A bare instance with its slots filled one by one costs half as much as calling Outcome(...).
            outcome = new(Outcome)
            outcome.press = presses
            outcome.pause_ms = 0
            if pause_probability and draw() < pause_probability:
                outcome.pause_ms = pause_shortest + int(draw() * pause_span)
            if draw() < threshold[state]:
                state = after_fire[state]
                if jackpot_probability and draw() < jackpot_probability:
                    outcome.cards = jackpot_low + int(draw() * jackpot_span)
                    outcome.jackpot = True
                else:
                    outcome.cards = bisect_right(cumulative_weights, draw() * total_weight, 0, last_card_index) + 1
                    outcome.jackpot = False
            else:
                state = after_miss[state]
                outcome.cards = 0
                outcome.jackpot = False
            outcome.tension = tension[state]
            self.presses = presses
            self._state = state
            yield outcome
