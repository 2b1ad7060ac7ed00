"""Engine masks against the independent reference, bit for bit, on real vocabularies."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import REFERENCE_VOCABS, require

require("regex")
require("lark", "lark")

from grammar_decode.grammar import CompiledGrammar
from grammar_decode import compile_grammar
from grammar_decode import compile_regex
from grammar_decode.oracle.masks import reference_mask
from grammar_decode.oracle.recognizer import ReferenceRecognizer

from grammars import GRAMMARS, REGEXES

# (constraint kind, name, prefixes probed: inside lexemes, at boundaries, complete texts)
CASES = [
    ("regex", "date", ["", "2", "2024-", "2024-1", "2024-12-3", "2024-12-31"]),
    ("regex", "email", ["", "a.b", "a.b@", "a.b@x", "a.b@x.co"]),
    ("regex", "quoted", ["", '"', '"ab c', '"\\', '"x"']),
    ("grammar", "arithmetic", ["", "1", "12 ", "(1+", "((2*3)", "4 - -"]),
    ("grammar", "json_like", ["", "[", '{"a', '{"a":', '{"a": [1, ', "[1.5e", '["x", {}]']),
    ("grammar", "nested_lists", ["", "(", "(ab", "(ab (c", "((x) y)"]),
]


def _compile(kind: str, name: str) -> CompiledGrammar:
    return compile_regex(REGEXES[name]) if kind == "regex" else compile_grammar(GRAMMARS[name])


@pytest.mark.parametrize("vocab_name", REFERENCE_VOCABS)
@pytest.mark.parametrize("kind,name,prefixes", CASES, ids=[c[1] for c in CASES])
def test_masks_equal_the_reference(request, vocab_name: str, kind: str, name: str, prefixes: list[str]) -> None:
    vocab = request.getfixturevalue(vocab_name)
    grammar = _compile(kind, name)
    reference = ReferenceRecognizer(grammar.ir)
    for prefix in prefixes:
        data = prefix.encode()
        state = grammar.recognizer.feed(grammar.recognizer.initial, data)
        assert state is not None, prefix
        fast = grammar.masker(vocab).mask(state)
        slow = reference_mask(reference, vocab, data)
        differ = np.flatnonzero(fast != slow)
        assert len(differ) == 0, (prefix, [(int(i), vocab.token_bytes(int(i)), bool(fast[i])) for i in differ[:8]])
