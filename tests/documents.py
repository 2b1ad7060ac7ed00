"""Shared helpers for the property tests (``test_properties``, ``test_token_walks``, ``test_languages``).

Nothing here is a test. The pieces the property modules share:

- example budgets, scaled with the hypothesis profile of conftest.py, and the cache of compiled grammars;
- the judge, which never shares code with the library: Python's ``json`` module made strict (no
  duplicate keys, no NaN/Infinity, no lone surrogates, UTF-8 only) plus the Draft 2020-12 validator
  from ``helpers.validate``;
- strategies for random schemas within the supported subset, and for their valid instances in the
  grammar's canonical shape (required keys only, in ``required`` order; numbers with at most two
  exponent digits); ``canonicalize`` reshapes instances from elsewhere into that shape;
- serialisers: ``json.dumps`` spellings, and ``render`` with explicit gaps between structural tokens;
- ``random_document``: a random walk through the automaton, steered to completion with ``min_bytes``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Callable

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import grammar_decode as gd
from helpers import SCHEMAS, require, validate, walker

jsonschema = require("jsonschema")
from grammar_decode.frontends.json_schema.lexemes import EXPONENT_DIGITS_MAX, INTEGER_DIGITS_MAX

# ------------------------------------------------------------------------------------------------
# budgets

#: Examples per test scale with the profile of conftest.py (60 by default; GD_HYPOTHESIS_EXAMPLES).
_PROFILE_EXAMPLES: int = settings().max_examples


def examples(n: int) -> int:
    """``n`` examples at the default profile of 60, scaled with the profile."""
    return max(1, n * _PROFILE_EXAMPLES // 60)


SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

MAX_WS = 4  # the library's default max_whitespace, used by every "flexible" grammar below

# ------------------------------------------------------------------------------------------------
# grammars

_GRAMMARS: dict[tuple[int, str, int], gd.CompiledGrammar] = {}
_FIXED_IDS = {id(s) for s in SCHEMAS.values()}


def grammar_for(schema: dict, whitespace: str = "flexible", max_whitespace: int = MAX_WS) -> gd.CompiledGrammar:
    """The compiled grammar of ``schema``. Grammars of the fixed ``SCHEMAS`` are cached for the
    module (their mask caches stay warm across examples); random schemas are compiled fresh so
    their per-state masks (100 KB each over cl100k) are freed with the example."""
    if id(schema) in _FIXED_IDS:
        key = (id(schema), whitespace, max_whitespace)
        if key not in _GRAMMARS:
            _GRAMMARS[key] = gd.compile_json_schema(schema, whitespace=whitespace, max_whitespace=max_whitespace)
        return _GRAMMARS[key]
    return gd.compile_json_schema(schema, whitespace=whitespace, max_whitespace=max_whitespace)


# ------------------------------------------------------------------------------------------------
# the judge: strict JSON + Draft 2020-12


class NotJSON(ValueError):
    """The bytes are not one strict JSON document."""


def _reject_constant(name: str) -> Any:
    raise NotJSON(f"{name} is not JSON")


class DuplicateKey(NotJSON):
    """An object spells one key twice."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise DuplicateKey(f"duplicate key in {keys!r}")
    return dict(pairs)


