"""Masks where array items must be unique (``uniqueItems`` over strings): the fast mask (masker,
then ``masking.unique``) equals the independent reference (``oracle.unique``) bit for bit, and
random-logits documents validate."""

from __future__ import annotations

import numpy as np
import pytest

import grammar_decode as gd
from grammar_decode.masking import unique as unique_module
from grammar_decode.masking.bitmask import pack_mask
from grammar_decode.masking.unique import unique_mask, unique_packed
from grammar_decode.oracle.recognizer import ReferenceRecognizer
from grammar_decode.oracle.unique import reference_unique_mask
from helpers import REFERENCE_VOCABS, assert_language, assert_random_documents_validate, require

require("regex")

TAGS = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
NAMED = {"type": "object", "properties": {"name": {"type": "string"}, "tags": TAGS}, "required": ["tags"]}
FEW = {"type": "array", "items": {"type": "string", "pattern": "^(a|b|c+)$"}, "uniqueItems": True, "maxItems": 4}


ENUM = {"type": "array", "items": {"enum": list("abcdef")}, "uniqueItems": True}  # past the grammar's 4 values


def _few_values() -> list[str]:
    return ["a", "b"] + ["c" * k for k in range(1, 12)]


#: (schema, values the items' language holds when a finite list decides aliveness, prefixes)
CASES = {
    "tags": (TAGS, None, ["[", '["a"', '["a",', '["a","', '["a","a', '["a", "b', '["",', '["","', '["a","b","']),
    "named": (NAMED, None, ['{"name":"a","tags":["a"', '{"name":"a","tags":["a",', '{"tags":["x","']),
    "enum": (ENUM, lambda: list("abcdef"), ["[", '["a",', '["a","', '["a","b","c","d","e",', '["a","b","c","d","e","f"',
                                             '["f","e"']),
    "few": (FEW, _few_values, ["[", '["a",', '["a","', '["a","b","', '["a","b","c","', '["c","']),
}


def _fast_mask(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, prefix: bytes) -> np.ndarray:
    unique = grammar.unique
    position = unique.feed(unique.initial, prefix)
    assert position is not None, prefix
    return unique_mask(unique, position, grammar.masker(vocab).mask(position[0]), vocab)


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_masks_equal_the_reference(request, name: str, vocab_name: str) -> None:
    vocab = request.getfixturevalue(vocab_name)
    schema, values, prefixes = CASES[name]
    grammar = gd.compile_json_schema(schema)
    reference = ReferenceRecognizer(grammar.ir)
    for prefix in prefixes:
        data = prefix.encode()
        fast = _fast_mask(grammar, vocab, data)
        slow = reference_unique_mask(reference, vocab, data, values)
        differ = np.flatnonzero(fast != slow)
        assert len(differ) == 0, (prefix, [(vocab.token_bytes(int(i)), bool(fast[i])) for i in differ[:8]])


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_packed_form_drops_the_same_tokens(name: str, gpt2: gd.Vocabulary) -> None:
    """``unique_packed`` (what a batch row gets) is ``unique_mask`` packed, at every prefix, and
    leaves the masker's packed mask as it was."""
    schema, _values, prefixes = CASES[name]
    grammar = gd.compile_json_schema(schema)
    unique, masker = grammar.unique, grammar.masker(gpt2)
    dropped_somewhere = False
    for prefix in prefixes:
        position = unique.feed(unique.initial, prefix.encode())
        base = masker.packed(position[0])
        before = base.copy()
        packed = unique_packed(unique, position, base, gpt2)
        expected = unique_mask(unique, position, masker.mask(position[0]), gpt2)
        assert np.array_equal(packed, pack_mask(expected)), prefix
        assert np.array_equal(base, before)
        dropped_somewhere |= packed is not base
    assert dropped_somewhere or name != "tags"  # `["",` then `""` repeats the empty string


