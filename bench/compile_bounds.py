#!/usr/bin/env python
"""Compile time and peak memory of schemas with big bounds (JSON Schema issue's list).

Run from the repository root::

    python bench/compile_bounds.py

Each schema is compiled twice in this process: once timed (``time.perf_counter``, compile plus the
shortest-completion analysis), once under ``tracemalloc`` for the peak of Python allocations
(tracing slows the run, so it is not timed). Prints a Markdown table.
"""

from __future__ import annotations

import time
import tracemalloc
from typing import Any

import grammar_decode as gd


def nested(depth: int) -> dict[str, Any]:
    """``depth`` object definitions, each holding the next, the last one pointing back at the first."""
    defs: dict[str, Any] = {f"l{i}": {"type": "object", "properties": {"v": {"type": "integer"},
                                                                        "child": {"$ref": f"#/$defs/l{i + 1}"}}}
                            for i in range(depth)}
    defs[f"l{depth}"] = {"type": "object", "properties": {"v": {"type": "integer"}, "again": {"$ref": "#/$defs/l0"}}}
    return {"$defs": defs, "$ref": "#/$defs/l0"}


CASES: dict[str, Any] = {
    "maxLength 100000": {"type": "string", "maxLength": 100000},
    "maxLength 100000 and a pattern": {"type": "string", "maxLength": 100000, "pattern": "^[a-z ]+$"},
    "maxItems 10000": {"type": "array", "items": {"type": "integer"}, "maxItems": 10000},
    "anyOf of 40 objects": {"anyOf": [{"type": "object", "properties": {"kind": {"const": f"k{i}"},
                                                                        "x": {"type": "integer"}},
                                       "required": ["kind"]} for i in range(40)]},
    "500 optional properties": {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(500)}},
    "10-level recursive definition": nested(10),
    "allOf of 20 objects": {"allOf": [{"type": "object", "properties": {f"p{i}": {"type": "integer", "minimum": i}},
                                       "required": [f"p{i}"]} for i in range(20)]},
    "integer in [-10^18, 10^18]": {"type": "integer", "minimum": -10 ** 18, "maximum": 10 ** 18},
    "oneOf of 40 tagged objects": {"oneOf": [{"type": "object", "properties": {"kind": {"const": f"k{i}"},
                                                                               "x": {"type": "integer"}},
                                              "required": ["kind"]} for i in range(40)]},
    "100 properties, maxProperties 20": {"type": "object", "additionalProperties": False, "maxProperties": 20,
                                         "properties": {f"p{i}": {"type": "string"} for i in range(100)}},
    "500 properties, maxProperties 20 (past the size limit)": {
        "type": "object", "additionalProperties": False, "maxProperties": 20,
        "properties": {f"p{i}": {"type": "string"} for i in range(500)}},
    "8 patternProperties": {"type": "object", "patternProperties": {f"^{c}": {"type": "integer"} for c in "abcdefgh"},
                            "additionalProperties": {"type": "string"}},
    "number in [-1e6, 1e6], exclusive 0.1": {"type": "number", "minimum": -1e6, "maximum": 1e6,
                                              "exclusiveMinimum": 0.1},
    "multipleOf 7 within 10^9": {"type": "integer", "multipleOf": 7, "maximum": 10 ** 9},
    "dependentSchemas on 4 keys": {"type": "object", "dependentSchemas": {k: {"required": [k + "2"]} for k in "abcd"}},
    "uniqueItems over an 11-value enum": {"type": "array", "items": {"enum": [f"v{i}" for i in range(11)]},
                                          "uniqueItems": True},
    "uniqueItems over 1,000 strings of an enum": {"type": "array", "items": {"enum": [f"v{i}" for i in range(1000)]},
                                                  "uniqueItems": True},
    "uniqueItems over strings with a pattern": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"},
                                                "uniqueItems": True},
    "allOf of 10 if/then on a required key": {
        "type": "object", "required": ["kind"], "properties": {"kind": {"enum": [f"k{i}" for i in range(10)]}},
        "allOf": [{"if": {"properties": {"kind": {"const": f"k{i}"}}}, "then": {"required": [f"p{i}"]}}
                  for i in range(10)]},
    "uniqueItems over 12 values (past the limit)": {"type": "array", "items": {"enum": list(range(12))},
                                                    "uniqueItems": True},
    "maxContains 3 of 10 items": {"type": "array", "contains": {"enum": ["a", 1]}, "maxContains": 3, "maxItems": 10},
    "format iri-reference": {"type": "string", "format": "iri-reference"},
    "oneOf of 3 overlapping objects": {"type": "object", "oneOf": [
        {"required": [f"k{i}"], "properties": {f"k{i}": {"type": "integer"}}} for i in range(3)]},
    "oneOf of 8 overlapping integer ranges (past the limit)": {"oneOf": [{"type": "integer", "minimum": i}
                                                                         for i in range(8)]},
    # hostile sizes: each costs its bound's digits, its values or its length, or is refused at once
    "minLength 1000 and a pattern": {"type": "string", "minLength": 1000, "pattern": "a"},
    "minLength 10^9 and a pattern": {"type": "string", "minLength": 10 ** 9, "pattern": "a"},
    "multipleOf 4096": {"type": "integer", "multipleOf": 4096},
    "multipleOf 2^80 (past the limit)": {"type": "integer", "multipleOf": 2 ** 80},
    "2,000 optional properties": {"type": "object", "properties": {f"k{i}": {"type": "integer"} for i in range(2000)}},
    "10,000 optional properties (past the limit)": {"type": "object", "properties": {
        f"k{i}": {"type": "integer"} for i in range(10000)}},
    "maxContains 10^12": {"type": "array", "contains": {"const": 1}, "maxContains": 10 ** 12},
    "minContains 10^6": {"type": "array", "contains": {"const": 1}, "minContains": 10 ** 6},
    "enum of 10,000 strings": {"enum": [f"value_{i}" for i in range(10000)]},
    "const of 20,000 characters": {"const": "a" * 20000},
    "required key of 5,000 emoji": {"type": "object", "properties": {"\U0001F600" * 5000: {}},
                                    "required": ["\U0001F600" * 5000]},
    "schema text nested 100,000 deep (refused)": "[" * 100000 + "]" * 100000,
}


def main() -> None:
    print("| schema | compile ms | peak MiB |")
    print("|---|---:|---:|")
    for name, schema in CASES.items():
        start = time.perf_counter()
        try:
            gd.compile_json_schema(schema).min_completion_bytes()
        except gd.GrammarDecodeError as exc:  # a limit: the typed error, in bounded time
            print(f"| {name} | {(time.perf_counter() - start) * 1000:.0f} (`{type(exc).__name__}`) | |")
            continue
        seconds = time.perf_counter() - start
        tracemalloc.start()  # tracing slows compiling several times over: no compile clock here
        gd.compile_json_schema(schema, limits=gd.Limits(compile_seconds=None)).min_completion_bytes()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"| {name} | {seconds * 1000:.0f} | {peak / 2 ** 20:.1f} |")


if __name__ == "__main__":
    main()
