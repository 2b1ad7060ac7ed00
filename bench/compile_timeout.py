"""How promptly ``CompileTimeout`` arrives: the longest stretch of compile work between two deadline
checks, and the time from the limit to the error, on the slowest schemas of the hostile table.

    python bench/compile_timeout.py [--repeats 3]

For each schema: its full compile time with no limit; the longest gap between two calls of
``limits.check_deadline`` during that compile (found by wrapping the function, so this run is a
little slower than a plain one); then, for limits of 10 %, 50 % and 90 % of the full time, how long
after the limit ``CompileTimeout`` was raised (median of the repeats).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import grammar_decode as gd
from common import machine_info, render_table
from grammar_decode import limits as limits_module

SCHEMAS: dict[str, Any] = {
    "2,000 optional properties": {"type": "object", "properties": {f"k{i}": {"type": "integer"} for i in range(2000)}},
    "uniqueItems over an 11-value enum": {"type": "array", "uniqueItems": True, "items": {"enum": list(range(11))}},
    "100 properties, maxProperties 20": {"type": "object", "maxProperties": 20,
                                         "properties": {f"p{i}": {"type": "string"} for i in range(100)}},
    "pattern within lengths (RegexTooComplex)": {"type": "string", "pattern": "^(a|b)*a(a|b){12}$", "minLength": 40,
                                                 "maxLength": 60},
    "10,000 required properties": {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(10_000)},
                                   "required": [f"p{i}" for i in range(10_000)]},
}


def compile_once(schema: Any, limits: gd.Limits) -> None:
    try:
        gd.compile_json_schema(schema, limits=limits)
    except (gd.RegexTooComplex, gd.GrammarTooLarge):
        pass  # the work up to the refusal is what is timed


def longest_gap(schema: Any) -> float:
    """The longest stretch (s) without a deadline check, the start and end of the compile included."""
    original = limits_module.check_deadline
    modules = [m for name, m in sys.modules.items()
               if name.startswith("grammar_decode") and getattr(m, "check_deadline", None) is original]
    last = [time.perf_counter()]
    gaps: list[float] = []

    def timed_check() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now
        original()

    for module in modules:
        module.check_deadline = timed_check  # type: ignore[attr-defined]
    try:
        last[0] = time.perf_counter()
        compile_once(schema, gd.Limits(compile_seconds=None))
        gaps.append(time.perf_counter() - last[0])
    finally:
        for module in modules:
            module.check_deadline = original  # type: ignore[attr-defined]
    return max(gaps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for name, schema in SCHEMAS.items():
        full = statistics.median(_timed(lambda: compile_once(schema, gd.Limits(compile_seconds=None)))
                                 for _ in range(args.repeats))
        gap = longest_gap(schema)
        late = []
        for share in (0.1, 0.5, 0.9):
            limit = full * share
            samples = []
            for _ in range(args.repeats):
                started = time.perf_counter()
                try:
                    gd.compile_json_schema(schema, limits=gd.Limits(compile_seconds=limit))
                    samples.append(float("nan"))  # finished in time: noise made it faster
                except gd.CompileTimeout:
                    samples.append(time.perf_counter() - started - limit)
                except (gd.RegexTooComplex, gd.GrammarTooLarge):
                    samples.append(float("nan"))
            late.append(statistics.median(samples))
        rows.append([name, f"{full * 1000:,.0f}", f"{gap * 1000:.1f}"] + [f"{x * 1000:.1f}" for x in late])
    print(machine_info())
    print(render_table("CompileTimeout: compile ms with no limit, longest ms between two deadline checks, and ms "
                       "from the limit to the error at 10 %, 50 %, 90 % of the full time",
                       ["schema", "full ms", "longest gap ms", "late at 10 %", "late at 50 %", "late at 90 %"], rows))


def _timed(action: Any) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
