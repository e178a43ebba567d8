"""The phones' contributions over the API, on the in-process daemon: who may commit and reveal and when, what is
refused and why, what every phone sees of them, and the record that lists them and what each press dispensed."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.access.book import Role
from launcher.cli import main
from launcher.config import Config
from launcher.daemon import Daemon
from launcher.fairplay import fairness
from launcher.fairplay.fairness import replay_presses
from launcher.fairplay.mixing import REVEAL_S
from launcher.fairplay.schedule import Schedule
from launcher.fairplay.sealing import Contribution, commitment_of, sealed_key
from launcher.press.controller import PressRefused
from tests.conftest import MakeDaemon, joined_client, wait_until
from tests.virtual_clock import VirtualClock

URL = "/api/shuffles/current/contributions"
REVEAL = "/api/shuffles/current/reveals"


def fast(tmp_path: Path) -> Config:
    config = Config().replace("state", dir=str(tmp_path)).replace("web", port=0)
    return config.replace("sim", cards_per_second=400.0, card_block_ms=1.0).replace("dispense", min_rest_ms=0)


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    # Fires on a virtual clock: exact, and no starved thread can leave a card "stuck" at the exit.
    return make_daemon(fast(tmp_path), virtual=True)


def phone(daemon: Daemon) -> FlaskClient:
    """Another phone joined at the table: a session of its own."""
    client = daemon.app.test_client()
    client.set_cookie("uno_session", daemon.access.open_session(Role.TABLE))
    return client


def value() -> str:
    return secrets.token_hex(16)


def current(client: FlaskClient) -> dict[str, Any]:
    return client.get("/api/state").get_json()["shuffle"]


def press(daemon: Daemon, times: int) -> None:
    for _ in range(times):
        assert daemon.controller.press("web").wait(10)


def events(daemon: Daemon, kind: str) -> list[dict[str, Any]]:
    return [e.data for e in daemon.bus.events_after(0) if e.type == kind]


def committed(daemon: Daemon, phones: list[FlaskClient]) -> tuple[int, list[str]]:
    """Every phone commits to bytes of its own: the shuffle's number and the bytes, in the order committed."""
    number = current(phones[0])["number"]
    values = [value() for _ in phones]
    for client, mine in zip(phones, values, strict=True):
        reply = client.post(URL, json={"shuffle": number, "commitment": commitment_of(mine)})
        assert reply.status_code == 201, reply.get_json()
    return number, values


def revealing(daemon: Daemon, revealed: int) -> tuple[int, list[str]]:
    """Two phones commit, the first press closes the commitments, the first `revealed` of them reveal."""
    phones = [joined_client(daemon), phone(daemon)]
    number, values = committed(daemon, phones)
    sealing_press(daemon)
    for client, mine in list(zip(phones, values, strict=True))[:revealed]:
        assert client.post(REVEAL, json={"shuffle": number, "value": mine}).status_code == 200
    return number, values


def sealing_press(daemon: Daemon) -> None:
    """A press of the big button while the phones reveal (the first closes the commitments) is refused: the button
    never waits (a phone's press waits instead)."""
    with pytest.raises(PressRefused) as refused:
        daemon.controller.press("button")
    assert refused.value.code == "shuffle_sealing"