def named_keys(schema: Any) -> set[str]:
    """Every name a ``properties`` keyword anywhere in ``schema`` holds."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for keyword, value in schema.items():
            if keyword == "properties" and isinstance(value, dict):
                found.update(value)
            found |= named_keys(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= named_keys(item)
    return found


def loads_each_repeat(doc: bytes, named: set[str]) -> list[Any]:
    """``doc`` read twice, keeping the first and then the last of each repeated key, for the limit
    docs/json-schema.md states: two *other* keys of an object (names no ``properties`` holds) may
    spell the same name. A repeated named key stays ``NotJSON``; so does anything else
    ``strict_loads`` refuses."""
    def keeping(last: bool) -> Any:
        def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for key, value in pairs:
                if key in out and key in named:
                    raise NotJSON(f"the named key {key!r} repeated")
                if last or key not in out:
                    out[key] = value
            return out
        try:
            value = json.loads(doc.decode("utf-8"), object_pairs_hook=pairs_hook, parse_constant=_reject_constant)
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise NotJSON(str(exc)) from exc
        _check_strict(value)
        return value
    return [keeping(False), keeping(True)]


def _check_strict(value: Any) -> None:
    """No lone surrogates in any string (json.loads lets ``"\\ud800"`` through), no infinities."""
    if isinstance(value, str):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
            raise NotJSON(f"lone surrogate in {value!r}")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise NotJSON(f"{value!r} is not a finite number")
    elif isinstance(value, list):
        for item in value:
            _check_strict(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strict(key)
            _check_strict(item)


def strict_loads(doc: bytes) -> Any:
    """Parse ``doc`` as exactly one RFC 8259 JSON text in UTF-8, rejecting what ``json.loads``
    tolerates: duplicate keys, NaN/Infinity, lone surrogates, numbers that overflow to inf."""
    try:
        text = doc.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotJSON(str(exc)) from exc
    try:
        value = json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)
    except ValueError as exc:  # JSONDecodeError, or e.g. an int too long to convert
        raise NotJSON(str(exc)) from exc
    _check_strict(value)
    return value


def is_valid(schema: dict, doc: bytes) -> bool:
    """True iff ``doc`` is strict JSON and a valid instance of ``schema`` (Draft 2020-12)."""
    try:
        value = strict_loads(doc)
    except NotJSON:
        return False
    try:
        validate(schema, value)
    except jsonschema.ValidationError:
        return False
    return True


# ------------------------------------------------------------------------------------------------
# random schemas within the supported subset

_EXPONENT = re.compile(r"[eE][+-]?(\d+)")


def exponent_ok(x: float) -> bool:
    """Finite, and ``json.dumps`` writes it with at most EXPONENT_DIGITS_MAX exponent digits."""
    if not math.isfinite(x):
        return False
    match = _EXPONENT.search(json.dumps(x))
    return match is None or len(match.group(1)) <= EXPONENT_DIGITS_MAX


FLOATS = st.floats(allow_nan=False, allow_infinity=False).filter(exponent_ok)
#: integers the grammar writes: at most INTEGER_DIGITS_MAX digits
INTEGERS = st.integers(-(10**INTEGER_DIGITS_MAX) + 1, 10**INTEGER_DIGITS_MAX - 1)
NUMBERS = st.one_of(INTEGERS, FLOATS)
KEYS = st.text(max_size=6)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), FLOATS, st.text(max_size=6))
SCALAR_TYPES = ("string", "integer", "number", "boolean", "null")


def literal_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


ENUMS = st.one_of(
    st.lists(SCALARS, min_size=1, max_size=4, unique_by=literal_text).map(lambda vs: {"enum": vs}),
    st.lists(st.text(max_size=6), min_size=1, max_size=4, unique_by=literal_text).map(
        lambda vs: {"type": "string", "enum": vs}),
    SCALARS.map(lambda v: {"const": v}),
)
LEAF_SCHEMAS = st.one_of(
    st.sampled_from(SCALAR_TYPES).map(lambda t: {"type": t}),
    st.sampled_from(SCALAR_TYPES).map(lambda t: {"type": [t]}),
    ENUMS,
)


@st.composite
def object_schemas(draw: st.DrawFn, values: st.SearchStrategy[dict]) -> dict:
    """An object schema: some properties, a random subset of them required, in random order."""
    entries = draw(st.lists(st.tuples(KEYS, values), max_size=4, unique_by=lambda e: e[0]))
    properties = dict(entries)
    order = draw(st.permutations(list(properties)))
    required = order[: draw(st.integers(0, len(order)))]
    schema: dict[str, Any] = {"type": "object", "properties": properties, "required": list(required)}
    additional = draw(st.sampled_from([None, True, False]))
    if additional is not None:
        schema["additionalProperties"] = additional
    return schema


@st.composite
def array_schemas(draw: st.DrawFn, items: st.SearchStrategy[dict]) -> dict:
    """An array schema with small optional minItems/maxItems."""
    schema: dict[str, Any] = {"type": "array", "items": draw(items)}
    low = draw(st.integers(0, 2))
    if low or draw(st.booleans()):
        schema["minItems"] = low
    if draw(st.booleans()):
        schema["maxItems"] = low + draw(st.integers(0, 2))
    return schema


def random_schemas(depth: int = 3) -> st.SearchStrategy[dict]:
    """Schemas within the supported subset, containers nested at most ``depth`` levels."""
    if depth == 0:
        return LEAF_SCHEMAS
    inner = random_schemas(depth - 1)
    return st.one_of(LEAF_SCHEMAS, object_schemas(inner), array_schemas(inner))


#: Where a test's schema comes from: each fixed schema by name, or a random one.
SOURCES: dict[str, st.SearchStrategy[dict]] = {name: st.just(s) for name, s in SCHEMAS.items()}
SOURCES["random"] = random_schemas()
SOURCE_NAMES = list(SOURCES)


def schema_type(schema: dict) -> str:
    t = schema["type"]
    return t[0] if isinstance(t, list) else t


def key_order(schema: dict) -> list[str]:
    """The order the grammar writes an object's keys in: ``properties`` order, then required keys
    that ``properties`` does not list, in ``required`` order."""
    listed = list(schema.get("properties", {}))
    return listed + [k for k in schema.get("required", []) if k not in listed]


def instances(schema: dict) -> st.SearchStrategy[Any]:
    """Valid instances of ``schema`` in the grammar's canonical shape: the required keys and some
    optional ones, in ``key_order``; integers as ints, floats whose JSON has a short exponent."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        values = schema["enum"]
        if "type" in schema:
            values = [v for v in values if isinstance(v, str)]  # only string-typed enums are generated
        return st.sampled_from(values)
    kind = schema_type(schema)
    if kind == "object":
        required = schema.get("required", [])
        properties = schema.get("properties", {})
        fields = {key: instances(properties[key]) for key in required}
        optional = {key: instances(sub) for key, sub in properties.items() if key not in required and sub is not False}
        order = key_order(schema)
        return st.fixed_dictionaries(fields, optional=optional).map(lambda d: {k: d[k] for k in order if k in d})
    if kind == "array":
        return st.lists(instances(schema["items"]), min_size=schema.get("minItems", 0),
                        max_size=schema.get("maxItems", 3 + schema.get("minItems", 0)))
    return {
        "string": st.text(),
        "integer": INTEGERS,
        "number": NUMBERS,
        "boolean": st.booleans(),
        "null": st.none(),
    }[kind]


