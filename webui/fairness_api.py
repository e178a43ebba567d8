"""The phones' contributions to the round in play: each joined phone adds 16 random bytes of its own before the
first press, so that neither the host nor a phone can choose the outcomes (docs/FAIRNESS.md)."""

from __future__ import annotations

import hashlib

from flask import Blueprint, Response, current_app, jsonify

from launcher.fairness import MAX_CONTRIBUTIONS, is_contribution
from launcher.rounds import ContributionRefused, RoundBook
from webui.access import session_token
from webui.api import json_object
from webui.errors import ApiError

bp = Blueprint("fairness_api", __name__, url_prefix="/api")

FIELDS = ("round", "value")


@bp.post("/rounds/current/contributions")
def contribute() -> tuple[Response, int]:
    """A phone's contribution to the round in play: `{"round": 3, "value": "<32 lowercase hex>"}` (table PIN)."""
    body = json_object()
    unknown = set(body) - set(FIELDS)
    if unknown:
        raise ApiError(
            400, "unknown_field", f"a contribution takes only round and value; got {', '.join(sorted(unknown))}"
        )
    number, value = body.get("round"), body.get("value")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        shown = "nothing" if "round" not in body else f"{number!r:.40}"
        raise ApiError(
            400, "bad_contribution", f"round must be the number of the round in play, not {shown}", field="round"
        )
    if not is_contribution(value):
        shown = "nothing" if "value" not in body else f"{value!r:.40}"
        raise ApiError(
            400,
            "bad_contribution",
            f"value must be 32 lowercase hex characters (16 random bytes), not {shown}",
            field="value",
        )
    rounds: RoundBook = current_app.extensions["launcher.rounds"]
    # One contribution per session: the session is known by a digest of its token, kept in memory only.
    sender = hashlib.sha256((session_token() or "").encode("utf-8")).hexdigest()
    try:
        index, count = rounds.contribute(number, value, sender)
    except ContributionRefused as refused:
        raise ApiError(404 if refused.code == "not_found" else 409, refused.code, str(refused)) from None
    return jsonify(round=number, index=index, count=count, max=MAX_CONTRIBUTIONS), 201
