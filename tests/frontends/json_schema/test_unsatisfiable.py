"""Every "the schema admits no document" is checked: for the schemas called unsatisfiable here, no
value drawn from their parts validates the whole (``jsonschema`` judges), and schemas once wrongly
called unsatisfiable compile and keep the values that satisfy them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from helpers import require

jsonschema = require("jsonschema")
hypothesis_jsonschema = require("hypothesis_jsonschema")

_AB_NOT_FOO = {"not": {"type": "object", "required": ["bar"],
                       "properties": {"bar": {"enum": ["bar"]}, "foo": {"enum": ["foo"]}}}}

#: Schemas the compiler calls unsatisfiable, with the draft they are read under.
UNSATISFIABLE: list[tuple[dict[str, Any], str | None]] = [
    ({"allOf": [{"type": "string"}, {"type": "integer"}]}, None),
    ({"allOf": [{"anyOf": [{"type": "null"}]}, {"anyOf": [{"type": "string"}]}]}, None),
    ({"enum": [1, "a"], "type": "boolean"}, None),
    ({"allOf": [{"enum": [{"bar": "bar", "foo": "foo"}]}, _AB_NOT_FOO]}, None),
    ({"const": {"a": 1, "b": 2}, "properties": {"b": {"maximum": 1}}}, None),
    ({"type": "string", "minLength": 3, "maxLength": 2}, None),
    ({"type": "string", "pattern": "^a+$", "maxLength": 0}, None),
    ({"type": "integer", "minimum": 1.5, "maximum": 1.9}, None),
    ({"type": "number", "multipleOf": 2, "minimum": 3, "maximum": 3.5}, None),
    ({"oneOf": [{"const": 1}, {"const": 1}]}, None),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}], "type": "integer", "minimum": 0}, None),
    ({"if": {"type": "string"}, "then": False, "else": False}, None),
    ({"not": {}}, None),
    ({"not": {"const": 1}}, "4"),  # no const in draft 4: not {} rejects everything
    ({"type": "object", "required": ["a"], "properties": {"a": False}}, None),
    ({"type": "array", "minItems": 1, "items": False}, None),
    ({"allOf": [{"if": {"required": ["k"]}, "then": {"type": "null"}}, {"type": "object", "required": ["k"]}]}, None),
]

#: Schemas that once got "admits no document" though a value satisfies them: the value.
SATISFIABLE: list[tuple[dict[str, Any], Any]] = [
    ({"allOf": [{"enum": [{"bar": "bar", "foo": "foot"}]}, _AB_NOT_FOO]}, {"bar": "bar", "foo": "foot"}),
    ({"enum": [{"foo": 1, "bar": 2}], "not": {"not": {"oneOf": [{"required": ["foo", "bar"]},
                                                                 {"required": ["foo", "baz"]}]}}},
     {"foo": 1, "bar": 2}),
    ({"enum": [{"b": 1, "a": 2}], "properties": {"a": {"const": 2}, "b": {}}}, {"b": 1, "a": 2}),
]


def _parts(schema: Any) -> list[Any]:
    """Schemas whose values are candidates: each conjunct, and each keyword of the schema on its
    own (beside ``type``), so that every part is satisfiable when its keyword is."""
    if not isinstance(schema, dict):
        return []
    out: list[Any] = []
    for branch in schema.get("allOf", []):
        out.append(branch)
        out.extend(_parts(branch))
    typed = {"type": schema["type"]} if "type" in schema else {}
    for keyword, value in schema.items():
        if keyword not in ("allOf", "not", "oneOf", "anyOf", "if", "then", "else", "type"):
            out.append({**typed, keyword: value})
    if typed:
        out.append(typed)
    for keyword in ("oneOf", "anyOf"):
        out.extend(schema.get(keyword, []))
    for keyword in ("then", "else"):
        if isinstance(schema.get(keyword), dict):
            out.append(schema[keyword])
    return out


def _values(schema: Any) -> st.SearchStrategy[Any]:
    """Values from the schema's parts, and any JSON value besides (so no schema draws nothing)."""
    strategies = [hypothesis_jsonschema.from_schema({})]
    for part in _parts(schema):
        try:
            strategies.append(hypothesis_jsonschema.from_schema(part))
        except Exception:  # a part hypothesis-jsonschema cannot draw from: its values come from elsewhere
            continue
    if isinstance(schema, dict) and "enum" in schema:
        strategies.append(st.sampled_from(schema["enum"]))
    return st.one_of(*strategies)


@pytest.mark.parametrize("index", range(len(UNSATISFIABLE)))
def test_the_compiler_calls_it_unsatisfiable(index: int) -> None:
    schema, draft = UNSATISFIABLE[index]
    with pytest.raises(gd.SchemaError, match="admits no document"):
        gd.compile_json_schema(schema, draft=draft)


@pytest.mark.parametrize("index", range(len(UNSATISFIABLE)))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_no_value_of_its_parts_validates_the_whole(index: int, data: st.DataObject) -> None:
    schema, draft = UNSATISFIABLE[index]
    validator = {"4": jsonschema.Draft4Validator}.get(draft or "", jsonschema.Draft202012Validator)(schema)
    value = data.draw(_values(schema))
    assert not validator.is_valid(value), json.dumps(value)


@pytest.mark.parametrize("schema,value", SATISFIABLE)
def test_once_wrongly_called_unsatisfiable(schema: dict, value: Any) -> None:
    assert jsonschema.Draft202012Validator(schema).is_valid(value)
    grammar = gd.compile_json_schema(schema)
    assert grammar.accepts(json.dumps(value, separators=(",", ":")))
