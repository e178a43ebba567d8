"""`uno-launcher simulate`: what a profile does over many presses, as text, JSON or an SVG chart.

    uno-launcher simulate --profile classic --presses 200000 --seed 2024 [--json] [--svg chart.svg]

The figures in docs/SCHEDULE.md come from this command.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any

from launcher.fairplay.fairness import new_seed
from launcher.fairplay.schedule import PROFILES, Profile, Schedule


@dataclass(frozen=True)
class SimulationStats:
    profile: Profile
    presses: int
    seed: int | str
    fires: int
    cards: int  # shot in all
    jackpots: int
    pauses: int
    cards_per_fire: dict[int, int]  # number of cards -> how many fires shot that many
    misses_before_fire: dict[int, int]  # misses since the previous fire -> how many fires came after that many
    longest_drought: int  # most misses in a row
    longest_fire_streak: int  # most fires in a row

    @property
    def fire_rate(self) -> float:
        return self.fires / self.presses

    @property
    def mean_cards_per_press(self) -> float:
        return self.cards / self.presses

    @property
    def mean_cards_per_fire(self) -> float:
        return self.cards / self.fires if self.fires else 0.0


def _xml_text(text: str) -> str:
    """Text for an SVG element (the html and xml.sax modules would cost more to import than the whole command)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def run_simulation(profile: Profile, presses: int, seed: int | str) -> SimulationStats:
    """Press `presses` times (at least once) on a fresh schedule and count what happened."""
    if presses < 1:
        raise ValueError(f"presses = {presses} is not accepted: expected at least 1")
    next_outcome = Schedule(profile, seed).next_outcome
    cards_per_fire: Counter[int] = Counter()
    misses_before_fire: Counter[int] = Counter()
    cards = jackpots = pauses = misses = streak = longest_drought = longest_streak = 0
    for _ in range(presses):
        outcome = next_outcome()
        pauses += outcome.pause_ms > 0
        if outcome.cards:
            cards += outcome.cards
            jackpots += outcome.jackpot
            cards_per_fire[outcome.cards] += 1
            misses_before_fire[misses] += 1
            misses = 0
            streak += 1
            longest_streak = max(longest_streak, streak)
        else:
            misses += 1
            streak = 0
            longest_drought = max(longest_drought, misses)
    return SimulationStats(
        profile=profile,
        presses=presses,
        seed=seed,
        fires=cards_per_fire.total(),
        cards=cards,
        jackpots=jackpots,
        pauses=pauses,
        cards_per_fire=dict(sorted(cards_per_fire.items())),
        misses_before_fire=dict(sorted(misses_before_fire.items())),
        longest_drought=longest_drought,
        longest_fire_streak=longest_streak,
    )


# --- text and JSON -------------------------------------------------------------------------------------------------


def format_text(stats: SimulationStats) -> str:
    p = stats.profile
    share = stats.jackpots / stats.fires if stats.fires else 0.0
    lines = [
        f"profile {p.name}: {stats.presses:,} presses, seed {stats.seed!r}",
        f"fire rate            {stats.fire_rate:7.2%}  (exact long-run rate {p.expected_fire_rate():.2%})",
        f"mean cards per press {stats.mean_cards_per_press:7.3f}",
        f"mean cards per fire  {stats.mean_cards_per_fire:7.3f}  (exact {p.expected_cards_per_fire():.3f})",
        f"jackpots             {stats.jackpots:7,}  ({share:.2%} of fires)",
        f"suspense pauses      {stats.pauses:7,}  ({stats.pauses / stats.presses:.2%} of presses)",
        f"longest drought      {stats.longest_drought:7,}  misses (profile limit {p.longest_drought})",
        f"longest fire streak  {stats.longest_fire_streak:7,}  fires (profile cap {p.max_fires_in_row})",
        "",
        "cards per fire",
        *_histogram_lines(stats.cards_per_fire, stats.fires),
        "",
        "misses before each fire",
        *_histogram_lines(stats.misses_before_fire, stats.fires),
    ]
    return "\n".join(lines) + "\n"


def _histogram_lines(counts: dict[int, int], total: int, width: int = 40) -> list[str]:
    top = max(counts.values(), default=1)
    return [
        f"{value:5}  {count:9,}  {count / total:6.2%}  {'#' * max(1, round(width * count / top))}"
        for value, count in counts.items()
    ]