def test_phones_commit_then_reveal_after_the_first_press_and_the_record_lists_both_in_order(daemon: Daemon) -> None:
    phones = [joined_client(daemon), phone(daemon), phone(daemon)]
    assert current(phones[0])["commitments"] == [] and current(phones[0])["contributions_open"] is True
    number, values = committed(daemon, phones)
    commitments = [commitment_of(v) for v in values]
    watcher = daemon.app.test_client()  # not joined: it sees them too
    assert current(watcher)["commitments"] == commitments and current(watcher)["phase"] == "committing"
    assert current(watcher)["revealed"] == [None, None, None]  # no bytes are shown while commitments are open
    assert [e["commitment"] for e in events(daemon, "shuffle.committed")] == commitments

    early = phones[0].post(REVEAL, json={"shuffle": number, "value": values[0]})
    assert early.status_code == 409 and early.get_json()["error"]["code"] == "reveal_early"
    sealing_press(daemon)
    assert events(daemon, "shuffle.sealed") == [{"shuffle": number, "commitments": commitments, "reveal_s": 5.0}]
    late = phone(daemon).post(URL, json={"shuffle": number, "commitment": commitment_of(value())})
    assert late.status_code == 409 and late.get_json()["error"]["code"] == "contributions_closed"
    for index, (client, mine) in enumerate(zip(phones, values, strict=True)):
        reply = client.post(REVEAL, json={"shuffle": number, "value": mine})
        assert reply.status_code == 200
        assert reply.get_json() == {"shuffle": number, "index": index, "fixed": index == 2}
    assert events(daemon, "shuffle.fixed") == [{"shuffle": number, "withheld": []}]
    press(daemon, 30)
    record, _ = daemon.controller.new_shuffle()
    assert record["format"] == "uno-launcher-shuffle/5"
    # The profile was sealed with the seed: the record carries the very text announced before anyone committed.
    (announced,) = [e for e in events(daemon, "shuffle.started") if e["shuffle"] == number]
    assert announced["profile_text"] == record["profile"] and announced["commitment"] == record["commitment"]
    assert record["contributions"] == [{"commitment": c, "value": v} for c, v in zip(commitments, values, strict=True)]
    report = fairness.verify(record, seen_commitment=record["commitment"], mine=[values[1]])
    assert report.ok and report.contributions == 3 and report.withheld == ()
    # The outcomes are those of the seed and the phones' bytes together, not of the seed alone.
    alone = Schedule(daemon.controller.profile, sealed_key(record["commitment"], record["seed"], []))
    assert [o.cards for o in replay_presses(alone, 30)] != [o["cards"] for o in record["outcomes"]]


def test_a_withheld_late_or_mismatched_reveal_changes_nothing(daemon: Daemon, tmp_path: Path) -> None:
    client = joined_client(daemon)
    wrong = client.post(REVEAL, json={"shuffle": current(client)["number"], "value": value()})
    assert wrong.status_code == 409 and wrong.get_json()["error"]["code"] == "reveal_mismatch"
    number, values = revealing(daemon, 1)
    assert current(client)["revealed"] == [values[0], None]
    # The second phone withholds: presses wait the reveal window out, then the key is fixed without its bytes.
    clock = daemon.clock
    assert isinstance(clock, VirtualClock)
    clock.advance(4.9)
    sealing_press(daemon)
    clock.advance(0.2)
    press(daemon, 10)
    assert events(daemon, "shuffle.fixed") == [{"shuffle": number, "withheld": [2]}]
    too_late = phone(daemon).post(REVEAL, json={"shuffle": number, "value": values[1]})
    assert too_late.status_code == 409 and too_late.get_json()["error"]["code"] == "reveals_closed"
    assert current(client)["revealed"] == [values[0], None]
    record, _ = daemon.controller.new_shuffle()
    assert [c["value"] for c in record["contributions"]] == [values[0], None]
    report = fairness.verify(record)
    assert report.ok and report.withheld == (2,)
    assert "NOTE: contribution 2 was committed and never revealed" in str(report)
    # Nothing the withholder did after the commitments closed moved the key: it is the one of its commitment alone.
    counted = [Contribution(commitment_of(values[0]), values[0]), Contribution(commitment_of(values[1]))]
    schedule = Schedule(daemon.controller.profile, sealed_key(record["commitment"], record["seed"], counted))
    assert [o.cards for o in replay_presses(schedule, 10)] == [o["cards"] for o in record["outcomes"]]


def test_a_phones_press_waits_while_the_phones_reveal_then_draws_with_their_bytes(daemon: Daemon) -> None:
    number, values = committed(daemon, [joined_client(daemon)])
    waiting = daemon.clock.thread(lambda: daemon.controller.press("web").wait(10), "press")
    waiting.start()
    wait_until(lambda: events(daemon, "shuffle.sealed"))
    assert events(daemon, "button.pressed") == []  # it waits: nothing drawn before the reveal
    assert joined_client(daemon).post(REVEAL, json={"shuffle": number, "value": values[0]}).status_code == 200
    daemon.clock.run_until(lambda: not waiting.is_alive(), within=30)  # virtual time passes while this waits
    assert [e["press"] for e in events(daemon, "button.pressed")] == [1]
    assert events(daemon, "shuffle.fixed") == [{"shuffle": number, "withheld": []}]
    record, _ = daemon.controller.new_shuffle()
    assert record["contributions"] == [{"commitment": commitment_of(values[0]), "value": values[0]}]
    assert fairness.verify(record).ok


