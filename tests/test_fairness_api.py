"""The phones' contributions over the API, on the in-process daemon: who may add one and when, what is refused and
why, what every phone sees of them, and the record that lists them and what each press dispensed."""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher import fairness
from launcher.access import Role
from launcher.cli import main
from launcher.config import Config
from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, joined_client
from tests.virtual_clock import VirtualClock

URL = "/api/shuffles/current/contributions"


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


def contributed_events(daemon: Daemon) -> list[dict[str, Any]]:
    return [e.data for e in daemon.bus.events_after(0) if e.type == "shuffle.contributed"]


def test_each_phone_adds_randomness_every_phone_sees_it_and_the_record_lists_it_in_order(daemon: Daemon) -> None:
    phones = [joined_client(daemon), phone(daemon), phone(daemon)]
    number = current(phones[0])["number"]
    assert current(phones[0])["contributions"] == [] and current(phones[0])["contributions_open"] is True
    values = [value() for _ in phones]
    for index, (client, mine) in enumerate(zip(phones, values, strict=True)):
        reply = client.post(URL, json={"shuffle": number, "value": mine})
        assert reply.status_code == 201, reply.get_json()
        assert reply.get_json() == {"shuffle": number, "index": index, "count": index + 1, "max": 32}
    watcher = daemon.app.test_client()  # not joined: it sees them too
    assert current(watcher)["contributions"] == values
    assert current(watcher)["contributions_max"] == 32
    assert contributed_events(daemon) == [
        {"shuffle": number, "index": i, "value": v, "count": i + 1} for i, v in enumerate(values)
    ]

    press(daemon, 30)
    assert current(watcher)["contributions_open"] is False
    record, _ = daemon.controller.new_shuffle()
    assert record["format"] == "uno-launcher-shuffle/4"
    assert record["contributions"] == values
    report = fairness.verify(record, seen_commitment=record["commitment"], mine=[values[1]])
    assert report.ok and report.contributions == 3
    # The outcomes are those of the seed and the contributions together, not of the seed alone.
    alone = fairness.replay(daemon.controller.profile, record["seed"], 30)
    assert [o.cards for o in alone] != [o["cards"] for o in record["outcomes"]]


def test_a_phone_that_comes_after_the_first_press_is_told_the_shuffle_was_fixed_without_it(daemon: Daemon) -> None:
    client = joined_client(daemon)
    number = current(client)["number"]
    assert client.post(URL, json={"shuffle": number, "value": value()}).status_code == 201
    press(daemon, 1)
    reply = client.post(URL, json={"shuffle": number, "value": value()})
    late = phone(daemon).post(URL, json={"shuffle": number, "value": value()})
    for answer in (reply, late):
        assert answer.status_code == 409
        error = answer.get_json()["error"]
        assert error["code"] == "contributions_closed"
        assert "closed at its first press" in error["message"] and "without yours" in error["message"]
    assert len(current(client)["contributions"]) == 1
    record, _ = daemon.controller.new_shuffle()
    assert len(record["contributions"]) == 1 and fairness.verify(record).ok


