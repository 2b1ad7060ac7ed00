"""The parser's tables and their cache by structure: a hit gives what a build gives, names
follow each grammar, and every input the tables depend on is in the key; the C nesting analysis
equals the Python one."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.engine import parser_tables
from grammar_decode.engine.parser import Parser
from grammar_decode.engine.parser_tables import build_tables, parser_tables as tables_of
from grammar_decode.engine.transform import empty_lexemes, rewrite
from grammar_decode.errors import GrammarError, GrammarTooLarge
from grammar_decode.ir.grammar import Grammar
from grammar_decode.limits import active
from helpers import DATA, UNTIMED

SHAPES = [
    ({"type": "string", "maxLength": 5}, {"type": "string", "maxLength": 9, "pattern": "^a"}),
    ({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}, "required": ["a"]},
     {"type": "object", "properties": {"b": {"type": "string", "maxLength": 8, "pattern": "^x"}}, "required": ["b"]}),
    ({"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 3},
     {"type": "array", "items": {"enum": ["p", "q"]}, "maxItems": 3}),
]


def _grammar(schema: dict) -> Grammar:
    return gd.compile_json_schema(schema).recognizer.grammar


@pytest.mark.parametrize("first,second", SHAPES)
def test_two_schemas_of_one_structure_share_the_tables(first: dict, second: dict) -> None:
    one, two = _grammar(first), _grammar(second)
    empty = frozenset()
    assert parser_tables.structure_key(one, empty) == parser_tables.structure_key(two, empty)
    tables_one, _names = tables_of(one)
    tables_two, names_two = tables_of(two)
    assert tables_two is tables_one
    # what a build from scratch gives, field for field
    assert build_tables(two, active().grammar_size) == tables_two
    assert names_two == _built_names(two)


def _built_names(grammar: Grammar) -> list[str]:
    return rewrite(grammar).names


@pytest.mark.parametrize("first,second", SHAPES)
def test_names_are_each_grammars_own(first: dict, second: dict) -> None:
    for schema in (first, second):
        grammar = _grammar(schema)
        assert tables_of(grammar)[1] == _built_names(grammar)


def test_a_hit_still_checks_the_size_limit() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
    gd.compile_json_schema(schema)  # the tables are cached now
    with pytest.raises(GrammarTooLarge):
        gd.compile_json_schema(schema, limits=gd.Limits(grammar_size=40))
    with pytest.raises(GrammarTooLarge):  # and a hit after a failed build
        gd.compile_json_schema(json.loads(json.dumps(schema)), limits=gd.Limits(grammar_size=40))


def _tiny(max_depth: int | None, empty_b: bool = False, ignored: bool = False) -> Grammar:
    """start → "a" start "c" | "b", with "a" opening a level and "c" closing it."""
    g = Grammar()
    a = g.lexeme(g.exprs.literal(b"a"), "a")
    b = g.lexeme(g.exprs.both(g.exprs.literal(b"b"), g.exprs.literal(b"x")) if empty_b else g.exprs.literal(b"b"), "b")
    c = g.lexeme(g.exprs.literal(b"c"), "c")
    if ignored:
        g.ignore(g.exprs.literal(b" "))
    start = g.rule("start")
    g.define(start, [(a, start, c), (b,)])
    g.start = start
    if max_depth is not None:
        g.max_depth = max_depth
        g.nest(a, 1, 1)
        g.nest(c, -1, 0)
    return g


def test_the_key_tells_apart_what_the_tables_depend_on() -> None:
    keys = {parser_tables.structure_key(g, empty_lexemes(g)) for g in [
        _tiny(None), _tiny(3), _tiny(4), _tiny(None, empty_b=True), _tiny(None, ignored=True)]}
    assert len(keys) == 5


def test_a_depth_limit_gets_its_own_tables() -> None:
    shallow, deep = Parser(_tiny(2)), Parser(_tiny(5))
    assert shallow.accepts([0, 0, 1, 2, 2]) and not shallow.accepts([0, 0, 0, 1, 2, 2, 2])
    assert deep.accepts([0, 0, 0, 1, 2, 2, 2])


def test_the_cache_is_bounded_and_reports() -> None:
    for _ in range(2):  # a build, then a hit, whatever ran before
        gd.compile_json_schema({"type": "array", "items": {"type": "boolean"}, "minItems": 2})
    info = parser_tables.cache_info()
    assert info["bytes"] <= parser_tables.CACHE_BYTES and info["entries"] > 0 and info["hits"] > 0


def test_the_tables_are_made_off_the_collectors_lists() -> None:
    """The tables' tuples (of ints, or of tuples of ints) are untracked as they are made: the
    cache keeps them, and a tuple of tuples left tracked waits for a full collection to untrack
    it, which then visits every item of every table compiled since."""
    import gc

    grammar = gd.compile_json_schema({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}},
                                                                       "b": {"enum": ["x", "y"]}}}).ir
    tables = build_tables(grammar, 10 ** 6, empty_lexemes(grammar))
    fields = [tables.symbols, tables.firsts, tables.lexeme_firsts, tables.other_firsts, tables.new_rules]
    assert tables.nesting is not None
    fields += [tables.nesting.peak_rest, tables.nesting.net_rest]
    assert all(type(f) is tuple and len(f) for f in fields[:4])
    assert not [f for f in fields if gc.is_tracked(f)]
    # and the cache's key, with a depth limit, ignored and empty lexemes in it
    for g in (grammar, _tiny(3, empty_b=True, ignored=True)):
        key = parser_tables.structure_key(g, empty_lexemes(g))
        assert not gc.is_tracked(key) and not gc.is_tracked(key[0]) and not gc.is_tracked(key[0][0])


# -- the C nesting analysis equals the Python one -------------------------------------------------



def _nesting_of(grammar: Grammar, compiled: bool, mutation: int = 0) -> object:
    """The nesting analysis of ``grammar``'s rewritten layout, or the error's message."""
    rewritten = rewrite(grammar, 10 ** 7, compiled=False)
    symbols: list[int] = []
    firsts = []
    for alternatives in rewritten.alternatives:
        starts = []
        for alternative in alternatives:
            starts.append(len(symbols))
            symbols.extend((*alternative, parser_tables.END))
        firsts.append(tuple(starts))
    try:
        return parser_tables.nesting_tables(tuple(symbols), tuple(firsts), rewritten.names, len(grammar.lexeme_exprs),
                                            grammar.nesting, compiled=compiled, mutation=mutation)
    except GrammarError as exc:
        return str(exc)


def _limited_corpus() -> list[Grammar]:
    corpus = json.loads((DATA / "json_schema_corpus.json").read_text())
    grammars = [gd.compile_json_schema(schema, limits=UNTIMED).ir for schema in corpus.values()]
    return [g for g in grammars if g.max_depth is not None]


def test_the_c_nesting_analysis_equals_python_on_the_corpus() -> None:
    grammars = _limited_corpus()
    assert len(grammars) > 80
    for grammar in grammars:
        assert _nesting_of(grammar, True) == _nesting_of(grammar, False)


def test_a_broken_c_nesting_analysis_is_caught() -> None:
    """Mutation 1 stops at the pass in dependency order: a recursive schema's peaks stay too high."""
    assert any(_nesting_of(g, True, mutation=1) != _nesting_of(g, False) for g in _limited_corpus())