def to_json(stats: SimulationStats) -> dict[str, Any]:
    p = stats.profile
    return {
        "profile": p.name,
        "presses": stats.presses,
        "seed": stats.seed,
        "fires": stats.fires,
        "fire_rate": stats.fire_rate,
        "expected_fire_rate": p.expected_fire_rate(),
        "mean_cards_per_press": stats.mean_cards_per_press,
        "mean_cards_per_fire": stats.mean_cards_per_fire,
        "jackpots": stats.jackpots,
        "pauses": stats.pauses,
        "longest_drought": stats.longest_drought,
        "drought_limit": p.longest_drought,
        "longest_fire_streak": stats.longest_fire_streak,
        "max_fires_in_row": p.max_fires_in_row,
        # JSON object keys are strings: "3": 1200 means 1200 fires shot 3 cards.
        "cards_per_fire": {str(k): v for k, v in stats.cards_per_fire.items()},
        "misses_before_fire": {str(k): v for k, v in stats.misses_before_fire.items()},
    }


# --- SVG -----------------------------------------------------------------------------------------------------------

BAR_SLOT = 34  # px per bar: room for a "12.3" label above it
CHART_HEIGHT = 180
MARGIN = 40
FONT = 'font-family="DejaVu Sans, Arial, sans-serif"'


def render_svg(stats: SimulationStats) -> str:
    """Two bar charts side by side: cards per fire, and misses before each fire (share of fires, in %)."""
    cards = _bar_chart("Cards per fire", "cards", _complete(stats.cards_per_fire, low=1), stats.fires, "#c8102e")
    droughts = _bar_chart(
        "Misses before each fire", "misses", _complete(stats.misses_before_fire, low=0), stats.fires, "#0956bf"
    )
    width = MARGIN + cards.width + MARGIN + droughts.width + MARGIN
    height = 60 + CHART_HEIGHT + 70
    title = (
        f"{stats.profile.name}: {stats.presses:,} presses, fire rate {stats.fire_rate:.1%}, "
        f"{stats.mean_cards_per_press:.2f} cards per press"
    )
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" {FONT}>',
            f"<title>{_xml_text(title)}</title>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
            f'<text x="{MARGIN}" y="26" font-size="16" font-weight="bold" fill="#222">{_xml_text(title)}</text>',
            f'<g transform="translate({MARGIN},60)">',
            *cards.elements,
            "</g>",
            f'<g transform="translate({MARGIN + cards.width + MARGIN},60)">',
            *droughts.elements,
            "</g>",
            "</svg>",
            "",
        ]
    )


def _complete(counts: dict[int, int], low: int) -> dict[int, int]:
    """Every value from `low` to the largest seen, so that gaps show as empty slots."""
    return {value: counts.get(value, 0) for value in range(low, max(counts, default=low) + 1)}


@dataclass(frozen=True)
class _Chart:
    width: int
    elements: list[str]


def _bar_chart(title: str, axis: str, counts: dict[int, int], total: int, colour: str) -> _Chart:
    """Bars with their share (%) above and their value below; the origin is the chart's top left."""
    width = max(240, BAR_SLOT * len(counts))
    top = max(counts.values(), default=0) or 1
    base = CHART_HEIGHT
    elements = [
        f'<text x="0" y="0" font-size="14" font-weight="bold" fill="#222">{_xml_text(title)} (% of fires)</text>',
        f'<line x1="0" y1="{base}" x2="{width}" y2="{base}" stroke="#555" stroke-width="1"/>',
    ]
    for slot, (value, count) in enumerate(counts.items()):
        height = round((CHART_HEIGHT - 30) * count / top, 1)
        x = slot * BAR_SLOT
        middle = x + BAR_SLOT / 2
        elements += [
            f'<rect x="{x + 4}" y="{base - height:g}" width="{BAR_SLOT - 8}" height="{height:g}" fill="{colour}"/>',
            f'<text x="{middle:g}" y="{base - height - 4:g}" font-size="11" text-anchor="middle" fill="#222">'
            f"{100 * count / total if total else 0:.1f}</text>",
            f'<text x="{middle:g}" y="{base + 16}" font-size="12" text-anchor="middle" fill="#222">{value}</text>',
        ]
    elements.append(
        f'<text x="{width / 2:g}" y="{base + 36}" font-size="12" text-anchor="middle" fill="#444">{axis}</text>'
    )
    return _Chart(width, elements)


# --- the command line ----------------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    """Simulate, print, and write the chart; 1 when the chart cannot be written."""
    stats = run_simulation(PROFILES[args.profile], args.presses, args.seed if args.seed is not None else new_seed())
    print(json.dumps(to_json(stats), indent=2) if args.json else format_text(stats), end="\n" if args.json else "")
    if args.svg:
        try:
            args.svg.write_text(render_svg(stats), encoding="utf-8")
        except OSError as e:
            print(f"uno-launcher simulate: cannot write {args.svg}: {e.strerror}", file=sys.stderr)
            return 1
    return 0
