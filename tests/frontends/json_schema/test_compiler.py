"""Schema compilation: supported keywords compile; everything else raises, naming keyword and pointer."""

from __future__ import annotations

import json

import pytest

import grammar_decode as gd
from helpers import assert_language

UNSUPPORTED = [
    ({"type": "string", "pattern": "a(?=b)"}, "pattern", ""),
    ({"type": "string", "pattern": "\\p{Letter}"}, "pattern", ""),
    ({"type": "integer", "divisibleBy": 2}, "divisibleBy", ""),  # draft 3's
    ({"type": "array", "contains": {"const": [1]}, "maxContains": 1}, "maxContains", ""),
    ({"type": "object", "properties": {"a": {"if": {"format": "date"}, "then": {"minLength": 1}}}, "required": ["a"]},
     "if", "/properties/a"),
    ({"type": "integer", "multipleOf": 0.01}, "multipleOf", ""),
    ({"type": "integer", "multipleOf": 13}, "multipleOf", ""),
    ({"type": "array", "items": {"type": "object", "properties": {"x/y": {"$ref": "https://x.org/s"}}}}, "$ref",
     "/items/properties/x~1y"),
    ({"type": "object", "properties": {"x": {"dependentSchemas": {k: {"required": ["z"]} for k in "abcde"}}}},
     "dependentSchemas", "/properties/x"),
    ({"type": "object", "minProperties": 3, "properties": {"a": {}}}, "minProperties", ""),
    ({"type": "array", "items": {"type": "string", "maxLength": 4}, "uniqueItems": True}, "uniqueItems", "/items"),
    ({"type": "array", "items": {"type": "object"}, "uniqueItems": True}, "uniqueItems", ""),  # objects
    ({"type": "array", "prefixItems": [{"type": "string"}], "additionalItems": False}, "additionalItems", ""),
    ({"oneOf": [{"type": "array", "uniqueItems": True}, {"type": "array", "maxItems": 3}]}, "oneOf", ""),
    ({"allOf": [{"type": "string", "format": "date"}, {"format": "time"}]}, "allOf", ""),
    ({"not": {"uniqueItems": True}}, "not", ""),
]

SUPPORTED = [  # schema -> (accepted, rejected)
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, ['"a"', "1"], ["true", "1.5"]),
    ({"type": ["string", "null"]}, ['"a"', "null"], ["1"]),
    ({"type": "array"}, ["[]", '[1, "a", {"k": [null]}]'], ["{}"]),
    ({"type": "object", "required": ["a"]}, ['{"a": [1]}', '{"a":{}}'], ["{}"]),
    ({"properties": {"a": {"type": "string"}}}, ['{"a":"x"}', "{}", "1", '"s"'], ['{"a":1}']),
    ({"type": "object", "properties": {"a": True}, "required": ["a"]}, ['{"a":null}'], ["{}"]),
    ({"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}, ['"x"'], ["1"]),
    ({"definitions": {"n": {"type": "object", "properties": {"next": {"$ref": "#/definitions/n"}}}},
      "$ref": "#/definitions/n"}, ["{}", '{"next":{"next":{}}}'], ['{"next":1}']),
    ({}, ["1", '"a"', "[[]]", '{"x": {"y": null}}'], ["", "[1,]"]),
    (True, ["false"], ["nul"]),
    # not: exact where its complement is a set of types
    ({"not": {"type": ["number", "boolean"]}}, ['"a"', "null", "[]", "{}"], ["1", "1.5", "true"]),
    ({"type": ["integer", "string"], "not": {"type": "integer"}}, ['"a"'], ["1"]),
    ({"type": "number", "not": {"type": "integer"}}, ["1.5", "-0.25"], ["1", "1.0", "1.00000000000000000001"]),
    ({"type": ["integer", "null"], "not": {"type": "integer"}, "minimum": 0}, ["null"], ["1", "1.5"]),
    ({"type": "integer", "not": {"not": {}}}, ["1"], ["true"]),
    ({"type": "integer", "not": False}, ["1"], ["true"]),
    ({"anyOf": [{"not": {}}, {"type": "null"}]}, ["null"], ["1"]),
]


@pytest.mark.parametrize("schema,accepted,rejected", SUPPORTED)
def test_supported_combinators_and_any_json(schema: object, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)


@pytest.mark.parametrize("schema,keyword,pointer", UNSUPPORTED, ids=[k for _, k, _ in UNSUPPORTED])
def test_unsupported_keyword_raises_with_keyword_and_pointer(schema: dict, keyword: str, pointer: str) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == keyword
    assert info.value.pointer == pointer
    assert keyword in str(info.value)
    assert isinstance(info.value, ValueError)


INVALID = [
    ({"type": "strin"}, "/type"),
    ({"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 2}, ""),
    ({"type": "array", "items": {"type": "string"}, "minItems": -1}, ""),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]}, "/required"),
    ({"type": "string", "enum": [1, 2]}, "/enum"),
    ({"enum": "abc"}, "/enum"),
    ({"$ref": "#/nowhere"}, "/$ref"),
    (False, ""),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"], "additionalProperties": False}, ""),
    ({"type": "string", "minLength": 3, "maxLength": 2}, ""),
    ({"type": "string", "maxLength": -1}, ""),
    ({"type": "string", "maxLength": 1.5}, ""),
    ({"type": "integer", "minimum": 3, "maximum": 2}, ""),
    ({"type": "integer", "exclusiveMinimum": 2, "exclusiveMaximum": 3}, ""),
    ({"type": "integer", "minimum": "0"}, ""),
    ({"type": "integer", "maximum": True}, ""),
]


