#!/usr/bin/env python
"""Coverage of a directory of real-world JSON Schemas: how many compile and give a first mask.

Run from the repository root::

    python bench/coverage.py DIR                  # this library only
    python bench/coverage.py DIR --peer           # and llguidance on the same files (extra [bench])
    python bench/coverage.py DIR --json out.json  # every file's outcome
    python bench/coverage.py DIR --catalogue https://json.schemastore.org/ \
        --catalogue https://www.schemastore.org/  # the files as each other's $ref targets

Every ``*.json`` file under ``DIR`` (for example SchemaStore's ``src/schemas/json``) is compiled
with the default options (``compile_json_schema(schema)``: default ``Limits``, so a compile clock of
``Limits.compile_seconds``), then a matcher takes its first mask over the Llama-3 vocabulary
(``ggml-vocab-llama-bpe.gguf``). Each file runs in a worker process with a wall-clock limit
(``--timeout``, default 10 s) and an address-space limit (``--memory-mb``, default 4096); a worker
that dies or overruns is replaced. Outcomes:

* ``compiled``: compile and first mask succeeded;
* ``refused``: a typed ``UnsupportedSchemaError`` (counted by the keyword it names), or another
  typed refusal (``CompileTimeout``, ``GrammarTooLarge``, ``RegexTooComplex``...);
* ``invalid``: a ``SchemaError`` that is not a refusal (the file is not a valid schema), or the
  file is not JSON;
* ``timeout``, ``memory``, ``crash``: the worker overran, ran out of memory, or raised something
  untyped: each one is a bug.

With ``--catalogue URL`` every file is also a resource the others' ``$ref`` may reach
(``compile_json_schema(..., resources=...)``), under the URI its ``$id`` declares and under
``URL + name`` and ``URL + name without .json`` (how a catalogue such as SchemaStore's serves its
files and how they reference each other); without it a reference to another file is refused.
llguidance is given the same files without resources (it reads none).

Times are wall-clock seconds inside the worker (compile, and compile + first mask), after the
vocabulary's own tables are built (once per worker, as once per model in a server). ``--peer``
runs llguidance (``LLMatcher.grammar_from_json_schema`` + ``LLMatcher`` on the same vocabulary,
then ``compute_logit_bias`` style first mask) in the same kind of worker, on the same files.
With two workers on two cores each may slow the other, so every file over ``--alone-over`` seconds
is timed again, three times, with nothing else running (``alone``: the median), for each engine
alike; "over 1 s, alone" counts those.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing as mp
import os
import resource
import sys
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import llguidance_tokenizer, machine_info, progress, render_table  # noqa: E402

from grammar_decode.frontends.json_schema.refs import declared_uri  # noqa: E402

_VOCAB: Any = None
_PEER: Any = None
_RESOURCES: dict[str, Any] = {}  # the catalogue (--catalogue), loaded before the workers fork
_BASES: dict[str, str] = {}  # each file's URI in the catalogue (its first --catalogue URL)


def _vocab_file() -> Path:
    from tools.vocab_files import ensure_vocab_files, vocab_path
    ensure_vocab_files()
    return vocab_path("llama-bpe")


def _load(path: str) -> Any:
    """The schema in ``path``, or the exception that reading it as JSON raised."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except (ValueError, UnicodeDecodeError) as exc:
        return exc


