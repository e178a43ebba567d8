"""The declarations of play, by ruleset: what each card and each penalty does to the table.

Every declaration names who played, and the turn continues from that player, so one missed declaration does not
derail the table and jump-ins need nothing special (a play out of turn is named in `out_of_turn`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Self

from launcher.game.cards import GameError, flag, whole_number
from launcher.game.demands import Cause, Demand, OpenAttacks
from launcher.game.open_demands import OpenDemands
from launcher.game.table_core import TableCore, play
from launcher.refusals import Refusal

# The cards whose player presses (or takes cards) and loses the turn as well.
_COSTS_THE_TURN = frozenset({Cause.HIT_2, Cause.WILD_HIT_FIRE, Cause.DRAW_TWO, Cause.WILD_DRAW_FOUR})


class CommonPlays(TableCore):
    """The plays of both rulesets, the first card, corrections and the end of a round."""

    # --- declarations for both rulesets --------------------------------------------------------------------------

    @play
    def played(self, by: str) -> None:
        """A card without a launcher effect (a number, Wild, Discard All, Trade Hands): the turn passes on."""
        self._known(by)
        self._demands.check_free()
        self._check_turn(by)
        self._turn_to(self._after(by))

    @play
    def declined(self, player: str) -> None:
        """No play (or none wanted): one press, or one card in classic UNO, and the turn ends."""
        self._known(player)
        self._demands.check_free()
        self._check_turn(player)
        self._demands.append(self._owed(player, Cause.DECLINED, 1))
        self._turn_to(self._after(player))
        self._drew = player
        self._took_turn(player)

    @play
    def reverse(self, by: str, count: int = 1) -> None:
        """The direction flips (an even number of Reverses at once keeps it). Two players: acts as a Skip. With the
        house rule `reverse_returns_draw_two`, the player hit by a Draw Two hands it back to the player before."""
        self._known(by)
        count = self._count("reverse", count)
        owed = self._answer_draw_two(by, self.house_rules.reverse_returns_draw_two)
        self._check_turn(by, stacked=owed > 0)
        if count % 2:
            self._direction = -self._direction
        if owed:
            self._pass_draw_two(by, self._after(by), owed)
        else:
            self._turn_to(by if len(self.in_play) == 2 else self._after(by))

    @play
    def skip(self, by: str, count: int = 1) -> None:
        """The next player (n players for n Skips) loses the turn; nobody skips the player who played. With the
        house rule `skip_passes_draw_two`, the player hit by a Draw Two passes it over them to the player after."""
        self._known(by)
        count = self._count("skip", count)
        owed = self._answer_draw_two(by, self.house_rules.skip_passes_draw_two and len(self.in_play) > 2)
        self._check_turn(by, stacked=owed > 0)
        after = self._after(by, 1 + min(count, len(self.in_play) - 1))
        if owed:
            self._pass_draw_two(by, after, owed)
        else:
            self._turn_to(after)

    def _answer_draw_two(self, by: str, allowed: bool) -> int:
        """With the house rule (`allowed`), the player hit by a Draw Two, before taking a card, answers it with this
        card: returns the cards it passes on (0: nothing answered). Else play must be free."""
        holding = self._demands.holding_play()
        if allowed and len(holding) == 1:
            attack = holding[0]
            answerable = attack.by is not None and not attack.started and not attack.carried
            if attack.cause is Cause.DRAW_TWO and attack.player == by and answerable:
                self._demands.remove(attack)
                return attack.cards
        self._demands.check_free()
        return 0

    def _pass_draw_two(self, by: str, victim: str, cards: int) -> None:
        """The Draw Two `by` answered falls on `victim`, who loses the turn as after any Draw Two."""
        self._demands.append(Demand(victim, Cause.DRAW_TWO, cards=cards, by=by, stacked=True))
        self._turn_to(self._after(victim))

    @play
    def party_penalty(self, player: str) -> None:
        """Silent 6, slap on 9 or 4, 5-second limit: the configured number of presses or cards."""
        self._known(player)
        if not self.house_rules.party_penalties:
            raise GameError("party penalties are not among this table's house rules")
        self._demands.append(self._owed(player, Cause.PARTY_PENALTY, self.house_rules.party_penalty))

    # --- round start and corrections -----------------------------------------------------------------------------

    def first_card(self, kind: str) -> bool:
        """Apply the card turned up to start the round: once, after the deal and before any play or press. False:
        it goes back into the deck and another is turned (Trade Hands; Wild Draw Four in classic UNO)."""
        self.ruleset.deck.kind(kind)  # refuses kinds the deck does not have
        if self._under_way:
            raise GameError(
                "the first card starts the round: once, before any play or press of the round", Refusal.FIRST_CARD_LATE
            )
        first = self._first()  # a Skip, Hit 2 or Draw Two falls on whoever plays first
        if kind in ("trade_hands", "wild_draw_four"):
            return False
        if self.house_rules.number_card_starts and not kind.isdigit():
            return False
        self._under_way = True
        if kind == "draw_two" and self.house_rules.first_draw_two_dealer:
            first = self._dealer  # the dealer takes the 2 and the player left of them starts
        if kind == "wild_hit_fire":
            self._demands.append(Demand(first, Cause.WILD_HIT_FIRE, until_fire=True))
            self._turn_to(self._after(first))
        elif kind == "wild_all_hit":
            self._demands += [Demand(p, Cause.WILD_ALL_HIT, presses=1) for p in self._others(self._dealer)]
            self._turn_to(first)
        elif kind in ("hit_2", "draw_two"):
            self._demands.append(self._owed(first, Cause(kind), 2))
            self._turn_to(self._after(first))
        elif kind == "skip":
            self._turn_to(self._after(first))
        elif kind == "reverse":  # play goes the other way, from the dealer or the player on their right
            self._direction = -self._direction
            self._turn_to(self._reverse_first())
        else:  # a number, Wild or Discard All: whoever plays first starts
            self._turn_to(first)
        return True

    @play
    def went_out(self, player: str) -> None:
        """Knock-out play: `player` played their last card and leaves the round; the others play on, and the last
        one holding cards loses. Refused while they owe the launcher, and for the last two (score the round)."""
        self._known(player)
        owed = self.owed_by(player)
        if owed is not None:
            raise GameError(
                f"{player} must first {owed.describe()} for the {owed.cause.label}", Refusal.OWES, **owed.owed()
            )
        if len(self.in_play) <= 2:
            raise GameError(
                f"{' and '.join(self.in_play)} are the last two: score the round, {player} first out",
                Refusal.LAST_TWO,
                player=player,
            )
        if self._current == player:
            self._turn_to(self._after(player))
        self._out.append(player)
        self._uno_window = None  # nobody is caught on a forgotten UNO once out of the round

    def set_turn(self, player: str) -> None:
        """A correction from a phone: it is this player's turn."""
        self._known(player)
        if not self.track_turns:
            raise GameError("turn tracking is off at this table")
        self._current = player
        self._drew = None

    def cancel(self) -> Demand | None:
        """Drop the newest open demand (declared by mistake) and return it; None when nothing is owed. Only the
        newest: one slip must not wipe out what others still owe, such as a Wild All Hit under way. A card that
        also cost its player the turn gives it back, unless play has moved on since."""
        if not self._demands:
            return None
        demand = self._demands.pop()
        skipped = demand.by is not None and demand.cause in _COSTS_THE_TURN
        if skipped and self._current is not None and self._current == self._after(demand.player):
            self._turn_to(demand.player)
        return demand

    def close_round(self, carry: bool = False) -> tuple[Demand, ...]:
        """The round is being scored. Refused while anyone still owes the launcher (a winner's last Hit 2, Wild
        Hit-Fire, Draw Two or Wild Draw Four is still taken by the next player): served now, its cards count in that
        hand. With `carry`, the open demands are returned instead, marked carried, for `next_round`."""
        flag("carry", carry)
        if self._demands and not carry:
            raise OpenAttacks(
                "; ".join(f"{d.player} must still {d.describe()} for the {d.cause.label}" for d in self._demands),
                Refusal.OWES,
                **self._demands[0].owed(),
            )
        return tuple(replace(d, carried=True) for d in self._demands)

    def next_round(self, dealer: str, players: Sequence[str] | None = None, carried: Sequence[Demand] = ()) -> Self:
        """A fresh table for the next round, dealt by `dealer` (the winner); `players` leaves out anyone
        eliminated. `carried` (from `close_round`) is served first, before the new round's play."""
        table = type(self)(
            self.players if players is None else players,
            self.ruleset,
            self.house_rules,
            dealer=dealer,
            track_turns=self.track_turns,
        )
        table._demands = OpenDemands(
            replace(d, by=d.by if d.by in table.players else None) for d in carried if d.player in table.players
        )
        return table


