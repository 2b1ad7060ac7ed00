#!/usr/bin/env python
"""Side-by-side mask benchmark: this tree against an earlier commit, in one run, on one machine.

Run from the repository root (a git checkout)::

    python bench/versus.py                 # against the first engine (commit aa21cce)
    python bench/versus.py --ref <commit>  # against any commit that has bench/benchmark.py
    python bench/versus.py --quick

The earlier commit is checked out into a temporary git worktree; each tree's own
``bench/benchmark.py`` runs in a subprocess with that tree first on ``sys.path`` (the reference run
first, then this tree's), and the ratios this/reference of the figures both report are printed:
per-state walk sums (cold, warm), and one generated document's mask time (cold cache, cold with
the closing budget, warm cache, cache disabled). Absolute times drift between runs on these
machines; ratios taken minutes apart on the same machine are what this script is for.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import render_table

ROOT = Path(__file__).resolve().parents[1]
FIRST_ENGINE = "aa21cce"  # the last commit of the first engine (deterministic JSON automaton)


def run_benchmark(tree: Path, quick: bool) -> dict[str, Any]:
    """Run ``tree``'s benchmark with ``tree`` importable first; its JSON results."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, str(tree / "bench" / "benchmark.py")] + (["--quick"] if quick else [])
    print(f"[versus] {tree}: {' '.join(command[1:])}", file=sys.stderr, flush=True)
    subprocess.run(command, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    return json.loads((tree / "bench" / "results" / "benchmark.json").read_text())


def figures(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The comparable figures per vocabulary, in ms."""
    out = {}
    for name, data in results["vocabs"].items():
        states = data["states"]
        document = data["document"]
        out[name] = {
            "per-state walks, cold (sum)": sum(r["walk_cold_ms"] for r in states),
            "per-state walks, warm (sum)": sum(r["walk_warm_ms"] for r in states),
            "document, cold cache": document["cold"]["mask_ms"],
            "document, cold + closing budget": document["cold_budget"]["mask_ms"],
            "document, warm cache": document["warm"]["mask_ms"],
            "document, cache disabled": document["disabled"]["mask_ms"],
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", default=FIRST_ENGINE, help="commit to compare against (default: the first engine)")
    parser.add_argument("--quick", action="store_true", help="fewer repeats in both runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        worktree = Path(scratch) / "reference"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), args.ref],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            reference = figures(run_benchmark(worktree, args.quick))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)
    current = figures(run_benchmark(ROOT, args.quick))
    rows = []
    for name in current:
        for label, value in current[name].items():
            before = reference.get(name, {}).get(label)
            if before is None:
                continue
            rows.append([name, label, f"{before:.3g}", f"{value:.3g}", f"{value / before:.2f}x"])
    print(render_table(f"This tree against {args.ref} (mask ms; ratio = this / reference)",
                       ["vocabulary", "figure", f"{args.ref} ms", "this tree ms", "ratio"], rows))


if __name__ == "__main__":
    main()
