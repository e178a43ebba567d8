"""Frames of the serial link between the host and the launcher board: one source for both ends.

The board runs this file under MicroPython and the host under CPython (it ships as `launcher.hardware.framing`),
so it keeps to what both have: no type hints (launcher/hardware/framing.pyi has them for the host), no
dataclasses, and bytes handled with find/split/slices.

A frame is one ASCII line that reads well in a terminal:

    <seq> <CMD> [args...] *<crc>\\n        e.g.  12 FIRE 3 4000 80 *6834

`seq` is 0..65535 for a host command and the board's reply to it (`12 OK fire=7`, `12 ERR busy`), or `E` for
an event the board sends on its own (`E BTN 81234`). `crc` is the CRC-16/CCITT-FALSE of every byte before
` *`, as four uppercase hex digits. Tokens are printable ASCII without `*`, separated by single spaces. A line
may end in `\\r\\n`; empty lines are ignored, so a lone `\\n` resynchronises a peer after noise.
"""

EVENT = "E"  # the sequence field of an unsolicited event
MAX_SEQ = 65535
MAX_LINE = 200  # bytes, without the newline; longer lines are noise
_MAX_CMD = 8
_MAX_DIGITS = 10  # a board's ticks_ms wraps below 2**30

# Kinds of field: a decimal integer without sign; one token of text; every remaining `name=value` token.
INT = "int"
TEXT = "text"
PAIRS = "pairs"
# Who sends a message: the host (a command, which gets a reply) or the board (an event, `seq` E).
HOST = "host"
BOARD = "board"

# Every command and event, declared once: both ends encode and decode them by these names. name: (sender,
# ((field, kind), ...) in wire order, the firmware version that added it, how many trailing fields may be left
# out). The board's replies (OK, ERR) carry `name=value` tokens and are not declared here. A new message goes
# here, in its sender and in its handler; docs/FIRMWARE.md's tables list the same messages (a test holds it).
MESSAGES = {
    "HELLO": (HOST, (), 1, 0),
    "PING": (HOST, (), 1, 0),
    "STATUS": (HOST, (), 1, 0),
    "FIRE": (HOST, (("cards", INT), ("max_ms", INT), ("pwm", INT)), 1, 0),
    "ARM": (HOST, (("cards", INT), ("max_ms", INT), ("pwm", INT)), 3, 0),
    "DISARM": (HOST, (), 3, 0),
    "STOP": (HOST, (), 1, 0),
    "CONFIG": (HOST, (("settings", PAIRS),), 1, 0),
    "BOOT": (BOARD, (("id", TEXT),), 1, 0),
    "BTN": (BOARD, (("ms", INT), ("fire", INT)), 1, 1),  # `fire` from version 3: the board fired from its arm
    "UP": (BOARD, (("ms", INT),), 4, 0),
    "CARD": (BOARD, (("n", INT),), 1, 0),
    "JAM": (BOARD, (), 1, 0),
    "STUCK": (BOARD, (), 1, 0),
    "EMPTY": (BOARD, (), 1, 0),
    "DONE": (BOARD, (("dispensed", INT), ("ms", INT), ("reason", TEXT), ("fire", INT)), 1, 0),
    "LID": (BOARD, (("state", TEXT),), 1, 0),
}


class Refused(ValueError):
    """A line that does not fit its message's declaration; the text names the message and the field."""


def since(name):
    """The firmware version that added the message `name`."""
    return MESSAGES[name][2]


def args(name, **values):
    """The arguments of message `name` in declared order, from its fields by name. Refused for an undeclared
    message, an unknown field, or a field left out that is not among the trailing optional ones."""
    if name not in MESSAGES:
        raise Refused(f"{name}: not a message of the protocol")
    declared = MESSAGES[name][1]
    names = [field for field, _ in declared]
    for field in values:
        if field not in names:
            raise Refused(f"{name}: no field {field!r}")
    out = []
    for i in range(len(declared)):
        field, kind = declared[i]
        if values.get(field) is None:
            if i < len(declared) - MESSAGES[name][3]:
                raise Refused(f"{name}: field {field!r} is missing")
            break  # the optional fields end here
        value = values[field]
        if kind == PAIRS:
            out.extend(value)
        else:
            out.append(value)
    return tuple(out)


def event(name, **values):
    """The line of the board's event `name`, with its fields by name."""
    return encode(EVENT, name, args(name, **values))


class Message:
    """A decoded frame whose fields are read by their declared names (`msg.cards`); a trailing optional field left
    out reads None. `name`, `seq` and `frame` are the frame's."""

    def __init__(self, frame, values):
        self.frame = frame
        self.seq = frame.seq
        self.name = frame.cmd
        for field in values:
            setattr(self, field, values[field])

    def __repr__(self):
        return f"Message({self.frame!r})"


def number(text):
    """The integer a field spells (decimal digits, no sign), or None."""
    if not 0 < len(text) <= _MAX_DIGITS:
        return None
    for ch in text:
        if ch < "0" or ch > "9":
            return None
    return int(text)


