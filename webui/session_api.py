"""Joining the table: sessions opened with a PIN, the invite a joined phone shows, and the admin changing the PINs."""

from __future__ import annotations

import math
from functools import partial
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from launcher.access.bodies import Check, Field, Shape, parsed_by
from launcher.access.book import PinError, Role, TooManyTries, check_pin_shape
from launcher.access.budgets import Budget
from launcher.access.doorbell import CODE_LENGTH, WAIT_S, NoSuchCode, PinWasWrong, Still, WaitOver
from launcher.events import EventType
from launcher.refusals import Refusal
from webui import access
from webui.access import budgeted, needs, unbudgeted
from webui.api import json_object
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("session", __name__, url_prefix="/api")


def _pin(role: Role) -> Check:
    return parsed_by("bad_pin", partial(check_pin_shape, role))  # its message names the rule, not the PIN


def _token(value: object) -> str:
    if not isinstance(value, str) or not 0 < len(value) <= 64:
        raise PinError("an invite's token is the text after #join= in its link")
    return value


_JOIN = Shape(
    "joining",
    {
        "pin": Field(check=_pin(Role.NONE)),
        "token": Field(check=parsed_by("bad_token", _token)),
        "waiting": Field(check=parsed_by("bad_token", _token)),
    },
)
_CHANGEABLE = (Role.TABLE, Role.ADMIN)
_PINS = Shape("a PIN change", {role.label: Field(check=_pin(role)) for role in _CHANGEABLE})


@bp.get("/session")
def whoami() -> Response:
    access.book().seen(access.session_token())
    role = access.caller_role()
    if role is not Role.ADMIN:
        return jsonify(role=role.label)
    # What the admin is asked to see to, when there is any: a table PIN shorter than new ones may be, a full store,
    # a disk that refused the last write (full or read-only: until a write goes through).
    notices = [
        notice
        for notice, due in (
            ("table_pin_short", access.book().table_pin_too_short()),
            (Refusal.STORE_FULL.value, access.budgets().store_full()),
        )
        if due
    ]
    trouble = parts().history.store.trouble
    if trouble is not None:
        notices.append(trouble[0].value)
    return jsonify(role=role.label, notices=notices) if notices else jsonify(role=role.label)


@bp.post("/session")
@needs(Role.NONE)
@unbudgeted("spends joins_per_minute itself, for a session opened: a wrong PIN or a look at a ticket spends none")
def join() -> tuple[Response, int]:
    sent = _JOIN.read(json_object())
    if len(sent) != 1:
        raise ApiError(400, "bad_pin", 'send the table PIN {"pin": "…"}, or the invite\'s {"token": "…"}')
    if "waiting" in sent:
        return _collect(sent["waiting"])
    if "token" in sent:
        role = access.book().role_for_token(sent["token"])  # 128 random bits: no guess to limit
        if role is Role.NONE:
            raise ApiError(401, "invite_revoked", "this invite is no longer valid: ask for a new one, or type the PIN")
        _spend_a_join()
        return _joined(role, None)
    pin: str = sent["pin"]
    guard, client = parts().pin_guard, access.client()
    try:
        tries_left = guard.take(client)  # before the PIN is checked, so parallel guesses all count
    except TooManyTries:
        return _wait_to_be_let_in(client, pin)
    role = access.book().role_for_pin(pin, remember=True)
    if role is Role.NONE:
        if tries_left:
            raise ApiError(
                401,
                "wrong_pin",
                f"wrong PIN; {tries_left} {'try' if tries_left == 1 else 'tries'} left",
                tries_left=tries_left,
            )
        wait = guard.wait_after(client)
        raise ApiError(
            401, "wrong_pin", f"wrong PIN; wait {wait} s before the next try", tries_left=0, retry_after_s=wait
        )
    guard.forgive(client)
    _spend_a_join()
    return _joined(role, pin if role is Role.TABLE else None)


def _wait_to_be_let_in(client: str, pin: str) -> tuple[Response, int]:
    """The PIN cannot be checked now (the network's budget is spent, or this phone must wait): it waits, unchecked,
    for a person at the table (launcher/access/doorbell.py). Nothing here depends on the PIN: not the answer, not its
    time, not anything else the daemon does."""
    waiting = parts().doorbell.wait(client, pin, address=request.remote_addr)
    return _waiting(waiting.ticket, waiting.code, WAIT_S)


def _waiting(ticket: str, code: str, left_s: float) -> tuple[Response, int]:
    return jsonify(role=Role.NONE.label, waiting=ticket, code=code, wait_s=math.ceil(left_s)), 202


