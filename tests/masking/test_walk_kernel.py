"""The compiled lexeme walk (``masking/_walk.c``) against the Python walk, bit for bit: every
lexer state met along real documents, on real vocabularies, and a deliberately broken kernel is
caught by the same comparison."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import grammar_decode as gd
from grammar_decode.masking import walk
from helpers import MEASUREMENTS, ORDER, PERSON, TAGS



def test_the_compiled_walk_is_built_and_used() -> None:
    """``pip install -e .`` compiles ``_walk.c`` (setup.py); a build that left it out fails here
    rather than have every comparison below pass vacuously."""
    assert walk._walk is not None, "grammar_decode/masking/_walk.c was not compiled"
    assert walk.COMPILED or os.environ.get("GRAMMAR_DECODE_WALK") == "python"

DOCUMENTS = [
    (PERSON, {"name": "Ann \u00e9 \\\" x", "age": 31, "active": True}),
    (MEASUREMENTS, {"sensor": "t", "values": [1.5e3, -0.25, 7]}),
    (TAGS, ["a", "b c", ""]),
    (ORDER, {"id": 7, "status": "new", "items": [{"sku": "A", "qty": 1}], "note": None}),
    ({"type": "string", "format": "hostname"}, "xn--9n2bp8q.example.com"),  # guarded states: the Python walk
    ({"type": "string", "format": "email", "maxLength": 40}, "joe.bloggs@example.com"),
]


def _lexer_states(grammar: gd.CompiledGrammar, text: bytes) -> list[int]:
    states, state = [], grammar.recognizer.initial
    for byte in text:
        states.append(state[0])
        state = grammar.recognizer.step(state, byte)
        assert state is not None
    return sorted(set(s for s in states if s >= 0))


def _compare(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, text: bytes) -> int:
    """How many lexer states the two walks agree on (asserting they do); guarded ones are
    counted out, since the kernel hands them back."""
    lexer, trie = grammar.recognizer.lexer, vocab.trie
    compared = 0
    for lex in _lexer_states(grammar, text):
        fast = walk.compiled_lexeme_walk(lexer, trie, lex)
        slow_nodes, slow_bounds, slow_reached = walk.python_lexeme_walk(lexer, trie, lex)
        if fast is None:
            assert lexer.guarded(lex), lex  # only states with guarded pairs are handed back
            continue
        nodes, bounds, reached = fast
        assert nodes.tolist() == slow_nodes, lex
        assert bounds == slow_bounds, lex
        assert reached == slow_reached, lex
        compared += 1
    return compared


@pytest.mark.parametrize("schema,document", DOCUMENTS)
def test_compiled_walk_equals_the_python_walk(gpt2: gd.Vocabulary, schema: dict, document: object) -> None:
    grammar = gd.compile_json_schema(schema)
    assert _compare(grammar, gpt2, json.dumps(document).encode()) > 0 or "hostname" in json.dumps(schema)


@pytest.mark.reference
def test_compiled_walk_equals_the_python_walk_on_262k_gemma(gemma: gd.Vocabulary) -> None:
    for schema, document in DOCUMENTS[:4]:
        grammar = gd.compile_json_schema(schema)
        assert _compare(grammar, gemma, json.dumps(document).encode()) > 0


def test_masks_are_the_same_with_either_walk(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps(DOCUMENTS[3][1]).encode()
    masks = []
    for compiled in (True, False):
        monkeypatch.setattr(walk, "COMPILED", compiled)
        grammar = gd.compile_json_schema(ORDER)
        state, out = grammar.recognizer.initial, []
        for byte in text:
            out.append(grammar.masker(gpt2).mask(state))
            state = grammar.recognizer.step(state, byte)
        masks.append(out)
    assert all(np.array_equal(a, b) for a, b in zip(*masks))


@pytest.mark.parametrize("mutation", [1, 2])
def test_a_broken_kernel_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch, mutation: int) -> None:
    """1: a rejected byte's subtree is walked instead of skipped; 2: boundaries are dropped."""
    monkeypatch.setattr(walk, "_MUTATION", mutation)
    grammar = gd.compile_json_schema(PERSON)
    with pytest.raises(AssertionError):
        _compare(grammar, gpt2, json.dumps(DOCUMENTS[0][1]).encode())


