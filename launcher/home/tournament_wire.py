"""A tournament's secret and what it signs: the key its tables share, the id derived from it, the code a second
table's admin types to join, and the signed envelope of every message on the broker.

The broker is no judge: any client on it may publish anything, retained, whatever its ACL. So every tournament
message is `{"from", "body", "mac"}` with an HMAC-SHA256, under the tournament's key, over its topic and the rest;
a message without the key's MAC is refused. The tournament's id is derived from the key, so a forger cannot make
up a setup for a real id, and a code typed wrong names a tournament nobody has (its check letter says so first).
Replays are bounded by what is signed: a round carries its version (the scoring table's counter), an ask a nonce.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from launcher.game.rotation import TournamentError

KEY_BYTES = 16  # 128 random bits
CHECK_BYTES = 1  # one byte of check: a typo is caught 255 times in 256 before anything is looked for
GROUP = 4  # the code is shown in groups of four letters
_ID_LABEL = b"uno-launcher tournament id"
_CHECK_LABEL = b"uno-launcher join code"
_SPACES = re.compile(r"[\s\-_.]+")
_LOOKALIKES = str.maketrans({"0": "O", "1": "I", "8": "B"})  # base32 has no 0, 1 or 8: read them as meant


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


def tournament_id(key: bytes) -> str:
    """The id a tournament is known by on the broker: 12 hex digits only the key's holders can make."""
    return hmac.new(key, _ID_LABEL, hashlib.sha256).hexdigest()[:12]


def join_code(key: bytes) -> str:
    """The key as a second table's admin types it: 28 letters and digits in groups of four."""
    check = hmac.new(key, _CHECK_LABEL, hashlib.sha256).digest()[:CHECK_BYTES]
    text = base64.b32encode(key + check).decode("ascii").rstrip("=")
    return "-".join(text[i : i + GROUP] for i in range(0, len(text), GROUP))


def key_of(code: str) -> bytes:
    """The key a typed code holds (spaces, dashes, case and look-alike digits forgiven), or TournamentError."""
    text = _SPACES.sub("", code).upper().translate(_LOOKALIKES)
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except ValueError:
        raw = b""
    key, check = raw[:KEY_BYTES], raw[KEY_BYTES:]
    if len(raw) != KEY_BYTES + CHECK_BYTES or not hmac.compare_digest(
        check, hmac.new(key, _CHECK_LABEL, hashlib.sha256).digest()[:CHECK_BYTES]
    ):
        raise TournamentError("bad_code", "that is not a tournament's join code: check each group of four")
    return key


def _signed_text(topic: str, sender: str, body: dict[str, Any]) -> bytes:
    fields = json.dumps({"from": sender, "body": body}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return topic.encode("utf-8") + b"\n" + fields.encode("utf-8")


def seal(key: bytes, topic: str, sender: str, body: dict[str, Any]) -> str:
    """The payload of a message to `topic` from table `sender`, signed with the tournament's key."""
    mac = hmac.new(key, _signed_text(topic, sender, body), hashlib.sha256).hexdigest()
    return json.dumps({"from": sender, "body": body, "mac": mac}, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Opened:
    sender: str
    body: dict[str, Any]


def open_sealed(key: bytes, topic: str, data: Any) -> Opened:
    """The sender and body of a parsed payload if its MAC is the key's over this topic; else TournamentError."""
    if not isinstance(data, dict) or set(data) != {"from", "body", "mac"}:
        raise TournamentError("unsigned", "the message is not a signed tournament message")
    sender, body, mac = data["from"], data["body"], data["mac"]
    if not isinstance(sender, str) or not isinstance(body, dict) or not isinstance(mac, str):
        raise TournamentError("unsigned", "the message is not a signed tournament message")
    try:
        signed = _signed_text(topic, sender, body)
    except UnicodeEncodeError:  # a lone surrogate (JSON "\\ud800"): no table can have signed it
        raise TournamentError("unsigned", "the message holds text that is not Unicode") from None
    except RecursionError:  # parsed with the stack left, too deep to encode again: no table sends such a body
        raise TournamentError("unsigned", "the message is nested deeper than any tournament message") from None
    expected = hmac.new(key, signed, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, mac):
        raise TournamentError("bad_signature", "the message is not signed with the tournament's key")
    return Opened(sender, body)
