"""Who scores together: each player alone, or teams of partners who sit in alternate seats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import zip_longest

from launcher.game.cards import GameError
from launcher.game.rulesets import MAX_PLAYERS, validate_names


def known(players: Sequence[str], player: object) -> str:
    """`player` if it is one of `players`, else GameError naming them."""
    if not isinstance(player, str) or player not in players:
        raise GameError(f"unknown player {player!r:.40}; the players are {', '.join(players)}")
    return player


class Sides:
    """The sides of a game: the players in seat order, or its teams (`teams` None: each player is a side)."""

    def __init__(self, players: tuple[str, ...], teams: Mapping[str, Sequence[str]] | None) -> None:
        self.players = players
        self.teams = None if teams is None else _check_teams(players, teams)
        self.names = tuple(self.teams) if self.teams else players

    def side_of(self, player: str) -> str:
        if self.teams is None:
            return player
        return next(team for team, members in self.teams.items() if player in members)

    def teams_dict(self) -> dict[str, list[str]] | None:
        return None if self.teams is None else {team: list(members) for team, members in self.teams.items()}


def _check_teams(players: tuple[str, ...], teams: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
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
            known(players, player)
            if player in team_of:
                raise GameError(f"{player} is in two teams: {team_of[player]} and {team}")
            team_of[player] = team
    if missing := [p for p in players if p not in team_of]:
        raise GameError(f"{', '.join(missing)} in no team; every player plays in a team")
    for seat, player in enumerate(players):
        neighbour = players[(seat + 1) % len(players)]
        if team_of[player] == team_of[neighbour]:
            raise GameError(
                f"{player} and {neighbour} are partners (team {team_of[player]}) but sit side by side; "
                f"partners alternate seats{_seating_hint(checked)}"
            )
    return checked


def _seating_hint(teams: Mapping[str, Sequence[str]]) -> str:
    """A seat order that alternates, when taking one player of each team in turn gives one."""
    seats = [p for group in zip_longest(*teams.values()) for p in group if p is not None]
    team_of = {p: t for t, members in teams.items() for p in members}
    if all(team_of[a] != team_of[b] for a, b in zip(seats, seats[1:] + seats[:1], strict=True)):
        return f", e.g. {', '.join(seats)}"
    return " (teams of these sizes cannot alternate)"
