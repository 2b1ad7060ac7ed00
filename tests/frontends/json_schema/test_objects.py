"""Object keywords: additionalProperties as a schema (and its absent default), patternProperties,
propertyNames, min/maxProperties, dependentRequired/dependencies, required keys outside
properties. Exact languages, masks equal to the reference, generation judged by jsonschema."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from helpers import REFERENCE_VOCABS, assert_language, assert_masks_equal_reference, assert_random_documents_validate, require

OBJECTS = [  # schema, accepted, rejected
    # absent additionalProperties: any other key, any value; a named key keeps its own schema
    ({"properties": {"a": {"type": "integer"}}},
     ['{"a":1}', '{"a":1,"b":[1,{"c":null}]}', '{"b":"x"}', "{}", '{"ab":1,"ba":"x"}'],
     ['{"a":"x"}', '{"b":1,"a":"x"}', '{"\\u0061":"x"}', '{"a":1,"a":2}']),
    ({"properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
     ['{"a":1,"b":"x"}', '{"b":"x","c":"y"}', "{}", '{"aa":"x"}'],
     ['{"b":1}', '{"a":"x"}', '{"\\u0061":"x"}', '{"a\\u0000":1}']),
    ({"type": "object", "required": ["x"], "additionalProperties": {"type": "integer"}},
     ['{"x":1}', '{"x":1,"y":2}'], ['{"x":"s"}', '{"y":2}', "{}"]),
    # patterns: search semantics on the decoded key, every matching pattern applies
    ({"patternProperties": {"^x": {"type": "integer"}, "y$": {"type": "string"}}, "additionalProperties": False},
     ['{"xa":1}', '{"ay":"s"}', '{"\\u0078a":1}', "{}"], ['{"xy":1}', '{"xy":"s"}', '{"q":1}', '{"xa":"s"}']),
    ({"patternProperties": {"a": {"type": "integer"}, "b": {"enum": [1, 2, "x"]}}},
     ['{"ab":1}', '{"a":7}', '{"b":"x"}', '{"c":null}'], ['{"ab":"x"}', '{"ab":7}', '{"b":3}']),
    ({"properties": {"ax": {"type": "string"}}, "patternProperties": {"^a": {"maxLength": 2}}},
     ['{"ax":"ab"}', '{"ay":"cd"}', '{"ay":3}'], ['{"ax":"abc"}', '{"ax":1}', '{"ay":"abc"}']),
    # propertyNames narrows every key, named ones too
    ({"propertyNames": {"maxLength": 3}}, ['{"abc":1}', "{}", '{"\\u00e9\\u00e9\\u00e9":1}'], ['{"abcd":1}']),
    ({"propertyNames": {"pattern": "^[a-z]+$"}, "properties": {"A": {}}}, ['{"ab":1}'], ['{"A":1}', '{"a1":1}']),
    ({"propertyNames": {"enum": ["a", "b"]}, "properties": {"b": {"type": "string"}}},
     ['{"b":"x","a":1}', '{"a":[]}', "{}"], ['{"c":1}', '{"b":1}']),
    ({"propertyNames": False}, ["{}"], ['{"a":1}']),
    ({"propertyNames": {"const": "k"}}, ['{"k":1}', "{}"], ['{"j":1}']),
    # member counts
    ({"minProperties": 1}, ['{"a":1}', '{"a":1,"b":2}'], ["{}"]),
    ({"maxProperties": 2}, ["{}", '{"a":1,"b":2}'], ['{"a":1,"b":2,"c":3}']),
    ({"properties": {"a": {}, "b": {}}, "required": ["a"], "minProperties": 2, "maxProperties": 2},
     ['{"a":1,"b":2}', '{"a":1,"z":2}'], ['{"a":1}', '{"a":1,"b":2,"c":3}', '{"b":1,"c":2}']),
    ({"properties": {"a": {}, "b": {}, "c": {}}, "additionalProperties": False, "minProperties": 2},
     ['{"a":1,"b":2}', '{"b":1,"c":2}', '{"a":1,"b":2,"c":3}'], ['{"a":1}', "{}"]),
    # dependencies, in both directions of the key order
    ({"properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"], "c": ["a"]}},
     ['{"a":1,"b":2}', '{"b":2}', '{"a":1,"b":2,"c":3}', "{}", '{"z":1}'],
     ['{"a":1}', '{"c":1}', '{"b":1,"c":1}']),
    ({"properties": {"a": {}, "b": {}}, "dependencies": {"b": ["a"]}},
     ['{"a":1,"b":2}', '{"a":1}'], ['{"b":2}']),
    ({"dependencies": {"a": True, "b": {}}}, ['{"a":1}'], []),
    # dependent schemas: an anyOf over which of their keys are present
    ({"properties": {"a": {}, "b": {}}, "dependentSchemas": {"a": {"required": ["b"], "properties": {"b": {"type": "integer"}}}}},
     ["{}", '{"a":1,"b":2}', '{"b":"x"}', "1"], ['{"a":1}', '{"a":1,"b":"x"}']),
    # unevaluatedProperties: keys that no properties/patternProperties of the schema's own
    # conjunction ($ref, allOf) evaluate
    ({"$defs": {"base": {"properties": {"a": {}}}}, "$ref": "#/$defs/base", "allOf": [{"properties": {"b": {}}}],
      "unevaluatedProperties": False}, ['{"a":1,"b":2}', "{}"], ['{"c":1}', '{"a":1,"c":1}']),
    ({"patternProperties": {"^x": {}}, "unevaluatedProperties": {"type": "integer"}},
     ['{"xa":"s","y":1}'], ['{"y":"s"}']),
    ({"additionalProperties": {"type": "string"}, "unevaluatedProperties": False}, ['{"a":"s"}'], ['{"a":1}']),
    # inside an allOf branch, where only that branch's own keywords evaluate keys: there it is
    # additionalProperties (the parent's properties evaluate nothing for the branch)
    ({"properties": {"a": {}}, "allOf": [{"unevaluatedProperties": False}]}, ["{}", "1"], ['{"a":1}']),
    ({"allOf": [{"properties": {"a": {}}, "oneOf": [{"required": ["a"]}, {"not": {"required": ["a"]}}],
                 "unevaluatedProperties": False}]}, ['{"a":1}', "{}"], ['{"b":1}', '{"a":1,"b":1}']),
    ({"anyOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]}, {"properties": {"b": {}}}],
      "unevaluatedProperties": False}, ['{"a":1}', '{"b":1}'], ['{"c":1}', '{"a":1,"c":2}']),
    ({"type": "object", "dependencies": {"a": {"maxProperties": 1}, "b": ["c"]}},
     ['{"a":1}', '{"b":1,"c":2}', "{}"], ['{"a":1,"z":2}', '{"b":1}']),
    # a oneOf read as anyOf beside its own allOf (a part of the conjunction already): the types
    # no value passes exactly once (every non-string passes both branches) stay excluded
    ({"unevaluatedProperties": False,
      "allOf": [{"allOf": [{"properties": {"a": True}}], "oneOf": [{"minLength": 1}, {"maxLength": 0}]}]},
     ['"x"', '""'], ["5", "{}", "null", '{"a":1}']),
    ({"$defs": {"p": {"properties": {"a": True}}}, "unevaluatedProperties": False,
      "allOf": [{"$ref": "#/$defs/p", "oneOf": [{"minLength": 1}, {"maxLength": 0}]}]},
     ['"x"', '""'], ["5", "{}", "null"]),
    # unevaluatedProperties over keys only a complement names: the merge adds the rest to them in
    # a dict of its own, never in the named schemas' (which "q" reads too, without that rest)
    ({"$defs": {"T": {"not": {"properties": {"a": {"type": "string"}}}}, "U": {"not": {"type": "string"}}},
      "properties": {
          "p": {"unevaluatedProperties": {"type": "integer"},
                "allOf": [{"patternProperties": {"^zz$": True}}, {"$ref": "#/$defs/T"}, {"$ref": "#/$defs/U"}]},
          "q": {"allOf": [{"$ref": "#/$defs/T"}, {"$ref": "#/$defs/U"}]}}},
     ['{"q":{"a":true}}', '{"p":{"a":1}}'], ['{"p":{"a":true}}', '{"p":{"a":"s"}}']),
]


@pytest.mark.parametrize("schema,accepted,rejected", OBJECTS)
def test_exact_languages(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)


@pytest.mark.parametrize("schema,accepted,rejected", OBJECTS)
def test_the_judge_agrees_with_every_table_row(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    """The table itself is right: jsonschema calls the accepted rows valid, and every rejected
    row that json.loads reads the same way is invalid (a duplicate key is rejected by the grammar
    but the parser keeps only the last value)."""
    jsonschema = require("jsonschema")
    # "dependencies" is a draft 4-7 keyword (split into dependentRequired/dependentSchemas since)
    validator = (jsonschema.Draft7Validator if "dependencies" in schema else jsonschema.Draft202012Validator)(schema)
    for text in accepted:
        assert validator.is_valid(json.loads(text)), text
    for text in rejected:
        pairs = json.loads(text, object_pairs_hook=lambda p: p)
        if isinstance(pairs, list) and len({k for k, _ in pairs}) < len(pairs):
            continue
        assert not validator.is_valid(json.loads(text)), text


def test_extra_keys_forbid_reads_an_absent_additional_properties_as_false() -> None:
    schema = {"properties": {"a": {"type": "integer"}}, "patternProperties": {"^x": {"type": "string"}}}
    strict = gd.compile_json_schema(schema, extra_keys="forbid")
    assert strict.accepts('{"a":1,"xy":"s"}') and not strict.accepts('{"a":1,"b":2}')
    assert gd.compile_json_schema(schema).accepts('{"a":1,"b":2}')
    explicit = gd.compile_json_schema({**schema, "additionalProperties": {"type": "null"}}, extra_keys="forbid")
    assert explicit.accepts('{"b":null}'), "an explicit additionalProperties still holds"
    with pytest.raises(ValueError):
        gd.compile_json_schema(schema, extra_keys="strict")


REFUSED = [
    ({"minProperties": 2}, "minProperties"),  # two other keys may spell one name
    ({"dependentSchemas": {k: {"required": ["z"]} for k in "abcde"}}, "dependentSchemas"),
    ({"properties": {"a": {}}, "allOf": [{"anyOf": [{"properties": {"c": {}}}], "unevaluatedProperties": False}]},
     "unevaluatedProperties"),
    ({"dependentSchemas": {"a": {"required": ["b"]}}, "anyOf": [{"required": ["c"]}]}, "dependentSchemas"),
    ({"propertyNames": {"anyOf": [{"maxLength": 2}]}}, "propertyNames"),
    ({"patternProperties": {f"^{i}": {} for i in range(13)}}, "patternProperties"),
]


@pytest.mark.parametrize("schema,keyword", REFUSED)
def test_what_cannot_be_exact_is_refused(schema: dict, keyword: str) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == keyword


def test_objects_that_admit_nothing_name_the_reason() -> None:
    with pytest.raises(gd.SchemaError, match="required key 'b'"):
        gd.compile_json_schema({"type": "object", "required": ["b"], "additionalProperties": False})
    with pytest.raises(gd.SchemaError, match="minProperties 3 > maxProperties 1"):
        gd.compile_json_schema({"type": "object", "minProperties": 3, "maxProperties": 1})
    # a branch that admits nothing is just one alternative fewer
    grammar = gd.compile_json_schema({"anyOf": [{"type": "object", "required": ["b"], "propertyNames": False},
                                                {"type": "null"}]})
    assert grammar.accepts("null") and not grammar.accepts('{"b":1}')


def test_all_of_unites_pattern_properties_and_dependencies() -> None:
    schema = {"allOf": [{"patternProperties": {"^a": {"type": "integer"}}, "dependentRequired": {"a1": ["b"]}},
                        {"patternProperties": {"^a": {"maximum": 3}, "z$": {"type": "null"}},
                         "dependentRequired": {"a1": ["c"]}}]}
    assert_language(schema, ['{"a1":2,"b":1,"c":1}', '{"bz":null}', '{"q":1}'],
                    ['{"a1":4,"b":1,"c":1}', '{"a1":2,"b":1}', '{"a2":"x"}', '{"bz":1}', '{"az":null}'])


@pytest.mark.parametrize("required", [[], ["k3"], ["k2", "k39"], ["k10", "k11"]])
def test_optional_keys_after_a_member_share_one_return_point(required: list[str]) -> None:
    """After a member the parse waits for a comma or ``}`` in a few threads, not one per later key;
    after the comma, one thread per key that may come next, all on one set of return points
    (the skips are tail calls): a scan there costs O(later keys), no stack merging."""
    props = {f"k{i}": {"type": "integer"} for i in range(40)}
    grammar = gd.compile_json_schema({"type": "object", "properties": props, "required": required},
                                     whitespace="compact", extra_keys="forbid")
    recognizer = grammar.recognizer
    state = recognizer.feed(recognizer.initial, b'{"k2":1')
    after_member = recognizer.finish(state)
    assert after_member is not None and len(after_member.threads) <= 2
    state = recognizer.feed(state, b",")
    parse = state[1]
    owed = [int(k[1:]) for k in required if int(k[1:]) > 2]
    later = min(owed) - 2 if owed else 37  # k3 up to the next required key may come next
    assert len(parse.threads) == later and len({conts for _position, conts in parse.threads}) == 1
    assert grammar.accepts('{"k2":1,"k39":2}') is all(k in ("k2", "k39") for k in required)
    assert grammar.accepts('{"k0":1,"k2":1,"k3":1,"k10":1,"k11":1,"k39":1}')
    assert not grammar.accepts('{"k0":1,"k2":1,"k3":1,"k11":1,"k10":1,"k39":1}')


def test_many_named_keys_with_counts_stay_bounded() -> None:
    schema = {"properties": {f"k{i}": {"type": "integer"} for i in range(60)}, "maxProperties": 8,
              "additionalProperties": False}
    grammar = gd.compile_json_schema(schema)
    text = json.dumps({f"k{i}": i for i in range(0, 60, 8)})
    assert grammar.accepts(text) and not grammar.accepts(json.dumps({f"k{i}": i for i in range(9)}))
    # past the limits, a typed error in bounded time (the states, or the rewritten grammar's size)
    with pytest.raises(gd.GrammarDecodeError, match="grammar rules|grows past"):
        gd.compile_json_schema({**schema, "properties": {f"k{i}": {} for i in range(400)}, "maxProperties": 300})


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.text(alphabet="abxyz\u00e9", max_size=4), st.one_of(st.integers(-3, 3), st.text(max_size=3),
                                                                             st.none()), max_size=5))
def test_random_objects_are_judged_like_jsonschema(document: dict) -> None:
    """Every object (keys in the grammar's order) is accepted exactly when jsonschema validates it."""
    jsonschema = require("jsonschema")
    schema = {"properties": {"a": {"type": "integer"}, "b": {}},
              "patternProperties": {"^x": {"type": "string"}, "y": {"type": ["integer", "null"]}},
              "additionalProperties": {"type": "null"}, "propertyNames": {"maxLength": 3},
              "dependentRequired": {"b": ["a"]}, "maxProperties": 4}
    grammar = _compiled(json.dumps(schema))
    ordered = {k: document[k] for k in ("a", "b") if k in document}
    ordered.update((k, v) for k, v in document.items() if k not in ("a", "b"))
    text = json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))
    assert grammar.accepts(text) == jsonschema.Draft202012Validator(schema).is_valid(document), text


