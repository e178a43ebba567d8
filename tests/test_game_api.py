"""The game at the table over HTTP, on the real daemon with simulated hardware: attacks, exact deals, scoring,
bad input, and a restart after kill -9 that resumes exactly."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.config import Config
from launcher.daemon import Daemon
from launcher.game_actions import BY_KIND
from tests.conftest import MakeDaemon, joined_client, local_config, start_daemon


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    config = local_config(tmp_path).replace("sim", cards_per_second=400.0, card_block_ms=1.0)
    return make_daemon(config, virtual=True)  # fires exact, whatever else the machine is doing


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def post(client: FlaskClient, path: str, body: Any) -> dict[str, Any]:
    reply = client.post(path, json=body)
    assert reply.status_code in (200, 201), reply.get_json()
    return reply.get_json()["game"]


def press(daemon: Daemon) -> dict[str, Any]:
    ticket = daemon.controller.press("web")
    assert ticket.wait(10)
    return ticket.as_dict()


def test_wild_all_hit_walks_every_other_player_and_attributes_each_press(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy", "Dee"], "dealer": "Dee"})
    game = post(client, "/api/attacks", {"kind": "reverse", "by": "Ann"})  # now Dee, Cy, Bob, ...
    assert game["table"]["direction"] == -1
    game = post(client, "/api/attacks", {"kind": "wild_all_hit", "by": "Dee"})
    assert [d["player"] for d in game["table"]["demands"]] == ["Cy", "Bob", "Ann"]
    assert [press(daemon)["player"] for _ in range(3)] == ["Cy", "Bob", "Ann"]
    assert client.get("/api/game").get_json()["game"]["table"]["pending"] is None
    types = [e.type for e in daemon.bus.events_after(0)]
    assert types.count("attack.started") == 2 and types.count("attack.progress") == 3
    attack_events = [t for t in types if t.startswith("attack.")]
    assert attack_events[-1] == "attack.finished" and attack_events.count("attack.finished") == 1
    stats = client.get("/api/game").get_json()["game"]["scoreboard"]["statistics"]
    assert stats["Cy"]["presses"] == stats["Bob"]["presses"] == stats["Ann"]["presses"] == 1


def test_hit_fire_ends_on_the_first_fire(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob"]})
    post(client, "/api/attacks", {"kind": "wild_hit_fire", "by": "Ann"})
    presses = []
    while client.get("/api/game").get_json()["game"]["table"]["pending"] is not None:
        presses.append(press(daemon))
        assert len(presses) <= daemon.controller.profile.longest_drought + 1
    assert all(p["player"] == "Bob" for p in presses)
    assert presses[-1]["dispensed"] > 0 and all(p["dispensed"] == 0 for p in presses[:-1])


def test_a_jammed_fire_costs_nobody_their_press(daemon: Daemon, client: FlaskClient) -> None:
    """Bob must press until it fires. A fire that jams with no card out is not the fire he owed: the demand stays
    open, and his next presses still count until cards come out. The jammed press is told as Bob's."""
    post(client, "/api/games", {"players": ["Ann", "Bob"]})
    post(client, "/api/attacks", {"kind": "wild_hit_fire", "by": "Ann"})
    daemon.hardware.world.jam(True)  # type: ignore[attr-defined]
    for _ in range(daemon.controller.profile.longest_drought + 1):
        outcome = press(daemon)
        if outcome["cards"]:  # the schedule fired: the roller turned, nothing came out
            break
    assert outcome["cards"] and outcome["dispensed"] == 0
    assert outcome["player"] == "Bob"  # credited to Bob, but his press is not used up
    table = client.get("/api/game").get_json()["game"]["table"]
    trouble = client.get("/api/state").get_json()["trouble"]
    assert (trouble["code"], trouble["player"]) == ("jam", "Bob")
    presses = client.get("/api/game").get_json()["game"]["scoreboard"]["statistics"]["Bob"]["presses"]
    assert table["pending"] is not None and table["pending"]["player"] == "Bob"
    daemon.hardware.world.jam(False)  # type: ignore[attr-defined]
    later = 0
    while client.get("/api/game").get_json()["game"]["table"]["pending"] is not None:
        last = press(daemon)
        later += 1
        assert last["player"] == "Bob"
    assert last["dispensed"] > 0
    assert client.get("/api/state").get_json()["trouble"] is None
    after = client.get("/api/game").get_json()["game"]["scoreboard"]["statistics"]["Bob"]["presses"]
    assert after == presses + later  # the jammed press was told as his but not counted


