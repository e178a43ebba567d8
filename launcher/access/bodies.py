"""Request bodies: the one parser of what a client sends, for the web layer and the game's requests alike.

`decode()` turns the raw bytes into a JSON object of valid text; a `Shape` names the fields an endpoint takes,
which it needs and how each value is checked, and gives back the checked values. Every refusal is one
`BodyError` with the status and code the API answers (docs/API.md) and a message naming the field. Pure: no
Flask and no I/O, so launcher/table/game_requests.py shares it without importing the web layer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from launcher.access.text import MAX_DEPTH, bad_text_at, nests_deeper
from launcher.errors import LauncherError

MAX_BODY_BYTES = 64 * 1024  # the largest body any call needs is a few KB; the server refuses more unread


class BodyError(LauncherError, ValueError):
    """A request body refused: the status and code the API answers with, and a message naming what was wrong."""

    def __init__(self, code: str, message: str, *, status: int = 400, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details  # more fields of the error object: `field`, the field refused


def decode(raw: bytes, *, is_json: bool) -> dict[str, Any]:
    """The body as a JSON object of valid text, nested at most MAX_DEPTH deep; an empty body counts as {}.
    `is_json`: the body was sent as application/json."""
    if not raw:
        return {}
    if len(raw) > MAX_BODY_BYTES:
        raise BodyError("request_entity_too_large", f"the body is larger than {MAX_BODY_BYTES} bytes", status=413)
    if not is_json:
        raise BodyError("unsupported_media_type", "send the body as application/json", status=415)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BodyError("bad_json", f"the body is not UTF-8 (byte {e.start})") from None
    if nests_deeper(text):
        raise BodyError("bad_json", f"the body nests deeper than {MAX_DEPTH} levels")
    try:
        body = json.loads(text)
    except ValueError as e:
        raise BodyError("bad_json", f"the body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise BodyError("bad_json", "the body must be a JSON object")
    where = bad_text_at(body)
    if where is not None:
        raise BodyError("bad_text", f"{where} holds a character that is not text (a lone surrogate)", field=where)
    return body


class _Missing:
    def __repr__(self) -> str:
        return "nothing"


MISSING: Any = _Missing()  # what a check is given for a required field the body lacks

Check = Callable[[str, Any], Any]  # (field name, value sent or MISSING) → the value as used; raises BodyError


def expect(
    code: str, accepts: Callable[[Any], bool], expected: str, convert: Callable[[Any], Any] | None = None
) -> Check:
    """A check refusing with `code` a value `accepts` does not take: "<field> must be <expected>, not <value>"."""

    def check(name: str, value: Any) -> Any:
        if value is MISSING or not accepts(value):
            raise BodyError(code, f"{name} must be {expected}, not {value!r:.40}", field=name)
        return value if convert is None else convert(value)

    return check


def whole(low: int, high: int | None = None) -> Callable[[Any], bool]:
    """Takes a whole number from `low` to `high` (None: no upper bound); true and false are not numbers."""
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v and (high is None or v <= high)


def parsed_by(code: str, parse: Callable[[Any], Any]) -> Check:
    """A check by a parser of the logic's own, whose ValueError (worded by that parser) is refused with `code`;
    a missing value is given to it as None."""

    def check(name: str, value: Any) -> Any:
        try:
            return parse(None if value is MISSING else value)
        except ValueError as e:
            raise BodyError(code, str(e), field=name) from None

    return check


@dataclass(frozen=True, slots=True)
class Field:
    required: bool = False
    check: Check | None = None  # None: the value goes as sent to the logic, which checks it


@dataclass(frozen=True, slots=True)
class Shape:
    """The fields a body takes. `what` names the body in messages ("a press"); `code` is the code of a field it
    does not take or one it lacks that has no check of its own (a field's check refuses with its own code)."""

    what: str
    fields: Mapping[str, Field]
    code: str = "unknown_field"

    def read(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The fields sent, each as its check gives it; a field not sent is left out."""
        if unknown := sorted(set(body) - set(self.fields)):
            names = ", ".join(unknown)
            takes = f"it takes {', '.join(self.fields)}" if self.fields else "it takes no fields"
            plural = "s" if len(unknown) > 1 else ""
            raise BodyError(self.code, f"unknown field{plural} {names}: {self.what} takes no {names}; {takes}")
        lacking = [name for name, f in self.fields.items() if f.required and name not in body and f.check is None]
        if lacking:
            raise BodyError(self.code, f"{self.what} needs {', '.join(lacking)}")
        values: dict[str, Any] = {}
        for name, f in self.fields.items():
            if name in body or f.required:
                value = body.get(name, MISSING)
                values[name] = value if f.check is None else f.check(name, value)
        return values
