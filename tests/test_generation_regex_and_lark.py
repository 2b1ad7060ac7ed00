"""Generation under regex and grammar constraints with uniform random logits: every finished
text passes the independent judge (``re.fullmatch``, Lark's Earley parser), and at the minimum
budget every run ends complete."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import require

require("lark", "lark")

import grammar_decode as gd
from grammar_decode import compile_grammar
from grammar_decode import compile_regex

from grammars import GRAMMARS, REGEXES, lark_judge, regex_judge


def uniform_logits(width: int):
    rng = np.random.default_rng(1234)
    return lambda ids: rng.standard_normal(width).astype(np.float32) * 0.01


CONSTRAINTS = [("regex", n) for n in REGEXES] + [("grammar", n) for n in GRAMMARS]


def _compiled(kind: str, name: str):
    if kind == "regex":
        return compile_regex(REGEXES[name]), regex_judge(REGEXES[name])
    return compile_grammar(GRAMMARS[name]), lark_judge(GRAMMARS[name])


@pytest.mark.parametrize("kind,name", CONSTRAINTS, ids=[n for _, n in CONSTRAINTS])
def test_random_generation_passes_the_judge_and_ends_at_the_minimum_budget(gpt2: gd.Vocabulary, kind: str,
                                                                           name: str) -> None:
    grammar, judge = _compiled(kind, name)
    need = grammar.min_completion_tokens(gpt2)
    assert 1 <= need < 30
    for budget in (need, need + 3, 48):
        for seed in range(4):
            result = gd.generate(uniform_logits(len(gpt2)), grammar, gpt2, max_tokens=budget, seed=seed)
            assert result.stop_reason in ("eos", "complete"), (budget, seed, result.text)
            assert len(result.token_ids) <= budget
            assert judge(result.text), (budget, seed, result.text)
            assert grammar.accepts(result.data)


def test_gemma_vocabulary_too(gemma: gd.Vocabulary) -> None:
    grammar, judge = _compiled("grammar", "json_like")
    need = grammar.min_completion_tokens(gemma)
    for seed in range(4):
        result = gd.generate(uniform_logits(len(gemma)), grammar, gemma, max_tokens=need + 6, seed=seed)
        assert result.stop_reason in ("eos", "complete") and judge(result.text), result.text


def test_rollback_and_copy(gpt2: gd.Vocabulary) -> None:
    grammar = compile_grammar(GRAMMARS["arithmetic"])
    matcher = grammar.matcher(gpt2)
    first = matcher.mask().copy()
    tokens = [gpt2.tokens.index(b"(") if b"(" in gpt2.tokens else 7, ]
    for token in tokens:
        matcher.advance(token)
    after_one = matcher.mask().copy()
    twin = matcher.copy()
    digit = gpt2.tokens.index(b"1")
    twin.advance(digit)
    assert np.array_equal(matcher.mask(), after_one)  # the copy moved, not the original
    twin.rollback(1)
    assert np.array_equal(twin.mask(), after_one)
    twin.rollback(1)
    assert np.array_equal(twin.mask(), first)
    with pytest.raises(ValueError, match="only 0 consumed"):
        twin.rollback(1)
    with pytest.raises(ValueError):
        twin.rollback(-1)


def test_advance_rejects_bad_tokens_without_changing_state(gpt2: gd.Vocabulary) -> None:
    grammar = compile_regex(REGEXES["date"])
    matcher = grammar.matcher(gpt2)
    before = matcher.mask().copy()
    for bad in (gpt2.tokens.index(b"x"), len(gpt2), -1, gpt2.eos_token_ids[0]):
        with pytest.raises(gd.TokenRejected):
            matcher.advance(bad)
    for wrong_type in (1.0, True, None, "3"):
        with pytest.raises(gd.TokenRejected, match="a token id is an int"):
            matcher.advance(wrong_type)  # type: ignore[arg-type]
    assert np.array_equal(matcher.mask(), before)


def test_fill_bitmask_rows(gpt2: gd.Vocabulary) -> None:
    grammar = compile_regex(REGEXES["date"])
    matcher = grammar.matcher(gpt2)
    out = np.full((2, gd.bitmask_words(len(gpt2)) + 1), -1, dtype=np.int32)
    matcher.fill_bitmask(out, row=1)
    unpacked = np.unpackbits(out[1].view(np.uint8), bitorder="little")[: len(gpt2)].astype(bool)
    assert np.array_equal(unpacked, matcher.mask()) and out[1, -1] == 0 and (out[0] == -1).all()
    for bad_row in (-1, 2, 1.0):
        with pytest.raises(IndexError):
            matcher.fill_bitmask(out, row=bad_row)  # type: ignore[arg-type]
