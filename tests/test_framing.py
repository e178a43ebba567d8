"""The frame format shared by host and firmware: CRC, round trips, and a parser that survives any bytes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.hardware import framing
from launcher.hardware.framing import EVENT, Frame, Parser, crc16, decode, encode

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
FUZZ = settings(derandomize=True, max_examples=300, deadline=None)  # a pass stays a pass


def test_crc_is_ccitt_false() -> None:
    assert crc16(b"123456789") == 0x29B1
    assert crc16(b"") == 0xFFFF


def test_the_host_runs_the_firmware_file_itself() -> None:
    assert Path(framing.__file__).read_bytes() == (FIRMWARE / "framing.py").read_bytes()


def test_encode_examples() -> None:
    assert encode(12, "FIRE", (3, 4000, 80)) == b"12 FIRE 3 4000 80 *6834\n"
    assert encode(EVENT, "BTN", (81234,)).startswith(b"E BTN 81234 *")
    line = encode(7, "OK", ("fire=3",))
    body, crc = line[:-1].split(b" *")
    assert int(crc, 16) == crc16(body) and crc == crc.upper() and len(crc) == 4


def test_every_line_of_the_protocol_s_example_session_has_its_right_crc() -> None:
    """docs/FIRMWARE.md's session on the wire is what a maker types or compares against: each line must decode."""
    text = (ROOT / "docs" / "FIRMWARE.md").read_text(encoding="utf-8")
    session = text.split("### A session, as it looks on the wire", 1)[1].split("```")[1]
    lines = [line[2:] for line in session.splitlines() if line.startswith(("> ", "< "))]
    assert len(lines) >= 20
    for line in lines:
        assert decode(line.encode()) is not None, f"{line!r}: a bad CRC or syntax"


@pytest.mark.parametrize(
    ("seq", "cmd", "args"),
    [
        (-1, "PING", ()),
        (65536, "PING", ()),
        ("7", "PING", ()),
        (1, "ping", ()),
        (1, "", ()),
        (1, "TOOLONGCMD", ()),
        (1, "OK", ("two words",)),
        (1, "OK", ("star*",)),
        (1, "OK", ("",)),
        (1, "OK", ("é",)),
        (1, "OK", ("x" * 200,)),
    ],
)
def test_encode_refuses_what_the_other_end_would_drop(seq: object, cmd: str, args: tuple[object, ...]) -> None:
    with pytest.raises(ValueError):
        encode(seq, cmd, args)


def test_round_trip_and_line_endings() -> None:
    frames = [Frame(0, "HELLO"), Frame(65535, "OK", ("boot=1A2B3C4D",)), Frame(EVENT, "DONE", ("3", "812", "count"))]
    stream = b"".join(f.encode() for f in frames)
    assert Parser().feed(stream) == frames
    crlf = stream.replace(b"\n", b"\r\n")
    assert Parser().feed(crlf) == frames
    parser = Parser()  # one byte at a time
    assert [f for b in stream for f in parser.feed(bytes([b]))] == frames
    assert parser.bad == 0


def test_parser_drops_and_counts_bad_lines_and_recovers() -> None:
    good = encode(5, "PING")
    parser = Parser()
    noise = b"garbage\n" + good[:-3] + b"00\n" + b"\n\r\n" + b"x" * 1000 + b"\n" + good
    assert parser.feed(noise) == [Frame(5, "PING")]
    assert parser.bad == 3  # the empty lines are not noise: a lone newline resynchronises


@pytest.mark.parametrize(
    "body",
    [b"01 PING", b"123456 PING", b"1  PING", b" 1 PING", b"1 PING ", b"1 Ping", b"X PING", b"1", b"1 P\tNG"],
)
def test_decode_rejects_bad_syntax_even_with_a_good_crc(body: bytes) -> None:
    assert decode(body + b" *%04X" % crc16(body)) is None


