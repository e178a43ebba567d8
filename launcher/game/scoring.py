"""Scoring a game: rounds, totals, eliminations, game over, the loser, and per-player statistics.

The rounds as entered are the truth; every total is their replay, so undoing or correcting any round recomputes
everything after it, and a change that would leave a later round impossible (a player already eliminated, a game
already over) is refused as a whole. Sides are the players, or the teams when playing in teams. No I/O:
`to_dict()` and `Game.from_dict()` round-trip exactly, and games stored before a field existed still load.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from itertools import zip_longest
from typing import Any, cast

from launcher.game.cards import (
    RED_ZERO_POINTS,
    GameError,
    exact_keys,
    flag,
    hand_value,
    validate_round_hands,
    whole_number,
)
from launcher.game.rulesets import (
    MAX_PLAYERS,
    OFFICIAL,
    HouseRules,
    Ruleset,
    parse_choice,
    validate_names,
    validate_players,
)

MAX_TARGET = 100_000
Hand = Mapping[str, int] | int  # card counts by kind, or a total typed in


class Mode(StrEnum):
    WINNER_COLLECTS = "winner_collects"  # the round winner gains the sum of the other hands
    LOWEST_TOTAL = "lowest_total"  # everyone adds their own hand; at the target, the lowest total wins
    ELIMINATION = "elimination"  # as lowest total; at the target a side is out; see Final for the last two
    KNOCK_OUT = "knock_out"  # the round plays on until one holds cards: they add their hand; the first to bust loses
    CHIPS = "chips"  # each loser pays the winner their hand in chips; a side at minus the target is bust

    @classmethod
    def parse(cls, value: object) -> Mode:
        return parse_choice(cls, "mode", value)

    @property
    def label(self) -> str:
        return _MODE_LABELS[self]


_MODE_LABELS = {
    Mode.WINNER_COLLECTS: "winner collects",
    Mode.LOWEST_TOTAL: "lowest total",
    Mode.ELIMINATION: "elimination",
    Mode.KNOCK_OUT: "knock-out",
    Mode.CHIPS: "chips",
}
# Where reaching the target (or minus the target, in chips) means having busted: the game names the loser.
BUST_MODES = frozenset({Mode.LOWEST_TOTAL, Mode.KNOCK_OUT, Mode.CHIPS})


class Final(StrEnum):
    """Elimination: how the game ends once two sides are left."""

    NEXT_ROUND = "next_round"  # the head-to-head final: the winner of the next round wins the game
    LAST_STANDING = "last_standing"  # they play on until one reaches the target too: the last one left wins

    @classmethod
    def parse(cls, value: object) -> Final:
        return parse_choice(cls, "final", value)


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
class PlayerStats:
    rounds_won: int = 0
    hand_points: int = 0  # the value of the hands left, over all rounds
    presses: int = 0
    fires: int = 0  # presses that gave cards
    cards: int = 0  # cards received from the launcher
    places: tuple[int, ...] = ()  # knock-out play: the place in each round's finishing order (1: first out)


@dataclass(frozen=True, slots=True)
class _LauncherCounts:
    presses: int = 0
    fires: int = 0
    cards: int = 0


@dataclass(slots=True)
class _Replay:
    """The state after replaying the rounds."""

    totals: dict[str, int]
    results: list[RoundResult] = field(default_factory=list)
    eliminated: dict[str, int] = field(default_factory=dict)  # side → index of the round that put it out
    winners: tuple[str, ...] = ()  # empty while the game goes on
    losers: tuple[str, ...] = ()  # the sides that busted in the round that ended the game (bust modes)


class Game:
    """A scored game: players in seat order, a mode, a target, optional teams."""

    def __init__(
        self,
        players: Sequence[str],
        mode: Mode | str,
        target: int = 500,
        teams: Mapping[str, Sequence[str]] | None = None,
        *,
        ruleset: Ruleset | str = Ruleset.UNO_ATTACK,
        house_rules: HouseRules = OFFICIAL,
        dealer: str | None = None,
        final: Final | str | None = None,
    ) -> None:
        self.ruleset = Ruleset.parse(ruleset)
        self.players = validate_players(players, self.ruleset)
        self.first_dealer = self.players[0] if dealer is None else self._known(dealer)
        self.mode = Mode.parse(mode)
        self.target = whole_number("target", target, 1, MAX_TARGET)
        if not isinstance(house_rules, HouseRules):
            raise GameError(f"house rules must be HouseRules, not {house_rules!r:.40}")
        self.house_rules = house_rules
        self.teams = None if teams is None else self._check_teams(teams)
        self.sides = tuple(self.teams) if self.teams else self.players
        if self.mode is Mode.ELIMINATION and len(self.sides) < 3:
            raise GameError("elimination needs at least 3 players or teams; with 2, play lowest total")
        if self.mode is Mode.KNOCK_OUT and self.teams is not None:
            raise GameError("knock-out play is for players, not teams: teams play a points mode")
        self.final_rule = self._check_final(final)
        self._entries: list[RoundEntry] = []
        self._replay = self._play([])
        self._launcher = {p: _LauncherCounts() for p in self.players}

    # --- standings -----------------------------------------------------------------------------------------------

    @property
    def rounds(self) -> tuple[RoundResult, ...]:
        return tuple(self._replay.results)

    @property
    def totals(self) -> dict[str, int]:
        return dict(self._replay.totals)

    @property
    def eliminated(self) -> dict[str, int]:
        """Side → index of the round that put it out."""
        return dict(self._replay.eliminated)

    @property
    def active_sides(self) -> tuple[str, ...]:
        return tuple(s for s in self.sides if s not in self._replay.eliminated)

    @property
    def active_players(self) -> tuple[str, ...]:
        """Still at the table, in seat order: the players of the next round."""
        return tuple(p for p in self.players if self.side_of(p) in self.active_sides)

    @property
    def final(self) -> bool:
        """Elimination with two sides left and the head-to-head final: the winner of the next round wins the game."""
        return self.final_rule is Final.NEXT_ROUND and not self.over and len(self.active_sides) == 2

    @property
    def over(self) -> bool:
        return bool(self._replay.winners)

    @property
    def winners(self) -> tuple[str, ...]:
        """The winning sides (ties share); empty while the game goes on."""
        return self._replay.winners

    @property
    def losers(self) -> tuple[str, ...]:
        """Lowest total, knock-out and chips: the sides that busted in the round that ended the game, unless they
        won anyway (every side busted); empty while the game goes on and in the other modes."""
        return self._replay.losers

    @property
    def dealer(self) -> str:
        """Who deals the next round: the last round's winner (play starts at their left), in knock-out play its
        loser (the last one holding cards shuffles), else the first dealer. A winner whose team went out passes
        the deal to the next player still in, clockwise."""
        if not self._replay.results:
            return self.first_dealer
        last = self._replay.results[-1].entry
        seat = self.players.index(last.order[-1] if last.order else last.winner)
        clockwise = self.players[seat:] + self.players[:seat]
        return next((p for p in clockwise if p in self.active_players), clockwise[0])

    def side_of(self, player: str) -> str:
        if self.teams is None:
            return player
        return next(team for team, members in self.teams.items() if player in members)

    # --- rounds --------------------------------------------------------------------------------------------------

    def score_round(
        self,
        winner: str | None,
        hands: Mapping[str, Hand],
        reshuffled: bool = False,
        *,
        red_zero: str | None = None,
        order: Sequence[str] | None = None,
        last_card: str | None = None,
    ) -> RoundResult:
        """Score the next round. `hands` maps each player still in the game (the winner may be left out) to card
        counts by kind or to a typed total; `red_zero` names who held the red 0. In knock-out play `order` lists
        every player, first out first, `hands` holds only the loser's (the last in `order`), and `winner` may be
        None (it is the first out). `last_card` is the kind the winner went out on (required by the house rule
        last_card_not_action)."""
        entry = self._entry(winner, hands, reshuffled, red_zero, order, last_card, new=True)
        self._commit([*self._entries, entry])
        return self._replay.results[-1]

    def undo_last(self) -> RoundEntry:
        if not self._entries:
            raise GameError("there is no round to undo")
        removed = self._entries[-1]
        self._commit(self._entries[:-1])
        return removed

    def edit_round(
        self,
        index: int,
        winner: str | None,
        hands: Mapping[str, Hand],
        reshuffled: bool = False,
        *,
        red_zero: str | None = None,
        order: Sequence[str] | None = None,
        last_card: str | None = None,
    ) -> RoundResult:
        """Correct round `index` (0-based) with a round as `score_round` takes it; every total after it is
        recomputed."""
        whole_number("round index", index, 0, max(0, len(self._entries) - 1))
        if not self._entries:
            raise GameError("there is no round to edit")
        entry = self._entry(winner, hands, reshuffled, red_zero, order, last_card, new=True)
        self._commit([*self._entries[:index], entry, *self._entries[index + 1 :]])
        return self._replay.results[index]

    # --- statistics ----------------------------------------------------------------------------------------------

    def record_press(self, player: str, cards: int) -> None:
        """A press attributed to `player` that gave `cards` cards (0: it did not fire)."""
        self._known(player)
        whole_number("cards", cards, 0, self.ruleset.deck.total)
        counts = self._launcher[player]
        self._launcher[player] = _LauncherCounts(counts.presses + 1, counts.fires + (cards > 0), counts.cards + cards)

    def statistics(self) -> dict[str, PlayerStats]:
        stats = {}
        for player in self.players:
            launcher = self._launcher[player]
            stats[player] = PlayerStats(
                rounds_won=sum(r.entry.winner == player for r in self._replay.results),
                hand_points=sum(r.values.get(player, 0) for r in self._replay.results),
                presses=launcher.presses,
                fires=launcher.fires,
                cards=launcher.cards,
                places=tuple(
                    r.entry.order.index(player) + 1
                    for r in self._replay.results
                    if r.entry.order is not None and player in r.entry.order
                ),
            )
        return stats

    def scoreboard(self) -> dict[str, Any]:
        """Everything a phone shows, as JSON types."""
        return {
            "sides": list(self.sides),
            "teams": self._teams_dict(),
            "mode": self.mode.value,
            "target": self.target,
            "final_rule": None if self.final_rule is None else self.final_rule.value,
            "totals": self.totals,
            "eliminated": self.eliminated,
            "final": self.final,
            "over": self.over,
            "winners": list(self.winners),
            "losers": list(self.losers),
            "rounds": [result.to_dict() for result in self._replay.results],
            "statistics": {
                p: {**asdict(stats), "places": list(stats.places)} for p, stats in self.statistics().items()
            },
        }

    # --- persistence ---------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "players": list(self.players),
            "mode": self.mode.value,
            "target": self.target,
            "teams": self._teams_dict(),
            "ruleset": self.ruleset.value,
            "house_rules": self.house_rules.to_dict(),
            "dealer": self.first_dealer,
            "final": None if self.final_rule is None else self.final_rule.value,
            "rounds": [entry.to_dict() for entry in self._entries],
            "launcher": {p: asdict(counts) for p, counts in self._launcher.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Game:
        # Games stored before these were kept: the first seat dealt first; elimination had the head-to-head final.
        data = {"dealer": None, "final": None, **data}
        exact_keys("a game", data, _GAME_KEYS)
        game = cls(
            data["players"],
            data["mode"],
            data["target"],
            data["teams"],
            ruleset=data["ruleset"],
            house_rules=HouseRules.from_mapping(data["house_rules"]),
            dealer=data["dealer"],
            final=data["final"],
        )
        if not isinstance(data["rounds"], list):
            raise GameError(f"rounds must be a list, not {data['rounds']!r:.40}")
        entries = []
        for number, entry in enumerate(data["rounds"], 1):
            if isinstance(entry, Mapping):  # rounds stored before finishing orders and last cards were kept
                entry = {"order": None, "last_card": None, **entry}
            exact_keys(f"round {number}", entry, _ROUND_KEYS)
            entries.append(
                game._entry(
                    entry["winner"],
                    entry["hands"],
                    entry["reshuffled"],
                    entry["red_zero"],
                    entry["order"],
                    entry["last_card"],
                    new=False,
                )
            )
        game._commit(entries)
        exact_keys("launcher statistics", data["launcher"], game.players)
        for player, counts in data["launcher"].items():
            exact_keys(f"{player}'s launcher statistics", counts, ("presses", "fires", "cards"))
            presses = whole_number("presses", counts["presses"], 0, 10**9)
            fires = whole_number("fires", counts["fires"], 0, presses)
            cards = whole_number("cards", counts["cards"], 0, 10**9)
            game._launcher[player] = _LauncherCounts(presses, fires, cards)
        return game

    # --- helpers -------------------------------------------------------------------------------------------------

    def _known(self, player: object) -> str:
        if not isinstance(player, str) or player not in self.players:
            raise GameError(f"unknown player {player!r:.40}; the players are {', '.join(self.players)}")
        return player

    def _check_final(self, final: object) -> Final | None:
        """Elimination's ending with two sides left (default: the head-to-head final); None in the other modes."""
        if self.mode is not Mode.ELIMINATION:
            if final is not None:
                raise GameError(
                    f"final = {final!r:.40} is a setting of elimination; this game is scored {self.mode.label}"
                )
            return None
        return Final.NEXT_ROUND if final is None else Final.parse(final)

    def _teams_dict(self) -> dict[str, list[str]] | None:
        return None if self.teams is None else {team: list(members) for team, members in self.teams.items()}

    def _check_teams(self, teams: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
        if not isinstance(teams, Mapping):
            raise GameError(f"teams map each team name to its players; got {teams!r:.60}")
        names = validate_names("team", list(teams), 2, MAX_PLAYERS // 2)
        checked: dict[str, tuple[str, ...]] = {}
        team_of: dict[str, str] = {}
        for team in names:
            members = teams[team]
            if isinstance(members, str) or not isinstance(members, Sequence) or len(members) < 2:
                raise GameError(f"team {team} must list 2 or more players; got {members!r:.60}")
            checked[team] = tuple(members)
            for player in members:
                self._known(player)
                if player in team_of:
                    raise GameError(f"{player} is in two teams: {team_of[player]} and {team}")
                team_of[player] = team
        if missing := [p for p in self.players if p not in team_of]:
            raise GameError(f"{', '.join(missing)} in no team; every player plays in a team")
        for seat, player in enumerate(self.players):
            neighbour = self.players[(seat + 1) % len(self.players)]
            if team_of[player] == team_of[neighbour]:
                raise GameError(
                    f"{player} and {neighbour} are partners (team {team_of[player]}) but sit side by side; "
                    f"partners alternate seats{_seating_hint(checked)}"
                )
        return checked

    def _entry(
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
        """The checks that do not depend on the rounds before: names, types, the deck, the finishing order, the last
        card. `new`: a round entered now (not one read from the store), which the house rules may ask more of."""
        deck = self.ruleset.deck
        order = self._order(winner, order)
        if order is not None:
            winner = order[0]
        winner = self._known(winner)
        flag("reshuffled", reshuffled)
        last_card = self._last_card(winner, last_card, new=new)
        if not isinstance(hands, Mapping):
            raise GameError(f"the hands map each player to a hand; got {hands!r:.60}")
        if order is not None:
            loser = order[-1]
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
            self._known(player)
            if isinstance(hand, int) and not isinstance(hand, bool):
                typed[player] = whole_number(f"{player}'s hand total", hand, 0, deck.max_points + bonus)
            else:  # card counts; validate_round_hands refuses anything else by name
                cards[player] = cast(Mapping[str, int], hand)
        counted = validate_round_hands(deck, cards)
        if counted.get(winner) or typed.get(winner):
            raise GameError(f"{winner} won the round, so {winner}'s hand must be empty")
        if red_zero is not None:
            self._known(red_zero)
            if deck.red_zeros == 0:
                raise GameError(f"the {deck.label} deck has no red 0")
            if red_zero not in counted or not counted[red_zero].get("0"):
                raise GameError(f"{red_zero} holds the red 0, so {red_zero}'s cards must include a 0")
        if self._values(counted, typed, red_zero) > deck.max_points + bonus:
            raise GameError(f"the hands add up to more points than the whole {deck.label} deck holds")
        normalised = {p: counted.get(p, typed.get(p, 0)) for p in self.players if p in hands and p != winner}
        return RoundEntry(winner, normalised, reshuffled, red_zero, order, last_card)

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
            self._known(player)
            if player in seen:
                raise GameError(f"{player} is twice in the order; each player has one place")
            seen.append(player)
        if len(seen) < 2:
            raise GameError("the order lists every player still in the game, first out first: at least two")
        if winner is not None and winner != seen[0]:
            self._known(winner)
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
                    "is on"
                )
            return None
        if not isinstance(card, str) or card not in deck.kind_ids:
            raise GameError(
                f"last_card: the {deck.label} deck has no card kind {card!r:.40}; its kinds are "
                + ", ".join(deck.kind_ids)
            )
        label = deck.kind(card).label
        if self.ruleset is Ruleset.UNO_ATTACK and card == "trade_hands":
            raise GameError(f"{winner} cannot go out on a Trade Hands: in UNO Attack nobody goes out on a Trade Hands")
        if rule and not card.isdigit():
            raise GameError(
                f"{winner} cannot go out on a {label}: the house rule no action card to finish is on (only a number "
                "card finishes a round)"
            )
        return card

    def _values(self, counted: Mapping[str, Mapping[str, int]], typed: Mapping[str, int], red_zero: str | None) -> int:
        return sum(self._hand_value(h, p == red_zero) for p, h in counted.items()) + sum(typed.values())

    def _hand_value(self, hand: Mapping[str, int] | int, red_zero: bool) -> int:
        if isinstance(hand, int):
            return hand
        deck = self.ruleset.deck
        return hand_value(deck, hand, red_zero_100=self.house_rules.red_zero_100, red_zeros=int(red_zero))

    def _commit(self, entries: list[RoundEntry]) -> None:
        """Replay `entries`; keep them only if every round still stands."""
        self._replay = self._play(entries)
        self._entries = entries

    def _play(self, entries: Sequence[RoundEntry]) -> _Replay:
        state = _Replay(totals={side: 0 for side in self.sides})
        for index, entry in enumerate(entries):
            try:
                state.results.append(self._play_round(state, index, entry))
            except GameError as error:
                raise GameError(f"round {index + 1}: {error}") from None
        return state

    def _play_round(self, state: _Replay, index: int, entry: RoundEntry) -> RoundResult:
        if state.winners:
            raise GameError(f"the game is already over ({', '.join(state.winners)} won)")
        active = [s for s in self.sides if s not in state.eliminated]
        for player in (entry.winner, *entry.hands, *(entry.order or ())):
            side = self.side_of(player)
            if side in state.eliminated:
                raise GameError(f"{side} was eliminated in round {state.eliminated[side] + 1}")
        in_game = [p for p in self.players if self.side_of(p) in active]
        if entry.order is not None:
            if missing := [p for p in in_game if p not in entry.order]:
                raise GameError(
                    f"the order misses {', '.join(missing)}; it lists every player still in the game, first out first"
                )
        elif missing := [p for p in in_game if p not in (entry.winner, *entry.hands)]:
            raise GameError(f"no hand for {', '.join(missing)}; every player still in the game needs one")
        values = {p: self._hand_value(h, p == entry.red_zero) for p, h in entry.hands.items()}
        by_side = {s: sum(v for p, v in values.items() if self.side_of(p) == s) for s in active}
        factor = 2 if entry.reshuffled and self.house_rules.reshuffle_doubles else 1
        winning_side = self.side_of(entry.winner)
        collected = sum(v for s, v in by_side.items() if s != winning_side)
        if self.mode is Mode.WINNER_COLLECTS:
            points = {s: factor * collected if s == winning_side else 0 for s in active}
        elif self.mode is Mode.CHIPS:  # zero-sum: each losing side pays its own hand to the winning side
            points = {s: factor * (collected if s == winning_side else -v) for s, v in by_side.items()}
        else:  # in knock-out play only the loser holds cards
            points = {s: factor * v for s, v in by_side.items()}
        for side, gained in points.items():
            state.totals[side] += gained
        out = self._decide(state, index, active, winning_side)
        return RoundResult(index, entry, values, points, dict(state.totals), out)

    def _decide(self, state: _Replay, index: int, active: list[str], winning_side: str) -> tuple[str, ...]:
        """Game over, and who is out; returns the sides eliminated by this round."""
        totals = state.totals
        reached = [s for s in active if totals[s] >= self.target]
        if self.mode is Mode.WINNER_COLLECTS:
            if reached:
                state.winners = (winning_side,)
            return ()
        if self.mode in (Mode.LOWEST_TOTAL, Mode.KNOCK_OUT):
            if reached:  # those who reached the target busted: the lowest total wins
                state.winners = _lowest(totals, self.sides)
                state.losers = tuple(s for s in reached if s not in state.winners)
            return ()
        if self.mode is Mode.CHIPS:
            if bust := [s for s in active if totals[s] <= -self.target]:
                state.winners = _highest(totals, self.sides)
                state.losers = tuple(bust)  # zero-sum: a bust side never has the highest balance
            return ()
        if len(active) == 2 and self.final_rule is Final.NEXT_ROUND:  # the head-to-head final: its winner wins
            state.winners = (winning_side,)
            return ()
        for side in reached:
            state.eliminated[side] = index
        left = [s for s in active if s not in reached]
        if len(left) == 1:
            state.winners = (left[0],)
        elif not left:  # everyone left crossed at once: the lowest of them wins
            state.winners = _lowest(totals, reached)
        return tuple(reached)


def _lowest(totals: Mapping[str, int], sides: Sequence[str]) -> tuple[str, ...]:
    low = min(totals[s] for s in sides)
    return tuple(s for s in sides if totals[s] == low)


def _highest(totals: Mapping[str, int], sides: Sequence[str]) -> tuple[str, ...]:
    high = max(totals[s] for s in sides)
    return tuple(s for s in sides if totals[s] == high)


def _seating_hint(teams: Mapping[str, Sequence[str]]) -> str:
    """A seat order that alternates, when taking one player of each team in turn gives one."""
    seats = [p for group in zip_longest(*teams.values()) for p in group if p is not None]
    team_of = {p: t for t, members in teams.items() for p in members}
    if all(team_of[a] != team_of[b] for a, b in zip(seats, seats[1:] + seats[:1], strict=True)):
        return f", e.g. {', '.join(seats)}"
    return " (teams of these sizes cannot alternate)"


_GAME_KEYS = (
    "players", "mode", "target", "teams", "ruleset", "house_rules", "dealer", "final", "rounds", "launcher",
)  # fmt: skip
_ROUND_KEYS = ("winner", "hands", "reshuffled", "red_zero", "order", "last_card")
