"""Grammar tables: accepted / rejected / prefix-only strings, byte-exact."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import grammar_decode as gd
from grammar_decode.engine import recognizer as recognizer_module
from grammar_decode.engine.dfa import _set_key
from grammar_decode.engine.lexer import Lexer
from grammar_decode.engine.parser_compiled import CompiledParser
from grammar_decode.frontends.json_schema.lexemes import EXPONENT_DIGITS_MAX, INTEGER_DIGITS_MAX
from grammar_decode.ir.regex import shared_exprs
from grammar_decode.limits import Limits

from helpers import ORDER, PERSON, walker

# (schema, whitespace, accepted, prefix-only (viable, incomplete), rejected)
TABLES = {
    "person-compact": (
        PERSON, "compact",
        ['{"name":"Ann","age":31,"active":true}', '{"name":"","age":-0,"active":false}',
         '{"name":"\\u00e9\\"\\\\\\/\\b\\f\\n\\r\\t","age":0,"active":true}'],
        ['', '{', '{"na', '{"name":"Ann","age":3', '{"name":"Ann","age":31,"active":t'],
        ['{"name":"Ann","age":31}', '{"age":31,"name":"Ann","active":true}',
         '{"name":"Ann", "age":31,"active":true}', '{"name":"Ann","age":031,"active":true}',
         '{"name":"Ann","age":3.1,"active":true}', '{"name":"Ann","age":1e5,"active":true}',
         '{"name":"Ann","age":31,"active":true,}', ' {"name":"Ann","age":31,"active":true}',
         '{"name":"Ann","age":31,"active":true} ', '{"name":"A\nn","age":1,"active":true}',
         '{"name":"\\x","age":1,"active":true}', '{"name":"Ann","age":-,"active":true}',
         '{"name":"Ann","age":31,"active":True}', '{"name":"Ann","age":31,"active":true}{'],
    ),
    "person-flexible": (
        PERSON, "flexible",
        [json.dumps({"name": "Ann", "age": 31, "active": True}),
         '{\n  "name" : "Ann",\n  "age": 31,\n  "active": true\n}', '{"name":"Ann","age":31,"active":true}'],
        ['{ ', '{"name"    ', '{"name":"Ann",\n'],
        ['{     "name":"Ann","age":31,"active":true}', ' {"name":"Ann","age":31,"active":true}',
         '{"name":"Ann","age":31,"active":true}\n', '{"name":"Ann","age":31,"active":true ,}',
         '{"name":"Ann","age":31\f,"active":true}', '{"name"  :   "x" , "age" : 1 ,"active":true   ,}'],
    ),
    "array-bounds": (
        {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3}, "compact",
        ["[1]", "[1,2]", "[1,2,3]", "[-0,10,-7]"],
        ["[", "[1,", "[1,2,3"],
        ["[]", "[1,2,3,4]", "[1,]", "[,1]", "[01]", "[1 ]", "[1,2,3,"],
    ),
    "array-unbounded": (
        {"type": "array", "items": {"type": "string"}}, "flexible",
        ["[]", "[ ]", '["a"]', '["a", "b", "c", "d", "e"]', '[\n"a"\n]'],
        ['["a",', '[ "a" ', '["'],
        ['["a",]', '[,]', '["a" "b"]', '[1]', '["a"],'],
    ),
    "numbers": (
        {"type": "array", "items": {"type": "number"}}, "compact",
        ["[0]", "[-0.0]", "[1.5e10]", "[1E-9]", "[1e+99]", "[123.456]", "[-1e0]"],
        ["[1.", "[1e", "[1e+", "[-"],
        ["[00]", "[.5]", "[1.]", "[1e]", "[+1]", "[1e999]", "[1e+100]", "[--1]", "[1.e5]", "[0x1]", "[NaN]",
         "[Infinity]"],
    ),
    "integers": (
        {"type": "array", "items": {"type": "integer"}}, "compact",
        ["[0]", "[-0]", "[12345678901234567890]", "[-9]"],
        ["[-", "[12"],
        ["[1.0]", "[1e5]", "[01]", "[-01]", "[1E2]"],
    ),
    "enum-and-const": (
        {"type": "array", "items": {"enum": ["a", "ab", 1, 12, None, True, {"k": [1]}]}}, "compact",
        ['["a"]', '["ab"]', "[1]", "[12]", "[null]", "[true]", '[{"k":[1]}]', '["a",12,null]'],
        ['["a', "[1", "[tr", '[{"k"'],
        ['["abc"]', "[123]", "[2]", '["A"]', "[false]", '[{"k":[2]}]', '[{"k": [1]}]', '["b"]'],
    ),
    "utf8": (
        {"type": "string"}, "compact",
        ['"é"', '"日本語"', '"🦙"', '"\\ud83e\\udd99"', '"\\uFFFF"', '"\\u0000"', '"\x7f"'],
        ['"\xc3'.encode("latin-1"), b'"\xf0\x9f', b'"\xf0\x9f\xa6', '"\\ud83e', '"\\ud83e\\'],
        [b'"\xc3"', b'"\xc0\x80"', b'"\xed\xa0\x80"', b'"\xf4\x90\x80\x80"', b'"\xff"', b'"\x80"',
         '"\\udc00"', '"\\ud83e"', '"\\ud83e\\u0041"', '"\x01"', '"\t"', b'"\xe0\x80\x80"'],
    ),
    "order-nested": (
        ORDER, "flexible",
        [json.dumps({"id": 7, "status": "paid", "items": [{"sku": "A1", "qty": 2}], "note": None}),
         '{"id":7,"status":"new","items":[{"sku":"A1","qty":2},{"sku":"B","qty":0}],"note":null}'],
        ['{"id":7,"status":"', '{"id":7,"status":"new","items":[{"sku":"A1","qty":2},'],
        ['{"id":7,"status":"lost","items":[{"sku":"A1","qty":2}],"note":null}',
         '{"id":7,"status":"new","items":[],"note":null}',
         '{"id":7,"status":"new","items":[{"sku":"A1","qty":2},{"sku":"B","qty":0},{"sku":"C","qty":1}],'
         '"note":null}',
         '{"id":7,"status":"new","items":[{"sku":"A1"}],"note":null}'],
    ),
    "object-other-keys": (
        {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
         "patternProperties": {"^x": {"type": "null"}}, "additionalProperties": {"type": "boolean"},
         "maxProperties": 3}, "compact",
        ['{"a":1}', '{"a":1,"b":true}', '{"a":1,"x":null,"\\u0062":false}', '{"a":1,"":true,"ab":false}'],
        ['{"a":1,"', '{"a":1,"x', '{"a":1,"b":tr', '{"a":1,"\\u00'],
        ['{"a":1,"b":1}', '{"a":1,"x":true}', '{"a":1,"a":2}', '{"a":1,"\\u0061":true}', '{"b":true}',
         '{"a":1,"b":true,"c":true,"d":true}'],
    ),
}


def _cases(kind: int) -> list:
    return [pytest.param(name, text, id=f"{name}-{i}") for name, table in TABLES.items()
            for i, text in enumerate(table[kind])]


def _grammar(name: str) -> gd.CompiledGrammar:
    schema, whitespace = TABLES[name][0], TABLES[name][1]
    # keys outside the schema only where it says so: after an open key, any JSON value may
    # follow, and the breadth-first searches below would see an unbounded number of states
    return gd.compile_json_schema(schema, whitespace=whitespace, extra_keys="forbid")


@pytest.mark.parametrize("name,text", _cases(2))
def test_accepted(name: str, text: str) -> None:
    grammar = _grammar(name)
    assert grammar.accepts(text)
    assert grammar.accepts_prefix(text)


@pytest.mark.parametrize("name,text", _cases(3))
def test_prefix_only(name: str, text: str) -> None:
    grammar = _grammar(name)
    assert grammar.accepts_prefix(text)
    assert not grammar.accepts(text)


@pytest.mark.parametrize("name,text", _cases(4))
def test_rejected(name: str, text: str) -> None:
    grammar = _grammar(name)
    assert not grammar.accepts(text)


def test_whitespace_runs_are_bounded() -> None:
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}}, max_whitespace=3)
    assert grammar.accepts("[   1]")
    assert not grammar.accepts_prefix("[    ")
    assert grammar.accepts("[1   ,   2   ]")


def test_exponent_cap_is_enforced() -> None:
    grammar = gd.compile_json_schema({"type": "number"})
    assert grammar.accepts("1e" + "9" * EXPONENT_DIGITS_MAX)
    assert not grammar.accepts_prefix("1e" + "9" * (EXPONENT_DIGITS_MAX + 1))


def test_every_accepted_number_is_finite_and_loadable() -> None:
    grammar = gd.compile_json_schema({"type": "number"})
    largest = "9" * INTEGER_DIGITS_MAX + ".9e+" + "9" * EXPONENT_DIGITS_MAX
    assert grammar.accepts(largest) and grammar.accepts("-" + largest)
    assert json.loads(largest) != float("inf")
    assert not grammar.accepts_prefix("9" * (INTEGER_DIGITS_MAX + 1))
    integer = gd.compile_json_schema({"type": "integer"})
    assert integer.accepts(str(2**64 - 1)) and integer.accepts(str(-(2**63)))
    assert not integer.accepts_prefix("1" * (INTEGER_DIGITS_MAX + 1))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(TABLES))
def test_min_bytes_matches_breadth_first_search(name: str) -> None:
    """``min_bytes`` (structural) equals a breadth-first search over the byte graph, for every
    state reached along the table's accepted documents."""
    grammar = _grammar(name)
    automaton = walker(grammar)
    for text in TABLES[name][2]:
        data = text.encode("utf-8") if isinstance(text, str) else text
        state = automaton.initial
        for byte in data:
            assert automaton.min_bytes(state) == _bfs_min_bytes(automaton, state)
            state = automaton.step(state, byte)
        assert automaton.min_bytes(state) == 0


