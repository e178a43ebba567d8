"""A shuffle record as the text of one QR code (docs/FAIRNESS.md, "The record as a QR code"): the standalone checker
and `uno-launcher verify` take that text as they take the record.

The record's compact JSON is deflated (raw, RFC 1951: the browser's DecompressionStream("deflate-raw") inflates it)
and written in decimal digits, 7 bytes to 17 digits (a last, shorter group of k bytes to DIGITS[k] digits), after
PREFIX: a QR code holds 7,089 digits in its numeric mode, against 2,953 characters of any kind, so a shuffle of 500
presses fits. Digits are what a phone's camera app copies as they are.
"""

from __future__ import annotations

import base64
import functools
import json
import zlib
from collections.abc import Mapping
from typing import Any

import qrcode
from qrcode.exceptions import DataOverflowError

from launcher.text import nests_deeper

PREFIX = "UNO-SHUFFLE:"  # QR's alphanumeric mode holds it as it is
DIGITS = (0, 3, 5, 8, 10, 13, 15, 17)  # the digits of a group of k bytes: the fewest that hold 256^k values
_GROUP = 7
MAX_RECORD = 1_000_000  # bytes a QR code's text may unpack to: a record of 500 presses is about 40 kB


def packed(record: Mapping[str, Any]) -> str:
    """The QR code's text of a record."""
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = squeeze.compress(text) + squeeze.flush()
    groups = (data[at : at + _GROUP] for at in range(0, len(data), _GROUP))
    return PREFIX + "".join(str(int.from_bytes(g, "big")).zfill(DIGITS[len(g)]) for g in groups)


def unpacked(text: str) -> Any:
    """The record a QR code's text holds; ValueError saying what is wrong with it."""
    digits = text.strip().removeprefix(PREFIX)
    if not digits.isdigit() or not digits.isascii():
        raise ValueError(f"a shuffle's QR code text is {PREFIX} and digits")
    data = bytearray()
    at = 0
    while at < len(digits):
        left = len(digits) - at
        size = _GROUP if left >= DIGITS[_GROUP] else DIGITS.index(left) if left in DIGITS else -1
        if size <= 0:
            raise ValueError("the QR code's digits are cut short: scan it again")
        value = int(digits[at : at + DIGITS[size]])
        if value >= 256**size:
            raise ValueError("the QR code's digits are not a record's: scan it again")
        data += value.to_bytes(size, "big")
        at += DIGITS[size]
    inflate = zlib.decompressobj(-15)
    try:
        text = inflate.decompress(bytes(data), MAX_RECORD).decode("utf-8")
    except (zlib.error, UnicodeDecodeError) as e:
        raise ValueError(f"the QR code's text does not hold a record ({e})") from None
    if not inflate.eof and not inflate.unconsumed_tail:
        raise ValueError("the QR code's digits are cut short: scan it again")
    if inflate.unconsumed_tail or nests_deeper(text):
        raise ValueError("the QR code's text does not hold a record: it unpacks too long or too deep")
    try:
        return json.loads(text)
    except ValueError as e:
        raise ValueError(f"the QR code's text does not hold a record ({e})") from None


@functools.lru_cache(maxsize=64)  # an ended record never changes: drawn once, however often (and by whom) asked
def modules(text: str) -> tuple[int, str] | None:
    """The QR code of `text`: its size in modules and its dark modules, row by row, 8 to a byte, most significant
    bit first, as base64 (the page draws them on a canvas); None when it does not fit one code. Mask 0 always: the
    best mask is a little easier to read but takes 8 times as long to find."""
    code = qrcode.QRCode(error_correction=qrcode.constants.ERROR_CORRECT_L, mask_pattern=0, border=0)
    code.add_data(text)
    try:
        code.make(fit=True)
    except (DataOverflowError, ValueError):  # qrcode says "Invalid version" for a text past version 40, too
        return None
    rows = code.get_matrix()
    bits = "".join("1" if dark else "0" for row in rows for dark in row)
    bits += "0" * (-len(bits) % 8)
    data = int(bits, 2).to_bytes(len(bits) // 8, "big")
    return len(rows), base64.b64encode(data).decode("ascii")
