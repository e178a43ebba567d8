"""Shared fixtures: the real daemon on simulated hardware, in-process or in a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# Fast simulated hardware, so a few hundred presses take seconds, not minutes.
FAST_SIM_TOML = """
[dispense]
min_rest_ms = 10
jam_ms = 400
deck_cards = 500

[sim]
cards_per_second = 250.0
card_block_ms = 2.0

[web]
heartbeat_s = 0.5
"""


@dataclass
class RunningDaemon:
    process: subprocess.Popen[str]
    url: str  # e.g. http://127.0.0.1:54321 (no trailing slash)
    state_dir: Path
    output: list[str]

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return json.load(response)

    def post(self, path: str, body: Any = None) -> tuple[int, Any]:
        return http_json(self.url + path, "POST", body)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout)


def http_json(url: str, method: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as e:
        with e:
            return e.code, json.load(e)


def start_daemon(tmp_path: Path, config_text: str = FAST_SIM_TOML, *args: str) -> RunningDaemon:
    """Start `python -m launcher run` on simulated hardware on a free port and wait for its URL."""
    state = tmp_path / "state"
    config = tmp_path / "config.toml"
    config.write_text(config_text + f'\n[state]\ndir = "{state}"\n', encoding="utf-8")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "launcher", "run", "--sim", "--port", "0", "--config", str(config), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    output: list[str] = []
    url_seen = threading.Event()
    found: list[str] = []

    def pump() -> None:  # keep reading, or a full pipe would block the daemon
        assert process.stdout is not None
        for line in process.stdout:
            output.append(line)
            match = re.search(r"Open (http://\S+?)/? on a phone", line)
            if match and not found:
                found.append(match.group(1))
                url_seen.set()
        url_seen.set()

    threading.Thread(target=pump, daemon=True).start()
    if not url_seen.wait(30) or not found:
        process.kill()
        process.wait()
        raise RuntimeError("the daemon did not start:\n" + "".join(output))
    return RunningDaemon(process=process, url=found[0], state_dir=state, output=output)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[RunningDaemon]:
    running = start_daemon(tmp_path)
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.stop()
        if running.process.stdout:
            running.process.stdout.close()


def wait_until(predicate: Any, timeout: float = 10.0, interval: float = 0.01) -> Any:
    """Poll until predicate() is truthy; return its value or fail the test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout} s waiting for {predicate}")
