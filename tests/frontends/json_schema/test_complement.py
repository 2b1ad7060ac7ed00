"""not and if/then/else through json_complement: every value a "not S" grammar accepts fails S
(jsonschema as judge), and values that fail S are accepted (the complement is exact where its
parts are); refusals for what is not built."""

from __future__ import annotations

import itertools
import json

import pytest

import grammar_decode as gd
from helpers import REFERENCE_VOCABS, assert_language, assert_masks_equal_reference, require

SIMPLE = [
    {"type": "string"}, {"type": ["string", "null"]}, {"enum": ["a", "b", None]}, {"const": True},
    {"minLength": 2}, {"maxLength": 1}, {"pattern": "^x"}, {"minimum": 3}, {"exclusiveMaximum": 0},
    {"required": ["a"]}, {"properties": {"a": {"type": "string"}}}, {"items": {"type": "string"}},
    {"minItems": 2}, {"maxProperties": 1}, {"not": {"type": "null"}}, {"type": "string", "maxLength": 2},
    {"properties": {"k": {"const": "us"}}, "required": ["k"]}, {"enum": ["a"], "type": "string"}, {}, True, False,
    {"type": "integer"}, {"enum": [0, 2.5, "a", True]}, {"const": -2}, {"type": "number", "maximum": 5},
    # anyOf: a conjunction of the branches' complements
    {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 3}]}, {"anyOf": [{"required": ["a"]}, {"minItems": 2}]},
    {"anyOf": [{"maxLength": 1}, {"const": "xy"}, {"type": "null"}]}, {"anyOf": [{}, {"type": "null"}]},
    # oneOf: no branch holds, or two do
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]}, {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"oneOf": [{"type": "string"}, {"maxLength": 1}, {"const": "xy"}]},
]
VALUES = [None, True, False, 0, 5, -2, 2.5, 1.0, 1.5, -0.0, 0.1, "", "a", "xy", "abc", "\u00e9", [], ["a"], [1, "b"], ["a", "b", "c"], {},
          {"a": 1}, {"a": "s"}, {"k": "us"}, {"k": "uk"}, {"a": 1, "b": 2}, {"a": {}}, {"a": {"x": 1}}, {"a": {"y": 1}},
          {"k": {"x": 1}}, {"k": {"y": 1}}, {"k": {}}, {"a": {}, "b": 1}, {"t": "a"}, {"t": "b"}, {"t": "a", "x": 1},
          {"t": "b", "x": 1}, {"t": "c"}]


@pytest.mark.parametrize("index", range(len(SIMPLE)))
def test_not_accepts_exactly_the_values_that_fail(index: int) -> None:
    jsonschema = require("jsonschema")
    inner = SIMPLE[index]
    try:
        grammar = gd.compile_json_schema({"not": inner})
    except gd.UnsupportedSchemaError:
        return  # refused: nothing to be wrong about (test_most_compile keeps this honest)
    except gd.SchemaError as exc:
        assert "admits no document" in str(exc)
        assert all(jsonschema.Draft202012Validator(inner).is_valid(v) for v in VALUES)
        return
    for value in VALUES:
        fails = not jsonschema.Draft202012Validator(inner).is_valid(value)
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == fails, (inner, value)


@pytest.mark.parametrize("condition,then,otherwise", [
    (a, b, c) for a, b, c in itertools.islice(itertools.product(SIMPLE[:12], SIMPLE[4:8], SIMPLE[8:12]), 0, None, 23)])
def test_if_then_else_is_judged_like_jsonschema(condition: object, then: object, otherwise: object) -> None:
    jsonschema = require("jsonschema")
    schema = {"if": condition, "then": then, "else": otherwise}
    try:
        grammar = gd.compile_json_schema(schema)
    except gd.UnsupportedSchemaError:
        return
    except gd.SchemaError as exc:
        assert "admits no document" in str(exc)
        return
    validator = jsonschema.Draft202012Validator(schema)
    for value in VALUES:
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == validator.is_valid(value), (schema, value)


