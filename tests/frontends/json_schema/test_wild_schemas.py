"""Schemas as they are found in the wild: keywords no draft defines are annotations (misspellings
warned about, refused under ``unknown_keywords="error"``), and the constructs real schemas use
compile exactly: products of ``anyOf``/``if``/``not``/``oneOf`` across ``allOf``, lookahead at the
start of a pattern, anchors inside alternations, OpenAPI's formats. Masks on each equal the
reference bit for bit; random-logits documents validate with ``jsonschema``."""

from __future__ import annotations

import json
import re
import warnings

import pytest

import grammar_decode as gd
from helpers import REFERENCE_VOCABS, assert_masks_equal_reference, assert_random_documents_validate, require

jsonschema = require("jsonschema")

#: schema with keywords no draft defines -> the same schema without them (the same language)
ANNOTATED = [
    ({"type": "object", "javaType": "com.x.Y", "properties": {"a": {"type": "string", "x-order": 1}},
      "additionalProperties": False, "markdownDescription": "*a*", "propertyOrder": ["a"]},
     {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}),
    ({"type": "integer", "x-format": "int32", "example": 3, "self": {"vendor": "x"}, "links": []}, {"type": "integer"}),
    ({"type": "array", "items": {"type": "string", "x-kubernetes-list-type": "set"}, "@documentationUrl": "u"},
     {"type": "array", "items": {"type": "string"}}),
    ({"type": "object", "name": "n", "version": 2, "decription": "typo of an annotation"}, {"type": "object"}),
    ({"$id": "http://x.org/", "definitions": {"a": {"type": "null", "x-tag": 1}}, "$ref": "#/definitions/a",
      "x-top": {"type": "string"}}, {"type": "null"}),
]

#: unknown keywords that look like misspellings -> the keyword they resemble
MISSPELLED = [("anyof", "anyOf"), ("additionalPropeties", "additionalProperties"), ("requried", "required"),
              ("ref", "$ref"), ("maxlength", "maxLength"), ("item", "items"), ("enums", "enum"),
              ("propertyName", "propertyNames"), ("_format", "format"), ("minimun", "minimum")]
#: unknown keywords that are not taken for misspellings
NOT_MISSPELLED = ["name", "id2", "note", "readonly", "decription", "example", "x-order", "javaType", "self",
                  "$comment2", "titel"]

TEXTS = ["null", "1", '"a"', "[]", '["a", "b"]', "{}", '{"a":"x"}', '{"a":1}', '{"b":1}', "[1]", "true"]


@pytest.mark.parametrize("index", range(len(ANNOTATED)))
def test_keywords_no_draft_defines_are_annotations(index: int) -> None:
    annotated, plain = ANNOTATED[index]
    with warnings.catch_warnings():
        warnings.simplefilter("error", gd.SchemaWarning)  # none of these looks like a misspelling
        grammar = gd.compile_json_schema(annotated)
    reference = gd.compile_json_schema(plain)
    for text in TEXTS:
        assert grammar.accepts(text) == reference.accepts(text), text
        assert grammar.accepts(text) == jsonschema.Draft202012Validator(annotated).is_valid(json.loads(text)), text
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(annotated, unknown_keywords="error")
    assert "unknown_keywords='error'" in str(info.value)


@pytest.mark.parametrize("keyword,resembles", MISSPELLED)
def test_misspellings_warn_with_keyword_pointer_and_intent(keyword: str, resembles: str) -> None:
    schema = {"type": "object", "properties": {"p": {keyword: [{"type": "string"}]}}}
    with pytest.warns(gd.SchemaWarning) as caught:
        grammar = gd.compile_json_schema(schema)
    (warning,) = [w.message for w in caught if isinstance(w.message, gd.SchemaWarning)]
    assert (warning.keyword, warning.pointer, warning.resembles) == (keyword, "/properties/p", resembles)
    assert keyword in str(warning) and resembles in str(warning) and "/properties/p" in str(warning)
    assert grammar.accepts('{"p":1}')  # ignored, as validators ignore it