def test_classic_deals_exact_counts_from_the_simulated_hopper(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy", "Dee"], "ruleset": "classic"})
    post(client, "/api/attacks", {"kind": "deal"})
    dealt = [press(daemon) for _ in range(4)]
    assert [(d["player"], d["dispensed"]) for d in dealt] == [("Bob", 7), ("Cy", 7), ("Dee", 7), ("Ann", 7)]
    state = client.get("/api/state").get_json()
    assert state["hopper"]["dispensed"] == 28 == state["hardware"]["sim_cards_out"]
    post(client, "/api/attacks", {"kind": "draw_two", "by": "Bob"})
    assert press(daemon)["dispensed"] == 2
    assert client.get("/api/state").get_json()["hardware"]["sim_cards_out"] == 30
    # Nothing owed: the launcher is the draw pile, one card per press for whose turn it is.
    turn = client.get("/api/game").get_json()["game"]["table"]["current"]
    drawn = press(daemon)
    assert (drawn["player"], drawn["dispensed"]) == (turn, 1)


def test_scoring_undo_and_edit_recompute_the_totals(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"], "mode": "lowest_total", "target": 100})
    game = post(client, "/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": {"7": 2}, "Cy": 30}})
    assert game["scoreboard"]["totals"] == {"Ann": 0, "Bob": 14, "Cy": 30}
    assert game["table"]["dealer"] == "Ann"  # the winner deals the next round
    game = post(client, "/api/games/current/rounds", {"winner": "Bob", "hands": {"Ann": {"wild": 1}, "Cy": 5}})
    assert game["scoreboard"]["totals"] == {"Ann": 50, "Bob": 14, "Cy": 35}
    reply = client.put("/api/games/current/rounds/0", json={"winner": "Ann", "hands": {"Bob": 1, "Cy": 2}})
    assert reply.get_json()["game"]["scoreboard"]["totals"] == {"Ann": 50, "Bob": 1, "Cy": 7}
    reply = client.delete("/api/games/current/rounds/last")
    assert reply.get_json()["game"]["scoreboard"]["totals"] == {"Ann": 0, "Bob": 1, "Cy": 2}


@pytest.mark.parametrize(
    ("path", "body", "code", "message"),
    [
        ("/api/games", {}, "bad_game", "needs players"),
        ("/api/games", {"players": ["Ann"]}, "bad_game", "UNO Attack is for 2 to 9"),
        ("/api/games", {"players": [f"P{i}" for i in range(10)]}, "bad_game", "10 players; UNO Attack is for 2 to 9"),
        (
            "/api/games",
            {"players": ["Ann", "Bob"], "house_rules": {"forgot_uno_penalty": 11}},
            "bad_game",
            "forgot_uno_penalty = 11 is not accepted",
        ),
        ("/api/attacks", {"kind": "first_card", "card": "hit_2", "by": "Ann"}, "bad_declaration", "takes no by"),
        ("/api/games", {"players": ["Ann", 7]}, "bad_game", ""),
        ("/api/games", {"players": ["Ann", "x" * 10_000]}, "bad_game", "expected 1 to 40"),
        ("/api/games", {"players": ["Ann", "Bob"], "profile": "turbo"}, "bad_game", "profile = 'turbo'"),
        ("/api/attacks", {"kind": "hit2", "by": "Zoe"}, "bad_declaration", "Zoe"),
        ("/api/attacks", {"kind": "hit2"}, "bad_declaration", "needs by"),
        ("/api/attacks", {"kind": "hit2", "by": "Ann", "count": "2"}, "bad_declaration", ""),
        ("/api/attacks", {"kind": "draw_two", "by": "Ann"}, "bad_declaration", "not accepted in uno_attack"),
        ("/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": {"7": -1}}}, "bad_round", "-1"),
        ("/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": {"wild_all_hit": 3}}}, "bad_round", "only 2"),
        ("/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": {"0": 1}}}, "bad_round", "no card kind '0'"),
        ("/api/games/current/rounds", {"winner": "Zoe", "hands": {}}, "bad_round", "Zoe"),
        ("/api/games/current/rounds", {"winner": "Ann", "hands": {"Ann": {"7": 1}}}, "bad_round", "Ann"),
        ("/api/games/current/rounds", {"winner": "Ann"}, "bad_round", "needs hands"),
        ("/api/games/current/rounds", {"winner": "Ann", "hands": []}, "bad_round", ""),
    ],
)
def test_bad_input_is_refused_by_name_and_nothing_is_stored(
    client: FlaskClient, path: str, body: dict, code: str, message: str
) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"]})
    before = client.get("/api/game").get_json()["game"]
    reply = client.post(path, json=body)
    assert reply.status_code == 400
    error = reply.get_json()["error"]
    assert error["code"] == code and message in error["message"]
    assert client.get("/api/game").get_json()["game"] == before


