"""The parser's tables and their cache by structure: a hit gives what a build gives, names
follow each grammar, and every input the tables depend on is in the key."""

from __future__ import annotations

import json

import pytest

import grammar_decode as gd
from grammar_decode.engine import parser_tables
from grammar_decode.engine.parser import Parser
from grammar_decode.engine.parser_tables import build_tables, parser_tables as tables_of
from grammar_decode.engine.transform import empty_lexemes, rewrite
from grammar_decode.errors import GrammarTooLarge
from grammar_decode.ir.grammar import Grammar
from grammar_decode.limits import active

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
