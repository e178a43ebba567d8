"""Turns and attacks at the table: who must press (or take cards) next, how often, and whose turn it is.

A pure state machine. Phones declare what was played; the launcher reports each press with `on_press`; the table
answers who must press and how many presses are left (UNO Attack) or how many cards the dispenser still owes them
(classic UNO). Demands are served one at a time in the order they were declared. No I/O, no clock:
`to_dict()` and `Table.from_dict()` round-trip exactly, so a restarted daemon resumes an attack in progress.

Seats are listed clockwise; direction 1 is clockwise (to the dealer's left), -1 counter-clockwise. Every declaration
names who played, and the turn continues from that player, so one missed declaration does not derail the table and
jump-ins need nothing special.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any, Concatenate, ParamSpec

from launcher.game.cards import GameError, exact_keys, flag, whole_number
from launcher.game.rulesets import OFFICIAL, HouseRules, Ruleset, validate_players


class Cause(StrEnum):
    """Why a player presses or takes cards."""

    PLAIN = "plain"  # a press outside any demand
    DECLINED = "declined"
    HIT_2 = "hit_2"
    WILD_ALL_HIT = "wild_all_hit"
    WILD_HIT_FIRE = "wild_hit_fire"
    UNO_PENALTY = "uno_penalty"
    SUGGESTION_PENALTY = "suggestion_penalty"
    PARTY_PENALTY = "party_penalty"
    DEAL = "deal"
    DRAW_TWO = "draw_two"
    WILD_DRAW_FOUR = "wild_draw_four"
    CHALLENGE_FAILED = "challenge_failed"  # the Wild Draw Four was legal: the challenger takes 6
    ILLEGAL_WILD_DRAW_FOUR = "illegal_wild_draw_four"  # it was not: whoever played it takes 4
    FORGOT_UNO = "forgot_uno"
    FALSE_UNO = "false_uno"
    WRONG_ACCUSATION = "wrong_accusation"
    WRONG_CARD = "wrong_card"

    @property
    def label(self) -> str:
        return _LABELS.get(self, self.value.replace("_", " "))


_LABELS = {
    Cause.DECLINED: "declined play",
    Cause.HIT_2: "Hit 2",
    Cause.WILD_ALL_HIT: "Wild All Hit",
    Cause.WILD_HIT_FIRE: "Wild Hit-Fire",
    Cause.UNO_PENALTY: "UNO penalty",
    Cause.DRAW_TWO: "Draw Two",
    Cause.WILD_DRAW_FOUR: "Wild Draw Four",
    Cause.CHALLENGE_FAILED: "failed challenge",
    Cause.ILLEGAL_WILD_DRAW_FOUR: "illegal Wild Draw Four",
    Cause.FORGOT_UNO: "forgotten UNO",
    Cause.FALSE_UNO: "false UNO call",
}

# Play waits for these: the official rules let no card cancel an attack, so no card is declared meanwhile.
# Penalties and declined plays do not hold up play.
_HOLDS_PLAY = frozenset(
    {
        Cause.DEAL,
        Cause.HIT_2,
        Cause.WILD_ALL_HIT,
        Cause.WILD_HIT_FIRE,
        Cause.DRAW_TWO,
        Cause.WILD_DRAW_FOUR,
        Cause.CHALLENGE_FAILED,
    }
)


class OpenAttacks(GameError):
    """A round cannot be scored yet: someone still owes the launcher. The message names who owes what."""


class NotYourPress(GameError):
    """A press for a player the table does not ask; `asked` is who it asks (the page offers to press for them)."""

    def __init__(self, message: str, *, asked: str | None) -> None:
        super().__init__(message)
        self.asked = asked


@dataclass(frozen=True, slots=True)
class Demand:
    """What one player still owes the launcher: presses, presses until it fires, or cards (classic)."""

    player: str
    cause: Cause
    presses: int = 0  # UNO Attack: presses left
    until_fire: bool = False  # UNO Attack: press until the launcher fires
    cards: int = 0  # classic: cards the dispenser still owes
    by: str | None = None  # who played the card (None for a penalty or the first card): stacking and challenges
    started: bool = False  # a press was counted: too late to stack on it or challenge it
    stacked: bool = False  # several cards added up: a stacked Wild Draw Four cannot be challenged
    carried: bool = False  # owed from the round before, which was scored: nobody may stack on it or challenge it

    def describe(self) -> str:
        """E.g. "press 2 more times", for messages and the page."""
        if self.until_fire:
            return "press until the launcher fires"
        if self.presses:
            more = " more" if self.started else ""
            return f"press {self.presses}{more} time{'s' if self.presses != 1 else ''}"
        more = " more" if self.started else ""
        return f"take {self.cards}{more} card{'s' if self.cards != 1 else ''}"

    def to_dict(self) -> dict[str, Any]:
        return {**{f.name: getattr(self, f.name) for f in fields(self)}, "cause": self.cause.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], players: Sequence[str]) -> Demand:
        data = {"carried": False, **data}  # demands stored before rounds could carry them
        exact_keys("a demand", data, [f.name for f in fields(cls)])
        if data["player"] not in players or (data["by"] is not None and data["by"] not in players):
            raise GameError(f"a demand names a player who is not at the table: {data!r:.80}")
        try:
            cause = Cause(data["cause"])
        except ValueError:
            raise GameError(f"a demand has an unknown cause {data['cause']!r:.40}") from None
        for key in ("presses", "cards"):
            if not isinstance(data[key], int) or isinstance(data[key], bool) or data[key] < 0:
                raise GameError(f"a demand's {key} must be a whole number of 0 or more, not {data[key]!r:.40}")
        for key in ("until_fire", "started", "stacked", "carried"):
            if not isinstance(data[key], bool):
                raise GameError(f"a demand's {key} must be true or false, not {data[key]!r:.40}")
        if [data["presses"] > 0, data["until_fire"], data["cards"] > 0].count(True) != 1:
            raise GameError(f"a demand owes exactly one of presses, until_fire or cards: {data!r:.80}")
        return cls(**{**data, "cause": cause})


@dataclass(frozen=True, slots=True)
class Press:
    """One press of the launcher, attributed."""

    player: str | None  # None: no demand and turn tracking off
    cause: Cause
    fired: bool
    cards: int
    closed: bool  # this press settled its demand (a plain press always does)


_Args = ParamSpec("_Args")


def _play(declaration: Callable[Concatenate[Table, _Args], None]) -> Callable[Concatenate[Table, _Args], None]:
    """A declaration of play or a penalty: once accepted, the round is under way, too late for the first card."""

    @functools.wraps(declaration)
    def declared(table: Table, *args: _Args.args, **kwargs: _Args.kwargs) -> None:
        table.out_of_turn = None
        declaration(table, *args, **kwargs)
        table._under_way = True

    return declared


class Table:
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
        self.house_rules = house_rules
        self.track_turns = flag("track_turns", track_turns)
        self._out: list[str] = []  # knock-out play: who went out this round, first out first; they play no more
        self._drew: str | None = None  # whose press (or declined play) just ended their turn: they may play it
        self.out_of_turn: str | None = None  # the last play came out of this player's turn (see _check_turn)
        self._dealer = self.players[0] if dealer is None else self._known(dealer)
        self._direction = 1
        self._current: str | None = None
        self._demands: list[Demand] = []
        self._under_way = False  # a play, a penalty or a press of this round (not the deal's, not a carried one's)
        self._turn_to(self._after(self._dealer))

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

    def on_press(self, outcome_fired: bool, cards: int, player: str | None = None) -> Press:
        """A press happened, for `player` (a phone that said who it is) or for whoever is asked (the launcher's
        button, or a phone that did not say). It serves that player's demand; without one it is a plain hit by the
        current player (ending the turn: a player who cannot play presses once), or unassigned when turn tracking
        is off. A press for a player the table no longer asks (it changed during the fire) counts as the button's.
        """
        flag("outcome_fired", outcome_fired)
        whole_number("cards", cards, 0, self.ruleset.deck.total)
        if player is not None and (player not in self.players or self._press_refusal(player) is not None):
            player = None
        demand = self.owed_by(player)
        if demand is None:
            self._under_way = True
            player = self._current if player is None else player
            if player is not None:
                self._turn_to(self._after(player))
                self._drew = player
            return Press(player, Cause.PLAIN, outcome_fired, cards, closed=True)
        index = self._demands.index(demand)
        if demand.cause is not Cause.DEAL and not demand.carried:
            self._under_way = True
        if demand.until_fire:
            left = replace(demand, started=True)
            closed = outcome_fired
        elif demand.presses:
            left = replace(demand, presses=demand.presses - 1, started=True)
            closed = left.presses == 0
        else:
            left = replace(demand, cards=max(0, demand.cards - cards), started=True)
            closed = left.cards == 0
        if closed:
            del self._demands[index]
        else:
            self._demands[index] = left
        return Press(demand.player, demand.cause, outcome_fired, cards, closed)

    # --- declarations for both rulesets --------------------------------------------------------------------------

    @_play
    def played(self, by: str) -> None:
        """A card without a launcher effect (a number, Wild, Discard All, Trade Hands): the turn passes on."""
        self._known(by)
        self._check_free()
        self._check_turn(by)
        self._turn_to(self._after(by))

    @_play
    def declined(self, player: str) -> None:
        """No play (or none wanted): one press, or one card in classic UNO, and the turn ends."""
        self._known(player)
        self._check_free()
        self._check_turn(player)
        self._demands.append(self._owed(player, Cause.DECLINED, 1))
        self._turn_to(self._after(player))
        self._drew = player

    @_play
    def reverse(self, by: str, count: int = 1) -> None:
        """The direction flips (an even number of Reverses at once keeps it). Two players: acts as a Skip."""
        self._known(by)
        count = self._count("reverse", count)
        self._check_free()
        self._check_turn(by)
        if count % 2:
            self._direction = -self._direction
        self._turn_to(by if len(self.in_play) == 2 else self._after(by))

    @_play
    def skip(self, by: str, count: int = 1) -> None:
        """The next player (n players for n Skips) loses the turn; nobody skips the player who played."""
        self._known(by)
        count = self._count("skip", count)
        self._check_free()
        self._check_turn(by)
        self._turn_to(self._after(by, 1 + min(count, len(self.in_play) - 1)))

    @_play
    def party_penalty(self, player: str) -> None:
        """Silent 6, slap on 9 or 4, 5-second limit: the configured number of presses or cards."""
        self._known(player)
        if not self.house_rules.party_penalties:
            raise GameError("party penalties are not among this table's house rules")
        self._demands.append(self._owed(player, Cause.PARTY_PENALTY, self.house_rules.party_penalty))

    # --- UNO Attack ----------------------------------------------------------------------------------------------

    @_play
    def hit2(self, by: str, count: int = 1) -> None:
        """The next player presses twice (per Hit 2) and loses the turn."""
        self._require(Ruleset.UNO_ATTACK, "Hit 2")
        self._known(by)
        count = self._count("hit_2", count)
        owed = self._take_stack(by, Cause.HIT_2, {Cause.HIT_2})
        self._check_turn(by, stacked=owed > 0)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.HIT_2, presses=owed + 2 * count, by=by, stacked=owed > 0))
        self._turn_to(self._after(victim))

    @_play
    def wild_all_hit(self, by: str) -> None:
        """Every other player, from the next in the direction of play, presses once; then the next player plays."""
        self._require(Ruleset.UNO_ATTACK, "Wild All Hit")
        self._known(by)
        self._check_free()
        self._check_turn(by)
        self._demands += [Demand(p, Cause.WILD_ALL_HIT, presses=1, by=by) for p in self._others(by)]
        self._turn_to(self._after(by))

    @_play
    def wild_hit_fire(self, by: str) -> None:
        """The next player presses until the launcher fires and loses the turn."""
        self._require(Ruleset.UNO_ATTACK, "Wild Hit-Fire")
        self._known(by)
        self._check_free()
        self._check_turn(by)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.WILD_HIT_FIRE, until_fire=True, by=by))
        self._turn_to(self._after(victim))

    @_play
    def uno_penalty(self, player: str) -> None:
        """Forgot to call UNO and was caught: two presses, or the table's own number."""
        self._penalty(Ruleset.UNO_ATTACK, player, Cause.UNO_PENALTY, self.house_rules.forgot_uno_penalty)

    @_play
    def suggestion_penalty(self, player: str) -> None:
        """Suggested a play to another player: four presses."""
        self._penalty(Ruleset.UNO_ATTACK, player, Cause.SUGGESTION_PENALTY, 4)

    # --- classic UNO on an exact-count dispenser -----------------------------------------------------------------

    def deal(self, n: int = 7) -> list[tuple[str, int]]:
        """n cards to each player, from the dealer's left round to the dealer."""
        self._require(Ruleset.CLASSIC, "Dealing from the dispenser")
        self._check_free()
        deck = self.ruleset.deck
        # One card must remain to turn up as the first card.
        n = whole_number("cards per player", n, 1, (deck.total - 1) // len(self.players))
        order = [*self._others(self._dealer), self._dealer]
        self._demands += [Demand(p, Cause.DEAL, cards=n) for p in order]
        return [(p, n) for p in order]

    @_play
    def draw_two(self, by: str, count: int = 1) -> None:
        """The next player takes exactly 2 cards (per Draw Two) and loses the turn."""
        self._require(Ruleset.CLASSIC, "Draw Two")
        self._known(by)
        count = self._count("draw_two", count)
        owed = self._take_stack(by, Cause.DRAW_TWO, {Cause.DRAW_TWO})
        self._check_turn(by, stacked=owed > 0)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.DRAW_TWO, cards=owed + 2 * count, by=by, stacked=owed > 0))
        self._turn_to(self._after(victim))

    @_play
    def wild_draw_four(self, by: str, count: int = 1) -> None:
        """The next player takes exactly 4 cards (per Wild Draw Four) and loses the turn, unless they challenge."""
        self._require(Ruleset.CLASSIC, "Wild Draw Four")
        self._known(by)
        count = self._count("wild_draw_four", count)
        owed = self._take_stack(by, Cause.WILD_DRAW_FOUR, {Cause.DRAW_TWO, Cause.WILD_DRAW_FOUR})
        self._check_turn(by, stacked=owed > 0)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.WILD_DRAW_FOUR, cards=owed + 4 * count, by=by, stacked=owed > 0))
        self._turn_to(self._after(victim))

    @_play
    def challenge(self, challenger: str, legal: bool) -> None:
        """The challenged Wild Draw Four was legal: the challenger takes 2 more (6 instead of 4). It was not:
        whoever played it takes the 4, the challenger none, and the challenger plays (with the house rule
        `challenger_skipped`, the next player does). Several Wild Draw Fours played
        at once are challenged together: the challenger takes 4 per card and 2 more, or their player 4 per card."""
        self._require(Ruleset.CLASSIC, "A challenge")
        self._known(challenger)
        flag("legal", legal)
        index = next(
            (i for i, d in enumerate(self._demands) if d.cause is Cause.WILD_DRAW_FOUR and d.player == challenger),
            None,
        )
        if index is None:
            raise GameError(f"{challenger} has no Wild Draw Four to challenge")
        demand = self._demands[index]
        if demand.by is None:  # only a stored state could hold one: a Wild Draw Four turned up goes back
            raise GameError("this Wild Draw Four was played by nobody: there is nothing to challenge")
        if demand.started:
            raise GameError(f"{challenger} already took cards for the Wild Draw Four: too late to challenge")
        if demand.carried:
            raise GameError("the round was scored: too late to challenge")
        if demand.stacked:
            raise GameError("a stacked Wild Draw Four cannot be challenged")
        if legal:
            self._demands[index] = Demand(challenger, Cause.CHALLENGE_FAILED, cards=demand.cards + 2, by=demand.by)
        else:
            del self._demands[index]
            self._demands.append(Demand(demand.by, Cause.ILLEGAL_WILD_DRAW_FOUR, cards=demand.cards, by=demand.by))
            # Official: the penalty fell on its player, so the challenger plays; the house rule skips them anyway.
            self._turn_to(self._after(challenger) if self.house_rules.challenger_skipped else challenger)

    @_play
    def forgot_uno(self, player: str) -> None:
        """Forgot to call UNO and was caught before the next play: 2 cards, or the table's own number."""
        self._penalty(Ruleset.CLASSIC, player, Cause.FORGOT_UNO, self.house_rules.forgot_uno_penalty)

    @_play
    def false_uno(self, player: str) -> None:
        """Called UNO without holding one card: 2 cards."""
        self._penalty(Ruleset.CLASSIC, player, Cause.FALSE_UNO, 2)

    @_play
    def wrong_accusation(self, accuser: str) -> None:
        """Accused someone of not calling UNO, wrongly: the accuser takes 2 cards."""
        self._penalty(Ruleset.CLASSIC, accuser, Cause.WRONG_ACCUSATION, 2)

    @_play
    def wrong_card(self, player: str) -> None:
        """Played a card that does not match: 2 cards."""
        self._penalty(Ruleset.CLASSIC, player, Cause.WRONG_CARD, 2)

    # --- round start and corrections -----------------------------------------------------------------------------

    def first_card(self, kind: str) -> bool:
        """Apply the card turned up to start the round: once, after the deal and before any play or press. False:
        it goes back into the deck and another is turned (Trade Hands; Wild Draw Four in classic UNO)."""
        self.ruleset.deck.kind(kind)  # refuses kinds the deck does not have
        if self._under_way:
            raise GameError("the first card starts the round: once, before any play or press of the round")
        left = self._after(self._dealer)
        if kind in ("trade_hands", "wild_draw_four"):
            return False
        if self.house_rules.number_card_starts and not kind.isdigit():
            return False
        self._under_way = True
        if kind == "wild_hit_fire":
            self._demands.append(Demand(left, Cause.WILD_HIT_FIRE, until_fire=True))
            self._turn_to(self._after(left))
        elif kind == "wild_all_hit":
            self._demands += [Demand(p, Cause.WILD_ALL_HIT, presses=1) for p in self._others(self._dealer)]
            self._turn_to(left)
        elif kind in ("hit_2", "draw_two"):
            self._demands.append(self._owed(left, Cause(kind), 2))
            self._turn_to(self._after(left))
        elif kind == "skip":
            self._turn_to(self._after(left))
        elif kind == "reverse":  # the dealer plays first, then play goes the other way
            self._direction = -self._direction
            self._turn_to(self._dealer)
        else:  # a number, Wild or Discard All: the player left of the dealer starts
            self._turn_to(left)
        return True

    @_play
    def went_out(self, player: str) -> None:
        """Knock-out play: `player` played their last card and leaves the round; the others play on, and the last
        one holding cards loses. Refused while they owe the launcher, and for the last two (score the round)."""
        self._known(player)
        owed = self.owed_by(player)
        if owed is not None:
            raise GameError(f"{player} must first {owed.describe()} for the {owed.cause.label}")
        if len(self.in_play) <= 2:
            raise GameError(f"{' and '.join(self.in_play)} are the last two: score the round, {player} first out")
        if self._current == player:
            self._turn_to(self._after(player))
        self._out.append(player)

    def set_turn(self, player: str) -> None:
        """A correction from a phone: it is this player's turn."""
        self._known(player)
        if not self.track_turns:
            raise GameError("turn tracking is off at this table")
        self._current = player
        self._drew = None

    def cancel(self) -> tuple[Demand, ...]:
        """Drop every open demand (declared by mistake); returns them."""
        dropped, self._demands = tuple(self._demands), []
        return dropped

    def close_round(self, carry: bool = False) -> tuple[Demand, ...]:
        """The round is being scored. Refused while anyone still owes the launcher (a winner's last Hit 2, Wild
        Hit-Fire, Draw Two or Wild Draw Four is still taken by the next player): served now, its cards count in that
        hand. With `carry`, the open demands are returned instead, marked carried, for `next_round`."""
        flag("carry", carry)
        if self._demands and not carry:
            raise OpenAttacks(
                "; ".join(f"{d.player} must still {d.describe()} for the {d.cause.label}" for d in self._demands)
            )
        return tuple(replace(d, carried=True) for d in self._demands)

    def next_round(self, dealer: str, players: Sequence[str] | None = None, carried: Sequence[Demand] = ()) -> Table:
        """A fresh table for the next round, dealt by `dealer` (the winner); `players` leaves out anyone
        eliminated. `carried` (from `close_round`) is served first, before the new round's play."""
        table = Table(
            self.players if players is None else players,
            self.ruleset,
            self.house_rules,
            dealer=dealer,
            track_turns=self.track_turns,
        )
        table._demands = [
            replace(d, by=d.by if d.by in table.players else None) for d in carried if d.player in table.players
        ]
        return table

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
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Table:
        # Tables stored before these were kept: too late for a first card, nobody out.
        data = {"under_way": True, "out": [], "drew": None, **data}
        exact_keys("a table", data, _TABLE_KEYS)
        table = cls(
            data["players"],
            data["ruleset"],
            HouseRules.from_mapping(data["house_rules"]),
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
        if not isinstance(data["demands"], list):
            raise GameError(f"demands must be a list, not {data['demands']!r:.40}")
        table._demands = [Demand.from_dict(d, table.players) for d in data["demands"]]
        return table

    # --- helpers -------------------------------------------------------------------------------------------------

    def _known(self, player: str) -> str:
        if player not in self.players:
            raise GameError(f"unknown player {player!r:.40}; the players are {', '.join(self.players)}")
        if player in self._out:
            raise GameError(f"{player} went out this round and plays no more until the next")
        return player

    def _after(self, player: str, steps: int = 1) -> str:
        seats = [p for p in self.players if p == player or p not in self._out]
        index = seats.index(player) + steps * self._direction
        return seats[index % len(seats)]

    def _others(self, player: str) -> list[str]:
        """Everyone but `player`, from the next in the direction of play."""
        return [self._after(player, k) for k in range(1, len(self.in_play))]

    def _turn_to(self, player: str) -> None:
        if self.track_turns:
            self._current = player

    def _require(self, ruleset: Ruleset, what: str) -> None:
        if self.ruleset is not ruleset:
            raise GameError(f"{what} belongs to {ruleset.label}; this table plays {self.ruleset.label}")

    def _count(self, kind: str, count: int) -> int:
        deck = self.ruleset.deck
        count = whole_number(f"number of {deck.kind(kind).label} cards", count, 1, deck.max_count(kind))
        if count > 1 and not self.house_rules.multiple_identical:
            raise GameError("several identical cards at once need the house rule multiple_identical")
        return count

    def _owed(self, player: str, cause: Cause, amount: int) -> Demand:
        """Presses in UNO Attack, cards in classic UNO."""
        if self.ruleset is Ruleset.UNO_ATTACK:
            return Demand(player, cause, presses=amount)
        return Demand(player, cause, cards=amount)

    def _penalty(self, ruleset: Ruleset, player: str, cause: Cause, amount: int) -> None:
        self._require(ruleset, f"The {cause.label}")
        self._known(player)
        self._demands.append(self._owed(player, cause, amount))

    def _holding_play(self) -> list[Demand]:
        return [demand for demand in self._demands if demand.cause in _HOLDS_PLAY]

    def _check_free(self) -> None:
        holding = self._holding_play()
        if holding:
            first = holding[0]
            raise GameError(f"{first.player} must first {first.describe()} for the {first.cause.label}")

    def _check_turn(self, by: str, *, stacked: bool = False) -> None:
        """Note a play out of turn: not by the player whose turn it is, nor by the player whose press just ended
        their turn (they may play the card it shot), nor by the player hit who stacks. It is accepted (the turn
        follows whoever played, so a missed declaration cannot stall the table) and named in `out_of_turn`: a
        jump-in with that house rule, else a slip for the table to look at. The drawn card's chance is gone."""
        in_turn = not self.track_turns or stacked or by in (self._current, self._drew)
        self.out_of_turn = None if in_turn else self._current
        self._drew = None

    def _press_refusal(self, player: str) -> str | None:
        """Why a press for `player` is not called for, or None: they owe, or it is their turn and play is free."""
        if self.owed_by(player) is not None:
            return None
        holding = self._holding_play()
        if holding:
            first = holding[0]
            owed = f"{first.player} must first {first.describe()} for the {first.cause.label}"
            return f"it is not {player}'s press: {owed}"
        if self._current is not None and player != self._current:
            return f"it is not {player}'s press: it is {self._current}'s turn, and {player} owes the launcher nothing"
        return None

    def _take_stack(self, by: str, card: Cause, onto: set[Cause]) -> int:
        """With stacking on, `by` may answer the attack on them (not yet pressed) with `card`: the sum passes on.
        Returns what was owed (0 when nothing is stacked); refuses any other card while play is held."""
        holding = self._holding_play()
        if self.house_rules.stacking and len(holding) == 1:
            attack = holding[0]
            # Only a card somebody played this round is answered: not a first card, not a carried attack.
            if attack.player == by and not attack.started and attack.by is not None and not attack.carried:
                if attack.cause not in onto:
                    raise GameError(f"a {card.label} does not stack on a {attack.cause.label}")
                self._demands.remove(attack)
                return attack.presses + attack.cards
            owed = f"{attack.player} must first {attack.describe()} for the {attack.cause.label}"
            if attack.player != by and attack.by is not None and not attack.carried:
                raise GameError(f"only {attack.player}, who is hit, may stack on the {attack.cause.label}: {owed}")
            if attack.started:
                raise GameError(f"too late to stack: {attack.player} has started pressing; {owed}")
        self._check_free()
        return 0


_TABLE_KEYS = (
    "players", "ruleset", "house_rules", "track_turns", "dealer", "direction", "current", "under_way", "demands",
    "out", "drew",
)  # fmt: skip
