"""The app's URL rules write their URL builders when a link is first built, not while the daemon starts (Werkzeug
writes and compiles two Python functions per rule; only the page's links ever build a URL), and the links they
build are the ones Werkzeug's own rules build."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from werkzeug.routing import Map, Rule

from tests.conftest import local_daemon

SAMPLE = {"IntegerConverter": 7, "UnicodeConverter": "zh-Hant", "PathConverter": "i18n/en.json"}


def _values(rule: Rule) -> dict[str, Any]:
    return {name: SAMPLE[type(rule._converters[name]).__name__] for name in rule.arguments}


def test_starting_the_daemon_writes_no_url_builder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    real = Rule._compile_builder

    def counted(self: Rule, append_unknown: bool = True) -> Any:
        written.append(self.rule)
        return real(self, append_unknown)

    monkeypatch.setattr(Rule, "_compile_builder", counted)
    with local_daemon(tmp_path) as daemon:
        assert written == []
        assert daemon.app.test_client().get("/").status_code == 200  # the page's links built
        assert "/static/<path:filename>" in written


def test_every_rule_builds_the_url_a_plain_werkzeug_rule_builds(tmp_path: Path) -> None:
    with local_daemon(tmp_path) as daemon:
        ours = list(daemon.app.url_map.iter_rules())
        plain = Map([Rule(rule.rule, endpoint=rule.endpoint, methods=rule.methods) for rule in ours])
        adapter, plain_adapter = daemon.app.url_map.bind("launcher.local"), plain.bind("launcher.local")
        assert len(ours) > 30
        for rule in ours:
            values = {**_values(rule), "extra": "1"}  # an unknown value goes to the query string
            method = sorted(rule.methods or {"GET"})[0]
            built = adapter.build(rule.endpoint, values, method=method)
            assert built == plain_adapter.build(rule.endpoint, values, method=method), rule.rule
            assert built.endswith("?extra=1"), built
