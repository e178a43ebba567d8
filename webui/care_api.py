"""Wear and care, for the admin only: the launcher's lifetime counters, those since the roller was cleaned, the
cleaning hint (launcher/press/wear.py), and the cleaning done."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from launcher.access.bodies import Shape
from launcher.access.book import Role
from launcher.press.wear import Wear
from webui.access import needs, unbudgeted
from webui.api import json_object
from webui.parts import parts

bp = Blueprint("care", __name__, url_prefix="/api")

_CLEANED = Shape("a cleaning", {})


def _wear() -> Wear:
    return parts().wear


@bp.get("/care")
@needs(Role.ADMIN)  # how the launcher is used and wears is the maker's to read, not the table's
def care() -> Response:
    return jsonify(_wear().report())


@bp.post("/care/cleaned")
@needs(Role.ADMIN)
@unbudgeted("the admin's: the counters' row is replaced, nothing added")
def cleaned() -> Response:
    """The roller was cleaned: the counts since cleaning start again; the lifetime ones stay."""
    _CLEANED.read(json_object())
    wear = _wear()
    wear.cleaned()
    return jsonify(wear.report())
