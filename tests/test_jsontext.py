"""JSON made while presses may come lets them run: a long game is saved at every change and sent to every phone, and
`json.dumps` would encode it in one C call during which no other thread runs, the button's included (about 1 ms per
50 KB here, four times that on a Pi Zero)."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from launcher import jsontext
from launcher.config import Config
from launcher.daemon import SWITCH_INTERVAL_S, Daemon
from launcher.game import Game, Mode
from tests.conftest import MakeDaemon

PLAYERS = ["Ann", "Bob", "Cy", "Dee"]


@pytest.fixture(scope="module")
def long_game() -> dict[str, Any]:
    """A 1,500-round game's state: 270 KB of JSON."""
    game = Game(PLAYERS, Mode.LOWEST_TOTAL, target=100_000)
    for n in range(1500):
        winner = PLAYERS[n % 4]
        game.score_round(winner, {p: {"7": 1, "hit_2": n % 3} for p in PLAYERS if p != winner})
    return game.to_dict()


@pytest.fixture(scope="module")
def long_text(long_game: dict[str, Any]) -> list[dict[str, Any]]:
    """A megabyte to encode, so that the encoding is long beside the interpreter's turns of 0.5 ms."""
    return [long_game] * 4


class Marker:
    """Encoded by the `default` hook, from inside the encoding: notes when the encoder reached it."""

    def __init__(self) -> None:
        self.reached: list[float] = []


def _mark(value: object) -> object:
    assert isinstance(value, Marker)
    value.reached.append(time.perf_counter())
    return None


def longest_wait(encode: Callable[[Any], str], data: Any) -> tuple[float, str]:
    """The longest this thread was kept from running while another thread encoded `data` (from its first piece
    to its last), as a share of that encoding's time, at the daemon's switch interval; and the text it made."""
    first, last = Marker(), Marker()
    made: list[str] = []
    encoding = threading.Thread(target=lambda: made.append(encode([first, data, last])))
    steps = [time.perf_counter()]
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        encoding.start()
        while encoding.is_alive():
            for _ in range(200):  # a few microseconds of work a step
                pass
            steps.append(time.perf_counter())
        encoding.join()
    finally:
        sys.setswitchinterval(previous)
    begun, ended = first.reached[0], last.reached[0]
    waits = (min(now, ended) - max(then, begun) for then, now in pairwise(steps))
    return max(waits) / (ended - begun), made[0]


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(Config().replace("state", dir=str(tmp_path)).replace("web", port=0))


def test_the_interpreters_own_encoder_keeps_every_other_thread_waiting(long_text: list[dict[str, Any]]) -> None:
    """What this file guards against, shown: the check below can fail."""
    wait, _ = longest_wait(lambda obj: json.dumps(obj, default=_mark), long_text)
    assert wait > 0.8


def test_the_text_a_long_game_is_saved_as_lets_other_threads_run_and_is_the_same_json(
    long_text: list[dict[str, Any]],
) -> None:
    wait, text = longest_wait(lambda obj: jsontext.dumps(obj, default=_mark), long_text)
    assert wait < 0.25
    assert json.loads(text) == [None, long_text, None]


def test_the_answers_to_phones_let_other_threads_run_while_they_are_encoded(
    daemon: Daemon, long_text: list[dict[str, Any]]
) -> None:
    wait, text = longest_wait(lambda obj: daemon.app.json.dumps(obj, default=_mark), long_text)
    assert wait < 0.25
    assert json.loads(text) == [None, long_text, None]
    assert daemon.app.json.dumps({"b": "é", "a": [1, 2]}) == '{"a":[1,2],"b":"é"}'  # compact, keys sorted