def _collect(ticket: str) -> tuple[Response, int]:
    """A waiting phone looks at its ticket: still waiting, let in (joined now), told wrong, or too late."""
    try:
        looked = parts().doorbell.collect(ticket)
    except WaitOver as e:
        raise ApiError(401, "wait_over", str(e)) from None
    except PinWasWrong as e:
        raise ApiError(401, "pin_was_wrong", str(e)) from None
    if isinstance(looked, Still):
        return _waiting(ticket, looked.code, looked.left_s)
    parts().pin_guard.forgive(looked.client, refund=False)
    return _joined(looked.role, looked.table_pin)


def _code(value: object) -> str:
    if not isinstance(value, str) or len(value) != CODE_LENGTH or not value.isascii() or not value.isalnum():
        raise ValueError(f"the code is the {CODE_LENGTH} letters and digits the waiting phone shows")
    return value


_LET_IN = Shape("letting a phone in", {"code": Field(check=parsed_by("bad_code", _code), required=True)})


@bp.post("/let-in")
@budgeted(Budget.LET_INS)
def let_in() -> Response:
    """A joined phone types the code a waiting phone shows: that phone's PIN is checked now (a person asked, so
    outside the network's budget, within this phone's own budget of let-ins), opening at most this session's role."""
    code: str = _LET_IN.read(json_object())["code"]
    try:
        role = parts().doorbell.let_in(code, most=access.caller_role())
    except NoSuchCode as e:
        raise ApiError(404, "no_such_code", str(e)) from None
    return jsonify(role=role.label)


def _spend_a_join() -> None:
    """Counted only once the PIN or invite proved right, so a stranger's wrong PINs from the family's IPv6 network
    (one client) cannot spend the family's joins: guesses are PinGuard's. A phone a person let in spends none (the
    let-in did)."""
    access.spend(access.budgets().joins, grows_store=False)


def _joined(role: Role, table_pin: str | None) -> tuple[Response, int]:
    token = access.book().open_session(
        role, replacing=access.session_token(), table_pin=table_pin, party=access.client()
    )
    response = jsonify(role=role.label)
    access.set_session_cookie(response, token)
    return response, 201


@bp.delete("/session")
@needs(Role.NONE)
@unbudgeted("ends a session: removes its row")
def leave() -> Response:
    access.book().close_session(access.session_token())
    response = jsonify(role=Role.NONE.label)
    access.clear_session_cookie(response)
    return response


@bp.put("/pins")
@needs(Role.ADMIN)
@unbudgeted("the admin's: the PINs' rows are replaced, with one event")
def change_pins() -> Response:
    sent = _PINS.read(json_object())
    if not sent:
        raise ApiError(400, "bad_pin", 'send the PIN to change: {"table": "123456"} and/or {"admin": "123456"}')
    pins: dict[Role, str] = {role: sent[role.label] for role in _CHANGEABLE if role.label in sent}
    try:
        if len(pins) == 2 and pins[Role.TABLE] == pins[Role.ADMIN]:
            raise PinError("the table PIN and the admin PIN must differ")
        for role, pin in pins.items():
            access.book().set_pin(role, pin, keep=access.session_token())
    except PinError as e:
        raise ApiError(400, "bad_pin", str(e)) from None
    answer: dict[str, Any] = {"changed": [role.label for role in pins]}
    bus = parts().bus
    bus.publish(EventType.PINS_CHANGED, {"changed": answer["changed"]})  # phones signed out learn it at once
    if Role.TABLE in pins:
        answer.update(_invite_answer())
    return jsonify(answer)


@bp.get("/invite")
@needs(Role.TABLE)
def invite() -> Response:
    """What a joined phone shows to invite another: the link that joins with the invite's token, its QR code, and
    the table PIN's digits only to a phone that typed them (or the admin who set them)."""
    return jsonify(_invite_answer())


@bp.post("/invite")
@needs(Role.ADMIN)
@unbudgeted("the admin's: the invite's row is replaced")
def new_invite() -> tuple[Response, int]:
    """A new invite: the links shown or printed before stop joining."""
    access.book().new_invite()
    return jsonify(_invite_answer()), 201


def _invite_answer() -> dict[str, str]:
    # Imported here, not at start-up: the QR code maker costs about 65 million instructions to import (0.13 s
    # on a Pi Zero 2 W, benchmarks/bench_instructions.py), and only an invite or a PIN change draws a code.
    from launcher.system.qr import join_url, qr_svg_data_url

    url = join_url(current_app.config["PUBLIC_URLS"][-1], access.book().invite_token())
    answer = {"join_url": url, "join_qr": qr_svg_data_url(url)}
    pin = access.book().table_pin_shown_to(access.session_token())
    if pin is not None:
        answer["pin"] = pin
    return answer