def _compare_bits(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, text: bytes) -> int:
    """How many walks' token bits the kernel and the numpy reference agree on (asserting they do),
    over the whole trie and over the trie of the tokens outside the plain-text slice."""
    from grammar_decode.masking.slices import string_slice

    lexer, compared = grammar.recognizer.lexer, 0
    for trie in (vocab.trie, string_slice(vocab).rest):
        for lex in _lexer_states(grammar, text):
            nodes, _bounds, _reached = walk.python_lexeme_walk(lexer, trie, lex)
            fast = walk.token_bits(trie, np.array(nodes, dtype=np.int32), len(vocab))
            slow = walk.python_token_bits(trie, nodes, len(vocab))
            assert fast.dtype == slow.dtype == np.uint8 and np.array_equal(fast, slow), lex
            compared += bool(nodes)
    return compared


@pytest.mark.parametrize("schema,document", DOCUMENTS[:4])
def test_token_bits_equal_the_numpy_reference(gpt2: gd.Vocabulary, schema: dict, document: object) -> None:
    assert _compare_bits(gd.compile_json_schema(schema), gpt2, json.dumps(document).encode()) > 0


def test_a_kernel_leaving_out_tokens_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """3: the last token spelled at each node is left out of the bits."""
    monkeypatch.setattr(walk, "_MUTATION", 3)
    with pytest.raises(AssertionError):
        _compare_bits(gd.compile_json_schema(PERSON), gpt2, json.dumps(DOCUMENTS[0][1]).encode())


def test_bad_buffers_are_refused() -> None:
    byte = np.zeros(3, dtype=np.uint8)
    depth = np.array([0, 1, 1], dtype=np.int32)
    end = np.array([3, 2, 3], dtype=np.int32)
    table = np.full(256, -1, dtype=np.int32)
    accepts = np.zeros(1, dtype=np.uint8)
    stack = np.zeros(2, dtype=np.int32)
    counts = np.zeros(4, dtype=np.int64)
    seen = np.zeros(1, dtype=np.uint8)
    with pytest.raises(ValueError):
        walk._walk.walk_lexeme(byte, depth, end, table, accepts, 5, 1, stack, np.empty(3, np.int32),
                               np.empty(6, np.int32), counts, seen, np.empty(3, np.int32))  # a start state past the table
    with pytest.raises(TypeError):
        walk._walk.walk_lexeme(byte, depth.astype(np.int64), end, table, accepts, 0, 1, stack,
                               np.empty(3, np.int32), np.empty(6, np.int32), counts, seen, np.empty(3, np.int32))
    assert walk._walk.walk_lexeme(byte, depth, end, table, accepts, 0, 1, stack, np.empty(3, np.int32),
                                  np.empty(6, np.int32), counts, seen, np.empty(3, np.int32)) == -1
    start = np.array([0, 1, 2, 3], dtype=np.int64)
    ids = np.array([0, 9, 1], dtype=np.int64)
    with pytest.raises(ValueError):  # a token past the bits
        walk._walk.set_token_bits(np.array([1], dtype=np.int32), start, ids, np.zeros(1, dtype=np.uint8))
    with pytest.raises(ValueError):  # a node past the trie
        walk._walk.set_token_bits(np.array([3], dtype=np.int32), start, ids, np.zeros(2, dtype=np.uint8))
    bits = np.zeros(2, dtype=np.uint8)
    walk._walk.set_token_bits(np.array([1, 2], dtype=np.int32), start, ids, bits)
    assert bits.tolist() == [2, 2]  # tokens 1 and 9