@pytest.mark.parametrize("keyword", NOT_MISSPELLED)
def test_other_unknown_keywords_are_ignored_silently(keyword: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", gd.SchemaWarning)
        assert gd.compile_json_schema({"type": "string", keyword: 1}).accepts('"a"')


@pytest.mark.parametrize("schema,keyword", [
    ({"type": "integer", "divisibleBy": 2}, "divisibleBy"),
    ({"disallow": "string"}, "disallow"),
    ({"extends": {"type": "string"}}, "extends"),
    ({"properties": {"a": {"type": "string", "required": True}}}, "required"),
    ({"$schema": "http://json-schema.org/draft-03/schema#", "type": "string"}, "$schema"),
])
def test_draft_3_is_refused_by_name(schema: dict, keyword: str) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == keyword and "draft 3" in str(info.value)


def test_unknown_keywords_option_is_checked() -> None:
    with pytest.raises(ValueError, match="unknown_keywords"):
        gd.compile_json_schema({}, unknown_keywords="warn")


#: (schema, prefixes for the reference comparison)
CONSTRUCTS = {
    "lookahead": ({"type": "string", "pattern": "^(?!@@)(?!with$)[@a-z]+$"}, ['"', '"@', '"@a', '"wit', '"with']),
    "alternation anchors": ({"type": "string", "pattern": "^$|^in$|^[a-z][a-z0-9]*x$"}, ['"', '"i', '"in', '"inx']),
    "if products": ({"type": "object", "properties": {"k": {"enum": ["a", "b"]}, "x": {"type": "integer"}},
                     "allOf": [{"if": {"properties": {"k": {"const": "a"}}}, "then": {"required": ["x"]}},
                               {"if": {"properties": {"k": {"const": "b"}}},
                                "then": {"properties": {"x": {"maximum": 3}}}}]},
                    ["{", '{"k":', '{"k":"a"', '{"k":"b",', '{"k":"b","x":']),
    "not products": ({"allOf": [{"not": {"type": "string"}}, {"not": {"type": ["null", "boolean"]}},
                                {"not": {"const": 1}}]}, ["", "1", "[", "{"]),
    "uri-template": ({"type": "string", "format": "uri-template"}, ['"', '"{', '"{+a', '"{a:1', '"x{a,b}']),
    "regex": ({"type": "string", "format": "regex"}, ['"', '"(?:a', '"[^a']),
    "byte": ({"type": "string", "format": "byte"}, ['"', '"YQ', '"YQ=', '"YWJj']),
    "int32": ({"type": "integer", "format": "int32"}, ["", "2147483", "214748364", "-214748364"]),
    "hostname": ({"type": "string", "format": "hostname"}, ['"', '"xn', '"xn-', '"ab-', '"ab-c']),
}


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_masks_equal_the_reference(request, name: str, vocab_name: str) -> None:
    schema, prefixes = CONSTRUCTS[name]
    assert_masks_equal_reference(schema, request.getfixturevalue(vocab_name), prefixes)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_random_documents_validate(name: str, gpt2: gd.Vocabulary) -> None:
    schema, _prefixes = CONSTRUCTS[name]
    assert_random_documents_validate(schema, gpt2, seeds=3, max_tokens=120)


@pytest.mark.parametrize("pattern", ["^(?!a)b*$", "^(?=ab)[a-c]*$", "^(?!x|yz)[x-z]{0,3}$", "^(?!a$).*",
                                     "^$|^[0-9]+$", "^in$|^out$|^x"])
def test_patterns_agree_with_re_search(pattern: str) -> None:
    grammar = gd.compile_json_schema({"type": "string", "pattern": pattern})
    for text in ["", "a", "b", "bb", "ab", "abc", "x", "yz", "y", "zz", "xyz", "0", "12", "in", "out", "xin", "a\n"]:
        assert grammar.accepts(json.dumps(text)) == (re.search(pattern, text) is not None), (pattern, text)


def test_lookahead_away_from_the_start_is_still_refused() -> None:
    with pytest.raises(gd.UnsupportedSchemaError, match="lookahead"):
        gd.compile_json_schema({"type": "string", "pattern": "a(?!b)"})


def test_many_if_then_branches_on_a_required_discriminator(gpt2: gd.Vocabulary) -> None:
    """Ten ``if``/``then`` pairs keyed on one required property: 2^10 choices, of which the
    proofs that two ``if``s on a required key are disjoint keep eleven."""
    kinds = [f"k{i}" for i in range(10)]
    schema = {"type": "object", "required": ["kind"], "properties": {"kind": {"enum": kinds}, "n": {"type": "integer"}},
              "allOf": [{"if": {"properties": {"kind": {"const": k}}}, "then": {"properties": {"n": {"maximum": i}}}}
                        for i, k in enumerate(kinds)]}
    grammar = gd.compile_json_schema(schema)
    assert grammar.accepts('{"kind":"k3","n":3}') and not grammar.accepts('{"kind":"k3","n":4}')
    assert_random_documents_validate(schema, gpt2, seeds=3, max_tokens=60)


#: allOf conjuncts with additionalProperties beside patternProperties (theirs or another's)
SIDED = [
    {"allOf": [{"properties": {"a": {"type": "integer"}}, "patternProperties": {"^x": {"type": "integer"}},
                "additionalProperties": {"type": "string"}}, {"properties": {"b": {"type": "integer"}, "xb": {}}}]},
    {"allOf": [{"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False},
               {"properties": {"xa": {"minimum": 3}, "b": {}}}]},
    {"allOf": [{"additionalProperties": {"type": "string"}}, {"patternProperties": {"^a": {"maxLength": 1}}}]},
    {"allOf": [{"patternProperties": {"^a": {"type": "string"}}, "additionalProperties": {"type": "integer"}},
               {"patternProperties": {"b$": {"maxLength": 1}}, "additionalProperties": {"minimum": 0}}]},
    {"allOf": [{"properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
               {"properties": {"b": {}}, "additionalProperties": {"maxLength": 1}}]},
]


@pytest.mark.parametrize("index", range(len(SIDED)))
def test_additional_properties_of_each_conjunct(index: int) -> None:
    import random
    schema = SIDED[index]
    grammar = gd.compile_json_schema(schema, property_order="any")
    validator = jsonschema.Draft202012Validator(schema)
    rng = random.Random(index)
    keys, values = ["a", "b", "xa", "xb", "ab", "c", "x", "bb"], [1, -1, "s", "ss", 5, None]
    for _ in range(300):
        document = {k: rng.choice(values) for k in rng.sample(keys, rng.randint(0, 3))}
        text = json.dumps(document, separators=(",", ":"))
        assert grammar.accepts(text) == validator.is_valid(document), text
