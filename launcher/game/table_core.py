"""The state of one round at the table and the launcher's side of it: seats, whose turn, the open demands, the
presses that serve them, and the round trip through JSON. The declarations of play are in plays.py; the queue of
open demands is open_demands.py.

Seats are listed clockwise; direction 1 is clockwise (to the dealer's left), -1 counter-clockwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

from launcher.game.cards import GameError, exact_keys, flag, whole_number
from launcher.game.demands import Cause, Demand, NotYourPress, Press
from launcher.game.open_demands import OpenDemands
from launcher.game.rulesets import OFFICIAL, FirstPlayer, HouseRules, ReverseStart, Ruleset, validate_players
from launcher.refusals import Refusal

_Args = ParamSpec("_Args")
_Table = TypeVar("_Table", bound="TableCore")


def play(declaration: Callable[Concatenate[_Table, _Args], None]) -> Callable[Concatenate[_Table, _Args], None]:
    """A declaration of play or a penalty: once accepted, the round is under way, too late for the first card."""

    def declared(table: _Table, /, *args: _Args.args, **kwargs: _Args.kwargs) -> None:
        table.out_of_turn = None
        declaration(table, *args, **kwargs)
        table._under_way = True

    functools.update_wrapper(declared, declaration)
    return declared


class TableCore:
    """Seat order, dealer, direction, whose turn it is, and the demands still open, for one round."""

    def __init__(
        self,
        players: Sequence[str],
        ruleset: Ruleset | str = Ruleset.UNO_ATTACK,
        house_rules: HouseRules = OFFICIAL,
        *,
        dealer: str | None = None,
        track_turns: bool = True,
    ) -> None:
        self.ruleset = Ruleset.parse(ruleset)
        self.players = validate_players(players, self.ruleset)
        if not isinstance(house_rules, HouseRules):
            raise GameError(f"house rules must be HouseRules, not {house_rules!r:.40}")
        self.house_rules = house_rules.settled(self.ruleset)
        self.track_turns = flag("track_turns", track_turns)
        self._out: list[str] = []  # knock-out play: who went out this round, first out first; they play no more
        self._drew: str | None = None  # whose press (or declined play) just ended their turn: they may play it
        self.out_of_turn: str | None = None  # the last play came out of this player's turn (see _check_turn)
        # Who played the last card: a forgotten UNO is caught on them only until another player has their turn.
        self._uno_window: str | None = None
        self._dealer = self.players[0] if dealer is None else self._known(dealer)
        self._direction = 1
        self._current: str | None = None
        self._demands = OpenDemands()
        self._under_way = False  # a play, a penalty or a press of this round (not the deal's, not a carried one's)
        self._turn_to(self._first())

    # --- what the phones show ------------------------------------------------------------------------------------

    @property
    def dealer(self) -> str:
        return self._dealer

    @property
    def direction(self) -> int:
        return self._direction

    @property
    def current(self) -> str | None:
        """Whose turn it is; None when turn tracking is off."""
        return self._current

    @property
    def out(self) -> tuple[str, ...]:
        """Knock-out play: who went out this round, in the order they went out."""
        return tuple(self._out)

    @property
    def in_play(self) -> tuple[str, ...]:
        """The players still playing this round, in seat order."""
        return tuple(player for player in self.players if player not in self._out)

    @property
    def under_way(self) -> bool:
        """A play, a penalty or a press of this round happened: too late for the first card."""
        return self._under_way

    @property
    def demands(self) -> tuple[Demand, ...]:
        """Every open demand, the one being served first."""
        return tuple(self._demands)

    def pending(self) -> Demand | None:
        """Who must press now, and how often (or until it fires, or how many cards); None outside any demand."""
        return self._demands[0] if self._demands else None

    # --- the launcher --------------------------------------------------------------------------------------------

    def asked(self) -> str | None:
        """Who the table asks to press next: whoever owes first, else whose turn it is (None: nobody named)."""
        pending = self.pending()
        return pending.player if pending is not None else self._current

    def check_press(self, player: str) -> None:
        """Refuse a press for `player` that nothing at the table calls for, naming who is asked instead."""
        self._known(player)
        refusal = self._press_refusal(player)
        if refusal is not None:
            raise NotYourPress(refusal, asked=self.asked())

    def owed_by(self, player: str | None) -> Demand | None:
        """What a press for `player` serves: their first demand; for None (the launcher's button), the first."""
        if player is None:
            return self.pending()
        return next((demand for demand in self._demands if demand.player == player), None)

    def credited(self, player: str | None) -> str | None:
        """Who a press for `player` would be attributed to (on_press's choice), without pressing."""
        player = self._called(player)
        demand = self.owed_by(player)
        if demand is not None:
            return demand.player
        return self._current if player is None else player

    def _called(self, player: str | None) -> str | None:
        """`player` if the table calls for their press; else None (the press counts as the launcher's button's)."""
        if player is not None and (player not in self.players or self._press_refusal(player) is not None):
            return None
        return player

    def on_press(self, outcome_fired: bool, cards: int, player: str | None = None) -> Press:
        """A press happened, for `player` (a phone that said who it is) or for whoever is asked (the launcher's
        button, or a phone that did not say). It serves that player's demand; without one it is a plain hit by the
        current player (ending the turn: a player who cannot play presses once), or unassigned when turn tracking
        is off. A press for a player the table no longer asks (it changed during the fire) counts as the button's.
        """
        flag("outcome_fired", outcome_fired)
        whole_number("cards", cards, 0, self.ruleset.deck.total)
        player = self._called(player)
        demand = self.owed_by(player)
        if demand is None:
            self._under_way = True
            player = self._current if player is None else player
            if player is not None:
                self._turn_to(self._after(player))
                self._drew = player
                self._took_turn(player)
            return Press(player, Cause.PLAIN, outcome_fired, cards, closed=True)
        if demand.cause is not Cause.DEAL and not demand.carried:
            self._under_way = True
        return self._demands.serve(demand, outcome_fired, cards)

    # --- persistence ---------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "players": list(self.players),
            "ruleset": self.ruleset.value,
            "house_rules": self.house_rules.to_dict(),
            "track_turns": self.track_turns,
            "dealer": self._dealer,
            "direction": self._direction,
            "current": self._current,
            "under_way": self._under_way,
            "demands": [demand.to_dict() for demand in self._demands],
            "out": list(self._out),
            "drew": self._drew,
            "uno_window": self._uno_window,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        # Tables stored before these were kept: too late for a first card, nobody out, nobody to catch on UNO.
        data = {"under_way": True, "out": [], "drew": None, "uno_window": None, **data}
        exact_keys("a table", data, _TABLE_KEYS)
        table = cls(
            data["players"],
            data["ruleset"],
            HouseRules.from_stored(data["house_rules"]),
            dealer=data["dealer"],
            track_turns=data["track_turns"],
        )
        if data["direction"] not in (1, -1) or isinstance(data["direction"], bool):
            raise GameError(f"direction = {data['direction']!r:.40} is not accepted; expected 1 or -1")
        table._direction = data["direction"]
        current = data["current"]
        if (current is None) == table.track_turns:
            raise GameError(f"current = {current!r:.40}: a player when turn tracking is on, else null")
        table._current = None if current is None else table._known(current)
        table._under_way = flag("under_way", data["under_way"])
        out = data["out"]
        if not isinstance(out, list) or len(set(map(str, out))) != len(out) or len(out) > len(table.players) - 2:
            raise GameError(f"out = {out!r:.60} is not accepted; expected different players, two left in play")
        table._out = [table._known(player) for player in out]
        table._drew = None if data["drew"] is None else table._known(data["drew"])
        table._uno_window = None if data["uno_window"] is None else table._known(data["uno_window"])
        if not isinstance(data["demands"], list):
            raise GameError(f"demands must be a list, not {data['demands']!r:.40}")
        table._demands = OpenDemands(Demand.from_dict(d, table.players) for d in data["demands"])
        return table

    # --- helpers -------------------------------------------------------------------------------------------------

    def _known(self, player: str) -> str:
        if player not in self.players:
            raise GameError(f"unknown player {player!r:.40}; the players are {', '.join(self.players)}")
        if player in self._out:
            raise GameError(
                f"{player} went out this round and plays no more until the next", Refusal.WENT_OUT, player=player
            )
        return player

    def _after(self, player: str, steps: int = 1) -> str:
        seats = [p for p in self.players if p == player or p not in self._out]
        index = seats.index(player) + steps * self._direction
        return seats[index % len(seats)]

    def _first(self) -> str:
        """Who plays first this round: the player left of the dealer, or the dealer (house rule first_player)."""
        return self._dealer if self.house_rules.first_player is FirstPlayer.DEALER else self._after(self._dealer)

    def _reverse_first(self) -> str:
        """Who plays first to a Reverse turned up, the direction flipped: the dealer, or the player on their right."""
        return self._dealer if self.house_rules.reverse_start is ReverseStart.DEALER else self._after(self._dealer)

    def _others(self, player: str) -> list[str]:
        """Everyone but `player`, from the next in the direction of play."""
        return [self._after(player, k) for k in range(1, len(self.in_play))]

    def _turn_to(self, player: str) -> None:
        if self.track_turns:
            self._current = player

    def _count(self, kind: str, count: int) -> int:
        """How many of the cards played together take effect: all of them with multiple_identical; one for a pair
        with pairs_one_effect (the pair only goes down faster)."""
        deck = self.ruleset.deck
        count = whole_number(f"number of {deck.kind(kind).label} cards", count, 1, deck.max_count(kind))
        if count == 2 and self.house_rules.pairs_one_effect and not self.house_rules.multiple_identical:
            return 1
        if count > 1 and not self.house_rules.multiple_identical:
            raise GameError("several identical cards at once need the house rule multiple_identical")
        return count

    def _owed(self, player: str, cause: Cause, amount: int) -> Demand:
        """Presses in UNO Attack, cards in classic UNO."""
        if self.ruleset is Ruleset.UNO_ATTACK:
            return Demand(player, cause, presses=amount)
        return Demand(player, cause, cards=amount)

    def _penalty(self, player: str, cause: Cause, amount: int) -> None:
        self._known(player)
        self._demands.append(self._owed(player, cause, amount))

    def _check_turn(self, by: str, *, stacked: bool = False) -> None:
        """Note a play out of turn: not by the player whose turn it is, nor by the player whose press just ended
        their turn (they may play the card it shot), nor by the player hit who stacks. It is accepted (the turn
        follows whoever played, so a missed declaration cannot stall the table) and named in `out_of_turn`: a
        jump-in with that house rule, else a slip for the table to look at. The drawn card's chance is gone."""
        in_turn = not self.track_turns or stacked or by in (self._current, self._drew)
        self.out_of_turn = None if in_turn else self._current
        self._drew = None
        self._uno_window = by

    def _took_turn(self, player: str) -> None:
        """`player` had a turn without playing a card (declined, or pressed for nothing owed): a forgotten UNO of
        the player before them can no longer be caught."""
        if self._uno_window != player:
            self._uno_window = None

    def _forgot_uno(self, player: str, cause: Cause, catchers: int) -> None:
        """Caught not calling UNO, before the next player played: the table's number per player who caught it."""
        self._known(player)
        catchers = whole_number("catchers", catchers, 1, len(self.in_play) - 1)
        if self._uno_window != player:
            raise GameError(
                f"too late to catch {player}'s forgotten UNO: only the player who just played can be caught, and "
                "only before the next player plays",
                Refusal.UNO_TOO_LATE,
                player=player,
            )
        self._penalty(player, cause, self.house_rules.forgot_uno_penalty * catchers)

    def _press_refusal(self, player: str) -> str | None:
        """Why a press for `player` is not called for, or None: they owe, or it is their turn and play is free."""
        if self.owed_by(player) is not None:
            return None
        holding = self._demands.holding_play()
        if holding:
            first = holding[0]
            owed = f"{first.player} must first {first.describe()} for the {first.cause.label}"
            return f"it is not {player}'s press: {owed}"
        if self._current is not None and player != self._current:
            return f"it is not {player}'s press: it is {self._current}'s turn, and {player} owes the launcher nothing"
        return None


_TABLE_KEYS = (
    "players", "ruleset", "house_rules", "track_turns", "dealer", "direction", "current", "under_way", "demands",
    "out", "drew", "uno_window",
)  # fmt: skip
