"""The API described as OpenAPI 3.1, served at /api/openapi.json. docs/API.md says the same in prose; a test checks
that every route the app serves is described here with the same methods. What each write spends (`x-budget`, or
`x-unbudgeted` and why) is read from its view's declaration (webui/access.py), not written here again."""

from __future__ import annotations

import re
from typing import Any

from flask import Flask

from launcher.game.rotation import MAX_NAME, MAX_POINTS, MAX_TABLES, SEATS
from launcher.table.game_actions import ACTIONS
from launcher.table.game_options import OPTIONS, house_rules_schema

_ERROR = {
    "description": "refused: the message says what was wrong",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}
_ANY_OBJECT = {"type": "object"}
_OVER_BUDGET = {
    "description": "this phone is over the write's [limits] budget (x-budget): retry_after_s says when to try again",
    "content": _ERROR["content"],
}
_STORE_FULL = {
    "description": "store_full: the store reached [limits] store_mb; nothing more is kept until the admin makes room",
    "content": _ERROR["content"],
}
_GAME = {
    "description": "the current game",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/GameAnswer"}}},
}


def _json_body(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def _ok(description: str, schema: dict[str, Any] = _ANY_OBJECT) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _operation(
    summary: str, responses: dict[str, Any], body: dict[str, Any] | None = None, *, role: str = "none"
) -> dict[str, Any]:
    """`role`: the session an operation needs: "none", "table" (joined with the table PIN) or "admin"."""
    operation: dict[str, Any] = {"summary": summary, "responses": {**responses, "4XX": _ERROR}, "x-role": role}
    if role != "none":
        operation["security"] = [{"session": []}]
        # A change the store could not keep (a full or read-only disk): disk_full, disk_read_only, store_failed.
        operation["responses"]["507"] = _ERROR
    if body is not None:
        operation["requestBody"] = body
    return operation


def _change(summary: str, responses: dict[str, Any], body: dict[str, Any] | None = None) -> dict[str, Any]:
    """An operation that changes something at the table: it needs a session joined with the table PIN."""
    return _operation(summary, responses, body, role="table")


_PIN = {"type": "string", "pattern": "^[0-9]{4,12}$"}
_GAME_ID = {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}


def _shuffle_body(name: str, length: int, description: str) -> dict[str, Any]:
    """A phone's commitment or reveal: the shuffle in play's number and `length` lowercase hex characters."""
    hex_field = {"type": "string", "pattern": f"^[0-9a-f]{{{length}}}$", "description": description}
    return _json_body(
        {
            "type": "object",
            "required": ["shuffle", name],
            "properties": {
                "shuffle": {"type": "integer", "minimum": 1, "description": "the shuffle in play"},
                name: hex_field,
            },
            "additionalProperties": False,
        }
    )


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


_ROUND_NUMBER = {"name": "number", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}
_ROLE = _ok("the session's role", {"type": "object", "properties": {"role": {"enum": ["none", "table", "admin"]}}})
_TICKET = {"type": "string", "minLength": 1, "maxLength": 64}
_CODE = {"type": "string", "pattern": "^[A-Za-z0-9]{4}$"}
_WAITING = _ok(
    "the PIN was not checked: it waits for a person at the table to let it in (a joined phone types `code`, or the "
    'launcher\'s button is held); send {"waiting": ticket} again to learn whether it was',
    {
        "type": "object",
        "required": ["role", "waiting", "code", "wait_s"],
        "properties": {
            "role": {"enum": ["none"]},
            "waiting": _TICKET,
            "code": _CODE,
            "wait_s": {"type": "integer", "minimum": 0},
        },
    },
)
_INVITE = _ok(
    "the join link (the invite's token, never the PIN), its QR code as a data: URL, and the table PIN only for a "
    "session that typed it or set it",
    {
        "type": "object",
        "required": ["join_url", "join_qr"],
        "properties": {"pin": _PIN, "join_url": {"type": "string"}, "join_qr": {"type": "string"}},
    },
)


_HAND = {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "object", "additionalProperties": {"type": "integer"}}]}
_ROUND_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["hands"],
    "description": "winner is required, except in knock-out play, where order is (and winner, if given, is its first)",
    "properties": {
        "winner": {"type": "string", "description": "who went out (first)"},
        "hands": {
            "type": "object",
            "additionalProperties": _HAND,
            "description": "the cards left in each hand; in knock-out play only the loser's (the last in order)",
        },
        "reshuffled": {"type": "boolean"},
        "red_zero": {"type": ["string", "null"]},
        "order": {
            "type": "array",
            "items": {"type": "string"},
            "description": "knock-out play only: every player still in the game, first out first; the last lost",
        },
        "last_card": {
            "type": ["string", "null"],
            "description": "the card kind the winner went out on; required with the house rule last_card_not_action",
        },
    },
    "additionalProperties": False,
}
_NEW_ROUND_BODY: dict[str, Any] = {
    **_ROUND_BODY,
    "properties": {
        **_ROUND_BODY["properties"],
        "carry_open_attacks": {
            "type": "boolean",
            "description": "score although someone still owes the launcher: it is pressed first in the next round",
        },
    },
}

