"""The API fuzzed against its own contract: schemathesis reads the live daemon's /api/openapi.json and throws
schema-valid and schema-breaking requests at every operation, as the admin, as a player and with no
session. Whatever a client sends, the answer is never a 5xx, and every 4xx has the documented body
{"error": {"code": str, "message": str, ...}}.

Some requests are aimed at the table: names, card kinds, declarations and profiles are replaced by ones the daemon
knows, so scoring, declarations and presses get past the first refusal. The number of examples is bounded, and
presses stay quick: the fast simulated hardware of conftest, and a profile with suspense pauses chosen by the
fuzzer is replaced at once. The event stream never ends, so it is left out (tests/test_integration.py covers it).

schemathesis' pytest loaders (`schema.parametrize()` on `from_url` at import time, `schemathesis.pytest.from_fixture`)
need the server while pytest collects, or (from_fixture, schemathesis 4.32 with pytest 9.2) fail on a pytest
internal; so each operation's documented Hypothesis strategy, `schema[path][method].as_strategy()`, drives a
`@given` inside an ordinary test, against the schema loaded from the daemon this module started.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis import checks as schemathesis_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.core.transport import Response

from launcher.table.game_actions import BY_KIND
from tests.conftest import RunningDaemon, http_json, start_daemon
from webui.openapi import SPEC

STREAM = "/api/events"  # never ends: not fuzzed
CONTRACT = "/api/openapi.json"  # schemathesis leaves out the operation it loaded the schema from
OPERATIONS = [
    (path, method.upper()) for path, item in SPEC["paths"].items() for method in item if path not in (STREAM, CONTRACT)
]
EXAMPLES_PER_OPERATION = 100  # one or two seconds per operation on the fast simulated hardware
MIXED_EXAMPLES = 300
PLAYERS = ["Ann", "Bob", "Cy"]
ERROR_FIELDS = set(SPEC["components"]["schemas"]["Error"]["properties"]["error"]["properties"])  # as documented
FUZZ_SETTINGS = settings(
    deadline=None,  # other test runs share the two cores: never a wall-clock assertion
    database=None,  # no example database: nothing written under .hypothesis/, every run draws afresh
    suppress_health_check=[HealthCheck.too_slow],  # each example is an HTTP round trip (a press: fire and rest)
)
# schemathesis' own response checks, beyond the two asserted explicitly: documented status code and content type,
# and the body against the documented schema (the Error schema for every 4xx).
SCHEMATHESIS_CHECKS = [
    schemathesis_checks.not_a_server_error,
    schemathesis_checks.status_code_conformance,
    schemathesis_checks.content_type_conformance,
    schemathesis_checks.response_schema_conformance,
]


class Live:
    """The daemon under fuzzing, the schema it serves, and what the fuzzing saw."""

    def __init__(self, daemon_process: RunningDaemon) -> None:
        self.daemon = daemon_process
        self.schema = schemathesis.openapi.from_url(
            daemon_process.url + "/api/openapi.json", config=SchemathesisConfig(), timeout=10
        )
        self.statuses: Counter[tuple[str, int]] = Counter()
        rules = daemon_process.get("/api/game")["rules"]
        self.kinds = {ruleset: [k["id"] for k in hopper["kinds"]] for ruleset, hopper in rules["decks"].items()}
        self.declarations: dict[str, list[str]] = rules["declarations"]
        self.profiles = [p["name"] for p in daemon_process.get("/api/profiles")["profiles"]]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    daemon = start_daemon(tmp_path_factory.mktemp("fuzz"))
    try:
        fuzzing = Live(daemon)
        yield fuzzing
        report = ", ".join(f"{label} {status}: {n}" for (label, status), n in sorted(fuzzing.statuses.items()))
        print(f"\nfuzzed requests by operation and status: {report}")
    finally:
        if daemon.process.poll() is None:
            daemon.stop()
        if daemon.process.stdout:
            daemon.process.stdout.close()


def _fresh_game(daemon_process: RunningDaemon) -> None:
    status, body = daemon_process.request("POST", "/api/games", {"players": PLAYERS}, admin=True)
    assert status == 201, body
    body = {"winner": "Ann", "hands": {"Bob": 9, "Cy": 4}}
    status, body = daemon_process.request("POST", "/api/games/current/rounds", body, admin=True)
    assert status == 201, body  # a round to edit
    status, body = daemon_process.request("POST", "/api/hopper", {"cards": 500}, admin=True)
    assert status == 200, body


PICK = st.integers(0, 2**16)  # an index into a list known only when the request is sent
HAND = st.one_of(st.integers(0, 120), st.dictionaries(PICK, st.integers(0, 3), max_size=3))  # keys: card kinds
AIM = st.fixed_dictionaries(
    {
        "index": PICK,
        "number": PICK,
        "kind": PICK,
        "by": PICK,
        "player": PICK,
        "count": st.one_of(st.none(), st.integers(1, 3)),
        "cards": st.one_of(st.none(), st.integers(1, 9)),
        "legal": st.booleans(),
        "card": PICK,
        "winner": PICK,
        "hands": st.lists(HAND, min_size=9, max_size=9),
        "red_zero": PICK,
        "players": st.integers(0, 2),
        "dealer": PICK,
        "profile": PICK,
    }
)


def _aim_at_the_table(live: Live, case: Any, data: st.DataObject) -> None:
    """Most of the time, make a generated body one the table would take: names of the game's players, a declaration
    with its own fields, a round that scores the others' hands, a known profile. The rest stays as generated.

    The draws never depend on the daemon's state (Hypothesis replays them): they are indexes, taken modulo the
    lists the daemon has right now."""
    parameters, body = case.path_parameters or {}, case.body
    if not (parameters or isinstance(body, dict)) or not data.draw(st.integers(0, 2), label="aimed"):
        return
    aim = data.draw(AIM, label="aim")
    game = live.daemon.get("/api/game")["game"]
    players = game["players"] if game else PLAYERS
    ruleset = game["ruleset"] if game else "uno_attack"
    kinds = live.kinds[ruleset]

    def pick(items: list[Any], key: str) -> Any:
        return items[aim[key] % len(items)]

    if "index" in parameters and game:  # a round of the game, or one past the last
        parameters["index"] = aim["index"] % (len(game["scoreboard"]["rounds"]) + 1)
    if "number" in parameters:  # an ended shuffle, or the one in play
        parameters["number"] = 1 + aim["number"] % live.daemon.get("/api/state")["shuffle"]["number"]
    if not isinstance(body, dict):
        return
    if isinstance(body.get("kind"), str):  # a declaration: its kind and exactly the fields it takes
        kind = pick(live.declarations[ruleset], "kind")
        fields = {"by": pick(players, "by"), "player": pick(players, "player"), "count": aim["count"],
                  "cards": aim["cards"], "legal": aim["legal"], "card": pick(kinds, "card")}  # fmt: skip
        body.clear()
        body["kind"] = kind
        body.update(
            {name: fields[name] for name in (f.name for f in BY_KIND[kind].fields) if fields.get(name) is not None}
        )
    if isinstance(body.get("winner"), str):  # a round: the winner's hand is empty, the others' are scored
        winner = pick(players, "winner")
        others = [p for p in players if p != winner]
        hands = [h if isinstance(h, int) else {kinds[k % len(kinds)]: n for k, n in h.items()} for h in aim["hands"]]
        body["winner"] = winner
        body["hands"] = dict(zip(others, hands, strict=False))
        if isinstance(body.get("red_zero"), str):
            body["red_zero"] = pick(players, "red_zero")
    if isinstance(body.get("players"), list):  # a new game
        body["players"] = [PLAYERS, [*PLAYERS, "Dee"], body["players"]][aim["players"]]
        if isinstance(body.get("dealer"), str) and body["players"]:
            body["dealer"] = pick(body["players"], "dealer")
        body.pop("teams", None)
    if isinstance(body.get("profile"), str):
        body["profile"] = pick(live.profiles, "profile")


def _check(case: Any, response: Response) -> None:
    request = f"{case.method} {case.formatted_path} body={getattr(case, 'body', None)!r}"
    answer = f"{response.status_code} {response.text[:500]}"
    assert response.status_code < 500, f"{request} → {answer}"
    if 400 <= response.status_code < 500:
        content_type = response.headers.get("content-type", [""])[0]  # schemathesis: lowercase keys, lists of values
        assert content_type.startswith("application/json"), f"{request} → {answer}"
        body = response.json()
        assert isinstance(body, dict) and set(body) == {"error"}, f"{request} → {answer}"
        error = body["error"]
        assert isinstance(error, dict) and {"code", "message"} <= set(error) <= ERROR_FIELDS, f"{request} → {answer}"
        assert isinstance(error["code"], str) and error["code"], f"{request} → {answer}"
        assert isinstance(error["message"], str) and error["message"], f"{request} → {answer}"
    case.validate_response(response, checks=SCHEMATHESIS_CHECKS)


def _keep_presses_quick(live: Live, case: Any, response: Response) -> None:
    """A profile with suspense pauses (extreme, or custom ones) would hold every press for seconds: back to classic."""
    if (
        case.method != "POST"
        or case.path not in ("/api/shuffles", "/api/rounds", "/api/games")
        or response.status_code >= 300
    ):
        return
    profiles = live.daemon.get("/api/profiles")
    active = next(p for p in profiles["profiles"] if p["name"] == profiles["active"])
    if active["pause_probability"] == 0:
        return
    deadline = time.monotonic() + 30
    while True:
        status, body = live.daemon.request("POST", "/api/shuffles", {"profile": "classic"}, admin=True)
        if status == 201:
            return
        assert status == 409 and body["error"]["code"] == "busy", body
        assert time.monotonic() < deadline, "the launcher stayed busy for 30 s"
        time.sleep(0.05)


def _session(live: Live, case: Any, data: st.DataObject) -> dict[str, str]:
    """Mostly the admin's session, so every operation is reached; sometimes a player's, sometimes none. Joining and
    leaving go without one: they would end the session the rest of the fuzzing uses."""
    if case.path == "/api/session" and case.method != "GET":
        return {}
    joined = live.daemon.joined
    cookie = data.draw(st.sampled_from([joined.admin_cookie] * 3 + [joined.table_cookie, None]), label="session")
    if cookie is None:
        return {}
    name, value = cookie.split("=", 1)
    return {name: value}


def _fuzz(live: Live, strategy: st.SearchStrategy[Any], examples: int) -> None:
    @settings(FUZZ_SETTINGS, max_examples=examples)
    @given(case=strategy, data=st.data())
    def fuzz(case: Any, data: st.DataObject) -> None:
        _aim_at_the_table(live, case, data)
        response = case.call(timeout=30, cookies=_session(live, case, data))
        live.statuses[(f"{case.method} {case.path}", response.status_code)] += 1
        _check(case, response)
        _keep_presses_quick(live, case, response)

    fuzz()


def test_the_daemon_serves_the_published_contract(live: Live) -> None:
    assert live.daemon.get(CONTRACT) == SPEC
    served = {(r.ok().path, r.ok().method.upper()) for r in live.schema.get_all_operations()}
    assert served == {*OPERATIONS, (STREAM, "GET")}


@pytest.mark.parametrize(("path", "method"), OPERATIONS, ids=[f"{m} {p}" for p, m in OPERATIONS])
def test_any_request_gets_a_2xx_or_a_documented_4xx(live: Live, path: str, method: str) -> None:
    _fresh_game(live.daemon)
    operation = live.schema[path][method]
    strategy = st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),  # fits the schema
        operation.as_strategy(GenerationMode.NEGATIVE),  # breaks it: wrong types, missing or extra fields
    )
    _fuzz(live, strategy, EXAMPLES_PER_OPERATION)


def test_operations_mixed_in_any_order(live: Live) -> None:
    """Games started, declarations, presses, scores and rounds interleaved: states no single operation reaches."""
    _fresh_game(live.daemon)
    schema = live.schema.exclude(path=STREAM)
    strategy = st.one_of(schema.as_strategy(GenerationMode.POSITIVE), schema.as_strategy(GenerationMode.NEGATIVE))
    _fuzz(live, strategy, MIXED_EXAMPLES)


def test_a_shuffle_number_beyond_sqlite_integers_is_not_found(daemon_process: RunningDaemon) -> None:
    """Found by this fuzzing: /api/rounds/<n> (now /api/shuffles/<n>) with n >= 2**63 overflowed SQLite's INTEGER
    and answered 500."""
    for number in (2**63 - 1, 2**63, 10**30):
        status, body = http_json(f"{daemon_process.url}/api/shuffles/{number}", "GET")
        assert (status, body["error"]["code"]) == (404, "not_found"), (number, body)


def test_the_daemon_logged_no_unexpected_error(live: Live) -> None:
    """Run last: nothing the fuzzing sent reached the daemon's catch-all handler, and it still answers."""
    assert live.daemon.process.poll() is None
    assert live.daemon.get("/api/state")["busy"] in (False, True)
    log = "".join(live.daemon.output)
    assert "unexpected error" not in log and "Traceback" not in log, log[-3000:]