def _bfs_min_bytes(automaton, state) -> int:
    frontier, seen, distance = [state], {state}, 0
    while frontier:
        if any(automaton.is_accepting(s) for s in frontier):
            return distance
        nxt = []
        for s in frontier:
            for byte in range(256):
                t = automaton.step(s, byte)
                if t is not None and t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier, distance = nxt, distance + 1
    raise AssertionError("no completion reachable: a dead state")


@pytest.mark.parametrize("name", list(TABLES))
def test_canonical_completion_is_shortest_and_consistent(name: str) -> None:
    """``completion(s)`` has length ``min_bytes(s)``, completes the document, and after its first
    byte the completion is exactly the rest of it — the property the closing budget relies on."""
    grammar = _grammar(name)
    automaton = walker(grammar)
    texts = list(TABLES[name][2]) + list(TABLES[name][3])
    for text in texts:
        data = text.encode("utf-8") if isinstance(text, str) else text
        state = automaton.initial
        for byte in data + b"\x00":
            completion = automaton.completion(state)
            assert len(completion) == automaton.min_bytes(state)
            done = automaton.feed(state, completion)
            assert done is not None and automaton.is_accepting(done)
            if completion:
                assert automaton.completion(automaton.step(state, completion[0])) == completion[1:]
            state = automaton.step(state, byte)
            if state is None:
                break