@pytest.mark.parametrize("schema,pointer", INVALID)
def test_invalid_schema_raises_schema_error(schema: object, pointer: str) -> None:
    with pytest.raises(gd.SchemaError) as info:
        gd.compile_json_schema(schema)
    assert not isinstance(info.value, gd.UnsupportedSchemaError)
    assert info.value.pointer == pointer


def test_schema_as_json_text_and_bad_json() -> None:
    grammar = gd.compile_json_schema('{"type": "integer"}')
    assert grammar.accepts("42")
    with pytest.raises(gd.SchemaError, match="not valid JSON"):
        gd.compile_json_schema("{type: integer}")


def test_annotations_are_accepted() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "x", "title": "t",
              "description": "d", "examples": [1], "default": 1, "$comment": "c", "type": "integer"}
    assert gd.compile_json_schema(schema).accepts("1")


def test_enum_is_filtered_by_type() -> None:
    grammar = gd.compile_json_schema({"type": "integer", "enum": [1, "1", True, 2.0, 2.5, 1e20]})
    assert grammar.accepts("1") and grammar.accepts("2") and grammar.accepts("100000000000000000000")
    assert not grammar.accepts("2.0"), "an integer literal carries no fraction"
    assert not grammar.accepts('"1"') and not grammar.accepts("true") and not grammar.accepts("2.5")


SIBLINGS = [  # enum/const never bypass the keywords beside them (each was once accepted)
    ({"type": "array", "maxItems": 1, "const": [1, 2]}, None),
    ({"type": "array", "items": {"type": "string"}, "enum": [[1], ["a"]]}, '["a"]'),
    ({"minItems": 3, "enum": [[1], [1, 2, 3]]}, "[1,2,3]"),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"],
      "enum": [{"a": 1}, {"a": "x", "b": 0}]}, '{"a":"x","b":0}'),
    ({"enum": [[1, 2], []], "items": False}, "[]"),
    ({"const": {"a": 1}, "enum": [{"a": True}]}, None),
    ({"const": [0], "enum": [[False]]}, None),
    ({"enum": [{"a": 1}], "additionalProperties": False, "properties": {"b": {"type": "string"}}}, None),
]


@pytest.mark.parametrize("schema,only", SIBLINGS)
def test_enum_and_const_respect_sibling_keywords(schema: dict, only: str | None) -> None:
    if only is None:
        with pytest.raises(gd.SchemaError, match="no 'enum'/'const' value"):
            gd.compile_json_schema(schema)
        return
    grammar = gd.compile_json_schema(schema, whitespace="compact")
    values = [schema["const"]] if "const" in schema else []
    values += schema.get("enum", [])
    for value in values:
        text = json.dumps(value, separators=(",", ":"))
        assert grammar.accepts(text) is (text == only), text


def test_literal_spellings_follow_json_dumps() -> None:
    schema = {"type": "object", "properties": {"c": {"const": [1, 2]}, "é": {"enum": ["ü"]}}, "required": ["c", "é"]}
    flexible = gd.compile_json_schema(schema)
    compact = gd.compile_json_schema(schema, whitespace="compact")
    value = {"c": [1, 2], "é": "ü"}
    for ensure_ascii in (True, False):
        assert flexible.accepts(json.dumps(value, ensure_ascii=ensure_ascii))
        assert compact.accepts(json.dumps(value, ensure_ascii=ensure_ascii, separators=(",", ":")))
        assert not compact.accepts(json.dumps(value, ensure_ascii=ensure_ascii))
    assert not flexible.accepts('{"c":[1 ,2],"é":"ü"}'), "only the spellings json.dumps writes"


