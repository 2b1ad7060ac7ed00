#!/usr/bin/env python
"""Mask-cost benchmark for grammar_decode on real vocabularies (GPT-2, 50,257 and Gemma, 262,144 tokens).

Run from the repository root::

    python bench/benchmark.py            # full run, well under a minute on two cores
    python bench/benchmark.py --quick    # fewer repeats
    python bench/benchmark.py --model    # instead: the real-model conformance benchmark (bench/conformance.py)

Sections, per vocabulary:

1. Vocabulary load (GGUF metadata -> ``Vocabulary``) and trie build time.
2. Per-state mask cost: the uncached trie walk (a fresh ``Masker`` per measurement; "cold" also
   starts from a freshly compiled grammar, so the lexer DFA and the parse states are built on the
   way) against the independent reference ``reference_mask`` (Earley + regex partial matching,
   every token replayed), with the number of allowed tokens, the speedup, the cost of a cache
   hit, and a check that both masks are identical.
3. One generated document (random logits, ``generate`` with the closing budget), then the same token
   sequence replayed with the mask cache cold (fresh compiled grammar), warm (a second matcher on
   the same masker) and disabled (a fresh walk every step).
4. Packing and applying masks: ``pack_mask``, ``Matcher.fill_bitmask`` and ``apply_mask`` on
   logits as wide as the vocabulary.
5. Cache keys on nested documents: random walks through three nested arrays, and what each of the
   masker's caches holds afterwards (entries, bytes).
6. The closing budget's cost per token against the number of required properties.

No model is downloaded; the vocabulary files come from ``tools.vocab_files`` (fetched
once from the package index). Results are printed as tables and written to
``bench/results/benchmark.json``. Timings use ``time.perf_counter``; where a measurement repeats,
the median is reported.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

import grammar_decode as gd
from common import _display, machine_info, progress, render_table
from grammar_decode.engine.recognizer import State
from grammar_decode.masking.bitmask import pack_mask
from grammar_decode.masking.masker import Masker
from grammar_decode.oracle.masks import reference_mask
from grammar_decode.oracle.recognizer import ReferenceRecognizer
from tools.vocab_files import vocab_path

RESULTS_PATH = Path(__file__).resolve().parent / "results" / "benchmark.json"
VOCAB_NAMES = ("gpt-2", "gemma-4")

#: The founding write-up's object: ``tests/conftest.PERSON`` (name/age/active) plus an array.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "active": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["name", "age", "active", "tags"],
}

_HEAD = b'{"name": "Ada", "age": 36, "active": true, "tags": ['
#: Representative recognizer states, each given by the document prefix that reaches it.
PROBES: tuple[tuple[str, bytes], ...] = (
    ("start of document", b""),
    ("after '{'", b"{"),
    ("inside a key", b'{"na'),
    ("after ':' (integer next)", b'{"name": "Ada", "age":'),
    ("inside a string value", b'{"name": "Ad'),
    ("after a value (',' next)", b'{"name": "Ada"'),
    ("inside a number", b'{"name": "Ada", "age": 3'),
    ("array, after '['", _HEAD),
    ("array, after an item", _HEAD + b'"x"'),
    ("complete document", _HEAD + b'"x"]}'),
)


@dataclass(frozen=True)
class Config:
    """Repeat counts; ``--quick`` lowers them all to the minimum."""

    load_repeats: int = 3
    walk_repeats: int = 5
    replay_repeats: int = 3
    cold_passes: int = 3
    warm_passes: int = 5
    disabled_passes: int = 3
    kernel_repeats: int = 50
    hit_calls: int = 2000
    #: A repeated measurement stops early once its samples add up to this many seconds.
    max_seconds: float = 2.0

    @classmethod
    def quick(cls) -> "Config":
        return cls(load_repeats=1, walk_repeats=2, replay_repeats=1, cold_passes=1, warm_passes=2,
                   disabled_passes=1, kernel_repeats=10, hit_calls=500, max_seconds=1.0)


# -- timing and formatting helpers ------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds one call of ``fn`` takes, and its result (garbage collected beforehand)."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def median_timed(fn: Callable[[], Any], repeats: int, setup: Callable[[], None] | None = None,
                 max_seconds: float = math.inf) -> tuple[float, Any]:
    """Median wall time of ``fn`` over ``repeats`` calls (``setup``, untimed, before each; fewer
    calls once they add up to ``max_seconds``) and the result of the last call."""
    samples: list[float] = []
    result = None
    while len(samples) < max(1, repeats) and sum(samples) < max_seconds:
        if setup is not None:
            setup()
        seconds, result = timed(fn)
        samples.append(seconds)
    return statistics.median(samples), result


def median_seconds(fn: Callable[[], Any], repeats: int, setup: Callable[[], None] | None = None,
                   max_seconds: float = math.inf) -> float:
    """Median wall time of ``fn`` (see ``median_timed``)."""
    return median_timed(fn, repeats, setup, max_seconds)[0]


def per_call_seconds(fn: Callable[[], Any], calls: int, repeats: int = 3) -> float:
    """Median over ``repeats`` batches of the mean time of one of ``calls`` back-to-back calls."""
    def batch() -> None:
        for _ in range(calls):
            fn()
    return median_seconds(batch, repeats) / calls


def num(x: float) -> str:
    """At least three significant digits, fixed notation, at most four decimals."""
    if x == 0 or not math.isfinite(x):
        return str(x)
    decimals = max(0, min(4, 2 - math.floor(math.log10(abs(x)))))
    return f"{x:.{decimals}f}"


def ratio(a: float, b: float) -> str:
    """``a / b`` as a speedup such as ``3.4x``."""
    return f"{num(a / b)}x" if b > 0 else "inf"


def ms(seconds: float) -> float:
    """Seconds to milliseconds."""
    return seconds * 1e3


def us(seconds: float) -> float:
    """Seconds to microseconds."""
    return seconds * 1e6


# -- 1. vocabulary load and trie build ----------------------------------------------------------------


def bench_load(name: str, cfg: Config) -> tuple[gd.Vocabulary, dict[str, Any]]:
    """Load ``name`` and build its per-vocabulary structures, each timed on a fresh ``Vocabulary``
    (median of repeats); return the last vocabulary, fully built, and the numbers.

    The trie is ``Vocabulary.trie``; the string slice (``masking.slices.string_slice``, the
    plain-string fast path's precomputation; ``Vocabulary.string_slice`` in earlier versions) is
    timed too when this version of the library has it."""
    path = vocab_path(name)
    try:
        from grammar_decode.masking.slices import string_slice as build_slice
    except ImportError:
        build_slice = None
    load, trie, string_slice = [], [], []
    vocab = None
    for _ in range(max(1, cfg.load_repeats)):
        seconds, vocab = timed(lambda: gd.Vocabulary.from_gguf(path))
        load.append(seconds)
        trie.append(timed(lambda: vocab.trie)[0])
        if build_slice is not None:
            string_slice.append(timed(lambda: build_slice(vocab))[0])
        elif hasattr(type(vocab), "string_slice"):  # on the class: hasattr would build it
            string_slice.append(timed(lambda: vocab.string_slice)[0])
    assert vocab is not None
    vocab.prepare()
    vocab.ids_by_bytes()
    gc.collect()  # the first pass untracks tuples of atoms; the next ones are what a process pays
    full_gc = median_seconds(gc.collect, 3)
    return vocab, {
        "vocab": name, "tokens": len(vocab), "trie_nodes": len(vocab.trie), "max_token_bytes": vocab.trie.max_depth,
        "load_ms": ms(statistics.median(load)), "trie_build_ms": ms(statistics.median(trie)),
        "string_slice_ms": ms(statistics.median(string_slice)) if string_slice else None,
        "full_gc_ms": ms(full_gc),
    }


def load_table(rows: list[dict[str, Any]]) -> str:
    """Table of ``bench_load`` rows."""
    def opt(x: float | None) -> str:
        return "n/a" if x is None else num(x)

    return render_table(
        "Vocabulary load (GGUF -> Vocabulary) and per-vocabulary precomputation",
        ["vocabulary", "tokens", "trie nodes", "longest token (B)", "load ms", "trie build ms",
         "string slice ms", "total ms", "full gc ms"],
        [[r["vocab"], r["tokens"], r["trie_nodes"], r["max_token_bytes"], num(r["load_ms"]),
          num(r["trie_build_ms"]), opt(r["string_slice_ms"]),
          num(r["load_ms"] + r["trie_build_ms"] + (r["string_slice_ms"] or 0.0)), num(r["full_gc_ms"])]
         for r in rows],
    ) + ("\nfull gc: one gc.collect() with the prepared vocabulary held (the whole process's objects; what "
         "every full collection during generation costs).")


# -- 2. per-state mask cost ---------------------------------------------------------------------------


def state_after(grammar: gd.CompiledGrammar, prefix: bytes) -> State:
    """The recognizer state reached by a probe prefix."""
    state = grammar.recognizer.feed(grammar.recognizer.initial, prefix)
    if state is None:
        raise AssertionError(f"{prefix!r} is not a prefix of the schema")
    return state


def fresh_walk(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, state: State) -> np.ndarray:
    """The uncached mask: a new ``Masker`` (empty caches) computes it once: the walk of the lexer
    state (or, where the lexer loops on plain text, the string slice plus a walk of the rest
    trie), then the boundary walk for the parse."""
    return Masker(grammar.recognizer, vocab, completions=grammar.completions).mask(state)


def cold_walk_seconds(vocab: gd.Vocabulary, prefix: bytes, repeats: int) -> float:
    """Median seconds of a walk on a freshly compiled grammar (empty lexer DFA and parse tables
    beyond what reaching the prefix built)."""
    samples = []
    for _ in range(max(1, repeats)):
        grammar = gd.compile_json_schema(SCHEMA)
        state = state_after(grammar, prefix)
        gc.collect()
        start = time.perf_counter()
        fresh_walk(grammar, vocab, state)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def bench_state(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, label: str, prefix: bytes,
                cfg: Config) -> dict[str, Any]:
    """Cold walk, warm walk, reference replay and cache hit for one state."""
    state = state_after(grammar, prefix)
    cold_s = cold_walk_seconds(vocab, prefix, cfg.walk_repeats)
    walked = fresh_walk(grammar, vocab, state)  # leaves the lexer's transitions built
    warm_s = median_seconds(lambda: fresh_walk(grammar, vocab, state), cfg.walk_repeats)
    reference = ReferenceRecognizer(grammar.ir)
    replay_s, replayed = median_timed(lambda: reference_mask(reference, vocab, prefix), cfg.replay_repeats,
                                      max_seconds=cfg.max_seconds)
    masker = Masker(grammar.recognizer, vocab, completions=grammar.completions)
    masker.mask(state)
    hit_s = per_call_seconds(lambda: masker.mask(state), cfg.hit_calls)
    return {
        "state": label, "allowed": int(np.count_nonzero(walked)),
        "walk_cold_ms": ms(cold_s), "walk_warm_ms": ms(warm_s), "replay_ms": ms(replay_s),
        "cache_hit_us": us(hit_s), "masks_agree": bool(np.array_equal(walked, replayed)),
    }


def bench_states(vocab: gd.Vocabulary, cfg: Config) -> list[dict[str, Any]]:
    """``bench_state`` for every probe, on a freshly compiled grammar."""
    grammar = gd.compile_json_schema(SCHEMA)
    return [bench_state(grammar, vocab, label, prefix, cfg) for label, prefix in PROBES]


def states_table(name: str, vocab: gd.Vocabulary, rows: list[dict[str, Any]]) -> str:
    """Table of ``bench_state`` rows, with a sum row and a legend."""
    table_rows = [[r["state"], r["allowed"], num(r["walk_cold_ms"]), num(r["walk_warm_ms"]),
                   num(r["replay_ms"]), ratio(r["replay_ms"], r["walk_cold_ms"]),
                   ratio(r["replay_ms"], r["walk_warm_ms"]), num(r["cache_hit_us"]),
                   "yes" if r["masks_agree"] else "NO"] for r in rows]
    total = {k: sum(r[k] for r in rows) for k in ("walk_cold_ms", "walk_warm_ms", "replay_ms")}
    table_rows.append(["(sum)", "", num(total["walk_cold_ms"]), num(total["walk_warm_ms"]),
                       num(total["replay_ms"]), ratio(total["replay_ms"], total["walk_cold_ms"]),
                       ratio(total["replay_ms"], total["walk_warm_ms"]), "", ""])
    return render_table(
        f"Per-state mask cost, {name} ({len(vocab):,} tokens): uncached trie walk vs reference_mask",
        ["state", "allowed", "walk cold ms", "walk warm ms", "replay ms", "speedup cold",
         "speedup warm", "cache hit us", "masks agree"],
        table_rows,
    ) + ("walk = Masker.mask on a fresh Masker (uncached: lexeme walk + boundary walk; where the lexer "
         "loops on plain text, the string slice).\nwalk cold: on a freshly compiled grammar; walk warm: "
         "lexer transitions and parse states already built. speedup = reference / walk;\ncache hit = "
         "Masker.mask on a cached state; masks agree: walk mask == reference_mask.\n")


# -- 3. one document: cold, warm and disabled cache --------------------------------------------------


def random_logits_fn(vocab: gd.Vocabulary, seed: int) -> Callable[[Sequence[int]], np.ndarray]:
    """Logits of a model that knows nothing: i.i.d. standard normal, one row per call."""
    rng = np.random.default_rng(seed)
    return lambda _ids: rng.standard_normal(len(vocab))


def states_along(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, token_ids: Sequence[int]) -> list[State]:
    """The state before each token of the document."""
    matcher = grammar.matcher(vocab)
    states = []
    for token in token_ids:
        states.append(matcher.state)
        matcher.advance(token)
    return states


Steps = list[tuple[float, float]]  # per step: (mask seconds, apply_mask seconds)


def replay_pass(matcher: gd.Matcher, token_ids: Sequence[int], logits: np.ndarray,
                max_tokens: int | None = None) -> Steps:
    """Per step, the seconds of ``matcher.mask()`` and of ``apply_mask`` with that mask, while
    feeding ``token_ids``. With ``max_tokens``, ``budget_mask`` replaces ``mask`` as in ``generate``."""
    gc.collect()
    steps = []
    for produced, token in enumerate(token_ids):
        start = time.perf_counter()
        mask = matcher.mask() if max_tokens is None else matcher.budget_mask(max_tokens - produced)
        middle = time.perf_counter()
        gd.apply_mask(logits, mask)
        steps.append((middle - start, time.perf_counter() - middle))
        matcher.advance(token)
    return steps


def disabled_pass(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, states: Sequence[State],
                  logits: np.ndarray) -> Steps:
    """Like ``replay_pass`` with the mask cache switched off: a fresh trie walk at each step."""
    gc.collect()
    steps = []
    for state in states:
        start = time.perf_counter()
        mask = fresh_walk(grammar, vocab, state)
        middle = time.perf_counter()
        gd.apply_mask(logits, mask)
        steps.append((middle - start, time.perf_counter() - middle))
    return steps


def median_pass(passes: list[Steps]) -> Steps:
    """The pass whose total mask time is the median."""
    return sorted(passes, key=lambda p: sum(m for m, _ in p))[len(passes) // 2]


def mode_summary(steps: Steps, miss_steps: Sequence[bool] | None = None) -> dict[str, Any]:
    """Totals (ms) of one pass, and its per-step mask times."""
    out: dict[str, Any] = {
        "mask_ms": ms(sum(m for m, _ in steps)),
        "mask_apply_ms": ms(sum(m + a for m, a in steps)),
        "step_mask_ms": [ms(m) for m, _ in steps],
    }
    if miss_steps is not None:
        out["miss_mask_ms"] = ms(sum(m for (m, _), miss in zip(steps, miss_steps) if miss))
        out["hit_mask_ms"] = out["mask_ms"] - out["miss_mask_ms"]
    return out


def cache_info(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary) -> dict[str, dict[str, int]]:
    """Every cache of the (grammar, vocabulary) pair: the masker's and the closing budget's (part
    of the masker in earlier versions)."""
    info = dict(grammar.masker(vocab).cache_info())
    if hasattr(grammar, "budget"):
        info.update(grammar.budget(vocab).cache_info())
    return info


def budget_walk_count(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary) -> int:
    """States whose canonical completion the closing budget computed."""
    return cache_info(grammar, vocab)["finish"]["entries"]


def fresh_grammar_passes(vocab: gd.Vocabulary, tokens: Sequence[int], logits: np.ndarray, repeats: int,
                         max_tokens: int | None = None) -> tuple[list[Steps], list[gd.CompiledGrammar]]:
    """``repeats`` cold passes, each on a freshly compiled grammar (empty lexer DFA and parse states, empty
    mask cache); returns the passes and the grammars, whose caches they filled."""
    passes, grammars = [], []
    for _ in range(max(1, repeats)):
        grammar = gd.compile_json_schema(SCHEMA)
        passes.append(replay_pass(grammar.matcher(vocab), tokens, logits, max_tokens))
        grammars.append(grammar)
    return passes, grammars


def repeat_passes(run: Callable[[], Steps], repeats: int, max_seconds: float) -> list[Steps]:
    """Up to ``repeats`` passes of ``run``, fewer once their mask time adds up to ``max_seconds``."""
    passes: list[Steps] = []
    while len(passes) < max(1, repeats) and sum(m for p in passes for m, _ in p) < max_seconds:
        passes.append(run())
    return passes


def bench_document(vocab: gd.Vocabulary, cfg: Config, seed: int, max_tokens: int) -> dict[str, Any]:
    """Generate one document with random logits, then time its masks cold, warm and uncached."""
    gen_grammar = gd.compile_json_schema(SCHEMA)
    result = gd.generate(random_logits_fn(vocab, seed), gen_grammar, vocab, max_tokens=max_tokens,
                         temperature=1.0, seed=seed)
    tokens = result.token_ids
    logits = np.random.default_rng(seed + 1).standard_normal(len(vocab)).astype(np.float32)  # as a model returns

    cold, cold_grammars = fresh_grammar_passes(vocab, tokens, logits, cfg.cold_passes)
    budget, budget_grammars = fresh_grammar_passes(vocab, tokens, logits, cfg.cold_passes, max_tokens)
    grammar = cold_grammars[-1]  # its cache is full: the warm passes reuse its masker
    warm = repeat_passes(lambda: replay_pass(grammar.matcher(vocab), tokens, logits), cfg.warm_passes,
                         cfg.max_seconds)
    states = states_along(grammar, vocab, tokens)
    disabled = repeat_passes(lambda: disabled_pass(grammar, vocab, states, logits), cfg.disabled_passes,
                             cfg.max_seconds)
    return {
        "seed": seed, "max_tokens": max_tokens, "tokens": len(tokens),
        "distinct_states": grammar.masker(vocab).cache_info()["masks"]["misses"],
        "stop_reason": result.stop_reason, "text_head": result.text[:80],
        "generate_mask_ms": ms(result.mask_seconds), "generate_total_ms": ms(result.total_seconds),
        "generate_budget_walks": budget_walk_count(gen_grammar, vocab),
        "cold": mode_summary(median_pass(cold), _miss_steps(grammar, vocab, tokens)),
        "cold_budget": mode_summary(median_pass(budget)),
        "budget_walks": budget_walk_count(budget_grammars[-1], vocab),
        "warm": mode_summary(median_pass(warm)), "disabled": mode_summary(median_pass(disabled)),
    }


def _miss_steps(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, tokens: Sequence[int]) -> list[bool]:
    """For each step, whether a cold cache misses there (the state is seen for the first time)."""
    seen: set[State] = set()
    out = []
    for state in states_along(grammar, vocab, tokens):
        out.append(state not in seen)
        seen.add(state)
    return out


def document_table(name: str, doc: dict[str, Any]) -> str:
    """Table of one ``bench_document`` result, with notes."""
    n = max(1, doc["tokens"])
    cold, warm, disabled = doc["cold"], doc["warm"], doc["disabled"]

    def row(label: str, mode: dict[str, Any]) -> list[str]:
        return [label, num(mode["mask_ms"]), num(mode["mask_ms"] / n), ratio(mode["mask_ms"], warm["mask_ms"]),
                num(mode["mask_apply_ms"]), num(mode["mask_apply_ms"] / n),
                ratio(mode["mask_apply_ms"], warm["mask_apply_ms"])]

    rows = [
        row("cache disabled (fresh walk every step)", disabled),
        row("cold cache (fresh grammar, walks on misses)", cold),
        ["  cold: steps that walk (misses)", num(cold["miss_mask_ms"]), "", "", "", "", ""],
        ["  cold: steps served from the cache", num(cold["hit_mask_ms"]), "", "", "", "", ""],
        row(f"cold cache + closing budget ({doc['budget_walks']} completions computed)", doc["cold_budget"]),
        row("warm cache (second matcher, same masker)", warm),
    ]
    title = (f"One document, {name}: {n} tokens, {doc['distinct_states']} distinct states, "
             f"stop={doc['stop_reason']} (seed {doc['seed']}, max_tokens {doc['max_tokens']})")
    notes = (f"mask = Matcher.mask() at every step while replaying the generated tokens; m+a adds "
             f"apply_mask on float32 logits (what generate() counts as mask time).\n"
             f"closing budget: Matcher.budget_mask(max_tokens - step), as generate() calls it; each new "
             f"state computes its canonical completion once.\n"
             f"generate() itself (cold cache, budget_mask + apply_mask): mask {num(doc['generate_mask_ms'])} ms "
             f"of {num(doc['generate_total_ms'])} ms total, {doc['generate_budget_walks']} canonical completions computed.\n"
             f"document starts: {doc['text_head']!r}\n")
    return render_table(title, ["mode", "mask ms", "mask ms/tok", "vs warm", "mask+apply ms",
                                "m+a ms/tok", "m+a vs warm"], rows) + notes


# -- 5. the cache keys on nested documents ----------------------------------------------------------

#: Three levels of arrays, at most 4 items each: the case where whole-stack cache keys multiplied.
NESTED: dict[str, Any] = {"type": "array", "maxItems": 4, "items": {"type": "array", "maxItems": 4, "items": {
    "type": "array", "maxItems": 4, "items": {"type": "integer"}}}}


def bench_nested_cache(vocab: gd.Vocabulary, walks: int, seed: int) -> dict[str, Any]:
    """``walks`` random token walks through ``NESTED`` (a mask at every step): how many distinct
    states they met, and what the masker's caches hold afterwards."""
    grammar = gd.compile_json_schema(NESTED, whitespace="compact")
    rng = np.random.default_rng(seed)
    eos = set(vocab.eos_token_ids)
    states, lexer_states = set(), set()
    for _ in range(walks):
        matcher = grammar.matcher(vocab)
        for _step in range(80):
            states.add(matcher.state)
            lexer_states.add(matcher.state[0])
            allowed = [t for t in np.flatnonzero(matcher.mask()).tolist() if t not in eos]
            if not allowed or (matcher.is_accepting() and rng.random() < 0.2):
                break
            matcher.advance(int(rng.choice(allowed)))
    info = cache_info(grammar, vocab)
    return {"walks": walks, "distinct_states": len(states), "distinct_lexer_states": len(lexer_states),
            **{f"{k}_entries": v["entries"] for k, v in info.items()},
            **{f"{k}_bytes": v["bytes"] for k, v in info.items()}}


def nested_table(name: str, row: dict[str, Any]) -> str:
    parts = ["lexeme_parts", "boundary_parts", "masks", "packed", "finish", "successor_bytes"]
    return render_table(
        f"Cache keys on three nested arrays (maxItems 4), {name}: {row['walks']} random walks, "
        f"{row['distinct_states']} distinct states, {row['distinct_lexer_states']} distinct lexer states",
        ["cache", "entries", "KiB held"],
        [[p, row[f"{p}_entries"], num(row[f"{p}_bytes"] / 1024)] for p in parts],
    ) + ("lexeme_parts: per lexer state (shared by every nesting depth); boundary_parts: token ids per "
         "(lexer state, parse); masks/packed: recent whole masks (a small LRU).\n")


# -- 6. the closing budget's cost against the size of the document ------------------------------------


def bench_budget_scaling(vocab: gd.Vocabulary, sizes: Sequence[int], seed: int) -> list[dict[str, Any]]:
    """Objects of ``n`` required string properties: one random-logits document each at a budget
    just above the shortest, then its masks replayed on a fresh grammar with and without the
    closing budget (ms per token)."""
    rows = []
    for n in sizes:
        props = {f"field_{i}": {"type": "string"} for i in range(n)}
        schema = {"type": "object", "properties": props, "required": list(props)}
        grammar = gd.compile_json_schema(schema, whitespace="compact")
        max_tokens = grammar.min_completion_tokens(vocab) + 24
        result = gd.generate(random_logits_fn(vocab, seed), grammar, vocab, max_tokens=max_tokens, seed=seed)
        tokens = result.token_ids
        logits = np.zeros(len(vocab), dtype=np.float32)
        plain = replay_pass(gd.compile_json_schema(schema, whitespace="compact").matcher(vocab), tokens, logits)
        budget = replay_pass(gd.compile_json_schema(schema, whitespace="compact").matcher(vocab), tokens, logits,
                             max_tokens)
        rows.append({"properties": n, "tokens": len(tokens), "stop": result.stop_reason,
                     "plain_ms_per_token": ms(sum(m for m, _ in plain)) / max(1, len(tokens)),
                     "budget_ms_per_token": ms(sum(m for m, _ in budget)) / max(1, len(tokens))})
    return rows


def budget_table(name: str, rows: list[dict[str, Any]]) -> str:
    return render_table(
        f"Closing budget cost against document size, {name} (cold caches, random logits, max_tokens = shortest + 24)",
        ["required properties", "tokens", "stop", "mask ms/tok", "budget_mask ms/tok"],
        [[r["properties"], r["tokens"], r["stop"], num(r["plain_ms_per_token"]), num(r["budget_ms_per_token"])]
         for r in rows],
    )


# -- 4. packing and applying masks -------------------------------------------------------------------


def token_ids_of(vocab: gd.Vocabulary, text: bytes) -> list[int]:
    """``text`` as single-byte tokens (every vocabulary here has one per byte value)."""
    by_bytes = {vocab.token_bytes(i): i for i in range(len(vocab)) if len(vocab.token_bytes(i)) == 1}
    return [by_bytes[bytes([b])] for b in text]


def bench_kernels(vocab: gd.Vocabulary, cfg: Config) -> list[dict[str, Any]]:
    """pack_mask, fill_bitmask (cached packed words) and apply_mask for a dense and a sparse mask."""
    grammar = gd.compile_json_schema(SCHEMA)
    probes = dict(PROBES)
    logits = np.random.default_rng(0).standard_normal(len(vocab)).astype(np.float32)
    out = np.zeros((1, gd.bitmask_words(len(vocab))), dtype=np.int32)
    rows = []
    for label in ("inside a string value", "after a value (',' next)"):
        matcher = grammar.matcher(vocab)
        for token in token_ids_of(vocab, probes[label]):
            matcher.advance(token)
        mask = matcher.mask()
        matcher.fill_bitmask(out)  # packs once; later calls copy the cached words
        rows.append({
            "mask": label, "allowed": int(np.count_nonzero(mask)),
            "pack_mask_us": us(median_seconds(lambda: pack_mask(mask), cfg.kernel_repeats)),
            "fill_bitmask_us": us(median_seconds(lambda: matcher.fill_bitmask(out), cfg.kernel_repeats)),
            "apply_mask_us": us(median_seconds(lambda: gd.apply_mask(logits, mask), cfg.kernel_repeats)),
        })
    return rows


def kernels_table(name: str, vocab: gd.Vocabulary, rows: list[dict[str, Any]]) -> str:
    """Table of ``bench_kernels`` rows."""
    return render_table(
        f"Mask packing and application, {name} ({len(vocab):,} tokens, float32 logits)",
        ["mask", "allowed", "pack_mask us", "fill_bitmask us (cached)", "apply_mask us"],
        [[r["mask"], r["allowed"], num(r["pack_mask_us"]), num(r["fill_bitmask_us"]), num(r["apply_mask_us"])]
         for r in rows],
    )


# -- driver ------------------------------------------------------------------------------------------


def header(info: dict[str, Any], cfg: Config, quick: bool) -> str:
    """The lines printed before any table."""
    lines = [
        "grammar_decode mask benchmark",
        f"date      {info['date']}",
        f"python    {info['implementation']} {info['python']}, numpy {info['numpy']}, "
        f"grammar_decode {info['grammar_decode']}",
        f"machine   {info['platform']} ({info['machine']}), {info['cpu_count']} CPUs",
        f"mode      {'quick' if quick else 'full'} (walk repeats {cfg.walk_repeats}, "
        f"warm passes {cfg.warm_passes}, medians reported)",
    ]
    return "\n".join(lines) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one or two repeats per measurement")
    parser.add_argument("--vocabs", default=",".join(VOCAB_NAMES),
                        help=f"comma-separated vocabularies (default: {','.join(VOCAB_NAMES)})")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random-logits document")
    parser.add_argument("--max-tokens", type=int, default=128, help="token budget of the document")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="where to write the JSON")
    parser.add_argument("--model", nargs="?", const="default", metavar="GGUF",
                        help="run the real-model conformance benchmark instead (bench/conformance.py; without "
                             "GGUF: the embedded Gemma 3 270M); its options: python bench/conformance.py --help")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run every section, print the tables, write the JSON. With ``--model``, run the real-model
    conformance benchmark (``bench/conformance.py``, which takes every option) instead."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if any(a == "--model" or a.startswith("--model=") for a in argv):
        import conformance

        return conformance.main(argv)
    args = parse_args(argv)
    cfg = Config.quick() if args.quick else Config()
    names = [n.strip() for n in args.vocabs.split(",") if n.strip()]
    started = time.perf_counter()
    info = machine_info()
    print(header(info, cfg, args.quick), flush=True)

    vocabs: dict[str, gd.Vocabulary] = {}
    load_rows = []
    for name in names:
        progress(f"loading {name}")
        vocabs[name], row = bench_load(name, cfg)
        load_rows.append(row)
    print(load_table(load_rows), flush=True)

    per_vocab: dict[str, Any] = {}
    for name, vocab in vocabs.items():
        progress(f"{name}: per-state walks and replays")
        states = bench_states(vocab, cfg)
        print(states_table(name, vocab, states), flush=True)
        progress(f"{name}: document")
        doc = bench_document(vocab, cfg, args.seed, args.max_tokens)
        print(document_table(name, doc), flush=True)
        progress(f"{name}: pack / fill_bitmask / apply_mask")
        kernels = bench_kernels(vocab, cfg)
        print(kernels_table(name, vocab, kernels), flush=True)
        progress(f"{name}: nested arrays, cache contents")
        nested = bench_nested_cache(vocab, walks=50 if args.quick else 200, seed=args.seed)
        print(nested_table(name, nested), flush=True)
        progress(f"{name}: closing budget against document size")
        scaling = bench_budget_scaling(vocab, (10, 30, 100) if args.quick else (10, 30, 100, 300), args.seed)
        print(budget_table(name, scaling), flush=True)
        per_vocab[name] = {"states": states, "document": doc, "kernels": kernels, "nested_cache": nested,
                           "budget_scaling": scaling}

    elapsed = time.perf_counter() - started
    results = {"meta": {**info, "quick": args.quick, "elapsed_s": elapsed, "config": asdict(cfg)},
               "schema": SCHEMA, "load": load_rows, "vocabs": per_vocab}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(f"benchmark finished in {elapsed:.1f} s; results written to {_display(args.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
