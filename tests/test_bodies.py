"""Request bodies, as docs/API.md promises them for every endpoint that takes one: an unknown field, a missing
required field, a value of the wrong type, a body that is not an object, not JSON or too large each get the
documented 4xx code and a message that names what was wrong; a refused body changes nothing.

The codes below are written from docs/API.md (its error table, each endpoint's refusals and the game's codes)."""

from __future__ import annotations

import ast
import gc
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import given
from hypothesis import strategies as st

from launcher.access.bodies import MAX_BODY_BYTES, BodyError, Field, Shape, decode, expect
from launcher.access.text import MAX_DEPTH
from launcher.config import Config
from launcher.daemon import Daemon
from tests.conftest import TESTS_LIMITS, joined_client

HEX = "0123456789abcdef" * 2
ROUND = {"winner": "Ann", "hands": {"Bob": 1, "Cy": 2}}

# endpoint → (method, path, {case: (body, the documented code, a word its message must hold)}): a field it does
# not take, a required field missing, a value of the wrong type.
Cases = dict[str, tuple[dict[str, Any], str, str]]
ENDPOINTS: dict[str, tuple[str, str, Cases]] = {
    "press": ("POST", "/api/press", {
        "unknown": ({"colour": "red"}, "unknown_field", "colour"),
        "wrong type": ({"player": 7}, "bad_press", "player"),
    }),
    "hopper": ("POST", "/api/hopper", {
        "unknown": ({"cards": 54, "colour": "red"}, "unknown_field", "colour"),
        "missing": ({}, "bad_cards", "cards"),
        "wrong type": ({"cards": "54"}, "bad_cards", "cards"),
    }),
    "reset": ("POST", "/api/reset", {"unknown": ({"colour": "red"}, "unknown_field", "colour")}),
    "cleaned": ("POST", "/api/care/cleaned", {"unknown": ({"colour": "red"}, "unknown_field", "colour")}),
    "shuffles": ("POST", "/api/shuffles", {
        "unknown": ({"colour": "red"}, "unknown_field", "colour"),
        "wrong type": ({"profile": 3}, "bad_profile", "profile"),
    }),
    "contributions": ("POST", "/api/shuffles/current/contributions", {
        "unknown": ({"shuffle": 1, "commitment": HEX * 2, "colour": "red"}, "unknown_field", "colour"),
        "missing": ({"commitment": HEX * 2}, "bad_contribution", "shuffle"),
        "wrong type": ({"shuffle": "1", "commitment": HEX * 2}, "bad_contribution", "shuffle"),
    }),
    "reveals": ("POST", "/api/shuffles/current/reveals", {
        "unknown": ({"shuffle": 1, "value": HEX, "colour": "red"}, "unknown_field", "colour"),
        "missing": ({"value": HEX}, "bad_contribution", "shuffle"),
        "wrong type": ({"shuffle": 1, "value": 7}, "bad_contribution", "value"),
    }),
    "join": ("POST", "/api/session", {
        "unknown": ({"pin": "1234", "colour": "red"}, "unknown_field", "colour"),
        "missing": ({}, "bad_pin", "PIN"),
        "wrong type": ({"pin": 1234}, "bad_pin", "PIN"),
    }),
    "let in": ("POST", "/api/let-in", {
        "unknown": ({"code": "ACDE", "colour": "red"}, "unknown_field", "colour"),
        "missing": ({}, "bad_code", "code"),
        "wrong type": ({"code": 1234}, "bad_code", "code"),
    }),
    "pins": ("PUT", "/api/pins", {
        "unknown": ({"table": "2468", "colour": "red"}, "unknown_field", "colour"),
        "missing": ({}, "bad_pin", "PIN"),
        "wrong type": ({"table": 2468}, "bad_pin", "table PIN"),
    }),
    "new game": ("POST", "/api/games", {
        "unknown": ({"players": ["Ann", "Bob"], "colour": "red"}, "bad_game", "colour"),
        "missing": ({"mode": "chips"}, "bad_game", "players"),
        "wrong type": ({"players": ["Ann", "Bob"], "track_turns": "yes"}, "bad_game", "track_turns"),
    }),
    "declaration": ("POST", "/api/attacks", {
        "unknown": ({"kind": "played", "by": "Ann", "colour": "red"}, "bad_declaration", "colour"),
        "missing": ({"kind": "hit2"}, "bad_declaration", "by"),
        "wrong type": ({"kind": "hit2", "by": "Ann", "count": "2"}, "bad_declaration", "number of Hit 2 cards"),
    }),
    "round": ("POST", "/api/games/current/rounds", {
        "unknown": ({**ROUND, "colour": "red"}, "bad_round", "colour"),
        "missing": ({"winner": "Ann"}, "bad_round", "hands"),
        "wrong type": ({**ROUND, "carry_open_attacks": "yes"}, "bad_round", "carry_open_attacks"),
    }),
    "correction": ("PUT", "/api/games/current/rounds/0", {
        "unknown": ({**ROUND, "carry_open_attacks": False}, "bad_round", "carry_open_attacks"),
        "missing": ({"hands": {"Bob": 1, "Cy": 2}}, "bad_round", "winner"),
        "wrong type": ({**ROUND, "reshuffled": "yes"}, "bad_round", "reshuffled"),
    }),
    "tournament": ("POST", "/api/tournaments", {
        "unknown": ({"colour": "red"}, "bad_tournament", "colour"),
        "missing": ({}, "bad_tournament", "players"),
    }),
    "tournament round": ("POST", "/api/tournament/rounds", {
        "unknown": ({"colour": "red"}, "bad_round", "colour"),
        "missing": ({}, "bad_round", "number"),
    }),
    "tournament correction": ("PUT", "/api/tournament/rounds/0", {
        "unknown": ({"points": {}, "colour": "red"}, "bad_round", "colour"),
        "missing": ({}, "bad_round", "points"),
    }),
    "tournament join": ("POST", "/api/tournaments/join", {
        "unknown": ({"code": "ABCD", "colour": "red"}, "bad_code", "colour"),
        "missing": ({}, "bad_code", "code"),
    }),
}  # fmt: skip


