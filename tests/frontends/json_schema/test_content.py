"""Content ids: schema objects that mean the same share one, objects that may mean something else
never do, and the compiler's memos that read them keep every language exact."""

from __future__ import annotations

from typing import Any

import pytest

import grammar_decode as gd
from helpers import assert_language
from grammar_decode.frontends.json_schema.content import ContentIds
from grammar_decode.frontends.json_schema.keywords import NOT_STRINGS, SIDES


def _ids(context: Any = None) -> ContentIds:
    return ContentIds(context or (lambda schema: ("https://example.com/a.json", None)))


SAME = [  # two schemas that mean the same: one id
    ({"type": "string", "description": "a name"}, {"type": "string", "description": "another"}),
    ({"type": "string", "title": "x", "$comment": "y", "examples": ["z"]}, {"type": "string"}),
    ({"properties": {"a": {"type": "integer", "description": "one"}}},
     {"properties": {"a": {"type": "integer", "description": "two"}}}),
    ({"anyOf": [{"type": "null", "title": "n"}, {"minimum": 1}]}, {"anyOf": [{"type": "null"}, {"minimum": 1}]}),
    ({"$defs": {"x": {"type": "null"}}, "type": "boolean"}, {"type": "boolean"}),
    ({"items": [{"type": "null", "default": None}]}, {"items": [{"type": "null"}]}),
]

