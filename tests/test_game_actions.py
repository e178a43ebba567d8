"""The registry of declarations is the one list: the tables' plays, the request checks, the OpenAPI description and
the rules every phone receives all agree with it."""

import inspect

import pytest

from launcher.game import GameError, Mode, Ruleset
from launcher.game.attacks import ClassicTable, Table, UnoAttackTable
from launcher.table.game_actions import ACTIONS, BY_KIND, kinds, mode_kinds
from launcher.table.game_requests import declaration
from launcher.table.game_view import rules
from webui.openapi import SPEC

TABLES = {Ruleset.UNO_ATTACK: UnoAttackTable, Ruleset.CLASSIC: ClassicTable}


@pytest.mark.parametrize("action", ACTIONS, ids=lambda action: action.kind)
def test_each_action_calls_a_method_of_the_tables_of_its_rulesets_only(action):
    for ruleset, table in TABLES.items():
        method = getattr(table, action.method, None)
        if ruleset not in action.rulesets:
            assert method is None or hasattr(Table, action.method), (action.kind, ruleset)
            continue
        assert method is not None, (action.kind, ruleset)
        parameters = list(inspect.signature(method).parameters.values())[1:]
        assert len(parameters) == len(action.fields), action.kind  # the fields are its arguments, in order
        for parameter, field in zip(parameters, action.fields, strict=True):
            assert (parameter.default is inspect.Parameter.empty) == field.required, (action.kind, field.name)


def test_the_api_describes_exactly_the_registrys_kinds_and_fields():
    body = SPEC["paths"]["/api/attacks"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body["properties"]["kind"]["enum"] == [action.kind for action in ACTIONS]
    assert set(body["properties"]) == {"kind"} | {f.name for action in ACTIONS for f in action.fields}
    assert body["additionalProperties"] is False


def test_the_page_receives_the_registry_and_the_kinds_made_from_it():
    offered = rules()
    assert [action["kind"] for action in offered["actions"]] == [action.kind for action in ACTIONS]
    challenge = next(action for action in offered["actions"] if action["kind"] == "challenge")
    assert challenge["fields"]["legal"] == {"required": True, "page": "preset", "type": "boolean"}
    assert [(b["id"], b["preset"]) for b in challenge["buttons"]] == [
        ("challenge", {"legal": True}),
        ("challenge_illegal", {"legal": False}),
    ]
    assert offered["declarations"]["uno_attack"] == list(kinds(Ruleset.UNO_ATTACK))
    assert "hit2" in offered["declarations"]["uno_attack"] and "hit2" not in offered["declarations"]["classic"]
    assert (
        offered["mode_declarations"]
        == {"knock_out": ["went_out"]}
        == {m.value: list(k) for m, k in mode_kinds().items()}
    )


def test_a_declaration_is_checked_against_its_ruleset_mode_and_fields():
    assert declaration({"kind": "hit2", "by": "Ann"}, Ruleset.UNO_ATTACK, Mode.LOWEST_TOTAL) is BY_KIND["hit2"]
    with pytest.raises(GameError, match="kind = 'hit2' is not accepted in classic; expected one of played,"):
        declaration({"kind": "hit2", "by": "Ann"}, Ruleset.CLASSIC, Mode.LOWEST_TOTAL)
    with pytest.raises(GameError, match="only in knock-out play; this game is scored lowest total"):
        declaration({"kind": "went_out", "player": "Ann"}, Ruleset.CLASSIC, Mode.LOWEST_TOTAL)
    assert declaration({"kind": "went_out", "player": "Ann"}, Ruleset.CLASSIC, Mode.KNOCK_OUT).kind == "went_out"
