"""String lengths (minLength/maxLength, with and without pattern) and integer bounds
(minimum/maximum/exclusive*, the draft-4 boolean form too): exact languages, masks equal to the
reference, the counting slice, generation judged by jsonschema."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.masking.slices import string_slice
from helpers import (REFERENCE_VOCABS, assert_language, assert_masks_equal_reference, assert_random_documents_validate,
                     require, validate)
from grammar_decode.frontends.json_schema.numbers import integer_range
from grammar_decode.ir.regex import ExprSet

LENGTHS = [  # schema, accepted, rejected (strings as JSON text)
    ({"type": "string", "minLength": 2, "maxLength": 4},
     ['"ab"', '"abcd"', '"éé"', '"\\u00e9x"', '"\\ud83d\\ude00x"', '"\\n\\t"'],
     ['"a"', '"abcde"', '""', '"😀"', '"\\ud83d\\ude00"']),
    ({"type": "string", "maxLength": 0}, ['""'], ['"a"', '"\\n"']),
    ({"type": "string", "minLength": 3}, ['"abc"', '"abcdefgh"', '"a\\"b"'], ['"ab"', '"\\\\\\\\"']),
    ({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}, ['"a"', '"abc"'], ['""', '"abcd"', '"a1"']),
    ({"type": "string", "pattern": "x", "minLength": 3}, ['"xab"', '"abx"', '"\\u0078yz"'], ['"xa"', '"abc"']),
]

BOUNDS = [  # schema, accepted, rejected
    ({"type": "integer", "minimum": -3, "maximum": 10}, ["-3", "0", "10", "7"], ["-4", "11", "-0", "007", "1.0"]),
    ({"type": "integer", "exclusiveMinimum": 2, "exclusiveMaximum": 5}, ["3", "4"], ["2", "5"]),
    ({"type": "integer", "minimum": 2.5, "maximum": 4.5}, ["3", "4"], ["2", "5"]),
    ({"type": "integer", "exclusiveMinimum": 2.5}, ["3", "123456789"], ["2", "-3"]),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer", "minimum": 5,
      "exclusiveMinimum": True}, ["6"], ["5"]),
    ({"$schema": "http://json-schema.org/draft-04/schema#", "type": "integer", "maximum": 5,
      "exclusiveMaximum": False}, ["5", "-99"], ["6"]),
    ({"type": "integer", "minimum": 0}, ["0", "99999999999999999999"], ["-1", "-0"]),
    ({"type": "integer", "maximum": -10}, ["-10", "-123"], ["-9", "0"]),
    ({"type": ["integer", "null"], "minimum": 0, "maximum": 0}, ["0", "null"], ["1", "-1"]),
    ({"enum": [1, 5, 10 ** 25, -2], "type": "integer", "minimum": 2}, ["5", str(10 ** 25)], ["1", "-2"]),
]


NUMBER_BOUNDS = [  # bounds on "number": integers exactly, fixed-point decimals within the bounds
    ({"type": "number", "minimum": 1.5, "exclusiveMaximum": 10},
     ["1.5", "1.50", "2", "9.99999", "1.6"], ["1.49", "10", "10.0", "-0.0", "100.5", "1"]),
    ({"type": "number", "minimum": -2.25, "maximum": 0}, ["-2.25", "-0.0", "0", "0.0", "-1", "-2.2"],
     ["-2.26", "0.1", "-2.250001", "1"]),
    ({"type": "number", "exclusiveMinimum": 0}, ["0.0001", "5", "0.5"], ["0", "0.0", "-0.0", "-1"]),
    ({"type": "number", "minimum": 0.1, "maximum": 0.3}, ["0.1", "0.3", "0.2", "0.10"], ["0.09", "0.31", "0"]),
    ({"type": "number", "maximum": -1e-5}, ["-0.00001", "-3", "-1.5"], ["0", "-0.000001", "-0.0"]),
    ({"type": ["number", "null"], "minimum": 0, "maximum": 1}, ["0", "1", "0.75", "null"], ["1.01", "-0.5"]),
]


MULTIPLES = [  # multipleOf with an integer divisor: integer spellings only
    ({"type": "integer", "multipleOf": 3}, ["0", "3", "-3", "999", "12345678901234567890"], ["1", "-0", "1000", "3.0"]),
    ({"type": "integer", "multipleOf": 100, "minimum": 150}, ["200", "1000"], ["100", "150", "250"]),
    ({"type": "number", "multipleOf": 7.0}, ["14", "-7", "0"], ["14.0", "15", "7.5"]),
    ({"allOf": [{"type": "integer", "multipleOf": 4}, {"multipleOf": 6}]}, ["12", "24", "0"], ["4", "6", "18"]),
    # a divisor with a small binary fraction: fixed-point spellings whose quotient is exact
    ({"type": "number", "multipleOf": 1.5}, ["0", "1.5", "3", "4.50", "-3.0", "0.0", "-0"], ["1", "2.25", "35", "4.5e0"]),
    ({"type": "number", "multipleOf": 0.125, "maximum": 1}, ["0.125", "0.875", "1", "-7.5"], ["0.1", "1.125", "0.12"]),
    ({"type": "integer", "multipleOf": 0.5}, ["0", "1", "-7", "123456789012345"], ["0.5", "1.0", "1234567890123456"]),
    ({"type": "number", "multipleOf": 2.5}, ["5", "7.5", "-12.5", "0"], ["2", "2.6", "1.25"]),
]


@pytest.mark.parametrize("schema,accepted,rejected", LENGTHS + BOUNDS + NUMBER_BOUNDS + MULTIPLES)
def test_exact_languages(schema: dict, accepted: list[str], rejected: list[str]) -> None:
    assert_language(schema, accepted, rejected)


@pytest.mark.slow
def test_a_long_bound_is_exact_at_its_edge() -> None:
    """``maxLength`` 20,000: a bound far past every threshold of the counter code (the lexer's
    counters are symbolic, so it runs the same code as 10**9, whose compile
    ``test_hostile_limits.py`` covers); the text is fed byte by byte, so the bound sets the cost."""
    assert_language({"type": "string", "maxLength": 20000}, ['"' + "a" * 20000 + '"'], ['"' + "a" * 20001 + '"'])


def test_prefixes_that_cannot_be_completed_are_rejected() -> None:
    grammar = gd.compile_json_schema({"type": "string", "maxLength": 2})
    assert grammar.accepts_prefix('"ab')
    assert not grammar.accepts_prefix('"abc')
    bounded = gd.compile_json_schema({"type": "integer", "minimum": 10, "maximum": 19})
    assert bounded.accepts_prefix("1") and not bounded.accepts_prefix("2") and not bounded.accepts_prefix("-")
    assert bounded.min_completion_bytes("1") == 1


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.integers(-10 ** 7, 10 ** 7)), st.one_of(st.none(), st.integers(-10 ** 7, 10 ** 7)),
       st.lists(st.integers(-10 ** 8, 10 ** 8), max_size=30))
def test_integer_range_spells_exactly_the_integers_between(low: int | None, high: int | None, probes: list[int]) -> None:
    exprs = ExprSet()
    expr = integer_range(exprs, low, high, 9)
    if low is not None and high is not None and low > high:
        assert expr is None
        return
    assert expr is not None
    edges = [v + d for v in (low, high) if v is not None for d in (-1, 0, 1)]
    for value in probes + edges + [0, 1, -1]:
        inside = (low is None or value >= low) and (high is None or value <= high) and abs(value) < 10 ** 9
        assert exprs.matches(expr, str(value).encode()) is inside, value
    for text in (b"-0", b"00", b"01", b"-", b"", b"+1", b"1.0"):
        assert not exprs.matches(expr, text)


def test_huge_bounds_stay_symbolic() -> None:
    grammar = gd.compile_json_schema({"type": "integer", "minimum": 10 ** 18, "maximum": 10 ** 18 + 5})
    assert grammar.accepts(str(10 ** 18 + 3)) and not grammar.accepts(str(10 ** 18 + 6))
    long = gd.compile_json_schema({"type": "string", "minLength": 10 ** 9})
    assert long.min_completion_bytes() == 10 ** 9 + 2
    assert long.accepts_prefix('"' + "x" * 1000)


MASK_CASES = [
    ({"type": "string", "minLength": 2, "maxLength": 5}, ['"', '"a', '"ab', '"abcd', '"abcde', '"\\u00e9']),
    ({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}, "n": {"type": "integer", "minimum": -5,
                                                                                      "maximum": 120}}},
     ["{", '{"s":"', '{"s":"ab', '{"s":"abc', '{"s":"a","n":', '{"s":"a","n":1', '{"s":"a","n":-']),
    ({"type": "integer", "exclusiveMinimum": 99, "maximum": 1234}, ["", "1", "12", "123", "99"]),
    # pattern and lengths together: an intersection, matched in the reference by oracle/terms.py
    ({"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 4}, ['"', '"a', '"abc', '"abcd']),
    ({"type": "string", "pattern": "[0-9]", "maxLength": 3}, ['"', '"a', '"ab', '"a1', '"\\u0031']),
    ({"type": "number", "minimum": -1.5, "exclusiveMaximum": 20.25}, ["", "-", "-1", "-1.", "20", "20.2", "0."]),
    ({"type": "integer", "multipleOf": 7, "maximum": 500}, ["", "-", "1", "14", "49"]),
    ({"type": "number", "multipleOf": 0.75, "minimum": -10}, ["", "-", "-1", "1.", "2.2", "-9.7", "3.0"]),
]


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
@pytest.mark.parametrize("schema,prefixes", MASK_CASES)
def test_masks_equal_the_reference(request, vocab_name: str, schema: dict, prefixes: list[str]) -> None:
    assert_masks_equal_reference(schema, request.getfixturevalue(vocab_name), prefixes)


def test_counted_strings_use_the_plain_slice(gemma: gd.Vocabulary) -> None:
    """Inside a counted string, plain tokens are allowed by length (no walk over them): the
    lexeme part walks only the small rest trie."""
    grammar = gd.compile_json_schema({"type": "string", "maxLength": 1000}, whitespace="compact")
    masker = grammar.masker(gemma)
    state = grammar.recognizer.feed(grammar.recognizer.initial, b'"ab')
    masker.mask(state)
    part = masker.lexeme_part(state[0])
    assert part.trie is string_slice(gemma).rest
    near_end = grammar.recognizer.feed(grammar.recognizer.initial, b'"' + b"a" * 997)
    mask = masker.mask(near_end)
    chars = string_slice(gemma).chars
    assert not (mask & string_slice(gemma).plain & (chars > 3)).any()
    assert (string_slice(gemma).plain & (chars <= 3) & ~mask).sum() == 0


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"code": {"type": "string", "minLength": 3, "maxLength": 6},
                                      "qty": {"type": "integer", "minimum": 1, "maximum": 12},
                                      "delta": {"type": "integer", "exclusiveMinimum": -100, "exclusiveMaximum": 0}},
     "required": ["code", "qty", "delta"]},
    {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]", "maxLength": 4}, "maxItems": 5},
])
def test_random_logits_documents_validate(gpt2: gd.Vocabulary, schema: dict) -> None:
    assert_random_documents_validate(schema, gpt2, seeds=6, max_tokens=80)


def test_tightest_budget_still_ends_complete_and_valid(gpt2: gd.Vocabulary) -> None:
    """The closing budget on counted strings and bounded integers: at the fewest tokens that can
    spell a document, every run under random logits ends complete and valid."""
    schema = {"type": "object", "properties": {"id": {"type": "string", "minLength": 4, "maxLength": 8},
                                               "n": {"type": "integer", "minimum": 1000, "maximum": 99999}},
              "required": ["id", "n"]}
    grammar = gd.compile_json_schema(schema)
    budget = grammar.min_completion_tokens(gpt2)
    for seed in range(8):
        rng = np.random.default_rng(seed)
        result = gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2, max_tokens=budget, seed=seed)
        assert result.stop_reason in ("eos", "complete"), (budget, result)
        validate(schema, json.loads(result.data))


_DECIMALS = st.builds(lambda sign, whole, frac: f"{sign}{whole}" + (f".{frac}" if frac else ""),
                      st.sampled_from(["", "-"]), st.sampled_from(["0", "1", "2", "9", "10", "99", "12345"]),
                      st.one_of(st.just(""), st.text(alphabet="0123456789", min_size=1, max_size=20)))
_BOUND_VALUES = st.one_of(st.integers(-100, 100), st.floats(-100, 100, allow_nan=False),
                          st.sampled_from([0.1, 0.3, 1e-5, -2.5, 99.99, 5e-324, 2 ** 53 + 1]))


@settings(max_examples=150, deadline=None)
@example({"minimum": 9.080142169766828e-164, "maximum": 9.080142169766828e-164}, ["0", "0.0"])
@given(st.dictionaries(st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
                       _BOUND_VALUES, min_size=1, max_size=2),
       st.lists(_DECIMALS, min_size=5, max_size=20))
def test_number_bounds_never_accept_what_jsonschema_rejects(keywords: dict, texts: list[str]) -> None:
    """Whatever the bounds (doubles near decimals, huge integers), an accepted number passes
    jsonschema on the value json.loads reads; a plain decimal clearly inside is accepted."""
    jsonschema = require("jsonschema")
    schema = {"type": "number", **keywords}
    try:
        grammar = gd.compile_json_schema(schema)
    except gd.UnsupportedSchemaError as exc:  # numbers there, none the grammar writes (5e-324)
        assert exc.keyword in ("minimum", "maximum") and "not written" in str(exc)
        return
    except gd.SchemaError as exc:
        assert "admits no document" in str(exc)
        return
    validator = jsonschema.Draft202012Validator(schema)
    for text in texts:
        if grammar.accepts(text):
            assert validator.is_valid(json.loads(text)), (schema, text)
        elif validator.is_valid(json.loads(text)) and "." not in text and text != "-0":  # -0: never spelled
            raise AssertionError(f"integer {text} within {schema} rejected")


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.sampled_from([1, 2, 3, 5, 6, 7, 8, 9, 12, 18, 25, 40, 45, 63 // 7, 1000]),
       st.lists(st.integers(-10 ** 6, 10 ** 6), min_size=10, max_size=40))
def test_multiple_of_spells_exactly_the_multiples(divisor: int, probes: list[int]) -> None:
    grammar = gd.compile_json_schema({"type": "integer", "multipleOf": divisor})
    for value in probes + [0, divisor, -divisor, 10 ** 19 - 10 ** 19 % divisor]:
        assert grammar.accepts(str(value)) == (value % divisor == 0 and str(value) != "-0"), (divisor, value)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(st.sampled_from([0.5, 1.5, 0.25, 0.75, 2.5, 0.125, 4.5, 0.375, 3.5, 0.015625]),
       st.lists(st.tuples(st.integers(-10 ** 16, 10 ** 16), st.integers(0, 7), st.integers(-2, 2)),
                min_size=10, max_size=30))
def test_fractional_multiple_of_is_judged_like_jsonschema(divisor: float, probes: list[tuple[int, int, int]]) -> None:
    """Decimals near the multiples (``n * divisor`` written with ``places`` decimals, nudged by a
    few units in the last place), small and near 2**53: what the grammar accepts, jsonschema's
    float division calls a multiple; exact multiples of small magnitude are accepted."""
    from decimal import Decimal

    jsonschema = require("jsonschema")
    schema = {"type": "number", "multipleOf": divisor}
    grammar = gd.compile_json_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for n, places, nudge in probes:
        exact = Decimal(n) * Decimal(divisor)
        value = exact + Decimal(nudge) * Decimal(10) ** -places
        text = f"{value:.{places}f}" if places else str(int(value)) if value == int(value) else str(value)
        if grammar.accepts(text):
            assert validator.is_valid(json.loads(text)), (divisor, text)
        elif nudge == 0 and abs(n) < 10 ** 12 and exact == Decimal(text) and "e" not in text.lower():
            raise AssertionError(f"{text}, a multiple of {divisor}, rejected")