def test_unwritable_literals_raise_schema_errors() -> None:
    with pytest.raises(gd.SchemaError):
        gd.compile_json_schema({"const": "\ud800"})
    with pytest.raises(gd.SchemaError):
        gd.compile_json_schema({"enum": [10 ** 5000]})
    with pytest.raises(gd.SchemaError):
        gd.compile_json_schema({"enum": [1], "minItems": "abc"})


def test_false_subschema_of_an_optional_key_is_allowed() -> None:
    grammar = gd.compile_json_schema({"type": "object", "properties": {"x": False}})
    assert grammar.accepts("{}")
    with pytest.raises(gd.SchemaError):
        gd.compile_json_schema({"type": "object", "properties": {"x": False}, "required": ["x"]})


def test_const_with_non_ascii_has_both_json_dumps_spellings() -> None:
    grammar = gd.compile_json_schema({"const": "café"})
    assert grammar.accepts('"café"') and grammar.accepts('"caf\\u00e9"')
    assert not grammar.accepts('"caf\\u00E9"'), "only the spellings json.dumps writes"
    assert grammar.completions.completion(grammar.recognizer.initial) == '"café"'.encode()


def test_empty_object_and_empty_array_forms() -> None:
    assert gd.compile_json_schema({"type": "object"}).accepts("{}")
    assert gd.compile_json_schema({"type": "object"}).accepts('{"a":1}'), "absent additionalProperties: any key"
    assert not gd.compile_json_schema({"type": "object"}, extra_keys="forbid").accepts('{"a":1}')
    zero = gd.compile_json_schema({"type": "array", "maxItems": 0})
    assert zero.accepts("[]") and not zero.accepts_prefix("[n")


def test_whitespace_option_is_validated() -> None:
    with pytest.raises(ValueError):
        gd.compile_json_schema({"type": "null"}, whitespace="pretty")
    with pytest.raises(ValueError):
        gd.compile_json_schema({"type": "null"}, max_whitespace=0)


