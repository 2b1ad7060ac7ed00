"""$ref within the document: $id base URIs, $anchor, draft-6/7 "#name" ids, JSON pointers inside
embedded resources; other documents where the caller supplies them (``resources=``, ``base_uri=``);
anything else outside the document refused."""

from __future__ import annotations

import json
from urllib.parse import urljoin

import pytest

import grammar_decode as gd
from helpers import assert_language, require
from grammar_decode.frontends.json_schema.drafts import VALIDATOR_NAMES

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
                                                  "items": {"$ref": "#/$defs/t"}}},
      "allOf": [{"$ref": "inner/"}]}, ["[null]"], ["[1]"]),
    # a relative $id nested twice
    ({"$id": "http://x.org/a/", "items": {"$id": "b/", "items": {"$ref": "c.json"}},
      "$defs": {"c": {"$id": "b/c.json", "type": "string"}}}, ['[["x"]]'], ["[[1]]"]),
]


@pytest.mark.parametrize("schema,accepted,rejected", REFS)
def test_references_resolve_within_the_document(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)


def test_a_root_ref_beside_id_is_read_as_each_draft_reads_it() -> None:
    """Drafts 4-7 ignore the root's ``$id`` beside its ``$ref`` (the document stays at its own
    URI), later drafts do not: a fragment resolves either way; a relative reference that only
    the later reading resolves needs the draft named."""
    schema = {"$id": "http://x.org/", "definitions": {"t": {"type": "null"}}, "$ref": "#/definitions/t"}
    assert_language(schema, ["null"], ["1"])
    schema = {"$id": "http://x.org/", "$defs": {"inner": {"$id": "inner/", "type": "null"}}, "$ref": "inner/"}
    with pytest.raises(gd.UnsupportedSchemaError, match="resolves differently"):
        gd.compile_json_schema(schema)
    grammar = gd.compile_json_schema(schema, draft="2020-12")
    assert grammar.accepts("null") and not grammar.accepts("1")


@pytest.mark.parametrize("schema", [
    {"$ref": "http://json-schema.org/draft-05/schema#"},  # no such draft: not packaged
    {"$ref": "other.json#/$defs/a"},
    {"$id": "http://x.org/a.json", "$ref": "defs.json"},  # a resource exists, but not at this URI
    {"$id": "http://x.org/a.json", "$ref": "http://x.org/b.json"},
    # drafts disagree whether this $id moves the base of its sibling $ref
    {"$id": "http://x.org/base/", "$defs": {"f1": {"$id": "http://x.org/f.json", "type": "string"},
                                            "f2": {"$id": "f.json", "type": "number"}},
     "allOf": [{"$id": "http://x.org/", "$ref": "f.json"}]},
])
def test_references_outside_the_document_are_refused(schema: dict) -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema(schema, resources={"http://y.org/defs.json": {"type": "string"}})
    assert info.value.keyword == "$ref"
    # outside every document supplied, or (the last case) read differently by the drafts
    assert ("no resource supplies" in str(info.value)) != ("resolves differently" in str(info.value))


def test_a_missing_anchor_is_a_schema_error() -> None:
    with pytest.raises(gd.SchemaError, match="no anchor"):
        gd.compile_json_schema({"$ref": "#nowhere"})


# -- drafts: what changes with the draft a document is read under ---------------------------------

