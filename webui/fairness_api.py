"""The phones' part in the shuffle in play: each joined phone commits to 16 random bytes of its own while commitments
are open, and reveals them once the commitments have closed, so that neither the host nor a phone can choose the
outcomes (docs/FAIRNESS.md)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from flask import Blueprint, Response, jsonify

from launcher.access.bodies import Field, Shape, expect, whole
from launcher.access.budgets import Budget
from launcher.fairplay import record_qr
from launcher.fairplay.fairness import MAX_CONTRIBUTIONS, is_contribution
from launcher.fairplay.mixing import ContributionRefused
from launcher.fairplay.sealing import is_commitment
from launcher.refusals import Refusal
from webui.access import budgeted, session_token
from webui.api import json_object, shuffle_record
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("fairness_api", __name__, url_prefix="/api")
T = TypeVar("T")


def _shape(what: str, name: str, accepts: Callable[[object], bool], expected: str) -> Shape:
    """A body of the shuffle in play's number and one hex field."""
    shuffle = expect("bad_contribution", whole(1), "the number of the shuffle in play")
    return Shape(
        what,
        {
            "shuffle": Field(required=True, check=shuffle),
            name: Field(required=True, check=expect("bad_contribution", accepts, expected)),
        },
    )


_COMMITMENT = _shape(
    "a commitment", "commitment", is_commitment, "64 lowercase hex characters (the SHA-256 of your bytes)"
)
_REVEAL = _shape("a reveal", "value", is_contribution, "32 lowercase hex characters (the 16 bytes committed)")


@bp.post("/shuffles/current/contributions")
@budgeted(Budget.DECLARATIONS)  # one a session, 32 a shuffle; a flood of refused ones is bounded too
def commit() -> tuple[Response, int]:
    """A phone's commitment to the shuffle in play: `{"shuffle": 3, "commitment": "<64 lowercase hex>"}`."""
    body = _COMMITMENT.read(json_object())
    # One commitment per session: the session is known by a digest of its token, kept in memory only.
    sender = hashlib.sha256((session_token() or "").encode("utf-8")).hexdigest()
    index, count, new = _taken(lambda: parts().shuffles.commit(body["shuffle"], body["commitment"], sender))
    # The same commitment again from this phone: answered as before, 200 (nothing new was made).
    return jsonify(shuffle=body["shuffle"], index=index, count=count, max=MAX_CONTRIBUTIONS), 201 if new else 200


@bp.post("/shuffles/current/reveals")
@budgeted(Budget.DECLARATIONS)  # at most one event per commitment; a flood of refused ones is bounded too
def reveal() -> tuple[Response, int]:
    """A phone's bytes for its commitment, once commitments closed: `{"shuffle": 3, "value": "<32 lowercase hex>"}`."""
    body = _REVEAL.read(json_object())
    index, fixed = _taken(lambda: parts().shuffles.reveal(body["shuffle"], body["value"]))
    return jsonify(shuffle=body["shuffle"], index=index, fixed=fixed), 200


@bp.get("/shuffles/<int:number>/qr")
def record_code(number: int) -> Response:
    """An ended shuffle's record as the text of one QR code (launcher/fairplay/record_qr.py) and the code's modules,
    for the
    page to draw; `text` null when the record is too long for one code."""
    record = shuffle_record(number).get_json()
    text = record_qr.packed(record)
    drawn = record_qr.modules(text)
    if drawn is None:
        return jsonify(shuffle=number, text=None, digits=len(text), size=0, modules=None)
    size, dark = drawn
    return jsonify(shuffle=number, text=text, digits=len(text), size=size, modules=dark)


def _taken(take: Callable[[], T]) -> T:
    """What the shuffle book answers, or its refusal as the API says it."""
    try:
        return take()
    except ContributionRefused as refused:
        if refused.reason is Refusal.SHUFFLE_NOT_STARTED:  # the code clients know, its reason beside it
            raise ApiError(404, "not_found", str(refused), reason=refused.reason, **refused.details) from None
        raise ApiError(409, refused.reason, str(refused), **refused.details) from None
