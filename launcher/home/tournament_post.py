"""A table's tournaments on the broker: what it sends (signed) and what it takes (only what is signed with a key it
holds, within budget).

Topics under uno-launcher/tournament/<id>/, every payload sealed (launcher/home/tournament_wire.py):
    setup                      the players and tables (retained; any table holding the key may send it again)
    round/<table>/<number>     a round's newest version, points null once taken back (retained; <table> scores and
                               corrects it; every table holding it tells it again at its connection, and answers an
                               older version with its newest, signed as <table>'s; a newer version of a table's own
                               round, from before its store was restored from a backup, is taken back by it too)
    ask/<table>                "what do you have": every table that hears it tells its own again (not retained)

Each time a table (re)connects it tells every round it holds (the ones it scored, and the other tables' as it last
heard them), and asks, so a broker that lost its retained messages (a power cut, a new broker, wiped persistence) is
filled again, even with the table that scored a round switched off, and a table that was away catches up. An ask is
answered with the table's own rounds only: asks come again after every flood (launcher/home/mqtt.py's catch-up),
and an answer of every table's rounds from every table would be the flood again, times the tables. A setup
cleared on the broker is put back by every table holding it (a round by its own table), and an older version is
answered with the newest, each at most ANSWERS_PER_MINUTE a minute for one topic: a client replaying or clearing
again and again costs the tables a bounded number of messages.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from launcher.access.budgets import OverBudget, PerMinute
from launcher.clock import REAL_CLOCK, Clock
from launcher.config import TOURNAMENT_LEVEL
from launcher.events import Event, EventType
from launcher.game.rotation import TournamentError
from launcher.home.tournament import TournamentBook, Version
from launcher.home.tournament_wire import open_sealed, seal
from launcher.refusals import Refusal
from launcher.threads import StoppableThread

log = logging.getLogger(__name__)

ROOT = "uno-launcher"
MAX_MESSAGE_BYTES = 4096  # a setup of 16 names or a round of 4 scores is far below
SETUPS_PER_MINUTE = 6  # setups a minute taken from one table: a family sets up one an evening
ROUNDS_PER_MINUTE = 240  # new rounds and corrections a minute from one table: a whole catch-up of several at once
ASKS_PER_MINUTE = 6  # asks a minute answered for one table: it asks once per connection
# Answers to an older version, or to a wipe, a minute for one topic: a table that missed a correction needs one;
# without a bound, a client replaying a seen old version (or clearing a topic) over and over made every table
# holding it publish once per message.
ANSWERS_PER_MINUTE = 2
MAX_EARLY = 512  # signed rounds heard before their setup (a broker sends retained messages in any order)
HELD_RETRY_S = 15.0  # a round refused over budget is tried again this soon: a quarter of a minute's budget is back

Signed = tuple[str, str]  # (topic, payload) to publish retained, or not: see `Outgoing`


def topic(id: str, *levels: str) -> str:
    return "/".join((ROOT, TOURNAMENT_LEVEL, id, *levels))


class TournamentPost:
    def __init__(self, book: TournamentBook, *, check_store: Callable[[], None], clock: Clock = REAL_CLOCK) -> None:
        """`check_store`: raises when the store may not grow ([limits] store_mb)."""
        self._book = book
        self._table = book.table
        self._check_store = check_store
        self._setups = PerMinute(Refusal.TOO_MANY_DECLARATIONS, "tournament setups", SETUPS_PER_MINUTE, clock)
        self._rounds = PerMinute(Refusal.TOO_MANY_DECLARATIONS, "tournament rounds", ROUNDS_PER_MINUTE, clock)
        self._asks = PerMinute(Refusal.TOO_MANY_DECLARATIONS, "tournament asks", ASKS_PER_MINUTE, clock)
        self._answers = PerMinute(Refusal.TOO_MANY_DECLARATIONS, "tournament answers", ANSWERS_PER_MINUTE, clock)
        self._clock = clock
        self._lock = threading.Lock()  # the rounds held over budget: held by the inbox, taken by their own thread
        self._held: OrderedDict[tuple[str, str, str], dict[str, Any]] = OrderedDict()  # (id, table, number): body
        self._retrying: StoppableThread | None = None
        self._early: OrderedDict[tuple[str, str, str], dict[str, Any]] = OrderedDict()  # (id, table, number): body

    # --- what this table sends --------------------------------------------------------------------------------

    def outgoing(self, event: Event) -> list[Signed]:
        """What an event of this table's own becomes on the broker: its setup or round, signed; [] for others."""
        data = event.data
        if data.get("origin") != self._table or event.type not in (
            EventType.TOURNAMENT_SET_UP,
            EventType.TOURNAMENT_ROUND,
        ):
            return []
        id = data["tournament"]
        key = self._book.key(id)
        if key is None:  # a tournament from before tables shared a key: this table's alone
            return []
        if event.type == EventType.TOURNAMENT_SET_UP:
            body = {k: data[k] for k in ("players", "tables", "created_ts")}
            return [(topic(id, "setup"), seal(key, topic(id, "setup"), self._table, body))]
        return [self._round(key, id, self._table, data["number"], Version(data["version"], data["points"]))]

    def announcements(self, id: str | None = None, *, own: bool = False) -> list[Signed]:
        """Every setup this table holds (of one tournament, or all) and every round it holds, signed: the other
        tables' as theirs, with their version, so that a table that is off is vouched for; `own`: only this
        table's rounds."""
        out = []
        for held in [id] if id is not None else self._book.held():
            key, setup = self._book.key(held), self._book.setup(held)
            if key is None or setup is None:
                continue
            out.append(self._setup(key, held, setup))
            for table in [self._table] if own else setup["tables"]:
                out += [self._round(key, held, table, n, v) for n, v in sorted(self._book.told(held, table).items())]
        return out

    def asks(self, id: str | None = None) -> list[Signed]:
        """ "What do you have" for one tournament or every one held, each with a nonce of its own."""
        out = []
        for held in [id] if id is not None else self._book.held():
            key = self._book.key(held)
            if key is not None:
                ask = topic(held, "ask", self._table)
                out.append((ask, seal(key, ask, self._table, {"nonce": secrets.token_hex(16)})))
        return out

    def wiped(self, levels: list[str]) -> list[Signed]:
        """A topic under uno-launcher/tournament/ emptied (a retained message cleared by any client): this table's
        setup or own round put back as it holds it, so a table joining meanwhile still finds it, at most
        ANSWERS_PER_MINUTE a minute for one topic; [] for the rest."""
        id, kind = levels[0] if levels else "", levels[1:]
        key, setup = self._book.key(id), self._book.setup(id)
        if key is None or setup is None:
            return []
        if kind == ["setup"]:
            put_back = [self._setup(key, id, setup)]
        elif len(kind) == 3 and kind[:2] == ["round", self._table]:
            mine = self._book.told(id, self._table)
            put_back = [self._round(key, id, self._table, n, v) for n, v in mine.items() if str(n) == kind[2]]
        else:
            return []
        if put_back:
            self._spend(self._answers, topic(*levels), grows=False)
        return put_back

    def _setup(self, key: bytes, id: str, setup: dict[str, Any]) -> Signed:
        return topic(id, "setup"), seal(key, topic(id, "setup"), self._table, setup)

    def _round(self, key: bytes, id: str, table: str, number: int, told: Version) -> Signed:
        """Round `number` of `table`, signed as that table's (the key is the tournament's, not one table's)."""
        at = topic(id, "round", table, str(number))
        points = None if told.points is None else dict(told.points)
        return at, seal(key, at, table, {"number": number, "version": told.version, "points": points})

    # --- what comes from the broker -------------------------------------------------------------------------

    def receive(self, levels: list[str], payload: bytes) -> list[Signed]:
        """A message under uno-launcher/tournament/: `levels` after it, e.g. [id, "setup"]. Returns what to send
        in answer (to an ask); anything unsigned, foreign, replayed or over budget is a TournamentError."""
        if len(payload) > MAX_MESSAGE_BYTES:
            raise TournamentError("too_large", f"{len(payload)} bytes is more than a tournament message holds")
        key = self._book.key(levels[0]) if levels else None
        if key is None:
            raise TournamentError("unknown_tournament", "no tournament this table holds the key of")
        try:
            data = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise TournamentError("bad_json", "the payload is not JSON text") from None
        id, kind = levels[0], levels[1:]
        opened = open_sealed(key, topic(*levels), data)
        if kind == ["setup"]:
            return self._take_setup(id, opened.sender, opened.body)
        if len(kind) == 3 and kind[0] == "round" and opened.sender == kind[1]:
            return self._take_round(id, kind[1], kind[2], opened.body)
        if len(kind) == 2 and kind[0] == "ask" and opened.sender == kind[1]:
            return self._take_ask(id, opened.sender, opened.body)
        raise TournamentError("bad_message", f"no tournament message from {opened.sender!r} goes to {'/'.join(kind)!r}")

    def _take_setup(self, id: str, sender: str, body: dict[str, Any]) -> list[Signed]:
        created = body.get("created_ts")
        if isinstance(created, bool) or not isinstance(created, int | float) or not 0 < created < 1e11:
            raise TournamentError("bad_message", "a setup needs created_ts, seconds since the epoch")
        if self._book.setup(id) is not None:
            self._book.apply_setup(id, body, origin=None)  # the same again: nothing; another: refused
            return []
        self._spend(self._setups, sender)
        self._book.apply_setup(id, body, origin=None)
        for early in [e for e in self._early if e[0] == id]:
            try:  # each judged now as it would have been had the setup come first
                self._take_round(*early, self._early.pop(early))
            except TournamentError as e:
                log.warning(
                    "tournament %s: round %s at %s, heard before its setup, refused: %s", id, early[2], early[1], e
                )
        return []

    def _take_round(self, id: str, table: str, number_text: str, body: dict[str, Any]) -> list[Signed]:
        number, version, points = body.get("number"), body.get("version"), body.get("points")
        if not isinstance(number, int) or isinstance(number, bool) or str(number) != number_text:
            raise TournamentError("bad_message", "the round does not match its topic")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise TournamentError("bad_message", "a round needs its version, counted from 1")
        if points is not None and not isinstance(points, dict):
            raise TournamentError("bad_points", "a round's points are an object of player: points, or null")
        if self._book.setup(id) is None:  # kept, signed, until the setup comes
            self._early[(id, table, number_text)] = body
            while len(self._early) > MAX_EARLY:
                self._early.popitem(last=False)
            return []
        before = self._book.told(id, table).get(number)
        if before is not None and version < before.version:
            # An older version: an echo from before a correction, a table that missed one, or a replay kept retained
            # over the newest. The newest goes back on the broker, so a table joining reads it, even while the table
            # that scored it is off (from each table that holds it, at most ANSWERS_PER_MINUTE a minute).
            key = self._book.key(id)
            assert key is not None, "a round is only taken for a tournament whose key is held (receive)"
            answer = self._round(key, id, table, number, before)
            self._spend(self._answers, answer[0], grows=False)
            return [answer]
        if before is None or version > before.version:
            try:
                self._spend(self._rounds, table)
            except TournamentError:
                self._hold((id, table, number_text), body)
                raise
        self._book.apply_round(id, table, number, Version(version, points), origin=None)
        return []

    def _hold(self, at: tuple[str, str, str], body: dict[str, Any]) -> None:
        """A signed round refused over budget is never dropped for good: its newest version is kept and taken once
        the budget (or the store) has room, by a thread that ends when nothing is held (or at `close`)."""
        with self._lock:
            kept = self._held.get(at)
            if kept is None or body["version"] > kept["version"]:
                self._held[at] = body
            while len(self._held) > MAX_EARLY:
                self._held.popitem(last=False)
            if self._retrying is None:
                self._retrying = StoppableThread(self._take_held, "tournament-held", clock=self._clock)
                self._retrying.start()

    def close(self) -> None:
        """Stop trying the held rounds again (they are asked for at the next connection). Safe twice."""
        with self._lock:
            retrying = self._retrying
        if retrying is not None:
            retrying.stop()

    def _take_held(self) -> None:
        with self._lock:
            retrying = self._retrying
        assert retrying is not None, "started by _hold, under the lock"
        while not retrying.stopping.wait(HELD_RETRY_S):
            with self._lock:
                held, self._held = self._held, OrderedDict()
            for (id, table, number), body in held.items():
                try:  # refused over budget again, it is held again
                    self._take_round(id, table, number, body)
                except TournamentError as e:
                    if e.code != "over_budget":
                        log.info("tournament %s: round %s at %s, held over budget, not taken: %s", id, number, table, e)
            with self._lock:
                if not self._held:
                    self._retrying = None
                    return

    def _take_ask(self, id: str, sender: str, body: dict[str, Any]) -> list[Signed]:
        nonce = body.get("nonce")
        if not isinstance(nonce, str) or len(nonce) != 32:
            raise TournamentError("bad_message", "an ask needs its nonce")
        if not self._book.first_ask(nonce):  # before the budget: a replayed ask spends none of its table's
            raise TournamentError("replayed", "this ask was answered already")
        self._spend(self._asks, sender, grows=False)
        return self.announcements(id, own=True)

    def _spend(self, budget: PerMinute, sender: str, *, grows: bool = True) -> None:
        try:
            if grows:
                self._check_store()
            budget.take(sender)
        except OverBudget as e:
            raise TournamentError("over_budget", str(e)) from None