# the siblings of a "not" (or of an "if", or the other oneOf branch) name every key an object may
# hold: then the objects that fail additionalProperties are those holding one of the other keys
WITHIN = [
    {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False,
     "not": {"properties": {"a": {}}, "additionalProperties": False}},
    {"properties": {"a": {}, "b": {"type": "integer"}, "k": {}}, "additionalProperties": False,
     "not": {"properties": {"a": {}}, "additionalProperties": {"type": "string"}}},
    {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False,
     "if": {"properties": {"a": {}}, "additionalProperties": False}, "then": {"required": ["a"]},
     "else": {"required": ["b"]}},
    {"oneOf": [{"type": "object", "additionalProperties": False, "properties": {"a": {"type": "integer"}}},
               {"type": "object", "additionalProperties": False, "properties": {"b": {}}}, {"type": "string"}]},
    {"oneOf": [{"additionalProperties": False, "properties": {"a": {}, "b": {}}},
               {"anyOf": [{"additionalProperties": False, "properties": {"a": {}}},
                          {"additionalProperties": False, "properties": {"k": {}}}]}]},
    # closed branches without a type (non-objects pass all of them); a nested closed object
    {"oneOf": [{"properties": {"a": {"properties": {"x": {}}, "additionalProperties": False}},
                "additionalProperties": False},
               {"properties": {"b": {}}, "additionalProperties": False}]},
    {"type": "object", "properties": {"k": {"type": "object", "properties": {"x": {}, "y": {}},
                                            "additionalProperties": False}}, "additionalProperties": False,
     "not": {"properties": {"k": {"properties": {"x": {}}, "additionalProperties": False}, "z": {}}}},
    # branches that say nothing of non-objects: every string passes both, so no string passes
    # the oneOf, and among objects the discriminator proves them apart
    {"oneOf": [{"properties": {"t": {"const": "a"}, "x": {}}, "required": ["t"], "additionalProperties": False},
               {"properties": {"t": {"const": "b"}}, "required": ["t"], "additionalProperties": False}]},
    {"oneOf": [{"minLength": 2}, {"properties": {"a": {}}}, {"type": "integer"}]},
    # unevaluatedProperties where only the schema's own properties evaluate keys
    {"oneOf": [{"type": "object", "properties": {"a": {}, "b": {}}, "unevaluatedProperties": False,
                "oneOf": [{"required": ["a"]}, {"required": ["b"], "not": {"required": ["a"]}}]},
               {"type": "object", "properties": {"k": {}}, "required": ["k"], "unevaluatedProperties": False}]},
    {"properties": {"a": {}}, "not": {"type": "null"}, "unevaluatedProperties": False},
    # two closed sides of an allOf: the merged names
    {"allOf": [{"properties": {"a": {}, "b": {}}, "additionalProperties": False},
               {"properties": {"a": {}, "b": {}, "c": {}}, "additionalProperties": False}],
     "not": {"properties": {"b": {}}, "additionalProperties": False}},
]


@pytest.mark.parametrize("schema", WITHIN)
def test_additional_properties_fail_within_what_names_every_key(schema: dict) -> None:
    jsonschema = require("jsonschema")
    grammar = gd.compile_json_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    accepted = 0
    for value in VALUES:
        valid = validator.is_valid(value)
        accepted += valid
        assert grammar.accepts(json.dumps(value, separators=(",", ":"))) == valid, (schema, value)
    assert 0 < accepted < len(VALUES)


@pytest.mark.parametrize("schema", [
    {"not": {"properties": {"a": {}}, "additionalProperties": False}},  # siblings name no keys
    # a branch that admits everything names no keys (objects with any keys pass it)
    {"oneOf": [True, {"properties": {"a": {}}, "additionalProperties": False}]},
    {"properties": {"b": {}}, "patternProperties": {"^x": {}}, "additionalProperties": False,
     "not": {"properties": {"a": {}}, "additionalProperties": False}},
    {"properties": {"b": {}}, "additionalProperties": False,
     "not": {"properties": {"a": {}}, "patternProperties": {"^c": {}}, "additionalProperties": False}},
])
def test_additional_properties_are_refused_where_the_keys_are_not_known(schema: dict) -> None:
    with pytest.raises(gd.UnsupportedSchemaError, match="Properties"):
        gd.compile_json_schema(schema)


def test_most_compile() -> None:
    """The two tests above are not vacuous: nearly every simple schema has its complement built."""
    built = 0
    for inner in SIMPLE:
        try:
            gd.compile_json_schema({"not": inner})
            built += 1
        except gd.UnsupportedSchemaError:
            pass
        except gd.SchemaError:
            built += 1
    assert built >= len(SIMPLE) - 2


