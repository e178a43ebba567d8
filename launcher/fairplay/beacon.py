"""The drand quicknet beacon of the League of Entropy (docs/FAIRNESS.md, "A public beacon"): what it is, which of its
rounds a shuffle binds to, and how its signature is had. Pure facts and one HTTP GET; the waiting is
launcher/fairplay/beacon_wait.py, the BLS check launcher/fairplay/beacon_bls.py.

Quicknet signs, every PERIOD seconds from GENESIS, the SHA-256 of its round number (8 bytes, big-endian) with one
threshold BLS key whose public half is PUBLIC_KEY: the signature is a point on BLS12-381's G1 (48 bytes compressed),
hashed to the curve as RFC 9380 says with DST; the round's randomness is the SHA-256 of the signature. Nobody, not
the League's members short of a threshold of them, can know a round's signature before its time, and nobody can
choose it: a round has exactly one valid signature.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import logging
import math
import re
import socket
import threading
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

NAME = "drand-quicknet"  # the value of [fairness] beacon that turns it on
CHAIN = "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"  # quicknet's chain hash
PUBLIC_KEY = (
    "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc2"
    "2b0e17e63aaf4bcb5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a"
)
GENESIS = 1692803367  # round 1's time, Unix seconds
PERIOD = 3  # seconds between rounds
DST = b"BLS_SIG_BLS12381G1_XMD:SHA-256_SSWU_RO_NUL_"
# The League's HTTP relays, tried in turn; each answers GET <relay>/<chain>/public/<round> with the round as JSON.
RELAYS = ("https://api.drand.sh", "https://api2.drand.sh", "https://api3.drand.sh", "https://drand.cloudflare.com")
FETCH_TIMEOUT_S = 2.0  # per relay and try, for the whole answer
MAX_ANSWER = 4096  # a round's JSON is about 200 bytes
_SIGNATURE = re.compile(r"[0-9a-f]{96}")
_HEX64 = re.compile(r"[0-9a-f]{64}")

Fetch = Callable[[str, float], bytes]  # (URL, timeout in seconds) -> the answer's body; raises when not had

log = logging.getLogger(__name__)


def round_after(wall: float) -> int:
    """The first round whose time is strictly after `wall` (Unix seconds)."""
    if wall < GENESIS:
        return 1
    return math.floor((wall - GENESIS) / PERIOD) + 2


def round_time(number: int) -> float:
    """When round `number` is signed, Unix seconds."""
    return float(GENESIS + (number - 1) * PERIOD)


def randomness_of(signature: str) -> str:
    """A round's randomness: the SHA-256 of its signature's bytes, as lowercase hex."""
    return hashlib.sha256(bytes.fromhex(signature)).hexdigest()


@dataclass(frozen=True)
class BeaconRound:
    """The round a shuffle bound to, and its signature once had (None: not had in time, so the key went without)."""

    round: int
    signature: str | None = None

    @property
    def randomness(self) -> str | None:
        return None if self.signature is None else randomness_of(self.signature)

    def as_record(self) -> dict[str, Any]:
        """The record's `beacon`: the chain, the round, its signature and randomness (null when not had)."""
        return {"chain": CHAIN, "round": self.round, "signature": self.signature, "randomness": self.randomness}


def http_get(url: str, timeout: float) -> bytes:
    """The body of a GET over HTTP(S), at most MAX_ANSWER bytes, all of it within `timeout` seconds (TimeoutError
    past it). A socket's own timeout bounds each read only: a relay sending a byte a second would hold the wait for
    an hour, so a timer shuts the socket at the deadline, which ends whatever read is under way. Before there is a
    socket (the name resolved, the addresses tried) there is nothing to shut: that part runs on a thread of its own,
    awaited until the deadline only."""
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", parts.port, timeout=timeout)
    cut, over = threading.Event(), threading.Event()
    timer = threading.Timer(timeout, _shut, (connection, cut, over))
    timer.daemon = True
    timer.start()
    try:
        _connect(connection, cut, over)
        connection.request("GET", parts.path, headers={"Accept": "application/json", "User-Agent": "uno-launcher"})
        answer = connection.getresponse()
        if answer.status != 200:
            raise OSError(f"HTTP {answer.status}")
        body = answer.read(MAX_ANSWER)
    except OSError:
        if not cut.is_set():
            raise
        body = b""
    finally:
        timer.cancel()
        connection.close()
    if cut.is_set():  # what was read before the cut may be a part of the answer: it is not had
        raise TimeoutError(f"no whole answer within {timeout} s")
    return body


