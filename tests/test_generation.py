"""The generation loop: validity comes from the mask, not from the model cooperating."""

from __future__ import annotations

import json

import numpy as np
import pytest

import grammar_decode as gd

from helpers import COMBINATOR_SCHEMAS, MEASUREMENTS, ORDER, PERSON, SCHEMAS, TAGS, validate


def _uniform_logits(vocab: gd.Vocabulary, seed: int, extra: int = 0):
    rng = np.random.default_rng(seed)

    def logits_fn(ids):
        return rng.uniform(0.0, 1.0, size=len(vocab) + extra)

    return logits_fn


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("name", ["person", "measurements", "tags", "order", *COMBINATOR_SCHEMAS])
def test_random_model_still_produces_conforming_output(gpt2: gd.Vocabulary, name: str, seed: int) -> None:
    """Uniform random logits, 9 schemas x 5 seeds: every output validates against its schema."""
    schema = {**SCHEMAS, **COMBINATOR_SCHEMAS}[name]
    grammar = gd.compile_json_schema(schema)
    result = gd.generate(_uniform_logits(gpt2, seed), grammar, gpt2, max_tokens=96, seed=seed)
    assert result.stop_reason in ("eos", "complete"), result
    document = json.loads(result.data)
    validate(schema, document)
    assert grammar.accepts(result.data)


@pytest.mark.parametrize("whitespace", ["compact", "flexible"])
def test_generation_never_violates_its_own_mask(gpt2: gd.Vocabulary, whitespace: str) -> None:
    """If this fires, mask() and advance() disagree: a bug in the masker, not a runtime condition."""
    for seed in range(12):
        schema = list(SCHEMAS.values())[seed % len(SCHEMAS)]
        grammar = gd.compile_json_schema(schema, whitespace=whitespace)
        result = gd.generate(_uniform_logits(gpt2, 100 + seed), grammar, gpt2, max_tokens=64, seed=seed,
                             temperature=0.7)
        assert result.stop_reason != "mask_violation"
        assert grammar.accepts_prefix(result.data)


ALL_SCHEMAS = {**SCHEMAS, **COMBINATOR_SCHEMAS}


@pytest.mark.parametrize("name", list(ALL_SCHEMAS))
def test_closing_budget_guarantees_termination_at_the_tightest_budget(gpt2: gd.Vocabulary, name: str) -> None:
    """max_tokens == the fewest tokens of a shortest document: every run still ends complete, on
    schemas with alternatives and recursion too."""
    schema = ALL_SCHEMAS[name]
    grammar = gd.compile_json_schema(schema)
    budget = grammar.min_completion_tokens(gpt2)
    assert budget < grammar.min_completion_bytes(), "multi-byte tokens make closing cheaper than bytes"
    for seed in range(5):
        result = gd.generate(_uniform_logits(gpt2, seed), grammar, gpt2, max_tokens=budget, seed=seed)
        assert result.stop_reason in ("eos", "complete")
        assert len(result.token_ids) <= budget
        validate(schema, json.loads(result.data))


