#!/usr/bin/env python
"""Per-token mask times side by side: this library, llguidance and xgrammar on the same schemas,
the same vocabulary and the same token sequences.

Run from the repository root (extra ``[bench]``; see the README for xgrammar)::

    python bench/compare.py                          # the corpus and the JSON-Schema-Test-Suite
    python bench/compare.py --schemastore DIR        # and SchemaStore (DIR: a checkout, or json/ + test/)
    python bench/compare.py --engines ours,llguidance --quick

What is measured. Schemas with valid instances come from three places: the corpus in
``tests/data/json_schema_corpus.json`` (its ``valid`` documents), the JSON-Schema-Test-Suite in
the ``jsonschema`` sdist (each group's valid instances; a schema written in several drafts once),
and, with ``--schemastore``, SchemaStore's schemas with the instances under its ``src/test/NAME/``.
Each instance is written as ``json.dumps`` writes it (``", "`` and ``": "``; keys in the order
the schema's ``properties`` name them, as every engine here writes them) and tokenized by the
real Llama-3 tokenizer (llama.cpp over ``ggml-vocab-llama-bpe.gguf``, vocabulary only; a greedy
longest-match tokenization where llama-cpp-python is not installed, said so in the output).
Every engine reads the same vocabulary and the same token sequences.

Each engine runs in its own worker process, every worker pinned to the same CPU, and the engines
take turns schema by schema, one at a time (so no two share the machine, and the machine's drift
over a run reaches all alike: run one engine after another and a host that slows down halfway
bills the second), with ``--timeout`` seconds per schema (compile and every sequence); a worker
that overruns is killed and replaced. A worker sets its inherited data (every schema and token
sequence) and its vocabulary aside from the cyclic garbage collector (``gc.freeze``) before the
first schema, so that a full collection, which an engine's own allocations trigger, is not billed
for traversing the harness's heap. Per schema: compile, a matcher, the first mask (the
"first mask" figure: compile + matcher + first mask, wall clock), then per sequence, from a new
matcher: for each token the mask is filled into a packed int32 bitmask (timed alone: the per-token
figure), the token is checked against it and committed, as a server does. A sequence an engine
rejects part-way stops there for that engine.

The headline figures are over the same work for every engine: per-token masks over the sequences
that every engine accepts in full, first masks over the schemas that every engine compiles. Ratios
are this library's figure over each peer's (below 1: faster here). Absolute times drift between
runs on shared machines; the ratios within one run are the comparison.

Engines: ``ours`` (``compile_json_schema`` defaults; ``Matcher.fill_bitmask``), ``llguidance``
(``LLMatcher.grammar_from_json_schema``, ``fill_next_token_bitmask``), ``xgrammar``
(``GrammarCompiler(..., max_threads=1).compile_json_schema(schema, strict_mode=False)``: strict
mode would close objects the schema leaves open; ``GrammarMatcher.fill_next_token_bitmask``).

Results: tables on stdout, ``bench/results/compare.json`` (every schema's figures) and
``bench/results/compare.png`` (log-scale distributions of both figures per engine).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import multiprocessing as mp
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import llguidance_tokenizer, machine_info, progress, render_table  # noqa: E402

import grammar_decode as gd  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
ENGINES = ("ours", "llguidance", "xgrammar")
QUANTILES = (("p50", 0.5), ("p75", 0.75), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999))

# set in the parent before the workers fork: every worker reads the same tasks
_TASKS: list[dict[str, Any]] = []


# -- the schemas and their token sequences ---------------------------------------------------------

def _ordered(value: Any, schema: Any) -> Any:
    from tools.json_schema_suite import ordered
    return ordered(value, schema)


def _text(instance: Any, schema: Any) -> Optional[str]:
    try:
        return json.dumps(_ordered(instance, schema), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


def corpus_tasks() -> Iterator[dict[str, Any]]:
    data = json.loads((ROOT / "tests" / "data" / "json_schema_corpus.json").read_text(encoding="utf-8"))
    for name, entry in sorted(data.items()):
        yield {"source": "corpus", "name": name, "schema": entry["schema"], "instances": entry.get("valid", [])}


def suite_tasks() -> Iterator[dict[str, Any]]:
    from tools.json_schema_suite import groups, suite_dir
    seen: set[str] = set()
    for _draft, name, group in groups(suite_dir()):
        key = json.dumps(group["schema"], sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        valid = [t["data"] for t in group["tests"] if t.get("valid")]
        yield {"source": "suite", "name": name, "schema": group["schema"], "instances": valid}


def schemastore_tasks(root: Path) -> Iterator[dict[str, Any]]:
    schemas = root / "src" / "schemas" / "json" if (root / "src").is_dir() else root / "json"
    tests = root / "src" / "test" if (root / "src").is_dir() else root / "test"
    for path in sorted(schemas.glob("*.json")):
        folder = tests / path.stem
        if not folder.is_dir():
            continue
        instances = []
        for instance_path in sorted(folder.glob("*.json")):
            try:
                instances.append(json.loads(instance_path.read_text(encoding="utf-8-sig")))
            except (ValueError, UnicodeDecodeError):
                continue
        try:
            schema = json.loads(path.read_text(encoding="utf-8-sig"))
        except (ValueError, UnicodeDecodeError):
            continue
        if instances:
            yield {"source": "schemastore", "name": path.name, "schema": schema, "instances": instances}


class Tokenizer:
    """The real Llama-3 tokenization (llama.cpp, vocabulary only), or greedy longest match."""

    def __init__(self, vocab_file: Path, vocab: gd.Vocabulary) -> None:
        self.kind = "llama.cpp"
        try:
            import llama_cpp
            self._llama: Any = llama_cpp.Llama(model_path=str(vocab_file), vocab_only=True, verbose=False)
        except ImportError:
            self.kind, self._llama = "greedy longest match (llama-cpp-python not installed)", None
            from common import GreedyTokens
            self._greedy = GreedyTokens(list(vocab.tokens), 0)

    def __call__(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        if self._llama is not None:
            return list(self._llama.tokenize(data, add_bos=False, special=False))
        return self._greedy(data)


def build_tasks(args: argparse.Namespace, vocab_file: Path, vocab: gd.Vocabulary) -> tuple[list[dict[str, Any]], str]:
    sources: list[Iterator[dict[str, Any]]] = []
    if not args.no_corpus:
        sources.append(corpus_tasks())
    if not args.no_suite:
        sources.append(suite_tasks())
    if args.schemastore is not None:
        sources.append(schemastore_tasks(args.schemastore))
    tokenizer = Tokenizer(vocab_file, vocab)
    tasks = []
    for source in sources:
        count = 0
        for task in source:
            if args.limit and count >= args.limit:
                break
            sequences = []
            for instance in task.pop("instances")[:args.documents]:
                text = _text(instance, task["schema"])
                if text is None:
                    continue
                tokens = tokenizer(text)
                if len(tokens) <= args.max_tokens and tokens:
                    sequences.append(tokens)
            if sequences:
                task["sequences"] = sequences
                tasks.append(task)
                count += 1
    return tasks, tokenizer.kind


# -- the engines -------------------------------------------------------------------------------

class Engine:
    """One engine's compile / matcher / fill / commit over the shared vocabulary."""

    name = ""

    def __init__(self, vocab: gd.Vocabulary) -> None:
        self.size = len(vocab)
        self.eos = vocab.eos_token_ids[0] if vocab.eos_token_ids else 0

    def compile(self, schema: Any) -> Any: raise NotImplementedError
    def matcher(self, grammar: Any) -> Any: raise NotImplementedError
    def fill(self, matcher: Any) -> None: raise NotImplementedError
    def allowed(self, token: int) -> bool: raise NotImplementedError
    def commit(self, matcher: Any, token: int) -> bool: raise NotImplementedError