# --- lexer start states looked up by the parse state's origins key ---------------------------------

_START_DOCUMENTS = [
    (ORDER, {"id": 7, "status": "new", "items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}], "note": None}),
    (PERSON, {"name": "Ann", "age": 31, "active": True}),
    ({"type": "object", "properties": {f"k{i}": {"type": ["integer", "string"]} for i in range(9)},
      "required": ["k4"]}, {"k1": 1, "k4": "x", "k8": 2}),
    ({"type": "array", "items": {"type": "string", "format": "hostname"}}, ["xn--9n2bp8q.example.com", "a.b"]),
]


def _parse_states(grammar: gd.CompiledGrammar, text: bytes) -> list:
    """Every parse state after a lexeme of ``text``, byte by byte, and the ones those restart from."""
    recognizer, state, seen = grammar.recognizer, grammar.recognizer.initial, []
    for byte in text:
        seen.append(state[1])
        state = recognizer.step(state, byte)
        assert state is not None
    seen.append(state[1])
    return seen


@pytest.mark.parametrize("index", range(len(_START_DOCUMENTS)))
def test_origins_keys_are_the_lexers_start_sets(index: int) -> None:
    """``ParseState.origins_key`` is ``_set_key`` of the expected lexemes' origins, and the start
    state it looks up is the one ``Lexer.start`` makes from the expected set, at every parse state
    of a document (guarded lexemes included: the hostname's)."""
    schema, document = _START_DOCUMENTS[index]
    grammar = gd.compile_json_schema(schema)
    recognizer = grammar.recognizer
    assert recognizer._starts_by_key == (os.environ.get("GRAMMAR_DECODE_WALK") != "python")
    if not recognizer._starts_by_key:
        return  # the reference parser: no keys, Lexer.start throughout
    lexer = recognizer.lexer
    states = _parse_states(grammar, json.dumps(document).encode())
    for parse in states:
        expected = parse.expected
        assert parse.origins_key == _set_key(frozenset(lexer.origin_of[lexeme] for lexeme in expected))
        assert lexer.start_key(parse.origins_key) == lexer.start(expected)
        assert recognizer.lexer_start(parse) == lexer.start(expected)
    assert len({parse.origins_key for parse in states}) > 1


def test_masks_are_the_same_with_starts_by_key_or_by_set(monkeypatch: pytest.MonkeyPatch,
                                                         gpt2: gd.Vocabulary) -> None:
    """Whole masks along documents with the lexer starts looked up by key (fresh grammars on a
    fresh expression set each way, so that neither finds the other's states made)."""
    masks = {}
    for by_key in (True, False):
        monkeypatch.setattr(recognizer_module, "_STARTS_BY_KEY", by_key)
        shared_exprs().retire()
        found = []
        for schema, document in _START_DOCUMENTS[:3]:
            grammar = gd.compile_json_schema(schema, limits=Limits(cache_bytes=(64 << 20) + 2 * by_key))
            assert grammar.recognizer._starts_by_key is (by_key and os.environ.get("GRAMMAR_DECODE_WALK") != "python")
            masker, recognizer = grammar.masker(gpt2), grammar.recognizer
            state = recognizer.initial
            for byte in json.dumps(document).encode():
                found.append(np.flatnonzero(masker.mask(state)))
                state = recognizer.step(state, byte)
        masks[by_key] = found
    assert len(masks[True]) == len(masks[False]) > 50
    assert all(np.array_equal(a, b) for a, b in zip(masks[True], masks[False]))


def test_a_key_missing_an_origin_is_told_apart() -> None:
    """A store that leaves the last origin out of every key (mutation 1) gives keys the
    comparison above rejects."""
    grammar = gd.compile_json_schema(_START_DOCUMENTS[0][0]).recognizer.grammar
    parser = CompiledParser(grammar)
    lexer = Lexer(grammar.exprs, grammar.lexeme_exprs, grammar.guards)
    parser.set_origins(lexer.origin_of, 1)
    parse = parser.initial
    assert parse.origins_key != _set_key(frozenset(lexer.origin_of[lexeme] for lexeme in parse.expected))


def test_bad_origins_are_refused() -> None:
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}}).recognizer.grammar
    parser = CompiledParser(grammar)
    with pytest.raises(RuntimeError, match="set_origins"):
        parser.initial.origins_key
    count = len(grammar.lexeme_exprs)
    with pytest.raises(ValueError, match="one origin per lexeme"):
        parser.set_origins([0] * (count + 1))
    with pytest.raises(ValueError, match=">= 0"):
        parser.set_origins([-1] * count)
    parser.set_origins(list(range(count)))
    with pytest.raises(RuntimeError, match="once"):
        parser.set_origins(list(range(count)))
    assert parser.initial.origins_key == _set_key(frozenset(parser.initial.expected))