def parse(frame):
    """The Message in a command or event Frame, its fields checked against MESSAGES; Refused (naming the message and
    the field) when it does not fit: an undeclared name, a field missing, one too many, or not an integer."""
    name = frame.cmd
    if name not in MESSAGES:
        raise Refused(f"{name}: not a message of the protocol")
    sender, declared, _, optional = MESSAGES[name]
    if (sender == BOARD) != (frame.seq == EVENT):
        raise Refused(f"{name}: sent as {'an event' if frame.seq == EVENT else 'a command'}, declared by the {sender}")
    given = frame.args
    values = {}
    for i in range(len(declared)):
        field, kind = declared[i]
        if kind == PAIRS:
            values[field] = given[i:]
            return Message(frame, values)
        if i >= len(given):
            if i < len(declared) - optional:
                raise Refused(f"{name}: field {field!r} is missing")
            values[field] = None
            continue
        value = given[i] if kind == TEXT else number(given[i])
        if value is None:
            raise Refused(f"{name}: field {field!r} is not an integer: {given[i]!r}")
        values[field] = value
    if len(given) > len(declared):
        raise Refused(f"{name}: {len(given) - len(declared)} field(s) more than its {len(declared)}")
    return Message(frame, values)


def crc16(data):
    """CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, not reflected, no final xor."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


class Frame:
    """One decoded line: `seq` (an int, or EVENT), `cmd` (upper-case letters) and `args` (a tuple of str)."""

    def __init__(self, seq, cmd, args=()):
        self.seq = seq
        self.cmd = cmd
        self.args = tuple(args)

    def encode(self):
        return encode(self.seq, self.cmd, self.args)

    def __eq__(self, other):
        return isinstance(other, Frame) and (self.seq, self.cmd, self.args) == (other.seq, other.cmd, other.args)

    def __hash__(self):
        return hash((self.seq, self.cmd, self.args))

    def __repr__(self):
        return f"Frame({self.seq!r}, {self.cmd!r}, {self.args!r})"


def _check_token(token):
    if not token:
        raise ValueError("empty token")
    for ch in token:
        if ch < "!" or ch > "~" or ch == "*":
            raise ValueError(f"token {token!r}: only printable ASCII without spaces or '*'")


def encode(seq, cmd, args=()):
    """The line for one frame, newline included. ValueError for a frame that the other end would refuse."""
    if seq != EVENT and not (isinstance(seq, int) and 0 <= seq <= MAX_SEQ):
        raise ValueError(f"seq {seq!r}: expected 0..{MAX_SEQ} or {EVENT!r}")
    if not _is_cmd(cmd):
        raise ValueError(f"cmd {cmd!r}: expected 1 to {_MAX_CMD} upper-case letters")
    parts = [str(seq), cmd]
    for arg in args:
        arg = str(arg)
        _check_token(arg)
        parts.append(arg)
    body = " ".join(parts).encode()
    if len(body) + 6 > MAX_LINE:
        raise ValueError(f"frame longer than {MAX_LINE} bytes")
    return body + f" *{crc16(body):04X}\n".encode()


def _is_cmd(text):
    if not 0 < len(text) <= _MAX_CMD:
        return False
    return all("A" <= ch <= "Z" for ch in text)


def _parse_seq(text):
    if text == EVENT:
        return EVENT
    if not 0 < len(text) <= 5 or (len(text) > 1 and text[0] == "0"):
        return None  # one spelling per number, so a retransmission is byte-identical
    for ch in text:
        if ch < "0" or ch > "9":
            return None
    seq = int(text)
    return seq if seq <= MAX_SEQ else None


def decode(line):
    """The Frame in one line (bytes, without its line ending), or None if it is not a valid frame."""
    n = len(line)
    if n < 9 or n > MAX_LINE or line[n - 6 : n - 4] != b" *":
        return None
    crc = 0
    for c in line[n - 4 :]:
        if 48 <= c <= 57:
            crc = crc * 16 + c - 48
        elif 65 <= c <= 70:
            crc = crc * 16 + c - 55
        else:
            return None
    body = line[: n - 6]
    for c in body:
        if c < 32 or c > 126 or c == 42:  # printable ASCII, no '*'
            return None
    if crc16(body) != crc:
        return None
    parts = body.decode().split(" ")
    if len(parts) < 2 or "" in parts:
        return None
    seq = _parse_seq(parts[0])
    if seq is None or not _is_cmd(parts[1]):
        return None
    return Frame(seq, parts[1], parts[2:])


class Parser:
    """Turns a byte stream into Frames, line by line. Never raises on any input.

    A bad line (wrong CRC, bad syntax, or longer than `max_line`) is dropped and counted in `bad`; the parser
    picks up again at the next newline.
    """

    def __init__(self, max_line=MAX_LINE):
        self.max_line = max_line
        self.bad = 0
        self._buf = b""
        self._overflow = False  # inside a line that is already too long: skip to its newline

    def feed(self, data):
        """Every complete frame in `data` (bytes-like) plus what came before it, in order."""
        data = bytes(data)
        frames = []
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            line = self._buf + data[start:end]
            self._buf = b""
            if line[-1:] == b"\r":
                line = line[:-1]
            if self._overflow:
                self._overflow = False
                self.bad += 1
            elif line:
                frame = decode(line) if len(line) <= self.max_line else None
                if frame is None:
                    self.bad += 1
                else:
                    frames.append(frame)
            start = end + 1
        if not self._overflow:
            self._buf += data[start:]
            if len(self._buf) > self.max_line + 1:  # room for a final \r
                self._buf = b""
                self._overflow = True
        return frames
