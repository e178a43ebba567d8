"""Decks as data: the card kinds of each deck, how many of each it holds, and what each is worth at scoring.

A hand is a mapping kind → count. Number cards are kinds by value ("0" … "9"); colour does not matter for scoring,
except for the red 0 under the house rule, which is passed separately as a number of red zeros.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from launcher.errors import LauncherError
from launcher.refusals import Refusal

RED_ZERO_POINTS = 100  # house rule: a red 0 left in a hand


class GameError(LauncherError, ValueError):
    """A game input is not accepted; the message names the player, card or setting and what is accepted.

    `refusal` and `params`: a refusal a player can meet, for the page to word (launcher/refusals.py); None for an
    input only a faulty client sends, told by the message alone."""

    def __init__(self, message: str, refusal: Refusal | None = None, **params: Any) -> None:
        super().__init__(message)
        self.refusal = refusal
        self.params = params

    def details(self) -> dict[str, Any]:
        """The API error's fields beside code and message: the refusal's reason and its parameters."""
        return {} if self.refusal is None else {"reason": self.refusal.value, **self.params}


@dataclass(frozen=True, slots=True)
class CardKind:
    id: str  # as used in hands and JSON: "7", "hit_2", "wild_all_hit"
    label: str  # as shown in messages: "number 7", "Hit 2", "Wild All Hit"
    count: int  # how many the deck holds
    points: int  # what one is worth at scoring


@dataclass(frozen=True, slots=True)
class Deck:
    id: str
    label: str
    kinds: tuple[CardKind, ...]
    red_zeros: int  # how many of the zeros are red (the red 0 house rule)

    @property
    def total(self) -> int:
        return sum(kind.count for kind in self.kinds)

    @property
    def max_points(self) -> int:
        """The value of the whole deck, without the red 0 house rule: no hand, nor all hands together, is worth more."""
        return sum(kind.count * kind.points for kind in self.kinds)

    @property
    def kind_ids(self) -> tuple[str, ...]:
        return tuple(kind.id for kind in self.kinds)

    def kind(self, kind_id: str) -> CardKind:
        for kind in self.kinds:
            if kind.id == kind_id:
                return kind
        raise GameError(f"the {self.label} deck has no card kind {kind_id!r}; its kinds are {', '.join(self.kind_ids)}")

    def points(self, kind_id: str) -> int:
        return self.kind(kind_id).points

    def max_count(self, kind_id: str) -> int:
        return self.kind(kind_id).count

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "total": self.total,
            "red_zeros": self.red_zeros,
            "kinds": [{"id": k.id, "label": k.label, "count": k.count, "points": k.points} for k in self.kinds],
        }


def _numbers(first: int, per_value: int) -> tuple[CardKind, ...]:
    return tuple(CardKind(str(value), f"number {value}", per_value, value) for value in range(first, 10))


CLASSIC = Deck(
    id="classic",
    label="classic UNO",
    kinds=(
        CardKind("0", "number 0", 4, 0),  # one per colour
        *_numbers(1, 8),  # two per colour
        CardKind("skip", "Skip", 8, 20),
        CardKind("reverse", "Reverse", 8, 20),
        CardKind("draw_two", "Draw Two", 8, 20),
        CardKind("wild", "Wild", 4, 50),
        CardKind("wild_draw_four", "Wild Draw Four", 4, 50),
    ),
    red_zeros=1,
)

UNO_ATTACK = Deck(
    id="uno_attack",
    label="UNO Attack",
    kinds=(
        *_numbers(1, 8),  # no zeros in this deck
        CardKind("hit_2", "Hit 2", 8, 20),
        CardKind("reverse", "Reverse", 8, 20),
        CardKind("skip", "Skip", 8, 20),
        CardKind("discard_all", "Discard All", 4, 30),
        CardKind("trade_hands", "Trade Hands", 4, 30),
        CardKind("wild", "Wild", 4, 50),
        CardKind("wild_all_hit", "Wild All Hit", 2, 50),
        CardKind("wild_hit_fire", "Wild Hit-Fire", 2, 50),
    ),
    red_zeros=0,
)


# --- checks shared by the game modules: each message names the input, its value and what is accepted ---------


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def whole_number(what: str, value: object, low: int, high: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    raise GameError(
        f"{what} = {value!r:.40} is not accepted; expected a whole number from {low} to {high}",
        Refusal.OUT_OF_RANGE,
        low=low,
        high=high,
    )


def flag(what: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise GameError(f"{what} = {value!r:.40} is not accepted; expected true or false")
    return value


def exact_keys(what: str, data: object, keys: Sequence[str]) -> None:
    """`data` is a mapping with exactly these keys."""
    if not isinstance(data, Mapping):
        raise GameError(f"{what} must be a mapping, not {data!r:.60}")
    missing, unknown = [k for k in keys if k not in data], [k for k in data if k not in keys]
    if missing or unknown:
        raise GameError(f"{what}: missing {missing}, unknown {unknown!r:.60}; expected the keys {', '.join(keys)}")


# --- hands ---------------------------------------------------------------------------------------------------


def validate_hand(deck: Deck, hand: Mapping[str, int], *, player: str | None = None) -> dict[str, int]:
    """The hand with its counts checked against the deck, in deck order and without zero counts.

    GameError names the player (when given), the card kind and the limit: "Bob: 3 × Wild All Hit, but the UNO Attack
    deck has only 2".
    """
    who = f"{str(player)[:40]}: " if player is not None else ""
    if not isinstance(hand, Mapping):
        raise GameError(f"{who}a hand maps card kinds to counts, e.g. {{'7': 2, 'skip': 1}}; got {hand!r:.60}")
    for kind_id, count in hand.items():
        if not isinstance(kind_id, str) or kind_id not in deck.kind_ids:
            raise GameError(
                f"{who}the {deck.label} deck has no card kind {kind_id!r:.40}; its kinds are {', '.join(deck.kind_ids)}"
            )
        label = deck.kind(kind_id).label
        if not _whole(count):
            raise GameError(f"{who}the count of {label} must be a whole number, not {count!r:.40}")
        if count < 0:
            raise GameError(f"{who}{count} × {label}: a count cannot be negative")
        if count > deck.max_count(kind_id):
            raise GameError(
                f"{who}{count} × {label}, but the {deck.label} deck has only {deck.max_count(kind_id)}",
                Refusal.OVER_DECK,
                card=kind_id,
                count=count,
                max=deck.max_count(kind_id),
                held=[] if player is None else [[player, count]],
            )
    return {kind_id: hand[kind_id] for kind_id in deck.kind_ids if hand.get(kind_id, 0) > 0}


def validate_round_hands(deck: Deck, hands: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    """Every hand checked, then the counts across all hands against the deck (together they come from one deck)."""
    if not isinstance(hands, Mapping):
        raise GameError(f"the hands map each player to a hand; got {hands!r:.60}")
    checked = {player: validate_hand(deck, hand, player=player) for player, hand in hands.items()}
    for kind in deck.kinds:
        holders = {player: hand[kind.id] for player, hand in checked.items() if kind.id in hand}
        if sum(holders.values()) > kind.count:
            held = ", ".join(f"{player} {count}" for player, count in holders.items())
            raise GameError(
                f"{sum(holders.values())} × {kind.label} across the hands ({held}), "
                f"but the {deck.label} deck has only {kind.count}",
                Refusal.OVER_DECK,
                card=kind.id,
                count=sum(holders.values()),
                max=kind.count,
                held=[[player, count] for player, count in holders.items()],
            )
    return checked


def hand_value(deck: Deck, hand: Mapping[str, int], *, red_zero_100: bool = False, red_zeros: int = 0) -> int:
    """The points of a hand; `red_zeros` says how many of its zeros are red (worth 100 under the house rule)."""
    checked = validate_hand(deck, hand)
    if not _whole(red_zeros) or not 0 <= red_zeros <= min(deck.red_zeros, checked.get("0", 0)):
        raise GameError(
            f"red zeros = {red_zeros!r:.40}: the hand holds {checked.get('0', 0)} zeros "
            f"and the {deck.label} deck {deck.red_zeros} red 0"
        )
    value = sum(deck.points(kind_id) * count for kind_id, count in checked.items())
    if red_zero_100 and red_zeros:
        value += (RED_ZERO_POINTS - deck.points("0")) * red_zeros
    return value
