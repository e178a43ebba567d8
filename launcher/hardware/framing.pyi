# Types of framing.py, which is firmware/framing.py: the board runs that very file under MicroPython, so the types
# the host's checker needs live here instead of in it.
from collections.abc import Iterable
from typing import Any

EVENT: str
MAX_SEQ: int
MAX_LINE: int
INT: str
TEXT: str
PAIRS: str
HOST: str
BOARD: str
# name: (sender, ((field, kind), ...), the version that added it, how many trailing fields are optional)
MESSAGES: dict[str, tuple[str, tuple[tuple[str, str], ...], int, int]]

class Refused(ValueError): ...

def since(name: str) -> int: ...
def args(name: str, **values: object) -> tuple[object, ...]: ...
def event(name: str, **values: object) -> bytes: ...

class Message:
    frame: Frame
    seq: int | str
    name: str
    def __init__(self, frame: Frame, values: dict[str, object]) -> None: ...
    # A declared field, by its name: an int (INT), a str (TEXT), a tuple[str, ...] (PAIRS), or None when a
    # trailing optional field was left out; the handler knows which from MESSAGES.
    def __getattr__(self, field: str) -> Any: ...

def number(text: str) -> int | None: ...
def parse(frame: Frame) -> Message: ...
def crc16(data: bytes) -> int: ...

class Frame:
    seq: int | str
    cmd: str
    args: tuple[str, ...]
    def __init__(self, seq: int | str, cmd: str, args: Iterable[str] = ()) -> None: ...
    def encode(self) -> bytes: ...

def encode(seq: int | str, cmd: str, args: Iterable[object] = ()) -> bytes: ...
def decode(line: bytes) -> Frame | None: ...

class Parser:
    max_line: int
    bad: int
    def __init__(self, max_line: int = ...) -> None: ...
    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]: ...
