"""The suite's checks can fail: deliberately broken variants of the fast path, each caught.

Each variant patches one piece of the engine the way a plausible bug would (``docs/testing.md``
lists them); the detector runs the same kinds of checks the suite runs (fast masks against the
independent reference, grammar tables, random-logits generation judged by ``jsonschema``) and
must report at least one failure for every variant, and none for the unpatched engine.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Callable

import numpy as np
import pytest

from helpers import PERSON, require

jsonschema = require("jsonschema")
require("regex")

import grammar_decode as gd  # noqa: E402
from grammar_decode.engine import parser as parser_module
from grammar_decode.engine import parser_compiled as parser_compiled_module
from grammar_decode.engine import parser_tables as parser_tables_module
from grammar_decode.engine import recognizer as recognizer_module
from grammar_decode.frontends.json_schema import lexemes as json_lexemes
from grammar_decode.ir.regex import ExprSet, shared_exprs
from grammar_decode.masking import masker as masker_module
from grammar_decode.masking import slices as slices_module
from grammar_decode.oracle.masks import reference_mask
from grammar_decode.oracle.recognizer import ReferenceRecognizer
from grammar_decode.masking.slices import StringSlice
from grammar_decode.engine import unique as unique_engine
from grammar_decode.engine.dfa import LexemeDFA
from grammar_decode.frontends.json_schema.a_labels import ALabelGuard
from grammar_decode.masking import unique as unique_masks
from grammar_decode.masking.bitmask import pack_mask
from grammar_decode.oracle.unique import reference_unique_mask


ARRAY3 = {"type": "array", "items": {"type": "integer"}, "maxItems": 3}
NUMBERS = {"type": "array", "items": {"type": "number"}}
OPTIONAL = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
SHORT = {"type": "string", "maxLength": 3}
HOST = {"type": "string", "format": "hostname"}
KEYS = {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
        "additionalProperties": False}
PROBES = [(PERSON, [b'{"name":"Ann"', b'{"name":"Ann","age":1']), (ARRAY3, [b"[1,2", b"[1,2,3"]),
          (NUMBERS, [b"[1e5", b"[1e55"]), (OPTIONAL, [b"{", b'{"a":1']), (SHORT, [b'"', b'"ab']),
          (HOST, [b'"xn--', b'"XN--ab--']), (KEYS, [b'{"name', b'{"size'])]
TAGS = {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
UNIQUE_PROBES = [b'["",', b'["a","', b'["a","a']
TABLE = [(TAGS, '["a","a"]', False), (TAGS, '["a","b"]', True), (ARRAY3, "[1,2,3,4]", False), (NUMBERS, "[1e555]", False), (PERSON, '{"name":"\\x","age":1,"active":true}', False),
         (OPTIONAL, '{"b":"x"}', True), (OPTIONAL, '{"a":1,"b":"x"}', True), (HOST, '"xn--9n2bp8q"', True),
         (HOST, '"xn--hello-txk"', False)]


def failures(vocab: gd.Vocabulary) -> list[str]:
    """What the suite would report: empty for a sound engine."""
    found = []
    for schema, prefixes in PROBES:
        grammar = gd.compile_json_schema(schema, whitespace="compact")
        reference = ReferenceRecognizer(grammar.ir)
        matcher = grammar.matcher(vocab)
        for prefix in prefixes:  # along one walk, so cached masks are reused where keys collide
            state = grammar.recognizer.feed(grammar.recognizer.initial, prefix)
            if state is None:
                found.append(f"{prefix!r} not viable")
                continue
            masker = grammar.masker(vocab)
            if not np.array_equal(masker.mask(state), reference_mask(reference, vocab, prefix)):
                found.append(f"mask differs from the reference after {prefix!r}")
        del matcher
    grammar = gd.compile_json_schema(TAGS)
    reference = ReferenceRecognizer(grammar.ir)
    for prefix in UNIQUE_PROBES:
        position = grammar.unique.feed(grammar.unique.initial, prefix)
        if position is None:
            found.append(f"{prefix!r} not viable")
            continue
        fast = unique_masks.unique_mask(grammar.unique, position, grammar.masker(vocab).mask(position[0]), vocab)
        expected = reference_unique_mask(reference, vocab, prefix)
        if not np.array_equal(fast, expected):
            found.append(f"unique-items mask differs from the reference after {prefix!r}")
        packed = unique_masks.unique_packed(grammar.unique, position, grammar.masker(vocab).packed(position[0]), vocab)
        if not np.array_equal(packed, pack_mask(expected)):
            found.append(f"unique-items packed mask differs from the reference after {prefix!r}")
    for schema, text, expected in TABLE:
        if gd.compile_json_schema(schema, whitespace="compact").accepts(text) is not expected:
            found.append(f"accepts({text!r}) is not {expected}")
    rng = np.random.default_rng(0)
    for schema in (PERSON, ARRAY3, NUMBERS):
        grammar = gd.compile_json_schema(schema)
        for seed in range(3):
            result = gd.generate(lambda ids: rng.standard_normal(len(vocab)), grammar, vocab, max_tokens=40, seed=seed)
            if result.stop_reason not in ("eos", "complete"):
                found.append(f"generation stopped with {result.stop_reason}")
                continue
            try:
                jsonschema.validate(json.loads(result.data), schema)
            except (ValueError, jsonschema.ValidationError) as exc:
                found.append(f"invalid document {result.text!r}: {exc}")
    return found


def clamped_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded repetition: the counter stops going down at 2 (the founding write-up's clamp)."""
    original = ExprSet.repeat

    def repeat(self: ExprSet, item: int, lo: int, hi: int | None) -> int:
        return original(self, item, lo, None if hi is not None and hi >= 2 else hi)

    monkeypatch.setattr(ExprSet, "repeat", repeat)


