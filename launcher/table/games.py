"""The game at the table, kept for the phones: the current game and its table, saved before every answer.

`GameDesk` owns one `Game` (scores) and one `Table` (turns and demands) from `launcher/game/`, both pure. Phones
declare what was played and score rounds through it; the controller asks it whether a press must deal exact cards
(classic UNO) and tells it of every press, which it attributes to whoever owes the launcher. Every change is saved
(SQLite, `synchronous=FULL`) before it is published or answered, so a restart resumes exactly, in one commit with
whatever waits in the store's write-behind (a press's events, the hopper's count: one commit a press). A change the
store cannot take (a full or read-only disk) is refused with the StoreError, the game as it was; but a press has
happened whatever the disk says: it is kept in memory and its save tried again until it goes through (`_resave`).

Each job has its own home: the checks of what phones send in game_requests.py, what they are shown in
game_view.py, the aiming servo in aiming.py (given as `on_change`), the rules themselves in launcher/game/.
"""

from __future__ import annotations

import itertools
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from launcher.clock import REAL_CLOCK, Clock
from launcher.errors import LauncherError
from launcher.events import EventBus, EventType
from launcher.game import Cause, Game, Ruleset, Table
from launcher.game.attacks import Demand
from launcher.game.entries import RoundEntry
from launcher.press.hopper import NewestSaver
from launcher.refusals import Refusal
from launcher.store import Store, StoreError, WriteBehind, game_table
from launcher.table import game_requests
from launcher.table.game_view import game_view, table_view
from launcher.table.history import UNREADABLE, History, read_state

log = logging.getLogger(__name__)


class NoGame(LauncherError, LookupError):
    """There is no current game."""


class GameOver(LauncherError, RuntimeError):
    """The current game is over: start a new one."""


class CannotUndo(LauncherError, RuntimeError):
    """The last declaration cannot be undone; `code` says why: UNDO_TOO_LATE (a press came after it, so the table
    before it is no longer the table's past) or NOTHING_TO_UNDO (no declaration since the round began, or it was
    undone already)."""

    def __init__(self, code: Refusal, message: str) -> None:
        super().__init__(message)
        self.code = code