_INT_DEFS = {"definitions": {"a": {"type": "integer"}}}
DRAFT_CASES = [  # schema, draft, accepted, rejected (each checked against that draft's validator too)
    # drafts 4-7 ignore the keywords beside $ref; 2019-09 on applies them
    ({"$ref": "#/definitions/a", "maximum": 5, **_INT_DEFS}, "7", ["3", "10"], ['"x"', "1.5"]),
    ({"$ref": "#/definitions/a", "maximum": 5, **_INT_DEFS}, "4", ["10"], ['"x"']),
    ({"$ref": "#/definitions/a", "maximum": 5, **_INT_DEFS}, "2019-09", ["3"], ["10", '"x"']),
    ({"$ref": "#/definitions/a", "maximum": 5, **_INT_DEFS}, None, ["3"], ["10", '"x"']),
    # ... an $id beside $ref included: the base stays the outer one in drafts 4-7
    ({"$id": "http://x.org/a/", "definitions": {"f": {"$id": "http://x.org/a/f.json", "type": "string"},
                                                "g": {"$id": "http://x.org/b/f.json", "type": "integer"}},
      "properties": {"p": {"$id": "http://x.org/b/", "$ref": "f.json"}}}, "7", ['{"p":"s"}'], ['{"p":1}']),
    ({"$id": "http://x.org/a/", "$defs": {"f": {"$id": "http://x.org/a/f.json", "type": "string"},
                                          "g": {"$id": "http://x.org/b/f.json", "type": "integer"}},
      "properties": {"p": {"$id": "http://x.org/b/", "$ref": "f.json"}}}, "2020-12", ['{"p":1}'], ['{"p":"s"}']),
    # draft 4 spells $id as id, anchors included
    ({"id": "http://x.org/root.json", "definitions": {"s": {"id": "s.json", "type": "string"},
                                                     "n": {"id": "#num", "type": "number"}},
      "properties": {"s": {"$ref": "s.json"}, "n": {"$ref": "#num"}}}, "4",
     ['{"s":"x","n":1.5}'], ['{"s":1}', '{"n":"x"}']),
    # a bare fragment stays in a urn: resource
    ({"$id": "urn:uuid:deadbeef-1234-00ff-ff00-4321feebdaed", "properties": {"foo": {"$ref": "#/$defs/bar"}},
      "$defs": {"bar": {"type": "string"}}}, "2020-12", ['{"foo":"x"}'], ['{"foo":1}']),
    ({"$id": "urn:example:1/406/47452/2", "properties": {"foo": {"$ref": "#/definitions/bar"}},
      "definitions": {"bar": {"type": "string"}}}, None, ['{"foo":"x"}'], ['{"foo":1}']),
    # $dynamicAnchor is a plain anchor for $ref
    ({"$defs": {"i": {"$dynamicAnchor": "items", "type": "string"}}, "items": {"$ref": "#items"}}, "2020-12",
     ['["a"]'], ["[1]"]),
]


@pytest.mark.parametrize("schema,draft,accepted,rejected", DRAFT_CASES)
def test_each_draft_reads_references_as_its_validator_does(schema: dict, draft: str | None, accepted: list[str],
                                                           rejected: list[str]) -> None:
    grammar = gd.compile_json_schema(schema, draft=draft)
    for text in accepted:
        assert grammar.accepts(text), text
    for text in rejected:
        assert not grammar.accepts(text), text


@pytest.mark.parametrize("schema,draft,accepted,rejected", DRAFT_CASES)
def test_the_draft_tables_agree_with_each_drafts_validator(schema: dict, draft: str | None, accepted: list[str],
                                                           rejected: list[str]) -> None:
    """What the tables accept is valid under the draft named (under every draft when none is)."""
    import json

    jsonschema = require("jsonschema")
    for name in [draft] if draft is not None else list(VALIDATOR_NAMES):
        judge = getattr(jsonschema, VALIDATOR_NAMES[name])(schema)
        for text in accepted:
            assert judge.is_valid(json.loads(text)), (name, text)


def test_the_root_schema_keyword_names_the_draft() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/definitions/a", "maximum": 5,
              **_INT_DEFS}
    assert gd.compile_json_schema(schema).accepts("10")
    assert not gd.compile_json_schema(schema, draft="2020-12").accepts("10")  # the argument wins
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    assert not gd.compile_json_schema(schema).accepts("10")
    schema["$schema"] = "https://example.com/my-metaschema"  # unknown: every draft's reading
    assert not gd.compile_json_schema(schema).accepts("10")


@pytest.mark.parametrize("schema,draft", [
    ({"id": "http://x.org/", "type": "string"}, None),  # no reference: draft 4 and later agree
    ({"id": "http://x.org/", "type": "string"}, "7"),  # an annotation under draft 7
    ({"id": "http://x.org/", "$ref": "#/definitions/s", "definitions": {"s": {"type": "string"}}}, None),
    ({"properties": {"p": {"id": "http://x.org/", "type": "string"}}, "const": {"p": "a"}}, None),  # not draft 4
])
def test_an_id_that_cannot_change_a_reference_is_an_annotation(schema: dict, draft: str | None) -> None:
    grammar = gd.compile_json_schema(schema, draft=draft)
    assert grammar.accepts('"a"') or grammar.accepts('{"p":"a"}')