FOUR = ["Ann", "Bob", "Cy", "Dee"]  # Ann deals: Bob plays first


def test_a_wild_draw_four_can_be_challenged(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR, "ruleset": "classic"})
    post(client, "/api/attacks", {"kind": "wild_draw_four", "by": "Ann"})
    game = post(client, "/api/attacks", {"kind": "challenge", "player": "Bob", "legal": True})
    assert game["table"]["demands"][0] | {"text": ""} == {
        "player": "Bob", "cause": "challenge_failed", "presses": 0, "until_fire": False, "cards": 6, "by": "Ann",
        "started": False, "stacked": False, "carried": False, "text": "",
    }  # fmt: skip
    post(client, "/api/attacks", {"kind": "cancel"})
    post(client, "/api/attacks", {"kind": "wild_draw_four", "by": "Ann"})
    game = post(client, "/api/attacks", {"kind": "challenge", "player": "Bob", "legal": False})
    assert [(d["player"], d["cards"]) for d in game["table"]["demands"]] == [("Ann", 4)]
    assert game["table"]["current"] == "Bob"
    reply = client.post("/api/attacks", json={"kind": "challenge", "player": "Bob", "legal": "no"})
    assert reply.status_code == 400 and "legal = 'no' is not accepted" in reply.get_json()["error"]["message"]


def test_several_wild_draw_fours_and_the_forgotten_uno_penalty_from_the_house_rules(client: FlaskClient) -> None:
    rules = {"multiple_identical": True, "forgot_uno_penalty": 3}
    post(client, "/api/games", {"players": FOUR, "ruleset": "classic", "house_rules": rules})
    game = post(client, "/api/attacks", {"kind": "wild_draw_four", "by": "Ann", "count": 2})
    assert (game["table"]["pending"]["player"], game["table"]["pending"]["cards"]) == ("Bob", 8)
    game = post(client, "/api/attacks", {"kind": "forgot_uno", "player": "Ann"})  # Ann's second-to-last card
    assert (game["table"]["demands"][1]["player"], game["table"]["demands"][1]["cards"]) == ("Ann", 3)
    post(client, "/api/games", {"players": FOUR})
    post(client, "/api/attacks", {"kind": "played", "by": "Dee"})
    game = post(client, "/api/attacks", {"kind": "uno_penalty", "player": "Dee"})
    assert game["table"]["pending"]["presses"] == 2  # UNO Attack: press twice, unless the table says otherwise


def test_the_first_card_counts_once_and_only_at_the_start(client: FlaskClient) -> None:
    game = post(client, "/api/games", {"players": FOUR})
    assert game["table"]["under_way"] is False
    game = post(client, "/api/attacks", {"kind": "first_card", "card": "wild_all_hit"})
    assert [d["player"] for d in game["table"]["demands"]] == ["Bob", "Cy", "Dee"]
    assert game["table"]["under_way"] is True
    reply = client.post("/api/attacks", json={"kind": "first_card", "card": "wild_all_hit"})
    assert reply.status_code == 400 and "once, before any play or press" in reply.get_json()["error"]["message"]
    assert len(client.get("/api/game").get_json()["game"]["table"]["demands"]) == 3


def test_a_round_won_on_an_attack_waits_for_the_penalty_or_carries_it(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR, "mode": "lowest_total"})
    post(client, "/api/attacks", {"kind": "hit2", "by": "Cy"})  # Cy goes out on a Hit 2: Dee owes 2 presses
    before = client.get("/api/game").get_json()["game"]
    hands = {"winner": "Cy", "hands": {"Ann": 5, "Bob": 6, "Dee": 7}}
    reply = client.post("/api/games/current/rounds", json=hands)
    assert reply.status_code == 409
    error = reply.get_json()["error"]
    assert error["code"] == "attacks_open"
    assert "Dee must still press 2 times for the Hit 2" in error["message"]
    assert "carry_open_attacks" in error["message"]
    assert client.get("/api/game").get_json()["game"] == before
    game = post(client, "/api/games/current/rounds", {**hands, "carry_open_attacks": True})
    assert game["scoreboard"]["totals"] == {"Ann": 5, "Bob": 6, "Cy": 0, "Dee": 7}
    assert (game["table"]["dealer"], game["table"]["current"]) == ("Cy", "Dee")
    assert [(d["player"], d["cause"], d["presses"], d["carried"]) for d in game["table"]["demands"]] == [
        ("Dee", "hit_2", 2, True)
    ]
    assert [press(daemon)["player"] for _ in range(2)] == ["Dee", "Dee"]
    table = client.get("/api/game").get_json()["game"]["table"]
    assert (table["pending"], table["current"]) == (None, "Dee")  # the penalty moved no turn: Dee starts
    causes = [e.data["cause"] for e in daemon.bus.events_after(0) if e.type == "attack.progress"]
    assert causes == ["hit_2", "hit_2"]