class UnoAttackPlays(TableCore):
    """The plays only UNO Attack has: the launcher's attacks and its penalties in presses."""

    @play
    def hit2(self, by: str, count: int = 1) -> None:
        """The next player presses twice (per Hit 2) and loses the turn."""
        self._known(by)
        count = self._count("hit_2", count)
        owed = self._demands.take_stack(by, Cause.HIT_2, {Cause.HIT_2}, stacking=self.house_rules.stacking)
        self._check_turn(by, stacked=owed > 0)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.HIT_2, presses=owed + 2 * count, by=by, stacked=owed > 0))
        self._turn_to(self._after(victim))

    @play
    def wild_all_hit(self, by: str) -> None:
        """Every other player, from the next in the direction of play, presses once; then the next player plays."""
        self._known(by)
        self._demands.check_free()
        self._check_turn(by)
        self._demands += [Demand(p, Cause.WILD_ALL_HIT, presses=1, by=by) for p in self._others(by)]
        self._turn_to(self._after(by))

    @play
    def wild_hit_fire(self, by: str) -> None:
        """The next player presses until the launcher fires and loses the turn."""
        self._known(by)
        self._demands.check_free()
        self._check_turn(by)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.WILD_HIT_FIRE, until_fire=True, by=by))
        self._turn_to(self._after(victim))

    @play
    def uno_penalty(self, player: str, catchers: int = 1) -> None:
        """Forgot to call UNO and was caught before the next player played: two presses, or the table's own number,
        for each player who caught it."""
        self._forgot_uno(player, Cause.UNO_PENALTY, catchers)

    @play
    def suggestion_penalty(self, player: str) -> None:
        """Suggested a play to another player: four presses."""
        self._penalty(player, Cause.SUGGESTION_PENALTY, 4)