def _ours(path: str) -> dict[str, Any]:
    import grammar_decode as gd
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = gd.Vocabulary.from_gguf(_vocab_file())
        # the per-vocabulary tables (trie, string slice) are built once per model, not per
        # schema: build them here, so that no file's time includes them
        gd.Matcher(gd.compile_json_schema({"type": "string"}), _VOCAB).mask()
    schema = _load(path)
    if isinstance(schema, Exception):
        return {"outcome": "invalid", "reason": "not JSON", "detail": str(schema)[:200]}
    start = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grammar = gd.compile_json_schema(schema, resources=_RESOURCES or None, base_uri=_BASES.get(path, ""))
        compiled = time.perf_counter() - start
        matcher = gd.Matcher(grammar, _VOCAB)
        mask = matcher.mask()
        total = time.perf_counter() - start
    except gd.UnsupportedSchemaError as exc:
        return {"outcome": "refused", "reason": exc.keyword, "detail": str(exc)[:300],
                "seconds": time.perf_counter() - start}
    except gd.SchemaError as exc:
        return {"outcome": "invalid", "reason": type(exc).__name__, "detail": str(exc)[:300],
                "seconds": time.perf_counter() - start}
    except gd.GrammarDecodeError as exc:
        return {"outcome": "refused", "reason": type(exc).__name__, "detail": str(exc)[:300],
                "seconds": time.perf_counter() - start}
    except MemoryError:
        return {"outcome": "memory", "reason": "MemoryError", "seconds": time.perf_counter() - start}
    except Exception as exc:  # an untyped failure is a bug: reported, not hidden
        return {"outcome": "crash", "reason": type(exc).__name__, "detail": traceback.format_exc()[-1500:],
                "seconds": time.perf_counter() - start}
    warned = sorted({str(w.message)[:200] for w in caught if issubclass(w.category, getattr(gd, "SchemaWarning", Warning))})
    return {"outcome": "compiled", "compile_seconds": compiled, "seconds": total,
            "allowed": int(mask.sum()), "warnings": warned}


def _peer(path: str) -> dict[str, Any]:
    import llguidance
    import llguidance.numpy
    global _PEER
    if _PEER is None:
        _PEER = _peer_tokenizer()
    schema = _load(path)
    if isinstance(schema, Exception):
        return {"outcome": "invalid", "reason": "not JSON", "detail": str(schema)[:200]}
    start = time.perf_counter()
    try:
        grammar = llguidance.LLMatcher.grammar_from_json_schema(schema)
        matcher = llguidance.LLMatcher(_PEER, grammar)
        compiled = time.perf_counter() - start
        if matcher.is_error():
            return {"outcome": "refused", "reason": _peer_reason(matcher.get_error()),
                    "detail": matcher.get_error()[:300], "seconds": compiled}
        bitmask = llguidance.numpy.allocate_token_bitmask(1, _PEER.vocab_size)
        llguidance.numpy.fill_next_token_bitmask(matcher, bitmask, 0)
        if matcher.is_error():
            return {"outcome": "refused", "reason": _peer_reason(matcher.get_error()),
                    "detail": matcher.get_error()[:300], "seconds": time.perf_counter() - start}
        total = time.perf_counter() - start
    except Exception as exc:
        return {"outcome": "refused", "reason": _peer_reason(str(exc)), "detail": str(exc)[:300],
                "seconds": time.perf_counter() - start}
    return {"outcome": "compiled", "compile_seconds": compiled, "seconds": total}


def _peer_reason(message: str) -> str:
    """The first words of a peer error, as a reason label."""
    text = message.strip().splitlines()[0] if message.strip() else "error"
    for marker in ("Unimplemented keys:", "Unknown format:", "Unimplemented"):
        if marker in text:
            return text[text.index(marker):][:60]
    return text[:60]


def _peer_tokenizer() -> Any:
    """llguidance's tokenizer over the same Llama-3 GGUF vocabulary this library reads."""
    import grammar_decode as gd
    return llguidance_tokenizer(gd.Vocabulary.from_gguf(_vocab_file()))


def _worker(job: str, memory_mb: int, inbox: Any, outbox: Any) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    run = _ours if job == "ours" else _peer
    while True:
        path = inbox.get()
        if path is None:
            return
        try:
            outbox.put((path, run(path)))
        except MemoryError:
            outbox.put((path, {"outcome": "memory", "reason": "MemoryError"}))


