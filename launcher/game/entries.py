"""A round as entered, and the checks it passes on its own: names, types, the deck, the finishing order, the last
card (what depends on the rounds before is checked on replay, in history.py); and what its hands are worth."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from launcher.game.cards import RED_ZERO_POINTS, GameError, flag, hand_value, validate_round_hands, whole_number
from launcher.game.modes import Mode
from launcher.game.rulesets import HouseRules, Ruleset
from launcher.game.teams import known
from launcher.refusals import Refusal

Hand = Mapping[str, int] | int  # card counts by kind, or a total typed in


@dataclass(frozen=True, slots=True)
class RoundEntry:
    """A round as entered, checked and normalised (the winner's empty hand left out)."""

    winner: str
    hands: dict[str, dict[str, int] | int]
    reshuffled: bool = False
    red_zero: str | None = None  # who held the red 0 (classic UNO, red 0 = 100)
    order: tuple[str, ...] | None = None  # knock-out play: every player, first out first; the last one lost
    last_card: str | None = None  # the card kind the winner went out on, where it was given

    def to_dict(self) -> dict[str, Any]:
        hands = {p: h if isinstance(h, int) else dict(h) for p, h in self.hands.items()}
        return {
            "winner": self.winner,
            "hands": hands,
            "reshuffled": self.reshuffled,
            "red_zero": self.red_zero,
            "order": None if self.order is None else list(self.order),
            "last_card": self.last_card,
        }


@dataclass(frozen=True, slots=True)
class RoundResult:
    index: int  # 0-based; messages say "round index + 1"
    entry: RoundEntry
    values: dict[str, int]  # each player's hand value
    points: dict[str, int]  # what each side still in the game scored this round
    totals: dict[str, int]  # every side's total after the round
    eliminated: tuple[str, ...] = ()  # sides out after this round

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            **self.entry.to_dict(),
            "values": dict(self.values),
            "points": dict(self.points),
            "totals": dict(self.totals),
            "eliminated": list(self.eliminated),
        }


