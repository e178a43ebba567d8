"""Scoring a game: its settings, its rounds, the standings, and what it stores.

`Game` composes the pieces, each in a module of its own: the sides (teams.py), a round's own checks and hand values
(entries.py), the rounds as entered and their replay (standings.py), the modes' arithmetic (modes.py) and the
statistics (statistics.py). The rounds as entered are the truth; every total is their replay, so undoing or
correcting any round recomputes everything after it. No I/O: `to_dict()` and `Game.from_dict()` round-trip exactly,
and games stored before a field existed still load.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

from launcher.game.cards import GameError, exact_keys, whole_number
from launcher.game.entries import Hand, RoundChecker, RoundEntry, RoundResult
from launcher.game.modes import DEFAULT_FINAL, Final, Mode, ModeRules
from launcher.game.rulesets import OFFICIAL, HouseRules, Ruleset, validate_players
from launcher.game.standings import RoundReplay
from launcher.game.statistics import LauncherTally, PlayerStats
from launcher.game.teams import Sides, known
from launcher.refusals import Refusal

__all__ = ["Final", "Game", "Hand", "Mode", "PlayerStats", "RoundEntry", "RoundResult"]

MAX_TARGET = 100_000
DEFAULT_TARGET = 500


class Game:
    """A scored game: players in seat order, a mode, a target, optional teams."""

    def __init__(
        self,
        players: Sequence[str],
        mode: Mode | str,
        target: int = DEFAULT_TARGET,
        teams: Mapping[str, Sequence[str]] | None = None,
        *,
        ruleset: Ruleset | str = Ruleset.UNO_ATTACK,
        house_rules: HouseRules = OFFICIAL,
        dealer: str | None = None,
        final: Final | str | None = None,
    ) -> None:
        self.ruleset = Ruleset.parse(ruleset)
        self.players = validate_players(players, self.ruleset)
        self.first_dealer = self.players[0] if dealer is None else known(self.players, dealer)
        self.mode = Mode.parse(mode)
        self.target = whole_number("target", target, 1, MAX_TARGET)
        if not isinstance(house_rules, HouseRules):
            raise GameError(f"house rules must be HouseRules, not {house_rules!r:.40}")
        self.house_rules = house_rules.settled(self.ruleset)
        self._sides = Sides(self.players, teams)
        self.teams, self.sides = self._sides.teams, self._sides.names
        if self.mode is Mode.ELIMINATION and len(self.sides) < 3:
            raise GameError(
                "elimination needs at least 3 players or teams; with 2, play lowest total",
                Refusal.ELIMINATION_NEEDS_THREE,
            )
        if self.mode is Mode.KNOCK_OUT and self.teams is not None:
            raise GameError(
                "knock-out play is for players, not teams: teams play a points mode", Refusal.KNOCK_OUT_TEAMS
            )
        self.final_rule = self._check_final(final)
        self._checker = RoundChecker(self.players, self.mode, self.ruleset, house_rules)
        rules = ModeRules(
            self.mode, self.target, self.final_rule, self.sides, one_loser=self.house_rules.highest_bust_loses
        )
        self._replay = RoundReplay(self._sides, rules, self._checker.hand_value, doubles=house_rules.reshuffle_doubles)
        self._launcher = LauncherTally(self.players, self.ruleset.deck.total)

    def copy(self) -> Game:
        """A copy to change, as cheap at the 500th round as at the first: the settings are shared (nothing changes
        them), the rounds and standings too (every change replaces them); the launcher's counts are copied."""
        twin = copy.copy(self)
        twin._replay = copy.copy(self._replay)
        twin._launcher = self._launcher.copy()
        return twin

    # --- standings -----------------------------------------------------------------------------------------------

    @property
    def rounds(self) -> tuple[RoundResult, ...]:
        return tuple(self._replay.standings.results)

    @property
    def totals(self) -> dict[str, int]:
        return dict(self._replay.standings.totals)

    @property
    def eliminated(self) -> dict[str, int]:
        """Side → index of the round that put it out."""
        return dict(self._replay.standings.eliminated)

    @property
    def active_sides(self) -> tuple[str, ...]:
        return tuple(s for s in self.sides if s not in self._replay.standings.eliminated)

    @property
    def active_players(self) -> tuple[str, ...]:
        """Still at the table, in seat order: the players of the next round."""
        return tuple(p for p in self.players if self.side_of(p) in self.active_sides)

    @property
    def final(self) -> bool:
        """Elimination with two sides left and the head-to-head final: the winner of the next round wins the game."""
        return self.final_rule is Final.NEXT_ROUND and not self.over and len(self.active_sides) == 2

    @property
    def over(self) -> bool:
        return bool(self._replay.standings.winners)

    @property
    def winners(self) -> tuple[str, ...]:
        """The winning sides (ties share); empty while the game goes on."""
        return self._replay.standings.winners

    @property
    def losers(self) -> tuple[str, ...]:
        """Lowest total, knock-out and chips: the sides that busted in the round that ended the game, unless they
        won anyway (every side busted); empty while the game goes on and in the other modes."""
        return self._replay.standings.losers

    @property
    def dealer(self) -> str:
        """Who deals the next round: the last round's winner (play starts at their left), in knock-out play its
        loser (the last one holding cards shuffles), else the first dealer. A winner whose team went out passes
        the deal to the next player still in, clockwise."""
        if not self._replay.entries:
            return self.first_dealer
        last = self._replay.entries[-1]
        seat = self.players.index(last.order[-1] if last.order else last.winner)
        clockwise = self.players[seat:] + self.players[:seat]
        return next((p for p in clockwise if p in self.active_players), clockwise[0])

    def side_of(self, player: str) -> str:
        return self._sides.side_of(player)

    # --- rounds --------------------------------------------------------------------------------------------------

    def score_round(
        self,
        winner: str | None,
        hands: Mapping[str, Hand],
        reshuffled: bool = False,
        *,
        red_zero: str | None = None,
        order: Sequence[str] | None = None,
        last_card: str | None = None,
    ) -> RoundResult:
        """Score the next round. `hands` maps each player still in the game (the winner may be left out) to card
        counts by kind or to a typed total; `red_zero` names who held the red 0. In knock-out play `order` lists
        every player, first out first, `hands` holds only the loser's (the last in `order`), and `winner` may be
        None (it is the first out). `last_card` is the kind the winner went out on (required by the house rule
        last_card_not_action)."""
        entry = self._checker.entry(winner, hands, reshuffled, red_zero, order, last_card, new=True)
        return self._replay.add(entry)

    def undo_last(self) -> RoundEntry:
        return self._replay.undo_last()

    def edit_round(
        self,
        index: int,
        winner: str | None,
        hands: Mapping[str, Hand],
        reshuffled: bool = False,
        *,
        red_zero: str | None = None,
        order: Sequence[str] | None = None,
        last_card: str | None = None,
    ) -> RoundResult:
        """Correct round `index` (0-based) with a round as `score_round` takes it; every total after it is
        recomputed."""
        whole_number("round index", index, 0, max(0, len(self._replay.entries) - 1))
        if not self._replay.entries:
            raise GameError("there is no round to edit")
        entry = self._checker.entry(winner, hands, reshuffled, red_zero, order, last_card, new=True)
        return self._replay.replace(index, entry)

    # --- statistics ----------------------------------------------------------------------------------------------

    def record_press(self, player: str, cards: int) -> None:
        """A press attributed to `player` that gave `cards` cards (0: it did not fire)."""
        self._launcher.record(player, cards)

    def longest_droughts(self) -> dict[str, int] | None:
        """Each player's most presses in a row that did not fire (docs/GAME.md, "Droughts"); None for a game
        stored before they were recorded."""
        return self._launcher.longest_droughts()

    def statistics(self) -> dict[str, PlayerStats]:
        return self._launcher.statistics(self._replay.standings)

    def scoreboard(self) -> dict[str, Any]:
        """Everything a phone shows, as JSON types."""
        statistics = self.statistics()
        board = self._scores(statistics)
        board["rounds"] = [result.to_dict() for result in self._replay.standings.results]
        for player, stats in statistics.items():
            board["statistics"][player]["places"] = list(stats.places)
        return board

    def scores(self) -> dict[str, Any]:
        """The scoreboard but for what grows with every round (the rounds, the places in each): what an event of
        the game carries, so that its size stays flat however long the game."""
        return self._scores(self._launcher.statistics(self._replay.standings, places=False))

    def _scores(self, statistics: Mapping[str, PlayerStats]) -> dict[str, Any]:
        return {
            "sides": list(self.sides),
            "teams": self._sides.teams_dict(),
            "mode": self.mode.value,
            "target": self.target,
            "final_rule": None if self.final_rule is None else self.final_rule.value,
            "totals": self.totals,
            "eliminated": self.eliminated,
            "final": self.final,
            "over": self.over,
            "winners": list(self.winners),
            "losers": list(self.losers),
            "statistics": {
                p: {key: value for key, value in asdict(stats).items() if key != "places"}
                for p, stats in statistics.items()
            },
        }

    # --- persistence ---------------------------------------------------------------------------------------------

    @property
    def entries(self) -> tuple[RoundEntry, ...]:
        """The rounds as entered; a change replaces the tuple, and in it only the rounds it scores or corrects."""
        return self._replay.entries

    def to_dict(self) -> dict[str, Any]:
        return {**self.to_dict_but_rounds(), "rounds": [entry.to_dict() for entry in self._replay.entries]}

    def to_dict_but_rounds(self) -> dict[str, Any]:
        """`to_dict()` but the rounds, which are stored one at a time as they are scored (`entries`)."""
        return {
            "players": list(self.players),
            "mode": self.mode.value,
            "target": self.target,
            "teams": self._sides.teams_dict(),
            "ruleset": self.ruleset.value,
            "house_rules": self.house_rules.to_dict(),
            "dealer": self.first_dealer,
            "final": None if self.final_rule is None else self.final_rule.value,
            "launcher": self._launcher.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Game:
        # Games stored before these were kept: the first seat dealt first; elimination had the head-to-head final
        # (the default of new games is the seeds' last one standing, but a stored game keeps the ending it had).
        before = Final.NEXT_ROUND.value if data.get("mode") == Mode.ELIMINATION.value else None
        data = {"dealer": None, "final": before, **data}
        exact_keys("a game", data, _GAME_KEYS)
        game = cls(
            data["players"],
            data["mode"],
            data["target"],
            data["teams"],
            ruleset=data["ruleset"],
            house_rules=HouseRules.from_stored(data["house_rules"]),
            dealer=data["dealer"],
            final=data["final"],
        )
        if not isinstance(data["rounds"], list):
            raise GameError(f"rounds must be a list, not {data['rounds']!r:.40}")
        entries = []
        for number, entry in enumerate(data["rounds"], 1):
            if isinstance(entry, Mapping):  # rounds stored before finishing orders and last cards were kept
                entry = {"order": None, "last_card": None, **entry}
            exact_keys(f"round {number}", entry, _ROUND_KEYS)
            entries.append(game._checker.entry(*(entry[key] for key in _ROUND_KEYS), new=False))
        game._replay.reset(entries)
        game._launcher.load(data["launcher"])
        return game

    # --- helpers -------------------------------------------------------------------------------------------------

    def _check_final(self, final: object) -> Final | None:
        """Elimination's ending with two sides left (default: the last one standing); None in the other modes."""
        if self.mode is not Mode.ELIMINATION:
            if final is not None:
                raise GameError(
                    f"final = {final!r:.40} is a setting of elimination; this game is scored {self.mode.label}"
                )
            return None
        return DEFAULT_FINAL if final is None else Final.parse(final)


_GAME_KEYS = (
    "players", "mode", "target", "teams", "ruleset", "house_rules", "dealer", "final", "rounds", "launcher",
)  # fmt: skip
_ROUND_KEYS = ("winner", "hands", "reshuffled", "red_zero", "order", "last_card")
