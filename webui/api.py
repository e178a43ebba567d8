"""The JSON API the phones use for the launcher itself. The web layer never touches hardware: it calls the
controller."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from launcher.access.bodies import Field, Shape, decode, expect, whole
from launcher.access.book import Role
from launcher.access.budgets import Budget
from launcher.fairplay.fairness import RecordError
from launcher.fairplay.schedule import Profile, ProfileError, custom_profile
from launcher.fairplay.sealing import profile_text
from launcher.fairplay.shuffles import ShuffleOpen
from launcher.game import GameError, NotYourPress
from launcher.press.controller import Controller, PressRefused
from launcher.press.hopper import MAX_HOPPER_CARDS
from launcher.refusals import Refusal
from launcher.table.games import GameOver, NoGame
from webui.access import budgeted, needs, unbudgeted
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("api", __name__, url_prefix="/api")


def json_object() -> dict[str, Any]:
    """The request body as a JSON object (launcher/access/bodies.py, the one parser of request bodies)."""
    return decode(request.get_data(cache=True), is_json=request.is_json)


_PRESS = Shape("a press", {"player": Field(check=expect("bad_press", lambda v: isinstance(v, str), "a player's name"))})
_RELOAD = Shape(
    "a reload",
    {
        "cards": Field(
            required=True,
            check=expect("bad_cards", whole(1, MAX_HOPPER_CARDS), f"a whole number from 1 to {MAX_HOPPER_CARDS}"),
        )
    },
)
_RESET = Shape("a reset", {})
_NEW_SHUFFLE = Shape("a new shuffle", {"profile": Field(), "custom": Field()})


def _controller() -> Controller:
    return parts().controller


@bp.get("/openapi.json")
def openapi() -> Response:
    from webui.openapi import SPEC  # built at the first asking, not at the start (docs/BENCHMARKS.md)

    return jsonify(SPEC)


@bp.get("/state")
def state() -> Response:
    snapshot = _snapshot_with_contributions()
    snapshot["hardware"] = _controller().describe_hardware()
    snapshot["connection"] = {
        "urls": current_app.config["PUBLIC_URLS"],
        "sse_clients": parts().streams.count,
    }
    snapshot["last_event_id"] = parts().bus.last_id
    snapshot["power"] = parts().power.snapshot()  # the Pi's brown-out warnings
    link = parts().mqtt_link
    snapshot["mqtt"] = None if link is None else link.view()  # the broker: connected, trying or refused, and why
    return jsonify(snapshot)


def _snapshot_with_contributions() -> dict[str, Any]:
    """The controller's snapshot, its shuffle with the phones' commitments and reveals so far (docs/FAIRNESS.md)."""
    shuffles = parts().shuffles
    for _ in range(3):  # a new shuffle may start between the two reads: then read again
        played, snapshot = shuffles.current, _controller().snapshot()
        if played is not None and played.number == snapshot["shuffle"]["number"]:
            snapshot["shuffle"].update(played.mixing.view(), profile_text=profile_text(played.profile))
            break
    return snapshot


@bp.post("/press")
@budgeted(Budget.PRESSES)  # a press refused while the launcher is busy is logged too
def press() -> tuple[Response, int]:
    player = _PRESS.read(json_object()).get("player")
    if player is not None:
        _check_press_for(player)
    try:
        ticket = _controller().press("web", for_player=player)
    except PressRefused as refused:
        raise ApiError(409, refused.code, str(refused)) from None
    ticket.wait(timeout=current_app.config["PRESS_WAIT_S"])
    return jsonify(ticket.as_dict()), 200


def _check_press_for(player: str) -> None:
    """A phone that says who it is presses for that player, and only when the table asks for their press."""
    desk = parts().games
    try:
        desk.check_press(player)
    except NotYourPress as e:
        raise ApiError(409, "not_your_press", str(e), asked=e.asked) from None
    except GameError as e:
        raise ApiError(400, "bad_press", str(e), **e.details()) from None
    except NoGame as e:
        raise ApiError(409, Refusal.NO_GAME, str(e)) from None
    except GameOver as e:
        raise ApiError(409, Refusal.GAME_OVER, str(e)) from None


@bp.post("/hopper")
@budgeted(Budget.RELOADS)
def reload_hopper() -> tuple[Response, int]:
    cards = _RELOAD.read(json_object())["cards"]
    controller = _controller()
    controller.reload_hopper(cards)
    return jsonify(controller.snapshot()["hopper"]), 200


@bp.post("/reset")
@needs(Role.ADMIN)
@unbudgeted("the admin's, once the launcher has been seen to: one event")
def reset_fault() -> tuple[Response, int]:
    """Leave a latched FAULT, once whoever holds the admin PIN has seen to the launcher."""
    _RESET.read(json_object())
    controller = _controller()
    controller.reset()
    return jsonify(fault=controller.snapshot()["fault"]), 200


def _profile_figures(profile: Profile) -> dict[str, Any]:
    """What players should expect of a profile, computed from its parameters (no simulation)."""
    fire_rate = profile.expected_fire_rate()
    per_fire = profile.expected_cards_per_fire()
    return {
        "name": profile.name,
        "fire_rate": round(fire_rate, 4),
        "cards_per_press": round(fire_rate * per_fire, 3),
        "cards_per_fire": round(per_fire, 3),
        "longest_drought": profile.longest_drought,
        "max_fires_in_row": profile.max_fires_in_row,
        "min_cards": profile.min_cards,
        "max_cards": profile.max_cards,
        "jackpot_probability": profile.jackpot_probability,
        "pause_probability": profile.pause_probability,
    }


@bp.get("/profiles")
def profiles() -> Response:
    known = parts().profiles
    active = _controller().profile
    listed = {**known, active.name: active}  # a custom profile set from a phone replaces the configured one
    return jsonify(active=active.name, profiles=[_profile_figures(p) for p in listed.values()])


@bp.post("/shuffles")
@budgeted(Budget.SHUFFLES)
def new_shuffle() -> tuple[Response, int]:
    """End the shuffle (revealing its seed) and start the next, optionally with another profile."""
    profile = _chosen_profile(_NEW_SHUFFLE.read(json_object()))
    try:
        ended, started = _controller().new_shuffle(profile)
    except PressRefused as refused:
        raise ApiError(409, refused.code, str(refused)) from None
    return jsonify(ended=ended, shuffle=started), 201


def _chosen_profile(body: dict[str, Any]) -> Profile | None:
    known = parts().profiles
    name = body.get("profile")
    if name is None:
        if "custom" in body:
            raise ApiError(400, "bad_profile", 'custom parameters go with {"profile": "custom"}')
        return None
    if not isinstance(name, str) or name not in known:
        raise ApiError(400, "bad_profile", f"profile {name!r} is not accepted: expected one of {', '.join(known)}")
    if "custom" not in body:
        return known[name]
    if name != "custom":
        raise ApiError(400, "bad_profile", 'custom parameters go with {"profile": "custom"}')
    try:
        return custom_profile(known["custom"], body["custom"], "custom")
    except ProfileError as e:
        raise ApiError(400, "bad_profile", str(e)) from None


@bp.get("/shuffles/<int:number>")
def shuffle_record(number: int) -> Response:
    """The record of an ended shuffle, seed revealed: what `uno-launcher verify FILE` checks."""
    shuffles = parts().shuffles
    if number >= 2**63:  # beyond SQLite's INTEGER: there is no such shuffle
        raise ApiError(404, "not_found", f"there is no shuffle {number}")
    try:
        record = shuffles.record(number)
    except ShuffleOpen as e:
        raise ApiError(409, "shuffle_open", str(e)) from None
    except RecordError as e:  # only an edited or damaged store's copy
        raise ApiError(409, "record_unreadable", str(e)) from None
    if record is None:
        raise ApiError(404, "not_found", f"there is no shuffle {number}")
    response = jsonify(record)
    response.headers["Content-Disposition"] = f'attachment; filename="uno-shuffle-{number}.json"'
    return response
