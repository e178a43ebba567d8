"""What a table plays: the ruleset (UNO Attack or classic UNO), the house rules, and the players.

Each house rule toggle says the rulesets it means something in; its name and one-line explanation are the page's
words, in the catalogues (webui/static/i18n/*.json).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any, TypeVar

from launcher.game.cards import CLASSIC, UNO_ATTACK, Deck, GameError, whole_number
from launcher.refusals import Refusal

MIN_PLAYERS = 2
MAX_PLAYERS = 10  # the most any ruleset seats: classic UNO
MAX_NAME_LENGTH = 40


Choice = TypeVar("Choice", bound=StrEnum)


def parse_choice(choices: type[Choice], name: str, value: object) -> Choice:
    """One of a StrEnum's values, or a GameError naming the setting and what is accepted."""
    if isinstance(value, str) and value in {c.value for c in choices}:
        return choices(value)
    raise GameError(f"{name} = {value!r:.40} is not accepted; expected one of {', '.join(c.value for c in choices)}")


class FirstPlayer(StrEnum):
    """Who plays first to the card turned up; a first Skip, Hit 2 or Draw Two falls on them (docs/GAME.md)."""

    LEFT_OF_DEALER = "left_of_dealer"
    DEALER = "dealer"


class ReverseStart(StrEnum):
    """Who plays first to a Reverse turned up; play then goes to the right either way."""

    DEALER = "dealer"
    RIGHT_OF_DEALER = "right_of_dealer"


# The house rules that choose between the sources' ways, each a StrEnum; unset (None) is the ruleset's own way.
HOUSE_RULE_CHOICES: dict[str, type[StrEnum]] = {"first_player": FirstPlayer, "reverse_start": ReverseStart}


class Ruleset(StrEnum):
    UNO_ATTACK = "uno_attack"
    CLASSIC = "classic"

    @property
    def first_player(self) -> FirstPlayer:
        """Seed 000: UNO Attack starts left of the dealer (由發牌人左邊開始), classic UNO with the dealer
        (莊家根據此牌出牌). Other classic sheets start left of the dealer: the choice is a house rule."""
        return FirstPlayer.LEFT_OF_DEALER if self is Ruleset.UNO_ATTACK else FirstPlayer.DEALER

    @property
    def reverse_start(self) -> ReverseStart:
        """Seeds 000 and 003 and the UNO Attack sheet: on a Reverse turned up the dealer plays first; seeds 001 and
        002 have the player on the dealer's right start (若是"reverse"则为右边)."""
        return ReverseStart.DEALER

    @property
    def deck(self) -> Deck:
        return UNO_ATTACK if self is Ruleset.UNO_ATTACK else CLASSIC

    @property
    def label(self) -> str:
        return self.deck.label

    @property
    def max_players(self) -> int:
        """UNO Attack is sold for 2 to 9 players; classic UNO for 2 to 10."""
        return 9 if self is Ruleset.UNO_ATTACK else MAX_PLAYERS

    @classmethod
    def parse(cls, value: object) -> Ruleset:
        return parse_choice(cls, "ruleset", value)


@dataclass(frozen=True, slots=True)
class HouseNumber:
    """A house rule that is a number: its range and its default."""

    low: int
    high: int
    default: int


HOUSE_RULE_NUMBERS = {
    "party_penalty": HouseNumber(1, 10, 2),  # cards (classic) or presses (UNO Attack) per party penalty
    # A forgotten UNO, caught: 2 presses in the UNO Attack rules, 2 cards in classic UNO; some tables take 3.
    "forgot_uno_penalty": HouseNumber(1, 10, 2),
}


