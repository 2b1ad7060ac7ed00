"""Inputs built to escape the limits: each compiles, is refused with a typed error, or is
answered, in bounded time and memory, whatever the size of its bound, count or literal (the
constructions cost the bound's digits, never the bound). The time and memory bounds are loose
(hangs and blow-ups, not speed); the figures live in ``bench/compile_bounds.py``."""

from __future__ import annotations

import json
from typing import Any, Callable

import numpy as np
import pytest

import grammar_decode as gd
from grammar_decode.frontends.json_schema.lexemes import json_depth

from helpers import bounded as within
from helpers import compile_untimed
from helpers import require


def bounded(action: Callable[[], Any], seconds: float = 120.0, megabytes: float = 1024.0) -> Any:
    return within(action, seconds, megabytes)


def refused(schema: Any, error: type = gd.UnsupportedSchemaError, **options: Any) -> gd.GrammarDecodeError:
    # no compile clock (compile_untimed): the refusal asked for here is the cap's, not the clock's
    with pytest.raises(error) as info:
        bounded(lambda: compile_untimed(schema, **options))
    return info.value


# -- lengths beside a pattern: counted, never unrolled ------------------------------------------

@pytest.mark.parametrize("length", [1000, 100_000, 10 ** 9])
def test_min_length_beside_a_pattern_stays_symbolic(length: int) -> None:
    grammar = bounded(lambda: compile_untimed({"type": "string", "minLength": length, "pattern": "a"}))
    assert grammar.min_completion_bytes() == length + 2
    assert not grammar.accepts('"' + "a" * 999 + '"')
    if length == 1000:
        assert grammar.accepts('"' + "b" * 999 + 'a"') and not grammar.accepts('"' + "b" * 1000 + '"')


@pytest.mark.slow
def test_a_pattern_whose_intersection_with_lengths_is_too_complex_is_a_typed_error() -> None:
    refused({"type": "string", "pattern": "^(a|b)*a(a|b){12}$", "minLength": 40, "maxLength": 60},
            error=gd.RegexTooComplex)


# -- multipleOf: the last digits weighed, not listed ----------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("divisor", [256, 4096, 5 ** 8, 2 ** 6 * 5 ** 9, 10 ** 30, 48, 1000])
def test_multiple_of_a_power_of_two_or_five_is_exact(divisor: int) -> None:
    grammar = bounded(lambda: compile_untimed({"type": "integer", "multipleOf": divisor}))
    rng = np.random.default_rng(divisor % 1000)
    for value in [0, divisor, -divisor, 2 * divisor, divisor + 1, divisor - 1, divisor // 2, 10 ** 19 // divisor * divisor,
                  *map(int, rng.integers(-10 ** 9, 10 ** 9, 200)), *(divisor * int(k) for k in rng.integers(-99, 99, 50))]:
        if len(str(abs(value))) <= 20:
            assert grammar.accepts(str(value)) == (value % divisor == 0), value


@pytest.mark.parametrize("divisor", [2 ** 13, 2 ** 80, 5 ** 30])
def test_multiple_of_past_the_state_limit_is_refused_at_once(divisor: int) -> None:
    assert "multipleOf" in str(refused({"type": "integer", "multipleOf": divisor}))


# -- many keys, deep schemas ---------------------------------------------------------------------

@pytest.mark.slow
def test_thousands_of_optional_properties_cost_linear_symbols() -> None:
    props = {f"k{i}": {"type": "integer"} for i in range(2000)}
    grammar = bounded(lambda: compile_untimed({"type": "object", "properties": props}, whitespace="compact"))
    assert grammar.accepts('{"k0":1,"k1500":2,"k1999":3}') and grammar.accepts("{}")
    assert not grammar.accepts('{"k1999":3,"k0":1}') and not grammar.accepts('{"k1500":"x"}')


def test_ten_thousand_optional_properties_are_refused_before_anything_is_built() -> None:
    props = {f"k{i}": {"type": "integer"} for i in range(10_000)}
    error = refused({"type": "object", "properties": props})
    assert error.keyword == "properties"


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"items":' * 5000 + "{}" + "}" * 5000],
                         ids=["brackets", "items"])
def test_schema_text_nested_past_what_json_reads_is_a_schema_error(text: str) -> None:
    refused(text, error=gd.SchemaError)


def test_schema_objects_nested_past_the_limit_are_a_schema_error() -> None:
    schema: dict = {}
    inner = schema
    for _ in range(100_000):
        inner["items"] = {}
        inner = inner["items"]
    refused(schema, error=gd.SchemaError)
    refused(schema, error=gd.SchemaError, draft="7")


# -- counts of contains -----------------------------------------------------------------------------

@pytest.mark.parametrize("schema", [
    {"type": "array", "contains": {"const": 1}, "maxContains": 10 ** 12},
    {"type": "array", "contains": {"const": 1}, "minContains": 10 ** 6},
    {"type": "array", "contains": {"const": 1}, "minContains": 100, "maxContains": 102},
    {"type": "array", "items": {"type": "integer"}, "contains": {"const": 1}, "minContains": 0, "maxContains": 70},
])
def test_contains_counts_cost_their_digits(schema: dict) -> None:
    jsonschema = require("jsonschema")
    grammar = bounded(lambda: compile_untimed(schema, whitespace="compact"))
    judge = jsonschema.Draft202012Validator(schema)
    for array in [[], [1], [2], [1] * 70, [1] * 71, [1] * 100, [1] * 101 + [2], [2] + [1] * 102, [1] * 103, [2, 2, 1]]:
        assert grammar.accepts(json.dumps(array, separators=(",", ":"))) == judge.is_valid(array), len(array)


