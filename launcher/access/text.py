"""Text from outside: JSON that is too deep to be honest, and strings that cannot be written as UTF-8.

JSON may spell a lone UTF-16 surrogate (`"\\ud800"`), which Python then holds in a `str` that no UTF-8 encoder
takes: stored, it would break every answer and event that carries it. Bodies are checked on the way in
(`bad_text_at`); text already stored by an older version is read back with such characters replaced (`scrubbed`).
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")  # json.loads joins pairs: any left are lone
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
MAX_DEPTH = 16  # the deepest body the API takes is 3 levels; the page never sends more


def nests_deeper(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether the lists and objects of JSON text nest deeper than `limit`, read before it is parsed: `json.loads`
    recurses once per level, and at Python's recursion limit a clean-up that the collector runs meanwhile (a
    `finally`, a `__del__`) fails for want of stack. Text that is not JSON gets an answer too; the parser refuses it."""
    if text.count("[") + text.count("{") <= limit:  # every body the page sends
        return False
    level = 0
    for bracket in _NOT_A_BRACKET.sub("", _JSON_STRING.sub("", text)):
        level += 1 if bracket in "[{" else -1
        if level > limit:
            return True
    return False


def bad_text_at(value: Any, path: str = "") -> str | None:
    """The path (e.g. `players[2]`) of the first key or string that is not valid Unicode text, or None."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return where or "the body"
        elif isinstance(item, dict):
            for key, v in item.items():
                name = f"{where}.{key}" if where else str(key)
                if not _encodable(key):
                    return where or "a key"
                stack.append((v, name))
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
    return None


def scrubbed(value: Any) -> Any:
    """`value` with every lone surrogate in its keys and strings replaced by U+FFFD."""
    if isinstance(value, str):
        return value if _encodable(value) else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {scrubbed(k): scrubbed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrubbed(v) for v in value]
    return value


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