def test_a_phones_press_waits_no_longer_than_the_reveal_window(daemon: Daemon) -> None:
    number, _ = committed(daemon, [joined_client(daemon)])
    before = daemon.clock.now()
    assert daemon.controller.press("web").wait(60)  # the phone never reveals (real seconds: a loaded machine)
    # Other threads' deadlines (the store's write-behind, the hopper's saver) may move virtual time on a little
    # between the press's end and this reading: the window is a lower bound, and far from a second more.
    assert REVEAL_S - 0.01 <= daemon.clock.now() - before < REVEAL_S + 0.5
    assert events(daemon, "shuffle.fixed") == [{"shuffle": number, "withheld": [1]}]


def test_a_press_with_no_commitment_draws_at_once_and_closes_them(daemon: Daemon) -> None:
    client = joined_client(daemon)
    number = current(client)["number"]
    press(daemon, 1)
    reply = client.post(URL, json={"shuffle": number, "commitment": commitment_of(value())})
    assert reply.status_code == 409
    error = reply.get_json()["error"]
    assert error["code"] == "contributions_closed" and "without yours" in error["message"]
    assert events(daemon, "shuffle.sealed") == [] and current(client)["phase"] == "fixed"


def test_one_commitment_per_phone_and_at_most_32_a_shuffle(daemon: Daemon) -> None:
    first = joined_client(daemon)
    number = current(first)["number"]
    mine = commitment_of(value())
    assert first.post(URL, json={"shuffle": number, "commitment": mine}).status_code == 201
    again = first.post(URL, json={"shuffle": number, "commitment": commitment_of(value())})
    assert again.status_code == 409 and again.get_json()["error"]["code"] == "already_contributed"
    copied = phone(daemon).post(URL, json={"shuffle": number, "commitment": mine})  # another phone's, copied
    assert copied.status_code == 409 and copied.get_json()["error"]["code"] == "already_contributed"
    for _ in range(31):
        reply = phone(daemon).post(URL, json={"shuffle": number, "commitment": commitment_of(value())})
        assert reply.status_code == 201
    full = phone(daemon).post(URL, json={"shuffle": number, "commitment": commitment_of(value())})
    assert full.status_code == 409
    assert full.get_json()["error"] == {
        "code": "contributions_full",
        "message": f"shuffle {number} already has 32 contributions, the most a shuffle takes",
        "shuffle": number,  # the parameters the page words it with (docs/API.md)
        "max": 32,
    }
    assert len(current(first)["commitments"]) == 32


def test_a_phone_sending_its_own_commitment_again_is_answered_as_the_first_time(daemon: Daemon) -> None:
    """A page shown again (or whose answer was lost) sends the same commitment again: that is no second
    contribution, and no refusal for the browser to log; a different one from the same phone is still refused."""
    mine, other = joined_client(daemon), phone(daemon)
    number = current(mine)["number"]
    committed_before = commitment_of(value())
    assert other.post(URL, json={"shuffle": number, "commitment": committed_before}).status_code == 201
    commitment = commitment_of(value())
    first = mine.post(URL, json={"shuffle": number, "commitment": commitment})
    assert first.status_code == 201 and first.get_json()["index"] == 1
    again = mine.post(URL, json={"shuffle": number, "commitment": commitment})
    assert again.status_code == 200
    assert again.get_json() == {"shuffle": number, "index": 1, "count": 2, "max": 32}
    assert [e["index"] for e in events(daemon, "shuffle.committed")] == [0, 1]  # told once
    assert current(mine)["commitments"] == [committed_before, commitment]
    # Another phone cannot take it as its own, nor can this phone swap it for another.
    assert other.post(URL, json={"shuffle": number, "commitment": commitment}).status_code == 409
    swapped = mine.post(URL, json={"shuffle": number, "commitment": commitment_of(value())})
    assert swapped.status_code == 409 and swapped.get_json()["error"]["code"] == "already_contributed"
    # Once the commitments closed, the same one again is late like any other: the phone reveals instead.
    sealing_press(daemon)
    late = mine.post(URL, json={"shuffle": number, "commitment": commitment})
    assert late.status_code == 409 and late.get_json()["error"]["code"] == "contributions_closed"


