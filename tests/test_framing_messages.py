"""The board protocol declared once (framing.MESSAGES): both ends encode and decode by it, docs/FIRMWARE.md lists
exactly it, a line that does not fit it is refused by name, and a new board event stays in three product files."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from launcher.config import DispenseConfig
from launcher.hardware import framing
from launcher.hardware.base import StopReason
from launcher.hardware.framing import BOARD, EVENT, HOST, INT, MESSAGES, PAIRS, Frame, Refused, encode, parse
from launcher.hardware.serial_link import SerialHardware
from launcher.hardware.sim import MemoryWire
from tests.sim_board import SimBoard, on_clock
from tests.virtual_clock import VirtualClock

ROOT = Path(__file__).resolve().parent.parent


# --- the table and the docs -----------------------------------------------------------------------------------


def documented() -> dict[str, tuple[str, ...]]:
    """Every message in docs/FIRMWARE.md's command and event tables: name -> its field spellings (`<ms>`,
    `[<fire>]`, `[name=ms …]`), in order."""
    text = (ROOT / "docs" / "FIRMWARE.md").read_text(encoding="utf-8")
    commands = text.split("### Commands", 1)[1].split("\n\n", 2)[1]
    events = text.split("### Events", 1)[1].split("\n\n", 2)[1]
    found: dict[str, tuple[str, ...]] = {}
    for table, prefix in ((commands, ""), (events, "E ")):
        for row in table.splitlines()[2:]:
            first_cell = row.split(" | ")[0]
            for code in re.findall(r"`([^`]+)`", first_cell):
                assert code.startswith(prefix), f"{code!r} in the wrong table"
                name, *spelled = code[len(prefix) :].split(" ")
                found[name] = tuple(" ".join(spelled).replace("[name=ms …]", "[name=ms…]").split())
    return found


def declared_spelling(name: str) -> tuple[str, ...]:
    _, fields, _, optional = MESSAGES[name]
    spelled = []
    for i, (field, kind) in enumerate(fields):
        if kind == PAIRS:
            spelled.append("[name=ms…]")
        elif i >= len(fields) - optional:
            spelled.append(f"[<{field}>]")
        else:
            spelled.append(f"<{field}>")
    return tuple(spelled)


def test_docs_list_every_declared_message_with_its_fields_and_nothing_else() -> None:
    docs = documented()
    assert sorted(docs) == sorted(MESSAGES), "docs/FIRMWARE.md's tables and framing.MESSAGES differ"
    for name in MESSAGES:
        assert docs[name] == declared_spelling(name), f"{name}: documented {docs[name]}, declared"


def test_docs_name_the_version_of_each_message_added_after_the_first() -> None:
    text = (ROOT / "docs" / "FIRMWARE.md").read_text(encoding="utf-8")
    for name, (_, _, since, _) in MESSAGES.items():
        if since > 1:
            assert re.search(rf"Version {since} added [^.]*\b{name}\b", text), f"{name} (version {since}) undocumented"


# --- encoding and decoding by name ---------------------------------------------------------------------------------


def test_an_event_sent_by_name_is_the_same_line_as_by_position() -> None:
    """Old hosts read these bytes: the names must not change the wire."""
    line = framing.event("DONE", fire=1, reason="count", ms=412, dispensed=3)
    assert line == encode(EVENT, "DONE", (3, 412, "count", 1)) == b"E DONE 3 412 count 1 *3E80\n"
    assert framing.event("BTN", ms=81234) == b"E BTN 81234 *7E48\n"  # firmware before 3's plain press
    assert framing.event("BTN", ms=83020, fire=2) == b"E BTN 83020 2 *97DA\n"


def test_a_message_is_read_by_name_and_a_left_out_optional_field_is_none() -> None:
    done = parse(Frame(EVENT, "DONE", ("3", "412", "count", "1")))
    assert (done.dispensed, done.ms, done.reason, done.fire) == (3, 412, "count", 1)
    assert parse(Frame(EVENT, "BTN", ("81234",))).fire is None
    fire = parse(Frame(5, "FIRE", ("03", "4000", "80")))
    assert (fire.cards, fire.max_ms, fire.pwm) == (3, 4000, 80)
    assert parse(Frame(2, "CONFIG", ("jam_ms=1200", "ramp_ms=80"))).settings == ("jam_ms=1200", "ramp_ms=80")


@pytest.mark.parametrize(
    ("frame", "names"),
    [
        (Frame(EVENT, "DONE", ("3", "412", "count")), ("DONE", "'fire'", "missing")),
        (Frame(EVENT, "DONE", ("3", "4x2", "count", "1")), ("DONE", "'ms'", "not an integer")),
        (Frame(EVENT, "CARD", ("-1",)), ("CARD", "'n'", "not an integer")),
        (Frame(EVENT, "CARD", ("+1",)), ("CARD", "'n'", "not an integer")),
        (Frame(EVENT, "UP", ("12345678901",)), ("UP", "'ms'", "not an integer")),
        (Frame(EVENT, "LID", ("open", "now")), ("LID", "more")),
        (Frame(EVENT, "WARP", ("1",)), ("WARP", "not a message")),
        (Frame(EVENT, "FIRE", ("1", "2", "3")), ("FIRE", "event")),
        (Frame(7, "DONE", ("3", "412", "count", "1")), ("DONE", "command")),
    ],
)
def test_a_line_that_does_not_fit_its_declaration_is_refused_by_name(frame: Frame, names: tuple[str, ...]) -> None:
    with pytest.raises(Refused) as refused:
        parse(frame)
    for name in names:
        assert name in str(refused.value)


def test_a_sender_cannot_leave_out_a_required_field_or_invent_one() -> None:
    with pytest.raises(Refused, match=r"DONE.*'fire'.*missing"):
        framing.event("DONE", dispensed=3, ms=412, reason="count")
    with pytest.raises(Refused, match=r"UP.*'fire'"):
        framing.event("UP", ms=1, fire=2)
    with pytest.raises(Refused, match="BLINK"):
        framing.args("BLINK")


# --- both ends dispatch by the table -------------------------------------------------------------------------------


def test_each_end_has_a_handler_for_every_message_the_other_sends(bench: Bench) -> None:
    events = {name for name, (sender, *_) in MESSAGES.items() if sender == BOARD}
    commands = {name for name, (sender, *_) in MESSAGES.items() if sender == HOST}
    assert set(bench.host._handlers) == events
    assert set(bench.pico.launcher._handlers) == commands


def test_the_firmware_versions_come_from_the_table() -> None:
    from launcher.hardware import serial_link

    assert serial_link.RELEASE_FIRMWARE == framing.since("UP") == 4
    assert framing.since("ARM") == framing.since("DISARM") == 3
    assert all(kind in (INT, framing.TEXT, PAIRS) for _, fields, _, _ in MESSAGES.values() for _, kind in fields)
    # A field is read as an attribute of its Message: it must not hide the frame's own.
    assert not {"name", "seq", "frame"} & {field for _, fields, _, _ in MESSAGES.values() for field, _ in fields}


PRODUCT = [ROOT / "firmware", ROOT / "launcher", ROOT / "webui"]
# A new board event: its declaration, the firmware that sends it and the host's handler (docs/ARCHITECTURE.md, "A
# new board message").
EVENT_FILES = {"firmware/framing.py", "firmware/main.py", "launcher/hardware/serial_link.py"}


def test_a_board_event_lives_in_three_product_files() -> None:
    files = [p for top in PRODUCT if top.exists() for p in top.rglob("*.py") if not p.is_symlink()]
    for name, (sender, *_) in MESSAGES.items():
        if sender != BOARD:
            continue
        where = {str(p.relative_to(ROOT)) for p in files if f'"{name}"' in p.read_text(encoding="utf-8")}
        assert where == EVENT_FILES, f"E {name} is spelled in {sorted(where)}"


# --- the host refuses a malformed event in one log line, and goes on -----------------------------------------------


class Bench:
    def __init__(self, clock: VirtualClock, to_host: Callable[[bytes], list[bytes]] | None = None) -> None:
        self.clock = clock
        self.wire = MemoryWire(clock)
        self.pico = SimBoard(self.wire, clock=clock, to_host=to_host)
        self.host = SerialHardware(
            port="memory", dispense=DispenseConfig(min_rest_ms=0), clock=clock, opener=self.wire.open
        )
        clock.run_until(lambda: self.host.describe()["link"] == "up", within=10.0)

    def close(self) -> None:
        on_clock(self.clock, self.host.close)
        on_clock(self.clock, self.pico.close)


@pytest.fixture
def bench() -> Iterator[Bench]:
    clock = VirtualClock()
    made = Bench(clock)
    yield made
    made.close()
    clock.close()


BAD = encode(EVENT, "DONE", ("3", "4x2", "count", "1"))


def test_a_malformed_done_is_logged_once_by_name_and_the_fire_still_ends(caplog: pytest.LogCaptureFixture) -> None:
    def corrupt(line: bytes) -> list[bytes]:
        return [BAD, line] if line.startswith(b"E DONE ") else [line]  # a bad copy just before the real one

    clock = VirtualClock()
    b = Bench(clock, to_host=corrupt)
    try:
        with caplog.at_level(logging.WARNING, logger="launcher.hardware.serial_link"):
            job = b.host.dispenser.start(2)
            clock.run_until(lambda: job.done, within=10.0)
        assert job.wait(0).stop is StopReason.COUNT and job.wait(0).dispensed == 2
        refused = [r for r in caplog.records if "refused" in r.getMessage()]
        assert len(refused) == 1
        assert "DONE" in refused[0].getMessage() and "'ms'" in refused[0].getMessage()
        assert refused[0].exc_info is None  # one line, never a traceback
        assert b.host.describe()["link"] == "up"
    finally:
        b.close()
        clock.close()