@dataclass(frozen=True, slots=True)
class RoundChecker:
    """Checks rounds of one game: its players in seat order, mode, ruleset and house rules."""

    players: tuple[str, ...]
    mode: Mode
    ruleset: Ruleset
    house_rules: HouseRules

    def entry(
        self,
        winner: str | None,
        hands: Mapping[str, Hand],
        reshuffled: bool,
        red_zero: str | None,
        order: Sequence[str] | None = None,
        last_card: str | None = None,
        *,
        new: bool,
    ) -> RoundEntry:
        """The round checked and normalised. `new`: a round entered now (not one read from the store), which the
        house rules may ask more of."""
        deck = self.ruleset.deck
        checked_order = self._order(winner, order)
        if checked_order is not None:
            winner = checked_order[0]
        winner = known(self.players, winner)
        flag("reshuffled", reshuffled)
        last_card = self._last_card(winner, last_card, new=new)
        if not isinstance(hands, Mapping):
            raise GameError(f"the hands map each player to a hand; got {hands!r:.60}")
        if checked_order is not None:
            loser = checked_order[-1]
            if stray := next((p for p in hands if p != loser and p in self.players), None):
                raise GameError(
                    f"a hand for {stray}, but in knock-out play only the loser holds cards ({loser}, last in the "
                    "order); the others went out"
                )
            if loser not in hands:
                raise GameError(f"no hand for {loser}, the loser (last in the order): the cards left in their hand")
        bonus = RED_ZERO_POINTS * deck.red_zeros if self.house_rules.red_zero_100 else 0
        cards: dict[str, Mapping[str, int]] = {}
        typed: dict[str, int] = {}
        for player, hand in hands.items():
            known(self.players, player)
            if isinstance(hand, int) and not isinstance(hand, bool):
                typed[player] = whole_number(f"{player}'s hand total", hand, 0, deck.max_points + bonus)
            else:  # card counts; validate_round_hands refuses anything else by name
                cards[player] = cast(Mapping[str, int], hand)
        counted = validate_round_hands(deck, cards)
        if counted.get(winner) or typed.get(winner):
            raise GameError(
                f"{winner} won the round, so {winner}'s hand must be empty", Refusal.WINNER_HOLDS_CARDS, player=winner
            )
        if red_zero is not None:
            known(self.players, red_zero)
            if deck.red_zeros == 0:
                raise GameError(f"the {deck.label} deck has no red 0")
            if red_zero not in counted or not counted[red_zero].get("0"):
                raise GameError(
                    f"{red_zero} holds the red 0, so {red_zero}'s cards must include a 0",
                    Refusal.RED_ZERO_NOT_HELD,
                    player=red_zero,
                )
        worth = sum(self.hand_value(h, p == red_zero) for p, h in counted.items()) + sum(typed.values())
        if worth > deck.max_points + bonus:
            raise GameError(
                f"the hands add up to more points than the whole {deck.label} deck holds", Refusal.POINTS_OVER_DECK
            )
        normalised = {p: counted.get(p, typed.get(p, 0)) for p in self.players if p in hands and p != winner}
        return RoundEntry(winner, normalised, reshuffled, red_zero, checked_order, last_card)

    def hand_value(self, hand: Mapping[str, int] | int, red_zero: bool) -> int:
        """What a hand counts: a typed total as typed, card counts by the deck (`red_zero`: it holds the red 0)."""
        if isinstance(hand, int):
            return hand
        deck = self.ruleset.deck
        return hand_value(deck, hand, red_zero_100=self.house_rules.red_zero_100, red_zeros=int(red_zero))

    def _order(self, winner: object, order: object) -> tuple[str, ...] | None:
        """Knock-out play: the finishing order, checked for names and repeats (who is still in is checked on replay);
        the winner, if given, must be the first out. Other modes take none."""
        if self.mode is not Mode.KNOCK_OUT:
            if order is not None:
                raise GameError(f"the finishing order is for knock-out play; this game is scored {self.mode.label}")
            return None
        if order is None:
            raise GameError(
                "knock-out play scores a round by its finishing order: order lists every player, first out first"
            )
        if isinstance(order, str) or not isinstance(order, Sequence):
            raise GameError(f"the order lists every player still in the game, first out first; got {order!r:.60}")
        seen: list[str] = []
        for player in order:
            known(self.players, player)
            if player in seen:
                raise GameError(f"{player} is twice in the order; each player has one place")
            seen.append(player)
        if len(seen) < 2:
            raise GameError("the order lists every player still in the game, first out first: at least two")
        if winner is not None and winner != seen[0]:
            known(self.players, winner)
            raise GameError(
                f"winner = {winner!r:.40}, but {seen[0]} went out first: in knock-out play the winner is the first "
                "in the order (leave winner out)"
            )
        return tuple(seen)

    def _last_card(self, winner: str, card: object, *, new: bool) -> str | None:
        """The card kind the winner went out on: never a Trade Hands in UNO Attack; with the house rule
        last_card_not_action, never an action or Wild card, and a new round must say which card it was."""
        deck = self.ruleset.deck
        rule = self.house_rules.last_card_not_action
        if card is None:
            if rule and new:
                raise GameError(
                    f"which card {winner} went out on (last_card) is needed: the house rule no action card to finish "
                    "is on",
                    Refusal.LAST_CARD_NEEDED,
                    player=winner,
                )
            return None
        if not isinstance(card, str) or card not in deck.kind_ids:
            raise GameError(
                f"last_card: the {deck.label} deck has no card kind {card!r:.40}; its kinds are "
                + ", ".join(deck.kind_ids)
            )
        label = deck.kind(card).label
        if self.ruleset is Ruleset.UNO_ATTACK and card == "trade_hands":
            raise GameError(
                f"{winner} cannot go out on a Trade Hands: in UNO Attack nobody goes out on a Trade Hands",
                Refusal.NO_FINISH_ON,
                player=winner,
                card=card,
            )
        if rule and not card.isdigit():
            raise GameError(
                f"{winner} cannot go out on a {label}: the house rule no action card to finish is on (only a number "
                "card finishes a round)",
                Refusal.NO_FINISH_ON,
                player=winner,
                card=card,
            )
        return card