class _Pool:
    """Worker processes, each one file at a time, replaced when they die or overrun."""

    def __init__(self, job: str, jobs: int, timeout: float, memory_mb: int) -> None:
        self.job, self.timeout, self.memory_mb = job, timeout, memory_mb
        self.context = mp.get_context("fork")
        self.slots: list[Optional[dict[str, Any]]] = [None] * jobs

    def _start(self) -> dict[str, Any]:
        inbox, outbox = self.context.Queue(), self.context.Queue()
        process = self.context.Process(target=_worker, args=(self.job, self.memory_mb, inbox, outbox), daemon=True)
        process.start()
        return {"process": process, "inbox": inbox, "outbox": outbox, "path": None, "since": 0.0, "warm": False}

    def run(self, paths: list[str]) -> dict[str, dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        pending = list(reversed(paths))
        while pending or any(s is not None and s["path"] is not None for s in self.slots):
            for i, slot in enumerate(self.slots):
                if slot is None:
                    slot = self.slots[i] = self._start()
                if slot["path"] is None and pending:
                    slot["path"], slot["since"] = pending.pop(), time.perf_counter()
                    slot["inbox"].put(slot["path"])
                if slot["path"] is None:
                    continue
                try:
                    path, result = slot["outbox"].get(timeout=0.02)
                except Exception:
                    path, result = None, None
                if result is not None:
                    results[path] = result
                    slot["path"], slot["warm"] = None, True
                    if len(results) % 50 == 0:
                        progress(f"{self.job}: {len(results)}/{len(paths)}")
                    continue
                # the first file of a worker also loads the vocabulary: give it that time too
                limit = self.timeout + (0.0 if slot["warm"] else 60.0)
                if not slot["process"].is_alive() or time.perf_counter() - slot["since"] > limit:
                    died = not slot["process"].is_alive()
                    code = slot["process"].exitcode
                    slot["process"].kill()
                    results[slot["path"]] = ({"outcome": "memory" if code in (-9, 137) else "crash",
                                              "reason": f"worker exit {code}"} if died
                                             else {"outcome": "timeout", "reason": f"over {self.timeout:g} s",
                                                   "seconds": time.perf_counter() - slot["since"]})
                    self.slots[i] = None
        for slot in self.slots:
            if slot is not None:
                slot["inbox"].put(None)
        return results


def _catalogue(paths: list[str], prefixes: list[str]) -> dict[str, Any]:
    """Every schema file of ``paths`` by the URI its ``$id`` (or draft 4's ``id``) declares and
    by ``prefix + name`` and ``prefix + stem`` for each prefix; the first file wins a clash."""
    table: dict[str, Any] = {}
    for path in paths:
        schema = _load(path)
        if not isinstance(schema, (dict, bool)):
            continue
        name = Path(path).name
        uris = [p + n for p in prefixes for n in (name, name.removesuffix(".json"))]
        declared = declared_uri(schema)
        if declared is not None:
            uris.insert(0, declared)
        for uri in uris:
            table.setdefault(uri, schema)
    return table


def _retime_alone(job: str, results: dict[str, dict[str, Any]], args: argparse.Namespace) -> None:
    """The files that compiled (or were refused) in over ``--alone-over`` seconds (the slowest 20), again, three times
    each in one worker with no other running: with two workers on two cores each may slow the
    other (shared caches, memory bandwidth, a virtual machine's neighbours), which the tail
    should not carry. Adds ``seconds_alone`` (the median of the three)."""
    slow = sorted((r["seconds"], p) for p, r in results.items()
                  if r["outcome"] in ("compiled", "refused", "invalid") and r.get("seconds", 0) > args.alone_over)[-20:]
    if not slow or args.jobs == 1:
        return
    progress(f"{job}: the {len(slow)} slowest again, alone")
    again = [_Pool(job, 1, args.timeout, args.memory_mb).run([p for _t, p in slow]) for _ in range(3)]
    for _t, path in slow:
        times = sorted(run[path].get("seconds", float("inf")) for run in again)
        results[path]["seconds_alone"] = times[1]


def _summary(name: str, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    outcomes = Counter(r["outcome"] for r in results.values())
    reasons = Counter(r["reason"] for r in results.values() if r["outcome"] in ("refused", "invalid"))
    times = sorted(r["seconds"] for r in results.values() if r["outcome"] == "compiled")
    return {"name": name, "outcomes": outcomes, "reasons": reasons, "times": times,
            "slowest": sorted(((r.get("seconds", 0.0), Path(p).name, r["outcome"]) for p, r in results.items()),
                              reverse=True)[:10]}


def _quantile(values: list[float], q: float) -> str:
    if not values:
        return "-"
    return f"{values[min(len(values) - 1, int(q * len(values)))] * 1000:.1f}"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--peer", action="store_true", help="also run llguidance on the same files")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per file (default 10)")
    parser.add_argument("--memory-mb", type=int, default=4096, help="address space per worker (default 4096)")
    parser.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    parser.add_argument("--alone-over", type=float, default=0.5,
                        help="re-time files slower than this alone, median of 3 (default 0.5 s)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N files (sorted by name)")
    parser.add_argument("--json", type=Path, help="write every file's outcome here")
    parser.add_argument("--catalogue", action="append", default=[], metavar="URL",
                        help="serve every file as a $ref target at URL + its name (repeatable)")
    args = parser.parse_args(argv)
    paths = sorted(str(p) for p in args.directory.rglob("*.json"))
    if args.catalogue:
        _RESOURCES.update(_catalogue(paths, args.catalogue))
        _BASES.update((p, args.catalogue[0] + Path(p).name) for p in paths)
        # millions of long-lived objects: left to the collector, every full collection would
        # walk them all inside some file's timed compile
        gc.freeze()
    if args.limit:
        paths = paths[:args.limit]
    _vocab_file()  # fetched once here, not in every worker
    summaries = []
    every: dict[str, Any] = {"machine": machine_info(), "directory": str(args.directory), "files": len(paths),
                             "catalogue": args.catalogue}
    for job in ["ours"] + (["peer"] if args.peer else []):
        progress(f"{job}: {len(paths)} files, {args.jobs} workers, {args.timeout:g} s each")
        results = _Pool(job, args.jobs, args.timeout, args.memory_mb).run(paths)
        _retime_alone(job, results, args)
        summaries.append(_summary(job, results))
        every[job] = {Path(p).name: r for p, r in sorted(results.items())}
    names = {"ours": "grammar-decode", "peer": "llguidance"}
    kinds = ["compiled", "refused", "invalid", "timeout", "memory", "crash"]
    rows = [[k] + [s["outcomes"].get(k, 0) for s in summaries] for k in kinds]
    rows.append(["compile + first mask p50 (ms)"] + [_quantile(s["times"], 0.5) for s in summaries])
    rows.append(["compile + first mask p99 (ms)"] + [_quantile(s["times"], 0.99) for s in summaries])
    rows.append(["over 1 s"] + [sum(1 for r in every[s["name"]].values() if r.get("seconds", 0) > 1.0)
                                for s in summaries])
    rows.append(["over 1 s, alone (median of 3)"] +
                [sum(1 for r in every[s["name"]].values() if r.get("seconds_alone", r.get("seconds", 0)) > 1.0)
                 for s in summaries])
    print(render_table(f"{len(paths)} schemas under {args.directory}", ["outcome"] +
                       [names[s["name"]] for s in summaries], rows))
    for s in summaries:
        print(render_table(f"{names[s['name']]}: refusals by reason", ["reason", "schemas"],
                           s["reasons"].most_common(40)))
        alone = {Path(p).name: r.get("seconds_alone") for p, r in every[s["name"]].items()}
        print(render_table(f"{names[s['name']]}: slowest", ["file", "seconds", "alone", "outcome"],
                           [[n, f"{t:.2f}", "-" if alone.get(n) is None else f"{alone[n]:.2f}", o]
                            for t, n, o in s["slowest"]]))
    if args.json:
        args.json.write_text(json.dumps(every, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