def test_one_contribution_per_phone_and_at_most_32_a_shuffle(daemon: Daemon) -> None:
    first = joined_client(daemon)
    number = current(first)["number"]
    assert first.post(URL, json={"shuffle": number, "value": value()}).status_code == 201
    again = first.post(URL, json={"shuffle": number, "value": value()})
    assert again.status_code == 409 and again.get_json()["error"]["code"] == "already_contributed"
    for _ in range(31):
        assert phone(daemon).post(URL, json={"shuffle": number, "value": value()}).status_code == 201
    full = phone(daemon).post(URL, json={"shuffle": number, "value": value()})
    assert full.status_code == 409
    assert full.get_json()["error"] == {
        "code": "contributions_full",
        "message": f"shuffle {number} already has 32 contributions, the most a shuffle takes",
        "shuffle": number,  # the parameters the page words it with (docs/API.md)
        "max": 32,
    }
    assert len(current(first)["contributions"]) == 32


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"value": "0" * 32}, "shuffle", "shuffle must be the number of the shuffle in play, not nothing"),
        ({"shuffle": "1", "value": "0" * 32}, "shuffle", "not '1'"),
        ({"shuffle": True, "value": "0" * 32}, "shuffle", "not True"),
        ({"shuffle": 0, "value": "0" * 32}, "shuffle", "not 0"),
        ({"shuffle": 1}, "value", "value must be 32 lowercase hex characters (16 random bytes), not nothing"),
        ({"shuffle": 1, "value": "A" * 32}, "value", "not 'AAAA"),
        ({"shuffle": 1, "value": "0" * 31}, "value", "16 random bytes"),
        ({"shuffle": 1, "value": "0" * 33}, "value", "16 random bytes"),
        ({"shuffle": 1, "value": "g" * 32}, "value", "16 random bytes"),
        ({"shuffle": 1, "value": " " + "0" * 31}, "value", "16 random bytes"),
        ({"shuffle": 1, "value": "0" * 31 + "\n"}, "value", "16 random bytes"),
        ({"shuffle": 1, "value": 12345}, "value", "not 12345"),
        ({"shuffle": 1, "value": ["0" * 32]}, "value", "16 random bytes"),
    ],
)
def test_a_bad_contribution_is_refused_naming_the_field(
    daemon: Daemon, body: dict[str, Any], field: str, message: str
) -> None:
    reply = joined_client(daemon).post(URL, json=body)
    assert reply.status_code == 400
    error = reply.get_json()["error"]
    assert error["code"] == "bad_contribution" and error["field"] == field
    assert message in error["message"]
    assert current(daemon.app.test_client())["contributions"] == []


def test_unknown_fields_and_bodies_that_are_not_objects_are_refused(daemon: Daemon) -> None:
    client = joined_client(daemon)
    number = current(client)["number"]
    reply = client.post(URL, json={"shuffle": number, "value": value(), "phone": "Ann"})
    assert reply.status_code == 400 and reply.get_json()["error"]["code"] == "unknown_field"
    assert "phone" in reply.get_json()["error"]["message"]
    reply = client.post(URL, data="[1]", content_type="application/json")
    assert reply.status_code == 400 and reply.get_json()["error"]["code"] == "bad_json"
    assert current(client)["contributions"] == []


def test_a_phone_that_has_not_joined_cannot_contribute(daemon: Daemon) -> None:
    stranger = daemon.app.test_client()
    number = current(stranger)["number"]
    reply = stranger.post(URL, json={"shuffle": number, "value": value()})
    assert reply.status_code == 401 and reply.get_json()["error"]["code"] == "join_required"
    assert current(stranger)["contributions"] == []


def test_a_contribution_for_another_shuffle_is_refused(daemon: Daemon) -> None:
    client = joined_client(daemon)
    old = current(client)["number"]
    daemon.controller.new_shuffle()
    over = client.post(URL, json={"shuffle": old, "value": value()})
    assert over.status_code == 409 and over.get_json()["error"]["code"] == "shuffle_over"
    assert f"shuffle {old} has ended" in over.get_json()["error"]["message"]
    ahead = client.post(URL, json={"shuffle": old + 5, "value": value()})
    assert ahead.status_code == 404 and ahead.get_json()["error"]["code"] == "not_found"
    assert client.post(URL, json={"shuffle": old + 1, "value": value()}).status_code == 201


def test_a_restart_keeps_the_contributions_and_what_came_out(tmp_path: Path) -> None:
    clock = VirtualClock()
    first = Daemon(fast(tmp_path), clock=clock)
    values = [value(), value()]
    try:
        number = current(first.app.test_client())["number"]
        for mine in values:
            assert phone(first).post(URL, json={"shuffle": number, "value": mine}).status_code == 201
        press(first, 12)
        before = current(first.app.test_client())
        live = [(o.press, o.cards) for o in first.controller._shuffle.outcomes]
    finally:
        first.close()

    second = Daemon(fast(tmp_path), clock=clock)
    try:
        assert current(second.app.test_client()) == before  # contributions, closed, presses: as they were
        late = phone(second).post(URL, json={"shuffle": number, "value": value()})
        assert late.status_code == 409 and late.get_json()["error"]["code"] == "contributions_closed"
        press(second, 8)
        record, _ = second.controller.new_shuffle()
    finally:
        second.close()
        clock.close()
    assert record["contributions"] == values
    assert [(o["press"], o["cards"]) for o in record["outcomes"][:12]] == live
    assert all(o["dispensed"] == o["cards"] and o["stop"] in ("miss", "count") for o in record["outcomes"])
    assert fairness.verify(record).ok


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
