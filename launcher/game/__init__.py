"""The game at the table, as pure models with no I/O: decks and hand values (cards), rulesets and house rules
(rulesets), turns and attacks (attacks), and scoring (scoring, composing modes, entries, standings, teams and
statistics). docs/GAME.md describes the model and its rule choices.
"""

from launcher.game.attacks import Cause, Demand, NotYourPress, OpenAttacks, Press, Table
from launcher.game.cards import (
    CLASSIC,
    UNO_ATTACK,
    CardKind,
    Deck,
    GameError,
    hand_value,
    validate_hand,
    validate_round_hands,
)
from launcher.game.entries import RoundEntry, RoundResult
from launcher.game.modes import Final, Mode
from launcher.game.rulesets import HOUSE_RULE_RULESETS, OFFICIAL, HouseRules, Ruleset, validate_players
from launcher.game.scoring import Game
from launcher.game.statistics import PlayerStats

__all__ = [
    "CLASSIC",
    "HOUSE_RULE_RULESETS",
    "OFFICIAL",
    "UNO_ATTACK",
    "CardKind",
    "Cause",
    "Deck",
    "Demand",
    "Final",
    "Game",
    "GameError",
    "HouseRules",
    "Mode",
    "NotYourPress",
    "OpenAttacks",
    "PlayerStats",
    "Press",
    "RoundEntry",
    "RoundResult",
    "Ruleset",
    "Table",
    "hand_value",
    "validate_hand",
    "validate_players",
    "validate_round_hands",
]
