"""One regression test per bug of the founding write-up, each labelled with what it catches.

Every test checks the mask over the real GPT-2 vocabulary, not only the automaton, because each of
these bugs produced output that parsed as JSON and was wrong anyway.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import require

require("regex")

import grammar_decode as gd
from grammar_decode.frontends.json_schema.lexemes import EXPONENT_DIGITS_MAX
from grammar_decode.oracle.masks import reference_mask
from grammar_decode.oracle.recognizer import ReferenceRecognizer

from helpers import PERSON


def _ids(vocab: gd.Vocabulary, predicate) -> list[int]:
    return [i for i, t in enumerate(vocab.tokens) if t and predicate(t)]


def _state(grammar: gd.CompiledGrammar, prefix: bytes):
    state = grammar.recognizer.feed(grammar.recognizer.initial, prefix)
    assert state is not None, prefix
    return state


def _mask_after(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, prefix: str) -> np.ndarray:
    return grammar.masker(vocab).mask(_state(grammar, prefix.encode()))


def _reference(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, prefix: bytes) -> np.ndarray:
    return reference_mask(ReferenceRecognizer(grammar.ir), vocab, prefix)


def test_bug1_object_cannot_close_with_required_keys_missing(gpt2: gd.Vocabulary) -> None:
    """Catches: `}` allowed after two of three required keys ({"name":..,"age":1} missing active)."""
    grammar = gd.compile_json_schema(PERSON)
    mask = _mask_after(grammar, gpt2, '{"name":"Ann","age":1')
    closers = _ids(gpt2, lambda t: b"}" in t)
    assert closers and not mask[closers].any()
    assert mask[gpt2.tokens.index(b",")]
    assert not grammar.accepts('{"name":"Ann","age":1}')


def test_bug2_no_leading_zeros(gpt2: gd.Vocabulary) -> None:
    """Catches: {"age":00000000106} — digits after a leading 0."""
    grammar = gd.compile_json_schema(PERSON)
    mask = _mask_after(grammar, gpt2, '{"name":"Ann","age":0')
    digit_led = _ids(gpt2, lambda t: t[:1].isdigit())
    assert digit_led and not mask[digit_led].any()
    mask = _mask_after(grammar, gpt2, '{"name":"Ann","age":-0')
    assert not mask[digit_led].any()
    assert not grammar.accepts('{"name":"Ann","age":00000000106,"active":true}')


def test_bug3_no_trailing_comma_in_arrays(gpt2: gd.Vocabulary) -> None:
    """Catches: ["data",] — "start of array" and "after a comma" sharing a state."""
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "string"}})
    after_open = _mask_after(grammar, gpt2, "[")
    after_comma = _mask_after(grammar, gpt2, '["data",')
    close = gpt2.tokens.index(b"]")
    assert after_open[close] and not after_comma[close]
    assert not after_comma[_ids(gpt2, lambda t: t.lstrip().startswith(b"]"))].any()
    assert not grammar.accepts('["data",]')


def test_bug4_no_exponent_or_fraction_under_integer(gpt2: gd.Vocabulary) -> None:
    """Catches: 1e5 under "type": "integer" (a float to json.loads) and 9e999999 (inf)."""
    grammar = gd.compile_json_schema(PERSON)
    mask = _mask_after(grammar, gpt2, '{"name":"Ann","age":1')
    bad = _ids(gpt2, lambda t: t[:1] in (b"e", b"E", b"."))
    assert bad and not mask[bad].any()
    number = gd.compile_json_schema({"type": "number"})
    assert number.accepts("9e" + "9" * EXPONENT_DIGITS_MAX)
    assert not number.accepts_prefix("9e999999")


def test_bug5a_item_count_key_is_not_clamped_below_max_items(gpt2: gd.Vocabulary) -> None:
    """Catches: min(item_count, 2) in the cache key, which made "2 items" and "3 items" share a
    mask when maxItems == 3, so a fourth item was allowed. The cache is warmed on the 2-item
    state first, the order that exposed the bug."""
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}, "maxItems": 3})
    two, three = _state(grammar, b"[1,2"), _state(grammar, b"[1,2,3")
    assert two != three
    masker = grammar.masker(gpt2)
    comma = gpt2.tokens.index(b",")
    assert masker.mask(two)[comma]
    assert not masker.mask(three)[comma]
    assert np.array_equal(masker.mask(three), _reference(grammar, gpt2, b"[1,2,3"))
    assert not grammar.accepts("[1,2,3,4]")


def test_bug5b_exponent_digit_key_is_not_clamped_below_the_cap(gpt2: gd.Vocabulary) -> None:
    """Catches: min(seen_digits, 2) in the key once the exponent was capped: "cap-1 digits" and
    "cap digits" shared a mask, so one digit past the cap was allowed."""
    grammar = gd.compile_json_schema({"type": "number"})
    prefixes = [b"1e" + b"5" * n for n in range(1, EXPONENT_DIGITS_MAX + 1)]
    states = [_state(grammar, p) for p in prefixes]
    assert len(set(states)) == len(states)
    masker = grammar.masker(gpt2)
    five = gpt2.tokens.index(b"5")
    for state in states[:-1]:
        assert masker.mask(state)[five]
    assert not masker.mask(states[-1])[five]
    for prefix, state in zip(prefixes, states):
        assert np.array_equal(masker.mask(state), _reference(grammar, gpt2, prefix))


def test_unbounded_item_counts_share_one_state(gpt2: gd.Vocabulary) -> None:
    """Without maxItems, every count past minItems has the same future, and the parser reaches one
    and the same state for all of them (no hand-written clamp: the array's last count rule is
    right-recursive, and the parser's tail calls keep it flat); every mask equals the
    reference's."""
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": 2})
    prefixes = [b"[1", b"[1,2", b"[1,2,3", b"[1,2,3,4,5,6"]
    states = [_state(grammar, p) for p in prefixes]
    assert states[2] == states[3] and len({states[0], states[1], states[2]}) == 3
    close = gpt2.tokens.index(b"]")
    masker = grammar.masker(gpt2)
    assert not masker.mask(states[0])[close] and masker.mask(states[1])[close]
    for prefix, state in zip(prefixes, states):
        assert np.array_equal(masker.mask(state), _reference(grammar, gpt2, prefix))


def test_large_item_bounds_count_exactly_in_the_masks(gpt2: gd.Vocabulary) -> None:
    """Bounds past the linear threshold count by halving; at the bound the comma goes, one below
    it stays, and every mask equals the reference's (the clamp bug of the founding write-up,
    at scale)."""
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": 70,
                                      "maxItems": 100}, whitespace="compact")
    masker = grammar.masker(gpt2)
    comma, close = gpt2.tokens.index(b","), gpt2.tokens.index(b"]")
    for count, may_add, may_close in ((69, True, False), (70, True, True), (99, True, True), (100, False, True)):
        prefix = ("[" + ",".join(["1"] * count)).encode()
        mask = masker.mask(_state(grammar, prefix))
        assert bool(mask[comma]) is may_add and bool(mask[close]) is may_close, count
        assert np.array_equal(mask, _reference(grammar, gpt2, prefix)), count


