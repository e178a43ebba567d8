"""The host as an attacker (issue #50): it runs the daemon, so it holds the seed, and it holds one phone. While
commitments are open it sees the other phones' commitments only; their bytes come after commitments close. It
tries 10^6 values for its own contribution and keeps those whose outcomes it predicts suit it. What it then gets,
once the others reveal, must be chance: a chi-square test on the fire counts. The same test run on the key as it
was before commit-then-reveal (the host adding the last contribution after seeing everyone else's) must catch it."""

from __future__ import annotations

import hashlib
import hmac
import math
import random
from collections.abc import Callable, Sequence

import pytest

from launcher.fairplay.fairness import replay_presses, shuffle_key
from launcher.fairplay.schedule import CLASSIC, Outcome, Profile, Schedule
from launcher.fairplay.sealing import KEY_LABEL5, Contribution, commitment_of, profile_text, seal, sealed_key

TRIES = 1_000_000
PRESSES = 8  # the fire counts compared: fires in a shuffle's first 8 presses
SAMPLE = 4000  # of the attacker's kept values, replayed in full
# u_0 < 0.25 (classic's first hazard, no pause): the top 53 bits of the first word below 2^51, the word below 2^62.
FIRST_FIRES_BELOW = 1 << 62


def framed(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(4, "big") + data


def token(draw: random.Random) -> str:
    """A phone's or the host's 16 random bytes, from a seeded draw: a chi-square test at 1 % that drew anew each run
    would fail one run in a hundred by chance alone; seeded, each test judges the same fair sample every time (the
    keys are HMACs of these, so where the draws come from does not bend what is tested)."""
    return draw.randbytes(16).hex()


def first_press_fires(key: bytes) -> bool:
    """Classic's first press fires (docs/FAIRNESS.md, steps 2 and 3), from the first draw alone."""
    block = hmac.digest(key, (0).to_bytes(8, "big"), "sha256")
    return int.from_bytes(block[:8], "big") < FIRST_FIRES_BELOW


def fire_count_chances(profile: Profile, presses: int) -> list[float]:
    """The chance of each number of fires in the first `presses` presses, from the profile's hazard alone (a
    Markov chain over the misses and fires in a row), written from the docs, not from the schedule's code."""
    states = {(0, 0, 0): 1.0}  # (misses in a row, fires in a row, fires so far) -> chance
    for _ in range(presses):
        after: dict[tuple[int, int, int], float] = {}
        for (misses, fires, total), chance in states.items():
            fire = profile.hazard[misses] if fires < profile.max_fires_in_row else 0.0
            for key, p in (((0, fires + 1, total + 1), fire), ((misses + 1, 0, total), 1 - fire)):
                if p > 0:
                    after[key] = after.get(key, 0.0) + chance * p
        states = after
    chances = [0.0] * (presses + 1)
    for (_, _, total), chance in states.items():
        chances[total] += chance
    return chances


def chi_square_p(observed: Sequence[int], chances: Sequence[float]) -> float:
    """The p-value of Pearson's chi-square test, cells under 5 expected merged into their neighbour."""
    n = sum(observed)
    cells: list[tuple[float, float]] = []
    for seen, chance in zip(observed, chances, strict=True):
        if cells and cells[-1][1] < 5:
            cells[-1] = (cells[-1][0] + seen, cells[-1][1] + n * chance)
        else:
            cells.append((float(seen), n * chance))
    if len(cells) > 1 and cells[-1][1] < 5:
        last = cells.pop()
        cells[-1] = (cells[-1][0] + last[0], cells[-1][1] + last[1])
    statistic = sum((seen - expected) ** 2 / expected for seen, expected in cells)
    return chi_square_survival(statistic, len(cells) - 1)


def chi_square_survival(x: float, dof: int) -> float:
    """P(X >= x) for chi-square with `dof` degrees of freedom: the regularized upper incomplete gamma Q(dof/2, x/2),
    by its series (x small) or continued fraction (Numerical Recipes 6.2)."""
    a, z = dof / 2, x / 2
    if z <= 0:
        return 1.0
    front = math.exp(-z + a * math.log(z) - math.lgamma(a))
    if z < a + 1:
        term = total = 1 / a
        n = a
        while term > total * 1e-15:
            n += 1
            term *= z / n
            total += term
        return 1 - front * total
    b, c, d = z + 1 - a, 1e300, 1 / (z + 1 - a)
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = 1 / (an * d + b)
        c = b + an / c
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return front * h


def fires(outcomes: list[Outcome]) -> int:
    return sum(o.cards > 0 for o in outcomes)


def test_the_chi_square_helper_knows_its_tables() -> None:
    assert abs(chi_square_survival(3.841, 1) - 0.05) < 1e-3
    assert abs(chi_square_survival(6.635, 1) - 0.01) < 1e-3
    assert abs(chi_square_survival(15.507, 8) - 0.05) < 1e-3
    assert abs(sum(fire_count_chances(CLASSIC, PRESSES)) - 1) < 1e-12


class Table:
    """One shuffle: the host's seed and profile sealed, two honest phones committed, the host's phone last."""

    def __init__(self, draw: random.Random) -> None:
        self.seed = token(draw)
        self.sealed = seal(self.seed, profile_text(CLASSIC))
        self.honest = [token(draw) for _ in range(2)]
        self.commitments = [commitment_of(value) for value in self.honest]

    def key(self, mine: str, *, revealed: bool = True) -> bytes:
        """The key once the honest phones revealed; the host's value revealed or withheld."""
        contributions = [Contribution(c, v) for c, v in zip(self.commitments, self.honest, strict=True)]
        contributions.append(Contribution(commitment_of(mine), mine if revealed else None))
        return sealed_key(self.sealed, self.seed, contributions)

    def predictor(self) -> Callable[[str], bytes]:
        """The best key the host can compute while committing: the honest commitments known, their bytes not.
        (It counts the honest phones as withheld; any guess of their bytes is as good and as useless.)"""
        head = KEY_LABEL5 + b"\0" + framed(self.sealed) + framed(self.seed) + (3).to_bytes(4, "big")
        head += b"".join(framed(c) + framed("") for c in self.commitments)
        return lambda mine: hashlib.sha256(head + framed(commitment_of(mine)) + framed(mine)).digest()


def grind(predict: Callable[[str], bytes]) -> list[str]:
    """The host's 10^6 tries: every value whose predicted first press fires is kept."""
    kept = []
    for i in range(TRIES):
        mine = f"{i:032x}"
        if first_press_fires(predict(mine)):
            kept.append(mine)
    return kept


@pytest.mark.slow
def test_a_host_trying_a_million_contributions_gets_chance() -> None:
    table = Table(random.Random(1))
    kept = grind(table.predictor())
    # The grind did what it could: about a quarter of a million values predicted to fire at once.
    assert abs(len(kept) / TRIES - 0.25) < 0.005
    # What those values give once the honest phones revealed: the first press fires as often as for anyone.
    fired = sum(first_press_fires(table.key(mine)) for mine in kept)
    assert chi_square_p([len(kept) - fired, fired], [0.75, 0.25]) > 0.01
    # And the fire counts of the first 8 presses, replayed in full, are those of the profile's chance.
    counts = [0] * (PRESSES + 1)
    for mine in kept[:SAMPLE]:
        counts[fires(replay_presses(Schedule(CLASSIC, table.key(mine)), PRESSES))] += 1
    assert chi_square_p(counts, fire_count_chances(CLASSIC, PRESSES)) > 0.01


def test_the_same_attack_on_the_old_key_is_caught() -> None:
    """Before commit-then-reveal the host added the last contribution after seeing everyone else's, so it could
    compute the very key: the test above must fail on that design, or it proves nothing."""
    draw = random.Random(2)
    seed, honest = token(draw), [token(draw) for _ in range(2)]
    kept = [f"{i:032x}" for i in range(TRIES // 20) if first_press_fires(shuffle_key(seed, [*honest, f"{i:032x}"]))]
    counts = [0] * (PRESSES + 1)
    for mine in kept[:SAMPLE]:
        counts[fires(replay_presses(Schedule(CLASSIC, shuffle_key(seed, [*honest, mine])), PRESSES))] += 1
    assert chi_square_p(counts, fire_count_chances(CLASSIC, PRESSES)) < 1e-6


def test_withholding_is_at_most_a_choice_of_two() -> None:
    """After the reveals the host knows both keys its phone can leave: revealed or withheld. That is the choice
    docs/FAIRNESS.md states: the better of two chance outcomes, no more. Over many shuffles its first press fires
    as often as the better of two independent tries, 1 - 0.75^2, and never as often as it would like."""
    shuffles = 20_000
    won = 0
    draw = random.Random(3)
    for _ in range(shuffles):
        table = Table(draw)
        mine = token(draw)
        won += first_press_fires(table.key(mine)) or first_press_fires(table.key(mine, revealed=False))
    best_of_two = 1 - 0.75**2
    assert chi_square_p([shuffles - won, won], [1 - best_of_two, best_of_two]) > 0.01


def test_a_mismatched_reveal_cannot_enter_the_key() -> None:
    draw = random.Random(4)
    table = Table(draw)
    mine, other = token(draw), token(draw)
    contributions = [Contribution(commitment_of(mine), other)]
    with pytest.raises(ValueError, match="does not match its commitment"):
        sealed_key(table.sealed, table.seed, contributions)
