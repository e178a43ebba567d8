"""The scoring modes and endings over HTTP, on the real daemon with simulated hardware: knock-out play with players
going out of the round in play, chips, elimination to the last player standing, the loser named when the game ends,
and the winner's last card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from launcher.daemon import Daemon
from tests.conftest import MakeDaemon, joined_client, local_config

FOUR = ["Ann", "Bob", "Cy", "Dee"]  # Ann deals: Bob plays first
ROUNDS = "/api/games/current/rounds"


@pytest.fixture
def daemon(make_daemon: MakeDaemon, tmp_path: Path) -> Daemon:
    return make_daemon(local_config(tmp_path).replace("sim", cards_per_second=400.0, card_block_ms=1.0))


@pytest.fixture
def client(daemon: Daemon) -> FlaskClient:
    return joined_client(daemon)


def post(client: FlaskClient, path: str, body: Any) -> dict[str, Any]:
    reply = client.post(path, json=body)
    assert reply.status_code in (200, 201), reply.get_json()
    return reply.get_json()["game"]


def refused(client: FlaskClient, path: str, body: Any, code: str, method: str = "POST") -> str:
    """The refusal's message; nothing was stored."""
    before = client.get("/api/game").get_json()["game"]
    reply = client.open(path, method=method, json=body)
    assert reply.status_code == 400, reply.get_json()
    error = reply.get_json()["error"]
    assert error["code"] == code
    assert client.get("/api/game").get_json()["game"] == before
    return error["message"]


# --- knock-out play ------------------------------------------------------------------------------------------------


def test_knock_out_players_go_out_of_the_round_and_the_loser_deals_the_next(daemon: Daemon, client: FlaskClient):
    game = post(client, "/api/games", {"players": FOUR, "mode": "knock_out", "target": 100})
    rules = client.get("/api/game").get_json()["rules"]
    assert "knock_out" in [c["value"] for c in rules["scoring"][0]["choices"]]
    assert rules["mode_declarations"] == {"knock_out": ["went_out"]}
    assert (game["table"]["out"], game["table"]["in_play"]) == ([], FOUR)
    game = post(client, "/api/attacks", {"kind": "went_out", "player": "Bob"})  # Bob played his last card
    assert (game["table"]["out"], game["table"]["in_play"]) == (["Bob"], ["Ann", "Cy", "Dee"])
    assert game["table"]["current"] == "Cy"
    game = post(client, "/api/attacks", {"kind": "hit2", "by": "Cy"})  # Bob is out: Dee is hit, not Bob
    assert game["table"]["pending"]["player"] == "Dee"
    message = refused(client, "/api/attacks", {"kind": "went_out", "player": "Dee"}, "bad_declaration")
    assert "Dee must first press 2 times for the Hit 2" in message
    post(client, "/api/attacks", {"kind": "cancel"})
    post(client, "/api/attacks", {"kind": "went_out", "player": "Cy"})
    message = refused(client, "/api/attacks", {"kind": "went_out", "player": "Ann"}, "bad_declaration")
    assert "Ann and Dee are the last two" in message
    # Ann went out third; Dee is left with a Wild and a 7: 57 points. The winner is left out: Bob went out first.
    game = post(client, ROUNDS, {"order": ["Bob", "Cy", "Ann", "Dee"], "hands": {"Dee": {"wild": 1, "7": 1}}})
    board = game["scoreboard"]
    assert board["totals"] == {"Ann": 0, "Bob": 0, "Cy": 0, "Dee": 57}
    assert board["rounds"][0]["winner"] == "Bob" and board["rounds"][0]["order"] == ["Bob", "Cy", "Ann", "Dee"]
    assert (game["table"]["dealer"], game["table"]["current"], game["table"]["out"]) == ("Dee", "Ann", [])
    scored = [e.data for e in daemon.bus.events_after(0) if e.type == "round.scored"]
    assert scored[-1]["winner"] == "Bob"
    # Dee busts at 107: the game is over, Dee is named the loser, the lowest totals share the win.
    game = post(client, ROUNDS, {"winner": "Ann", "order": ["Ann", "Cy", "Bob", "Dee"], "hands": {"Dee": 50}})
    assert game["scoreboard"]["losers"] == ["Dee"] and game["scoreboard"]["winners"] == ["Ann", "Bob", "Cy"]
    finished = [e.data for e in daemon.bus.events_after(0) if e.type == "game.finished"]
    assert [(f["winners"], f["losers"]) for f in finished] == [(["Ann", "Bob", "Cy"], ["Dee"])]
    places = {p: s["places"] for p, s in game["scoreboard"]["statistics"].items()}
    assert places == {"Ann": [3, 1], "Bob": [1, 3], "Cy": [2, 2], "Dee": [4, 4]}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"order": ["Bob", "Cy", "Dee"], "hands": {"Dee": 5}}, "the order misses Ann"),
        ({"order": ["Bob", "Cy", "Cy", "Dee"], "hands": {"Dee": 5}}, "Cy is twice in the order"),
        ({"order": ["Bob", "Cy", "Ann", "Zed"], "hands": {"Zed": 5}}, "unknown player 'Zed'"),
        ({"order": ["Bob", "Cy", "Ann", "Dee"], "hands": {"Dee": 5, "Cy": 2}}, "a hand for Cy, but in knock-out"),
        ({"order": ["Bob", "Cy", "Ann", "Dee"], "hands": {"Ann": 5}}, "a hand for Ann, but in knock-out"),
        ({"order": ["Bob", "Cy", "Ann", "Dee"], "hands": {}}, "no hand for Dee, the loser"),
        ({"winner": "Cy", "order": ["Bob", "Cy", "Ann", "Dee"], "hands": {"Dee": 5}}, "but Bob went out first"),
        ({"winner": "Bob", "hands": {"Dee": 5}}, "a knock-out round needs order"),
        ({"order": "Bob Cy Ann Dee", "hands": {"Dee": 5}}, "the order lists every player"),
        ({"order": ["Bob", "Cy", "Ann", "Dee"], "hands": {"Dee": 5}, "last_card": "trade_hands"}, "Trade Hands"),
    ],
)
def test_an_inconsistent_knock_out_round_is_refused_by_name(client: FlaskClient, body: dict, message: str) -> None:
    post(client, "/api/games", {"players": FOUR, "mode": "knock_out"})
    assert message in refused(client, ROUNDS, body, "bad_round")


