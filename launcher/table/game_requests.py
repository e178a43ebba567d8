"""What the phones send about the game, checked field by field and turned into calls on the pure model.

Each declaration is an action of the registry (launcher/table/game_actions.py: the fields it takes, the table method it
calls); a new game's scoring options and their defaults are those of launcher/table/game_options.py. Which fields a body
takes is checked by the one parser of request bodies (launcher/access/bodies.py: `BodyError`, with the game's codes);
their
values by the game itself (`GameError`s naming the field).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from launcher.access.bodies import Field, Shape, parsed_by
from launcher.game import Game, GameError, HouseRules, Mode, Ruleset, Table
from launcher.game.cards import flag
from launcher.game.scoring import Hand
from launcher.table import game_actions
from launcher.table.game_actions import ACTIONS, BY_KIND, Action
from launcher.table.game_options import FINAL, MODE, OPTIONS, TARGET, TEAMS

# The players and the table's settings, then the scoring options of the registry (launcher/table/game_options.py).
_NEW_GAME = Shape(
    "a new game",
    {"players": Field(required=True)}
    | {f: Field() for f in ("ruleset", "house_rules", "dealer", "track_turns", "profile")}
    | {option.name: Field() for option in OPTIONS},
    code="bad_game",
)


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
_DECLARATION_SHAPES = {
    action.kind: Shape(
        f"a {action.kind} declaration",
        {"kind": Field(required=True)} | {f.name: Field(required=f.required) for f in action.fields},
        code="bad_declaration",
    )
    for action in ACTIONS
}


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
    mode = Mode.parse(MODE.value(body, Mode.WINNER_COLLECTS))
    game = Game(
        body["players"],
        mode,
        TARGET.value(body, mode),
        TEAMS.value(body, mode),
        ruleset=body.get("ruleset", Ruleset.UNO_ATTACK.value),
        house_rules=HouseRules.from_mapping(body.get("house_rules", {})),
        dealer=body.get("dealer"),
        final=FINAL.value(body, mode),
    )
    table = Table(
        game.players, game.ruleset, game.house_rules, dealer=game.dealer, track_turns=body.get("track_turns", True)
    )
    return game, table


def declaration(body: Mapping[str, Any], ruleset: Ruleset, mode: Mode) -> Action:
    """The action a declaration names, with the body's fields checked against what it takes."""
    kind = body.get("kind")
    action = BY_KIND.get(kind) if isinstance(kind, str) else None
    if action is not None and ruleset in action.rulesets and not action.offered(ruleset, mode):
        only_in = " or ".join(f"{m.label} play" for m in action.modes or ())
        raise GameError(
            f"kind = {kind!r}: a player goes out of the round in play only in {only_in}; this game is "
            f"scored {mode.label}, where the round ends when the first player goes out"
        )
    if action is None or not action.offered(ruleset, mode):
        kinds = game_actions.kinds(ruleset, mode)
        raise GameError(f"kind = {kind!r:.40} is not accepted in {ruleset.value}; expected one of " + ", ".join(kinds))
    _DECLARATION_SHAPES[action.kind].read(body)
    return action


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
