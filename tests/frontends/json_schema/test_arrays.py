"""Array keywords: prefixItems/items, items arrays with additionalItems, contains with
minContains/maxContains, uniqueItems (up to one item, or over finite item domains), and their merge
under allOf. Exact languages, refusals, masks equal
to the reference, generation judged by jsonschema."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from helpers import REFERENCE_VOCABS, assert_language, assert_masks_equal_reference, assert_random_documents_validate, require

ARRAYS = [  # schema, accepted, rejected
    ({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": False},
     ["[]", "[1]", '[1,"a"]'], ['[1,"a",2]', '["a"]', '[1,2]']),
    ({"prefixItems": [{"type": "integer"}], "items": {"type": "boolean"}, "minItems": 2},
     ["[1,true]", "[1,true,false]"], ["[1]", "[1,2]", "[true,true]"]),
    ({"items": [{"type": "integer"}], "additionalItems": {"type": "string"}},
     ["[]", "[1]", '[1,"a","b"]'], ['[1,2]', '["a"]']),
    ({"items": [{}, {}], "additionalItems": False}, ["[]", "[1,[2]]"], ["[1,2,3]"]),
    ({"items": {"type": "integer"}, "additionalItems": False}, ["[1,2,3]"], ['["a"]']),  # ignored: items is a schema
    ({"prefixItems": [{"type": "null"}, False]}, ["[]", "[null]"], ["[null,null]", "[1]"]),
    ({"type": "array", "contains": {"const": 5}}, ["[5]", "[1,5]", "[5,5,1]"], ["[]", "[1,2]"]),
    ({"type": "array", "contains": {"const": 5}, "minContains": 2, "maxItems": 4},
     ["[5,5]", "[1,5,2,5]", "[5,5,5,5]"], ["[5]", "[1,5,2,5,5]", "[5,1,1]"]),
    ({"type": "array", "contains": {"type": "string"}, "minContains": 0}, ["[]", "[1]"], ["{}"]),
    ({"type": "array", "items": {"type": "integer"}, "contains": {"minimum": 10}},
     ["[10]", "[1,2,30]"], ["[1,2]", '["x",10]']),
    ({"type": "array", "contains": True, "minContains": 2}, ["[1,2]"], ["[1]"]),
    ({"type": "array", "contains": {"type": "null"}, "maxContains": 3, "maxItems": 3}, ["[null]"], ["[1]", "[]"]),
    ({"type": "array", "contains": {"type": "null"}, "maxContains": 1}, ["[null]", "[1,null,2]"], ["[null,null]", "[]"]),
    ({"contains": {"const": 1}, "minContains": 2, "maxContains": 3},
     ["[1,1]", "[1,2,1,1]", '"x"'], ["[1]", "[1,1,1,1]", "[1,1.0,1e0,1]", "[1,1.00000000000000000001,1,1]"]),
    ({"type": "array", "contains": {"enum": [1, "a"]}, "minContains": 0, "maxContains": 1},
     ["[]", '[2,"b"]', '[1,"b"]'], ['[1,"a"]', "[1.0,1]"]),
    ({"type": "array", "contains": {"minimum": 5}, "maxContains": 1}, ["[1,5]", "[5,2]"], ["[5,6]", "[5.5,6]", "[1,2]"]),
    ({"contains": {"const": 1}, "minContains": 3, "maxContains": 1}, ["{}", "2"], ["[1]", "[]"]),
    ({"type": "array", "prefixItems": [{"const": "a"}], "contains": {"const": "b"}},
     ['["a","b"]', '["a","c","b"]'], ['["b"]', '["a"]', '["b","b"]']),
    ({"type": "array", "uniqueItems": True, "maxItems": 1}, ["[]", "[[1,1]]"], ["[1,2]"]),
    ({"type": "array", "uniqueItems": False}, ["[1,1]"], []),
    ({"type": "array", "items": {"type": "boolean"}, "uniqueItems": True},
     ["[]", "[true]", "[false,true]"], ["[true,true]", "[false,true,false]", "[1]"]),
    ({"type": "array", "items": {"enum": [1, "a", 1.0, None, [1], {"k": 2}]}, "uniqueItems": True, "minItems": 2},
     ['[1,"a"]', '[[1],null,1,"a",{"k":2}]'], ["[]", "[1]", "[1,1]", "[[1],[1]]", '[{"k":2},{"k":2}]', "[1,1.0]"]),
    ({"prefixItems": [{"type": "boolean"}, {"type": "boolean"}], "items": False, "uniqueItems": True},
     ["[]", "[true]", "[true,false]", "1"], ["[true,true]", "[false,true,false]"]),
    ({"prefixItems": [{"const": "x"}], "items": {"enum": ["x", "y", "z"]}, "uniqueItems": True, "maxItems": 2},
     ['["x"]', '["x","z"]'], ['["x","x"]', '["y"]', '["x","y","z"]']),
    ({"type": "array", "items": {"enum": ["a", "b"], "maxLength": 0}, "uniqueItems": True}, ["[]"], ['["a"]']),
    ({"allOf": [{"prefixItems": [{"minimum": 3}]}, {"items": {"type": "integer", "maximum": 5}}]},
     ["[3,4]", "[4]"], ["[2]", "[3,6]", "[3.5]"]),
    ({"allOf": [{"prefixItems": [{"type": "integer"}], "items": False}, {"prefixItems": [{}, {}]}]},
     ["[1]"], ["[1,2]"]),
    ({"prefixItems": [{"type": "integer"}], "allOf": [{"prefixItems": [{}, {"type": "string"}]}],
      "unevaluatedItems": {"type": "null"}}, ['[1,"a",null]', "[1]"], ['[1,"a",2]']),
    ({"items": {"type": "integer"}, "unevaluatedItems": False}, ["[1,2]"], ['["a"]']),
]


@pytest.mark.parametrize("schema,accepted,rejected", ARRAYS)
def test_exact_languages(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)


@pytest.mark.parametrize("schema,accepted,rejected", ARRAYS)
def test_the_judge_agrees_with_every_table_row(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    jsonschema = require("jsonschema")
    # items arrays and additionalItems are drafts 4-2019-09 keywords
    old = isinstance(schema.get("items"), list) or "additionalItems" in schema
    validator = (jsonschema.Draft201909Validator if old else jsonschema.Draft202012Validator)(schema)
    assert all(validator.is_valid(json.loads(t)) for t in accepted)
    assert not any(validator.is_valid(json.loads(t)) for t in rejected)


REFUSED = [
    ({"type": "array", "uniqueItems": True}, "uniqueItems"),
    ({"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, "uniqueItems"),
    ({"type": "array", "items": {"enum": list(range(17))}, "uniqueItems": True}, "uniqueItems"),
    ({"type": "array", "items": {"type": "boolean"}, "contains": {"const": True}, "uniqueItems": True}, "uniqueItems"),
    ({"type": "array", "prefixItems": [{"type": "boolean"}], "uniqueItems": True}, "uniqueItems"),
    ({"type": "array", "contains": {"enum": [[1], 2]}, "maxContains": 1}, "maxContains"),  # arrays other than [1]
    ({"type": "array", "prefixItems": [{}], "additionalItems": False}, "additionalItems"),
    ({"type": "array", "prefixItems": [{}], "maxItems": 1000}, "maxItems"),
    ({"contains": {"type": "null"}, "unevaluatedItems": False}, "unevaluatedItems"),
]


@pytest.mark.parametrize("schema,keyword", REFUSED)
def test_what_cannot_be_exact_is_refused(schema: dict, keyword: str) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == keyword


def test_arrays_that_admit_nothing_name_the_reason() -> None:
    with pytest.raises(gd.SchemaError, match="fewer items allowed"):
        gd.compile_json_schema({"type": "array", "prefixItems": [{}, False], "minItems": 3})
    with pytest.raises(gd.SchemaError, match="'contains' is false"):
        gd.compile_json_schema({"type": "array", "contains": False})


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 1.0, 2.5, "a", "b", True, False, None, [1], [], {}]), max_size=7),
       st.integers(0, 4), st.one_of(st.none(), st.integers(0, 5)), st.integers(0, 2))
def test_unique_items_are_judged_like_jsonschema(value: list, low: int, high: int | None, prefix: int) -> None:
    require("jsonschema")
    domain = {"enum": [0, 1, 2.5, "a", True, None, [1], {}]}
    schema: dict = {"type": "array", "prefixItems": [{"type": ["boolean", "null"]}] * prefix, "items": domain,
                    "uniqueItems": True, "minItems": low}
    if high is not None:
        schema["maxItems"] = high
    # 1.0 is the enum's 1, not written as one: a subset there
    _assert_judged_like_jsonschema(schema, value, subset=any(type(v) is float and v == 1 for v in value))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 6), st.none(), st.sampled_from([4.0, 3.5, 4.5])), max_size=6),
       st.integers(0, 3), st.one_of(st.none(), st.integers(0, 5)), st.integers(0, 2), st.one_of(st.none(), st.integers(0, 4)))
def test_contains_and_counts_are_judged_like_jsonschema(value: list, wanted: int, high: int | None,
                                                        prefix: int, most: int | None) -> None:
    require("jsonschema")
    schema: dict = {"type": "array", "prefixItems": [{"type": "integer"}] * prefix,
                    "items": {"type": ["number", "null"]}, "contains": {"type": "integer", "minimum": 4},
                    "minContains": wanted}
    if high is not None:
        schema["maxItems"] = high
    if most is not None:
        schema["maxContains"] = most
    # 4.0 is an integer not written as one: a subset there
    _assert_judged_like_jsonschema(schema, value, subset=any(isinstance(v, float) and v.is_integer() for v in value))


def _assert_judged_like_jsonschema(schema: dict, value: list, subset: bool) -> None:
    """The grammar accepts ``value`` exactly when jsonschema does (when ``subset``, only never
    where jsonschema rejects); a schema refused as admitting nothing has no valid value here."""
    valid = require("jsonschema").Draft202012Validator(schema).is_valid(value)
    try:
        grammar = gd.compile_json_schema(schema)
    except gd.SchemaError:
        assert not valid
        return
    accepted = grammar.accepts(json.dumps(value))
    if subset:
        assert valid or not accepted, (schema, value)
    else:
        assert accepted == valid, (schema, value)


MASK_CASES = [
    ({"prefixItems": [{"type": "integer"}, {"enum": ["a", "b"]}], "items": {"type": "boolean"}},
     ["[", "[1", "[1,", '[1,"', '[1,"a",', '[1,"a",t']),
    ({"type": "array", "items": {"type": "integer"}, "contains": {"const": 7}, "maxItems": 3},
     ["[", "[1,", "[1,2,", "[7,", "[1,7"]),
    ({"type": "array", "items": {"enum": ["ab", "a", 3, None]}, "uniqueItems": True},
     ["[", '["a', '["ab",', '["ab","a', "[3,null,", "[null,"]),
    ({"type": "array", "contains": {"enum": [7, "x"]}, "minContains": 1, "maxContains": 2},
     ["[", "[7,", "[7,7,", '[7,"x",', "[7,7,1,", "[7.5,", "[7.5"]),
]


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
@pytest.mark.parametrize("schema,prefixes", MASK_CASES)
def test_masks_equal_the_reference(request, vocab_name: str, schema: dict, prefixes: list[str]) -> None:
    assert_masks_equal_reference(schema, request.getfixturevalue(vocab_name), prefixes)


@pytest.mark.parametrize("schema", [
    {"type": "array", "prefixItems": [{"type": "string", "maxLength": 4}, {"type": "integer", "minimum": 0}],
     "items": {"type": "null"}, "maxItems": 4},
    {"type": "array", "items": {"enum": [1, 2, 3]}, "contains": {"const": 3}, "minContains": 2, "maxItems": 5},
])
def test_random_logits_documents_validate(gpt2: gd.Vocabulary, schema: dict) -> None:
    assert_random_documents_validate(schema, gpt2, seeds=6, max_tokens=80)
