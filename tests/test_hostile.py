"""Hostile input and concurrency: every case is a typed error or a correct result, in bounded
time and memory. The bounds are deliberately loose (they catch hangs and blow-ups, not speed,
on a loaded two-core machine); the figures live in bench/."""

from __future__ import annotations

import decimal
import json

import numpy as np
import pytest

import grammar_decode as gd
from grammar_decode.masking.masker import Masker
from tools.vocab_files import vocab_path

from helpers import ORDER, PERSON, SCHEMAS, bounded, compile_untimed, run_in_threads, validate


# -- shared state under threads ---------------------------------------------------------------------


@pytest.mark.slow
def test_min_completion_tokens_from_eight_threads_on_a_fresh_vocabulary() -> None:
    """Once published a value was wrong for good (a half-built cache seen by another thread)."""
    expected = {name: gd.compile_json_schema(schema).min_completion_tokens(gd.Vocabulary.from_gguf(vocab_path("gpt-2")))
                for name, schema in SCHEMAS.items()}
    for _trial in range(3):
        vocab = gd.Vocabulary.from_gguf(vocab_path("gpt-2"))
        grammars = [gd.compile_json_schema(SCHEMAS[name]) for name in list(SCHEMAS) * 2][:8]
        names = (list(SCHEMAS) * 2)[:8]
        counter = iter(range(8))

        def work() -> tuple[str, int]:
            index = next(counter)
            return names[index], grammars[index].min_completion_tokens(vocab)

        for name, value in run_in_threads(work):
            assert value == expected[name], name


def test_concurrent_generation_shares_grammar_and_vocabulary(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(ORDER)
    counter = iter(range(8))

    def work() -> gd.GenerationResult:
        seed = next(counter)
        rng = np.random.default_rng(seed)
        return gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2, max_tokens=60, seed=seed)

    results = run_in_threads(work)
    for result in results:
        assert result.stop_reason in ("eos", "complete")
        validate(ORDER, json.loads(result.data))
    alone = []
    for seed in range(8):  # the same seeds alone give the same documents
        rng = np.random.default_rng(seed)
        alone.append(gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2, max_tokens=60,
                                 seed=seed).data)
    assert sorted(r.data for r in results) == sorted(alone)


# -- counters stay symbolic ----------------------------------------------------------------------------


@pytest.mark.parametrize("bound", [10 ** 8, 10 ** 30])
def test_huge_item_bounds_stay_symbolic(gpt2: gd.Vocabulary, bound: int) -> None:
    """A bound of 10^8 or 10^30 items is a few dozen grammar rules (counts by halving), exact at
    its edges; a minimum that large has a shortest document the budget says it cannot follow."""
    at_most = bounded(lambda: compile_untimed({"type": "array", "items": {"type": "integer"},
                                                       "maxItems": bound}, whitespace="compact"))
    assert len(at_most.ir.rule_names) < 400
    assert at_most.accepts("[]") and at_most.accepts("[" + ",".join(["7"] * 3000) + "]")
    at_least = bounded(lambda: compile_untimed({"type": "array", "items": {"type": "integer"},
                                                        "minItems": bound}, whitespace="compact"))
    assert not at_least.accepts("[" + ",".join(["7"] * 3000) + "]")
    assert at_least.accepts_prefix("[" + ",".join(["7"] * 3000) + ",")
    assert at_least.min_completion_bytes() >= 2 * bound
    with pytest.raises(gd.GrammarError, match="shortest text"):
        at_least.min_completion_tokens(gpt2)
    edge = gd.compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": 999,
                                   "maxItems": 1001}, whitespace="compact")
    for count, expected in ((998, False), (999, True), (1000, True), (1001, True), (1002, False)):
        assert edge.accepts("[" + ",".join(["1"] * count) + "]") is expected, count


def test_float_bounds_are_schema_errors_not_overflow() -> None:
    with pytest.raises(gd.SchemaError):
        gd.compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": 1e300})
    with pytest.raises(gd.SchemaError):
        gd.compile_json_schema({"type": "array", "items": {"type": "integer"}, "minItems": float("nan")})


def test_nested_minimums_stay_symbolic(gpt2: gd.Vocabulary) -> None:
    """Three nested arrays of at least 1,000 items: a shortest document of 10^9 items is computed,
    never written out; the budget says plainly that it cannot follow it."""
    schema = {"type": "array", "minItems": 1000, "items": {"type": "array", "minItems": 1000, "items": {
        "type": "array", "minItems": 1000, "items": {"type": "integer"}}}}
    grammar = bounded(lambda: compile_untimed(schema, whitespace="compact"))
    assert grammar.min_completion_bytes() > 10 ** 9
    with pytest.raises(gd.GrammarError, match="shortest text"):
        bounded(lambda: grammar.min_completion_tokens(gpt2))
    assert grammar.accepts_prefix("[[[" + "1," * 999 + "1]")


@pytest.mark.slow
def test_ten_thousand_required_properties(gpt2: gd.Vocabulary) -> None:
    props = {f"p{i}": {"type": "integer"} for i in range(10_000)}
    schema = {"type": "object", "properties": props, "required": list(props)}
    no_time_limit = gd.Limits(compile_seconds=None)  # its size is the point: it takes ~10 s here
    grammar = bounded(lambda: gd.compile_json_schema(schema, whitespace="compact", limits=no_time_limit), seconds=120,
                      megabytes=600)
    document = json.dumps({k: 1 for k in props}, separators=(",", ":"))
    assert grammar.accepts(document) and not grammar.accepts(document.replace('"p9999":1', '"p9999":"x"'))