def _connect(connection: http.client.HTTPConnection, cut: threading.Event, over: threading.Event) -> None:
    """Connects `connection` (and shakes hands for HTTPS) by the deadline `over` marks, or leaves it to `cut`."""
    failed: list[BaseException] = []

    def connect() -> None:
        try:
            connection.connect()
        except BaseException as e:  # handed to the fetch, which logs it as the relay's
            failed.append(e)
        finally:
            over.set()
            if cut.is_set():  # connected after the deadline: nobody reads it
                connection.close()

    threading.Thread(target=connect, name="drand-connect", daemon=True).start()
    over.wait()
    if cut.is_set():
        raise TimeoutError("not connected in time")
    if failed:
        raise failed[0]


def _shut(connection: http.client.HTTPConnection, cut: threading.Event, over: threading.Event) -> None:
    cut.set()
    over.set()
    sock = connection.sock  # once: the fetch's thread may close it meanwhile
    if sock is not None:
        with contextlib.suppress(OSError):  # already closed
            sock.shutdown(socket.SHUT_RDWR)


def fetch_signature(number: int, fetch: Fetch, relays: tuple[str, ...] = RELAYS) -> str | None:
    """Round `number`'s signature from the first relay that gives a well-formed answer for it; None if none does
    (offline, the round not out yet, or every answer wrong). The signature is not checked here (a pairing takes
    seconds on a Pi): every verifier checks it in the record. Whatever goes wrong with one relay (refused, not
    HTTP, JSON nested past the recursion limit, …) is that relay's: the next one is asked."""
    for relay in relays:
        try:
            answer = json.loads(fetch(f"{relay}/{CHAIN}/public/{number}", FETCH_TIMEOUT_S))
        except Exception as e:  # a relay's answer is data from anyone: no failure of it may end the wait
            log.info("drand relay %s gave no round %d: %s: %.200s", relay, number, type(e).__name__, e)
            continue
        signature = _signature_in(answer, number)
        if signature is not None:
            return signature
    return None


def _signature_in(answer: Any, number: int) -> str | None:
    if not isinstance(answer, Mapping) or answer.get("round") != number:
        return None
    signature = answer.get("signature")
    if not (isinstance(signature, str) and _SIGNATURE.fullmatch(signature)):
        return None
    if answer.get("randomness", randomness_of(signature)) != randomness_of(signature):
        return None
    return signature


def parse_record(value: Any) -> tuple[BeaconRound, str | None]:
    """A record's `beacon` as written: the round and its signature, and the randomness the record states (checked
    against the signature by the verifier). ValueError naming what is wrong."""
    expected = (
        f"expected {{chain: {CHAIN[:8]}…, round: a whole number from 1 below 2^53, signature: 96 lowercase hex "
        "characters or null, randomness: 64 lowercase hex characters or null}"
    )
    if not (isinstance(value, Mapping) and set(value) == {"chain", "round", "signature", "randomness"}):
        raise ValueError(expected)
    number, signature, randomness = value["round"], value["signature"], value["randomness"]
    if value["chain"] != CHAIN:
        raise ValueError(f"chain {value['chain']!r} is not drand quicknet's: {expected}")
    if not (type(number) is int and 1 <= number < 2**53):  # 2^53: where JSON's numbers stop being exact
        raise ValueError(expected)
    if signature is None:
        if randomness is not None:
            raise ValueError(f"a randomness without a signature: {expected}")
        return BeaconRound(number), None
    if not (isinstance(signature, str) and _SIGNATURE.fullmatch(signature)):
        raise ValueError(expected)
    if not (isinstance(randomness, str) and _HEX64.fullmatch(randomness)):
        raise ValueError(expected)
    return BeaconRound(number, signature), randomness
