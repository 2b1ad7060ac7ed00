"""Each draft's vocabulary, exactly: the tables agree with ``jsonschema``'s validator of each draft,
a keyword of another draft is an annotation, and a document with no draft named is read only
where its candidate drafts agree."""

from __future__ import annotations

import json

import pytest

from helpers import require

import grammar_decode as gd
from grammar_decode.frontends.json_schema.drafts import DRAFT_KEYWORDS, DRAFTS, VALIDATOR_NAMES, VOCABULARIES, candidate_drafts

#: Keywords a draft's validator reads beside another one's (not functions of their own), and
#: draft 7's content keywords, which that draft lets a validator assert (``jsonschema`` does not;
#: the suite's optional tests do, so they are refused there rather than ignored).
COMPANIONS = {"4": {"exclusiveMaximum", "exclusiveMinimum"}, "6": set(),
              "7": {"then", "else", "contentMediaType", "contentEncoding"},
              "2019-09": {"then", "else", "minContains", "maxContains"},
              "2020-12": {"then", "else", "minContains", "maxContains"}}


@pytest.mark.parametrize("draft", DRAFTS)
def test_each_vocabulary_is_its_validators(draft: str) -> None:
    jsonschema = require("jsonschema")
    validator = getattr(jsonschema, VALIDATOR_NAMES[draft])
    assert VOCABULARIES[draft] == set(validator.VALIDATORS) | COMPANIONS[draft]