@pytest.fixture(scope="module")
def admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    """An admin (who may call everything) at a table with a game of three and one round scored."""
    config = Config().replace("state", dir=str(tmp_path_factory.mktemp("bodies"))).replace("web", port=0)
    config = config.replace("limits", **TESTS_LIMITS)  # every request counts against a budget, a refused body too
    daemon = Daemon(config.replace("dispense", min_rest_ms=0))
    try:
        client = joined_client(daemon, admin=True)
        assert client.post("/api/games", json={"players": ["Ann", "Bob", "Cy"]}).status_code == 201
        assert client.post("/api/games/current/rounds", json=ROUND).status_code == 201
        yield client
    finally:
        daemon.close()


def _everything(client: FlaskClient) -> tuple[Any, ...]:
    """The launcher, the game and the last event: what any call that is taken changes."""
    state = client.get("/api/state").get_json()
    del state["connection"]
    return state, client.get("/api/game").get_json()


def _refused(client: FlaskClient, method: str, path: str, status: int, code: str, **request: Any) -> str:
    before = _everything(client)
    reply = client.open(path, method=method, **request)
    error = reply.get_json()["error"]
    assert (reply.status_code, error["code"]) == (status, code), error
    assert _everything(client) == before, "a refused body changes nothing"
    assert error["message"]
    return str(error["message"])


CASES = [
    pytest.param(endpoint, case, id=f"{endpoint}-{case}")
    for endpoint, (_, _, cases) in ENDPOINTS.items()
    for case in cases
]


def test_every_endpoint_that_takes_a_body_is_in_the_table(admin: FlaskClient) -> None:
    spec = admin.get("/api/openapi.json").get_json()
    with_body = {(method.upper(), re.sub(r"\{\w+\}", "{}", path)) for path, item in spec["paths"].items()
                 for method, op in item.items() if "requestBody" in op}  # fmt: skip
    tabled = {(method, path.replace("/0", "/{}")) for method, path, _ in ENDPOINTS.values()}
    assert with_body == tabled