def test_decode_rejects_lowercase_hex() -> None:
    line = next(line for seq in range(100) if not (line := encode(seq, "PING")[:-1])[-4:].isdigit())
    assert decode(line) == Frame(int(line.split()[0]), "PING")
    assert decode(line[:-4] + line[-4:].lower()) is None


tokens = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="*"), min_size=1, max_size=8)
commands = st.text(st.characters(min_codepoint=ord("A"), max_codepoint=ord("Z")), min_size=1, max_size=8)
frames = st.builds(
    Frame,
    st.one_of(st.integers(0, framing.MAX_SEQ), st.just(EVENT)),
    commands,
    st.lists(tokens, max_size=6),
)


@FUZZ
@given(frames)
def test_every_encodable_frame_round_trips(frame: Frame) -> None:
    assert Parser().feed(frame.encode()) == [frame]


@FUZZ
@given(st.binary(max_size=600), st.lists(st.integers(1, 64), max_size=20))
def test_random_bytes_never_raise_and_never_make_a_frame(data: bytes, cuts: list[int]) -> None:
    parser = Parser()
    got: list[Frame] = []
    rest = data
    for cut in cuts:
        got += parser.feed(rest[:cut])
        rest = rest[cut:]
    got += parser.feed(rest)
    assert got == []


def _unique(items: list[Frame]) -> list[Frame]:
    return [Frame(i, f.cmd, f.args) for i, f in enumerate(items)]  # distinct seqs: a copy cannot pass for it


@FUZZ
@given(
    st.lists(frames, min_size=2, max_size=8).map(_unique),
    st.data(),
    st.sampled_from(["flip", "truncate", "delete", "insert"]),
)
def test_a_damaged_frame_is_never_taken(items: list[Frame], data: st.DataObject, how: str) -> None:
    victim = data.draw(st.integers(0, len(items) - 1))
    lines = [f.encode() for f in items]
    line = lines[victim]
    at = data.draw(st.integers(0, len(line) - 1))
    if how == "flip":
        line = line[:at] + bytes([line[at] ^ data.draw(st.integers(1, 255))]) + line[at + 1 :]
    elif how == "truncate":
        line = line[:at]
    elif how == "delete":
        line = line[:at] + line[at + 1 :]
    else:
        line = line[:at] + bytes([data.draw(st.integers(0, 255))]) + line[at:]
    lines[victim] = line
    got = Parser().feed(b"".join(lines))
    assert all(f in items for f in got)
    # Only a harmless change (a \r before the \n, a newline before the frame) lets the frame through.
    intact = items[victim].encode()[:-1] in line.replace(b"\r\n", b"\n").split(b"\n")
    assert intact or items[victim] not in got
    # Everything after the damage comes through, bar the frame that the damaged one may have run into.
    assert all(f in got for f in items[victim + 2 :])


# --- the firmware files stay within what MicroPython runs ------------------------------------------------------

MICROPYTHON_MODULES = {"board", "framing", "machine", "micropython", "random", "select", "sys", "time"}


@pytest.mark.parametrize("name", ["framing.py", "board.py", "main.py"])
def test_firmware_stays_in_the_micropython_subset(name: str) -> None:
    source = (FIRMWARE / name).read_text(encoding="utf-8")
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            assert set(names) <= MICROPYTHON_MODULES, f"{name}:{node.lineno} imports {names}"
        assert not isinstance(node, ast.AnnAssign), f"{name}:{node.lineno}: annotations"
        if isinstance(node, ast.arguments):
            assert all(a.annotation is None for a in node.args), f"{name}: annotated arguments"
        if isinstance(node, ast.FunctionDef):
            assert node.returns is None, f"{name}:{node.lineno}: return annotation"
            assert not node.decorator_list, f"{name}:{node.lineno}: decorators"
        if isinstance(node, ast.FormattedValue):
            assert node.conversion != ord("a"), f"{name}:{node.lineno}: !a in an f-string"
    assert not re.search(r"\{[^{}]*=[!:}]", source.replace("==", "")), f"{name}: f-string '=' specifier"
