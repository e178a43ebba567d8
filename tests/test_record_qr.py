"""A shuffle record as one QR code's text (docs/FAIRNESS.md, "The record as a QR code"): a shuffle of 500 presses
fits, the text gives back the very record, `uno-launcher verify` takes it as it takes the record, a damaged text is
refused by name, and the page is handed the text and the code's modules for an ended shuffle only."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest

from launcher import record_qr
from launcher.cli import main
from launcher.daemon import Daemon
from launcher.fairness import RecordError, verify, verify_file
from launcher.schedule import PROFILES
from tests.conftest import MakeDaemon
from tests.test_beacon import BEACON
from tests.test_fairness_api import fast
from tests.test_fairness_sealed import VALUES, entries, play_sealed

LONG = play_sealed(PROFILES["classic"], "5eed0000000000000000000000000001", 500, entries(list(VALUES), withheld=(1,)))
LONG["outcomes"][3].update(dispensed=1, stop="jam")


def test_a_shuffle_of_500_presses_fits_one_code_and_comes_back_whole() -> None:
    text = record_qr.packed(LONG)
    assert text.startswith("UNO-SHUFFLE:") and text[12:].isdigit()
    assert record_qr.unpacked(text) == LONG
    drawn = record_qr.modules(text)
    assert drawn is not None and drawn[0] <= 177  # version 40 at most: one code
    assert record_qr.unpacked(record_qr.packed(BEACON)) == BEACON


def test_a_record_too_long_for_one_code_has_none() -> None:
    phones = [f"{n:032x}" for n in range(32)]
    crowded = play_sealed(PROFILES["extreme"], "5eed0000000000000000000000000001", 500, entries(phones))
    for outcome in crowded["outcomes"][::3]:
        outcome.update(dispensed=outcome["cards"] // 2, stop="jam")
    assert record_qr.modules(record_qr.packed(crowded)) is None


def test_the_modules_are_the_codes_rows_of_bits() -> None:
    size, dark = record_qr.modules(record_qr.packed(BEACON)) or (0, "")
    bits = "".join(f"{byte:08b}" for byte in base64.b64decode(dark))
    assert len(bits) == size * size + (-(size * size) % 8)
    # The three finder patterns: a dark 7x7 frame in three corners, the same in every QR code.
    for row, col in ((0, 0), (0, size - 7), (size - 7, 0)):
        frame = [bits[(row + r) * size + col : (row + r) * size + col + 7] for r in range(7)]
        assert frame[0] == frame[6] == "1111111" and frame[1] == "1000001" and frame[3] == "1011101"


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda t: t[:-3], "cut short"),
        (lambda t: t[:20] + "x" + t[21:], "digits"),
        (lambda t: t[:12] + "99999999999999999" + t[29:], "not a record's"),
        (lambda t: t[:40] + ("1" if t[40] != "1" else "2") + t[41:], "does not hold a record"),
    ],
)
def test_a_damaged_text_is_refused_by_name(damage: object, says: str) -> None:
    text = damage(record_qr.packed(LONG))  # type: ignore[operator]
    try:
        changed = record_qr.unpacked(text)
    except ValueError as e:
        assert says in str(e)
    else:  # a digit changed inside the deflated data can still inflate: then it is another record, and fails
        assert changed != LONG and not verify(changed).ok


def test_verify_takes_the_codes_text_as_it_takes_the_record(tmp_path: Path) -> None:
    path = tmp_path / "scanned.txt"
    for record in (LONG, BEACON):
        path.write_text(record_qr.packed(record) + "\n", encoding="utf-8")
        assert str(verify_file(path)) == str(verify(record))
    tampered = copy.deepcopy(LONG)
    tampered["outcomes"][7]["cards"] = 9
    path.write_text(record_qr.packed(tampered), encoding="utf-8")
    assert main(["verify", str(path)]) == 1
    path.write_text(record_qr.packed(LONG)[:-2], encoding="utf-8")
    with pytest.raises(RecordError, match="cut short"):
        verify_file(path)
    assert main(["verify", str(path)]) == 2


def test_the_page_is_given_an_ended_shuffles_code_and_no_other(make_daemon: MakeDaemon, tmp_path: Path) -> None:
    running: Daemon = make_daemon(fast(tmp_path), virtual=True)
    client = running.app.test_client()
    assert client.get("/api/shuffles/1/qr").get_json()["error"]["code"] == "shuffle_open"
    assert client.get("/api/shuffles/99/qr").status_code == 404
    for _ in range(12):
        assert running.controller.press("web").wait(10)
    running.controller.new_shuffle()
    reply = client.get("/api/shuffles/1/qr")
    assert reply.status_code == 200
    body = reply.get_json()
    assert record_qr.unpacked(body["text"]) == json.loads(client.get("/api/shuffles/1").data)
    assert body["digits"] == len(body["text"]) and (body["size"], body["modules"]) == record_qr.modules(body["text"])
