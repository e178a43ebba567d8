"""docs/ARCHITECTURE.md's size rule, checked on the code: no class of the product is over 300 lines, so that each
stays one responsibility a newcomer reads at a sitting (a longer one is split into parts it composes)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_layering import files

MOST_LINES = 300


def _classes(path: Path) -> list[tuple[str, int]]:
    """Each class in the file, with its length from its first decorator to its last line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.append((node.name, node.end_lineno - first + 1))
    return found


@pytest.mark.parametrize("path", [*files("launcher"), *files("webui")], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_class_is_over_300_lines(path: Path) -> None:
    assert [(name, lines) for name, lines in _classes(path) if lines > MOST_LINES] == []


def test_the_rule_sees_a_long_class(tmp_path: Path) -> None:
    """The check itself: a decorated class counts from its decorator, and one line too long is caught."""
    body = "\n".join(f"    x{n}: int = {n}" for n in range(MOST_LINES - 2))
    source = tmp_path / "long.py"
    source.write_text(f"import dataclasses\n\n\n@dataclasses.dataclass\nclass Long:\n{body}\n", encoding="utf-8")
    assert _classes(source) == [("Long", MOST_LINES)]  # allowed: the decorator, the class line and the body
    source.write_text(source.read_text(encoding="utf-8") + "    y: int = 0\n", encoding="utf-8")
    assert _classes(source) == [("Long", MOST_LINES + 1)]
