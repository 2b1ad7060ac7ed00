"""Property tests: the grammar against independent judges, on generated schemas and documents.

The judges (strict ``json``, the Draft 2020-12 validator from ``helpers.validate``) and the schema
and instance strategies live in ``documents``. Property 2 (token walks over cl100k) is checked in
``test_token_walks``, property 5 (exact languages) in ``test_languages``.

Properties:

1. Completeness on canonical documents: every valid instance written the way our grammar promises to
   accept it (required keys only, in ``required`` order; numbers with at most two exponent digits)
   is accepted, whether serialised compactly, with ``json.dumps``'s default spacing, with an indent
   (under a larger whitespace bound), with ``ensure_ascii`` on or off. Exact whitespace bounds:
   a document with arbitrary runs inserted between structural tokens is accepted iff every run is
   within ``max_whitespace`` (flexible) or empty (compact), and never with whitespace around the
   top-level value.
3. Mutations: a mutated document that is not a valid instance is never accepted (equivalently:
   whatever the grammar accepts validates).
4. Soundness by random walks through the automaton: whatever byte path the automaton allows, steered
   to completion with ``min_bytes``, is a valid instance; ``min_bytes`` is exact along the way.

"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import event, given, note, settings
from hypothesis import strategies as st

import grammar_decode as gd
from helpers import SCHEMAS, require, validate, walker

from_schema = require("hypothesis_jsonschema").from_schema
from documents import (
    KEYS,
    MAX_WS,
    SLOW_OK,
    SOURCE_NAMES,
    SOURCES,
    DuplicateKey,
    DupObject,
    canonicalize,
    grammar_for,
    instances,
    is_valid,
    loads_each_repeat,
    named_keys,
    nesting,
    numbers_ok,
    random_document,
    render,
    serializations,
    strict_loads,
)

# ------------------------------------------------------------------------------------------------
# 1. canonical documents are accepted


def check_byte_walk(grammar: gd.CompiledGrammar, doc: bytes) -> None:
    """Feeding ``doc`` byte by byte: every prefix is viable, ``min_bytes`` never exceeds the bytes
    actually left (the rest of ``doc`` is one completion), and the end is accepting."""
    automaton = walker(grammar)
    state = automaton.initial
    for i, byte in enumerate(doc):
        assert automaton.min_bytes(state) <= len(doc) - i, (doc[:i], doc[i:])
        nxt = automaton.step(state, byte)
        assert nxt is not None, f"rejected byte {i} of {doc!r}: {doc[:i]!r} + {bytes([byte])!r}"
        state = nxt
    assert automaton.is_accepting(state), doc
    assert automaton.min_bytes(state) == 0, doc


def check_canonical(schema: dict, value: Any) -> None:
    """All canonical serialisations of a valid instance are accepted, byte-exactly; the compact
    grammar rejects exactly the ones with separator spaces."""
    validate(schema, value)  # the generator itself is checked by the judge
    flexible = grammar_for(schema, "flexible")
    compact = grammar_for(schema, "compact")
    for ensure_ascii in (False, True):
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
@settings(suppress_health_check=SLOW_OK)
@given(data=st.data())
def test_canonical_instances_are_accepted(source: str, data: st.DataObject) -> None:
    """Every valid canonical instance (own generator) is accepted in all canonical spellings."""
    schema = data.draw(SOURCES[source], label="schema")
    value = data.draw(instances(schema), label="value")
    check_canonical(schema, value)


@pytest.mark.parametrize("name", list(SCHEMAS))
@settings(suppress_health_check=SLOW_OK)
@given(data=st.data())
def test_hypothesis_jsonschema_instances_are_accepted(name: str, data: st.DataObject) -> None:
    """Instances from hypothesis-jsonschema's ``from_schema``, reshaped to the canonical form
    (required keys only, in order), are accepted."""
    schema = SCHEMAS[name]
    raw = data.draw(from_schema(schema), label="from_schema")
    value = canonicalize(schema, raw)
    if not numbers_ok(value):
        value = data.draw(instances(schema), label="fallback value")  # a number past the caps
    check_canonical(schema, value)


GAPS = st.one_of(st.just(""), st.just(""), st.text(alphabet=" \t\n\r", min_size=1, max_size=MAX_WS + 2))


@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=SLOW_OK)
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

    text = render(value, gap, ensure_ascii=data.draw(st.booleans()))
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
@settings(suppress_health_check=SLOW_OK)
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


@pytest.mark.parametrize("whitespace", ["flexible", "compact"])
@pytest.mark.parametrize("source", SOURCE_NAMES)
@settings(suppress_health_check=SLOW_OK)
@given(data=st.data())
def test_random_walk_documents_validate(source: str, whitespace: str, data: st.DataObject) -> None:
    """Every document reached by walking the automaton (random allowed bytes, then steered to
    completion) is accepted, is strict JSON, and validates against the schema."""
    schema = data.draw(SOURCES[source], label="schema")
    grammar = grammar_for(schema, whitespace)
    doc = random_document(data, grammar, data.draw(st.integers(0, 80), label="free steps"))
    note(f"doc={doc!r}")
    assert grammar.accepts(doc)
    try:
        values = [strict_loads(doc)]  # raises NotJSON on anything json would not take
    except DuplicateKey:
        # a documented limit (docs/json-schema.md, objects): other keys may repeat; each reading
        # of the document still validates, and a named key never repeats
        values = loads_each_repeat(doc, named_keys(schema))
    for value in values:
        validate(schema, value)
    if whitespace == "compact":
        assert grammar_for(schema, "flexible").accepts(doc), doc  # compact ⊆ flexible