def test_a_knock_out_round_is_corrected_and_undone_with_its_order(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR, "mode": "knock_out", "target": 100})
    post(client, ROUNDS, {"order": ["Bob", "Cy", "Ann", "Dee"], "hands": {"Dee": 30}})
    reply = client.put(f"{ROUNDS}/0", json={"order": ["Dee", "Cy", "Bob", "Ann"], "hands": {"Ann": 40}})
    game = reply.get_json()["game"]
    assert game["scoreboard"]["totals"] == {"Ann": 40, "Bob": 0, "Cy": 0, "Dee": 0}
    assert game["table"]["dealer"] == "Ann"  # the corrected loser deals
    assert "a hand for Bob" in refused(
        client, f"{ROUNDS}/0", {"order": FOUR, "hands": {"Bob": 4}}, "bad_round", method="PUT"
    )
    game = client.delete(f"{ROUNDS}/last").get_json()["game"]
    assert game["scoreboard"]["rounds"] == [] and game["table"]["dealer"] == "Ann"


def test_went_out_and_the_finishing_order_belong_to_knock_out_play_only(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": FOUR, "mode": "lowest_total"})
    message = refused(client, "/api/attacks", {"kind": "went_out", "player": "Bob"}, "bad_declaration")
    assert "only in knock-out play; this game is scored lowest total" in message
    body = {"winner": "Ann", "order": FOUR, "hands": {"Bob": 1, "Cy": 1, "Dee": 1}}
    assert "the finishing order is for knock-out play" in refused(client, ROUNDS, body, "bad_round")
    assert "a round needs winner" in refused(client, ROUNDS, {"hands": {"Bob": 1}}, "bad_round")
    message = refused(client, "/api/games", {"players": FOUR, "mode": "knock_out", "teams": {"A": ["Ann", "Cy"],
                                                                                             "B": ["Bob", "Dee"]}},
                      "bad_game")  # fmt: skip
    assert "knock-out play is for players, not teams" in message


# --- chips ---------------------------------------------------------------------------------------------------------


def test_chips_are_a_zero_sum_ledger_and_the_bust_side_is_named(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"], "mode": "chips", "target": 100})
    game = post(client, ROUNDS, {"winner": "Ann", "hands": {"Bob": {"skip": 1, "4": 1}, "Cy": 30}})
    assert game["scoreboard"]["totals"] == {"Ann": 54, "Bob": -24, "Cy": -30}
    game = post(client, ROUNDS, {"winner": "Bob", "hands": {"Ann": 0, "Cy": 70}})
    board = game["scoreboard"]
    assert board["totals"] == {"Ann": 54, "Bob": 46, "Cy": -100}
    assert (board["over"], board["winners"], board["losers"]) == (True, ["Ann"], ["Cy"])
    finished = [e.data for e in daemon.bus.events_after(0) if e.type == "game.finished"]
    assert [(f["winners"], f["losers"]) for f in finished] == [(["Ann"], ["Cy"])]


# --- elimination to the last player standing -----------------------------------------------------------------------


def test_elimination_to_the_last_standing_is_a_setting_of_the_game(client: FlaskClient) -> None:
    game = post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"], "mode": "elimination", "target": 100,
                                       "final": "last_standing"})  # fmt: skip
    assert game["final"] == "last_standing" and game["scoreboard"]["final_rule"] == "last_standing"
    game = post(client, ROUNDS, {"winner": "Ann", "hands": {"Bob": 10, "Cy": 120}})
    assert game["scoreboard"]["eliminated"] == {"Cy": 0} and game["scoreboard"]["final"] is False
    game = post(client, ROUNDS, {"winner": "Bob", "hands": {"Ann": 40}})
    assert game["scoreboard"]["over"] is False  # the head-to-head final would have ended it here
    game = post(client, ROUNDS, {"winner": "Ann", "hands": {"Bob": 95}})
    assert game["scoreboard"]["winners"] == ["Ann"] and game["scoreboard"]["losers"] == []
    assert post(client, "/api/games", {"players": FOUR, "mode": "elimination"})["final"] == "last_standing"
    head_to_head = {"players": FOUR, "mode": "elimination", "final": "next_round"}
    assert post(client, "/api/games", head_to_head)["final"] == "next_round"
    assert post(client, "/api/games", {"players": FOUR})["final"] is None
    message = refused(client, "/api/games", {"players": FOUR, "mode": "chips", "final": "last_standing"}, "bad_game")
    assert "final = 'last_standing' is a setting of elimination; this game is scored chips" in message
    message = refused(client, "/api/games", {"players": FOUR, "mode": "elimination", "final": "x"}, "bad_game")
    assert "final = 'x' is not accepted; expected one of next_round, last_standing" in message