def test_keys_a_not_names_stay_unevaluated() -> None:
    """``oneOf`` under ``unevaluatedProperties: false`` is made exclusive with the complements of
    the other branches; a key only such a complement names (``bar`` in ``{"baz": "baz", "bar":
    [1]}``, which fails the first branch) was counted as evaluated, and the invalid document
    accepted (found by random-logits generation over the JSON-Schema-Test-Suite)."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"foo": {"type": "string"}},
              "oneOf": [{"properties": {"bar": {"const": "bar"}}, "required": ["bar"]},
                        {"properties": {"baz": {"const": "baz"}}, "required": ["baz"]}],
              "unevaluatedProperties": False}
    grammar = gd.compile_json_schema(schema)
    assert not grammar.accepts('{"baz":"baz","bar":[650,"igue"]}')
    assert grammar.accepts('{"baz":"baz"}') and grammar.accepts('{"foo":"x","bar":"bar"}')
    assert gd.compile_json_schema({"not": {"not": {"properties": {"a": {"const": 1}}}}}).accepts('{"a":1}')


def test_keys_a_dependencies_schema_names_stay_unevaluated_from_2019_09_on() -> None:
    """``dependencies`` is enforced in every draft here, but from 2019-09 on it is no applicator:
    the keys its schema names are not evaluated. The ``unevaluatedProperties`` merge counted them,
    so ``{"a": 1, "b": 2}`` was accepted where 2020-12's validator rejects it. Now the combination
    is refused where other keywords evaluate keys too, and read exactly where none does."""
    jsonschema = require("jsonschema")
    dependent = {"dependencies": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": False}
    with pytest.raises(gd.UnsupportedSchemaError, match="dependencies"):
        gd.compile_json_schema({"properties": {"a": {}}, "allOf": [{"properties": {"c": {}}}], **dependent})
    schema = {"properties": {"a": {}}, **dependent}
    grammar = gd.compile_json_schema(schema)
    judge = jsonschema.Draft202012Validator(schema)
    for text in ['{"a":1,"b":2}', '{"a":1}', '{"b":1}', "{}"]:
        assert grammar.accepts(text) == judge.is_valid(json.loads(text)), text
    # drafts 4-7 know no unevaluatedProperties: there dependencies applies as it always did
    assert gd.compile_json_schema(schema, draft="7").accepts('{"a":1,"b":2}')