def dropped_alternative(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parser never predicts the last alternative of a rule that has several (its tables
    lose it, for the reference parser and the compiled one alike; the process-wide cache of
    tables keeps the right ones)."""
    original = parser_tables_module.parser_tables

    def broken(grammar, max_size: int | None = None):  # type: ignore[no-untyped-def]
        tables, names = original(grammar, max_size)
        symbols = tables.symbols
        firsts = tuple(f[:-1] if len(f) >= 2 else f for f in tables.firsts)
        lexeme_firsts = tuple(tuple(p for p in f if 0 <= symbols[p] < parser_tables_module.END) for f in firsts)
        other_firsts = tuple(tuple(p for p in f if not 0 <= symbols[p] < parser_tables_module.END) for f in firsts)
        flat = parser_tables_module._flat_arrays(symbols, lexeme_firsts, other_firsts, tables.nesting,
                                                 len(grammar.lexeme_exprs), parser_tables_module._layout32(symbols))
        return dataclasses.replace(tables, firsts=firsts, lexeme_firsts=lexeme_firsts, other_firsts=other_firsts,
                                   flat=flat), names

    monkeypatch.setattr(parser_module, "parser_tables", broken)
    monkeypatch.setattr(parser_compiled_module, "parser_tables", broken)


def wrong_escape(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON string lexeme accepts any escaped byte (``\\x`` included)."""

    def string_expr(grammar) -> int:
        exprs = grammar.exprs
        from grammar_decode.ir.regex import byte_mask, byte_range

        plain = exprs.byteset(byte_range(0x20, 0xFF) & ~byte_mask(b'"\\'))
        escape = exprs.concat(exprs.literal(b"\\"), exprs.byteset(byte_range(0x20, 0x7E)))
        return exprs.concat(exprs.literal(b'"'), exprs.star(exprs.alt(plain, escape)), exprs.literal(b'"'))

    monkeypatch.setattr(json_lexemes, "string_expr", string_expr)


def cache_key_missing_a_field(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole masks cached by lexer state alone, forgetting the parse."""
    original = masker_module.Masker.mask

    def mask(self: masker_module.Masker, state):  # type: ignore[no-untyped-def]
        key = ("lexer only", state[0])
        found = self.mask_cache.get(key)
        if found is None:
            found = original(self, state)
            self.mask_cache.put(key, found, found.nbytes)
        return found

    monkeypatch.setattr(masker_module.Masker, "mask", mask)


def counting_slice_off_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a counted string, plain tokens one character longer than the room left pass."""
    # both forms, each cached per count on the vocabulary's shared slice: a patch of the bool form
    # alone is never reached once the packed form of that count is cached
    original, original_packed = StringSlice.up_to, StringSlice.packed_up_to

    def up_to(self: StringSlice, count: int):  # type: ignore[no-untyped-def]
        return original(self, count + 1)

    def packed_up_to(self: StringSlice, count: int):  # type: ignore[no-untyped-def]
        return original_packed(self, count + 1)

    monkeypatch.setattr(StringSlice, "up_to", up_to)
    monkeypatch.setattr(StringSlice, "packed_up_to", packed_up_to)


def unique_items_not_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens that end one array item and begin the next inside themselves are not replayed."""
    monkeypatch.setattr(unique_masks, "_dropped", lambda unique, position, candidates, vocab: [])


def unique_values_not_taken_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """An item lexeme begins with the values already written left in its language."""
    monkeypatch.setattr(unique_engine.UniqueItems, "_start",
                        lambda self, parse, frames: self.recognizer.lexer_start(parse))


def a_labels_not_vouched_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """An A-label being written is kept without a witness (a prefix no valid label completes)."""
    monkeypatch.setattr(LexemeDFA, "_vouched", lambda self, origin, expr, tag: True)


def a_labels_not_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every A-label passes where it ends, whatever its Punycode decodes to."""
    monkeypatch.setattr(ALabelGuard, "valid", lambda self, label: True)


def twin_not_renamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key's lexeme part taken from another key's (its twin) with the lexer states at its
    boundaries left as they were: the key that ends there is the other one."""
    monkeypatch.setattr(masker_module, "_TWIN_NOT_RENAMED", True)


def twin_renamed_wrongly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key's lexeme part taken from its twin's with the states at its boundaries renamed, but
    each to a wrong state (the next one made)."""
    monkeypatch.setattr(masker_module, "_RENAME_MUTATION", 1)


def plain_absorption_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any expression that may begin with a plain character taken as staying alive through any
    plain text: a state where whitespace or a name may come next takes every plain token."""
    monkeypatch.setattr(slices_module, "_ABSORB_MUTATION", 1)


def a_label_splits_too_coarse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard claims to tell no bytes apart anywhere, inside an A-label too, so the lexer makes
    the letters of an A-label one class: the tag of one stands for all of them."""
    monkeypatch.setattr(ALabelGuard, "splits", lambda self, tag: ())


def start_key_missing_an_origin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parse state's origins key (the lexer start it looks up) leaves out the last expected
    lexeme's origin: the lexeme it names can never begin there."""
    monkeypatch.setattr(recognizer_module, "_ORIGINS_MUTATION", 1)


VARIANTS: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "A-labels not vouched for": a_labels_not_vouched_for,
    "A-label splits too coarse": a_label_splits_too_coarse,
    "A-labels not decoded": a_labels_not_decoded,
    "unique items not replayed": unique_items_not_replayed,
    "unique values not taken out": unique_values_not_taken_out,
    "clamped counter": clamped_counter,
    "dropped alternative": dropped_alternative,
    "wrong escape": wrong_escape,
    "cache key missing a field": cache_key_missing_a_field,
    "counting slice off by one": counting_slice_off_by_one,
    "twin not renamed": twin_not_renamed,
    "twin renamed wrongly": twin_renamed_wrongly,
    "plain absorption unchecked": plain_absorption_unchecked,
    "start key missing an origin": start_key_missing_an_origin,
}


def test_the_unpatched_engine_passes_the_detector(gpt2: gd.Vocabulary) -> None:
    assert failures(gpt2) == []


@pytest.mark.parametrize("name", list(VARIANTS))
def test_each_broken_variant_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # grammars share lexer states and what is cached per state through the process-wide ExprSet:
    # a fresh one, so that the broken code builds them rather than finding them made
    shared_exprs().retire()
    VARIANTS[name](monkeypatch)
    assert failures(gpt2), f"the broken variant {name!r} went unnoticed"
