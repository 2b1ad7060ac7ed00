"""Character classes over every code point, against ``re`` itself and an ECMA-262 table written
here: the Python reading equals ``re`` for every class and flag set (case folding included); the
JSON Schema readings are sound, ``"both"`` inside each dialect's set and ``"either"`` covering
both, for the positive and the negated forms."""

from __future__ import annotations

import functools

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.errors import UnsupportedRegexError
from grammar_decode.frontends.regex import translate
from grammar_decode.ir.regex import ExprSet

from helpers import require

ALL = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
TEXT = "".join(map(chr, ALL))


def matched_by_re(pattern: str, flags: int) -> set[int]:
    """The code points ``re`` matches with the one-character ``pattern``: the oracle."""
    return {ord(c) for c in re.findall(pattern, TEXT, flags)}


def translated(pattern: str, flags: int = 0, dialect: str = "python") -> set[int]:
    """The code points the translator hands its encoder for ``pattern``, one class."""
    seen: list[list[tuple[int, int]]] = []

    def record(exprs: ExprSet, ranges: list[tuple[int, int]]) -> int:
        seen.append(list(ranges))
        return exprs.byteset(1)

    translate(ExprSet(), pattern, flags, encode=record, dialect=dialect)  # type: ignore[arg-type]
    assert len(seen) == 1, pattern
    return {c for lo, hi in seen[0] for c in range(lo, hi + 1) if not 0xD800 <= c <= 0xDFFF}


CLASSES = [r"\d", r"\D", r"\w", r"\W", r"\s", r"\S", ".", r"[^\d]", r"[^\w]", r"[^\s]", r"[^\D]", r"[^\W]",
           r"[^\S]", r"[\w\d]", r"[^\w\s]", r"[\Wa]", r"[^\Wa]", r"[\d\s]", r"[a-z]", r"[^a-z]", r"[A-Z]", "k", "K",
           "[^k]", "ß", "[^ß]", "ι", "\u0345", r"[0-9a-fA-F]", r"[\S\d]", r"[\s\S]", r"[^\s\S]", r"[\s\Sx]"]
FLAG_SETS = [0, re.IGNORECASE, re.ASCII, re.IGNORECASE | re.ASCII, re.DOTALL]


@pytest.mark.slow
@pytest.mark.parametrize("flags", FLAG_SETS, ids=["none", "I", "A", "IA", "S"])
def test_python_reading_equals_re_on_every_code_point(flags: int) -> None:
    wrong = {}
    for pattern in CLASSES:
        ours, theirs = translated(pattern, flags), matched_by_re(pattern, flags)
        if ours != theirs:
            wrong[pattern] = sorted(ours ^ theirs)[:5]
    assert wrong == {}


def test_case_folding_does_not_fold_categories() -> None:
    """``re`` tests ``\\w`` unfolded under ``re.IGNORECASE``: U+0345 folds to ι, a word character,
    yet ``\\w`` does not match it; ``[^\\W]`` matches ι although ``\\W`` folds ι's other forms."""
    assert not gd.compile_regex(r"\w", re.IGNORECASE).accepts("\u0345")
    assert gd.compile_regex(r"[^\W]", re.IGNORECASE).accepts("ι")
    assert not gd.compile_regex(r"(?i)^\W$").accepts("ι")


# ECMA-262 (non-Unicode mode), written from the specification's tables, independent of the library.
_UNIVERSE = set(ALL)
_DIGIT = set(range(0x30, 0x3A))
_WORD = _DIGIT | set(range(0x41, 0x5B)) | set(range(0x61, 0x7B)) | {0x5F}
_SPACE = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F,
          0x3000, 0xFEFF}
_LINE_TERMINATORS = {0x0A, 0x0D, 0x2028, 0x2029}
ECMA = {
    r"\d": _DIGIT, r"\D": _UNIVERSE - _DIGIT, r"\w": _WORD, r"\W": _UNIVERSE - _WORD, r"\s": _SPACE,
    r"\S": _UNIVERSE - _SPACE, ".": _UNIVERSE - _LINE_TERMINATORS, r"[^\d]": _UNIVERSE - _DIGIT,
    r"[^\w]": _UNIVERSE - _WORD, r"[^\s]": _UNIVERSE - _SPACE, r"[^\D]": _DIGIT, r"[^\W]": _WORD, r"[^\S]": _SPACE,
    r"[\w\d]": _WORD, r"[^\w\s]": _UNIVERSE - _WORD - _SPACE, r"[\Wa]": (_UNIVERSE - _WORD) | {0x61},
    r"[^\Wa]": _WORD - {0x61}, r"[\d\s]": _DIGIT | _SPACE, r"[a-z]": set(range(0x61, 0x7B)),
    r"[^a-z]": _UNIVERSE - set(range(0x61, 0x7B)), r"[A-Z]": set(range(0x41, 0x5B)), "k": {0x6B}, "K": {0x4B},
    "[^k]": _UNIVERSE - {0x6B}, "ß": {0xDF}, "[^ß]": _UNIVERSE - {0xDF}, "ι": {0x3B9}, "\u0345": {0x345},
    r"[0-9a-fA-F]": _DIGIT | set(range(0x41, 0x47)) | set(range(0x61, 0x67)), r"[\S\d]": _UNIVERSE - _SPACE | _DIGIT,
    # every character in both dialects, though \s and \S each hold characters the dialects disagree on
    r"[\s\S]": _UNIVERSE, r"[^\s\S]": set(), r"[\s\Sx]": _UNIVERSE,
}


