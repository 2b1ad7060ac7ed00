"""What a llama.cpp build costs in ms/token on the embedded model, builds side by side.

    python bench/llama_build.py WHEEL [WHEEL ...] [--rounds 3] [--tokens 64]

Each wheel (e.g. the portable one from ``grammar-decode install-llama-cpp`` and a native one built
with plain ``pip wheel llama-cpp-python==0.3.36``) is unpacked into its own folder; then, round
after round, each build evaluates the same prompt and the same greedy continuation in a fresh
subprocess. Rounds alternate between builds so that machine noise falls on both alike. Prints the
median prompt time and ms/token per build, and each build's ratio to the first.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

_TIMING_CODE = r"""
import json, sys, time
import llama_cpp
model, tokens = sys.argv[1], int(sys.argv[2])
llama = llama_cpp.Llama(model_path=model, n_ctx=512, verbose=False)
prompt = llama.tokenize(b"Here is a JSON document describing a software engineer: ", add_bos=True)
started = time.perf_counter()
llama.eval(prompt)
prompt_s = time.perf_counter() - started
started = time.perf_counter()
for _ in range(tokens):
    token = int(llama.scores[llama.n_tokens - 1].argmax())
    llama.eval([token])
decode_s = time.perf_counter() - started
print(json.dumps({"prompt_ms": 1000 * prompt_s, "ms_per_token": 1000 * decode_s / tokens}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wheels", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    args = parser.parse_args()
    from grammar_decode.cli import default_model_path

    model = default_model_path()
    labels = [f"{w.parent.name}/{w.name}" for w in args.wheels]
    results: dict[str, list[dict[str, float]]] = {label: [] for label in labels}
    with tempfile.TemporaryDirectory() as tmp:
        folders = []
        for i, wheel in enumerate(args.wheels):
            folder = Path(tmp) / str(i)
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(folder)
            for lib in (folder / "llama_cpp" / "lib").glob("*"):
                lib.chmod(0o755)
            folders.append(folder)
        for round_index in range(args.rounds):
            for label, folder in zip(labels, folders):
                env = dict(os.environ, PYTHONPATH=str(folder))
                done = subprocess.run([sys.executable, "-c", _TIMING_CODE, str(model), str(args.tokens)],
                                      capture_output=True, text=True, env=env, check=False)
                if done.returncode != 0:
                    raise SystemExit(f"{label}: exit status {done.returncode}\n{done.stderr[-2000:]}")
                results[label].append(json.loads(done.stdout.strip().splitlines()[-1]))
                print(f"round {round_index + 1}: {label}: {results[label][-1]}", file=sys.stderr)
    base = None
    print("| build | prompt ms (median) | ms/token (median) | ratio to first |")
    print("|---|---:|---:|---:|")
    for label in labels:
        rows = results[label]
        prompt = statistics.median(r["prompt_ms"] for r in rows)
        per_token = statistics.median(r["ms_per_token"] for r in rows)
        base = base or per_token
        print(f"| {label} | {prompt:.0f} | {per_token:.2f} | {per_token / base:.2f}× |")


if __name__ == "__main__":
    main()