@pytest.mark.parametrize(("endpoint", "case"), CASES)
def test_a_bad_field_gets_the_documented_code_naming_the_field(admin: FlaskClient, endpoint: str, case: str) -> None:
    method, path, cases = ENDPOINTS[endpoint]
    body, code, named = cases[case]
    assert named in _refused(admin, method, path, 400, code, json=body)


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
@pytest.mark.parametrize(
    ("data", "content_type", "status", "code"),
    [
        ("[1, 2]", "application/json", 400, "bad_json"),
        ('"press"', "application/json", 400, "bad_json"),
        ("{", "application/json", 400, "bad_json"),
        (b'{"a": "\xff"}', "application/json", 400, "bad_json"),
        ("[" * 17 + "]" * 17, "application/json", 400, "bad_json"),
        ('{"player": "\\ud800"}', "application/json", 400, "bad_text"),
        ("press!", "text/plain", 415, "unsupported_media_type"),
        ("x" * (MAX_BODY_BYTES + 1), "application/json", 413, "request_entity_too_large"),
    ],
    ids=["list", "string", "broken", "not-utf8", "too-deep", "lone-surrogate", "not-json", "too-large"],
)
def test_a_body_that_is_no_json_object_gets_the_documented_code(
    admin: FlaskClient, endpoint: str, data: str | bytes, content_type: str, status: int, code: str
) -> None:
    method, path, *_ = ENDPOINTS[endpoint]
    _refused(admin, method, path, status, code, data=data, content_type=content_type)


# --- the parser itself ------------------------------------------------------------------------------------------


def test_an_empty_body_is_an_empty_object_and_a_body_is_read_as_sent() -> None:
    assert decode(b"", is_json=False) == {}
    assert decode('{"a": [1, {"b": "ü"}]}'.encode(), is_json=True) == {"a": [1, {"b": "ü"}]}


@pytest.mark.parametrize(
    ("raw", "is_json", "status", "code", "message"),
    [
        (b"{}", False, 415, "unsupported_media_type", "send the body as application/json"),
        (b"[]", True, 400, "bad_json", "the body must be a JSON object"),
        (b"{", True, 400, "bad_json", "the body is not JSON"),
        (b'{"a": "\xff"}', True, 400, "bad_json", "the body is not UTF-8 (byte 7)"),
        (b'{"a": ' + b"[" * 16 + b"]" * 16 + b"}", True, 400, "bad_json", "nests deeper than 16 levels"),
        (b'{"a": ' * 17 + b"1" + b"}" * 17, True, 400, "bad_json", "nests deeper than 16 levels"),
        (b'{"a": ["\\udc00"]}', True, 400, "bad_text", "a[0] holds a character that is not text"),
        (b" " * (MAX_BODY_BYTES + 1), True, 413, "request_entity_too_large", f"larger than {MAX_BODY_BYTES} bytes"),
    ],
)
def test_a_body_that_is_no_json_object_is_refused_by_its_code(
    raw: bytes, is_json: bool, status: int, code: str, message: str
) -> None:
    with pytest.raises(BodyError) as refused:
        decode(raw, is_json=is_json)
    assert (refused.value.status, refused.value.code) == (status, code)
    assert message in refused.value.message


DECK = Shape(
    "a reload", {"cards": Field(required=True, check=expect("bad_cards", lambda v: v in range(1, 10), "1 to 9"))}
)
GAME = Shape("a new game", {"players": Field(required=True), "mode": Field()}, code="bad_game")


