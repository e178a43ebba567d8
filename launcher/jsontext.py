"""JSON text made without holding the interpreter's lock for long, for what is encoded while presses may come.

`json.dumps` encodes in one C call, during which no other thread of the process runs: a long game (100 KB of JSON)
takes 5 ms here and four times that on a Pi Zero, and a press that comes meanwhile waits for it before the motor
starts. The standard library's pure-Python encoder (`JSONEncoder.iterencode`) makes the same text in small steps,
between which the interpreter lets other threads run (every 0.5 ms in the daemon). It costs about 3.6 times the CPU
of the C call: it is for the game saved at each change and the answers to phones, not for small fixed texts.
"""

from __future__ import annotations

import json
from typing import Any

COMPACT = (",", ":")


def dumps(obj: Any, **options: Any) -> str:
    """`json.dumps(obj, **options)` in small steps; compact unless `indent` or `separators` say otherwise."""
    if options.get("indent") is None:
        options.setdefault("separators", COMPACT)
    return "".join(json.JSONEncoder(**options).iterencode(obj))