@pytest.mark.parametrize("schema,draft,error,keyword", [
    # draft 4 reads "id" as a base URI, later drafts ignore it: refused where references could differ
    ({"id": "http://x.org/", "items": {"$ref": "a.json"}}, None, gd.UnsupportedSchemaError, "id"),
    ({"properties": {"p": {"id": "http://x.org/", "items": {"$ref": "#/definitions/a"}}}}, None,
     gd.UnsupportedSchemaError, "id"),
    ({"$defs": {"a": {"$anchor": "a", "type": "null"}}, "$ref": "#a"}, "7", gd.SchemaError, None),  # no $anchor
    ({"$defs": {"a": {"$id": "#a", "type": "null"}}, "$ref": "#a"}, "2020-12", gd.SchemaError, None),
    ({"$defs": {"a": {"$dynamicAnchor": "a", "type": "null"}}, "$ref": "#a"}, "2019-09", gd.SchemaError, None),
    ({"$schema": "https://json-schema.org/draft/2020-12/schema",
      "properties": {"p": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "null"}}}, None,
     gd.UnsupportedSchemaError, "$schema"),
    ({"$defs": {"d": {"$dynamicAnchor": "d", "type": "null"}}, "items": {"$dynamicRef": "#d"}}, "2020-12",
     gd.UnsupportedSchemaError, "$dynamicRef"),
    # drafts 4-7 know no $defs: an $id under it names no resource there
    ({"$id": "http://x.org/", "$defs": {"a": {"$id": "a.json", "type": "null"}}, "items": {"$ref": "a.json"}}, "7",
     gd.UnsupportedSchemaError, "$ref"),
])
def test_identifiers_a_draft_does_not_know_are_errors(schema: dict, draft: str | None, error: type,
                                                      keyword: str | None) -> None:
    with pytest.raises(error) as info:
        gd.compile_json_schema(schema, draft=draft)
    if keyword is not None:
        assert info.value.keyword == keyword


def test_an_unknown_draft_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="draft"):
        gd.compile_json_schema({"type": "null"}, draft="draft7")


def test_a_reference_to_a_drafts_metaschema_reads_the_packaged_copy() -> None:
    """``jsonschema-specifications`` ships the metaschemas as data: a ``$ref`` to draft 7's is
    compiled from it (never fetched), and judged like ``jsonschema``."""
    jsonschema = require("jsonschema")
    require("jsonschema_specifications")
    schema = {"$schema": "http://json-schema.org/draft-07/schema#",
              "properties": {"s": {"$ref": "http://json-schema.org/draft-07/schema#"}}}
    grammar = gd.compile_json_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    for text in ['{"s":{"type":"string"}}', '{"s":{"type":"strin"}}', '{"s":{"minLength":-1}}', '{"s":true}',
                 '{"s":{"required":["a","a"]}}', '{"s":{"enum":[]}}', '{"s":{"properties":{"a":{"maximum":"x"}}}}']:
        assert grammar.accepts(text) == validator.is_valid(json.loads(text)), text


# -- other documents: resources= and base_uri= ------------------------------------------------------

_DEFS = {"$id": "https://example.com/schemas/defs.json",
         "definitions": {"name": {"type": "string", "maxLength": 3},
                         "pair": {"type": "array", "items": {"$ref": "#/definitions/name"}, "maxItems": 2},
                         "tagged": {"$id": "tagged.json", "enum": ["a", "b"]},
                         "next": {"$ref": "more.json#/definitions/flag"}}}
_MORE = {"definitions": {"flag": {"type": "boolean"}}}
_RESOURCES = {"https://example.com/schemas/defs.json": _DEFS, "https://example.com/schemas/more.json#": _MORE}

RESOURCE_CASES = [  # schema, base_uri, accepted, rejected
    ({"$id": "https://example.com/schemas/main.json", "allOf": [{"$ref": "defs.json#/definitions/name"}]}, "",
     ['"abc"'], ['"abcd"', "1"]),
    # a pointer inside the other document stays relative to it, and so do its own $refs
    ({"$id": "https://example.com/schemas/main.json", "items": {"$ref": "defs.json#/definitions/pair"}}, "",
     ['[["a","bc"]]', "[[]]"], ['[["abcd"]]', '[["a","b","c"]]']),
    # a chain of documents; an $id embedded in one names a resource once it is reached
    ({"$id": "https://example.com/schemas/main.json",
      "properties": {"f": {"$ref": "defs.json#/definitions/next"}, "t": {"$ref": "tagged.json"}}}, "",
     ['{"f":true,"t":"a"}'], ['{"t":"c"}', '{"f":1}']),
    # no $id: relative references resolve against base_uri
    ({"items": {"$ref": "schemas/defs.json#/definitions/name"}}, "https://example.com/index.json",
     ['["ab"]'], ['["abcd"]']),
    # a root $id resolves against base_uri and overrides it
    ({"$id": "schemas/", "not": {"$ref": "defs.json#/definitions/name"}}, "https://example.com/", ["1"], ['"x"']),
]


