"""JSON Schema masks against the independent reference (Earley + regex partial matching), on real
vocabularies; cache sharing; the bitmask layout; the closing budget's narrowing."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import require

require("regex")

import grammar_decode as gd
from grammar_decode.masking.bitmask import pack_mask
from grammar_decode.ir.regex import shared_exprs
from grammar_decode.masking.masker import Masker
from grammar_decode.oracle.masks import reference_mask
from grammar_decode.oracle.recognizer import ReferenceRecognizer

from helpers import MEASUREMENTS, ORDER, PERSON, TAGS

# ≥ 13 prefixes over 4 schemas: structural positions, inside keys, strings, numbers, arrays.
PREFIXES = [
    (PERSON, ""), (PERSON, "{"), (PERSON, '{"na'), (PERSON, '{"name":'), (PERSON, '{"name":"Ann'),
    (PERSON, '{"name":"Ann", "age": 3'), (PERSON, '{"name":"Ann","age":0'),
    (PERSON, '{"name":"Ann","age":31,"active":'), (PERSON, '{"name":"\\u00'),
    (PERSON, '{"name":"Ann","age":31,"active":true'),
    (MEASUREMENTS, '{"sensor":"t","values":['), (MEASUREMENTS, '{"sensor":"t","values":[1.5e'),
    (MEASUREMENTS, '{"sensor":"t","values":[1,2,3'), (MEASUREMENTS, '{"sensor":"t","values":[-0.25, 7'),
    (TAGS, "["), (TAGS, '["a",'), (TAGS, '["a","b","c"'), (TAGS, '["a"]'),
    (ORDER, '{"id":7,"status":"'), (ORDER, '{"id":7,"status":"new","items":[{"sku":"A","qty":1}'),
    (ORDER, '{"id":7,"status":"new","items":[{"sku":"A","qty":1}],"note":nu'),
]
_PREFIX_BYTES = [p.encode("utf-8") for _, p in PREFIXES] + [b'{"name":"\xe6\x97']


def _bytes(prefix: str | bytes) -> bytes:
    return prefix.encode("utf-8") if isinstance(prefix, str) else prefix


def _state(grammar: gd.CompiledGrammar, prefix: str | bytes):
    state = grammar.recognizer.feed(grammar.recognizer.initial, _bytes(prefix))
    assert state is not None, f"test prefix {prefix!r} is not viable"
    return state


def _reference(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, prefix: str | bytes) -> np.ndarray:
    return reference_mask(ReferenceRecognizer(grammar.ir), vocab, _bytes(prefix))


@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
@pytest.mark.parametrize("schema,prefix", PREFIXES + [(PERSON, _PREFIX_BYTES[-1])])
def test_trie_mask_equals_reference_mask(gpt2: gd.Vocabulary, schema: dict, prefix: str, whitespace: str) -> None:
    """The fast path is bit-identical to the independent reference replaying every token."""
    grammar = gd.compile_json_schema(schema, whitespace=whitespace)
    if whitespace == "compact" and isinstance(prefix, str):
        prefix = prefix.replace(", ", ",").replace(": ", ":")
    state = _state(grammar, prefix)
    fast = grammar.masker(gpt2).mask(state)
    slow = _reference(grammar, gpt2, prefix)
    assert fast.dtype == bool and fast.shape == (len(gpt2),)
    assert np.array_equal(fast, slow), np.flatnonzero(fast != slow)[:10]


@pytest.mark.parametrize("schema,prefix", PREFIXES)
def test_every_masked_token_is_actually_legal(gpt2: gd.Vocabulary, schema: dict, prefix: str) -> None:
    """Every allowed token, fed byte by byte to the reference recognizer, keeps a completable
    path; the guarded direction: too permissive."""
    grammar = gd.compile_json_schema(schema)
    reference = ReferenceRecognizer(grammar.ir)
    start = reference.feed(reference.initial, _bytes(prefix))
    assert start is not None
    mask = grammar.masker(gpt2).mask(_state(grammar, prefix))
    eos = set(gpt2.eos_token_ids)
    allowed = np.flatnonzero(mask)
    assert len(allowed) > 0
    for token_id in allowed.tolist():
        if token_id in eos:
            assert reference.is_accepting(start)
            continue
        assert token_id not in gpt2.special_token_ids
        after = reference.feed(start, gpt2.token_bytes(token_id))
        assert after is not None, f"token {token_id} {gpt2.token_bytes(token_id)!r} is not legal after {prefix!r}"
        assert grammar.completions.min_bytes(_state(grammar, _bytes(prefix) + gpt2.token_bytes(token_id))) < 10_000


@pytest.mark.reference
@pytest.mark.parametrize("prefix", ['{"sensor":"', '{"sensor":"t","values":[1'])
def test_trie_mask_equals_reference_mask_on_262k_gemma(gemma: gd.Vocabulary, prefix: str) -> None:
    grammar = gd.compile_json_schema(MEASUREMENTS)
    state = _state(grammar, prefix)
    assert np.array_equal(grammar.masker(gemma).mask(state), _reference(grammar, gemma, prefix))


def test_eos_only_when_complete_and_specials_never(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(TAGS)
    matcher = grammar.matcher(gpt2)
    eos = gpt2.eos_token_ids[0]
    for token in gpt2.eos_token_ids + gpt2.special_token_ids:
        assert not matcher.mask()[token]
    with pytest.raises(gd.TokenRejected):
        matcher.advance(eos)
    for text in (b"[", b'"', b"a", b'"', b"]"):
        (token,) = [i for i, t in enumerate(gpt2.tokens) if t == text]
        matcher.advance(token)
    assert matcher.is_accepting()
    mask = matcher.mask()
    assert mask[eos] and mask.sum() == 1
    matcher.advance(eos)
    assert not matcher.mask().any()


def test_rejected_token_leaves_matcher_unchanged(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(PERSON)
    matcher = grammar.matcher(gpt2)
    before = matcher.state
    bad = gpt2.tokens.index(b"[")
    with pytest.raises(gd.TokenRejected):
        matcher.advance(bad)
    assert matcher.state == before
    with pytest.raises(gd.TokenRejected):
        matcher.advance(len(gpt2) + 5)


def test_masks_are_shared_per_grammar_and_vocab(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(PERSON)
    first, second = grammar.matcher(gpt2), grammar.matcher(gpt2)
    assert first.mask() is second.mask()
    info = grammar.masker(gpt2).cache_info()
    assert info["masks"]["entries"] == 1 and info["masks"]["hits"] >= 1


def test_cached_masks_equal_uncached_along_a_walk(gpt2: gd.Vocabulary) -> None:
    """Every cache hit returns what a fresh, cache-less masker computes for that state."""
    grammar = gd.compile_json_schema(MEASUREMENTS)
    rng = np.random.default_rng(3)
    matcher = grammar.matcher(gpt2)
    for _ in range(40):
        if matcher.is_accepting():
            break
        mask = matcher.mask()
        fresh = Masker(grammar.recognizer, gpt2).mask(matcher.state)
        assert np.array_equal(mask, fresh)
        choices = [t for t in np.flatnonzero(mask).tolist() if t not in gpt2.eos_token_ids]
        matcher.advance(int(rng.choice(choices)))


@pytest.mark.parametrize("size", [1, 31, 32, 33, 63, 64, 65, 95, 96, 97])
def test_fill_bitmask_agrees_with_mask(gpt2: gd.Vocabulary, size: int) -> None:
    alphabet = [bytes([b]) for b in b'[1,]2"a{}:03456789'] + [b"1" * k for k in range(2, 100)]
    tokens = alphabet[: size - 1] + [b"<eos>"]
    vocab = gd.Vocabulary(tokens, eos_token_ids=[size - 1], special_token_ids=[size - 1])
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}})
    matcher = grammar.matcher(vocab)
    for step in (None, b"[", b"1"):
        if step is not None:
            if step not in tokens:
                break
            matcher.advance(tokens.index(step))
        width_words = gd.bitmask_words(size) + 2  # logits wider than the vocabulary
        out = np.full((3, width_words), -1, dtype=np.int32)
        matcher.fill_bitmask(out, row=1)
        bits = np.unpackbits(out[1].view(np.uint8), bitorder="little").astype(bool)
        assert np.array_equal(bits[:size], matcher.mask())
        assert not bits[size:].any(), "padding ids must stay masked"
        assert (out[0] == -1).all() and (out[2] == -1).all(), "other rows untouched"


def test_fill_bitmask_rejects_bad_buffers(gpt2: gd.Vocabulary) -> None:
    matcher = gd.compile_json_schema(TAGS).matcher(gpt2)
    with pytest.raises(TypeError):
        matcher.fill_bitmask(np.zeros((1, gd.bitmask_words(len(gpt2))), dtype=np.int64))
    with pytest.raises(ValueError):
        matcher.fill_bitmask(np.zeros((1, 10), dtype=np.int32))


def test_pack_mask_bit_layout() -> None:
    mask = np.zeros(70, dtype=bool)
    mask[[0, 31, 32, 69]] = True
    words = pack_mask(mask)
    assert words.dtype == np.dtype("<i4") and len(words) == 3
    assert words[0] == np.int32(-2147483647)  # bits 0 and 31
    assert words[1] == 1 and words[2] == 1 << 5


def test_apply_mask_masks_padding_columns() -> None:
    logits = np.arange(10, dtype=np.float32)
    mask = np.array([True, False, True, True, False, False, True, False], dtype=bool)  # vocab of 8, logits of 10
    out = gd.apply_mask(logits, mask)
    assert np.isfinite(out).tolist() == mask.tolist() + [False, False]


@pytest.mark.parametrize("schema,prefix,remaining", [
    (PERSON, '{"name":"Ann', 30), (PERSON, '{"name":"Ann', 27), (PERSON, '{"name":"Ann","age":1', 19),
    (MEASUREMENTS, '{"sensor":"t","values":[1', 3), (TAGS, '["a', 2), (TAGS, "[", 1),
    (PERSON, '{"name":"Ann', 3),  # budget already too small: most progress towards closing
])
def test_budget_mask_is_subset_and_keeps_the_promise(gpt2: gd.Vocabulary, schema: dict, prefix: str,
                                                     remaining: int) -> None:
    """Closing narrowing is always a subset of the legal mask, never empty, and every token it
    keeps leaves a state that can still finish in the tokens left (checked by feeding each one)."""
    grammar = gd.compile_json_schema(schema)
    state = _state(grammar, prefix)
    masker, budget_of = grammar.masker(gpt2), grammar.budget(gpt2)
    narrowed = budget_of.narrow(state, remaining)
    full = masker.mask(state)
    assert not (narrowed & ~full).any()
    assert narrowed.any()
    here = budget_of.finish_tokens(state)
    budget = max(remaining - 1, here - 1, 0)
    eos = set(gpt2.eos_token_ids)
    for token_id in np.flatnonzero(narrowed).tolist():
        if token_id in eos:
            continue
        after = grammar.recognizer.feed(state, gpt2.token_bytes(token_id))
        assert after is not None and budget_of.finish_tokens(after) <= budget, (gpt2.token_bytes(token_id), budget)


KEYS = {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"},
                                         "note": {"type": "boolean"}}}
CLOSED_KEYS = {**KEYS, "additionalProperties": False}


@pytest.mark.parametrize("schema", [KEYS, CLOSED_KEYS])
def test_a_twin_states_part_is_renamed_and_equals_its_walk(gpt2: gd.Vocabulary, schema: dict) -> None:
    """Once ``{"name``'s lexeme part is walked, ``{"size``'s and ``{"note``'s (the same
    expressions, other keys: ``LexemeDFA.shape``) are renamed from it, not walked: the same bits,
    the boundaries' nodes with this state's lexer states, the masks the reference's; the states
    reached come from a walk when the closing budget asks."""
    shared_exprs().retire()  # a fresh set: no twin walked by an earlier test
    grammar = gd.compile_json_schema(schema, whitespace="compact")
    masker = grammar.masker(gpt2)
    prefixes = ['{"name', '{"size', '{"note', '{"name":"a","size', '{"size":1,"note']
    for prefix in prefixes:
        state = _state(grammar, prefix)
        assert np.array_equal(masker.mask(state), _reference(grammar, gpt2, prefix)), prefix
    states = {_state(grammar, prefix)[0]: prefix for prefix in prefixes}
    assert len(states) == 3  # one lexer state per key, whatever the parse
    parts = {lex: masker.lexeme_part(lex) for lex in states}
    assert [part.reached is None for part in parts.values()] == [False, True, True]
    for lex, part in parts.items():
        reached = masker.lexeme_reached(lex)  # walks where the part was renamed
        assert masker.lexeme_part(lex).reached is not None  # the walked part took its place
        walked = masker._walked_part(lex)  # a walk, whatever is cached
        assert np.array_equal(part.bits, walked.bits) and part.trie is walked.trie, states[lex]
        assert np.array_equal(np.asarray(part.boundaries), np.asarray(walked.boundaries)), states[lex]
        assert np.array_equal(reached, walked.reached), states[lex]


def test_a_renamed_part_on_the_python_walk_equals_the_compiled_one(gpt2: gd.Vocabulary,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python walk's boundaries (a list of pairs) are renamed alike."""
    from grammar_decode.masking import walk as walk_module

    compiled = gd.compile_json_schema(CLOSED_KEYS, whitespace="compact")
    expected = {p: compiled.masker(gpt2).mask(_state(compiled, p)) for p in ('{"name', '{"size')}
    monkeypatch.setattr(walk_module, "COMPILED", False)
    shared_exprs().retire()  # a fresh set: no part walked by the compiled walk
    grammar = gd.compile_json_schema(CLOSED_KEYS, whitespace="compact")
    masker = grammar.masker(gpt2)
    for prefix in ('{"name', '{"size'):
        assert np.array_equal(masker.mask(_state(grammar, prefix)), expected[prefix]), prefix
    assert isinstance(masker.lexeme_part(_state(grammar, '{"size')[0]).boundaries, list)
    assert masker.lexeme_part(_state(grammar, '{"size')[0]).reached is None


@pytest.mark.parametrize("schema,text", [(PERSON, '{"name":"Ann","age":31,"active":true}'),
                                         (MEASUREMENTS, '{"sensor":"t","values":[1.5e3,-0.25]}'),
                                         (TAGS, '["a","b"]'), ({"type": "number"}, "-12.5e7"),
                                         ({"type": "string", "maxLength": 3}, '"ab"')])
def test_eos_is_decided_as_the_recognizer_finishes(schema: dict, text: str) -> None:
    """``Recognizer.is_accepting`` (EOS in a mask), which scans the open lexeme itself, agrees with
    ``finish`` (the parse once the lexeme ends, by ``restart``) at every prefix, complete ones
    included (a number that may go on is both open and complete)."""
    recognizer = gd.compile_json_schema(schema).recognizer
    state, answers = recognizer.initial, []
    for byte in text.encode():
        state = recognizer.step(state, byte)
        assert state is not None
        finished = recognizer.finish(state)
        answers.append(finished is not None and finished.accepting)
        assert recognizer.is_accepting(state) == answers[-1], (text, len(answers))
    assert answers[-1] and not all(answers)