@pytest.mark.parametrize("pattern", CLASSES)
def test_json_schema_readings_are_sound_for_each_dialect(pattern: str) -> None:
    python, ecma = matched_by_re(pattern, 0), ECMA[pattern]
    both, either = translated(pattern, dialect="both"), translated(pattern, dialect="either")
    assert both <= python and both <= ecma, sorted((both - python) | (both - ecma))[:5]
    assert either >= python | ecma, sorted((python | ecma) - either)[:5]
    # and not vacuous: exact where the dialects agree
    assert both == python & ecma and either == python | ecma


# (schema, a string the dialects disagree on that a validator using Python's re rejects; the
# else-branch row is rejected by ECMA-262 instead, where é is not \w)
NEGATED_PATTERNS = [
    ({"type": "string", "not": {"pattern": "a$"}}, "a\n"),
    ({"type": "string", "not": {"pattern": "^\\d$"}}, "٣"),
    ({"type": "string", "not": {"pattern": "^\\w$"}}, "é"),
    ({"type": "string", "not": {"pattern": "^\\w$"}}, "²"),
    ({"type": "string", "not": {"pattern": "^\\w$"}}, "\u212a"),
    ({"type": "string", "not": {"pattern": "^.$"}}, "\r"),
    ({"type": "string", "not": {"pattern": "^.$"}}, "\u2028"),
    ({"type": "string", "not": {"pattern": "^\\s$"}}, "\x1c"),
    ({"type": "string", "not": {"pattern": "^\\s$"}}, "\x85"),
    ({"type": "string", "not": {"pattern": "^\\S$"}}, "\ufeff"),
    ({"type": "string", "if": {"pattern": "^\\w+$"}, "then": {"maxLength": 0}}, "é"),
    pytest.param({"type": "string", "if": {"pattern": "^\\w+$"}, "then": True, "else": {"maxLength": 0}}, "é",
                 id="else-ecma"),
    ({"oneOf": [{"type": "string", "pattern": "^\\w$"}, {"type": "string", "maxLength": 1}]}, "é"),
]


@pytest.mark.parametrize("schema,text", NEGATED_PATTERNS)
def test_negated_patterns_exclude_what_either_dialect_matches(schema: dict, text: str) -> None:
    import json

    jsonschema = require("jsonschema")
    python_valid = jsonschema.Draft202012Validator(schema).is_valid(text)
    assert python_valid == ("else" in schema)  # the case is what it claims
    assert not gd.compile_json_schema(schema).accepts(json.dumps(text))
    assert not gd.compile_json_schema(schema).accepts(json.dumps(text, ensure_ascii=False))


@pytest.mark.slow
def test_pattern_properties_keys_the_dialects_disagree_on_take_the_pattern_schema() -> None:
    grammar = gd.compile_json_schema({"type": "object", "patternProperties": {"^\\w+$": {"type": "integer"}}})
    assert not grammar.accepts('{"é": "x"}')
    assert grammar.accepts('{"é": 1}') and grammar.accepts('{"a": 1}') and grammar.accepts('{"-": "x"}')
    closed = gd.compile_json_schema({"type": "object", "patternProperties": {"^\\w+$": {"type": "integer"}},
                                     "additionalProperties": {"type": "integer", "minimum": 5}})
    assert not closed.accepts('{"é": 1}') and closed.accepts('{"é": 7}') and closed.accepts('{"a": 1}')
    named = gd.compile_json_schema({"type": "object", "properties": {"é": {}},
                                    "patternProperties": {"^\\w+$": {"type": "integer"}}})
    assert not named.accepts('{"é": "x"}') and named.accepts('{"é": 1}')


@pytest.mark.parametrize("pattern", ["(?i)abc", "\\U0001F600", "\\N{DIGIT ONE}", "\\a", "\\Aab", "ab\\Z", "a{,3}"])
def test_constructs_the_dialects_parse_differently_are_refused_in_schemas(pattern: str) -> None:
    with pytest.raises(gd.UnsupportedSchemaError, match="pattern"):
        gd.compile_json_schema({"type": "string", "pattern": pattern})
    translate(ExprSet(), pattern)  # the Python reading has them
    with pytest.raises(UnsupportedRegexError):
        translate(ExprSet(), pattern, dialect="either")


