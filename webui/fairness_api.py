"""The phones' contributions to the shuffle in play: each joined phone adds 16 random bytes of its own before the
first press, so that neither the host nor a phone can choose the outcomes (docs/FAIRNESS.md)."""

from __future__ import annotations

import hashlib

from flask import Blueprint, Response, jsonify

from launcher.bodies import Field, Shape, expect, whole
from launcher.fairness import MAX_CONTRIBUTIONS, is_contribution
from launcher.refusals import Refusal
from launcher.shuffles import ContributionRefused
from webui.access import session_token, unbudgeted
from webui.api import json_object
from webui.errors import ApiError
from webui.parts import parts

bp = Blueprint("fairness_api", __name__, url_prefix="/api")

_CONTRIBUTION = Shape(
    "a contribution",
    {
        "shuffle": Field(
            required=True, check=expect("bad_contribution", whole(1), "the number of the shuffle in play")
        ),
        "value": Field(
            required=True,
            check=expect("bad_contribution", is_contribution, "32 lowercase hex characters (16 random bytes)"),
        ),
    },
)


@bp.post("/shuffles/current/contributions")
@unbudgeted(f"one a session, at most {MAX_CONTRIBUTIONS} a shuffle; new shuffles are budgeted")
def contribute() -> tuple[Response, int]:
    """A phone's contribution to the shuffle in play: `{"shuffle": 3, "value": "<32 lowercase hex>"}` (table PIN)."""
    contribution = _CONTRIBUTION.read(json_object())
    number, value = contribution["shuffle"], contribution["value"]
    shuffles = parts().shuffles
    # One contribution per session: the session is known by a digest of its token, kept in memory only.
    sender = hashlib.sha256((session_token() or "").encode("utf-8")).hexdigest()
    try:
        index, count = shuffles.contribute(number, value, sender)
    except ContributionRefused as refused:
        if refused.reason is Refusal.SHUFFLE_NOT_STARTED:  # the code clients know, its reason beside it
            raise ApiError(404, "not_found", str(refused), reason=refused.reason, **refused.details) from None
        raise ApiError(409, refused.reason, str(refused), **refused.details) from None
    return jsonify(shuffle=number, index=index, count=count, max=MAX_CONTRIBUTIONS), 201
