"""Host names' A-labels (``frontends.json_schema.a_labels``): the guard's witnesses against the
``idna`` package, its byte-by-byte tags against its whole-text judgement, masks against the
independent reference, and documents written under a pattern that forces A-labels."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import require

idna = require("idna")
require("regex")

import grammar_decode as gd  # noqa: E402
from grammar_decode.frontends.json_schema.a_labels import A_LABELS, END, START  # noqa: E402
from grammar_decode.oracle.masks import reference_mask  # noqa: E402
from grammar_decode.oracle.recognizer import ReferenceRecognizer  # noqa: E402

HOSTNAME = {"type": "string", "format": "hostname"}


def _idna_witness(label: bytes) -> bytes | None:
    try:
        encoded = idna.encode(label[4:].decode() + "\u00e9")
    except (idna.IDNAError, UnicodeError):
        return None
    return encoded if encoded.startswith(label) else None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abz09-", max_size=12))
def test_witness_decided_without_decoding_agrees_with_idna(ascii_part: str) -> None:
    label = b"xn--" + ascii_part.encode()
    assert A_LABELS.witness(label) == _idna_witness(label)
    if A_LABELS.witness(label) is not None:
        assert A_LABELS.valid(A_LABELS.witness(label))


def _tags_ok(text: bytes) -> list[bool]:
    """Per prefix of ``text``: does the tag machine keep it (with an expression that admits
    everything, so a tag needing a witness needs one at all)?"""
    tag, out = START, []
    for byte in text:
        tag = None if tag is None else A_LABELS.step(tag, byte)
        witnesses = None if tag is None else A_LABELS.completions(tag)
        out.append(tag is not None and (witnesses is None or any(True for _ in witnesses)))
    return out


def _text_ok(text: bytes) -> list[bool]:
    def alive(rest: bytes) -> bool:
        return True

    return [A_LABELS.text_ok(text[:k], False, alive) or A_LABELS.text_ok(text[:k], True, alive)
            for k in range(1, len(text) + 1)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="xnXN-ab9.\\u002d", max_size=16))
def test_tags_agree_with_the_whole_text_judgement(body: str) -> None:
    text = b'"' + body.encode()
    assert _tags_ok(text) == _text_ok(text)
    closed = text + b'"'
    tag = START
    for byte in closed:
        tag = None if tag is None else A_LABELS.step(tag, byte)
    assert (tag == END) == A_LABELS.text_ok(closed, True, lambda rest: True)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="xnXN-ab9.\\u\"é", max_size=12))
def test_splits_tell_apart_every_byte_the_step_does(body: str) -> None:
    """Along any text, at every tag: two bytes that every split set holds alike (both or neither)
    step the tag alike, which is what lets the lexer make a guarded state's transitions per class
    (``LexemeGuard.splits``); None (every byte apart) only inside an escape or an A-label."""
    tag = START
    for byte in b'"' + body.encode():
        if tag is None:
            break
        splits = A_LABELS.splits(tag)
        if splits is None:
            assert isinstance(tag, tuple) and (tag[0] == "E" or tag[1].startswith(b"xn--")), tag
        else:
            by_signature: dict[tuple[bool, ...], set] = {}
            for other in range(256):
                signature = tuple(bool((split >> other) & 1) for split in splits)
                by_signature.setdefault(signature, set()).add(A_LABELS.step(tag, other))
            assert all(len(steps) == 1 for steps in by_signature.values()), (tag, by_signature)
        tag = A_LABELS.step(tag, byte)


@pytest.mark.parametrize("text,valid", [
    (b"xn--9n2bp8q", True), (b"xn--hello-txk", False), (b"xn--ll-0ea", True), (b"xn--al-0ea", False),
    (b"xn--", False), (b"xn--9ca", True), (b"xn--abc-dma", True),
])
def test_valid(text: bytes, valid: bool) -> None:
    assert A_LABELS.valid(text) is valid


def test_every_candidate_finishes_a_valid_label() -> None:
    for text in (b"xn--", b"xn--9n2b", b"xn--ab--", b"xn--abc-", b"xn--ll-0"):
        found = list(A_LABELS.candidates(text))
        assert found, text
        assert all(A_LABELS.valid(text + rest) for rest in found), text
    assert list(A_LABELS.candidates(b"xn---")) == []  # "-é" is no U-label, nor is any prefix's witness here


def test_keys_and_escapes() -> None:
    keys = gd.compile_json_schema({"propertyNames": {"format": "hostname"}})
    assert keys.accepts('{"a.b":1}') and not keys.accepts('{"xn--9n2bp8q":1}')  # keys: the subset without
    grammar = gd.compile_json_schema(HOSTNAME)
    assert grammar.accepts('"x\\u006e--9n2bp8q"')  # an escape before the prefix ends
    assert not grammar.accepts_prefix('"xn--9\\u006e')  # ...none after it (no witness writes one)
    assert not grammar.accepts('"xn--9n2bp8q.xn--X"')


A_LABEL_PREFIXES = ['"xn--', '"a.xn--9n2b', '"xn--9n2bp8q', '"XN--ab--']


@pytest.mark.slow
@pytest.mark.parametrize("prefix", A_LABEL_PREFIXES)
def test_masks_inside_a_labels_equal_the_reference(gpt2: gd.Vocabulary, prefix: str) -> None:
    grammar = gd.compile_json_schema(HOSTNAME)
    state = grammar.recognizer.feed(grammar.recognizer.initial, prefix.encode())
    assert state is not None
    fast = grammar.masker(gpt2).mask(state)
    slow = reference_mask(ReferenceRecognizer(grammar.ir), gpt2, prefix.encode())
    assert np.array_equal(fast, slow), np.flatnonzero(fast != slow)[:10]


@pytest.mark.reference
def test_masks_inside_a_labels_equal_the_reference_on_262k_gemma(gemma: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(HOSTNAME)
    prefix = b'"a.xn--9n2b'
    state = grammar.recognizer.feed(grammar.recognizer.initial, prefix)
    assert np.array_equal(grammar.masker(gemma).mask(state), reference_mask(ReferenceRecognizer(grammar.ir), gemma,
                                                                            prefix))


@pytest.mark.slow
def test_documents_forced_into_a_labels_are_valid(gpt2: gd.Vocabulary) -> None:
    """A pattern that makes the first label an A-label: random logits must still end in a valid
    one (the witnesses keep every prefix completable, the closing budget finds the way out)."""
    schema = {"type": "string", "format": "hostname", "pattern": "^xn--"}
    grammar = gd.compile_json_schema(schema)
    rng = np.random.default_rng(1)
    for seed in range(2):
        result = gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2, max_tokens=24, seed=seed)
        assert result.stop_reason in ("eos", "complete"), result
        labels = json.loads(result.text).split(".")
        assert labels[0].lower().startswith("xn--")
        for label in labels:
            if label.lower().startswith("xn--"):
                assert idna.encode(idna.decode(label.lower())) == label.lower().encode(), result.text