@st.composite
def _nested_grammars(draw: st.DrawFn) -> Grammar:
    """1-5 rules over "(" (opens a level), ")" (closes it) and "x", any alternatives of up to 5
    symbols: most have no fixed depth change (an error both analyses must name alike), the rest
    nest through recursion."""
    grammar = Grammar()
    opening, closing, plain = (grammar.lexeme(grammar.exprs.literal(t), t.decode()) for t in (b"(", b")", b"x"))
    grammar.nest(opening, 1, 1)
    grammar.nest(closing, -1, 0)
    count = draw(st.integers(1, 5))
    rules = [grammar.rule(f"r{k}") for k in range(count)]
    symbol = st.one_of(st.sampled_from([opening, closing, plain]), st.sampled_from(rules))
    for rule in rules:
        grammar.define(rule, draw(st.lists(st.lists(symbol, min_size=1, max_size=5).map(tuple), min_size=1, max_size=3)))
    grammar.define(rules[0], [(plain,)])  # productive
    grammar.start = rules[0]
    grammar.max_depth = draw(st.integers(1, 4))
    return grammar


@settings(max_examples=400, deadline=None)
@given(_nested_grammars())
def test_the_c_nesting_analysis_equals_python_on_random_grammars(grammar: Grammar) -> None:
    try:
        expected = _nesting_of(grammar, False)
    except GrammarError:
        return  # the rewrite refuses it (admits nothing): no layout to analyse
    assert _nesting_of(grammar, True) == expected


def test_the_c_nesting_analysis_names_a_rule_without_a_fixed_depth_change() -> None:
    grammar = _tiny(3)
    grammar.define(grammar.start, [(0,)])  # start → "a": one more way, with another depth change
    assert _nesting_of(grammar, True) == _nesting_of(grammar, False)
    assert "changes the nesting depth by different amounts" in str(_nesting_of(grammar, True))


def test_the_c_nesting_analysis_refuses_a_layout_that_does_not_fit() -> None:
    import numpy as np

    i32, i64 = np.int32, np.int64
    with pytest.raises(ValueError):
        parser_tables._nesting.nesting(np.array([5, parser_tables.END32], dtype=i32), np.array([0, 1], dtype=i32),
                                       np.array([0], dtype=i32), np.zeros(2, dtype=i64), np.zeros(2, dtype=i64), lambda: None)
    with pytest.raises(ValueError):
        parser_tables._nesting.nesting(np.array([0, parser_tables.END32], dtype=i32), np.array([0, 1], dtype=i32),
                                       np.array([7], dtype=i32), np.zeros(2, dtype=i64), np.zeros(2, dtype=i64), lambda: None)
