"""What the phones are shown of the game: the choices the page offers, the table, the current game."""

from __future__ import annotations

from typing import Any

from launcher.game import Game, Ruleset, Table
from launcher.game.attacks import Demand
from launcher.game.cards import CLASSIC, UNO_ATTACK
from launcher.game.rulesets import HOUSE_RULE_NUMBERS, MIN_PLAYERS
from launcher.table import game_actions, game_options


def rules() -> dict[str, Any]:
    """Everything the page needs to offer choices: rulesets, decks, the scoring options (each option of their
    registry, with its limits, default, modes and words), house rules (the keys of their words, the rulesets and
    modes they mean something in; the choices of who starts, with each ruleset's own), and the declarations (each
    action of the registry, with its fields and buttons; and which kinds each ruleset and mode offers)."""
    return {
        "rulesets": [r.value for r in Ruleset],
        "players": {r.value: {"min": MIN_PLAYERS, "max": r.max_players} for r in Ruleset},
        "scoring": [option.view() for option in game_options.OPTIONS],
        "decks": {Ruleset.UNO_ATTACK.value: UNO_ATTACK.to_dict(), Ruleset.CLASSIC.value: CLASSIC.to_dict()},
        "house_rules": game_options.house_rules(),
        "house_choices": game_options.house_choices(),
        "house_rule_numbers": {
            key: {"min": n.low, "max": n.high, "default": n.default} for key, n in HOUSE_RULE_NUMBERS.items()
        },
        "declarations": {r.value: list(game_actions.kinds(r)) for r in Ruleset},
        "mode_declarations": {m.value: list(kinds) for m, kinds in game_actions.mode_kinds().items()},
        "actions": [action.view() for action in game_actions.ACTIONS],
    }


def demand_view(demand: Demand | None) -> dict[str, Any] | None:
    return None if demand is None else {**demand.to_dict(), "text": demand.describe()}


def table_view(table: Table) -> dict[str, Any]:
    return {
        "dealer": table.dealer,
        "current": table.current,
        "direction": table.direction,
        "under_way": table.under_way,
        "out": list(table.out),
        "in_play": list(table.in_play),
        "pending": demand_view(table.pending()),
        "demands": [demand_view(d) for d in table.demands],
    }


def game_view(game_id: int, game: Game, table: Table) -> dict[str, Any]:
    """The current game as every phone is shown it."""
    scoreboard = game.scoreboard()
    return {
        "id": game_id,
        "players": list(game.players),
        "ruleset": game.ruleset.value,
        "house_rules": game.house_rules.to_dict(),
        "mode": game.mode.value,
        "target": game.target,
        "final": None if game.final_rule is None else game.final_rule.value,
        "teams": scoreboard["teams"],
        "track_turns": table.track_turns,
        "table": table_view(table),
        "scoreboard": scoreboard,
    }