_CACHE: dict[str, gd.CompiledGrammar] = {}


def _compiled(schema_text: str) -> gd.CompiledGrammar:
    if schema_text not in _CACHE:
        _CACHE[schema_text] = gd.compile_json_schema(schema_text)
    return _CACHE[schema_text]


MASK_CASES = [
    ({"properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
     ['{"', '{"nam', '{"name":"x","', '{"name":"x","a']),
    ({"patternProperties": {"^x-": {"type": "integer"}, "id$": {"type": "string", "maxLength": 3}},
      "additionalProperties": False, "maxProperties": 2},
     ['{"', '{"x-', '{"x-i":1,', '{"uid":"ab', '{"x-a":1,"x-b":2']),
    ({"propertyNames": {"pattern": "^[a-z]{1,3}$"}, "required": ["ab"], "additionalProperties": {"type": "boolean"}},
     ['{"', '{"ab":', '{"ab":true,"', '{"ab":true,"abc']),
]


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
@pytest.mark.parametrize("schema,prefixes", MASK_CASES)
def test_masks_equal_the_reference(request, vocab_name: str, schema: dict, prefixes: list[str]) -> None:
    assert_masks_equal_reference(schema, request.getfixturevalue(vocab_name), prefixes)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"],
     "additionalProperties": {"type": "string", "maxLength": 5}, "maxProperties": 4},
    {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "boolean"}, "^[0-9]+$": {"type": "null"}},
     "additionalProperties": False, "propertyNames": {"maxLength": 6}},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
     "dependentRequired": {"b": ["a"]}, "minProperties": 1, "additionalProperties": False},
])
def test_random_logits_documents_validate(gpt2: gd.Vocabulary, schema: dict) -> None:
    assert_random_documents_validate(schema, gpt2, seeds=6, max_tokens=120)


