"""URL rules that write their URL builders when a link is first built, not when the app is made.

Werkzeug writes and compiles two Python functions for every rule as it is added, about a twentieth of the daemon's
start-up on a Pi Zero 2 W (docs/BENCHMARKS.md), and only the page's few links ever build a URL. The hook is Werkzeug's
builder factory; what it writes is unchanged (tests/test_routing.py compares every rule with a plain one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from werkzeug.routing import Rule


class LazyBuilderRule(Rule):
    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        write = super()._compile_builder
        written: list[Callable[..., tuple[str, str]]] = []

        def build(rule: Rule, *args: Any, **kwargs: Any) -> tuple[str, str]:
            if not written:  # two threads may both write it: the same function, either one kept
                written.append(write(append_unknown).__get__(rule, None))
            return written[0](*args, **kwargs)

        return build


class App(Flask):
    url_rule_class = LazyBuilderRule
