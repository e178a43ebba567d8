"""What systemd/install.sh installs on the Pi is the wheel pip builds from pyproject.toml, not this checkout: it must
hold every package, the page's files, and the board's firmware, which the header process runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    # Built from a copy: a build/ left in the checkout could hold files the checkout no longer has.
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("launcher", "webui", "firmware"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_the_wheel_holds_every_package_of_the_checkout(wheel_names: set[str]) -> None:
    packages = [p.parent.relative_to(ROOT) for top in ("launcher", "webui") for p in (ROOT / top).rglob("__init__.py")]
    missing = [str(p) for p in packages if f"{p.as_posix()}/__init__.py" not in wheel_names]
    assert not missing, f"pyproject.toml's packages leave out {missing}"


def test_the_wheel_holds_the_firmware_the_header_process_runs(wheel_names: set[str]) -> None:
    for name in ("main.py", "board.py", "framing.py"):
        assert f"launcher/firmware/{name}" in wheel_names
    assert "webui/templates/index.html" in wheel_names
