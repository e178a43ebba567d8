"""The next press is the board's secret (docs/FAIRNESS.md, "The next press is secret"): nothing a stranger or a
joined phone can read before a press tells whether it will fire or miss.

Over loopback against the daemon in its own process (simulated hardware), every reading before each of 40-odd
presses is kept: `/api/state` as a stranger and as a joined phone, and the events both streams received since the
last reading. What is a function of the presses already told (their count, the last outcome, the hopper, the
tension, event ids) is checked against that public past and only then set aside; what remains must not take one
value before fires and another before misses. The board's side: the bytes sent to it between two presses, and its
LED, are the same whichever the next press is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import RunningDaemon, wait_until
from tests.sse_client import SseClient

PRESSES = 44  # the 40, and a few more
PAST = "<told already>"  # a value checked against the presses already told, then set aside


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value, by its path (`hardware.link`, `events.2.type`)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from leaves(inner, f"{path}.{i}")
    else:
        yield path, value


class Past:
    """What every phone has been told of the presses so far: their answers, in order."""

    def __init__(self, loaded: int) -> None:
        self.loaded = loaded
        self.answers: list[dict[str, Any]] = []

    @property
    def dispensed(self) -> int:
        return sum(a["dispensed"] for a in self.answers)

    def state(self, state: dict[str, Any]) -> dict[str, Any]:
        """`state` with what the past decides checked and set aside."""
        last = self.answers[-1] if self.answers else None
        told = {
            "presses": len(self.answers),
            "last_outcome": last,
            "tension": last["tension"] if last else 0.0,  # the schedule's tension is the last outcome's
            "hopper": {"loaded": self.loaded, "dispensed": self.dispensed, "remaining": self.loaded - self.dispensed},
        }
        for key, value in told.items():
            assert state[key] == value, (key, state[key], value)
            state[key] = PAST
        shuffle, hardware = state["shuffle"], state["hardware"]
        assert shuffle["presses"] == len(self.answers)
        assert (hardware["sim_cards_out"], hardware["sim_hopper"]) == (self.dispensed, self.loaded - self.dispensed)
        shuffle["presses"] = hardware["sim_cards_out"] = hardware["sim_hopper"] = PAST
        state["last_event_id"] = PAST  # checked against the streams by the caller
        return state

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        """An event of the last press (its press, its outcome, the hopper after it) with what it told set aside."""
        last = self.answers[-1]
        data = dict(event["data"])
        if "press" in data:
            assert data["press"] == last["press"], event
        if event["type"] == "hopper.changed":
            assert data["remaining"] == self.loaded - self.dispensed, event
        for key in ("press", "requested", "dispensed", "ms", "tension", "misses_in_row", "loaded", "remaining"):
            if key in data:
                data[key] = PAST
        if event["type"] == "launcher.fired":
            assert (event["data"]["requested"], event["data"]["dispensed"]) == (last["cards"], last["dispensed"])
        return {"type": event["type"], "data": data}


def predictors(
    readings: list[dict[str, Any]], fired: list[bool], after_fire: list[bool]
) -> dict[str, tuple[set[str], set[str]]]:
    """Each path whose values before presses that fired are not those before presses that missed: {path: (values
    before fires, values before misses)}. Compared among readings whose last press was of one kind, as the events
    of the last press are a fire's or a miss's."""
    found: dict[str, tuple[set[str], set[str]]] = {}
    for kind in (True, False):
        group = [(r, f) for r, f, a in zip(readings, fired, after_fire, strict=True) if a is kind]
        if {f for _, f in group} != {True, False}:
            continue
        values: dict[str, tuple[set[str], set[str]]] = {}
        for reading, fires in group:
            for path, value in leaves(reading):
                values.setdefault(path, (set(), set()))[0 if fires else 1].add(repr(value))
        for path, (before_fires, before_misses) in values.items():
            if before_fires != before_misses:
                found[path] = (before_fires, before_misses)
    return found


@pytest.fixture
def streams(daemon: RunningDaemon) -> Iterator[tuple[SseClient, SseClient]]:
    stranger, phone = SseClient(daemon.url), SseClient(daemon.url, cookie=daemon.joined.table_cookie)
    try:
        stranger.connected.wait(10)
        phone.connected.wait(10)
        yield stranger, phone
    finally:
        stranger.close()
        phone.close()


def test_nothing_a_stranger_or_a_phone_reads_before_a_press_tells_a_fire_from_a_miss(
    daemon: RunningDaemon, streams: tuple[SseClient, SseClient]
) -> None:
    stranger_stream, phone_stream = streams
    past = Past(loaded=daemon.get("/api/state")["hopper"]["loaded"])
    # The first press closes the shuffle to the phones' contributions: from then on the board may be armed.
    status, answer = daemon.post("/api/press")
    assert status == 200, answer
    past.answers.append(answer)
    readings: list[dict[str, Any]] = []
    fired: list[bool] = []
    seen = 0
    for _ in range(PRESSES):
        last_id = daemon.get("/api/state")["last_event_id"]
        for stream in (stranger_stream, phone_stream):
            wait_until(lambda s=stream, last=last_id: s.ids() and s.ids()[-1] >= last, 10)
        stranger = daemon.get("/api/state")
        _, phone = daemon.request("GET", "/api/state")
        assert stranger["last_event_id"] == phone["last_event_id"] == last_id  # nothing happened meanwhile
        streamed = [[e for i, e, _ in s.events if seen < i <= last_id] for s in (stranger_stream, phone_stream)]
        assert streamed[0] == streamed[1]  # a stranger's stream and a phone's tell the same
        seen = last_id
        readings.append(
            {
                "stranger": past.state(stranger),
                "phone": past.state(phone),
                "events": [past.event(e) for e in streamed[1]],
            }
        )
        status, answer = daemon.post("/api/press")
        assert status == 200, answer
        past.answers.append(answer)
        fired.append(answer["cards"] > 0)
    assert 5 <= sum(fired) <= PRESSES - 5, fired  # both kinds, well represented
    leaks = predictors(readings, fired, [a["cards"] > 0 for a in past.answers[:-1]])
    assert not leaks, "readable before a press, and telling a fire from a miss:\n" + "\n".join(
        f"  {path}: before fires {sorted(f)}, before misses {sorted(m)}" for path, (f, m) in sorted(leaks.items())
    )