# --- the loser of lowest total ---------------------------------------------------------------------------------------


def test_lowest_total_names_the_player_who_reached_the_target(daemon: Daemon, client: FlaskClient) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"], "mode": "lowest_total", "target": 100})
    post(client, ROUNDS, {"winner": "Ann", "hands": {"Bob": 50, "Cy": 10}})
    game = post(client, ROUNDS, {"winner": "Cy", "hands": {"Ann": 20, "Bob": 55}})
    assert (game["scoreboard"]["winners"], game["scoreboard"]["losers"]) == (["Cy"], ["Bob"])
    finished = [e.data for e in daemon.bus.events_after(0) if e.type == "game.finished"]
    assert [(f["winners"], f["losers"]) for f in finished] == [(["Cy"], ["Bob"])]


# --- the winner's last card ----------------------------------------------------------------------------------------


def test_the_last_card_is_checked_against_the_rules_and_kept_with_the_round(client: FlaskClient) -> None:
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"]})
    hands = {"winner": "Ann", "hands": {"Bob": 5, "Cy": 6}}
    message = refused(client, ROUNDS, {**hands, "last_card": "trade_hands"}, "bad_round")
    assert message == "Ann cannot go out on a Trade Hands: in UNO Attack nobody goes out on a Trade Hands"
    game = post(client, ROUNDS, {**hands, "last_card": "wild"})
    assert game["scoreboard"]["rounds"][0]["last_card"] == "wild"
    post(client, "/api/games", {"players": ["Ann", "Bob", "Cy"], "house_rules": {"last_card_not_action": True}})
    assert "which card Ann went out on (last_card) is needed" in refused(client, ROUNDS, hands, "bad_round")
    message = refused(client, ROUNDS, {**hands, "last_card": "wild"}, "bad_round")
    assert "Ann cannot go out on a Wild: the house rule no action card to finish is on" in message
    assert "no card kind 'draw_two'" in refused(client, ROUNDS, {**hands, "last_card": "draw_two"}, "bad_round")
    post(client, ROUNDS, {**hands, "last_card": "9"})
    message = refused(client, f"{ROUNDS}/0", hands, "bad_round", method="PUT")
    assert "which card Ann went out on" in message
