"""The public surface: names, lifetimes, and what `import grammar_decode` pulls in."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import grammar_decode as gd

from helpers import PERSON


def test_core_import_needs_only_numpy() -> None:
    code = ("import sys, grammar_decode; "
            "heavy = [m for m in ('torch', 'transformers', 'llama_cpp', 'jsonschema', 'gguf', 'tiktoken', 'lark', 'regex') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names() -> None:
    for name in ("Vocabulary", "compile_json_schema", "compile_regex", "compile_grammar", "CompiledGrammar",
                 "Matcher", "generate", "GrammarError", "UnsupportedRegexError",
                 "UnsupportedSchemaError", "SchemaError", "TokenRejected", "apply_mask", "bitmask_words"):
        assert name in gd.__all__ and hasattr(gd, name)
    assert issubclass(gd.UnsupportedSchemaError, ValueError)


def test_matcher_copy_and_reset_are_independent(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(PERSON)
    matcher = grammar.matcher(gpt2)
    matcher.advance(gpt2.tokens.index(b"{"))
    twin = matcher.copy()
    twin.advance(gpt2.tokens.index(b'"'))
    assert matcher.state != twin.state
    assert matcher.accepts_token(gpt2.tokens.index(b'"')) and not twin.accepts_token(gpt2.tokens.index(b"{"))
    twin.reset()
    assert twin.state == grammar.recognizer.initial


def test_masks_are_read_only(gpt2: gd.Vocabulary) -> None:
    mask = gd.compile_json_schema(PERSON).matcher(gpt2).mask()
    assert mask.dtype == np.bool_ and not mask.flags.writeable


def test_accepts_bytes_and_str_alike() -> None:
    grammar = gd.compile_json_schema({"type": "string"})
    assert grammar.accepts('"é"') and grammar.accepts('"é"'.encode())
    assert not grammar.accepts('"é"'.encode("latin-1"))


def test_vocabulary_ids_are_read_only_and_vocabularies_can_be_collected() -> None:
    import gc
    import weakref

    vocab = gd.Vocabulary([b"[", b"]", b"1", b"<eos>"], eos_token_ids=[3], special_token_ids=[3])
    try:
        vocab.special_token_ids = (2,)  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("special ids must not be reassignable: the trie was built from them")
    grammar = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}})
    assert grammar.matcher(vocab).mask().tolist() == [True, False, False, False]
    ref = weakref.ref(vocab)
    del vocab
    gc.collect()
    assert ref() is None, "a grammar must not keep a vocabulary alive"


def test_lone_surrogates_are_rejected_not_raised() -> None:
    grammar = gd.compile_json_schema({"type": "string"})
    assert not grammar.accepts('"\ud800"') and not grammar.accepts_prefix('"\ud800')


def _batch(vocab: gd.Vocabulary) -> list[gd.Matcher]:
    """Nine matchers over three freshly compiled grammars (so their caches are cold)."""
    grammars = [gd.compile_json_schema({"type": "object", "properties": {"a": {"type": "integer"}}}),
                gd.compile_regex(r"[a-z]{2,5}@x\.io"), gd.compile_json_schema({"type": "array"})]
    matchers = []
    for k in range(9):
        matcher = grammars[k % 3].matcher(vocab)
        if k % 3 == 0 and k:
            matcher.advance(vocab.ids_by_bytes()[b"{"][0])
        matchers.append(matcher)
    return matchers


def test_fill_bitmasks_equals_row_by_row(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """``gd.fill_bitmasks`` with threads fills the same rows as one ``fill_bitmask`` per row, on
    cold rows (the thread pool) and on cached ones (filled in the calling thread)."""
    words = gd.bitmask_words(len(gpt2))
    matchers = _batch(gpt2)
    expected = np.zeros((9, words), dtype=np.int32)
    for row, matcher in enumerate(matchers):
        matcher.fill_bitmask(expected, row)
    for threads in (1, 2, 4):
        out = np.full((10, words), -1, dtype=np.int32)
        gd.fill_bitmasks(_batch(gpt2), out, threads=threads)
        assert np.array_equal(out[:9], expected)
        assert (out[9] == -1).all()  # rows past the batch are left alone
    # every row cached: no thread pool at all
    monkeypatch.setattr("grammar_decode.matcher.ThreadPoolExecutor", None)
    monkeypatch.setattr("grammar_decode.matcher._POOLS", {})
    out = np.zeros((9, words), dtype=np.int32)
    gd.fill_bitmasks(matchers, out, threads=8)
    assert np.array_equal(out, expected)
    with pytest.raises(TypeError):  # a cold row needs the pool, which is gone here
        gd.fill_bitmasks(_batch(gpt2), out, threads=8)
    with pytest.raises(ValueError):
        gd.fill_bitmasks(matchers, np.zeros((3, words), dtype=np.int32))
    with pytest.raises(ValueError):
        gd.fill_bitmasks(matchers, expected, threads=0)
    with pytest.raises(ValueError):
        gd.fill_bitmasks([matchers[0], matchers[0]], expected)
