"""What the phones send about the game, checked field by field and turned into calls on the pure model.

Each declaration kind names the body fields it takes and the `Table` method it calls, with the arguments passed by
position: a body field's name never has to match a parameter's. Which fields a body takes is checked by the one
parser of request bodies (launcher/bodies.py: `BodyError`, with the game's codes); their values by the game itself
(`GameError`s naming the field).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from launcher.bodies import Field, Shape, parsed_by
from launcher.game import Game, GameError, HouseRules, Mode, Ruleset, Table
from launcher.game.cards import flag
from launcher.game.scoring import Hand
from launcher.refusals import Refusal


@dataclass(frozen=True, slots=True)
class Declaration:
    required: tuple[str, ...]
    optional: tuple[str, ...]
    apply: Callable[[Table, Mapping[str, Any]], object]

    @property
    def fields(self) -> tuple[str, ...]:
        return self.required + self.optional

    def shape(self, kind: str) -> Shape:
        fields = {"kind": Field(required=True)} | {f: Field(required=f in self.required) for f in self.fields}
        return Shape(f"a {kind} declaration", fields, code="bad_declaration")


def _by(method: Callable[[Table, str], None]) -> Declaration:
    return Declaration(("by",), (), lambda table, body: method(table, body["by"]))


def _by_count(method: Callable[[Table, str, int], None]) -> Declaration:
    return Declaration(("by",), ("count",), lambda table, body: method(table, body["by"], body.get("count", 1)))


def _player(method: Callable[[Table, str], None]) -> Declaration:
    return Declaration(("player",), (), lambda table, body: method(table, body["player"]))


def _first_card(table: Table, body: Mapping[str, Any]) -> None:
    if not table.first_card(body["card"]):
        raise GameError(
            f"{body['card']} goes back into the deck: turn up another card", Refusal.FIRST_CARD_BACK, card=body["card"]
        )


DECLARATIONS: dict[str, Declaration] = {
    "played": _by(Table.played),
    "declined": _player(Table.declined),
    "hit2": _by_count(Table.hit2),
    "wild_all_hit": _by(Table.wild_all_hit),
    "wild_hit_fire": _by(Table.wild_hit_fire),
    "uno_penalty": _player(Table.uno_penalty),
    "suggestion_penalty": _player(Table.suggestion_penalty),
    "party_penalty": _player(Table.party_penalty),
    "reverse": _by_count(Table.reverse),
    "skip": _by_count(Table.skip),
    "draw_two": _by_count(Table.draw_two),
    "wild_draw_four": _by_count(Table.wild_draw_four),
    "challenge": Declaration(
        ("player", "legal"), (), lambda table, body: table.challenge(body["player"], body["legal"])
    ),
    "forgot_uno": _player(Table.forgot_uno),
    "false_uno": _player(Table.false_uno),
    "wrong_card": _player(Table.wrong_card),
    "wrong_accusation": _player(Table.wrong_accusation),
    "deal": Declaration((), ("cards",), lambda table, body: table.deal(body.get("cards", 7))),
    "first_card": Declaration(("card",), (), _first_card),
    "turn": _player(Table.set_turn),
    "cancel": Declaration((), (), lambda table, body: table.cancel()),
    "went_out": _player(Table.went_out),
}

# What phones may declare, per ruleset, in the order the page offers them.
RULESET_DECLARATIONS: dict[Ruleset, tuple[str, ...]] = {
    Ruleset.UNO_ATTACK: (
        "played", "declined", "hit2", "wild_all_hit", "wild_hit_fire", "uno_penalty", "suggestion_penalty",
        "party_penalty", "reverse", "skip", "first_card", "turn", "cancel",
    ),
    Ruleset.CLASSIC: (
        "played", "declined", "draw_two", "wild_draw_four", "challenge", "forgot_uno", "false_uno", "wrong_card",
        "wrong_accusation", "party_penalty", "reverse", "skip", "deal", "first_card", "turn", "cancel",
    ),
}  # fmt: skip
# What phones may declare besides, in a game scored in this mode only.
MODE_DECLARATIONS: dict[Mode, tuple[str, ...]] = {Mode.KNOCK_OUT: ("went_out",)}

_NEW_GAME = Shape(
    "a new game",
    {"players": Field(required=True)} | {f: Field() for f in (
        "ruleset", "house_rules", "mode", "target", "teams", "dealer", "track_turns", "profile", "final",
    )},
    code="bad_game",
)  # fmt: skip


def _round_shape(mode: Mode, *, new: bool) -> Shape:
    """In knock-out play a round is its finishing order (the winner, first in it, may be left out); else it needs
    the winner. Only a new round can carry open attacks on."""
    knock_out = mode is Mode.KNOCK_OUT
    fields = {"winner": Field(required=not knock_out), "hands": Field(required=True), "reshuffled": Field()}
    fields |= {"red_zero": Field(), "order": Field(required=knock_out), "last_card": Field()}
    if new:
        fields["carry_open_attacks"] = Field(check=parsed_by("bad_round", partial(flag, "carry_open_attacks")))
    return Shape("a knock-out round" if knock_out else "a round", fields, code="bad_round")


_ROUND_SHAPES = {(mode, new): _round_shape(mode, new=new) for mode in Mode for new in (True, False)}
_DECLARATION_SHAPES = {kind: declared.shape(kind) for kind, declared in DECLARATIONS.items()}


@dataclass(frozen=True, slots=True)
class RoundRequest:
    winner: str | None  # None: knock-out play, where the winner is the first in `order`
    hands: Mapping[str, Hand]
    reshuffled: bool
    red_zero: str | None
    order: Any  # knock-out play: every player, first out first (checked by the game)
    last_card: Any  # the card kind the winner went out on, or None (checked by the game)
    carry_open_attacks: bool  # score although attacks are open: they are served first in the next round

    def score(self, game: Game) -> None:
        """Score this round as the next one of `game`."""
        game.score_round(self.winner, self.hands, self.reshuffled, **self._details())

    def replace(self, game: Game, index: int) -> None:
        """Put this round in the place of round `index` of `game`."""
        game.edit_round(index, self.winner, self.hands, self.reshuffled, **self._details())

    def _details(self) -> dict[str, Any]:
        return {"red_zero": self.red_zero, "order": self.order, "last_card": self.last_card}


def new_game(body: Mapping[str, Any]) -> tuple[Game, Table]:
    """A new game and its first table, from `POST /api/games` (the profile is the web layer's)."""
    _NEW_GAME.read(body)
    game = Game(
        body["players"],
        body.get("mode", Mode.WINNER_COLLECTS.value),
        body.get("target", 500),
        body.get("teams"),
        ruleset=body.get("ruleset", Ruleset.UNO_ATTACK.value),
        house_rules=HouseRules.from_mapping(body.get("house_rules", {})),
        dealer=body.get("dealer"),
        final=body.get("final"),
    )
    table = Table(
        game.players, game.ruleset, game.house_rules, dealer=game.dealer, track_turns=body.get("track_turns", True)
    )
    return game, table


def declaration(body: Mapping[str, Any], ruleset: Ruleset, mode: Mode) -> tuple[str, Declaration]:
    """The kind and its declaration, with the body's fields checked against what the kind takes."""
    kind = body.get("kind")
    kinds = RULESET_DECLARATIONS[ruleset] + MODE_DECLARATIONS.get(mode, ())
    for only_in, mode_kinds in MODE_DECLARATIONS.items():
        if kind in mode_kinds and only_in is not mode:
            raise GameError(
                f"kind = {kind!r}: a player goes out of the round in play only in {only_in.label} play; this game is "
                f"scored {mode.label}, where the round ends when the first player goes out"
            )
    if not isinstance(kind, str) or kind not in kinds:
        raise GameError(f"kind = {kind!r:.40} is not accepted in {ruleset.value}; expected one of " + ", ".join(kinds))
    _DECLARATION_SHAPES[kind].read(body)
    return kind, DECLARATIONS[kind]


def round_request(body: Mapping[str, Any], mode: Mode, *, new: bool) -> RoundRequest:
    """A round to score (`new`) or a correction of one."""
    fields = _ROUND_SHAPES[mode, new].read(body)
    return RoundRequest(
        fields.get("winner"),
        fields["hands"],
        fields.get("reshuffled", False),
        fields.get("red_zero"),
        fields.get("order"),
        fields.get("last_card"),
        fields.get("carry_open_attacks", False),
    )
