"""oneOf compiled as anyOf: branches proved disjoint (disjoint) as they are, overlapping ones
conjoined with the complements of the others. Exact languages, refusals, the proofs and the
compiled grammars checked against jsonschema on many values."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from helpers import assert_language, assert_random_documents_validate, require
from grammar_decode.frontends.json_schema.disjoint import disjoint

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
    # overlapping branches: exactly one holds
    ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, ["1.5"], ["1", "0", '"a"']),
    ({"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}]}, ['"abcd"'], ['"abc"', '""', "1"]),
    ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, ['{"a":1}', '{"b":1}', '{"b":1,"c":2}'],
     ['{"a":1,"b":1}', "{}", "1", "[]"]),
    ({"oneOf": [{"type": "integer", "minimum": 0}, {"type": "integer", "maximum": 0}]}, ["1", "-1", "7"],
     ["0", "1.5"]),
    ({"oneOf": [{}, {"type": "null"}]}, ["1", '"x"', "{}"], ["null"]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, ["1", "-3", "2.5"], ["2", "3", "1.5"]),
    ({"type": "string", "oneOf": [{"minLength": 2}, {"maxLength": 4}]}, ['"a"', '"abcde"'], ['"ab"', '"abcd"']),
    ({"oneOf": [{"properties": {"bar": {"type": "integer"}}, "required": ["bar"]},
                {"properties": {"foo": {"type": "string"}}, "required": ["foo"]}]},
     ['{"bar":1}', '{"foo":"x"}', '{"foo":"y","bar":"x"}', '{"bar":1,"foo":2}'], ['{"bar":1,"foo":"x"}', "{}"]),
    ({"oneOf": [{"enum": [1, 2, 3]}, {"enum": [3, 4]}, {"const": "a"}]}, ["1", "2", "4", '"a"'], ["3", "5"]),
    # a branch every value of another passes leaves that one empty
    ({"oneOf": [{"type": "integer"}, {"type": "integer"}, {"type": "string"}]}, ['"a"'], ["1"]),
]


@pytest.mark.parametrize("schema,accepted,rejected", ONE_OF)
def test_exact_languages(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)
    jsonschema = require("jsonschema")
    validator = jsonschema.Draft202012Validator(schema)
    assert all(validator.is_valid(json.loads(t)) for t in accepted)
    assert not any(validator.is_valid(json.loads(t)) for t in rejected)


REFUSED = [
    # one branch overlaps the other and its complement is not built
    {"oneOf": [{"type": "array", "uniqueItems": True}, {"type": "array", "maxItems": 2}]},
    {"anyOf": [{"type": "null"}], "oneOf": [{"type": "string"}]},
    # 8 overlapping branches, 3 complement schemas each: 8 * 3**7 conjunctions
    {"oneOf": [{"type": "integer", "minimum": i} for i in range(8)]},
]


@pytest.mark.parametrize("schema", REFUSED)
def test_what_cannot_be_made_exclusive_is_refused(schema: dict) -> None:
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
    # a oneOf (like an anyOf) is apart from what each of its branches is apart from
    {"oneOf": [CAT, {"type": "string"}]}, {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
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
                min_size=1, max_size=4))
def test_const_branches_hold_exactly_one(values: list) -> None:
    """Branches that are single consts, repeats included: a value is written exactly when one
    branch holds it (a repeated value is in two branches, so in none of the oneOf)."""
    jsonschema = require("jsonschema")
    schema = {"oneOf": [{"const": v} for v in values]}
    judge = jsonschema.Draft202012Validator(schema)
    if not any(judge.is_valid(v) for v in values):
        with pytest.raises(gd.SchemaError, match="admits no document"):
            gd.compile_json_schema(schema)
        return
    grammar = gd.compile_json_schema(schema)
    for v in values + [0, "b", None, 9]:
        assert grammar.accepts(json.dumps(v)) == judge.is_valid(v), v


@pytest.mark.parametrize("a,b", list(itertools.combinations(range(len(SCHEMAS)), 2)))
def test_one_of_two_is_judged_like_jsonschema(a: int, b: int) -> None:
    """Every pair of the universe's schemas as a oneOf: compiled, refused with a typed error, or
    empty; what is compiled accepts no value that jsonschema rejects and every scalar or array
    it accepts (objects may need another key order)."""
    jsonschema = require("jsonschema")
    schema = {"oneOf": [SCHEMAS[a], SCHEMAS[b]]}
    judge = jsonschema.Draft202012Validator(schema)
    try:
        grammar = gd.compile_json_schema(schema)
    except gd.UnsupportedSchemaError:
        return
    except gd.SchemaError:
        assert not any(judge.is_valid(v) for v in VALUES)
        return
    for value in VALUES:
        accepted = grammar.accepts(json.dumps(value, separators=(",", ":")))
        if accepted:
            assert judge.is_valid(value), (schema, value)
        elif not isinstance(value, dict):
            assert not judge.is_valid(value), (schema, value)


def test_pairs_are_not_vacuous() -> None:
    """The pair test above is not passed by refusing: nearly every pair compiles (207 of 210)."""
    built = 0
    for a, b in itertools.combinations(SCHEMAS, 2):
        try:
            gd.compile_json_schema({"oneOf": [a, b]})
            built += 1
        except gd.UnsupportedSchemaError:
            pass
        except gd.SchemaError:
            built += 1
    assert built >= 200


def test_random_logits_documents_validate(gpt2: gd.Vocabulary) -> None:
    schema = {"$defs": {"cat": CAT, "dog": DOG}, "type": "array", "maxItems": 3,
              "items": {"oneOf": [{"$ref": "#/$defs/cat"}, {"$ref": "#/$defs/dog"}, {"type": "null"}]}}
    assert_random_documents_validate(schema, gpt2, seeds=6, max_tokens=120)


def test_merged_views_are_memoised_per_compile_refusals_included() -> None:
    """``view`` with a ``MemoResolve``: the same merge once per schema object, a refusal raised
    again on every later call (not an error of another type), and a schema object changed after
    its view was taken is merged anew."""
    from grammar_decode.errors import UnsupportedSchemaError
    from grammar_decode.frontends.json_schema.disjoint import view
    from grammar_decode.frontends.json_schema.keywords import MemoResolve

    resolve = MemoResolve(lambda holder, pointer: {"type": "string"})
    refused = {"allOf": [{"prefixItems": [{}], "additionalItems": False}]}
    for _ in range(3):
        with pytest.raises(UnsupportedSchemaError, match="additionalItems"):
            view(refused, resolve, "")
    merged = {"allOf": [{"type": "integer"}, {"minimum": 1}]}
    first = view(merged, resolve, "")
    assert view(merged, resolve, "") is first and first == {"type": "integer", "minimum": 1}
    merged["allOf"] = [{"type": "integer"}, {"minimum": 2}]  # a new value: the memo entry is stale
    assert view(merged, resolve, "")["minimum"] == 2