# A schema per draft keyword, and values that tell its readings apart.
KEYWORD_SCHEMAS = [
    {"const": 1},
    {"not": {"const": 1}},
    {"type": "array", "contains": {"const": 1}},
    {"type": "array", "contains": {"const": 1}, "minContains": 0},
    {"type": "array", "contains": {"const": 1}, "minContains": 2},
    {"type": "array", "contains": {"const": 1}, "maxContains": 1},
    {"type": "object", "propertyNames": {"maxLength": 1}},
    {"type": "integer", "if": {"minimum": 5}, "then": {"maximum": 6}, "else": {"maximum": 1}},
    {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
    {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}},
    {"type": "array", "items": {"type": "integer"}, "additionalItems": {"type": "string"}},
    {"type": "object", "dependentRequired": {"a": ["b"]}},
    {"type": "object", "dependencies": {"a": ["b"]}},
    {"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}},
    {"type": "integer", "maximum": 10, "exclusiveMaximum": True},
    {"type": "integer", "minimum": 1, "exclusiveMinimum": False},
    {"type": "integer", "exclusiveMaximum": 10},
    {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": False},
    {"type": "array", "prefixItems": [{}], "unevaluatedItems": False},
]
VALUES = [None, 0, 1, 2, 5, 6, 7, 9, 10, 11, "a", [], [1], [2], [1, 1], [1, 2], ["a"], ["a", 1], ["a", "b"], [1, "a"],
          {}, {"a": 1}, {"a": 1, "b": 2}, {"ab": 1}, {"b": 1}]


@pytest.mark.parametrize("draft", DRAFTS)
@pytest.mark.parametrize("schema", KEYWORD_SCHEMAS, ids=lambda s: json.dumps(s)[:60])
def test_a_named_draft_reads_exactly_its_own_vocabulary(schema: dict, draft: str) -> None:
    """Accepted exactly where the draft's own validator says valid, or a typed refusal where
    the schema is invalid under that draft."""
    jsonschema = require("jsonschema")
    validator = getattr(jsonschema, VALIDATOR_NAMES[draft])
    try:
        grammar = gd.compile_json_schema(schema, draft=draft)
    except gd.SchemaError:
        # invalid under the draft (a boolean bound in 6+, a number in 4), or admitting nothing
        invalid = not validator.META_SCHEMA or not validator(validator.META_SCHEMA).is_valid(schema)
        assert invalid or not any(validator(schema).is_valid(v) for v in VALUES), schema
        return
    for value in VALUES:
        accepted, valid = grammar.accepts(json.dumps(value)), validator(schema).is_valid(value)
        if "dependencies" in schema and draft in ("2019-09", "2020-12"):
            assert valid or not accepted, (value, schema, draft)  # enforced, though this validator ignores it
        else:
            assert accepted == valid, (value, schema, draft)


ISSUE_CASES = [  # schema, draft, accepted, rejected
    ({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}, "7", ["[1, 2]"],
     ['["a"]']),
    ({"type": "array", "contains": {"const": 1}, "minContains": 0}, "7", ["[1]"], ["[]"]),
    ({"type": "array", "contains": {"const": 1}, "minContains": 0}, "2019-09", ["[1]", "[]"], ["1"]),
    ({"type": "integer", "maximum": 10, "exclusiveMaximum": True}, "4", ["9"], ["10"]),
]


@pytest.mark.parametrize("schema,draft,accepted,rejected", ISSUE_CASES)
def test_later_keywords_are_annotations_under_earlier_drafts(schema: dict, draft: str, accepted: list[str],
                                                             rejected: list[str]) -> None:
    grammar = gd.compile_json_schema(schema, draft=draft)
    assert all(grammar.accepts(t) for t in accepted) and not any(grammar.accepts(t) for t in rejected)


def test_draft_4_has_no_const_so_not_const_admits_nothing() -> None:
    with pytest.raises(gd.SchemaError, match="admits no document"):
        gd.compile_json_schema({"not": {"const": 1}}, draft="4")
    assert gd.compile_json_schema({"not": {"const": 1}}, draft="6").accepts("2")


@pytest.mark.parametrize("draft", ["6", "7", "2019-09", "2020-12"])
def test_a_boolean_bound_is_invalid_after_draft_4(draft: str) -> None:
    with pytest.raises(gd.SchemaError, match="exclusiveMaximum"):
        gd.compile_json_schema({"maximum": 10, "exclusiveMaximum": True}, draft=draft)


def test_an_items_array_is_invalid_under_2020_12() -> None:
    with pytest.raises(gd.SchemaError, match="prefixItems"):
        gd.compile_json_schema({"items": [{"type": "string"}]}, draft="2020-12")


# -- no draft named -----------------------------------------------------------------------------

@pytest.mark.parametrize("schema,candidates", [
    ({"type": "string"}, DRAFTS),
    ({"const": 1}, ("6", "7", "2019-09", "2020-12")),
    ({"if": {"const": 1}, "then": {}}, ("7", "2019-09", "2020-12")),
    ({"items": [{}], "additionalItems": False}, ("4", "6", "7", "2019-09")),
    ({"prefixItems": [{}]}, ("2020-12",)),
    ({"dependencies": {"a": ["b"]}}, DRAFTS),  # enforced everywhere (ENFORCED_EVERYWHERE)
    ({"properties": {"a": {"dependentRequired": {"b": ["c"]}}}}, ("2019-09", "2020-12")),
    ({"enum": [{"prefixItems": 1}], "examples": [{"const": 1}]}, DRAFTS),  # values are not schemas
])
def test_candidate_drafts_are_those_holding_every_keyword(schema: dict, candidates: tuple) -> None:
    assert candidate_drafts(schema) == candidates


@pytest.mark.parametrize("schema", [
    {"minimum": 0, "exclusiveMinimum": True},
    {"properties": {"a": {"maximum": 0, "exclusiveMaximum": False}}},
    {"prefixItems": [{}], "additionalItems": False},
    {"items": [{}], "unevaluatedItems": False, "properties": {"x": {"prefixItems": []}}},
])
def test_with_no_draft_named_a_reading_the_drafts_do_not_share_is_refused(schema: dict) -> None:
    with pytest.raises(gd.UnsupportedSchemaError, match="draft"):
        gd.compile_json_schema(schema)


@pytest.mark.parametrize("schema", [s for s in KEYWORD_SCHEMAS if not any(
    isinstance(v, bool) for k, v in s.items() if k.startswith("exclusive"))] + [{"not": {"exclusiveMaximum": 5}}],
    ids=lambda s: json.dumps(s)[:60])
def test_with_no_draft_named_what_is_accepted_is_valid_under_every_candidate(schema: dict) -> None:
    jsonschema = require("jsonschema")
    try:
        grammar = gd.compile_json_schema(schema)
    except gd.UnsupportedSchemaError:
        return
    for draft in candidate_drafts(schema):
        validator = getattr(jsonschema, VALIDATOR_NAMES[draft])(schema)
        for value in VALUES:
            if grammar.accepts(json.dumps(value)):
                assert validator.is_valid(value), (value, schema, draft)


def test_every_draft_keyword_is_in_some_vocabulary() -> None:
    assert DRAFT_KEYWORDS == set().union(*VOCABULARIES.values())