@pytest.mark.parametrize(
    ("shape", "body", "code", "message", "field"),
    [
        (DECK, {"cards": 3, "colour": "red"}, "unknown_field", "unknown field colour: a reload takes no colour", None),
        (GAME, {"players": [], "a": 1, "b": 2}, "bad_game", "unknown fields a, b: a new game takes no a, b; it takes "
         "players, mode", None),
        (Shape("a reset", {}), {"x": 1}, "unknown_field", "unknown field x: a reset takes no x; it takes no fields",
         None),
        (GAME, {"mode": "chips"}, "bad_game", "a new game needs players", None),
        (DECK, {}, "bad_cards", "cards must be 1 to 9, not nothing", "cards"),
        (DECK, {"cards": "3"}, "bad_cards", "cards must be 1 to 9, not '3'", "cards"),
        (DECK, {"cards": "x" * 100}, "bad_cards", "not '" + "x" * 30, "cards"),
    ],
)  # fmt: skip
def test_a_shape_refuses_a_body_naming_the_field(
    shape: Shape, body: dict[str, Any], code: str, message: str, field: str | None
) -> None:
    with pytest.raises(BodyError) as refused:
        shape.read(body)
    assert (refused.value.status, refused.value.code, refused.value.details.get("field")) == (400, code, field)
    assert message in refused.value.message
    assert len(refused.value.message) < 200


def test_a_shape_gives_the_checked_values_and_leaves_out_what_was_not_sent() -> None:
    shape = Shape("a reload", {"cards": Field(check=expect("bad_cards", lambda v: v == 3, "3", lambda v: v * 2))})
    assert shape.read({"cards": 3}) == {"cards": 6}
    assert shape.read({}) == {}
    assert GAME.read({"players": ["Ann"]}) == {"players": ["Ann"]}


@pytest.mark.parametrize("module", ["launcher/access/bodies.py", "launcher/table/game_requests.py"])
def test_the_game_requests_share_the_parser_without_the_web_layer(module: str) -> None:
    tree = ast.parse((Path(__file__).parent.parent / module).read_text(encoding="utf-8"))
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert imported and not [name for name in imported if name.split(".")[0] in ("webui", "flask", "werkzeug")]


def test_a_deeply_nested_body_is_refused_before_it_is_parsed() -> None:
    """A body nested 30,000 deep must not send the JSON parser down to Python's recursion limit: the collector can
    run there, and a clean-up it runs then (a stream's `finally` that frees its place, any `__del__`) fails for
    want of stack and is lost."""
    lost: list[BaseException | None] = []
    stop = False

    def nest(levels: int) -> int:
        return 0 if levels == 0 else 1 + nest(levels - 1)

    class CleanUp:
        """Garbage that only the collector frees; its clean-up needs a few frames of stack, and leaves the next."""

        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            nest(40)
            if not stop:
                CleanUp()

    old_hook, old_threshold = sys.unraisablehook, gc.get_threshold()
    sys.unraisablehook = lambda unraisable: lost.append(unraisable.exc_value)
    try:
        gc.set_threshold(1)
        CleanUp()
        with pytest.raises(BodyError, match="deeper than"):
            decode(b"[" * 30_000 + b"]" * 30_000, is_json=True)
        with pytest.raises(BodyError, match="deeper than"):
            decode(b'{"a":' * 17 + b"1" + b"}" * 17, is_json=True)
    finally:
        stop = True
        gc.set_threshold(*old_threshold)
        gc.collect()
        sys.unraisablehook = old_hook
    assert lost == []


def _levels(value: Any) -> int:
    if isinstance(value, dict | list):
        return 1 + max(map(_levels, value.values() if isinstance(value, dict) else value), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}"\\ab\u00e9'),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[{"\\x', max_size=3), inner, max_size=3)
    ),
    max_leaves=40,
)


@given(_JSON)
def test_how_deep_a_body_nests_is_read_right_before_parsing(value: Any) -> None:
    """Brackets and quotes inside strings do not count; the verdict is the parsed value's own depth."""
    text = json.dumps({"x": value}, ensure_ascii=False)
    expected_too_deep = 1 + _levels(value) > MAX_DEPTH
    if expected_too_deep:
        with pytest.raises(BodyError, match="deeper than"):
            decode(text.encode(), is_json=True)
    else:
        assert decode(text.encode(), is_json=True) == {"x": value}
