"""Turns and attacks at the table: who must press (or take cards) next, how often, and whose turn it is.

A pure state machine. Phones declare what was played; the launcher reports each press with `on_press`; the table
answers who must press and how many presses are left (UNO Attack) or how many cards the dispenser still owes them
(classic UNO). Demands are served one at a time in the order they were declared. No I/O, no clock:
`to_dict()` and `Table.from_dict()` round-trip exactly, so a restarted daemon resumes an attack in progress.

`Table` is made of three parts, each a module: the round's state and the launcher's side (table_core.py), the
declarations of play by ruleset (plays.py), and what is owed (demands.py).
"""

from __future__ import annotations

from launcher.game.demands import Cause, Demand, NotYourPress, OpenAttacks, Press
from launcher.game.plays import ClassicPlays, CommonPlays, UnoAttackPlays

__all__ = ["Cause", "Demand", "NotYourPress", "OpenAttacks", "Press", "Table"]


class Table(CommonPlays, UnoAttackPlays, ClassicPlays):
    """One round at the table: seats, whose turn, the open demands, and every declaration of both rulesets."""