DIFFERENT = [  # two schemas that may mean something else: two ids
    ({"type": "string"}, {"type": "integer"}),
    ({"const": 1}, {"const": 1.0}),
    ({"const": 1}, {"const": True}),
    ({"const": 0.0}, {"const": -0.0}),
    ({"const": {"a": 1, "b": 2}}, {"const": {"b": 2, "a": 1}}),  # spelled in its own key order
    ({"properties": {"a": {}, "b": {}}}, {"properties": {"b": {}, "a": {}}}),  # keys written in this order
    ({"enum": [1, 2]}, {"enum": [2, 1]}),
    ({"required": ["a"]}, {"required": ["b"]}),
    # an annotation keyword's name as a property, or as data, is no annotation
    ({"properties": {"description": {"type": "null"}}}, {"properties": {"title": {"type": "null"}}}),
    ({"const": {"description": "x"}}, {"const": {"description": "y"}}),
    ({"properties": {"a": {"const": {"title": 1}}}}, {"properties": {"a": {"const": {"title": 2}}}}),
    ({"type": "string", NOT_STRINGS: ("a",)}, {"type": "string", NOT_STRINGS: ("b",)}),
    ({"type": "string", NOT_STRINGS: ("a",)}, {"type": "string"}),
    ({"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}),
]


@pytest.mark.parametrize("one,other", SAME)
def test_schemas_that_mean_the_same_share_an_id(one: dict, other: dict) -> None:
    ids = _ids()
    assert ids.schema(one) is not None
    assert ids.schema(one) == ids.schema(other)


@pytest.mark.parametrize("one,other", DIFFERENT)
def test_schemas_that_may_differ_get_different_ids(one: dict, other: dict) -> None:
    ids = _ids()
    assert ids.schema(one) is not None and ids.schema(other) is not None
    assert ids.schema(one) != ids.schema(other)


def test_the_resolution_context_is_part_of_the_id() -> None:
    """The same ``$ref`` text in two resources points at two schemas."""
    one, other = {"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}
    bases = {id(one): "https://example.com/a.json", id(other): "https://example.com/b.json"}
    ids = ContentIds(lambda schema: (bases.get(id(schema), "https://example.com/a.json"), None))
    assert ids.schema(one) != ids.schema(other)
    # and of the dicts inside: the same outer content around references read from elsewhere
    outer_one, outer_other = {"items": one}, {"items": other}
    assert ids.schema(outer_one) != ids.schema(outer_other)


def test_a_part_is_its_schema_less_the_keywords_taken_out() -> None:
    ids = _ids()
    assert ids.part({"type": "string", "anyOf": [{"minLength": 1}]}, frozenset({"anyOf"})) == \
        ids.schema({"type": "string"})
    assert ids.part({"type": "string", "anyOf": [{"minLength": 1}]}, frozenset()) != ids.schema({"type": "string"})


def test_values_without_a_content_id() -> None:
    ids = _ids()
    assert ids.schema({"type": "string", SIDES: (object(),)}) is None
    cyclic: dict[str, Any] = {"type": "object"}
    cyclic["properties"] = {"self": cyclic}
    assert ids.schema(cyclic) is None
    deep: Any = {"type": "null"}
    for _ in range(100_000):
        deep = {"items": deep}
    assert ids.schema(deep) is None  # deeper than the interpreter's stack: identity only


def test_a_changed_dict_is_keyed_again() -> None:
    ids = _ids()
    schema: dict[str, Any] = {"type": "string"}
    first = ids.schema(schema)
    schema["maxLength"] = 3
    assert ids.schema(schema) != first


# -- the compiler's memos ----------------------------------------------------------------------

def test_twins_compile_to_one_rule() -> None:
    """Properties that differ only in their annotations share one rule."""
    same = {"type": "object", "properties": {f"p{i}": {"type": "string", "maxLength": 5, "description": f"#{i}"}
                                             for i in range(20)}}
    distinct = {"type": "object", "properties": {f"p{i}": {"type": "string", "maxLength": 5 + i}
                                                 for i in range(20)}}
    assert len(gd.compile_json_schema(same).ir.rule_names) < len(gd.compile_json_schema(distinct).ir.rule_names) - 15


def test_a_twin_keeps_its_own_errors() -> None:
    """A memo hit by content still checks the schema's own keywords: the error does not depend on
    which twin came first."""
    for first, second in ((("a", {"type": "string"}), ("b", {"type": "string", "$defs": 5})),
                          (("b", {"type": "string", "$defs": 5}), ("a", {"type": "string"}))):
        with pytest.raises(gd.SchemaError, match=r"'\$defs' must be an object"):
            gd.compile_json_schema({"properties": dict([first, second])})


LANGUAGES = [  # schema, accepted, rejected: twins and near-twins side by side
    ({"type": "object", "properties": {"a": {"const": {"x": 1, "y": 2}}, "b": {"const": {"y": 2, "x": 1}}},
      "required": ["a", "b"], "additionalProperties": False},
     ['{"a":{"x":1,"y":2},"b":{"y":2,"x":1}}'], ['{"a":{"y":2,"x":1},"b":{"y":2,"x":1}}']),
    ({"type": "object", "properties": {"a": {"const": 1}, "b": {"const": 1.0}, "c": {"const": True}},
      "required": ["a", "c"]},
     ['{"a":1,"c":true}', '{"a":1,"b":1.0,"c":true}'], ['{"a":true,"c":true}', '{"a":1,"c":1}']),
    ({"$defs": {"a": {"allOf": [{"type": "string"}, {"description": "x", "maxLength": 2}]},
                "b": {"allOf": [{"type": "string"}, {"description": "y", "maxLength": 3}]}},
      "type": "array", "prefixItems": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}], "items": False},
     ['["ab","abc"]'], ['["abc","abc"]', '["ab","abcd"]']),
    # the same relative reference in two resources reaches two schemas
    ({"$id": "https://example.com/root.json", "type": "array", "items": False, "prefixItems": [
        {"$id": "one/x.json", "allOf": [{"$ref": "#/$defs/t"}, {"maxLength": 3}], "$defs": {"t": {"type": "string"}}},
        {"$id": "two/x.json", "allOf": [{"$ref": "#/$defs/t"}, {"maxLength": 3}], "$defs": {"t": {"type": "integer"}}},
    ]}, ['["abc",12]'], ['[12,12]', '["abc","abc"]']),
]


@pytest.mark.parametrize("schema,accepted,rejected", LANGUAGES)
def test_languages_with_twins_stay_exact(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)