HEX64 = "0" * 64
BAD_BODIES = [
    (URL, {"commitment": HEX64}, "shuffle", "shuffle must be the number of the shuffle in play, not nothing"),
    (URL, {"shuffle": "1", "commitment": HEX64}, "shuffle", "not '1'"),
    (URL, {"shuffle": True, "commitment": HEX64}, "shuffle", "not True"),
    (URL, {"shuffle": 0, "commitment": HEX64}, "shuffle", "not 0"),
    (URL, {"shuffle": 1}, "commitment", "commitment must be 64 lowercase hex characters"),
    (URL, {"shuffle": 1, "commitment": "A" * 64}, "commitment", "not 'AAAA"),
    (URL, {"shuffle": 1, "commitment": "0" * 63}, "commitment", "the SHA-256 of your bytes"),
    (URL, {"shuffle": 1, "commitment": "0" * 32}, "commitment", "the SHA-256 of your bytes"),
    (URL, {"shuffle": 1, "commitment": "g" * 64}, "commitment", "the SHA-256 of your bytes"),
    (URL, {"shuffle": 1, "commitment": "0" * 63 + "\n"}, "commitment", "the SHA-256 of your bytes"),
    (URL, {"shuffle": 1, "commitment": [HEX64]}, "commitment", "the SHA-256 of your bytes"),
    (REVEAL, {"value": "0" * 32}, "shuffle", "shuffle must be the number of the shuffle in play, not nothing"),
    (REVEAL, {"shuffle": 1}, "value", "value must be 32 lowercase hex characters (the 16 bytes committed)"),
    (REVEAL, {"shuffle": 1, "value": "0" * 31}, "value", "the 16 bytes committed"),
    (REVEAL, {"shuffle": 1, "value": "A" * 32}, "value", "the 16 bytes committed"),
    (REVEAL, {"shuffle": 1, "value": 12345}, "value", "not 12345"),
]


@pytest.mark.parametrize(("url", "body", "field", "message"), BAD_BODIES)
def test_a_bad_commitment_or_reveal_is_refused_naming_the_field(
    daemon: Daemon, url: str, body: dict[str, Any], field: str, message: str
) -> None:
    reply = joined_client(daemon).post(url, json=body)
    assert reply.status_code == 400
    error = reply.get_json()["error"]
    assert error["code"] == "bad_contribution" and error["field"] == field
    assert message in error["message"]
    assert current(daemon.app.test_client())["commitments"] == []


def test_unknown_fields_and_bodies_that_are_not_objects_are_refused(daemon: Daemon) -> None:
    client = joined_client(daemon)
    number = current(client)["number"]
    for url, body in ((URL, {"commitment": HEX64}), (REVEAL, {"value": "0" * 32})):
        reply = client.post(url, json={"shuffle": number, **body, "phone": "Ann"})
        assert reply.status_code == 400 and reply.get_json()["error"]["code"] == "unknown_field"
        assert "phone" in reply.get_json()["error"]["message"]
        reply = client.post(url, data="[1]", content_type="application/json")
        assert reply.status_code == 400 and reply.get_json()["error"]["code"] == "bad_json"
    # A page from before commit-then-reveal sends its bytes in the clear: refused, naming the field.
    old = client.post(URL, json={"shuffle": number, "value": value()})
    assert old.status_code == 400 and "value" in old.get_json()["error"]["message"]
    assert current(client)["commitments"] == []