# Made from the registry of declarations: every kind, and every field any of them takes (which kind takes which is
# in GET /api/game's rules.actions; a field another kind takes is refused with bad_declaration).
_DECLARATION_BODY: dict[str, Any] = {
    "type": "object",
    "required": ["kind"],
    "properties": {
        "kind": {"enum": [action.kind for action in ACTIONS]},
        **{f.name: dict(f.schema) for action in ACTIONS for f in action.fields},
    },
    "additionalProperties": False,
}

_COUNT = {"type": "integer", "minimum": 0}
_RATE = {"type": ["number", "null"], "minimum": 0, "description": "per 1,000 fires; null before the first fire"}
_CARE_PERIOD: dict[str, Any] = {
    "type": "object",
    "required": ["since", "fires", "cards", "jams", "stuck", "timeouts", "motor_s", "per_1000_fires", "recent"],
    "properties": {
        "since": {"type": "number", "description": "when this count began, in seconds since the epoch"},
        **{name: _COUNT for name in ("fires", "cards", "jams", "stuck", "timeouts")},
        "motor_s": {"type": "number", "minimum": 0, "description": "the motor's run time, as the dispenser measured"},
        "per_1000_fires": {
            "type": "object",
            "required": ["jams", "stuck", "timeouts"],
            "properties": {"jams": _RATE, "stuck": _RATE, "timeouts": _RATE},
        },
        "recent": {
            "type": "object",
            "description": "the latest fires of the period, at most rule.over_fires",
            "required": ["fires", "jams", "jams_per_1000_fires"],
            "properties": {"fires": _COUNT, "jams": _COUNT, "jams_per_1000_fires": _RATE},
        },
    },
}
_CARE = _ok(
    "the launcher's counters (docs/HARDWARE.md, Wear and care)",
    {
        "type": "object",
        "required": ["lifetime", "since_cleaning", "clean_roller", "rule"],
        "properties": {
            "lifetime": _CARE_PERIOD,
            "since_cleaning": _CARE_PERIOD,
            "clean_roller": {"type": "boolean", "description": "the jams since the cleaning ask for another"},
            "rule": {
                "type": "object",
                "required": ["jams_per_1000_fires", "over_fires", "min_jams"],
                "properties": {"jams_per_1000_fires": _COUNT, "over_fires": _COUNT, "min_jams": _COUNT},
            },
        },
    },
)

SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "UNO launcher",
        "version": "1",
        "description": "The launcher's page and phones use this API; events arrive by Server-Sent Events.",
    },
    "paths": {
        "/api/state": {"get": _operation("snapshot of the launcher", {"200": _ok("the state")})},
        "/api/events": {
            "get": _operation(
                "Server-Sent Events; resume with Last-Event-ID",
                {"200": {"description": "an event stream", "content": {"text/event-stream": {}}}},
            )
        },
        "/api/press": {
            "post": _change(
                "a press, as on the big button",
                {"200": _ok("the outcome, once the fire and the motor's rest are over")},
                _json_body(
                    {
                        "type": "object",
                        "properties": {
                            "player": {
                                "type": "string",
                                "description": "who presses; without it, whoever the table asks",
                            }
                        },
                        "additionalProperties": False,
                    },
                    required=False,
                ),
            )
        },
        "/api/hopper": {
            "post": _change(
                "the hopper was refilled",
                {"200": _ok("the hopper's count")},
                _json_body(
                    {
                        "type": "object",
                        "required": ["cards"],
                        "properties": {"cards": {"type": "integer", "minimum": 1, "maximum": 500}},
                        "additionalProperties": False,
                    }
                ),
            )
        },
        "/api/profiles": {"get": _operation("firing profiles and their figures", {"200": _ok("the profiles")})},
        "/api/shuffles": {
            "post": _change(
                "end the shuffle (revealing its seed) and start the next",
                {"201": _ok("the ended shuffle's record and the new shuffle")},
                _json_body(
                    {
                        "type": "object",
                        "properties": {"profile": {"type": "string"}, "custom": {"type": "object"}},
                        "additionalProperties": False,
                    },
                    required=False,
                ),
            )
        },
        "/api/shuffles/current/contributions": {
            "post": _change(
                "commit this phone's random bytes (their SHA-256) to the shuffle in play, before its first press",
                {"201": _ok("its place in the shuffle's list and how many the shuffle has")},
                _shuffle_body(
                    "commitment", 64, "the SHA-256 of 16 random bytes written as 32 lowercase hex characters"
                ),
            )
        },
        "/api/shuffles/current/reveals": {
            "post": _change(
                "reveal the bytes this phone committed, once the shuffle's commitments have closed",
                {"200": _ok("the place of the commitment they match, and whether the key is now fixed")},
                _shuffle_body("value", 32, "the 16 bytes committed, as 32 lowercase hex characters"),
            )
        },
        "/api/shuffles/{number}": {
            "get": {
                **_operation("the record of an ended shuffle", {"200": _ok("the shuffle record")}),
                "parameters": [{"name": "number", "in": "path", "required": True, "schema": {"type": "integer"}}],
            }
        },
        "/api/shuffles/{number}/qr": {
            "get": {
                **_operation(
                    "an ended shuffle's record as the text of one QR code, and the code's modules to draw",
                    {"200": _ok("the text (null when the record is too long for one code), its digits, the modules")},
                ),
                "parameters": [{"name": "number", "in": "path", "required": True, "schema": {"type": "integer"}}],
            }
        },
        "/api/game": {"get": _operation("the current game and the rules to choose from", {"200": _GAME})},
        "/api/games": {
            "post": _change(
                "start a new game",
                {"201": _GAME},
                _json_body(
                    {
                        "type": "object",
                        "required": ["players"],
                        "properties": {
                            "players": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 10},
                            "ruleset": {"enum": ["uno_attack", "classic"]},
                            "house_rules": house_rules_schema(),
                            **{option.name: option.api_schema() for option in OPTIONS},
                            "dealer": {"type": "string"},
                            "track_turns": {"type": "boolean"},
                            "profile": {"type": "string"},
                        },
                        "additionalProperties": False,
                    }
                ),
            )
        },
        "/api/attacks": {
            "post": _change(
                "declare what was played, or a penalty",
                {"200": _GAME},
                _json_body(_DECLARATION_BODY),
            )
        },
        "/api/games/current/rounds": {
            "post": _change(
                "score a round; refused (409 attacks_open) while someone still owes the launcher",
                {"201": _GAME},
                _json_body(_NEW_ROUND_BODY),
            )
        },
        "/api/games/current/rounds/last": {"delete": _change("undo the last round", {"200": _GAME})},
        "/api/game/undo-declaration": {
            "post": _change(
                "undo the last declaration while nothing was pressed since (409 undo_too_late, nothing_to_undo)",
                {"200": _GAME},
            )
        },
        "/api/games/current/rounds/{index}": {
            "put": {
                **_change(
                    "replace a round; every total after it is recomputed", {"200": _GAME}, _json_body(_ROUND_BODY)
                ),
                "parameters": [{"name": "index", "in": "path", "required": True, "schema": {"type": "integer"}}],
            }
        },
        "/api/session": {
            "get": _operation("the role of the caller's session (the admin's with its notices)", {"200": _ROLE}),
            "post": _operation(
                "join with the table PIN, the admin PIN or the invite's token: sets the session cookie; wrong PIN "
                "guesses are limited; while a PIN cannot be checked, it waits unchecked to be let in (`waiting`)",
                {"201": _ROLE, "202": _WAITING},
                _json_body(
                    {
                        "type": "object",
                        "properties": {"pin": _PIN, "token": _TICKET, "waiting": _TICKET},
                        "minProperties": 1,
                        "maxProperties": 1,
                        "additionalProperties": False,
                    }
                ),
            ),
            "delete": _operation("leave: the session ends and its cookie is cleared", {"200": _ROLE}),
        },
        "/api/let-in": {
            "post": _change(
                "let in the phone that shows this code: its waiting PIN is checked now, opening at most this "
                "session's role",
                {"200": _ok("the role the PIN opened, none when it was wrong", _ROLE)},
                _json_body(
                    {
                        "type": "object",
                        "required": ["code"],
                        "properties": {"code": _CODE},
                        "additionalProperties": False,
                    }
                ),
            )
        },
        "/api/invite": {
            "get": _operation("the invite a joined phone shows", {"200": _INVITE}, role="table"),
            "post": _operation("a new invite: the links made before stop joining", {"201": _INVITE}, role="admin"),
        },
        "/api/pins": {
            "put": _operation(
                "change the table PIN and/or the admin PIN; the sessions the old one opened end",
                {"200": _ok("what changed, and for a new table PIN the link and QR code that join with it")},
                _json_body(
                    {
                        "type": "object",
                        "properties": {"table": _PIN, "admin": _PIN},
                        "additionalProperties": False,
                        "minProperties": 1,
                    }
                ),
                role="admin",
            )
        },
        "/api/reset": {
            "post": _operation(
                "leave a latched FAULT once the launcher has been seen to",
                {"200": _ok("the fault, now null")},
                _json_body({"type": "object", "additionalProperties": False}, required=False),
                role="admin",
            )
        },
        "/api/care": {
            "get": _operation(
                "the launcher's wear: lifetime counters, those since the roller was cleaned, and the cleaning hint",
                {"200": _CARE},
                role="admin",
            )
        },
        "/api/care/cleaned": {
            "post": _operation(
                "the roller was cleaned: the counts since cleaning start again, the lifetime ones stay",
                {"200": _CARE},
                _json_body({"type": "object", "additionalProperties": False}, required=False),
                role="admin",
            )
        },
        "/api/tournament": {
            "get": _operation(
                "this table's current tournament: the seats of each table's next round, the rounds, the standings",
                {"200": _ok("the tournament, or null")},
            )
        },
        "/api/tournaments/export": {
            "get": {
                **_operation(
                    "every tournament kept: JSON with rounds and standings, or CSV, a row per player per round",
                    {"200": {"description": "the download"}},
                    role="table",
                ),
                "parameters": [_query("format", {"type": "string", "enum": ["json", "csv"]}, "json (default) or csv")],
            }
        },
        "/api/tournaments": {
            "post": _operation(
                "a tournament of partner rotation: 4 players a table, this table among the tables",
                {"201": _ok("the tournament")},
                _json_body(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["players", "tables"],
                        "properties": {
                            "players": {
                                "type": "array",
                                "items": {"type": "string", "minLength": 1, "maxLength": MAX_NAME},
                                "minItems": SEATS,
                                "maxItems": SEATS * MAX_TABLES,
                            },
                            "tables": {
                                "type": "array",
                                "items": {"type": "string"},
                                "minItems": 1,
                                "maxItems": MAX_TABLES,
                            },
                        },
                    }
                ),
                role="table",
            ),
        },
        "/api/tournament/rounds": {
            "post": _operation(
                "this table's next round of the tournament, scored: each of its four players' points",
                {"201": _ok("the tournament")},
                _json_body(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["number", "points"],
                        "properties": {
                            "number": {"type": "integer", "minimum": 1},
                            "points": {
                                "type": "object",
                                "additionalProperties": {
                                    "type": "integer",
                                    "minimum": -MAX_POINTS,
                                    "maximum": MAX_POINTS,
                                },
                            },
                        },
                    }
                ),
                role="table",
            )
        },
        "/api/tournament/rounds/{number}": {
            "put": {
                **_operation(
                    "this table's round corrected: a new version of it, which every table of the tournament takes",
                    {"200": _ok("the tournament")},
                    _json_body(
                        {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["points"],
                            "properties": {"points": {"type": "object", "additionalProperties": {"type": "integer"}}},
                        }
                    ),
                    role="table",
                ),
                "parameters": [_ROUND_NUMBER],
            },
            "delete": {
                **_operation(
                    "this table's round taken back, to be scored again, at every table of the tournament",
                    {"200": _ok("the tournament")},
                    role="table",
                ),
                "parameters": [_ROUND_NUMBER],
            },
        },
        "/api/tournament/code": {
            "get": _operation(
                "the current tournament's join code (its key), for another table's admin to type in",
                {
                    "200": _ok(
                        "the code, or null", {"type": "object", "properties": {"code": {"type": ["string", "null"]}}}
                    )
                },
                role="admin",
            )
        },
        "/api/tournaments/join": {
            "post": _operation(
                "join another table's tournament with its code: it becomes this table's current tournament",
                {"200": _ok("the tournament, or null and its id under awaiting until its setup comes")},
                _json_body(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["code"],
                        "properties": {"code": {"type": "string", "minLength": 1, "maxLength": 64}},
                    }
                ),
                role="admin",
            )
        },
        "/api/history/games": {
            "get": {
                **_operation("ended games, newest first, a page at a time", {"200": _ok("a page of game summaries")}),
                "parameters": [
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}, "games per page (20)"),
                    _query("before", _GAME_ID, "only games older than this one: the last page's next_before"),
                ],
            }
        },
        "/api/history/games/{id}": {
            "get": {
                **_operation("an ended game: its rules, rounds and final scores", {"200": _ok("the game")}),
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
            }
        },
        "/api/history/players": {
            "get": _operation("the players known across games, the last seen first", {"200": _ok("the players")})
        },
        "/api/history/leaderboard": {
            "get": {
                **_operation("the players ranked over a period, in one mode or all", {"200": _ok("the ranking")}),
                "parameters": [
                    _query("period", {"enum": ["evening", "month", "all"]}, "this evening, this month, all time"),
                    _query(
                        "mode",
                        {"enum": ["winner_collects", "lowest_total", "elimination", "knock_out", "chips"]},
                        "one scoring mode (default: all)",
                    ),
                ],
            }
        },
        "/api/history/export": {
            "get": {
                **_operation(
                    "every game, or one, as a download: CSV (a row per player per round) or JSON",
                    {
                        "200": {
                            "description": "the export, streamed as it is made",
                            "content": {"text/csv": {}, "application/json": {}},
                        }
                    },
                    role="table",
                ),
                "parameters": [
                    _query("format", {"enum": ["csv", "json"]}, "csv (default) or json"),
                    _query("game", _GAME_ID, "only this game"),
                ],
            }
        },
        "/api/openapi.json": {"get": _operation("this document", {"200": _ok("OpenAPI 3.1")})},
    },
    "components": {
        "securitySchemes": {"session": {"type": "apiKey", "in": "cookie", "name": "uno_session"}},
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error"],
                "properties": {
                    "error": {
                        "type": "object",
                        "required": ["code", "message"],
                        "properties": {
                            "code": {"type": "string"},
                            "message": {"type": "string"},
                            "tries_left": {"type": "integer", "description": "wrong_pin: tries before a wait"},
                            "retry_after_s": {
                                "type": "integer",
                                "description": "seconds before the next PIN try, or before a stream is tried again",
                            },
                            "field": {
                                "type": "string",
                                "description": "bad_text: where in the body; bad_contribution: the field refused; "
                                "bad_query: the query parameter refused",
                            },
                            "owed": {"type": "string", "description": "attacks_open: who still owes what"},
                            "asked": {
                                "type": ["string", "null"],
                                "description": "not_your_press: the player the table asks to press",
                            },
                            # A refusal a player can meet: its reason and parameters, which the page words in the
                            # reader's language (docs/API.md, "Refusals in the player's language").
                            "reason": {"type": "string", "description": "the refusal, by a stable name"},
                            "player": {"type": "string", "description": "the player the refusal is about"},
                            "card": {"type": ["string", "null"], "description": "owes: the card that asked"},
                            "presses": {"type": "integer", "description": "owes: presses still owed"},
                            "cards": {"type": "integer", "description": "owes: cards still owed"},
                            "until_fire": {"type": "boolean", "description": "owes: until the launcher fires"},
                            "started": {"type": "boolean", "description": "owes: the player has begun"},
                            "max": {
                                "type": "integer",
                                "description": "name_too_long: the most characters; contributions_full: the most "
                                "contributions a shuffle takes",
                            },
                            "first": {"type": "string", "description": "names_differ: the first name"},
                            "second": {"type": "string", "description": "names_differ: the name like it"},
                            "count": {"type": "integer", "description": "player_count: the players given"},
                            "low": {"type": "integer", "description": "player_count: the fewest the game takes"},
                            "high": {"type": "integer", "description": "player_count: the most the game takes"},
                            "shuffle": {
                                "type": "integer",
                                "description": "a contribution's refusal: the shuffle it was sent for",
                            },
                            "playing": {"type": "integer", "description": "shuffle_over: the shuffle in play"},
                            "held": {
                                "type": "array",
                                "items": {"type": "array", "minItems": 2, "maxItems": 2},
                                "description": "over_deck: who holds how many of the card, [[player, count], ...]",
                            },
                            "onto": {"type": "string", "description": "stack_mismatch: the attack's cause"},
                            "players": {
                                "type": "array",
                                "items": {"type": "string"},
                                "description": "hand_missing: the players still in the game with no hand",
                            },
                            "side": {"type": "string", "description": "eliminated: the player or team out"},
                            "round": {"type": "integer", "description": "eliminated: the round it went out in"},
                        },
                    }
                },
            },
            "GameAnswer": {
                "type": "object",
                "required": ["game"],
                "properties": {"game": {"type": ["object", "null"]}},
            },
        },
    },
}


def _shape(path: str) -> str:
    """A path with its parameters unnamed: Flask's `<int:index>` and the spec's `{index}` alike."""
    return re.sub(r"<[^<>]+>|\{[^{}]+\}", "{}", path)


def _describe_writes(spec: dict[str, Any]) -> None:
    """Each write's budget as its view declares it (webui/access.py), read from the routes the app serves."""
    from webui import BLUEPRINTS  # the views, not an app's parts: a bare app maps the routes to them

    app = Flask(__name__)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    views = {
        (_shape(rule.rule), method.lower()): app.view_functions[rule.endpoint]
        for rule in app.url_map.iter_rules()
        for method in rule.methods or ()
    }
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            view = views.get((_shape(path), method))
            budget = getattr(view, "budget", None)
            if budget is not None:
                operation["x-budget"] = budget.value
                operation["responses"]["429"] = _OVER_BUDGET
                if budget.grows_store:
                    operation["responses"]["409"] = _STORE_FULL
            why = getattr(view, "unbudgeted", None)
            if why is not None:
                operation["x-unbudgeted"] = why


_describe_writes(SPEC)
