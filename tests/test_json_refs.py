"""$ref within the document: $id base URIs, $anchor, draft-6/7 "#name" ids, JSON pointers inside
embedded resources; anything outside the document refused."""

from __future__ import annotations

import pytest

import grammar_decode as gd
from conftest import assert_language

REFS = [  # schema, accepted, rejected
    ({"$id": "https://example.com/root.json", "$defs": {"a": {"$id": "item.json", "type": "integer"}},
      "items": {"$ref": "item.json"}, "type": "array"}, ["[1,2]"], ['["x"]']),
    ({"$defs": {"a": {"$anchor": "num", "type": "number"}}, "$ref": "#num"}, ["1.5"], ['"x"']),
    ({"definitions": {"a": {"$id": "#str", "type": "string"}}, "properties": {"s": {"$ref": "#str"}}},
     ['{"s":"x"}'], ['{"s":1}']),
    ({"$id": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed",
      "$defs": {"b": {"type": "boolean"}}, "$ref": "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#/$defs/b"},
     ["true"], ["1"]),
    # a pointer inside an embedded resource is relative to that resource
    ({"$id": "http://x.org/", "$defs": {"inner": {"$id": "inner/", "$defs": {"t": {"type": "null"}},
                                                  "items": {"$ref": "#/$defs/t"}}}, "$ref": "inner/"},
     ["[null]"], ["[1]"]),
    # a relative $id nested twice
    ({"$id": "http://x.org/a/", "items": {"$id": "b/", "items": {"$ref": "c.json"}},
      "$defs": {"c": {"$id": "b/c.json", "type": "string"}}}, ['[["x"]]'], ["[[1]]"]),
]


@pytest.mark.parametrize("schema,accepted,rejected", REFS)
def test_references_resolve_within_the_document(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)


@pytest.mark.parametrize("schema", [
    {"$ref": "http://json-schema.org/draft-07/schema#"},
    {"$ref": "other.json#/$defs/a"},
    {"$id": "http://x.org/a.json", "$ref": "http://x.org/b.json"},
    # drafts disagree whether this $id moves the base of its sibling $ref
    {"$id": "http://x.org/base/", "$defs": {"f1": {"$id": "http://x.org/f.json", "type": "string"},
                                            "f2": {"$id": "f.json", "type": "number"}},
     "allOf": [{"$id": "http://x.org/", "$ref": "f.json"}]},
])
def test_references_outside_the_document_are_refused(schema: dict) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema)
    assert info.value.keyword == "$ref"


def test_a_missing_anchor_is_a_schema_error() -> None:
    with pytest.raises(gd.SchemaError, match="no anchor"):
        gd.compile_json_schema({"$ref": "#nowhere"})
