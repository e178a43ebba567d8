"""Shuffles with the real schedule: commit, reveal, resume after a restart, the API and `uno-launcher verify`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from launcher.cli import main
from launcher.config import Config
from launcher.daemon import Daemon
from launcher.fairplay import fairness, sealing
from tests.conftest import MakeDaemon, joined_client


def fast(tmp_path: Path) -> Config:
    config = Config().replace("state", dir=str(tmp_path)).replace("web", port=0)
    return config.replace("sim", cards_per_second=400.0, card_block_ms=1.0).replace("dispense", min_rest_ms=0)


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(fast(tmp_path))


def press(daemon: Daemon, times: int) -> None:
    for _ in range(times):
        assert daemon.controller.press("web").wait(10)


def test_a_played_shuffle_verifies_and_any_change_is_caught(daemon: Daemon) -> None:
    press(daemon, 40)
    record, _ = daemon.controller.new_shuffle()
    assert len(record["outcomes"]) == 40
    assert sealing.seal(record["seed"], record["profile"]) == record["commitment"]
    assert fairness.verify(record).ok
    for press_index in (0, 17, 39):
        tampered = json.loads(json.dumps(record))
        outcome = tampered["outcomes"][press_index]
        outcome["cards"] = 0 if outcome["cards"] else 3
        report = fairness.verify(tampered)
        assert not report.ok and report.first_bad_press == press_index + 1


def test_a_restart_resumes_the_same_shuffle_where_it_was(tmp_path: Path) -> None:
    first = Daemon(fast(tmp_path))
    press(first, 25)
    before = first.controller.snapshot()["shuffle"]
    first.close()

    second = Daemon(fast(tmp_path))
    try:
        assert second.controller.snapshot()["shuffle"] == before  # same number, commitment and press count
        press(second, 15)
        record, _ = second.controller.new_shuffle()
    finally:
        second.close()
    assert len(record["outcomes"]) == 40
    assert fairness.verify(record).ok


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def test_shuffles_over_the_api(daemon: Daemon, client: FlaskClient) -> None:
    start = client.get("/api/state").get_json()["shuffle"]
    press(daemon, 5)
    assert client.get(f"/api/shuffles/{start['number']}").status_code == 409  # still secret

    reply = client.post("/api/shuffles", json={"profile": "gentle"})
    assert reply.status_code == 201
    body = reply.get_json()
    assert body["ended"]["commitment"] == start["commitment"]
    assert body["shuffle"] == {
        "number": start["number"] + 1,
        "profile": "gentle",
        "commitment": body["shuffle"]["commitment"],
        "presses": 0,
    }
    assert client.get("/api/state").get_json()["profile"] == "gentle"

    download = client.get(f"/api/shuffles/{start['number']}")
    assert download.status_code == 200
    assert "attachment" in download.headers["Content-Disposition"]
    assert fairness.verify(download.get_json()).ok
    assert client.get("/api/shuffles/999").status_code == 404


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"profile": "turbo"}, "profile 'turbo' is not accepted: expected one of classic, gentle"),
        ({"profile": 3}, "profile 3 is not accepted"),
        ({"profile": "custom", "custom": {"hazard": [0.5, 0.4]}}, "custom.hazard = [0.5, 0.4] is not accepted"),
        ({"profile": "custom", "custom": {"speed": 1}}, "custom.speed = 1 is not accepted: unknown parameter"),
        ({"profile": "gentle", "custom": {}}, 'custom parameters go with {"profile": "custom"}'),
        ({"colour": "red"}, "unknown field colour"),
    ],
)
def test_a_bad_profile_is_refused_by_name(client: FlaskClient, body: dict, message: str) -> None:
    before = client.get("/api/state").get_json()["shuffle"]
    reply = client.post("/api/shuffles", json=body)
    assert reply.status_code == 400
    assert message in reply.get_json()["error"]["message"]
    assert client.get("/api/state").get_json()["shuffle"] == before


def test_a_custom_profile_from_a_phone(client: FlaskClient) -> None:
    reply = client.post("/api/shuffles", json={"profile": "custom", "custom": {"max_fires_in_row": 1}})
    assert reply.status_code == 201
    profiles = client.get("/api/profiles").get_json()
    assert profiles["active"] == "custom"
    custom = next(p for p in profiles["profiles"] if p["name"] == "custom")
    assert custom["max_fires_in_row"] == 1


def test_profiles_publish_their_expected_figures(client: FlaskClient) -> None:
    profiles = client.get("/api/profiles").get_json()
    names = [p["name"] for p in profiles["profiles"]]
    assert names == ["classic", "gentle", "brutal", "pattern", "extreme", "custom"]
    classic = profiles["profiles"][0]
    assert abs(classic["fire_rate"] - 0.35) < 0.005
    assert classic["longest_drought"] == 4 and classic["max_fires_in_row"] == 2


def test_verify_command_on_a_file_and_on_the_store(
    daemon: Daemon, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    press(daemon, 12)
    record, _ = daemon.controller.new_shuffle()
    good = tmp_path / "shuffle.json"
    good.write_text(json.dumps(record))
    assert main(["verify", str(good)]) == 0
    assert "OK" in capsys.readouterr().out

    record["outcomes"][5]["cards"] = 9
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(record))
    assert main(["verify", str(bad)]) == 1
    assert "FAILED: press 6" in capsys.readouterr().out

    config = tmp_path / "c.toml"
    config.write_text(f'[state]\ndir = "{tmp_path}"\n')
    assert main(["verify", "--shuffle", "1", "--config", str(config)]) == 0
    assert main(["verify", "--shuffle", "2", "--config", str(config)]) == 2
    assert "still being played" in capsys.readouterr().err
    (tmp_path / "junk.json").write_text("{")
    assert main(["verify", str(tmp_path / "junk.json")]) == 2
    assert "is not valid JSON" in capsys.readouterr().err


def test_the_pattern_restarts_when_the_lid_opens_and_still_verifies(tmp_path: Path) -> None:
    config = fast(tmp_path).replace("schedule", profile="pattern")
    first = Daemon(config)
    press(first, 5)
    first.hardware.set_lid(True)  # type: ignore[attr-defined]
    first.hardware.set_lid(False)  # type: ignore[attr-defined]
    press(first, 4)  # the published pattern fires on presses 2 and 6 counted from the lid closing
    fired = [o.cards > 0 for o in first.controller._shuffle.outcomes]
    assert fired[5:9] == [False, True, False, False]
    first.close()

    second = Daemon(config)  # resumes the shuffle, lid opening included
    try:
        press(second, 2)
        record, _ = second.controller.new_shuffle()
    finally:
        second.close()
    assert record["restarts"] == [5]
    assert [o["cards"] > 0 for o in record["outcomes"]][5:11] == [False, True, False, False, False, True]
    assert fairness.verify(record).ok


def test_a_restart_remembers_the_cards_in_the_hopper(tmp_path: Path) -> None:
    first = Daemon(fast(tmp_path))
    press(first, 30)
    first.controller.reload_hopper(60)
    press(first, 15)
    before = first.controller.snapshot()["hopper"]
    first.close()
    assert before["dispensed"] > 0

    second = Daemon(fast(tmp_path))
    try:
        assert second.controller.snapshot()["hopper"] == before
        assert second.hardware.describe()["sim_hopper"] == before["remaining"]  # type: ignore[attr-defined]
    finally:
        second.close()
