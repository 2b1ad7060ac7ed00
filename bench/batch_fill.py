#!/usr/bin/env python
"""Batch fill: ``gd.fill_bitmasks`` with 1 and 2 threads, B = 1, 16, 64 rows, on rows that hit
the mask cache and rows that miss it.

Rows are matchers of string schemas (``pattern``/``format``/``maxLength``: states where the trie
walk dominates), each at its own position in a valid instance. *Miss*: every row's state is new
(a fresh compile per round on a fresh shared expression set, so lexer rows, lexeme parts and masks
are all cold: grammars otherwise share them across compiles); *hit*: the same rows again; *miss,
lexer warm*: the masks and lexeme parts cold but the lexer's states and cells made (the same rows
filled once before, then compiled again with a cache budget of their own, which gives them
lexeme-part caches of their own: what a server sees once its lexer has met the states), which
tells the walks' share from the cells' (a cell is made with the GIL held). Llama-3 vocabulary (128k tokens). One and two
threads take turns round by round; prints the medians over rounds, and as the ratio the median
over rounds of each round's two threads over one.

    python bench/batch_fill.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import grammar_decode as gd  # noqa: E402
from grammar_decode.limits import DEFAULT_LIMITS, Limits  # noqa: E402
from grammar_decode.ir.regex import shared_exprs  # noqa: E402
from common import machine_info, render_table  # noqa: E402
from tools.vocab_files import vocab_path  # noqa: E402

SCHEMAS = [({"type": "string", "format": "email", "maxLength": 1024}, "joe.bloggs.someone@example-domain.com"),
           ({"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4,8}$"}, "ABC-12345678"),
           ({"type": "string", "format": "uri"}, "https://example.com/a/b?q=1#frag"),
           ({"type": "string", "pattern": "^[a-f0-9]{8}(-[a-f0-9]{4}){3}-[a-f0-9]{12}$", "maxLength": 64},
            "0123abcd-0123-4567-89ab-0123456789ab")]


def _rows(vocab: gd.Vocabulary, count: int, limits: Limits = DEFAULT_LIMITS) -> list[gd.Matcher]:
    """``count`` matchers, fresh grammars, each fed a different prefix of its instance."""
    grammars = [gd.compile_json_schema(schema, limits=limits) for schema, _ in SCHEMAS]
    rows = []
    for k in range(count):
        index = k % len(SCHEMAS)
        text = json.dumps(SCHEMAS[index][1]).encode()
        cut = 1 + (k // len(SCHEMAS)) % (len(text) - 2)
        matcher = grammars[index].matcher(vocab)
        state = grammars[index].recognizer.feed(grammars[index].recognizer.initial, text[:cut])
        matcher._states.append(state)  # the position after those bytes (tokens need not align)
        rows.append(matcher)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    vocab = gd.Vocabulary.from_gguf(vocab_path("llama-bpe"))
    gd.Matcher(gd.compile_json_schema({"type": "string"}), vocab).mask()  # per-vocabulary tables
    results = {}
    budgets = iter(range(1, 1 << 20))
    for batch in (1, 16, 64):
        out = np.zeros((batch, gd.bitmask_words(len(vocab))), dtype=np.int32)
        # per thread count: the miss, hit and lexer-warm times of each round; one and two threads
        # take turns round by round (the first of each turn alternating), so the machine's drift
        # over the run reaches both alike, and each round's ratio compares two fills minutes apart
        # at most, not two halves of the run
        times: dict[int, tuple[list[float], list[float], list[float]]] = {1: ([], [], []), 2: ([], [], [])}
        for turn in range(args.rounds):
            for threads in ((1, 2) if turn % 2 == 0 else (2, 1)):
                miss, hit, warm = times[threads]
                shared_exprs().retire()  # the next compiles start a new set: nothing built is shared
                rows = _rows(vocab, batch)
                started = time.perf_counter()
                gd.fill_bitmasks(rows, out, threads=threads)
                miss.append(time.perf_counter() - started)
                started = time.perf_counter()
                gd.fill_bitmasks(rows, out, threads=threads)
                hit.append(time.perf_counter() - started)
                # lexeme parts are shared per (lexer, vocabulary, budget): a budget of their own
                # (an even step: the parts get half of it) makes them cold, the lexer stays warm
                limits = Limits(cache_bytes=DEFAULT_LIMITS.cache_bytes + 2 * next(budgets))
                rows = _rows(vocab, batch, limits)
                started = time.perf_counter()
                gd.fill_bitmasks(rows, out, threads=threads)
                warm.append(time.perf_counter() - started)
        for threads in (1, 2):
            results[(batch, threads)] = tuple(statistics.median(values) for values in times[threads])
        # the ratio of each kind: the median over rounds of that round's two threads over one
        results[(batch, "ratio")] = tuple(statistics.median(b / a for a, b in zip(one, two))
                                          for one, two in zip(times[1], times[2]))
    table = []
    for batch in (1, 16, 64):
        (m1, h1, w1), (m2, h2, w2) = results[(batch, 1)], results[(batch, 2)]
        rm, rh, rw = results[(batch, "ratio")]
        table.append([batch, f"{m1 * 1000:.1f}", f"{m2 * 1000:.1f}", f"{rm:.2f}",
                      f"{w1 * 1000:.1f}", f"{w2 * 1000:.1f}", f"{rw:.2f}",
                      f"{h1 * 1000:.2f}", f"{h2 * 1000:.2f}", f"{rh:.2f}"])
    info = machine_info()
    print(render_table(f"fill_bitmasks, Llama-3 vocabulary, medians of {args.rounds} ({info['processor']}, {info['cpu_count']} cores)",
                       ["rows", "miss 1 thread (ms)", "miss 2 threads", "ratio", "miss, lexer warm: 1 thread",
                        "2 threads", "ratio", "hit 1 thread (ms)", "hit 2 threads", "ratio"], table))


if __name__ == "__main__":
    main()
