"""Every declaration a phone can make about the game, each written once: its kind, the rulesets (and modes, and
house rule) it belongs to, the body fields it takes with their limits, the table method it calls, and where and
how the page shows it (its buttons: group, symbol, the catalogue key of its words, the values a button sends).

The request checks (launcher/table/game_requests.py), the OpenAPI description of POST /api/attacks (webui/openapi.py)
and the rules every phone receives (launcher/table/game_view.py, from which webui/static/game.js draws its declaration
buttons) are all made from `ACTIONS`. A new play is one entry here, its method on the table of its ruleset
(launcher/game/plays.py) and its words in the catalogues.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from launcher.game import CLASSIC, UNO_ATTACK, GameError, Mode, Ruleset
from launcher.game.rulesets import MAX_PLAYERS
from launcher.refusals import Refusal

_BOTH = frozenset(Ruleset)
_ATTACK = frozenset({Ruleset.UNO_ATTACK})
_CLASSIC = frozenset({Ruleset.CLASSIC})
_NAME = {"type": "string"}
_CARD_EMOJI = "🃏\ufe0f"  # the playing card as an emoji, not as a text glyph


@dataclass(frozen=True, slots=True)
class ActionField:
    """A body field: its JSON Schema (the API's description; the game checks each value itself, by name) and how
    the page fills it: "who" (the player picked), "count" (identical cards at once, with that house rule), "catchers"
    (how many players caught a forgotten UNO), "first_card" (the card chosen) or "preset" (the value the button
    sends)."""

    name: str
    schema: Mapping[str, Any]
    page: str
    required: bool = True

    def view(self) -> dict[str, Any]:
        return {"required": self.required, "page": self.page, **self.schema}


BY = ActionField("by", _NAME, "who")  # who played the card
PLAYER = ActionField("player", _NAME, "who")  # who takes the penalty, or whose turn it is
COUNT = ActionField("count", {"type": "integer", "minimum": 1}, "count", required=False)
CATCHERS = ActionField("catchers", {"type": "integer", "minimum": 1, "maximum": MAX_PLAYERS - 1}, "catchers", False)
LEGAL = ActionField("legal", {"type": "boolean"}, "preset")
CARDS = ActionField("cards", {"type": "integer", "minimum": 1}, "preset", required=False)
CARD = ActionField("card", {"enum": sorted(set(UNO_ATTACK.kind_ids) | set(CLASSIC.kind_ids))}, "first_card")


@dataclass(frozen=True, slots=True)
class Button:
    """One button of the page for an action: its catalogue key, its symbol (never colour alone), the field values
    it sends, and the rulesets it is for (when the words differ by ruleset)."""

    id: str
    words: str
    symbol: str
    preset: Mapping[str, Any] = field(default_factory=dict)
    rulesets: frozenset[Ruleset] = _BOTH

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "words": self.words,
            "symbol": self.symbol,
            "preset": dict(self.preset),
            "rulesets": sorted(r.value for r in self.rulesets),
        }


@dataclass(frozen=True, slots=True)
class Action:
    """A declaration: `method` of the table of its ruleset, called with the body's fields in their order (a field
    left out takes the method's default). `group`: where the page puts its buttons (cards, penalties, start, fix,
    or first_card: the card turned up, with its own picker)."""

    kind: str
    rulesets: frozenset[Ruleset]
    fields: tuple[ActionField, ...]
    method: str
    group: str
    buttons: tuple[Button, ...]
    house_rule: str | None = None  # offered only with this house rule on
    modes: frozenset[Mode] | None = None  # offered only in these modes; None: in every mode

    def apply(self, table: Any, body: Mapping[str, Any]) -> object:
        """Call the table's method with the body's fields (already checked to be this action's)."""
        result = getattr(table, self.method)(*(body[f.name] for f in self.fields if f.name in body))
        if self.kind == "first_card" and result is False:
            raise GameError(
                f"{body['card']} goes back into the deck: turn up another card",
                Refusal.FIRST_CARD_BACK,
                card=body["card"],
            )
        return result

    def offered(self, ruleset: Ruleset, mode: Mode) -> bool:
        return ruleset in self.rulesets and (self.modes is None or mode in self.modes)

    def view(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "rulesets": sorted(r.value for r in self.rulesets),
            "modes": None if self.modes is None else sorted(m.value for m in self.modes),
            "house_rule": self.house_rule,
            "group": self.group,
            "fields": {f.name: f.view() for f in self.fields},
            "buttons": [button.view() for button in self.buttons],
        }


def _card(kind: str, rulesets: frozenset[Ruleset], symbol: str, words: str, *, count: bool = False) -> Action:
    """A card someone played: `by`, and with `count` several identical ones at once (that house rule)."""
    fields = (BY, COUNT) if count else (BY,)
    return Action(kind, rulesets, fields, kind, "cards", (Button(kind, words, symbol),))


def _penalty(kind: str, rulesets: frozenset[Ruleset], symbol: str, words: str, **more: Any) -> Action:
    """A penalty `player` takes."""
    return Action(kind, rulesets, (PLAYER,), kind, "penalties", (Button(kind, words, symbol),), **more)


# In the order the page offers them, group by group.
ACTIONS: tuple[Action, ...] = (
    _card("played", _BOTH, "▶", "decl.played"),
    _card("hit2", _ATTACK, "✋2", "kind.hit_2", count=True),
    _card("wild_all_hit", _ATTACK, "✋✋", "kind.wild_all_hit"),
    _card("wild_hit_fire", _ATTACK, "🔥", "kind.wild_hit_fire"),
    _card("draw_two", _CLASSIC, "+2", "kind.draw_two", count=True),
    _card("wild_draw_four", _CLASSIC, "+4", "kind.wild_draw_four", count=True),
    _card("skip", _BOTH, "⊘", "kind.skip", count=True),
    _card("reverse", _BOTH, "⇄", "kind.reverse", count=True),
    # Knock-out play only: the player played their last card and leaves the round; the others play on.
    Action(
        "went_out", _BOTH, (PLAYER,), "went_out", "cards", (Button("went_out", "decl.went_out", "🏁"),),
        modes=frozenset({Mode.KNOCK_OUT}),
    ),
    Action(
        "declined", _BOTH, (PLAYER,), "declined", "penalties",
        (
            Button("declined", "decl.declined", "✋1", rulesets=_ATTACK),
            Button("declined", "decl.declined_classic", "✋1", rulesets=_CLASSIC),
        ),
    ),
    Action(
        "uno_penalty", _ATTACK, (PLAYER, CATCHERS), "uno_penalty", "penalties",
        (Button("uno_penalty", "decl.uno_penalty", "✋2"),),
    ),
    _penalty("suggestion_penalty", _ATTACK, "✋4", "decl.suggestion"),
    _penalty("party_penalty", _BOTH, "🎉", "decl.party_penalty", house_rule="party_penalties"),
    Action(
        "forgot_uno", _CLASSIC, (PLAYER, CATCHERS), "forgot_uno", "penalties",
        (Button("forgot_uno", "decl.forgot_uno", "+2"),),
    ),
    _penalty("false_uno", _CLASSIC, "+2", "decl.false_uno"),
    _penalty("wrong_card", _CLASSIC, "+2", "decl.wrong_card"),
    _penalty("wrong_accusation", _CLASSIC, "+2", "decl.wrong_accusation"),
    Action(
        "challenge", _CLASSIC, (PLAYER, LEGAL), "challenge", "penalties",
        (
            Button("challenge", "decl.challenge_legal", "?+4", {"legal": True}),
            Button("challenge_illegal", "decl.challenge_illegal", "!+4", {"legal": False}),
        ),
    ),
    Action(
        "deal", _CLASSIC, (CARDS,), "deal", "start",
        (
            Button("deal", "decl.deal", f"{_CARD_EMOJI}7", {"cards": 7}),
            Button("deal_5", "decl.deal_5", f"{_CARD_EMOJI}5", {"cards": 5}),  # the beginners' deal, for a shorter game
        ),
    ),
    Action("first_card", _BOTH, (CARD,), "first_card", "first_card", ()),
    Action("turn", _BOTH, (PLAYER,), "set_turn", "fix", (Button("turn", "decl.turn", "▶"),)),
    Action("cancel", _BOTH, (), "cancel", "fix", (Button("cancel", "decl.cancel", "✕"),)),
)  # fmt: skip

BY_KIND: dict[str, Action] = {action.kind: action for action in ACTIONS}


def kinds(ruleset: Ruleset, mode: Mode | None = None) -> tuple[str, ...]:
    """What phones may declare in `ruleset`, in the order the page offers: in `mode`, or (None) in every mode."""
    if mode is None:
        return tuple(a.kind for a in ACTIONS if ruleset in a.rulesets and a.modes is None)
    return tuple(a.kind for a in ACTIONS if a.offered(ruleset, mode))


def mode_kinds() -> dict[Mode, tuple[str, ...]]:
    """What phones may declare besides, in a game scored in that mode only."""
    return {
        m: tuple(a.kind for a in ACTIONS if a.modes is not None and m in a.modes)
        for m in Mode
        if any(a.modes is not None and m in a.modes for a in ACTIONS)
    }
