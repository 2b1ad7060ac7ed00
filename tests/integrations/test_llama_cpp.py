"""The real model end to end through llama-cpp-python: Gemma 3 270M (Q4_K_M GGUF) on the CPU."""

from __future__ import annotations

import ctypes
import json

import numpy as np
import pytest

pytestmark = pytest.mark.model

from helpers import require  # noqa: E402

llama_cpp = require("llama_cpp", "llama-cpp")

import grammar_decode as gd  # noqa: E402
from grammar_decode.vocab.token_text import END_OF_GENERATION_TEXTS  # noqa: E402
from grammar_decode.cli import default_model_path, default_prompt  # noqa: E402
from grammar_decode.integrations import llama_cpp_setup  # noqa: E402
from grammar_decode.integrations.llama_cpp import (  # noqa: E402
    LlamaCppLogitsProcessor,
    LlamaLogits,
)

from helpers import MEASUREMENTS, PERSON, TAGS, validate  # noqa: E402


@pytest.fixture(scope="module")
def llama() -> "llama_cpp.Llama":
    # A build for the wrong CPU dies by a signal (SIGILL on AMX machines): learn that in a
    # subprocess, so the tests that need the model fail and the rest of the suite still runs.
    model = default_model_path()
    try:
        llama_cpp_setup.probe(model)
    except llama_cpp_setup.LlamaCppUnusable as exc:
        pytest.fail(str(exc), pytrace=False)
    return llama_cpp.Llama(model_path=str(model), n_ctx=1024, verbose=False)


@pytest.fixture(scope="module")
def vocab(llama) -> gd.Vocabulary:
    return gd.Vocabulary.from_llama(llama).prepare()


def test_vocabulary_matches_llama_cpp_detokenizer(llama, vocab: gd.Vocabulary) -> None:
    """Every ordinary token's bytes equal what llama.cpp itself renders for that id
    (``llama_token_to_piece`` with a large buffer: ``Llama.detokenize`` truncates pieces longer
    than 32 bytes to nothing)."""
    model_vocab = llama_cpp.llama_model_get_vocab(llama.model)
    buffer = ctypes.create_string_buffer(1024)

    def piece(token_id: int) -> bytes:
        length = llama_cpp.llama_token_to_piece(model_vocab, token_id, buffer, len(buffer), 0, False)
        return buffer.raw[:length]

    ordinary = np.flatnonzero(vocab.ordinary_mask()).tolist()
    assert len(vocab) == llama.n_vocab() == 262144
    assert len(ordinary) > 250_000
    mismatched = [i for i in ordinary if piece(i) != vocab.token_bytes(i)]
    assert mismatched == [], [(i, vocab.token_bytes(i)) for i in mismatched[:5]]
    text = "Grüße, 世界! 🦙 {\"a\": [1, 2.5e-3]}\n\ttabs"
    ids = llama.tokenize(text.encode(), add_bos=False, special=False)
    assert vocab.decode(ids) == text.encode()


@pytest.mark.parametrize("schema", [PERSON, MEASUREMENTS, TAGS], ids=["person", "measurements", "tags"])
def test_constrained_generation_validates(llama, vocab: gd.Vocabulary, schema: dict) -> None:
    grammar = gd.compile_json_schema(schema)
    prompt = llama.tokenize(default_prompt(schema).encode(), add_bos=True)
    for seed in range(2):
        result = gd.generate(LlamaLogits(llama), grammar, vocab, max_tokens=96, temperature=1.0, seed=seed,
                             prompt_ids=prompt)
        assert result.stop_reason in ("eos", "complete"), result
        validate(schema, json.loads(result.data))


def test_tight_budget_still_completes_with_the_real_model(llama, vocab: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(PERSON)
    budget = grammar.min_completion_tokens(vocab)
    prompt = llama.tokenize(b"Write a long biography: ", add_bos=True)
    for seed in range(3):
        result = gd.generate(LlamaLogits(llama), grammar, vocab, max_tokens=budget, seed=seed, prompt_ids=prompt)
        assert result.stop_reason in ("eos", "complete")
        assert len(result.token_ids) <= budget
        validate(PERSON, json.loads(result.data))


def test_logits_processor_inside_create_completion(llama, vocab: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(TAGS)
    processor = LlamaCppLogitsProcessor(grammar, vocab, max_tokens=48)
    out = llama.create_completion(default_prompt(TAGS), max_tokens=48, temperature=0.8, seed=3,
                                  logits_processor=llama_cpp.LogitsProcessorList([processor]))
    text = out["choices"][0]["text"]
    assert grammar.accepts(text.encode()), text
    validate(TAGS, json.loads(text))


def test_gguf_reader_agrees_with_llama_cpp_on_the_model(llama, vocab: gd.Vocabulary) -> None:
    """Vocabulary.from_gguf (no llama.cpp involved) classifies and spells every token as llama.cpp
    does: same ordinary ids, same bytes for them, same end-of-generation ids."""
    from_file = gd.Vocabulary.from_gguf(llama.model_path)
    assert np.array_equal(from_file.ordinary_mask(), vocab.ordinary_mask())
    ordinary = np.flatnonzero(vocab.ordinary_mask()).tolist()
    assert all(from_file.token_bytes(i) == vocab.token_bytes(i) for i in ordinary)
    assert from_file.eos_token_ids == vocab.eos_token_ids == (1, 106, 212)


@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "llama-spm", "qwen2", "phi-3", "gemma-4"])
def test_gguf_reader_is_never_more_permissive_than_llama_cpp(name: str) -> None:
    """On every vocabulary file: whatever from_gguf allows inside a document, llama.cpp renders
    as the same bytes and does not stop on; every id llama.cpp stops on is EOS for from_gguf.
    (The one known difference is conservative: gemma-4's "</s>" is EOS here, text for llama.cpp.)"""
    from tools.vocab_files import vocab_path

    path = str(vocab_path(name))
    ours = gd.Vocabulary.from_gguf(path)
    theirs = gd.Vocabulary.from_llama(llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False))
    ordinary = ours.ordinary_mask()
    assert not (ordinary & ~theirs.ordinary_mask()).any()
    assert all(ours.token_bytes(i) == theirs.token_bytes(i) for i in np.flatnonzero(ordinary).tolist())
    assert set(theirs.eos_token_ids) <= set(ours.eos_token_ids)
    extra = set(ours.eos_token_ids) - set(theirs.eos_token_ids)
    assert all(ours.token_bytes(i) in END_OF_GENERATION_TEXTS for i in extra)


def test_one_processor_serves_successive_completions(llama, vocab: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(PERSON)
    processor = LlamaCppLogitsProcessor(grammar, vocab, max_tokens=64)
    for seed in range(3):
        out = llama.create_completion(default_prompt(PERSON), max_tokens=64, temperature=1.0, seed=seed,
                                      logits_processor=llama_cpp.LogitsProcessorList([processor]))
        validate(PERSON, json.loads(out["choices"][0]["text"]))
