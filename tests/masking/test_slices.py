"""The plain-text slice's step (``slices.plain_successor``): the C kernel against the Python
reference on every lexer state met along real documents, and a broken kernel caught."""

from __future__ import annotations

import json

import pytest

import grammar_decode as gd
from grammar_decode.engine.lexer import DEAD
from grammar_decode.masking import slices
from helpers import ORDER, PERSON, TAGS


@pytest.fixture(autouse=True)
def kernels_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels are what this file tests: on wherever they are built, even where
    ``GRAMMAR_DECODE_WALK=python`` turns them off for everything else."""
    monkeypatch.setattr(slices, "COMPILED", slices._walk is not None)


DOCUMENTS = [
    (PERSON, {"name": "Ann \u00e9 \u4e2d \U0001f600 \\\" x", "age": 31, "active": True}),
    (TAGS, ["a", "b c", ""]),
    (ORDER, {"id": 7, "status": "new", "items": [{"sku": "A", "qty": 1}], "note": None}),
    ({"type": "string", "maxLength": 12}, "abc d\u00e9f \u4e2d"),
    ({"type": "string", "minLength": 3, "maxLength": 40, "pattern": "^[^)]*$"}, "ab(c"),
    ({"type": "string", "format": "email", "maxLength": 40}, "joe.bloggs@example.com"),
    ({"type": "string", "format": "hostname"}, "xn--9n2bp8q.example.com"),  # guarded states: the Python way
]


def _compare(schema: dict, document: object) -> tuple[int, int]:
    """Lexer states met along the document where the two agree (asserting they do), and how many
    of them have a plain successor."""
    grammar = gd.compile_json_schema(schema)
    recognizer, state = grammar.recognizer, grammar.recognizer.initial
    compared = decided = 0
    for byte in json.dumps(document).encode():
        fast = slices.plain_successor(recognizer.lexer, state[0])
        slow = slices.python_plain_successor(recognizer.lexer, state[0])
        assert fast == slow, (state[0], fast, slow)
        compared += 1
        decided += fast is not None and fast != DEAD
        state = recognizer.step(state, byte)
        assert state is not None
    return compared, decided


@pytest.mark.parametrize("schema,document", DOCUMENTS)
def test_the_kernel_equals_the_python_reference(schema: dict, document: object) -> None:
    compared, decided = _compare(schema, document)
    assert compared > 0
    if schema.get("type") == "string" and "pattern" not in schema and "format" not in schema:
        assert decided > 0  # inside a plain string: every state has a successor


def test_a_kernel_skipping_multi_byte_characters_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """4: the continuation bytes are not explored (a state where a multi-byte character leads
    elsewhere than ASCII does would pass as plain)."""
    schema = {"type": "string", "pattern": "^[^\u00e9]*$"}  # every character but é: its second byte differs
    assert _compare(schema, "ab")[1] == 0
    monkeypatch.setattr(slices, "_MUTATION", 4)
    with pytest.raises(AssertionError):
        _compare(schema, "ab")