def test_a_phone_that_has_not_joined_can_neither_commit_nor_reveal(daemon: Daemon) -> None:
    stranger = daemon.app.test_client()
    number = current(stranger)["number"]
    for url, body in ((URL, {"commitment": commitment_of(value())}), (REVEAL, {"value": value()})):
        reply = stranger.post(url, json={"shuffle": number, **body})
        assert reply.status_code == 401 and reply.get_json()["error"]["code"] == "join_required"
    assert current(stranger)["commitments"] == []


def test_a_flood_of_reveals_from_one_phone_is_refused_by_its_budget(make_daemon: MakeDaemon, tmp_path: Path) -> None:
    running = make_daemon(fast(tmp_path).replace("limits", declarations_per_minute=10), virtual=True)
    client = joined_client(running)
    number = current(client)["number"]
    codes = [client.post(REVEAL, json={"shuffle": number, "value": value()}).status_code for _ in range(12)]
    assert codes[:10] == [409] * 10 and codes[10:] == [429, 429]


def test_a_commitment_for_another_shuffle_is_refused(daemon: Daemon) -> None:
    client = joined_client(daemon)
    old = current(client)["number"]
    daemon.controller.new_shuffle()
    over = client.post(URL, json={"shuffle": old, "commitment": commitment_of(value())})
    assert over.status_code == 409 and over.get_json()["error"]["code"] == "shuffle_over"
    assert f"shuffle {old} has ended" in over.get_json()["error"]["message"]
    ahead = client.post(REVEAL, json={"shuffle": old + 5, "value": value()})
    assert ahead.status_code == 404 and ahead.get_json()["error"]["code"] == "not_found"
    assert client.post(URL, json={"shuffle": old + 1, "commitment": commitment_of(value())}).status_code == 201


def test_a_restart_keeps_the_commitments_the_reveals_and_what_came_out(tmp_path: Path) -> None:
    clock = VirtualClock()
    first = Daemon(fast(tmp_path), clock=clock)
    try:
        number, values = revealing(first, 2)
        press(first, 12)
        before = current(first.app.test_client())
        live = [(o.press, o.cards) for o in first.controller._shuffle.outcomes]
    finally:
        first.close()

    second = Daemon(fast(tmp_path), clock=clock)
    try:
        assert current(second.app.test_client()) == before  # commitments, reveals, phase, presses: as they were
        late = phone(second).post(URL, json={"shuffle": number, "commitment": commitment_of(value())})
        assert late.status_code == 409 and late.get_json()["error"]["code"] == "contributions_closed"
        press(second, 8)
        record, _ = second.controller.new_shuffle()
    finally:
        second.close()
        clock.close()
    assert [c["value"] for c in record["contributions"]] == values
    assert [(o["press"], o["cards"]) for o in record["outcomes"][:12]] == live
    assert all(o["dispensed"] == o["cards"] and o["stop"] in ("miss", "count") for o in record["outcomes"])
    assert fairness.verify(record).ok


def test_a_restart_while_the_phones_reveal_gives_them_their_time_again(tmp_path: Path) -> None:
    clock = VirtualClock()
    first = Daemon(fast(tmp_path), clock=clock)
    try:
        number, values = revealing(first, 1)
    finally:
        first.close()
    second = Daemon(fast(tmp_path), clock=clock)
    try:
        assert current(second.app.test_client())["phase"] == "revealing"
        clock.advance(4.9)
        sealing_press(second)  # the window counts again from the restart
        reply = phone(second).post(REVEAL, json={"shuffle": number, "value": values[1]})
        assert reply.status_code == 200 and reply.get_json()["fixed"] is True
        press(second, 3)
        record, _ = second.controller.new_shuffle()
    finally:
        second.close()
        clock.close()
    assert [c["value"] for c in record["contributions"]] == values and fairness.verify(record).ok


def test_the_record_says_what_each_press_dispensed(daemon: Daemon) -> None:
    press(daemon, 25)
    record, _ = daemon.controller.new_shuffle()
    for outcome in record["outcomes"]:
        assert outcome["dispensed"] == outcome["cards"]
        assert outcome["stop"] == ("count" if outcome["cards"] else "miss")
    report = fairness.verify(record)
    assert report.ok and report.shortfalls == ()


