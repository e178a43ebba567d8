"""The next press is the board's secret (docs/FAIRNESS.md, "The next press is secret"): nothing a stranger or a
joined phone can read before a press tells whether it will fire or miss.

Over loopback against the daemon in a process of its own (simulated hardware), every reading before each of 40-odd
phone presses is kept: `/api/state` as a stranger and as a joined phone, and the events both streams received since
the last reading; and the same in the daemon's own process on a virtual clock, pressed mostly with the big button.
What is a function of the presses already told (their count, the last outcome, the hopper, the tension, event ids)
is checked against that public past and only then set aside; what remains must not take one value before fires and
another before misses. The board's side: the bytes sent to it between two presses, and its LED, are the same
whichever the next press is.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from launcher.events import EventType
from launcher.fairplay.fairness import verify
from tests.conftest import RunningDaemon, joined_client, local_daemon, wait_until
from tests.sim_board import older_firmware
from tests.sse_client import SseClient
from tests.test_firmware import RIGS, Rig
from tests.test_reflex import Table
from tests.virtual_clock import VirtualClock

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


LINK_COUNTERS = ("retransmits", "restarts", "bad_frames")  # what went wrong on the wire so far: never fall


class Past:
    """What every phone has been told of the presses so far: their answers and who pressed, in order."""

    def __init__(self, loaded: int) -> None:
        self.loaded = loaded
        self.answers: list[dict[str, Any]] = []
        self.sources: list[str] = []
        self._link = dict.fromkeys(LINK_COUNTERS, 0)

    def told(self, answer: dict[str, Any], source: str) -> None:
        self.answers.append(answer)
        self.sources.append(source)

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
        for counter in LINK_COUNTERS:  # a line lost on a loaded machine is no outcome's
            assert hardware[counter] >= self._link[counter], (counter, hardware[counter])
            self._link[counter] = hardware[counter]
            hardware[counter] = PAST
        state["last_event_id"] = PAST  # checked against the streams by the caller
        return state

    def event(self, event: dict[str, Any]) -> dict[str, Any]:
        """An event of the last press (its press, its outcome, the hopper after it) with what it told set aside."""
        last, source = self.answers[-1], self.sources[-1]
        data = dict(event["data"])
        expected = {
            "press": last["press"],
            "source": source,
            "tension": last["tension"],
            "jackpot": last["jackpot"],
            "player": last["player"],
            "requested": last["cards"],
        }
        if event["type"] in ("hopper.changed", "launcher.fired", "launcher.missed"):
            expected["dispensed"] = self.dispensed if event["type"] == "hopper.changed" else last["dispensed"]
        if event["type"] == "hopper.changed":
            expected |= {"loaded": self.loaded, "remaining": self.loaded - self.dispensed}
        for key in data:
            if key in expected:
                assert data[key] == expected[key], (key, event)
                data[key] = PAST
            elif key in ("ms", "misses_in_row"):  # how long the last fire ran, the misses so far
                data[key] = PAST
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


def test_the_check_finds_a_field_that_tells_and_passes_one_that_does_not() -> None:
    """The check above, on readings made up for it: a field that follows the next press is named, one that follows
    only the last press (compared among readings after the same kind) is not."""
    fired = [True, False, False, True, False, True, True, False]
    after_fire = [False, True, False, False, True, False, True, True]
    telling = [{"armed": 3 if f else None, "last": a} for f, a in zip(fired, after_fire, strict=True)]
    assert predictors(telling, fired, after_fire) == {"armed": ({"3"}, {"None"})}
    assert predictors([{"last": a} for a in after_fire], fired, after_fire) == {}


@pytest.fixture
def streams(daemon_process: RunningDaemon) -> Iterator[tuple[SseClient, SseClient]]:
    stranger, phone = (
        SseClient(daemon_process.url),
        SseClient(daemon_process.url, cookie=daemon_process.joined.table_cookie),
    )
    try:
        stranger.connected.wait(10)
        phone.connected.wait(10)
        yield stranger, phone
    finally:
        stranger.close()
        phone.close()


def test_nothing_a_stranger_or_a_phone_reads_before_a_press_tells_a_fire_from_a_miss(
    daemon_process: RunningDaemon, streams: tuple[SseClient, SseClient]
) -> None:
    stranger_stream, phone_stream = streams
    past = Past(loaded=daemon_process.get("/api/state")["hopper"]["loaded"])
    # The first press closes the shuffle to the phones' contributions: from then on the board may be armed.
    status, answer = daemon_process.post("/api/press")
    assert status == 200, answer
    past.told(answer, "web")
    readings: list[dict[str, Any]] = []
    fired: list[bool] = []
    seen = 0
    for _ in range(PRESSES):
        last_id = daemon_process.get("/api/state")["last_event_id"]
        for stream in (stranger_stream, phone_stream):
            wait_until(lambda s=stream, last=last_id: s.ids() and s.ids()[-1] >= last, 10)
        stranger = daemon_process.get("/api/state")
        _, phone = daemon_process.request("GET", "/api/state")
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
        status, answer = daemon_process.post("/api/press")
        assert status == 200, answer
        past.told(answer, "web")
        fired.append(answer["cards"] > 0)
    assert 5 <= sum(fired) <= PRESSES - 5, fired  # both kinds, well represented
    leaks = predictors(readings, fired, [a["cards"] > 0 for a in past.answers[:-1]])
    assert not leaks, "readable before a press, and telling a fire from a miss:\n" + "\n".join(
        f"  {path}: before fires {sorted(f)}, before misses {sorted(m)}" for path, (f, m) in sorted(leaks.items())
    )


def test_nothing_read_before_a_press_of_the_big_button_tells_a_fire_from_a_miss(tmp_path: Path) -> None:
    """The same readings in the daemon's own process on a virtual clock, pressed mostly with the big button: the
    press the board fires by itself when it was armed to fire, and tells of when it was armed to miss."""
    with local_daemon(tmp_path) as daemon:
        clock = daemon.clock
        assert isinstance(clock, VirtualClock)
        stranger, phone = daemon.app.test_client(), joined_client(daemon)

        def settle() -> None:
            clock.advance(0.5)  # the button's debounce, the link, the fire
            clock.run_until(lambda: not daemon.controller.snapshot()["busy"], within=5.0)

        past = Past(loaded=daemon.controller.snapshot()["hopper"]["loaded"])
        seen = daemon.bus.last_id  # what the daemon's start published is no press's
        assert phone.post("/api/press").status_code == 200  # closes the contributions
        settle()
        past.told(daemon.controller.snapshot()["last_outcome"], "web")
        readings: list[dict[str, Any]] = []
        fired: list[bool] = []
        for n in range(PRESSES):
            told = [stranger.get("/api/state").get_json(), phone.get("/api/state").get_json()]
            events = [{"type": e.type, "data": e.data} for e in daemon.bus.events_after(seen)]
            seen = told[0]["last_event_id"]
            readings.append(
                {"stranger": past.state(told[0]), "phone": past.state(told[1]), "events": list(map(past.event, events))}
            )
            source = "button" if n % 3 else "web"
            if source == "button":
                daemon.hardware.world.press_button()  # type: ignore[attr-defined]
            else:
                assert phone.post("/api/press").status_code == 200
            settle()
            past.told(daemon.controller.snapshot()["last_outcome"], source)
            fired.append(past.answers[-1]["cards"] > 0)
        assert len(past.answers) == daemon.controller.snapshot()["presses"] == PRESSES + 1  # no press lost
        assert 5 <= sum(fired) <= PRESSES - 5, fired
        leaks = predictors(readings, fired, [a["cards"] > 0 for a in past.answers[:-1]])
        assert not leaks, leaks


# --- the board's side: what goes to it between two presses, and its LED ------------------------------------------

QUIET = (b"PING", b"STATUS")  # the heartbeat, sent on a timer whatever the next press


def shape(line: bytes) -> tuple[bytes, tuple[int, ...]]:
    """A line to the board without its sequence number and CRC: the command and the length of each argument."""
    _seq, cmd, *args = line.split(b" *")[0].split(b" ")
    return cmd, tuple(len(a) for a in args)


def test_the_bytes_sent_to_the_board_between_two_presses_are_alike_for_a_fire_and_a_miss(
    tmp_path: Path, clock: VirtualClock
) -> None:
    """The big button and phones press in turn; each line to the board after a press's outcome is published and
    before the next press, heartbeats aside, is kept by its shape and how long after that outcome (or after the
    host's decision in between) it went."""
    t = Table(tmp_path, clock)
    try:
        wire: list[tuple[float, bytes]] = []
        outcome_at: list[tuple[float, int]] = []  # when each press's outcome was published, and the wire's length

        def to_board(line: bytes) -> list[bytes]:
            wire.append((clock.now(), line))
            return [line]

        publish = t.bus.publish

        def noted(kind: EventType, data: dict[str, Any]) -> Any:
            if kind in (EventType.LAUNCHER_FIRED, EventType.LAUNCHER_MISSED):
                outcome_at.append((clock.now(), len(wire)))
            return publish(kind, data)

        t.pico.to_board = to_board
        t.bus.publish = noted  # type: ignore[method-assign]
        t.controller.press("web").wait(5)  # closes the contributions: from then on the board is armed
        t.idle()
        first = t.controller.snapshot()["last_outcome"]["cards"] > 0
        readings: list[tuple[tuple[bytes, tuple[int, ...], float], ...]] = []
        fired: list[bool] = []
        for n in range(PRESSES):
            t.clock.advance(0.05)  # whatever follows the outcome has gone out
            at, start = outcome_at[-1]
            # A decision of the host's that changes nothing (an admin's reset with no FAULT): it takes the arm back
            # and gives it again, which must cost the same whatever the arm held.
            reset_at, middle = clock.now(), len(wire)
            t.controller.reset()
            t.clock.advance(0.05)
            sent = [(shape(line), round(when - at, 6)) for when, line in wire[start:middle]]
            sent += [(shape(line), round(when - reset_at, 6)) for when, line in wire[middle:]]
            readings.append(tuple((cmd, lengths, after) for (cmd, lengths), after in sent if cmd not in QUIET))
            t.click() if n % 2 else t.controller.press("web").wait(5)
            t.idle()
            fired.append(t.controller.snapshot()["last_outcome"]["cards"] > 0)
        assert 5 <= sum(fired) <= PRESSES - 5, fired
        assert all([c for c, _, _ in r] == [b"ARM", b"DISARM", b"ARM"] for r in readings), readings  # every press
        after_fire = [first, *fired[:-1]]
        leaks = predictors([{"wire": list(map(list, r))} for r in readings], fired, after_fire)
        assert not leaks, leaks
        # A miss from the arm never ran the motor: one start of the roller for each fire told, and no more.
        assert t.pico.motor.starts == t.pico.launcher.fires == len(t.events("launcher.fired"))
        assert verify(t.record()).ok
    finally:
        t.close()


def test_a_board_whose_firmware_arms_only_fires_is_never_armed(
    tmp_path: Path, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Firmware 3 and 4 take an ARM only for a fire: armed, they would tell the wire which presses fire. They get
    none, and every press goes through the host as before the reflex."""
    older_firmware(monkeypatch, "4")
    t = Table(tmp_path, clock)
    try:
        for n in range(12):
            t.click() if n % 2 else t.controller.press("web").wait(5)
            t.idle()
        assert t.sent(b"ARM") == [] and t.sent(b"DISARM") == []
        assert len(t.events("button.pressed")) == 12
        assert t.pico.launcher.fires == len(t.events("launcher.fired")) > 0
    finally:
        t.close()


@pytest.mark.parametrize("press", [False, True], ids=["until-the-press", "through-the-press"])
def test_the_board_s_led_is_the_same_for_an_arm_to_fire_and_an_arm_to_miss(press: bool) -> None:
    """Stepped a millisecond at a time: linked, then armed for a fire, or for a miss, or not at all; the LED's every
    change is the same, before the press (and, told to, through it and the fire it starts)."""
    lamps = []
    for arm in ((3, 4000, 80), ("00", 4000, 80), None):
        rig = Rig(led=25)
        try:
            assert 25 not in (v for v in vars(rig.pins).values() if isinstance(v, int) and v != 25)
            rig.run(50)
            rig.armed(min_rest_ms=0)
            rig.run(200)
            if arm is not None:
                assert rig.send("ARM", *arm).cmd == "OK"
            for _ in range(4):
                rig.run(300)
                rig.send("PING")
            if press:
                rig.press()
                rig.run(40)
                rig.release()
                for _ in range(3):
                    rig.run(300)
                    rig.send("PING")
            lamps.append(rig.lamp.changes)
        finally:
            rig.close()
            RIGS.remove(rig)
    assert lamps[0] == lamps[1] == lamps[2], lamps
    assert lamps[0] == [(1, False), (51, True)]  # lit from the pass after HELLO on: a host is linked, nothing more
