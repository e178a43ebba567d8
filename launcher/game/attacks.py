"""Turns and attacks at the table: who must press (or take cards) next, how often, and whose turn it is.

A pure state machine. Phones declare what was played; the launcher reports each press with `on_press`; the table
answers who must press and how many presses are left (UNO Attack) or how many cards the dispenser still owes them
(classic UNO). Demands are served one at a time in the order they were declared. No I/O, no clock:
`to_dict()` and `Table.from_dict()` round-trip exactly, so a restarted daemon resumes an attack in progress.

A table is made of four parts, each a module: the round's state and the launcher's side (table_core.py), the
declarations of play (plays.py: those of both rulesets, and those of each), what is owed (demands.py) and the queue
of open demands (open_demands.py). Each ruleset has its table class, with only its own plays.
"""

from __future__ import annotations

from typing import Any

from launcher.game.demands import Cause, Demand, NotYourPress, OpenAttacks, Press
from launcher.game.plays import ClassicPlays, CommonPlays, UnoAttackPlays
from launcher.game.rulesets import Ruleset

__all__ = ["Cause", "ClassicTable", "Demand", "NotYourPress", "OpenAttacks", "Press", "Table", "UnoAttackTable"]


class Table(CommonPlays):
    """One round at the table: seats, whose turn, the open demands. `Table(players, ruleset, …)` makes the table of
    that ruleset, which adds the plays only it has: a declaration of the other ruleset is not even a method."""

    def __new__(cls, players: object, ruleset: Ruleset | str = Ruleset.UNO_ATTACK, *args: Any, **kwargs: Any) -> Table:
        return super().__new__(_TABLES[Ruleset.parse(ruleset)])


class UnoAttackTable(Table, UnoAttackPlays):
    """A round of UNO Attack: the launcher shoots a random number of cards per press."""


class ClassicTable(Table, ClassicPlays):
    """A round of classic UNO, with the dispenser as the draw pile dealing exact counts."""


_TABLES: dict[Ruleset, type[Table]] = {Ruleset.UNO_ATTACK: UnoAttackTable, Ruleset.CLASSIC: ClassicTable}