# Every press fires; the simulated roller stalls below 0.9 duty and the motor runs at 0.5: no card ever comes out.
def jamming(tmp_path: Path) -> Config:
    config = fast(tmp_path).replace("dispense", pwm=0.5, jam_ms=200).replace("sim", stall_duty=0.9)
    return config.replace("schedule", profile="custom", custom={"hazard": [1.0, 1.0], "max_fires_in_row": 20})


def test_a_jam_is_in_the_record_and_verify_names_it_rather_than_call_the_shuffle_fair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    running = Daemon(jamming(tmp_path))
    try:
        press(running, 2)
        record, _ = running.controller.new_shuffle()
    finally:
        running.close()
    assert [(o["cards"] > 0, o["dispensed"], o["stop"]) for o in record["outcomes"]] == [(True, 0, "jam")] * 2
    report = fairness.verify(record)
    assert report.ok  # the draws are the seed's; what came out is reported beside them
    assert [(s.press, s.dispensed, s.stop) for s in report.shortfalls] == [(1, 0, "jam"), (2, 0, "jam")]
    path = tmp_path / "jammed.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    cards = record["outcomes"][0]["cards"]
    assert f"NOTE: press 1: the seed gives {cards} cards, 0 came out (jam)" in out


def run_at_the_end(record: dict[str, Any]) -> tuple[int, int]:
    """The misses (or fires) in a row a record's last presses made."""
    fired = [o["cards"] > 0 for o in record["outcomes"]]
    last = fired[-1]
    length = next((i for i, f in enumerate(reversed(fired)) if f != last), len(fired))
    return (0, length) if last else (length, 0)


def test_a_shuffle_ends_by_itself_after_its_presses_and_the_next_goes_on_from_its_run(tmp_path: Path) -> None:
    """[schedule] shuffle_presses: the launcher ends a full shuffle itself (its record revealed, as if started by
    hand) and begins the next at once, open to the phones' randomness; a restart resumes the one in play."""
    config = fast(tmp_path).replace("schedule", shuffle_presses=20)
    clock = VirtualClock()
    first = Daemon(config, clock=clock)
    try:
        press(first, 45)
        state = current(first.app.test_client())
        ended = [e.data for e in first.bus.events_after(0) if e.type == "shuffle.ended"]
        records = [first.shuffles.record(n) for n in (1, 2)]
        carried = first.controller._shuffle.carried
    finally:
        first.close()
    assert (state["number"], state["presses"], state["contributions_open"]) == (3, 5, False)
    assert [(e["shuffle"], e["presses"]) for e in ended] == [(1, 20), (2, 20)]
    assert all(r is not None and fairness.verify(r).ok and len(r["outcomes"]) == 20 for r in records)
    assert records[0] is not None and records[1] is not None
    carried_in_records = [(r["carried"]["misses_in_row"], r["carried"]["fires_in_row"]) for r in records]
    assert carried_in_records == [(0, 0), run_at_the_end(records[0])]
    assert carried == run_at_the_end(records[1])
    second = Daemon(config, clock=clock)
    try:
        assert second.controller._shuffle.carried == carried  # the shuffle in play resumes going on from its run
        press(second, 15)
        third = second.shuffles.record(3)
    finally:
        second.close()
        clock.close()
    assert third is not None and fairness.verify(third).ok and len(third["outcomes"]) == 20


def test_a_shuffle_already_full_at_a_start_ends_there(tmp_path: Path) -> None:
    """A store whose open shuffle has as many presses as a shuffle takes (a lower setting, or a stop between the
    last press and the change) ends it at the start, not one press later."""
    clock = VirtualClock()
    first = Daemon(fast(tmp_path), clock=clock)
    try:
        press(first, 25)
    finally:
        first.close()
    second = Daemon(fast(tmp_path).replace("schedule", shuffle_presses=20), clock=clock)
    try:
        state = current(second.app.test_client())
        record = second.shuffles.record(1)
    finally:
        second.close()
        clock.close()
    assert (state["number"], state["presses"], state["contributions_open"]) == (2, 0, True)
    assert record is not None and len(record["outcomes"]) == 25 and fairness.verify(record).ok