def canonicalize(schema: dict, value: Any) -> Any:
    """Reshape a valid instance (e.g. from hypothesis-jsonschema) into the grammar's canonical
    form: drop keys ``properties`` does not list, order keys by ``key_order``, integral floats of
    integer type → int."""
    if "enum" in schema or "const" in schema:
        return value
    kind = schema_type(schema)
    if kind == "object":
        properties = schema.get("properties", {})
        return {key: canonicalize(properties[key], value[key]) for key in key_order(schema)
                if key in value and key in properties}
    if kind == "array":
        return [canonicalize(schema["items"], item) for item in value]
    if kind == "integer":
        return int(value)
    return value


def numbers_ok(value: Any) -> bool:
    """Every number inside ``value`` is one the grammar writes: floats finite with a short
    exponent, integers with at most INTEGER_DIGITS_MAX digits."""
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return abs(value) < 10**INTEGER_DIGITS_MAX
    if isinstance(value, float):
        return exponent_ok(value)
    if isinstance(value, list):
        return all(numbers_ok(v) for v in value)
    if isinstance(value, dict):
        return all(numbers_ok(v) for v in value.values())
    return True


def nesting(value: Any) -> int:
    """Container nesting depth (a scalar is 0)."""
    if isinstance(value, list):
        return 1 + max((nesting(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((nesting(v) for v in value.values()), default=0)
    return 0


# ------------------------------------------------------------------------------------------------
# a serialiser with explicit gaps between structural tokens


class DupObject:
    """An object rendered with one key written twice (``pairs`` may repeat keys)."""

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs


def render(value: Any, gap: Callable[[], str], ensure_ascii: bool) -> str:
    """JSON text of ``value`` with ``gap()`` between every two adjacent structural tokens inside a
    container (after ``{ [ , :`` and before ``: , } ]``), one call per gap."""
    if isinstance(value, (dict, DupObject)):
        pairs = value.pairs if isinstance(value, DupObject) else list(value.items())
        parts = ["{"]
        for i, (key, item) in enumerate(pairs):
            if i:
                parts += [gap(), ","]
            parts += [gap(), json.dumps(key, ensure_ascii=ensure_ascii), gap(), ":", gap(),
                      render(item, gap, ensure_ascii)]
        parts += [gap(), "}"]
        return "".join(parts)
    if isinstance(value, list):
        parts = ["["]
        for i, item in enumerate(value):
            if i:
                parts += [gap(), ","]
            parts += [gap(), render(item, gap, ensure_ascii)]
        parts += [gap(), "]"]
        return "".join(parts)
    return json.dumps(value, ensure_ascii=ensure_ascii)


def serializations(value: Any, ensure_ascii: bool) -> tuple[str, str]:
    """(compact, default-spaced) ``json.dumps`` texts."""
    tight = json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii)
    spaced = json.dumps(value, ensure_ascii=ensure_ascii)
    return tight, spaced


# ------------------------------------------------------------------------------------------------
# random walks through the automaton


def random_document(data: st.DataObject, grammar: gd.CompiledGrammar, free_steps: int) -> bytes:
    """Walk the automaton: ``free_steps`` uniformly chosen allowed bytes, then only bytes that bring
    the document one byte closer to completion, until it is complete. Checks on the way that
    every viable state can continue or is complete, and that ``min_bytes`` is exact (the best
    next byte lowers it by exactly one, none by more)."""
    automaton = walker(grammar)
    state = automaton.initial
    out = bytearray()
    steps = 0
    while True:
        need = automaton.min_bytes(state)
        accepting = automaton.is_accepting(state)
        assert (need == 0) == accepting, (bytes(out), need)
        successors = {b: nxt for b in range(256) if (nxt := automaton.step(state, b)) is not None}
        assert successors or accepting, f"dead state after {bytes(out)!r}"
        if successors:
            lowest = min(automaton.min_bytes(nxt) for nxt in successors.values())
            assert lowest >= need - 1, (bytes(out), need, lowest)
            if need:
                assert lowest == need - 1, (bytes(out), need, lowest)
        forced = steps >= free_steps
        if forced and accepting or not successors:
            return bytes(out)
        if forced:
            choices = sorted(b for b, nxt in successors.items() if automaton.min_bytes(nxt) < need)
        else:
            choices = sorted(successors)
        byte = data.draw(st.sampled_from(choices))
        out.append(byte)
        state = successors[byte]
        steps += 1
