# Types of framing.py, which is firmware/framing.py: the board runs that very file under MicroPython, so the types
# the host's checker needs live here instead of in it.
from collections.abc import Iterable

EVENT: str
MAX_SEQ: int
MAX_LINE: int

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
