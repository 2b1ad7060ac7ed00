"""oneOf compiled as anyOf where its branches are proved disjoint (json_disjoint): exact languages,
refusals, and the proofs checked against jsonschema on many values."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from conftest import assert_language, assert_random_documents_validate, require
from grammar_decode.frontends.json_disjoint import disjoint

CAT = {"type": "object", "properties": {"kind": {"const": "cat"}, "lives": {"type": "integer"}},
       "required": ["kind"]}
DOG = {"type": "object", "properties": {"kind": {"enum": ["dog", "wolf"]}, "bark": {"type": "string"}},
       "required": ["kind", "bark"]}

ONE_OF = [  # schema, accepted, rejected
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, ['"a"', "1"], ["true", "1.5"]),
    ({"oneOf": [{"type": "integer", "maximum": 0}, {"type": "integer", "minimum": 1}]}, ["0", "1", "-5"], ["1.5"]),
    ({"$defs": {"cat": CAT, "dog": DOG}, "oneOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}],
      "discriminator": {"propertyName": "kind"}},
     ['{"kind":"cat","lives":9}', '{"kind":"wolf","bark":"woo"}'], ['{"kind":"dog"}', '{"kind":"cow","bark":""}']),
    ({"type": "object", "oneOf": [{"required": ["a"], "properties": {"b": False}},
                                  {"required": ["b"], "properties": {"a": False}}]},
     ['{"a":1}', '{"b":1}'], ["{}", '{"a":1,"b":2}']),
    ({"oneOf": [{"enum": [1, "x"]}, {"const": 2}, {"type": "string", "maxLength": 0}]}, ["1", '"x"', "2", '""'],
     ["3", '"y"']),
    ({"oneOf": [{"type": "array", "maxItems": 1}, {"type": "array", "minItems": 2, "items": {"type": "null"}}]},
     ["[]", "[1]", "[null,null]"], ["[1,2]"]),
]


@pytest.mark.parametrize("schema,accepted,rejected", ONE_OF)
def test_exact_languages(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)
    jsonschema = require("jsonschema")
    validator = jsonschema.Draft202012Validator(schema)
    assert all(validator.is_valid(json.loads(t)) for t in accepted)
    assert not any(validator.is_valid(json.loads(t)) for t in rejected)


REFUSED = [
    {"oneOf": [{"type": "number"}, {"type": "integer"}]},
    {"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}]},
    {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},  # {"a":1,"b":1} passes both
    {"oneOf": [{"type": "integer", "minimum": 0}, {"type": "integer", "maximum": 0}]},
    {"oneOf": [{}, {"type": "null"}]},
    {"anyOf": [{"type": "null"}], "oneOf": [{"type": "string"}]},
]


@pytest.mark.parametrize("schema", REFUSED)
def test_overlapping_branches_are_refused(schema: dict) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == "oneOf"


# A small universe of values and schemas: every pair the proof calls disjoint must share no value.
VALUES = [None, True, False, 0, 1, -3, 2.5, 7, "", "a", "abc", [], [1], [None, None], {}, {"kind": "cat"},
          {"kind": "dog", "bark": "x"}, {"a": 1}, {"b": 1}, {"a": 1, "b": 1}, {"kind": "cat", "bark": ""}]
SCHEMAS = [
    True, False, {}, {"type": "integer"}, {"type": "number"}, {"type": ["string", "null"]}, {"const": 1},
    {"enum": [1, "a", None]}, {"type": "integer", "minimum": 1}, {"type": "integer", "maximum": 0},
    {"type": "string", "maxLength": 1}, {"type": "string", "minLength": 2}, {"type": "array", "maxItems": 1},
    {"type": "array", "minItems": 2}, {"required": ["a"]}, {"required": ["b"], "properties": {"a": False}},
    CAT, DOG, {"anyOf": [{"type": "null"}, {"const": 7}]}, {"allOf": [{"type": "integer"}, {"minimum": 5}]},
    {"type": "object", "additionalProperties": False, "properties": {"kind": {}}},
]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(range(len(SCHEMAS)), 2)))
def test_proofs_never_claim_a_shared_value_away(a: int, b: int) -> None:
    jsonschema = require("jsonschema")
    first, second = SCHEMAS[a], SCHEMAS[b]
    if not disjoint(first, second, _no_refs, ""):
        return
    for value in VALUES:
        both = jsonschema.Draft202012Validator(first).is_valid(value) and \
            jsonschema.Draft202012Validator(second).is_valid(value)
        assert not both, (first, second, value)


def _no_refs(holder: dict, pointer: str) -> object:
    raise AssertionError("no references here")


def test_proofs_are_not_vacuous() -> None:
    """The proofs say yes where they should (else everything above passes by refusing)."""
    proved = sum(disjoint(a, b, _no_refs, "") for a, b in itertools.combinations(SCHEMAS, 2))
    assert proved >= 80


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.integers(-5, 5), st.text(alphabet="ab", max_size=2), st.none(), st.booleans()),
                min_size=1, max_size=4, unique_by=lambda v: (type(v), v)))
def test_enum_branches_apart_or_refused(values: list) -> None:
    """Branches that are single consts: compiled exactly when no two are JSON-equal."""
    schema = {"oneOf": [{"const": v} for v in values]}
    equal_pair = any(v == w and isinstance(v, bool) == isinstance(w, bool)
                     for v, w in itertools.combinations(values, 2))
    if equal_pair:
        with pytest.raises(gd.UnsupportedSchemaError):
            gd.compile_json_schema(schema)
        return
    grammar = gd.compile_json_schema(schema)
    for v in values:
        assert grammar.accepts(json.dumps(v))


def test_random_logits_documents_validate(gpt2: gd.Vocabulary) -> None:
    schema = {"$defs": {"cat": CAT, "dog": DOG}, "type": "array", "maxItems": 3,
              "items": {"oneOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}, {"type": "null"}]}}
    assert_random_documents_validate(schema, gpt2, seeds=6, max_tokens=120)
