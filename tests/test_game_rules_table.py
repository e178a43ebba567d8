"""docs/GAME.md's table of rules names, for every rule, tests that exist; and every house rule has its row in the
table of what each rule does in the model."""

from __future__ import annotations

import ast
import dataclasses
import re
from functools import cache
from pathlib import Path

import pytest

from launcher.game.rulesets import HouseRules

ROOT = Path(__file__).resolve().parent.parent
GAME_MD = (ROOT / "docs" / "GAME.md").read_text(encoding="utf-8")
TEST_NAME = re.compile(r"`(test_\w+\.py)(?:::(test_\w+))?`")


def section(title: str) -> str:
    start = GAME_MD.index(f"\n{title}\n")
    end = GAME_MD.find("\n## ", start + 1)
    return GAME_MD[start : None if end < 0 else end]


def table_rows(text: str) -> list[list[str]]:
    """The rows of the first Markdown table in `text`, without its head and rule lines."""
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:] if not row.startswith("|---")]


@cache
def functions_in(file: str) -> frozenset[str]:
    tree = ast.parse((ROOT / "tests" / file).read_text(encoding="utf-8"))
    return frozenset(node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))


RULE_ROWS = table_rows(section("## Rules and their tests"))


def test_the_table_of_rules_is_read():
    assert len(RULE_ROWS) >= 30
    assert all(len(row) == 3 for row in RULE_ROWS), [row[0] for row in RULE_ROWS if len(row) != 3]


@pytest.mark.parametrize("row", RULE_ROWS, ids=lambda row: row[0][:60])
def test_every_rule_names_tests_that_exist(row):
    rule, _, tests = row
    named = TEST_NAME.findall(tests)
    assert named, f"the rule {rule!r} names no test"
    for file, function in named:
        assert (ROOT / "tests" / file).is_file(), f"{rule!r}: no tests/{file}"
        if function:
            assert function in functions_in(file), f"{rule!r}: no {function} in tests/{file}"


def test_every_house_rule_has_its_row_in_what_each_rule_does():
    effects = section("## Rulesets and house rules (`rulesets.py`)")
    described = {key for row in table_rows(effects) for key in re.findall(r"`(\w+)`", row[0])}
    toggles = {f.name for f in dataclasses.fields(HouseRules) if f.type in (bool, "bool")}
    assert len(toggles) >= 16 and toggles - described == set()