class ClassicPlays(TableCore):
    """The plays only classic UNO has, on an exact-count dispenser: the deal, draws, challenges, penalties in cards."""

    def deal(self, n: int = 7) -> list[tuple[str, int]]:
        """n cards to each player, from the dealer's left round to the dealer."""
        self._demands.check_free()
        deck = self.ruleset.deck
        # One card must remain to turn up as the first card.
        n = whole_number("cards per player", n, 1, (deck.total - 1) // len(self.players))
        order = [*self._others(self._dealer), self._dealer]
        self._demands += [Demand(p, Cause.DEAL, cards=n) for p in order]
        return [(p, n) for p in order]

    @play
    def draw_two(self, by: str, count: int = 1) -> None:
        """The next player takes exactly 2 cards (per Draw Two) and loses the turn."""
        self._known(by)
        count = self._count("draw_two", count)
        owed = self._demands.take_stack(by, Cause.DRAW_TWO, {Cause.DRAW_TWO}, stacking=self.house_rules.stacking)
        self._check_turn(by, stacked=owed > 0)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.DRAW_TWO, cards=owed + 2 * count, by=by, stacked=owed > 0))
        self._turn_to(self._after(victim))

    @play
    def wild_draw_four(self, by: str, count: int = 1) -> None:
        """The next player takes exactly 4 cards (per Wild Draw Four) and loses the turn, unless they challenge."""
        self._known(by)
        count = self._count("wild_draw_four", count)
        owed = self._demands.take_stack(
            by, Cause.WILD_DRAW_FOUR, {Cause.DRAW_TWO, Cause.WILD_DRAW_FOUR}, stacking=self.house_rules.stacking
        )
        self._check_turn(by, stacked=owed > 0)
        victim = self._after(by)
        self._demands.append(Demand(victim, Cause.WILD_DRAW_FOUR, cards=owed + 4 * count, by=by, stacked=owed > 0))
        self._turn_to(self._after(victim))

    @play
    def challenge(self, challenger: str, legal: bool) -> None:
        """The challenged Wild Draw Four was legal: the challenger takes 2 more (6 instead of 4). It was not:
        whoever played it takes the 4, the challenger none, and the challenger plays (with the house rule
        `challenger_skipped`, the next player does). Several Wild Draw Fours played
        at once are challenged together: the challenger takes 4 per card and 2 more, or their player 4 per card."""
        self._known(challenger)
        flag("legal", legal)
        index = next(
            (i for i, d in enumerate(self._demands) if d.cause is Cause.WILD_DRAW_FOUR and d.player == challenger),
            None,
        )
        if index is None:
            raise GameError(
                f"{challenger} has no Wild Draw Four to challenge", Refusal.NOTHING_TO_CHALLENGE, player=challenger
            )
        demand = self._demands[index]
        if demand.by is None:  # only a stored state could hold one: a Wild Draw Four turned up goes back
            raise GameError("this Wild Draw Four was played by nobody: there is nothing to challenge")
        if demand.started:
            raise GameError(
                f"{challenger} already took cards for the Wild Draw Four: too late to challenge",
                Refusal.CHALLENGE_TOO_LATE,
                player=challenger,
            )
        if demand.carried:
            raise GameError("the round was scored: too late to challenge", Refusal.CHALLENGE_CLOSED)
        if demand.stacked:
            raise GameError("a stacked Wild Draw Four cannot be challenged", Refusal.CHALLENGE_CLOSED)
        if legal:
            self._demands[index] = Demand(challenger, Cause.CHALLENGE_FAILED, cards=demand.cards + 2, by=demand.by)
        else:
            del self._demands[index]
            self._demands.append(Demand(demand.by, Cause.ILLEGAL_WILD_DRAW_FOUR, cards=demand.cards, by=demand.by))
            # Official: the penalty fell on its player, so the challenger plays; the house rule skips them anyway.
            self._turn_to(self._after(challenger) if self.house_rules.challenger_skipped else challenger)

    @play
    def forgot_uno(self, player: str, catchers: int = 1) -> None:
        """Forgot to call UNO and was caught before the next player played: 2 cards, or the table's own number, for
        each player who caught it."""
        self._forgot_uno(player, Cause.FORGOT_UNO, catchers)

    @play
    def false_uno(self, player: str) -> None:
        """Called UNO without holding one card: 2 cards."""
        self._penalty(player, Cause.FALSE_UNO, 2)

    @play
    def wrong_accusation(self, accuser: str) -> None:
        """Accused someone of not calling UNO, wrongly: the accuser takes 2 cards."""
        self._penalty(accuser, Cause.WRONG_ACCUSATION, 2)

    @play
    def wrong_card(self, player: str) -> None:
        """Played a card that does not match: 2 cards."""
        self._penalty(player, Cause.WRONG_CARD, 2)