def test_contains_counts_beside_item_bounds_are_refused_at_once() -> None:
    refused({"type": "array", "contains": {"const": 1}, "minContains": 10 ** 6, "maxItems": 10 ** 7})


# -- completion costs and long literals ------------------------------------------------------------

@pytest.mark.slow
def test_min_completion_tokens_of_a_large_enum_is_linear(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema({"enum": [f"value_{i}" for i in range(10_000)]})
    assert bounded(lambda: grammar.min_completion_tokens(gpt2)) >= 2


@pytest.mark.slow
def test_long_literals_cost_their_length(gpt2: gd.Vocabulary) -> None:
    text = "a" * 20_000
    grammar = bounded(lambda: compile_untimed({"const": text}))
    assert grammar.accepts(json.dumps(text)) and not grammar.accepts(json.dumps(text[:-1] + "b"))
    key = "\U0001F600" * 5000
    keyed = bounded(lambda: compile_untimed({"type": "object", "properties": {key: {}}, "required": [key]}))
    assert keyed.accepts(json.dumps({key: 1}, ensure_ascii=False))
    assert keyed.accepts(json.dumps({key: 1}))  # \\ud83d\\ude00 escapes
    assert bounded(lambda: keyed.min_completion_tokens(gpt2)) > 5000


# -- nesting depth ------------------------------------------------------------------------------------

def test_documents_never_nest_past_the_depth_limit() -> None:
    grammar = gd.compile_json_schema({})
    deepest = "[" * 128 + "]" * 128
    assert grammar.accepts(deepest) and json.loads(deepest)
    assert not grammar.accepts("[" * 129 + "]" * 129) and not grammar.accepts_prefix("[" * 129)
    assert not bounded(lambda: grammar.accepts("[" * 100_000 + "]" * 100_000))
    assert gd.compile_json_schema({}, max_depth=3).accepts('[{"a": [1]}]')
    assert not gd.compile_json_schema({}, max_depth=3).accepts('[{"a": [[1]]}]')
    # an enum value nests too
    assert not gd.compile_json_schema({"type": "array", "items": {"const": [[1]]}}, max_depth=2).accepts("[[[1]]]")


TREE = {"$defs": {"node": {"type": "object", "properties": {
    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}, "leaf": {"type": "object", "properties": {
        "x": {"type": "array", "items": {"type": "integer"}, "minItems": 1}}, "required": ["x"]}},
    "required": ["children"]}}, "$ref": "#/$defs/node"}


@pytest.mark.parametrize("schema", [{}, TREE, {"type": "array", "items": {"$ref": "#"}}])
def test_generation_favouring_openers_ends_within_the_depth_limit(gpt2: gd.Vocabulary, schema: dict) -> None:
    """Random logits that favour tokens with brackets: every document ends complete, no deeper
    than the limit (no prefix is admitted whose every completion would go deeper)."""
    for limit in (4, 9):
        grammar = gd.compile_json_schema(schema, max_depth=limit)
        openers = np.array([t.count(b"[") + t.count(b"{") for t in gpt2.tokens])
        for seed in range(3):
            rng = np.random.default_rng(seed)
            result = gd.generate(lambda ids: rng.standard_normal(len(gpt2)) + 4.0 * openers, grammar, gpt2,
                                 max_tokens=grammar.min_completion_tokens(gpt2) + 60, seed=seed)
            assert result.stop_reason in ("eos", "complete"), (limit, seed, result.text)
            assert json_depth(result.data) <= limit and json.loads(result.data) is not None


def test_a_schema_whose_documents_all_nest_deeper_admits_none() -> None:
    deep = {"type": "array", "items": {"type": "array", "items": {"type": "array"}, "minItems": 1}, "minItems": 1}
    assert gd.compile_json_schema(deep, max_depth=3).accepts("[[[]]]")
    with pytest.raises(gd.SchemaError, match="nested at most 2"):
        gd.compile_json_schema(deep, max_depth=2)
    with pytest.raises(ValueError):
        gd.compile_json_schema({}, max_depth=0)


# -- numbers the grammar cannot write; texts that are not texts ----------------------------------

@pytest.mark.parametrize("schema,keyword", [
    ({"type": "number", "minimum": 1e300}, "minimum"),
    ({"type": "integer", "maximum": -10 ** 30}, "maximum"),
    ({"type": "number", "minimum": 5e-324, "maximum": 1e-323}, "minimum"),
    ({"type": "number", "minimum": 1e20}, "minimum"),
])
def test_satisfiable_bounds_the_number_grammar_cannot_write_are_refusals(schema: dict, keyword: str) -> None:
    assert refused(schema).keyword == keyword


@pytest.mark.parametrize("schema", [{"type": "number", "minimum": 5, "maximum": 4},
                                    {"type": "integer", "minimum": 5.5, "maximum": 5.7},
                                    {"type": "number", "exclusiveMinimum": 1, "maximum": 1}])
def test_unsatisfiable_bounds_admit_no_document(schema: dict) -> None:
    error = refused(schema, error=gd.SchemaError)
    assert not isinstance(error, gd.UnsupportedSchemaError) and "None" not in str(error)


@pytest.mark.parametrize("value", [5, None, 1.5, ["a"], [0x61]])
def test_only_str_and_bytes_are_texts(value: object) -> None:
    grammar = gd.compile_regex("\x00{5}|a")
    with pytest.raises(TypeError, match="str or bytes"):
        grammar.accepts(value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str or bytes"):
        grammar.accepts_prefix(value)  # type: ignore[arg-type]
    assert grammar.accepts(b"\x00" * 5) and grammar.accepts(bytearray(b"a")) and grammar.accepts("a")