def test_an_undo_puts_a_wrongly_eliminated_player_back_at_the_table(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR, "mode": "elimination", "target": 100})
    game = post(client, "/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": 5, "Cy": 5, "Dee": 150}})
    assert game["scoreboard"]["eliminated"] == {"Dee": 0}
    game = post(client, "/api/attacks", {"kind": "wild_all_hit", "by": "Ann"})
    assert [d["player"] for d in game["table"]["demands"]] == ["Bob", "Cy"]
    reply = client.delete("/api/games/current/rounds/last")
    assert reply.status_code == 200
    game = post(client, "/api/attacks", {"kind": "wild_all_hit", "by": "Ann"})
    assert [d["player"] for d in game["table"]["demands"]] == ["Bob", "Cy", "Dee"]


def test_a_corrected_round_reseats_the_table(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR, "mode": "elimination", "target": 100, "dealer": "Dee"})
    game = post(client, "/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": 5, "Cy": 5, "Dee": 5}})
    assert (game["table"]["dealer"], game["table"]["current"]) == ("Ann", "Bob")
    # The winner was Bob: Bob deals, and play starts at Bob's left.
    reply = client.put("/api/games/current/rounds/0", json={"winner": "Bob", "hands": {"Ann": 5, "Cy": 5, "Dee": 5}})
    assert (reply.get_json()["game"]["table"]["dealer"], reply.get_json()["game"]["table"]["current"]) == ("Bob", "Cy")
    # Cy had 150, not 5: Cy is out and gets no more turns.
    reply = client.put("/api/games/current/rounds/0", json={"winner": "Bob", "hands": {"Ann": 5, "Cy": 150, "Dee": 5}})
    assert reply.get_json()["game"]["scoreboard"]["eliminated"] == {"Cy": 0}
    assert [press(daemon)["player"] for _ in range(4)] == ["Dee", "Ann", "Bob", "Dee"]


def test_a_correction_that_changes_no_seat_keeps_the_round_in_play(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR, "mode": "lowest_total"})
    post(client, "/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": 5, "Cy": 5, "Dee": 5}})
    game = post(client, "/api/attacks", {"kind": "hit2", "by": "Bob"})
    reply = client.put("/api/games/current/rounds/0", json={"winner": "Ann", "hands": {"Bob": 9, "Cy": 5, "Dee": 5}})
    assert reply.get_json()["game"]["table"] == game["table"]


@pytest.mark.parametrize("ruleset", ["uno_attack", "classic"])
def test_every_declaration_the_page_is_offered_is_taken_or_refused_by_name(client: FlaskClient, ruleset: str) -> None:
    post(client, "/api/games", {"players": FOUR, "ruleset": ruleset, "house_rules": {"party_penalties": True}})
    values = {"by": "Ann", "player": "Bob", "count": 1, "cards": 7, "legal": True, "card": "7", "catchers": 1}
    for kind in client.get("/api/game").get_json()["rules"]["declarations"][ruleset]:
        post(client, "/api/attacks", {"kind": "cancel"})
        fields = [f.name for f in BY_KIND[kind].fields]
        reply = client.post("/api/attacks", json={"kind": kind, **{f: values[f] for f in fields}})
        assert reply.status_code in (200, 400), (kind, reply.get_json())


def test_without_a_game_the_game_endpoints_say_so(client: FlaskClient) -> None:
    assert client.get("/api/game").get_json()["game"] is None
    reply = client.post("/api/attacks", json={"kind": "played", "by": "Ann"})
    assert reply.status_code == 404 and reply.get_json()["error"]["code"] == "no_game"


def test_names_are_data_whatever_they_contain(client: FlaskClient) -> None:
    names = ["<script>alert(1)</script>", "🦄 Uni", "李小龍"]
    game = post(client, "/api/games", {"players": names})
    assert game["players"] == names
    assert client.get("/api/game").get_json()["game"]["scoreboard"]["totals"] == dict.fromkeys(names, 0)