ANY_ORDER = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {}},
             "required": ["a"], "dependentRequired": {"c": ["b"]}, "patternProperties": {"^x": {"type": "null"}},
             "maxProperties": 4}


@settings(max_examples=80, deadline=None)
@given(st.permutations(["a", "b", "c", "xq", "zz"]), st.integers(1, 5), st.sampled_from([1, "s", None]))
def test_any_order_is_judged_like_jsonschema(order: list[str], size: int, odd: object) -> None:
    """property_order="any": keys in every order, each named key once, judged by jsonschema."""
    jsonschema = require("jsonschema")
    values = {"a": 1, "b": "s", "c": odd, "xq": None, "zz": odd}
    document = {k: values[k] for k in order[:size]}
    grammar = _compiled_any_order()
    text = json.dumps(document, separators=(",", ":"))
    assert grammar.accepts(text) == jsonschema.Draft202012Validator(ANY_ORDER).is_valid(document), text


def _compiled_any_order() -> gd.CompiledGrammar:
    key = "any-order"
    if key not in _CACHE:
        _CACHE[key] = gd.compile_json_schema(ANY_ORDER, property_order="any")
    return _CACHE[key]


def test_any_order_refuses_too_many_keys_and_bad_options() -> None:
    assert not _compiled_any_order().accepts('{"a":1,"a":2}'), "a named key at most once"
    with pytest.raises(gd.UnsupportedSchemaError, match="any order"):
        gd.compile_json_schema({"properties": {f"k{i}": {} for i in range(13)}}, property_order="any")
    with pytest.raises(ValueError):
        gd.compile_json_schema({}, property_order="sorted")


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
def test_any_order_masks_equal_the_reference(request, vocab_name: str) -> None:
    vocab = request.getfixturevalue(vocab_name)
    schema = {"properties": {"name": {"type": "string"}, "id": {"type": "integer"}}, "required": ["id"],
              "additionalProperties": False}
    assert_masks_equal_reference(schema, vocab, ['{"', '{"name":"x","', '{"id":1,"', '{"id":1,"name":"a"'],
                                 property_order="any")
