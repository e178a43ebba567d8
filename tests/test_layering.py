"""The layering rule of docs/ARCHITECTURE.md, checked on the imports themselves: the pure parts import nothing of the
project but their own, the hardware layer only what it may, and the web layer never the hardware."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def project_imports(path: Path) -> set[str]:
    """The project's modules a file imports (`launcher…`, `webui…`), wherever in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] in ("launcher", "webui")}


def files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def outside(imports: set[str], allowed: tuple[str, ...]) -> set[str]:
    return {name for name in imports if not any(name == a or name.startswith(a + ".") for a in allowed)}


@pytest.mark.parametrize(
    "path", [*files("launcher/game"), ROOT / "launcher/fairplay/schedule.py"], ids=lambda p: p.name
)
def test_the_game_and_the_schedule_are_pure(path: Path) -> None:
    assert outside(project_imports(path), ("launcher.game", "launcher.errors", "launcher.refusals")) == set()


@pytest.mark.parametrize("path", files("launcher/hardware"), ids=lambda p: p.name)
def test_the_hardware_layer_imports_only_what_it_may(path: Path) -> None:
    allowed = ("launcher.hardware", "launcher.clock", "launcher.threads", "launcher.errors", "launcher.config")
    assert outside(project_imports(path), allowed) == set()


@pytest.mark.parametrize("path", files("webui"), ids=lambda p: p.name)
def test_the_web_layer_never_touches_the_hardware(path: Path) -> None:
    assert {name for name in project_imports(path) if name.startswith("launcher.hardware")} == set()


@pytest.mark.parametrize("path", [p for p in files("launcher") if p.name != "daemon.py"], ids=lambda p: p.name)
def test_only_the_daemon_imports_the_web_layer(path: Path) -> None:
    assert {name for name in project_imports(path) if name.startswith("webui")} == set()


# launcher/'s packages from the bottom up: each imports only those below it (and the shared modules at the root),
# so a newcomer can read them in this order and no package needs one above it.
PACKAGES = ("game", "hardware", "store", "system", "access", "fairplay", "press", "table", "home")
COMPOSITION = ("launcher.daemon", "launcher.cli", "launcher.__main__")


@pytest.mark.parametrize(
    "path", [p for name in PACKAGES for p in files(f"launcher/{name}")], ids=lambda p: p.parent.name + "/" + p.name
)
def test_a_package_imports_only_the_packages_below_it(path: Path) -> None:
    below = PACKAGES[: PACKAGES.index(path.parent.name) + 1]
    above = {f"launcher.{name}" for name in PACKAGES if name not in below}
    reached = {name for name in project_imports(path) for a in above if name == a or name.startswith(a + ".")}
    assert reached == set()
    assert {name for name in project_imports(path) if name.startswith(COMPOSITION)} == set()
