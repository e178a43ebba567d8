"""Tournaments: the partner rotation shared by the tables of a home (launcher/home/tournament.py). A phone at one table
sets one up; every table scores its own rounds; every phone reads the seats, the rounds and the standings."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, request

from launcher.access.bodies import Field, Shape
from launcher.access.book import Role
from launcher.access.budgets import Budget
from launcher.game.rotation import TournamentError
from launcher.home.tournament import TournamentBook
from webui.access import budgeted, needs
from webui.api import json_object
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("tournament", __name__, url_prefix="/api")

_SETUP = Shape("a tournament", {"players": Field(required=True), "tables": Field(required=True)}, code="bad_tournament")
_ROUND = Shape("a tournament round", {"number": Field(required=True), "points": Field(required=True)}, code="bad_round")
_JOIN = Shape("a tournament's join code", {"code": Field(required=True)}, code="bad_code")
_CORRECTION = Shape("a round's correction", {"points": Field(required=True)}, code="bad_round")
_CONFLICTS = frozenset(
    {"round_scored", "not_next_round", "no_tournament", "no_round", "not_playing"}
)  # fine requests the tournament's state refuses


def _book() -> TournamentBook:
    return parts().tournaments


def _refused(e: TournamentError) -> ApiError:
    return ApiError(409 if e.code in _CONFLICTS else 400, e.code, str(e))


@bp.get("/tournament")
def tournament() -> Response:
    """The current tournament of this table: who sits where next at each table, the rounds, the standings."""
    return jsonify(_book().view())


@bp.get("/tournaments/export")
@needs(Role.TABLE)  # every name and score: for the table, as the history's export
def export() -> Response:
    """Every tournament kept: JSON with the rounds and standings, or CSV with a row per player per round."""
    kind = request.args.get("format", "json")
    if set(request.args) - {"format"} or kind not in ("json", "csv"):
        raise ApiError(400, "bad_query", "this takes format=json or format=csv", field="format")
    if kind == "csv":
        response = Response(_book().export_csv(), content_type="text/csv; charset=utf-8")
    else:
        response = jsonify(tournaments=_book().export())
    response.headers["Content-Disposition"] = f'attachment; filename="uno-tournaments.{kind}"'
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/tournaments")
@budgeted(Budget.GAMES)  # a tournament is games at every table
def set_up() -> tuple[Response, int]:
    body = _SETUP.read(json_object())
    players, tables = body["players"], body["tables"]
    for name, value in (("players", players), ("tables", tables)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ApiError(400, "bad_tournament", f"{name} must be a list of names", field=name)
    try:
        return jsonify(_book().set_up(players, tables)), 201
    except TournamentError as e:
        raise _refused(e) from None


@bp.post("/tournament/rounds")
@budgeted(Budget.DECLARATIONS)
def score() -> tuple[Response, int]:
    """This table's next round, scored: {"number": 3, "points": {"Ann": 20, …}}."""
    body = _ROUND.read(json_object())
    number, points = body["number"], body["points"]
    if isinstance(number, bool) or not isinstance(number, int):
        raise ApiError(400, "bad_round", "number must be the round's number", field="number")
    if not isinstance(points, dict):
        raise ApiError(400, "bad_points", "points must be an object of player: points", field="points")
    try:
        return jsonify(_book().score(number, points)), 201
    except TournamentError as e:
        raise _refused(e) from None


@bp.get("/tournament/code")
@needs(Role.ADMIN)  # the key of the tournament: whoever holds it can score as any of its tables
def code() -> Response:
    """The current tournament's join code, for another table's admin to type in; null without one to share."""
    return jsonify(code=_book().code())


@bp.post("/tournaments/join")
@needs(Role.ADMIN)
@budgeted(Budget.GAMES)  # a tournament joined is kept like one set up here
def join() -> Response:
    """Another table's tournament, by the code its admin read out: {"code": "ABCD-…"}; it becomes this table's."""
    body = _JOIN.read(json_object())
    if not isinstance(body["code"], str) or len(body["code"]) > 64:
        raise ApiError(400, "bad_code", "code must be the join code's letters", field="code")
    try:
        return jsonify(_book().join(body["code"]))
    except TournamentError as e:
        raise _refused(e) from None


@bp.put("/tournament/rounds/<int:number>")
@budgeted(Budget.DECLARATIONS)
def correct(number: int) -> Response:
    """This table's round `number` given its right points: {"points": {…}}; every table takes the new version."""
    points = _CORRECTION.read(json_object())["points"]
    if not isinstance(points, dict):
        raise ApiError(400, "bad_points", "points must be an object of player: points", field="points")
    try:
        return jsonify(_book().correct(number, points))
    except TournamentError as e:
        raise _refused(e) from None


@bp.delete("/tournament/rounds/<int:number>")
@budgeted(Budget.DECLARATIONS)
def take_back(number: int) -> Response:
    """This table's round `number` taken back: it is to be played (scored) again, at every table."""
    try:
        return jsonify(_book().correct(number, None))
    except TournamentError as e:
        raise _refused(e) from None
