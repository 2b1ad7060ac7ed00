#!/usr/bin/env python
"""This tree against another, both at once: the same compare tasks run by each tree's library
in its own process, each pinned to its own CPU, then again with the CPUs swapped.

    python bench/ab.py --base DIR [--schemastore DIR] [--every 2] [--rounds 2]

``DIR`` is a checkout of the other tree with its kernels built (``git worktree add DIR REV`` then
``python setup.py build_ext --inplace`` there). Why: this machine's speed moves by up to 1.6×
within a day and by ±20 % between runs minutes apart, so two trees measured one after the other
differ by as much as a round of work changes them. Run side by side, both see the same machine
at the same time; swapping the CPUs cancels what differs between the two cores.

The tasks are ``bench/compare.py``'s (built once, here: the same schemas, instances and Llama-3
token sequences for both trees), every ``--every``-th of them. Each worker imports the library
and ``bench/compare.py`` of its own tree (``PYTHONPATH``), sets the tasks aside from the garbage
collector (``gc.freeze``), and runs ``compare.run_task`` with the ``ours`` engine on each: the
first mask (compile + matcher + mask) per schema and each token's mask fill. Printed per round:
both trees' per-token p50/p75/p90/p99/p99.9/max/average and first-mask p50/p90/p99/max, and the
change (this tree over the base: below 1 is faster here). No time limit per schema: run it on
trees that pass ``compare.py``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
PER_TOKEN = (("p50", 0.5), ("p75", 0.75), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999))
FIRST_MASK = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """``bench/compare.py``'s quantile: the value at index ``int(q * n)`` of the sorted values."""
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def figures(mask_us: list[float], first_ms: list[float]) -> dict[str, float]:
    """The per-token (µs) and first-mask (ms) figures of one worker's run."""
    tokens, firsts = sorted(mask_us), sorted(first_ms)
    out = {f"token {name}": quantile(tokens, q) for name, q in PER_TOKEN}
    out["token max"] = tokens[-1] if tokens else float("nan")
    out["token average"] = sum(tokens) / len(tokens) if tokens else float("nan")
    out.update({f"first {name}": quantile(firsts, q) for name, q in FIRST_MASK})
    out["first max"] = firsts[-1] if firsts else float("nan")
    return out


def _worker(tree: Path, tasks_file: Path, cpu: int, out_file: Path) -> None:
    """Run the tasks with ``tree``'s library (already first on ``sys.path``) on ``cpu``."""
    sys.path.insert(0, str(tree / "bench"))
    import compare  # the tree's own harness: its engine wrapper matches its library
    import grammar_decode as gd
    from tools.vocab_files import vocab_path

    if not str(Path(gd.__file__).resolve()).startswith(str(tree.resolve())):
        raise SystemExit(f"the worker for {tree} imported grammar_decode from {gd.__file__}")
    vocab = gd.Vocabulary.from_gguf(vocab_path("llama-bpe"))
    tasks = pickle.loads(tasks_file.read_bytes())
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    engine = compare.Ours(vocab)
    gc.collect()
    gc.freeze()
    mask_us: list[float] = []
    first_ms: list[float] = []
    for task in tasks:
        result = compare.run_task(engine, task)
        if result["outcome"] != "compiled":
            continue
        first_ms.append(result["first_mask_s"] * 1e3)
        for sequence in result["sequences"]:
            mask_us.extend(ns / 1e3 for ns in sequence["mask_ns"])
    out_file.write_text(json.dumps({"mask_us": mask_us, "first_ms": first_ms}))


def _table(rows: list[tuple[str, float, float]]) -> str:
    lines = [f"{'figure':<16}{'this tree':>12}{'base':>12}{'this / base':>13}"]
    for name, mine, base in rows:
        lines.append(f"{name:<16}{mine:>12,.1f}{base:>12,.1f}{mine / base:>13.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="a checkout of the other tree, kernels built")
    parser.add_argument("--schemastore", type=Path, help="a SchemaStore checkout, as compare.py takes it")
    parser.add_argument("--every", type=int, default=2, help="every N-th task (default 2)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds, the CPUs swapped in each (default 2)")
    parser.add_argument("--documents", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=2000)
    parser.add_argument("--worker", nargs=4, metavar=("TREE", "TASKS", "CPU", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        tree, tasks_file, cpu, out_file = args.worker
        _worker(Path(tree), Path(tasks_file), int(cpu), Path(out_file))
        return 0
    if args.base is None or not (args.base / "grammar_decode").is_dir():
        parser.error("--base must be a checkout of the library (a folder holding grammar_decode/)")
    if args.every < 1 or args.rounds < 1:
        parser.error("--every and --rounds are at least 1")
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0, 1]
    if len(cpus) < 2:
        parser.error("two CPUs are needed (one per tree)")
    sys.path.insert(0, str(ROOT / "bench"))
    import compare
    import grammar_decode as gd
    from tools.vocab_files import vocab_path

    vocab_file = vocab_path("llama-bpe")
    options = argparse.Namespace(no_corpus=False, no_suite=False, schemastore=args.schemastore, limit=0,
                                 documents=args.documents, max_tokens=args.max_tokens)
    tasks, tokenization = compare.build_tasks(options, vocab_file, gd.Vocabulary.from_gguf(vocab_file))
    tasks = tasks[::args.every]
    trees = {"this tree": ROOT, "base": args.base.resolve()}
    print(f"ab: {len(tasks)} tasks (every {args.every}th of compare's; tokenization: {tokenization}), "
          f"this tree {ROOT} against {trees['base']}")
    with tempfile.TemporaryDirectory() as scratch:
        tasks_file = Path(scratch) / "tasks.pkl"
        tasks_file.write_bytes(pickle.dumps(tasks))
        for round_ in range(args.rounds):
            order = cpus[:2] if round_ % 2 == 0 else cpus[1::-1][:2]
            workers = {}
            for (name, tree), cpu in zip(trees.items(), order):
                out = Path(scratch) / f"{name.replace(' ', '-')}-{round_}.json"
                env = dict(os.environ, PYTHONPATH=str(tree))
                workers[name] = (subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", str(tree),
                                                   str(tasks_file), str(cpu), str(out)], cwd=tree, env=env), out, cpu)
            found: dict[str, dict[str, float]] = {}
            for name, (process, out, _cpu) in workers.items():
                if process.wait() != 0:
                    raise SystemExit(f"the worker for {name} failed (exit {process.returncode})")
                data = json.loads(out.read_text())
                found[name] = figures(data["mask_us"], data["first_ms"])
            print(f"\nround {round_ + 1}: this tree on CPU {workers['this tree'][2]}, base on CPU {workers['base'][2]} "
                  "(per-token µs, first mask ms)")
            print(_table([(key, found["this tree"][key], found["base"][key]) for key in found["this tree"]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