class GameDesk:
    def __init__(
        self,
        store: Store,
        bus: EventBus,
        *,
        history: History,
        on_change: Callable[[Game, Table], None] | None = None,
        clock: Clock = REAL_CLOCK,
        writes: WriteBehind | None = None,
    ) -> None:
        self._store = store
        # Every change is saved under the lock, one at a time, often (each press), through the daemon's write-behind:
        # the press's events and the hopper's count waiting there go in the same commit (the SD card's wear).
        self._own_writes = writes is None
        self._writes = WriteBehind(store, clock=clock) if writes is None else writes
        self._unsaved = False  # a press's change is in play but not in the store yet: `_resaver` tries again
        # Handed a new number for each such press (the saver skips a repeat of what it last wrote).
        self._unsaved_presses = itertools.count()
        self._resaver: NewestSaver[int] = NewestSaver(lambda _: self._resave(), "game-saver", clock=clock)
        self._bus = bus
        self._history = history  # told of every game that ends, is abandoned or is no longer finished
        self._on_change = on_change  # after every saved change, e.g. to turn the launcher to who must press
        # Around the start of a game, outside its lock: a launcher armed in advance gives its arm back first.
        self.starting: Callable[[], AbstractContextManager[None]] = nullcontext
        self._lock = threading.Lock()
        self._id: int | None = None
        self._game: Game | None = None
        self._table: Table | None = None
        self._shown: tuple[Game, Table, dict[str, Any]] | None = None  # the last view made, and of what (`_view`)
        # The last declaration and the table just before it, kept (and saved) so it can be undone exactly:
        # {"kind", "table", "pressed"}; `pressed` once a press came after it. None: nothing to undo.
        self._undo: dict[str, Any] | None = None
        with store.connect() as conn:
            row = game_table.current(conn)
        if row is not None:
            try:
                state = read_state(row[1])
                game, table, undo = Game.from_dict(state["game"]), Table.from_dict(state["table"]), state.get("undo")
            except UNREADABLE as e:  # only an edited or damaged database: the row is kept as it is
                log.warning("game %d is not in play: its stored state cannot be read (%s)", row[0], e)
                return
            self._id, self._game, self._table = row[0], game, table
            self._undo = undo  # games saved before undo was kept have none
            history.settle(self._id, self._game)  # a power cut may have come between its save and its summary

    # --- what the controller asks --------------------------------------------------------------------------------

    def check_press(self, player: str) -> None:
        """Before a phone presses for `player`: refuse (NotYourPress names who is asked) when nothing at the table
        calls for it, so that the motor never runs for a press that would count for the wrong player."""
        with self._lock:
            if self._game is None or self._table is None:
                raise NoGame("there is no game: a press for a player needs one")
            if self._game.over:
                raise GameOver("the game is over: press without a player, or start a new game")
            self._table.check_press(player)

    def cards_owed(self, player: str | None) -> Demand | None:
        """Classic UNO: the demand whose exact cards a press for `player` (None: whoever is asked) must deal;
        None: the schedule decides."""
        with self._lock:
            if self._game is None or self._table is None or self._game.ruleset is not Ruleset.CLASSIC:
                return None
            owed = self._table.owed_by(player)
            if owed is not None:
                return owed if owed.cards else None
            # Nothing owed: the launcher is the draw pile, and a press draws one card for the player (whose turn).
            return Demand(player or self._table.current or "", Cause.PLAIN, cards=1)

    def credited(self, player: str | None) -> str | None:
        """Who a press for `player` (None: whoever is asked) is told as, without using it up: a jammed press."""
        with self._lock:
            if self._game is None or self._table is None or self._game.over:
                return None
            return self._table.credited(player)

    def pressed(self, fired: bool, cards: int, player: str | None) -> str | None:
        """A press for `player` (None: whoever is asked) ended: attribute it. Returns that player, if any."""
        with self._lock:
            if self._game is None or self._table is None or self._game.over:
                return None
            game, table = self._copies()
            press = table.on_press(fired, cards, player)
            if press.player is not None:
                game.record_press(press.player, cards)
            try:
                self._commit(game, table, None if self._undo is None else {**self._undo, "pressed": True})
            except StoreError as e:  # the cards are out whatever the disk says: kept, and saved once it can be
                log.error("the press for %s is kept in memory until the store takes it: %s", press.player, e)
                self._adopt(game, table, None if self._undo is None else {**self._undo, "pressed": True})
                self._unsaved = True
                self._resaver.save(next(self._unsaved_presses))
            view, scores = table_view(table), game.scores()
        data = {"player": press.player, "cause": press.cause.value, "fired": fired, "cards": cards}
        # The table and the scores (the press counts) are all a press changes: phones need not read the game.
        self._bus.publish(EventType.ATTACK_PROGRESS, {**data, "closed": press.closed, "table": view, "scores": scores})
        if press.closed and view["pending"] is None and press.cause.value != "plain":
            self._bus.publish(
                EventType.ATTACK_FINISHED, {"player": press.player, "cause": data["cause"], "table": view}
            )
        return press.player

    # --- what the phones ask -------------------------------------------------------------------------------------

    def view(self) -> dict[str, Any] | None:
        """The current game as the phones are shown it; shared by every caller until the next change: read only."""
        with self._lock:
            return self._view()

    def new_game(self, body: Mapping[str, Any]) -> dict[str, Any]:
        game, table = game_requests.new_game(body)
        with self.starting(), self._lock:
            if self._id is not None and self._game is not None and not self._game.over:
                self._history.settle(self._id, self._game, replaced=True)  # abandoned (a finished one is settled)
            state, rounds = _text(_state(game, table, None)), [_text(entry.to_dict()) for entry in game.entries]
            made: list[int] = []

            def write(conn: sqlite3.Connection) -> None:
                made[:] = [game_table.new(conn, state, rounds, time.time())]  # a try that was taken back: replaced

            self._writes.now(write)
            self._id = made[0]
            self._game, self._table, self._undo = game, table, None
            if self._on_change is not None:
                self._on_change(game, table)
            view = self._view()
        self._bus.publish(
            EventType.GAME_STARTED,
            {"game": self._id, "players": list(game.players), "ruleset": game.ruleset.value, "mode": game.mode.value,
             "target": game.target},
        )  # fmt: skip
        return view  # type: ignore[return-value]

    def declare(self, body: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            game, table = self._copies()
            action = game_requests.declaration(body, game.ruleset, game.mode)
            action.apply(table, body)
            kind = action.kind
            assert self._table is not None  # _copies() checked it
            self._commit(game, table, {"kind": kind, "table": self._table.to_dict(), "pressed": False})
            view = table_view(table)
            pending = view["pending"]
        self._bus.publish(
            EventType.ATTACK_STARTED,
            {"kind": kind, "by": body.get("by"), "player": body.get("player") or (pending or {}).get("player"),
             "out_of_turn": table.out_of_turn, "jump_in": game.house_rules.jump_in, "table": view},
        )  # fmt: skip
        return self.view()  # type: ignore[return-value]

    def undo_declaration(self) -> dict[str, Any]:
        """Put the table back exactly as it was before the last declaration (what is owed, whose turn), while no
        press came after it: a press changes what the table owes, so undoing past it would lose or repeat it."""
        with self._lock:
            game, _ = self._copies()
            _still_on(game)
            if self._undo is None:
                raise CannotUndo(Refusal.NOTHING_TO_UNDO, "nothing to undo: no card or penalty was declared since")
            if self._undo["pressed"]:
                raise CannotUndo(
                    Refusal.UNDO_TOO_LATE,
                    "too late to undo: the launcher was pressed after it; use Cancel or correct it",
                )
            kind = self._undo["kind"]
            table = Table.from_dict(self._undo["table"])
            self._commit(game, table, None)
            view = table_view(table)
        self._bus.publish(EventType.ATTACK_UNDONE, {"kind": kind, "table": view})
        return self.view()  # type: ignore[return-value]

    def score_round(self, body: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            game, table = self._copies()
            entry = game_requests.round_request(body, game.mode, new=True)
            _still_on(game)
            carried = table.close_round(entry.carry_open_attacks)  # refused while someone owes the launcher
            entry.score(game)
            result = game.rounds[-1]
            if not game.over:
                table = table.next_round(game.dealer, game.active_players, carried)
            self._commit(game, table)
            scores = game.scores()
        self._bus.publish(
            EventType.ROUND_SCORED,
            {"round": result.index, "winner": result.entry.winner, "result": result.to_dict(), "scores": scores},
        )
        if game.over:
            self._bus.publish(
                EventType.GAME_FINISHED, {"winners": list(game.winners), "losers": list(game.losers), "scores": scores}
            )
        return self.view()  # type: ignore[return-value]

    def undo_last_round(self) -> dict[str, Any]:
        with self._lock:
            game, table = self._copies()
            game.undo_last()
            self._commit(game, _reseated(game, table))
            scores = game.scores()
        self._bus.publish(EventType.ROUND_UNDONE, {"round": len(game.rounds), "scores": scores})
        return self.view()  # type: ignore[return-value]

    def edit_round(self, index: int, body: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            game, table = self._copies()
            entry = game_requests.round_request(body, game.mode, new=False)
            entry.replace(game, index)
            self._commit(game, _reseated(game, table))
            scores = game.scores()
        self._bus.publish(EventType.ROUND_EDITED, {"round": index, "scores": scores})
        return self.view()  # type: ignore[return-value]

    def close(self) -> None:
        """Save a press still kept in memory (once more), and stop a write-behind of its own once nothing changes
        the game any more (the daemon's shared one is the daemon's to stop). Safe to call twice."""
        self._resaver.close()
        if self._own_writes:
            with self._lock:
                self._writes.close()

    @property
    def unsaved(self) -> bool:
        """A press's change is kept in memory only, waiting for the store to take it."""
        return self._unsaved

    # --- internals -----------------------------------------------------------------------------------------------

    def _copies(self) -> tuple[Game, Table]:
        """With the lock held: copies to change, so that a refused change leaves the game as it was."""
        if self._game is None or self._table is None:
            raise NoGame("there is no game yet: start one")
        return self._game.copy(), Table.from_dict(self._table.to_dict())

    def _commit(self, game: Game, table: Table, undo: dict[str, Any] | None = None) -> None:
        """With the lock held: save the changed game and table durably, then make them current. `undo`: what
        undo_declaration would put back after this change (None: nothing, e.g. after a round is scored). Only the
        rounds the change scored or corrected are written: the state saved besides does not grow with the game."""
        assert self._id is not None and self._game is not None
        rounds = _changed(self._game.entries, game.entries)
        game_id, state = self._id, _text(_state(game, table, undo))
        self._writes.now(lambda conn: game_table.save(conn, game_id, state, len(game.entries), rounds))
        self._unsaved = False  # the state saved holds any press kept in memory before
        if _ends_or_changes_an_end(self._game, game):
            self._history.settle(self._id, game)
        self._adopt(game, table, undo)

    def _adopt(self, game: Game, table: Table, undo: dict[str, Any] | None) -> None:
        """With the lock held: make the changed game and table current."""
        self._game, self._table, self._undo = game, table, undo
        if self._on_change is not None:
            self._on_change(game, table)

    def _resave(self) -> None:
        """On the resaver's thread: save the game in play if a press left it unsaved (raises while the store still
        cannot take it: tried again)."""
        with self._lock:
            if self._unsaved and self._game is not None and self._table is not None:
                self._commit(self._game, self._table, self._undo)
                log.warning("the presses kept in memory are saved")

    def _view(self) -> dict[str, Any] | None:
        """With the lock held: the view of the current game, made once per change (every phone reads it after
        each press, and a long game's view is large). A change replaces the game and the table, never alters them."""
        if self._game is None or self._table is None:
            return None
        assert self._id is not None
        if self._shown is None or self._shown[0] is not self._game or self._shown[1] is not self._table:
            self._shown = (self._game, self._table, game_view(self._id, self._game, self._table))
        return self._shown[2]


def _still_on(game: Game) -> None:
    if game.over:
        raise GameOver("the game is over: start a new one")


def _ends_or_changes_an_end(before: Game | None, after: Game) -> bool:
    """The change ends the game, or corrects or undoes a round of a game that had ended: its history changes."""
    was_over = before is not None and before.over
    return (after.over or was_over) and (before is None or after.to_dict() != before.to_dict())


def _reseated(game: Game, table: Table) -> Table:
    """After an undo or a correction: when the players still in or the next dealer changed, the round in play is
    dealt again by the right dealer to the right players (its open demands go); otherwise it carries on."""
    if game.over or (table.players, table.dealer) == (game.active_players, game.dealer):
        return table
    return table.next_round(game.dealer, game.active_players)


def _changed(before: tuple[RoundEntry, ...], after: tuple[RoundEntry, ...]) -> dict[int, str]:
    """The rounds of `after` that `before` does not hold in their place (a change replaces the rounds it changes,
    and the tuple only when it changes one), by number, as stored."""
    if after is before:  # a press, a declaration: no round changed
        return {}
    return {n: _text(e.to_dict()) for n, e in enumerate(after) if n >= len(before) or e is not before[n]}


def _state(game: Game, table: Table, undo: dict[str, Any] | None) -> dict[str, Any]:
    """What is saved of the game but its rounds (game_table keeps those a row each)."""
    return {"game": game.to_dict_but_rounds(), "table": table.to_dict(), "undo": undo}


def _text(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"))