def test_escaped_spellings_of_excluded_strings_are_excluded() -> None:
    assert_language({"type": "string", "not": {"enum": ["ab", "é"]}}, ['"a"', '"abc"', '"e"'],
                    ['"ab"', '"a\\u0062"', '"\\u00e9"', '"é"', '"\\u00E9"'])


def test_a_discriminator_picks_the_branch() -> None:
    schema = {"type": "object", "properties": {"country": {"enum": ["us", "uk"]}}, "required": ["country"],
              "if": {"properties": {"country": {"const": "us"}}},
              "then": {"properties": {"postal": {"pattern": "^[0-9]{5}$"}}},
              "else": {"properties": {"postal": {"maxLength": 8}}}}
    assert_language(schema, ['{"country":"us","postal":"12345"}', '{"country":"uk","postal":"SW1A 1AA"}'],
                    ['{"country":"us","postal":"SW1A"}', '{"country":"uk","postal":"123456789"}'])


@pytest.mark.parametrize("schema,keyword", [
    ({"not": {"enum": [[1], 2]}}, "not"),
    ({"not": {"const": {"a": 1}}}, "not"),
    ({"not": {"format": "date"}}, "not"),
    ({"if": {"multipleOf": 2}, "then": {"minimum": 0}}, "if"),
    ({"not": {"anyOf": [{"type": "integer", "minimum": i} for i in range(6)]}}, "not"),  # 3**6 conjunctions
    ({"not": {"anyOf": [{"type": "null"}, {"uniqueItems": True}]}}, "not"),
    ({"properties": {"a": {}}, "allOf": [{"properties": {"b": {}}}], "not": {"type": "null"},
      "unevaluatedProperties": False}, "unevaluatedProperties"),
])
def test_what_cannot_be_built_is_refused(schema: dict, keyword: str) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == keyword


MASK_CASES = [
    # strings outside an enum (every spelling subtracted) and strings a pattern does not find
    ({"type": "string", "not": {"enum": ["ab", "abc"]}}, ['"', '"a', '"ab', '"a\\u0062', '"abc']),
    ({"type": "string", "not": {"pattern": "^x"}}, ['"', '"\\u00', '"y']),
    # if/then/else over a discriminator, and a oneOf proved disjoint
    ({"type": "object", "properties": {"k": {"enum": ["us", "uk"]}}, "required": ["k"],
      "if": {"properties": {"k": {"const": "us"}}}, "then": {"properties": {"zip": {"type": "integer"}}},
      "else": {"properties": {"zip": {"type": "string"}}}}, ['{"k":"us","zip":', '{"k":"uk","zip":', '{"k":"u']),
    ({"oneOf": [{"type": "integer", "maximum": 9}, {"type": "string", "maxLength": 2}]}, ["", "1", '"a']),
    ({"not": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 3}]}},
     ["", '"ab', '"abc', "2", "3", "-"]),
    # oneOf of overlapping branches: each conjoined with the others' complements
    ({"oneOf": [{"type": "integer"}, {"minimum": 2}]}, ["", "1", "2", "2.", "-", "3.5"]),
    ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}, {"type": "string", "minLength": 2}]},
     ["", "{", '{"a":1', '{"a":1,', '{"b":', '{"a":1,"c"']),
    # closed objects in a oneOf: "{}" passes both, so a key must be written; not of a oneOf
    ({"oneOf": [{"type": "object", "additionalProperties": False, "properties": {"ps": {"type": "string"}}},
                {"type": "object", "additionalProperties": False, "properties": {"sh": {"type": "string"}}}]},
     ["", "{", '{"ps":"x"', '{"sh":"x"']),
    ({"not": {"oneOf": [{"type": "integer"}, {"minimum": 2}]}}, ["", "1", "2", "1.", "-", "3", "1.9"]),
    # numbers outside an enum, and numbers with a fraction
    ({"type": "number", "not": {"enum": [1, 2.5]}}, ["", "1", "1.", "1.0", "2.5", "2.50", "-"]),
    ({"type": "number", "not": {"type": "integer"}, "maximum": 100}, ["", "1", "1.", "1.0", "99.9", "0.00000000000"]),
]


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
@pytest.mark.parametrize("schema,prefixes", MASK_CASES)
def test_masks_equal_the_reference(request, vocab_name: str, schema: dict, prefixes: list[str]) -> None:
    assert_masks_equal_reference(schema, request.getfixturevalue(vocab_name), prefixes)