def test_a_kill_9_mid_attack_resumes_exactly(tmp_path: Path) -> None:
    running = start_daemon(tmp_path)
    try:
        assert running.post("/api/games", {"players": ["Ann", "Bob", "Cy"]})[0] == 201
        running.post("/api/games/current/rounds", {"winner": "Ann", "hands": {"Bob": 12, "Cy": 3}})
        running.post("/api/attacks", {"kind": "hit2", "by": "Ann"})
        assert running.post("/api/press", {})[0] == 200  # Bob: one of two presses done
        before = running.get("/api/game")["game"]
        assert before["table"]["pending"]["presses"] == 1
        running.stop(signal.SIGKILL)
    finally:
        if running.process.stdout:
            running.process.stdout.close()
    again = start_daemon(tmp_path)
    try:
        assert again.get("/api/game")["game"] == before
        assert again.post("/api/press", {})[1]["player"] == "Bob"
        assert again.get("/api/game")["game"]["table"]["pending"] is None
    finally:
        again.stop()
        if again.process.stdout:
            again.process.stdout.close()


def test_the_aiming_servo_faces_whoever_must_press(tmp_path: Path) -> None:
    config = (
        Config().replace("state", dir=str(tmp_path)).replace("web", port=0).replace("aim", seat_angles=[-60, 0, 60])
    )
    daemon = Daemon(config)
    try:
        client = joined_client(daemon)
        post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"]})  # Ann deals: Bob's turn
        assert daemon.hardware.servo.angle == pytest.approx(0)  # type: ignore[attr-defined]
        post(client, "/api/attacks", {"kind": "hit2", "by": "Bob"})  # Cy must press twice
        assert daemon.hardware.servo.angle == pytest.approx(60)  # type: ignore[attr-defined]
        assert client.get("/api/state").get_json()["hardware"]["aim"] == pytest.approx(60)
    finally:
        daemon.close()


def test_seat_angles_are_checked() -> None:
    from launcher.config import ConfigError, from_mapping

    for bad in ([100], "left", [True], list(range(11))):
        with pytest.raises(ConfigError, match=r"aim\.seat_angles"):
            from_mapping({"aim": {"seat_angles": bad}})


def test_the_game_has_an_etag_per_version_and_a_phone_that_has_it_gets_304(daemon: Daemon, client: FlaskClient) -> None:
    """Phones read the whole game only when it changed: each version has its own ETag, a phone that sends it back
    is answered 304 with no body, and its browser asks again each time (no-cache) instead of guessing."""
    empty = client.get("/api/game")
    assert empty.status_code == 200 and empty.headers["Cache-Control"] == "no-cache" and empty.headers["ETag"]
    post(client, "/api/games", {"players": ["Ann", "Bob"]})
    first = client.get("/api/game")
    assert first.status_code == 200 and first.headers["ETag"] != empty.headers["ETag"]
    again = client.get("/api/game", headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""
    press(daemon)  # the press is attributed to whoever is asked: the game changed
    changed = client.get("/api/game", headers={"If-None-Match": first.headers["ETag"]})
    assert changed.status_code == 200 and changed.headers["ETag"] != first.headers["ETag"]
    statistics = changed.get_json()["game"]["scoreboard"]["statistics"]
    assert sum(player["presses"] for player in statistics.values()) == 1
    gzipped = client.get("/api/game", headers={"Accept-Encoding": "gzip"})
    assert gzipped.headers["Content-Encoding"] == "gzip"
    assert (
        client.get(
            "/api/game", headers={"Accept-Encoding": "gzip", "If-None-Match": gzipped.headers["ETag"]}
        ).status_code
        == 304
    )


def test_a_phone_with_the_version_is_answered_304_by_weak_validators_and_lists(
    daemon: Daemon, client: FlaskClient
) -> None:
    """RFC 9110 compares If-None-Match weakly and takes a list: a proxy that weakened the ETag (W/"…"), a browser
    that keeps two versions, or `*` all mean "I have it"; an older version alone still gets the game."""
    post(client, "/api/games", {"players": ["Ann", "Bob"]})
    etag = client.get("/api/game").headers["ETag"]
    gzip_etag = client.get("/api/game", headers={"Accept-Encoding": "gzip"}).headers["ETag"]
    for gzip in (False, True):
        have = gzip_etag if gzip else etag
        for asked in (f"W/{have}", f'"older", {have}', f'W/"older", W/{have}', "*"):
            headers = {"If-None-Match": asked, "Accept-Encoding": "gzip" if gzip else "identity"}
            answer = client.get("/api/game", headers=headers)
            assert (answer.status_code, answer.data, answer.headers.get("ETag")) == (304, b"", have), asked
    press(daemon)
    stale = client.get("/api/game", headers={"If-None-Match": f"W/{etag}, {gzip_etag}"})
    assert stale.status_code == 200 and stale.get_json()["game"]["players"] == ["Ann", "Bob"]