PATTERNS = [r"^[a-z]+@[a-z]+\.(com|org)$", r"^\d{4}-\d{2}-\d{2}$", r"^[A-Z]{2}\d{3}$", r"ab", r"^\S+$",
            r"^(\+\d{1,3} )?\d{3}-\d{4}$", r"^[a-z_]+$", r"x.y", r"^$", r"é|😀"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_pattern_agrees_with_the_judge_whatever_the_escapes(pattern: str) -> None:
    """Sound: every accepted spelling decodes to a text the jsonschema validator accepts (and
    ECMA-262 would: ASCII classes, a strict $). Complete where the two regex dialects agree (no
    line terminators, exotic spaces or non-ASCII digits): a matching text is accepted in every
    JSON spelling."""
    import random
    import re

    jsonschema = pytest.importorskip("jsonschema")
    schema = {"type": "string", "pattern": pattern}
    grammar = gd.compile_json_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    ecma = re.compile(pattern.replace("$", r"\Z"), re.ASCII)
    rng = random.Random(pattern)
    tame = list("ab@.comorgAZxy09-+ \"\\é_") + ["😀"]
    wild = tame + ["\n", "\r", "\u2028", "\ufeff", "٣"]
    for alphabet, complete in ((tame, True), (wild, False)):
        for _ in range(800):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
            for spelling in {json.dumps(text), json.dumps(text, ensure_ascii=False)}:
                accepted = grammar.accepts(spelling)
                if accepted:
                    assert validator.is_valid(text) and ecma.search(text), (pattern, text)
                elif complete:
                    assert not validator.is_valid(text), (pattern, text, spelling)


CONJUNCTIONS = [  # allOf, $ref with siblings, anyOf with siblings: schema -> (accepted, rejected)
    ({"allOf": [{"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}}, "required": ["a"]},
                {"properties": {"a": {"maximum": 5}, "b": {"type": "string"}}}]},
     ['{"a":3}', '{"a":0,"b":"x"}'], ['{"a":6}', '{"a":-1}', '{"b":"x"}', "{}", '{"a":3,"b":1}']),
    ({"$defs": {"base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
      "$ref": "#/$defs/base", "properties": {"name": {"type": "string"}}, "required": ["name"]},
     ['{"id":1,"name":"x"}'], ['{"id":1}', '{"name":"x"}', '{"id":"1","name":"x"}']),
    ({"type": "object", "properties": {"v": {"type": "integer"}},
      "anyOf": [{"required": ["v"]}, {"properties": {"w": {"type": "null"}}, "required": ["w"]}]},
     ['{"v":1}', '{"w":null}', '{"v":1,"w":null}'], ["{}", '{"w":1}']),
    ({"allOf": [{"type": ["string", "integer"]}, {"type": ["integer", "null"]}]}, ["1"], ['"a"', "null"]),
    ({"allOf": [{"type": "number"}, {"type": "integer"}]}, ["7"], ["7.5"]),
    ({"allOf": [{"enum": [1, "a", True]}, {"enum": [1.0, True, None]}]}, ["1", "true"], ['"a"', "null"]),
    ({"allOf": [{"type": "string", "minLength": 2}, {"maxLength": 3}, {"pattern": "^a"}]},
     ['"ab"', '"abc"'], ['"a"', '"abcd"', '"ba"']),
    ({"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False},
                {"properties": {"a": {"minimum": 1}, "b": {"type": "string"}}}]},
     ['{"a":1}', "{}"], ['{"a":0}', '{"b":"x"}']),
    ({"allOf": [{"additionalProperties": False}, {"required": ["a"]}]}, ['"x"', "1"], ['{"a":1}', "{}"]),
    ({"allOf": [{"$ref": "#"}], "type": "integer"}, ["1"], ['"a"']),  # a cycle adds nothing
    ({"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}},
                      "allOf": [{"properties": {"v": {"type": "integer"}}}]}}, "$ref": "#/$defs/n"},
     ["{}", '{"next":{"v":1}}', '{"next":{"next":{}},"v":2}'], ['{"next":{"v":"x"}}']),
    ({"allOf": [True, {"type": "null"}]}, ["null"], ["1"]),
    ({"allOf": [{"type": "string", "pattern": "a"}, {"pattern": "b"}, {"pattern": "a"}]},  # every pattern must match
     ['"ab"', '"ba"', '"xbxa"'], ['"a"', '"b"', '""']),
    # several anyOf / if / not / oneOf across the branches: the product of their branches
    ({"allOf": [{"anyOf": [{"type": "null"}, {"type": "integer"}]}, {"anyOf": [{"type": "string"}, {"minimum": 3}]}]},
     ["3", "7", "null"], ["2", '"a"', "true"]),  # null passes "minimum"
    ({"type": "object", "properties": {"kind": {"enum": ["a", "b"]}},
      "allOf": [{"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}},
                {"if": {"properties": {"kind": {"const": "b"}}}, "then": {"required": ["y"]},
                 "else": {"properties": {"y": {"type": "null"}}}}]},
     ['{"kind":"a","x":1}', '{"kind":"b","y":1}', '{"kind":"a","y":null,"x":1}', '{"x":0,"y":0}'],
     ['{"kind":"a"}', '{"kind":"b"}', '{"kind":"a","x":1,"y":1}', "{}", '{"x":0}']),
    ({"allOf": [{"not": {"type": "string"}}, {"not": {"type": "null"}}, {"not": {"const": 1}}]},
     ["2", "true", "[]"], ['"a"', "null", "1", "1.0"]),
    ({"allOf": [{"oneOf": [{"type": "integer"}, {"minimum": 2}]}, {"oneOf": [{"maximum": 5}, {"type": "boolean"}]}]},
     ["1", "2.5", "-3"], ["3", "true", "2.5e1", "1.5"]),
]


@pytest.mark.parametrize("schema,accepted,rejected", CONJUNCTIONS)
def test_conjunctions_merge_exactly(schema: object, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)


def test_a_product_of_disjoint_branches_admits_nothing() -> None:
    with pytest.raises(gd.SchemaError, match="admits no document"):
        gd.compile_json_schema({"allOf": [{"anyOf": [{"type": "null"}]}, {"anyOf": [{"type": "string"}]}]})


@pytest.mark.parametrize("schema,keyword", [
    # draft 4's boolean bounds, with no draft named: refused (2020-12 reads them as numbers)
    ({"allOf": [{"minimum": 1}, {"minimum": 2, "exclusiveMaximum": True, "maximum": 9}]}, "exclusiveMaximum"),
    ({"allOf": [{"anyOf": [{"type": "null"}, {"type": "integer"}, {"type": "string"}]}] +
               [{"anyOf": [{"minimum": i}, {"maximum": -i}]} for i in range(8)]}, "allOf"),  # 3 x 2^8 choices
    ({"allOf": [{"multipleOf": 2}, {"multipleOf": 0.5}]}, "allOf"),
    ({"allOf": [{"minimum": 1, "exclusiveMinimum": True}, {"minimum": 2}]}, "exclusiveMinimum"),
])
def test_conjunctions_that_cannot_be_merged_are_refused(schema: dict, keyword: str) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == keyword


def test_unsatisfiable_conjunctions_are_schema_errors() -> None:
    for schema in ({"allOf": [{"type": "string"}, {"type": "integer"}]}, {"allOf": [{"const": 1}, {"const": 2}]},
                   {"allOf": [False, {"type": "null"}]}):
        with pytest.raises(gd.SchemaError):
            gd.compile_json_schema(schema)