def test_the_matcher_masks_what_the_fast_mask_says(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(TAGS)
    matcher = grammar.matcher(gpt2)
    for text in [b"[", b'"', b"a", b'"', b",", b'"']:
        matcher.advance(gpt2.ids_by_bytes()[text][0])
    expected = _fast_mask(grammar, gpt2, b'["a","')
    assert np.array_equal(matcher.mask(), expected)
    a_close = gpt2.ids_by_bytes()[b'a"'][0] if b'a"' in gpt2.ids_by_bytes() else None
    matcher.advance(gpt2.ids_by_bytes()[b"a"][0])
    with pytest.raises(gd.TokenRejected):
        matcher.advance(gpt2.ids_by_bytes()[b'"'][0])  # "a" again
    assert not matcher.mask()[gpt2.ids_by_bytes()[b'"'][0]]
    if a_close is not None:
        matcher.rollback(1)
        assert not matcher.mask()[a_close]
    bitmask = np.zeros((1, gd.bitmask_words(len(gpt2))), dtype=np.int32)
    matcher.fill_bitmask(bitmask)
    unpacked = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[:len(gpt2)].astype(bool)
    assert np.array_equal(unpacked, matcher.mask())


@pytest.mark.parametrize("schema", [TAGS, NAMED, FEW, {"type": "array", "items": {"type": "string", "format": "email"},
                                                         "uniqueItems": True, "minItems": 3, "maxItems": 6}])
def test_random_documents_validate(schema: dict, gpt2: gd.Vocabulary) -> None:
    assert_random_documents_validate(schema, gpt2, seeds=4, max_tokens=160)


@pytest.mark.parametrize("schema,accepted,rejected", [
    (TAGS, ['[]', '["a"]', '["a","b"]', '["a", "\\u0062"]'], ['["a","a"]', '["a","\\u0061"]', '["a","b","a"]']),
    (NAMED, ['{"name":"x","tags":["x"]}', '{"tags":[]}'], ['{"tags":["x","x"]}']),
    (FEW, ['["a","b","c","cc"]', '["ccc"]'], ['["a","b","a"]', '["c","c"]', '["a","b","c","cc","ccc"]']),
    (ENUM, ['["a","b","c","d","e","f"]', '["f"]', "[]"], ['["a","b","c","d","e","f","a"]', '["a","a"]', '["g"]']),
])
def test_languages(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)
    assert not gd.compile_json_schema(schema).accepts_prefix('["a","b","a"') or schema is NAMED


def test_a_finite_language_is_refused() -> None:
    with pytest.raises(gd.UnsupportedSchemaError, match="finite language"):
        gd.compile_json_schema({"type": "array", "items": {"type": "string", "maxLength": 2}, "uniqueItems": True})


@pytest.mark.parametrize("delimiters", [(0x22,), (0x22, 0x5B)])
def test_delimiter_counts_equal_a_count_per_token(gpt2: gd.Vocabulary, delimiters: tuple[int, ...]) -> None:
    """The vectorised counts against ``bytes.count`` token by token (specials count 0)."""
    from grammar_decode.masking.unique import delimiter_counts

    total, later = delimiter_counts(gpt2, delimiters)
    ordinary = gpt2.ordinary_mask()
    for token in range(len(gpt2)):
        data = gpt2.token_bytes(token)
        expected = (sum(data.count(d) for d in delimiters), sum(data.count(d, 1) for d in delimiters)) \
            if ordinary[token] else (0, 0)
        assert (total[token], later[token]) == expected, (token, data)
    assert total.max() >= 2 and (total > later).any()


@pytest.mark.parametrize("name", sorted(CASES))
def test_replays_from_shared_prefixes_drop_what_one_by_one_replays_drop(name: str, gpt2: gd.Vocabulary) -> None:
    """``_dropped`` (each candidate replayed from the longest prefix another one reached) against
    a replay of each candidate from the position, over every token of the vocabulary holding a
    delimiter (not only the mask's candidates: more prefixes shared, more dropped), at every
    prefix of the cases."""
    schema, _values, prefixes = CASES[name]
    unique = gd.compile_json_schema(schema).unique
    with_delimiter = np.array([t for t, data in enumerate(gpt2.tokens) if b'"' in data and gpt2.ordinary_mask()[t]])
    assert len(with_delimiter) > 100
    dropped_any = False
    for prefix in prefixes:
        position = unique.feed(unique.initial, prefix.encode())
        shared = unique_module._dropped(unique, position, with_delimiter, gpt2)
        assert shared == unique_module._dropped_one_by_one(unique, position, with_delimiter, gpt2), prefix
        dropped_any |= bool(shared)
    assert dropped_any