class Ours(Engine):
    name = "ours"

    def __init__(self, vocab: gd.Vocabulary) -> None:
        super().__init__(vocab)
        self.vocab = vocab
        self.bitmask = np.zeros((1, (self.size + 31) // 32), dtype=np.int32)
        # the per-vocabulary tables are built once per model, not per schema
        gd.compile_json_schema({"type": "string"}).matcher(vocab).mask()

    def compile(self, schema: Any) -> Any:
        return gd.compile_json_schema(schema)

    def matcher(self, grammar: Any) -> Any:
        return grammar.matcher(self.vocab)

    def fill(self, matcher: Any) -> None:
        matcher.fill_bitmask(self.bitmask)

    def allowed(self, token: int) -> bool:
        return bool((int(self.bitmask[0, token >> 5]) >> (token & 31)) & 1)

    def commit(self, matcher: Any, token: int) -> bool:
        try:
            matcher.advance(token)
            return True
        except gd.TokenRejected:
            return False


class LLGuidance(Engine):
    name = "llguidance"

    def __init__(self, vocab: gd.Vocabulary) -> None:
        super().__init__(vocab)
        import llguidance
        import llguidance.numpy
        self.llg = llguidance
        self.tokenizer = llguidance_tokenizer(vocab)
        self.bitmask = llguidance.numpy.allocate_token_bitmask(1, self.tokenizer.vocab_size)
        self._fill = llguidance.numpy.fill_next_token_bitmask

    def compile(self, schema: Any) -> Any:
        grammar = self.llg.LLMatcher.grammar_from_json_schema(schema)
        matcher = self.llg.LLMatcher(self.tokenizer, grammar)  # compile errors show on the matcher
        if matcher.is_error():
            raise RuntimeError(matcher.get_error())
        return grammar

    def matcher(self, grammar: Any) -> Any:
        return self.llg.LLMatcher(self.tokenizer, grammar)

    def fill(self, matcher: Any) -> None:
        self._fill(matcher, self.bitmask, 0)

    def allowed(self, token: int) -> bool:
        return bool((int(self.bitmask[0, token >> 5]) >> (token & 31)) & 1)

    def commit(self, matcher: Any, token: int) -> bool:
        return bool(matcher.consume_token(token)) and not matcher.is_error()


class XGrammar(Engine):
    name = "xgrammar"

    def __init__(self, vocab: gd.Vocabulary) -> None:
        super().__init__(vocab)
        import xgrammar
        self.xgr = xgrammar
        info = xgrammar.TokenizerInfo(list(vocab.tokens), vocab_type=xgrammar.VocabType.RAW,
                                      vocab_size=self.size, stop_token_ids=[self.eos])
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        self.bitmask = xgrammar.allocate_token_bitmask(1, self.size)
        self.words = self.bitmask.numpy()  # a view of the same memory

    def compile(self, schema: Any) -> Any:
        return self.compiler.compile_json_schema(json.dumps(schema), strict_mode=False)

    def matcher(self, grammar: Any) -> Any:
        return self.xgr.GrammarMatcher(grammar)

    def fill(self, matcher: Any) -> None:
        matcher.fill_next_token_bitmask(self.bitmask)

    def allowed(self, token: int) -> bool:
        return bool((int(self.words[0, token >> 5]) >> (token & 31)) & 1)

    def commit(self, matcher: Any, token: int) -> bool:
        return bool(matcher.accept_token(token))


_ENGINE_CLASSES = {"ours": Ours, "llguidance": LLGuidance, "xgrammar": XGrammar}


def available(name: str) -> Optional[str]:
    """None when engine ``name`` can run here, else why not."""
    module = {"ours": None, "llguidance": "llguidance", "xgrammar": "xgrammar"}[name]
    if module is None:
        return None
    try:
        __import__(module)
    except ImportError as exc:
        return f"{module} is not installed ({exc})"
    return None


def run_task(engine: Engine, task: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        grammar = engine.compile(task["schema"])
        compiled = time.perf_counter()
        matcher = engine.matcher(grammar)
        engine.fill(matcher)
        first = time.perf_counter()
    except Exception as exc:  # a refusal (typed or not): the engine does not compile this schema
        return {"outcome": "refused", "reason": f"{type(exc).__name__}: {str(exc)[:160]}"}
    sequences = []
    for index, tokens in enumerate(task["sequences"]):
        if index:
            matcher = engine.matcher(grammar)
        times: list[int] = []
        rejected_at = None
        for position, token in enumerate(tokens):
            before = time.perf_counter_ns()
            engine.fill(matcher)
            times.append(time.perf_counter_ns() - before)
            if not engine.allowed(token) or not engine.commit(matcher, token):
                rejected_at = position
                break
        sequences.append({"mask_ns": times, "rejected_at": rejected_at})
    return {"outcome": "compiled", "compile_s": compiled - start, "first_mask_s": first - start,
            "sequences": sequences}


def _worker(name: str, cpu: int, vocab_file: str, inbox: Any, outbox: Any) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    vocab = gd.Vocabulary.from_gguf(vocab_file)
    engine = _ENGINE_CLASSES[name](vocab)
    # The harness's own data (every schema and token sequence, inherited by the fork) and the
    # vocabulary are set aside from the cyclic collector: a full collection would otherwise
    # traverse them, and bill an engine whose masks allocate for the harness's heap (~60 ms a
    # collection over this corpus). What engines make while they run is collected as usual.
    gc.collect()
    gc.freeze()
    outbox.put(("ready", None))
    while True:
        index = inbox.get()
        if index is None:
            return
        try:
            outbox.put((index, run_task(engine, _TASKS[index])))
        except Exception:  # the harness's own failure: reported, not hidden
            outbox.put((index, {"outcome": "crash", "reason": traceback.format_exc()[-800:]}))


class _Worker:
    """One engine's pinned worker process, started on first use and replaced after an overrun."""

    def __init__(self, name: str, cpu: int, vocab_file: Path) -> None:
        self.name, self.cpu, self.vocab_file = name, cpu, vocab_file
        self._running: Optional[tuple[Any, Any, Any]] = None

    def run(self, index: int, timeout: float) -> dict[str, Any]:
        """Task ``index`` through this engine: its result, or a timeout or crash."""
        if self._running is None:
            context = mp.get_context("fork")
            inbox, outbox = context.Queue(), context.Queue()
            process = context.Process(target=_worker, args=(self.name, self.cpu, str(self.vocab_file), inbox, outbox),
                                      daemon=True)
            process.start()
            outbox.get(timeout=600)  # the vocabulary and the engine's tables, once per worker
            self._running = (process, inbox, outbox)
        process, inbox, outbox = self._running
        inbox.put(index)
        began = time.perf_counter()
        while True:
            try:
                _index, result = outbox.get(timeout=0.5)
                return result
            except Exception:  # the queue's Empty: still working, overrun, or died
                died = not process.is_alive()
                if died or time.perf_counter() - began > timeout:
                    process.kill()
                    process.join()
                    self._running = None
                    return ({"outcome": "crash", "reason": f"worker exit {process.exitcode}"} if died
                            else {"outcome": "timeout", "reason": f"over {timeout:g} s"})

    def close(self) -> None:
        if self._running is not None:
            self._running[1].put(None)
            self._running[0].join(timeout=10)
            self._running = None


def run_engines(names: list[str], cpu: int, vocab_file: Path, timeout: float) -> dict[str, list[dict[str, Any]]]:
    """Every task through every engine, each engine in its own worker pinned to CPU ``cpu``, the
    engines taking turns schema by schema (one at a time, the first of each turn alternating), so
    that the machine's drift over a run (other tenants, clock changes) reaches every engine
    alike rather than whichever ran last."""
    workers = {name: _Worker(name, cpu, vocab_file) for name in names}
    results: dict[str, list[dict[str, Any]]] = {name: [{} for _ in _TASKS] for name in names}
    spent = dict.fromkeys(names, 0.0)
    try:
        for index in range(len(_TASKS)):
            for name in (names if index % 2 == 0 else names[::-1]):
                began = time.perf_counter()
                results[name][index] = workers[name].run(index, timeout)
                spent[name] += time.perf_counter() - began
            if (index + 1) % 100 == 0:
                progress(f"{index + 1}/{len(_TASKS)} schemas")
    finally:
        for worker in workers.values():
            worker.close()
    progress(", ".join(f"{name}: {seconds:.0f} s" for name, seconds in spent.items()))
    return results


# -- the figures -------------------------------------------------------------------------------

def quantile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def summarize(names: list[str], results: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The counts per engine, and the figures over the work every engine did in full."""
    out: dict[str, Any] = {"engines": {}}
    common_tasks = [i for i in range(len(_TASKS)) if all(results[n][i].get("outcome") == "compiled" for n in names)]
    common_sequences = [(i, j) for i in common_tasks for j in range(len(_TASKS[i]["sequences"]))
                        if all(results[n][i]["sequences"][j]["rejected_at"] is None for n in names)]
    for name in names:
        rows = results[name]
        outcomes = {k: sum(1 for r in rows if r.get("outcome") == k) for k in ("compiled", "refused", "timeout", "crash")}
        sequences = [s for r in rows if r.get("outcome") == "compiled" for s in r["sequences"]]
        masks = sorted(t / 1000 for i, j in common_sequences for t in rows[i]["sequences"][j]["mask_ns"])
        firsts = sorted(rows[i]["first_mask_s"] * 1000 for i in common_tasks)
        out["engines"][name] = {
            "outcomes": outcomes,
            "sequences_accepted": sum(1 for s in sequences if s["rejected_at"] is None),
            "sequences_run": len(sequences),
            "mask_us": {**{label: quantile(masks, q) for label, q in QUANTILES},
                        "max": masks[-1] if masks else math.nan,
                        "average": sum(masks) / len(masks) if masks else math.nan},
            "first_mask_ms": {label: quantile(firsts, q) for label, q in (("p50", .5), ("p90", .9), ("p99", .99))}
            | {"max": firsts[-1] if firsts else math.nan},
            "_masks": masks, "_firsts": firsts,
        }
    out["common_schemas"] = len(common_tasks)
    out["common_sequences"] = len(common_sequences)
    out["common_tokens"] = sum(len(_TASKS[i]["sequences"][j]) for i, j in common_sequences)
    return out


def _cell(value: float, digits: int = 1) -> str:
    return "-" if value != value else f"{value:,.{digits}f}"


def tables(names: list[str], summary: dict[str, Any]) -> str:
    engines = summary["engines"]
    head = ["engine", "compiled", "refused", "timeout", "crash", "sequences accepted"]
    counts = [[n, *(engines[n]["outcomes"][k] for k in ("compiled", "refused", "timeout", "crash")),
               f"{engines[n]['sequences_accepted']}/{engines[n]['sequences_run']}"] for n in names]
    text = render_table(f"{len(_TASKS)} schemas with valid instances", head, counts) + "\n"
    labels = [label for label, _ in QUANTILES] + ["max", "average"]
    rows = [[label] + [_cell(engines[n]["mask_us"][label]) for n in names] +
            [_cell(engines["ours"]["mask_us"][label] / engines[n]["mask_us"][label], 2)
             for n in names if n != "ours" and "ours" in engines] for label in labels]
    ratio_heads = [f"ours/{n}" for n in names if n != "ours" and "ours" in engines]
    text += render_table(f"per-token mask (µs): {summary['common_tokens']:,} tokens of the "
                         f"{summary['common_sequences']} sequences every engine accepts", ["figure", *names, *ratio_heads],
                         rows) + "\n"
    rows = [[label] + [_cell(engines[n]["first_mask_ms"][label], 2) for n in names] +
            [_cell(engines["ours"]["first_mask_ms"][label] / engines[n]["first_mask_ms"][label], 2)
             for n in names if n != "ours" and "ours" in engines] for label in ("p50", "p90", "p99", "max")]
    text += render_table(f"first mask (compile + matcher + mask, ms): the {summary['common_schemas']} schemas every "
                         "engine compiles", ["figure", *names, *ratio_heads], rows)
    return text


def plot(names: list[str], summary: dict[str, Any], path: Path) -> Optional[str]:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for name in names:
        for axis, key in zip(axes, ("_masks", "_firsts")):
            values = summary["engines"][name][key]
            if values:
                axis.plot(values, np.linspace(0, 1, len(values), endpoint=False), label=name)
    axes[0].set_xlabel("per-token mask (µs)")
    axes[1].set_xlabel("first mask: compile + matcher + mask (ms)")
    for axis in axes:
        axis.set_xscale("log")
        axis.set_ylabel("fraction at or below")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend()
    axes[0].set_title(f"{summary['common_tokens']:,} tokens, the sequences every engine accepts")
    axes[1].set_title(f"{summary['common_schemas']} schemas every engine compiles")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return None


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated, of: " + ", ".join(ENGINES))
    parser.add_argument("--schemastore", type=Path, help="a SchemaStore checkout (or a folder with json/ and test/)")
    parser.add_argument("--no-corpus", action="store_true", help="leave out tests/data's corpus")
    parser.add_argument("--no-suite", action="store_true", help="leave out the JSON-Schema-Test-Suite")
    parser.add_argument("--documents", type=int, default=3, help="valid instances per schema (default 3)")
    parser.add_argument("--max-tokens", type=int, default=4000, help="longest sequence kept (default 4000)")
    parser.add_argument("--limit", type=int, default=0, help="at most N schemas per source")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per schema and engine (default 60)")
    parser.add_argument("--quick", action="store_true", help="20 schemas per source, one instance each")
    parser.add_argument("--json", type=Path, default=RESULTS / "compare.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "compare.png")
    args = parser.parse_args(argv)
    if args.quick:
        args.limit, args.documents = args.limit or 20, 1
    from tools.vocab_files import vocab_path
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        parser.error(f"unknown engine(s): {', '.join(unknown)}")
    skipped = {n: why for n in names if (why := available(n)) is not None}
    for name, why in skipped.items():
        print(f"[compare] {name} left out: {why}", file=sys.stderr)
    names = [n for n in names if n not in skipped]
    vocab_file = vocab_path("llama-bpe")
    vocab = gd.Vocabulary.from_gguf(vocab_file)
    tasks, tokenization = build_tasks(args, vocab_file, vocab)
    _TASKS[:] = tasks
    progress(f"{len(tasks)} schemas, {sum(len(t['sequences']) for t in tasks)} sequences, "
             f"{sum(len(s) for t in tasks for s in t['sequences']):,} tokens ({tokenization}); engines: {', '.join(names)}")
    cpu = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    progress(f"{len(tasks)} schemas on CPU {cpu}, the engines taking turns")
    results = run_engines(names, cpu, vocab_file, args.timeout)
    summary = summarize(names, results)
    print(f"compare: {len(tasks)} schemas ({', '.join(sorted({t['source'] for t in tasks}))}), Llama-3 vocabulary "
          f"({len(vocab):,} tokens), tokenization: {tokenization}")
    print(tables(names, summary))
    RESULTS.mkdir(parents=True, exist_ok=True)
    why = plot(names, summary, args.plot)
    print(why or f"plot: {args.plot}")
    record = {"machine": machine_info(), "tokenization": tokenization, "engines": names, "skipped": skipped,
              "summary": {k: v for k, v in summary.items() if k != "engines"} |
              {"engines": {n: {k: v for k, v in e.items() if not k.startswith("_")}
                           for n, e in summary["engines"].items()}},
              "schemas": [{"source": t["source"], "name": t["name"], "tokens": [len(s) for s in t["sequences"]],
                           **{n: {k: v for k, v in results[n][i].items() if k != "sequences"} |
                              ({"rejected_at": [s["rejected_at"] for s in results[n][i]["sequences"]],
                                "mask_us_sum": sum(sum(s["mask_ns"]) for s in results[n][i]["sequences"]) / 1000,
                                "mask_us_max": max((max(s["mask_ns"], default=0) for s in results[n][i]["sequences"]),
                                                   default=0) / 1000}
                               if "sequences" in results[n][i] else {})
                              for n in names}}
                         for i, t in enumerate(tasks)]}
    args.json.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"results: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