# -- property: schemas mixing classes with negations, judged by jsonschema ---------------------


_ATOMS = [r"\w", r"\d", r"\s", ".", r"\W", r"\D", r"\S", r"[^\d]", r"[^\s]", "[a-z]", "é", r"[\w\s]"]
_SHAPES = ["^{}+$", "{}", "^{}$", "{}$", "^a{}", "{}{}"]
#: Characters the two dialects read differently, and some they agree on.
_CHARS = ["a", "é", "²", "K", "\u212a", "\u2028", "\u2029", "\r", "\n", "\x1c", "\x85", "\ufeff", "٣", "1", " ", "_", "-"]
_TEMPLATES = [
    lambda p: {"type": "string", "not": {"pattern": p}},
    lambda p: {"type": "string", "pattern": p},
    lambda p: {"type": "string", "if": {"pattern": p}, "then": {"maxLength": 2}, "else": {"minLength": 1}},
    lambda p: {"oneOf": [{"type": "string", "pattern": p}, {"type": "string", "maxLength": 1}]},
    lambda p: {"type": "object", "patternProperties": {p: {"type": "integer"}}},
    lambda p: {"type": "object", "patternProperties": {p: {"type": "integer"}}, "additionalProperties": {"type": "string"}},
    lambda p: {"type": "object", "patternProperties": {p: {"type": "integer"}, "^a": {"minimum": 3}},
               "additionalProperties": False},
    lambda p: {"type": "object", "properties": {"é": {"type": "string"}}, "patternProperties": {p: {"type": "integer"}}},
]
_patterns = st.builds(lambda shape, atom: shape.format(atom, atom), st.sampled_from(_SHAPES), st.sampled_from(_ATOMS))
_texts = st.lists(st.sampled_from(_CHARS), max_size=3).map("".join)
_instances = st.one_of(_texts, st.dictionaries(_texts, st.one_of(st.integers(0, 5), _texts), max_size=2))


@functools.lru_cache(maxsize=None)
def _compile_or_none(template: int, pattern: str) -> gd.CompiledGrammar | None:
    """The grammar of ``_TEMPLATES[template](pattern)``, compiled once per schema: the 300
    examples draw from 576 schemas, and a recompile would ask the compiler the same question
    again (the examples' instances are what differs)."""
    try:
        return gd.compile_json_schema(_TEMPLATES[template](pattern))
    except gd.UnsupportedSchemaError:
        return None


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(_TEMPLATES) - 1), _patterns, st.lists(_instances, min_size=1, max_size=8))
def test_nothing_jsonschema_rejects_is_accepted(template: int, pattern: str, instances: list) -> None:
    import json

    jsonschema = require("jsonschema")
    schema = _TEMPLATES[template](pattern)
    grammar = _compile_or_none(template, pattern)
    assume(grammar is not None)
    judge = jsonschema.Draft202012Validator(schema)
    for instance in instances:
        for ascii_only in (True, False):
            if grammar.accepts(json.dumps(instance, ensure_ascii=ascii_only)):
                assert judge.is_valid(instance), (schema, instance)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.integers(0, len(_TEMPLATES) - 1), _patterns, st.integers(0, 2 ** 16))
def test_random_logits_documents_validate(gpt2: gd.Vocabulary, template: int, pattern: str, seed: int) -> None:
    import json

    import numpy as np

    jsonschema = require("jsonschema")
    schema = _TEMPLATES[template](pattern)
    grammar = _compile_or_none(template, pattern)
    assume(grammar is not None)
    rng = np.random.default_rng(seed)
    result = gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2,
                         max_tokens=grammar.min_completion_tokens(gpt2) + 24, seed=seed)
    assert result.stop_reason in ("eos", "complete"), result
    assert jsonschema.Draft202012Validator(schema).is_valid(json.loads(result.data)), (schema, result.text)


def test_a_complement_read_under_both_dialects_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The broken variant (a negated pattern subtracted as the "both" reading, as before this
    rule) accepts rows of the table above: the table can fail."""
    import json

    from grammar_decode.frontends.json_schema import compiler as json_schema

    exact = json_schema.JsonSchemaCompiler.pattern_body
    monkeypatch.setattr(json_schema.JsonSchemaCompiler, "pattern_body",
                        lambda self, pattern, pointer, dialect="both": exact(self, pattern, pointer, "both"))
    rows = [row for row in NEGATED_PATTERNS if isinstance(row[0], dict)]  # the pytest.param row aside
    caught = [schema for schema, text in rows if gd.compile_json_schema(schema).accepts(json.dumps(text))]
    assert len(caught) >= 5
