"""Every scoring option of a new game, each written once: its body field of POST /api/games, its JSON Schema (its
limits), its default, the modes it belongs to, the catalogue keys of its words and, for a choice, each value with
its words; the house rules that only change the scoring of some modes; and each house rule as the page receives it,
with the catalogue keys of its words.

The request checks (launcher/table/game_requests.py: which fields a new game takes, and the defaults), the OpenAPI
description of POST /api/games (webui/openapi.py) and the rules every phone receives (launcher/table/game_view.py, from
which webui/static/setup.js draws the scoring part of the new-game form) are made from `OPTIONS`; the API's
description of a new game's house rules from the model's own list of them. The values
themselves are checked by the game (launcher/game/scoring.py), each refusal naming the setting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from launcher.game import Final, HouseRules, Mode
from launcher.game.modes import DEFAULT_FINAL
from launcher.game.rulesets import HOUSE_RULE_CHOICES, HOUSE_RULE_NUMBERS, HOUSE_RULE_RULESETS, Ruleset
from launcher.game.scoring import DEFAULT_TARGET, MAX_TARGET

_ALL_MODES = frozenset(Mode)


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of a choice: its words are `words` (the name) and `words` + "_about" (one line about it)."""

    value: str
    words: str

    def view(self) -> dict[str, str]:
        return {"value": self.value, "words": self.words, "about": f"{self.words}_about"}


@dataclass(frozen=True, slots=True)
class ScoringOption:
    """A field of a new game's body. `modes`: the modes it is a setting of (outside them it is left out);
    `presets`: the values the page offers as one tap, beside typing another."""

    name: str
    schema: Mapping[str, Any]
    default: Any
    words: str
    modes: frozenset[Mode] = _ALL_MODES
    choices: tuple[Choice, ...] = ()
    presets: tuple[int, ...] = ()

    def value(self, body: Mapping[str, Any], mode: Mode) -> Any:
        """The body's value, or the default where the option belongs to `mode` (None elsewhere)."""
        return body.get(self.name, self.default if mode in self.modes else None)

    def api_schema(self) -> dict[str, Any]:
        """The schema OpenAPI shows, saying which modes it belongs to when not all."""
        if self.modes == _ALL_MODES:
            return dict(self.schema)
        only = ", ".join(m.value for m in Mode if m in self.modes)
        return {**self.schema, "description": f"{self.schema.get('description', self.name)} (in {only} only)"}

    def view(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "schema": dict(self.schema),
            "default": self.default,
            "words": self.words,
            "modes": [m.value for m in Mode if m in self.modes],
            "choices": [choice.view() for choice in self.choices],
            "presets": list(self.presets),
        }


def _enum(values: tuple[str, ...], description: str) -> dict[str, Any]:
    return {"enum": list(values), "description": description}


MODE = ScoringOption(
    "mode",
    _enum(tuple(m.value for m in Mode), "how the rounds are scored"),
    Mode.WINNER_COLLECTS.value,
    "setup.mode",
    choices=tuple(Choice(m.value, f"mode.{m.value}") for m in Mode),
)
FINAL = ScoringOption(
    "final",
    _enum(
        tuple(f.value for f in Final),
        "with two left, play on to the last one standing, or the next round decides",
    ),
    DEFAULT_FINAL.value,
    "setup.final",
    modes=frozenset({Mode.ELIMINATION}),
    choices=tuple(Choice(f.value, f"final.{f.value}") for f in Final),
)
TARGET = ScoringOption(
    "target",
    {"type": "integer", "minimum": 1, "maximum": MAX_TARGET, "description": "the score that ends the game"},
    DEFAULT_TARGET,
    "setup.target",
    presets=(100, 250, DEFAULT_TARGET),
)
TEAMS = ScoringOption(
    "teams",
    {"type": ["object", "null"], "description": "team name → its players, partners in alternate seats"},
    None,
    "setup.teams",
    modes=_ALL_MODES - {Mode.KNOCK_OUT},  # knock-out play is for players
)

# In the order the new-game form shows them.
OPTIONS: tuple[ScoringOption, ...] = (MODE, FINAL, TARGET, TEAMS)

# House rules that change the scoring of some modes only: the form offers them in those modes. The others mean
# something in every mode.
HOUSE_RULE_MODES: dict[str, frozenset[Mode]] = {
    "highest_bust_loses": frozenset({Mode.LOWEST_TOTAL, Mode.KNOCK_OUT}),  # where passing the target loses
}


def house_rules_schema() -> dict[str, Any]:
    """A new game's `house_rules` as JSON Schema, from the model's own list: each toggle, each number's range, each
    choice's values (left out or null: the ruleset's own)."""
    numbers = {key: {"type": "integer", "minimum": n.low, "maximum": n.high} for key, n in HOUSE_RULE_NUMBERS.items()}
    choices = {key: {"enum": [*(c.value for c in kind), None]} for key, kind in HOUSE_RULE_CHOICES.items()}
    toggles = {
        f.name: {"type": "boolean"} for f in fields(HouseRules) if f.name not in HOUSE_RULE_NUMBERS.keys() | choices
    }
    return {
        "type": "object",
        "properties": toggles | numbers | choices,
        "additionalProperties": False,
        "description": "the house rules played, each left out off (or at its default)",
    }


def house_choices() -> list[dict[str, Any]]:
    """The house rules that choose who starts, as the page receives them: their values and each ruleset's own
    (the page words them by literal keys, webui/static/setup.js)."""
    return [
        {
            "name": key,
            "values": [c.value for c in kind],
            "defaults": {r.value: getattr(r, key).value for r in Ruleset},  # Ruleset.first_player, .reverse_start
        }
        for key, kind in HOUSE_RULE_CHOICES.items()
    ]


def house_rules() -> list[dict[str, Any]]:
    """The house rules toggled on and off, as the page receives them: each one's key, the catalogue keys of its
    name and its line about it (as a choice's), and the rulesets and modes where it means something."""
    return [
        {
            "key": key,
            "words": f"house.{key}",  # named as a choice's words (Choice)
            "about": f"house.{key}_about",
            "rulesets": [r.value for r in Ruleset if r in rulesets],
            "modes": [m.value for m in Mode if m in HOUSE_RULE_MODES.get(key, _ALL_MODES)],
        }
        for key, rulesets in HOUSE_RULE_RULESETS.items()
    ]
