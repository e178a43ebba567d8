"""The game at the table, kept for the phones: the current game and its table, saved before every answer.

`GameDesk` owns one `Game` (scores) and one `Table` (turns and demands) from `launcher/game/`, both pure. Phones
declare what was played and score rounds through it; the controller asks it whether a press must deal exact cards
(classic UNO) and tells it of every press, which it attributes to whoever owes the launcher. Every change is saved
(SQLite, `synchronous=FULL`) before it is published or answered, so a restart resumes exactly.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from launcher.events import EventBus, EventType
from launcher.game import Cause, Game, GameError, HouseRules, Mode, Ruleset, Table
from launcher.game.attacks import Demand
from launcher.game.cards import CLASSIC, UNO_ATTACK
from launcher.game.rulesets import HOUSE_RULE_TEXTS
from launcher.store import Store
from launcher.text import scrubbed

# What phones may declare, per ruleset; each maps to a Table method and the body fields it takes.
DECLARATIONS: dict[str, tuple[str, ...]] = {
    Ruleset.UNO_ATTACK: (
        "played", "declined", "hit2", "wild_all_hit", "wild_hit_fire", "uno_penalty", "suggestion_penalty",
        "party_penalty", "reverse", "skip", "first_card", "turn", "cancel",
    ),
    Ruleset.CLASSIC: (
        "played", "declined", "draw_two", "wild_draw_four", "challenge", "forgot_uno", "false_uno", "wrong_card",
        "wrong_accusation", "party_penalty", "reverse", "skip", "deal", "first_card", "turn", "cancel",
    ),
}  # fmt: skip

DECLARATION_FIELDS: dict[str, tuple[str, ...]] = {  # required fields first; "count" and "cards" are optional
    "played": ("by",),
    "declined": ("player",),
    "hit2": ("by", "count"),
    "wild_all_hit": ("by",),
    "wild_hit_fire": ("by",),
    "uno_penalty": ("player",),
    "suggestion_penalty": ("player",),
    "party_penalty": ("player",),
    "reverse": ("by", "count"),
    "skip": ("by", "count"),
    "draw_two": ("by", "count"),
    "wild_draw_four": ("by",),
    "challenge": ("player", "legal"),
    "forgot_uno": ("player",),
    "false_uno": ("player",),
    "wrong_card": ("player",),
    "wrong_accusation": ("player",),
    "deal": ("cards",),
    "first_card": ("card",),
    "turn": ("player",),
    "cancel": (),
}
_OPTIONAL = {"count", "cards"}
_NEW_GAME_FIELDS = {"players", "ruleset", "house_rules", "mode", "target", "teams", "dealer", "track_turns", "profile"}
_ROUND_FIELDS = {"winner", "hands", "reshuffled", "red_zero"}


class NoGame(Exception):
    """There is no current game."""


class GameOver(Exception):
    """The current game is over: start a new one."""


def rules() -> dict[str, Any]:
    """Everything the page needs to offer choices: rulesets, modes, decks, house rules, declarations."""
    return {
        "rulesets": [r.value for r in Ruleset],
        "modes": [m.value for m in Mode],
        "decks": {Ruleset.UNO_ATTACK.value: UNO_ATTACK.to_dict(), Ruleset.CLASSIC.value: CLASSIC.to_dict()},
        "house_rules": [
            {"key": t.key, "name": t.name, "explanation": t.explanation, "rulesets": [r.value for r in t.rulesets]}
            for t in HOUSE_RULE_TEXTS
        ],
        "declarations": {r.value: list(kinds) for r, kinds in DECLARATIONS.items()},
    }


def _demand(demand: Demand | None) -> dict[str, Any] | None:
    return None if demand is None else {**demand.to_dict(), "text": demand.describe()}


def _table_view(table: Table) -> dict[str, Any]:
    return {
        "dealer": table.dealer,
        "current": table.current,
        "direction": table.direction,
        "pending": _demand(table.pending()),
        "demands": [_demand(d) for d in table.demands],
    }


class GameDesk:
    def __init__(self, store: Store, bus: EventBus, *, aim_at: Callable[[int], None] | None = None) -> None:
        self._store = store
        self._bus = bus
        self._aim_at = aim_at  # turns the launcher to a seat, where an aiming servo is fitted
        self._lock = threading.Lock()
        self._id: int | None = None
        self._game: Game | None = None
        self._table: Table | None = None
        with store.connect() as conn:
            row = store.current_game(conn)
        if row is not None:
            self._id, state = row[0], scrubbed(json.loads(row[1]))  # an older version may have stored bad text
            self._game = Game.from_dict(state["game"])
            self._table = Table.from_dict(state["table"])

    # --- what the controller asks --------------------------------------------------------------------------------

    def cards_owed(self) -> Demand | None:
        """Classic UNO: the demand whose exact cards the next press must deal; None: the schedule decides."""
        with self._lock:
            if self._game is None or self._table is None or self._game.ruleset is not Ruleset.CLASSIC:
                return None
            pending = self._table.pending()
            if pending is not None:
                return pending if pending.cards else None
            # Nothing owed: the launcher is the draw pile, and a press draws one card for whose turn it is.
            return Demand(self._table.current or "", Cause.PLAIN, cards=1)

    def pressed(self, fired: bool, cards: int) -> str | None:
        """A press ended: attribute it to whoever owes the launcher. Returns that player, if any."""
        with self._lock:
            if self._game is None or self._table is None or self._game.over:
                return None
            game, table = self._copies()
            press = table.on_press(fired, cards)
            if press.player is not None:
                game.record_press(press.player, cards)
            self._commit(game, table)
            view = _table_view(table)
        data = {"player": press.player, "cause": press.cause.value, "fired": fired, "cards": cards}
        self._bus.publish(EventType.ATTACK_PROGRESS, {**data, "closed": press.closed, "table": view})
        if press.closed and view["pending"] is None and press.cause.value != "plain":
            self._bus.publish(
                EventType.ATTACK_FINISHED, {"player": press.player, "cause": data["cause"], "table": view}
            )
        return press.player

    # --- what the phones ask -------------------------------------------------------------------------------------

    def view(self) -> dict[str, Any] | None:
        with self._lock:
            return self._view()

    def new_game(self, body: Mapping[str, Any]) -> dict[str, Any]:
        _exact_fields("a new game", body, required={"players"}, allowed=_NEW_GAME_FIELDS)
        game = Game(
            body["players"],
            body.get("mode", Mode.WINNER_COLLECTS.value),
            body.get("target", 500),
            body.get("teams"),
            ruleset=body.get("ruleset", Ruleset.UNO_ATTACK.value),
            house_rules=HouseRules.from_mapping(body.get("house_rules", {})),
        )
        table = Table(
            game.players,
            game.ruleset,
            game.house_rules,
            dealer=body.get("dealer"),
            track_turns=body.get("track_turns", True),
        )
        with self._lock:
            with self._store.connect() as conn:
                self._id = self._store.new_game(conn, json.dumps(_state(game, table)), time.time())
            self._game, self._table = game, table
            self._aim(game, table)
            view = self._view()
        self._bus.publish(
            EventType.GAME_STARTED,
            {"game": self._id, "players": list(game.players), "ruleset": game.ruleset.value, "mode": game.mode.value,
             "target": game.target},
        )  # fmt: skip
        return view  # type: ignore[return-value]

    def declare(self, body: Mapping[str, Any]) -> dict[str, Any]:
        kind = body.get("kind")
        with self._lock:
            game, table = self._copies()
            if not isinstance(kind, str) or kind not in DECLARATIONS[game.ruleset]:
                raise GameError(
                    f"kind = {kind!r:.40} is not accepted in {game.ruleset.value}; expected one of "
                    + ", ".join(DECLARATIONS[game.ruleset])
                )
            fields = DECLARATION_FIELDS[kind]
            _exact_fields(
                f"a {kind} declaration",
                body,
                required={"kind", *(f for f in fields if f not in _OPTIONAL)},
                allowed={"kind", *fields},
            )
            args = {f: body[f] for f in fields if f in body}
            self._apply(table, kind, args)
            self._commit(game, table)
            view = _table_view(table)
            pending = view["pending"]
        self._bus.publish(
            EventType.ATTACK_STARTED,
            {"kind": kind, "by": args.get("by"), "player": args.get("player") or (pending or {}).get("player"),
             "table": view},
        )  # fmt: skip
        return self.view()  # type: ignore[return-value]

    def score_round(self, body: Mapping[str, Any]) -> dict[str, Any]:
        _exact_fields("a round", body, required={"winner", "hands"}, allowed=_ROUND_FIELDS)
        with self._lock:
            game, table = self._copies()
            if game.over:
                raise GameOver("the game is over: start a new one")
            result = game.score_round(
                body["winner"], body["hands"], body.get("reshuffled", False), red_zero=body.get("red_zero")
            )
            if not game.over:
                table = table.next_round(body["winner"], game.active_players)  # the winner deals
            self._commit(game, table)
            scoreboard = game.scoreboard()
        self._bus.publish(
            EventType.ROUND_SCORED, {"round": result.index, "winner": body["winner"], "scoreboard": scoreboard}
        )
        if game.over:
            self._bus.publish(EventType.GAME_FINISHED, {"winners": list(game.winners), "scoreboard": scoreboard})
        return self.view()  # type: ignore[return-value]

    def undo_last_round(self) -> dict[str, Any]:
        with self._lock:
            game, table = self._copies()
            game.undo_last()
            self._commit(game, table)
            scoreboard = game.scoreboard()
        self._bus.publish(EventType.ROUND_UNDONE, {"round": len(game.rounds), "scoreboard": scoreboard})
        return self.view()  # type: ignore[return-value]

    def edit_round(self, index: int, body: Mapping[str, Any]) -> dict[str, Any]:
        _exact_fields("a round", body, required={"winner", "hands"}, allowed=_ROUND_FIELDS)
        with self._lock:
            game, table = self._copies()
            game.edit_round(
                index, body["winner"], body["hands"], body.get("reshuffled", False), red_zero=body.get("red_zero")
            )
            self._commit(game, table)
            scoreboard = game.scoreboard()
        self._bus.publish(EventType.ROUND_EDITED, {"round": index, "scoreboard": scoreboard})
        return self.view()  # type: ignore[return-value]

    # --- internals -----------------------------------------------------------------------------------------------

    def _copies(self) -> tuple[Game, Table]:
        """With the lock held: copies to change, so that a refused change leaves the game as it was."""
        if self._game is None or self._table is None:
            raise NoGame("there is no game yet: start one")
        return Game.from_dict(self._game.to_dict()), Table.from_dict(self._table.to_dict())

    def _apply(self, table: Table, kind: str, args: dict[str, Any]) -> None:
        if kind == "turn":
            table.set_turn(args["player"])
        elif kind == "first_card":
            if not table.first_card(args["card"]):
                raise GameError(f"{args['card']} goes back into the deck: turn up another card")
        elif kind == "deal":
            table.deal(args.get("cards", 7))
        else:
            getattr(table, kind)(**args)

    def _commit(self, game: Game, table: Table) -> None:
        """With the lock held: save the changed game and table durably, then make them current."""
        assert self._id is not None
        with self._store.connect() as conn:
            self._store.save_game(conn, self._id, json.dumps(_state(game, table)))
        self._game, self._table = game, table
        self._aim(game, table)

    def _aim(self, game: Game, table: Table) -> None:
        """Face whoever must press next: the player who owes the launcher, else whose turn it is."""
        pending = table.pending()
        player = pending.player if pending is not None else table.current
        if self._aim_at is not None and player is not None:
            self._aim_at(game.players.index(player))  # seats as the game began, eliminated players included

    def _view(self) -> dict[str, Any] | None:
        if self._game is None or self._table is None:
            return None
        game, table = self._game, self._table
        return {
            "id": self._id,
            "players": list(game.players),
            "ruleset": game.ruleset.value,
            "house_rules": game.house_rules.to_dict(),
            "mode": game.mode.value,
            "target": game.target,
            "teams": game.scoreboard()["teams"],
            "track_turns": table.track_turns,
            "table": _table_view(table),
            "scoreboard": game.scoreboard(),
        }


def _state(game: Game, table: Table) -> dict[str, Any]:
    return {"game": game.to_dict(), "table": table.to_dict()}


def _exact_fields(what: str, body: Mapping[str, Any], *, required: set[str], allowed: set[str]) -> None:
    missing = sorted(required - set(body))
    if missing:
        raise GameError(f"{what} needs {', '.join(missing)}")
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise GameError(f"{what} takes no {', '.join(unknown)}; it takes {', '.join(sorted(allowed))}")
