"""Every benchmark still runs: each script in its short `--quick` mode (benchmarks/measure.py's `parse`), which
checks that it works against today's code and test helpers, not its figures (those are docs/BENCHMARKS.md's)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("bench_*.py"))


def test_every_benchmark_is_found() -> None:
    assert len(BENCHMARKS) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.stem)
def test_the_benchmark_runs_and_prints_its_ratio(script: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(script), "--quick"], capture_output=True, text=True, timeout=900, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^ratio .*\d", done.stdout, re.MULTILINE), done.stdout[-3000:]