@pytest.mark.parametrize("schema,base_uri,accepted,rejected", RESOURCE_CASES)
def test_references_reach_the_documents_supplied(schema: dict, base_uri: str, accepted: list[str],
                                                 rejected: list[str]) -> None:
    """Judged by ``jsonschema`` with the same documents in a ``referencing`` registry."""
    jsonschema = require("jsonschema")
    referencing = require("referencing")
    grammar = gd.compile_json_schema(schema, resources=_RESOURCES, base_uri=base_uri)
    uri = base_uri or schema["$id"]
    # the judge's registry reads a relative root $id as given: resolve it for the judge
    judged = dict(schema, **{"$id": urljoin(uri, schema["$id"])}) if "$id" in schema else schema
    uri = judged.get("$id", uri)
    documents = dict(_RESOURCES, **{uri: judged})
    registry = referencing.Registry().with_resources(
        (key.rstrip("#"), referencing.Resource.from_contents(doc, default_specification=referencing.jsonschema.DRAFT7))
        for key, doc in documents.items())
    validator = jsonschema.Draft7Validator({"$ref": uri}, registry=registry)
    for text in accepted + rejected:
        assert grammar.accepts(text) == (text in accepted) == validator.is_valid(json.loads(text)), text


def test_a_root_id_beside_ref_moves_its_base_only_from_2019_09_on() -> None:
    """Drafts 4-7 ignore an ``$id`` beside ``$ref``, the root's too: the reference resolves
    against ``base_uri`` there, against the ``$id`` later; read under no draft, the two readings
    must agree, and here they do not."""
    schema = {"$id": "https://example.com/schemas/", "$ref": "defs.json#/definitions/name"}
    resources = dict(_RESOURCES, **{"https://example.com/defs.json": {"definitions": {"name": {"type": "null"}}}})
    seven = gd.compile_json_schema(schema, resources=resources, base_uri="https://example.com/", draft="7")
    later = gd.compile_json_schema(schema, resources=resources, base_uri="https://example.com/", draft="2020-12")
    assert seven.accepts("null") and not seven.accepts('"a"')
    assert later.accepts('"a"') and not later.accepts("null")
    with pytest.raises(gd.UnsupportedSchemaError, match="resolves differently"):
        gd.compile_json_schema(schema, resources=resources, base_uri="https://example.com/")


def test_an_id_inside_a_document_not_reached_is_not_searched_for() -> None:
    with pytest.raises(gd.UnsupportedSchemaError, match="under its own URI"):
        gd.compile_json_schema({"$id": "https://example.com/schemas/main.json", "items": {"$ref": "tagged.json"}},
                               resources=_RESOURCES)
    grammar = gd.compile_json_schema({"$id": "https://example.com/schemas/main.json", "items": {"$ref": "tagged.json"}},
                                     resources=dict(_RESOURCES, **{"https://example.com/schemas/tagged.json":
                                                                   _DEFS["definitions"]["tagged"]}))
    assert grammar.accepts('["a"]') and not grammar.accepts('["c"]')


def test_a_relative_resource_key_serves_a_document_without_an_id() -> None:
    grammar = gd.compile_json_schema({"$ref": "defs.json#/n"}, resources={"defs.json": {"n": {"type": "null"}}})
    assert grammar.accepts("null") and not grammar.accepts("1")


def test_a_resource_declaring_another_draft_is_refused() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "$id": "http://x.org/a.json",
              "allOf": [{"$ref": "b.json"}]}
    other = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer"}
    with pytest.raises(gd.UnsupportedSchemaError, match="draft-04.*draft 7") as info:
        gd.compile_json_schema(schema, resources={"http://x.org/b.json": other})
    assert info.value.keyword == "$ref"
    # read under no draft, the two must fit one draft
    with pytest.raises(gd.UnsupportedSchemaError, match="no single draft"):
        gd.compile_json_schema({"$id": "http://x.org/a.json", "prefixItems": [{}], "items": {"$ref": "b.json"}},
                               resources={"http://x.org/b.json": {"dependencies": {"a": ["b"]}, "items": [{}]}})
    with pytest.raises(gd.UnsupportedSchemaError, match="draft 3"):
        gd.compile_json_schema({"$id": "http://x.org/a.json", "allOf": [{"$ref": "b.json"}]},
                               resources={"http://x.org/b.json": {"$schema": "http://json-schema.org/draft-03/schema#"}})


@pytest.mark.parametrize("resources,error", [
    ([("http://x.org/a.json", {})], TypeError),
    ({1: {}}, TypeError),
    ({"http://x.org/a.json": "{}"}, TypeError),
    ({"http://x.org/a.json#/definitions": {}}, ValueError),
    ({"": {}}, ValueError),
])
def test_bad_resources_are_typed_errors(resources: object, error: type) -> None:
    with pytest.raises(error, match="resources"):
        gd.compile_json_schema({"type": "null"}, resources=resources)  # type: ignore[arg-type]


def test_resources_are_read_not_changed() -> None:
    before = json.dumps(_RESOURCES, sort_keys=True)
    gd.compile_json_schema({"$id": "https://example.com/schemas/m.json", "items": {"$ref": "defs.json#/definitions/pair"}},
                           resources=_RESOURCES)
    assert json.dumps(_RESOURCES, sort_keys=True) == before