def test_closing_budget_on_the_262k_vocabulary(gemma: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(MEASUREMENTS)
    for seed in range(2):
        result = gd.generate(_uniform_logits(gemma, seed), grammar, gemma, max_tokens=40, seed=seed)
        assert result.stop_reason in ("eos", "complete")
        validate(MEASUREMENTS, json.loads(result.data))


def test_without_closing_budget_random_logits_run_out_of_tokens(gpt2: gd.Vocabulary) -> None:
    """The constraint says what may come next, never what must: without the budget, a random model
    inside a string runs to max_tokens holding a valid, unterminated prefix."""
    grammar = gd.compile_json_schema(PERSON)
    results = [gd.generate(_uniform_logits(gpt2, s), grammar, gpt2, max_tokens=30, seed=s, closing_budget=False)
               for s in range(3)]
    assert any(r.stop_reason == "max_tokens" for r in results)
    for r in results:
        assert grammar.accepts_prefix(r.data)


def test_closing_narrowing_is_a_subset_of_the_legal_mask_along_generation(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(ORDER)
    matcher = grammar.matcher(gpt2)
    rng = np.random.default_rng(0)
    budget = grammar.min_completion_tokens(gpt2) + 6
    for produced in range(budget):
        remaining = budget - produced
        narrowed, full = matcher.budget_mask(remaining), matcher.mask()
        assert not (narrowed & ~full).any()
        assert narrowed.any()
        choices = np.flatnonzero(narrowed)
        token = int(rng.choice(choices))
        matcher.advance(token)
        if token in gpt2.eos_token_ids or matcher.is_accepting():
            break
        assert matcher.min_completion_tokens() <= remaining - 1
    assert matcher.is_accepting()


def test_padding_logits_are_never_sampled(gpt2: gd.Vocabulary) -> None:
    """Logits wider than the vocabulary: padding ids get huge logits and are still never chosen."""
    grammar = gd.compile_json_schema(TAGS)

    def logits_fn(ids):
        logits = np.zeros(len(gpt2) + 64)
        logits[len(gpt2):] = 1e9
        return logits

    result = gd.generate(logits_fn, grammar, gpt2, max_tokens=40, seed=1)
    assert all(t < len(gpt2) for t in result.token_ids)
    assert result.stop_reason in ("eos", "complete")


def test_greedy_is_deterministic_and_budget_too_small_is_reported(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(PERSON)
    runs = [gd.generate(_uniform_logits(gpt2, 9), grammar, gpt2, max_tokens=80, temperature=0) for _ in range(2)]
    assert runs[0].token_ids == runs[1].token_ids
    short = gd.generate(_uniform_logits(gpt2, 9), grammar, gpt2, max_tokens=3)
    assert short.stop_reason == "max_tokens" and grammar.accepts_prefix(short.data)
    with pytest.raises(ValueError):
        gd.generate(_uniform_logits(gpt2, 9), grammar, gpt2, max_tokens=0)


def test_sampling_follows_the_softmax_over_allowed_tokens() -> None:
    from grammar_decode.generation import sample

    rng = np.random.default_rng(0)
    logits = np.array([-np.inf, 0.0, np.log(3.0), -np.inf], dtype=np.float32)
    draws = np.bincount([sample(logits, 1.0, rng) for _ in range(4000)], minlength=4)
    assert draws[0] == draws[3] == 0
    assert 0.70 < draws[2] / 4000 < 0.80  # expected 0.75
    assert sample(logits, 0.0, rng) == 2


def test_sampling_edge_cases(gpt2: gd.Vocabulary) -> None:
    from grammar_decode.generation import sample

    rng = np.random.default_rng(0)
    assert sample(np.array([0.0, np.inf, 5.0, -np.inf]), 1.0, rng) == 1, "+inf is certain"
    grammar = gd.compile_json_schema(TAGS)
    hostile = gd.generate(lambda ids: np.full(len(gpt2), -np.inf), grammar, gpt2, max_tokens=20, seed=0)
    assert hostile.stop_reason in ("eos", "complete") and grammar.accepts(hostile.data)
    with pytest.raises(ValueError, match="logits_fn returned"):
        gd.generate(lambda ids: np.zeros(10), grammar, gpt2, max_tokens=5)


def test_budget_mask_edge_cases() -> None:
    grammar = gd.compile_json_schema({"type": "integer"})
    vocab = gd.Vocabulary([bytes([b]) for b in range(256)] + [b"<eos>"], eos_token_ids=[256])
    matcher = grammar.matcher(vocab)
    matcher.advance(ord("7"))
    assert matcher.budget_mask(0)[256], "a complete document may always end"
    # a vocabulary that cannot spell the canonical completion gets the plain mask, never an empty one
    sparse = gd.Vocabulary([b'"', b"\xe2", b"\x82", b"\xac", b"<eos>"], eos_token_ids=[4])
    strings = gd.compile_json_schema({"type": "string"})
    m = strings.matcher(sparse)
    m.advance(0)
    m.advance(1)
    assert np.array_equal(m.budget_mask(5), m.mask()) and m.mask().any()