def test_big_regex_counters_compile_lazily() -> None:
    grammar = bounded(lambda: gd.compile_regex(r"[a-z]{0,100000}"))
    assert grammar.accepts("a" * 5000) and not grammar.accepts("A")
    nested = bounded(lambda: gd.compile_regex(r"(?:ab{1000}){1000}"))
    assert nested.accepts_prefix("a" + "b" * 1000 + "a") and not nested.accepts_prefix("a" + "b" * 1001)


# -- bounded caches -------------------------------------------------------------------------------------


def test_tiny_cache_budget_stays_correct_andbounded(gpt2: gd.Vocabulary) -> None:
    """With a 2 MiB budget, a long generation keeps its caches under it, and every mask equals
    what an unbounded masker computes."""
    schema = {"type": "array", "items": PERSON}
    small = gd.compile_json_schema(schema, limits=gd.Limits(cache_bytes=2 << 20))
    roomy = gd.compile_json_schema(schema)
    rng = np.random.default_rng(5)
    matcher = small.matcher(gpt2)
    for _ in range(150):
        mask = matcher.mask()
        assert np.array_equal(mask, Masker(roomy.recognizer, gpt2).mask(matcher.state))
        allowed = [t for t in np.flatnonzero(mask).tolist() if t not in gpt2.eos_token_ids]
        if not allowed:
            break
        matcher.advance(int(rng.choice(allowed)))
    info = small.masker(gpt2).cache_info()
    assert sum(part["bytes"] for part in info.values()) <= 2 << 20


# -- typed errors for bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", [{1, 2}, b"raw", decimal.Decimal("1.5"), {1: "a"}, float("nan"), "\ud800"])
def test_unwritable_const_values_are_schema_errors(value: object) -> None:
    with pytest.raises(gd.SchemaError):
        gd.compile_json_schema({"const": value})


def test_nan_logits_still_give_a_valid_document(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_json_schema(PERSON)
    result = gd.generate(lambda ids: np.full(len(gpt2), np.nan, dtype=np.float32), grammar, gpt2, max_tokens=40,
                         seed=0)
    assert result.stop_reason in ("eos", "complete")
    validate(PERSON, json.loads(result.data))


def test_bad_arguments_are_typed(gpt2: gd.Vocabulary) -> None:
    matcher = gd.compile_json_schema(PERSON).matcher(gpt2)
    for bad in (1.0, True, None, "3"):
        with pytest.raises(gd.TokenRejected):
            matcher.advance(bad)  # type: ignore[arg-type]
    out = np.zeros((2, gd.bitmask_words(len(gpt2))), dtype=np.int32)
    with pytest.raises(IndexError):
        matcher.fill_bitmask(out, row=-1)
    with pytest.raises(gd.VocabularyError):
        gd.Vocabulary([3, 5])  # type: ignore[list-item]
    with pytest.raises(gd.VocabularyError):
        gd.Vocabulary([b"a", b"b"], eos_token_ids=[1.7])  # type: ignore[list-item]


def test_a_vocabulary_that_cannot_spell_the_shortest_document() -> None:
    vocab = gd.Vocabulary([b"ab", b"</s>"], eos_token_ids=[1])
    with pytest.raises(gd.VocabularyError, match="cannot spell"):
        gd.compile_json_schema({"type": "integer"}).min_completion_tokens(vocab)


# -- compile only what can be emitted -----------------------------------------------------------------------


def test_an_unsatisfiable_optional_property_does_not_fail_the_schema() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "enum": [1, 2]}, "b": {"type": "integer"}}}
    grammar = gd.compile_json_schema(schema)
    assert grammar.accepts('{"b": 1}') and grammar.accepts("{}") and not grammar.accepts('{"a": 1}')
    with pytest.raises(gd.SchemaError, match="enum"):
        gd.compile_json_schema({**schema, "required": ["a"]})


def test_forty_branch_any_of_and_a_recursive_definition(gpt2: gd.Vocabulary) -> None:
    branches = [{"type": "object", "properties": {f"k{i}": {"const": i}}, "required": [f"k{i}"]} for i in range(40)]
    grammar = bounded(lambda: compile_untimed({"anyOf": branches}))
    assert grammar.accepts('{"k39":39}') and not grammar.accepts('{"k39":38}')
    tree = {"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"}, "children": {
        "type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["value", "children"]}}, "$ref": "#/$defs/node"}
    grammar = bounded(lambda: compile_untimed(tree, whitespace="compact"))
    deep = '{"value":1,"children":[' * 10 + '{"value":1,"children":[]}' + "]}" * 10
    assert grammar.accepts(deep) and grammar.min_completion_tokens(gpt2) >= 1


@pytest.mark.slow
def test_parse_states_do_not_accumulate(gpt2: gd.Vocabulary) -> None:
    """A long-running process sees many documents: parse states live only while a matcher or a
    bounded cache holds them, so their number stays flat instead of growing with every document."""
    import gc

    from helpers import COMBINATOR_SCHEMAS

    grammar = gd.compile_json_schema(COMBINATOR_SCHEMAS["tree"], limits=gd.Limits(cache_bytes=1 << 20))
    live = []
    for batch in range(3):
        for seed in range(25):
            rng = np.random.default_rng(batch * 100 + seed)
            gd.generate(lambda ids: rng.standard_normal(len(gpt2)), grammar, gpt2, max_tokens=80, seed=seed)
        gc.collect()
        live.append(grammar.recognizer.parser.live_states())
    assert live[2] <= 2 * live[0] + 200, live
