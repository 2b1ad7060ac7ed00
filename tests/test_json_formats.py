"""``format``: every string the grammar admits passes jsonschema's format checker, near misses
are refused, unknown formats raise, and ``formats="annotation"`` ignores the keyword."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from conftest import assert_masks_equal_reference, assert_random_documents_validate, require
from grammar_decode.frontends.json_formats import FORMATS

jsonschema = require("jsonschema")
require("rfc3339_validator")  # jsonschema checks date-time and time only with it
require("fqdn")  # ... and hostname only with it

# the draft 2020-12 checkers (a bare FormatChecker() mixes in draft 3's "time", which refuses offsets)
CHECKER = jsonschema.Draft202012Validator.FORMAT_CHECKER


@pytest.mark.parametrize("name", sorted(FORMATS))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_every_admitted_string_passes_the_checker(name: str, data: st.DataObject) -> None:
    text = data.draw(st.from_regex(FORMATS[name], fullmatch=True))
    grammar = _grammar(name)
    assert grammar.accepts(json.dumps(text)), text
    assert CHECKER.conforms(text, name), text


REJECTED = {
    "date": ["2023-02-29", "1900-02-29", "0000-01-01", "2024-04-31", "2024-13-01", "2024-1-01", "2024-01-01T00:00:00Z",
             "24-01-01", "2024-01-00"],
    "time": ["24:00:00Z", "12:60:00Z", "12:00:61Z", "12:00:00", "12:00:00+24:00", "1:00:00Z", "12:00:00.Z"],
    "date-time": ["2024-02-30T00:00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00"],
    "uuid": ["2eb8aa08-aa98-11ea-b4aa-73b441d1638", "2eb8aa08aa9811eab4aa73b441d16380", "{2eb8aa08-aa98-11ea-b4aa-73b441d16380}",
             "2eb8aa08-aa98-11ea-b4aa-73b441d1638g"],
    "ipv4": ["256.0.0.1", "01.2.3.4", "1.2.3", "1.2.3.4.5", "1.2.3.04", " 1.2.3.4"],
    "hostname": ["-a.com", "a-.com", "a..b", "a.", "a_b.com", "x" * 64 + ".com", ".".join(["abc"] * 64), "",
                 "a b"],
    "ipv6": ["1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "::1%eth0", ":::", "1:2:3:4:5:6:7", "g::1", "::ffff:1.2.3.4"],
    "email": ["plain", "@example.com", "a@", ".a@example.com", "a.@example.com", "a..b@example.com", "a@-x.com",
              "a@x-.com"],
}
ACCEPTED = {
    "date": ["2024-02-29", "2000-02-29", "0004-02-29", "9999-12-31", "0001-01-01"],
    "time": ["23:59:59Z", "00:00:00.123456+05:30", "12:00:00-23:59"],
    "date-time": ["2024-02-29T23:59:59.5Z", "1963-06-19T08:30:06+01:00"],
    "uuid": ["2EB8AA08-AA98-11ea-b4aa-73b441d16380"],
    "ipv4": ["0.0.0.0", "255.255.255.255", "192.168.0.1"],
    "email": ["joe.bloggs@example.com", "a+b@x.io", "x@localhost"],
    "hostname": ["localhost", "a-b.example.COM", "x" * 63 + ".io", ".".join(["abc"] * 63), "1.2.3.4"],
    "ipv6": ["::", "::1", "1::", "fe80::1:2", "1:2:3:4:5:6:7:8", "ABCD:ef01::9"],
}


def _grammar(name: str) -> gd.CompiledGrammar:
    return gd.compile_json_schema({"type": "string", "format": name})


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_table(name: str) -> None:
    grammar = _grammar(name)
    for text in ACCEPTED[name]:
        assert grammar.accepts(json.dumps(text)), text
        assert CHECKER.conforms(text, name), text
    for text in REJECTED[name]:
        assert not grammar.accepts(json.dumps(text)), text


def test_escaped_spellings_count_as_the_characters_they_decode_to() -> None:
    grammar = _grammar("date")
    assert grammar.accepts('"2024-02-\\u00329"')
    assert not grammar.accepts('"2023-02-\\u00329"')


def test_format_with_lengths_and_pattern_is_the_intersection() -> None:
    grammar = gd.compile_json_schema({"type": "string", "format": "email", "maxLength": 8, "pattern": "^a"})
    assert grammar.accepts('"a@b.co"')
    assert not grammar.accepts('"b@c.co"') and not grammar.accepts('"ab@cd.efg"')


def test_unknown_formats_are_refused_or_read_as_annotations() -> None:
    with pytest.raises(gd.UnsupportedSchemaError) as info:
        gd.compile_json_schema({"type": "string", "format": "uri"})
    assert info.value.keyword == "format"
    loose = gd.compile_json_schema({"type": "string", "format": "uri"}, formats="annotation")
    assert loose.accepts('"--"')
    assert gd.compile_json_schema({"type": "string", "format": "date"}, formats="annotation").accepts('"x"')
    with pytest.raises(ValueError):
        gd.compile_json_schema({"type": "string"}, formats="ignore")


def test_format_only_constrains_strings() -> None:
    grammar = gd.compile_json_schema({"format": "date"})
    assert grammar.accepts("12") and grammar.accepts("null") and not grammar.accepts('"x"')


@pytest.mark.parametrize("name,prefixes", [
    ("date-time", ['"', '"2024', '"2024-02-2', '"2023-02-2', '"2024-02-29T23:5', '"2024-02-29T23:59:59.1']),
    ("hostname", ['"', '"a', '"a-', '"a.b', '"' + "x" * 63]),
    ("ipv6", ['"', '"::', '"fe80::', '"1:2:3:4:5:6:7', '"1::2:']),
])
def test_masks_equal_the_reference(gpt2: gd.Vocabulary, name: str, prefixes: list[str]) -> None:
    assert_masks_equal_reference({"type": "string", "format": name}, gpt2, prefixes)


def test_random_logits_documents_validate_with_format_checking(gpt2: gd.Vocabulary) -> None:
    schema = {"type": "object", "properties": {name: {"type": "string", "format": name} for name in sorted(FORMATS)},
              "required": sorted(FORMATS)}
    assert_random_documents_validate(schema, gpt2, seeds=4, max_tokens=200)
