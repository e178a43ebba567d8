"""The phones' contributions to the shuffle in play: each joined phone adds 16 random bytes of its own before the
first press, so that neither the host nor a phone can choose the outcomes (docs/FAIRNESS.md)."""

from __future__ import annotations

import hashlib

from flask import Blueprint, Response, current_app, jsonify

from launcher.fairness import MAX_CONTRIBUTIONS, is_contribution
from launcher.shuffles import ContributionRefused, ShuffleBook
from webui.access import session_token
from webui.api import json_object
from webui.errors import ApiError

bp = Blueprint("fairness_api", __name__, url_prefix="/api")

FIELDS = ("shuffle", "value")


@bp.post("/shuffles/current/contributions")
@bp.post("/rounds/current/contributions")  # the path before the rename, for one release (docs/API.md)
def contribute() -> tuple[Response, int]:
    """A phone's contribution to the shuffle in play: `{"shuffle": 3, "value": "<32 lowercase hex>"}` (table PIN)."""
    body = json_object()
    unknown = set(body) - set(FIELDS)
    if unknown:
        raise ApiError(
            400, "unknown_field", f"a contribution takes only shuffle and value; got {', '.join(sorted(unknown))}"
        )
    number, value = body.get("shuffle"), body.get("value")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        shown = "nothing" if "shuffle" not in body else f"{number!r:.40}"
        raise ApiError(
            400, "bad_contribution", f"shuffle must be the number of the shuffle in play, not {shown}", field="shuffle"
        )
    if not is_contribution(value):
        shown = "nothing" if "value" not in body else f"{value!r:.40}"
        raise ApiError(
            400,
            "bad_contribution",
            f"value must be 32 lowercase hex characters (16 random bytes), not {shown}",
            field="value",
        )
    shuffles: ShuffleBook = current_app.extensions["launcher.shuffles"]
    # One contribution per session: the session is known by a digest of its token, kept in memory only.
    sender = hashlib.sha256((session_token() or "").encode("utf-8")).hexdigest()
    try:
        index, count = shuffles.contribute(number, value, sender)
    except ContributionRefused as refused:
        raise ApiError(404 if refused.code == "not_found" else 409, refused.code, str(refused)) from None
    return jsonify(shuffle=number, index=index, count=count, max=MAX_CONTRIBUTIONS), 201