@dataclass(frozen=True, slots=True)
class HouseRules:
    """The house rules, all off by default (the official rules), and the house numbers at their defaults."""

    stacking: bool = False
    jump_in: bool = False
    multiple_identical: bool = False
    pairs_one_effect: bool = False
    seven_zero: bool = False
    last_card_not_action: bool = False
    last_card_not_skip_reverse_wild: bool = False
    red_zero_100: bool = False
    reshuffle_doubles: bool = False
    highest_bust_loses: bool = False
    challenger_skipped: bool = False
    number_card_starts: bool = False
    first_draw_two_dealer: bool = False
    skip_passes_draw_two: bool = False
    reverse_returns_draw_two: bool = False
    party_penalties: bool = False
    party_penalty: int = HOUSE_RULE_NUMBERS["party_penalty"].default
    forgot_uno_penalty: int = HOUSE_RULE_NUMBERS["forgot_uno_penalty"].default
    first_player: FirstPlayer | None = None  # None: the ruleset's own (settled by the game and the table)
    reverse_start: ReverseStart | None = None

    def __post_init__(self) -> None:
        for rule in fields(self):
            value = getattr(self, rule.name)
            if rule.name in HOUSE_RULE_CHOICES:
                if value is not None:
                    object.__setattr__(self, rule.name, parse_choice(HOUSE_RULE_CHOICES[rule.name], rule.name, value))
            elif rule.name in HOUSE_RULE_NUMBERS:
                number = HOUSE_RULE_NUMBERS[rule.name]
                whole_number(rule.name, value, number.low, number.high)
            elif not isinstance(value, bool):
                raise GameError(f"{rule.name} = {value!r:.40} is not accepted; expected true or false")

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> HouseRules:
        """From API or stored values; unknown rules are refused, missing ones are off."""
        if not isinstance(mapping, Mapping):
            raise GameError(f"house rules map rule names to values; got {mapping!r:.60}")
        known = [rule.name for rule in fields(cls)]
        for key in mapping:
            if key not in known:
                raise GameError(f"unknown house rule {key!r:.40}; the house rules are {', '.join(known)}")
        return cls(**mapping)

    @classmethod
    def from_stored(cls, mapping: Mapping[str, Any]) -> HouseRules:
        """As stored with a game or a table: one stored before the start was a choice started left of the dealer."""
        return cls.from_mapping({"first_player": FirstPlayer.LEFT_OF_DEALER.value, **mapping})

    def settled(self, ruleset: Ruleset) -> HouseRules:
        """The rules with each choice left unset made the ruleset's own, so a stored game keeps what it played."""
        return replace(
            self,
            first_player=self.first_player or ruleset.first_player,
            reverse_start=self.reverse_start or ruleset.reverse_start,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


OFFICIAL = HouseRules()  # no house rule


_BOTH = frozenset(Ruleset)

# Each toggle of HouseRules, in the order the new-game form offers them, with the rulesets where it means
# something. Its words are the catalogues' (webui/static/i18n/*.json, keys house.<key> and house.<key>_about).
HOUSE_RULE_RULESETS: dict[str, frozenset[Ruleset]] = {
    "stacking": _BOTH,
    "jump_in": _BOTH,
    "multiple_identical": _BOTH,
    "pairs_one_effect": _BOTH,
    "seven_zero": frozenset({Ruleset.CLASSIC}),  # the UNO Attack deck has no zeros
    "last_card_not_action": _BOTH,
    "last_card_not_skip_reverse_wild": _BOTH,
    "red_zero_100": frozenset({Ruleset.CLASSIC}),
    "reshuffle_doubles": _BOTH,
    "highest_bust_loses": _BOTH,
    "challenger_skipped": frozenset({Ruleset.CLASSIC}),
    "number_card_starts": _BOTH,
    "first_draw_two_dealer": frozenset({Ruleset.CLASSIC}),
    "skip_passes_draw_two": frozenset({Ruleset.CLASSIC}),
    "reverse_returns_draw_two": frozenset({Ruleset.CLASSIC}),
    "party_penalties": _BOTH,
}


def _check_name(what: str, name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise GameError(f"a {what} name must be a non-empty text; got {name!r:.40}")
    if name != name.strip() or len(name) > MAX_NAME_LENGTH:
        raise GameError(
            f"{what} name {name!r:.50} is not accepted; expected 1 to {MAX_NAME_LENGTH} characters "
            "without spaces at either end",
            Refusal.NAME_TOO_LONG,
            max=MAX_NAME_LENGTH,
        )
    # Control characters would garble messages, logs and the page.
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise GameError(f"{what} name {name!r:.50} contains control characters")
    return name


def validate_names(what: str, names: Sequence[str], low: int, high: int, *, game: str = "") -> tuple[str, ...]:
    """Names for players or teams: `low` to `high` of them, each distinct (ignoring case); `game` names the game
    whose limit that is."""
    if isinstance(names, str | bytes) or not isinstance(names, Sequence):
        raise GameError(f"the {what}s must be a list of names; got {names!r:.60}")
    if not low <= len(names) <= high:
        limit = f"{game} is for" if game else "expected"
        raise GameError(
            f"{len(names)} {what}s; {limit} {low} to {high}", Refusal.PLAYER_COUNT, count=len(names), low=low, high=high
        )
    checked = tuple(_check_name(what, name) for name in names)
    seen: dict[str, str] = {}
    for name in checked:
        if name.casefold() in seen:
            raise GameError(
                f"{what} names must differ: {seen[name.casefold()]!r} and {name!r}",
                Refusal.NAMES_DIFFER,
                first=seen[name.casefold()],
                second=name,
            )
        seen[name.casefold()] = name
    return checked


def validate_players(players: Sequence[str], ruleset: Ruleset) -> tuple[str, ...]:
    """The players in seat order, clockwise: distinct names, as many as the ruleset seats."""
    return validate_names("player", players, MIN_PLAYERS, ruleset.max_players, game=ruleset.label)
