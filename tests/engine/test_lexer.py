"""The lazily built lexer DFA: canonical states, no dead states, symbolic counters, threads."""

from __future__ import annotations

import gc
import weakref

import grammar_decode as gd
from grammar_decode.engine.lexer import DEAD, Lexer
from grammar_decode.frontends.regex import translate
from grammar_decode.ir.regex import ExprSet

from helpers import run_in_threads


def make(*patterns: str) -> Lexer:
    exprs = ExprSet()
    return Lexer(exprs, [translate(exprs, p) for p in patterns])


def test_states_track_every_live_lexeme() -> None:
    lexer = make(r"if", r"[a-z]+", r"[0-9]+")
    start = lexer.start([0, 1, 2])
    after_i = lexer.step(start, ord("i"))
    after_if = lexer.step(after_i, ord("f"))
    assert lexer.live_lexemes(after_i) == (0, 1) and lexer.accepting[after_i] == {1}
    assert lexer.accepting[after_if] == {0, 1}
    assert lexer.step(after_if, ord("x")) != DEAD and lexer.live_lexemes(lexer.step(after_if, ord("x"))) == (1,)
    assert lexer.step(start, ord("-")) == DEAD
    assert lexer.start([2]) != start and lexer.step(lexer.start([2]), ord("a")) == DEAD


def test_start_states_are_kept_off_the_collectors_lists() -> None:
    """A start state is cached by the lexemes allowed, in any order and with repeats, under a key
    the cyclic collector never visits (a large object's expected set has hundreds of lexemes,
    and every full collection visited each of them)."""
    lexer = make(r"if", r"[a-z]+", r"[0-9]+")
    start = lexer.start([2, 0, 1, 0])
    assert lexer.start(frozenset({0, 1, 2})) == lexer.start((0, 1, 2)) == start
    assert lexer.start([1]) != start
    assert not gc.is_tracked(lexer._starts) and not [k for k in lexer._starts if gc.is_tracked(k)]


def test_equal_futures_share_a_state() -> None:
    lexer = make(r"(ab)*c")
    start = lexer.start([0])
    assert lexer.feed(start, b"abab") == lexer.feed(start, b"ab") == start


def test_no_dead_states_with_intersection() -> None:
    exprs = ExprSet()
    word = translate(exprs, "[a-z]+")
    lexer = Lexer(exprs, [exprs.difference(word, translate(exprs, "[a-z]*q"))])
    start = lexer.start([0])
    # "q" alone can never be extended into a word that does not end in q... but "qa" can
    assert lexer.step(start, ord("q")) != DEAD
    assert not lexer.accepting[lexer.step(start, ord("q"))]
    lexer2 = Lexer(exprs, [exprs.both(translate(exprs, "a+"), translate(exprs, "b+"))])
    assert lexer2.start([0]) == DEAD


def test_big_counters_build_states_lazily() -> None:
    lexer = make(r'"[a-z]{0,100000}"')
    state = lexer.start([0])
    state = lexer.feed(state, b'"' + b"a" * 300)
    assert state != DEAD and len(lexer) < 400
    closed = lexer.step(state, ord('"'))
    assert not lexer.accepting[state] and lexer.accepting[closed]
    assert lexer.step(state, ord("a")) != DEAD and all(lexer.step(closed, b) == DEAD for b in range(256))


def test_concurrent_lexing_agrees() -> None:
    lexer = make(r"[a-z]+", r"[a-z]*[0-9]{1,3}")

    def work() -> list[int]:
        return [lexer.feed(lexer.start([0, 1]), text) for text in (b"abc123", b"zz9", b"q") * 50]

    results = run_in_threads(work)
    assert all(r == results[0] for r in results) and DEAD not in results[0]


def test_a_dropped_grammar_is_freed_without_the_collector(gpt2: gd.Vocabulary) -> None:
    """No reference cycle runs through a compiled grammar, its lexer or a ``uniqueItems`` lexeme's
    spellings: dropped, it is freed at once by reference counting (a cycle would wait for a full
    collection, which then lands on some later mask, tens of ms late in a long run)."""
    schema = {"type": "object", "properties": {
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "name": {"type": "string", "pattern": "^[a-z]+$"}}}
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        grammar = gd.compile_json_schema(schema)
        matcher = grammar.matcher(gpt2)
        matcher.mask()
        assert grammar.accepts('{"tags": ["a", "b"], "name": "xy"}')
        assert grammar.ir.unique_items  # the spellings of the array's items are held by the grammar
        lexer = weakref.ref(matcher._masker.recognizer.lexer)
        ir = weakref.ref(grammar.ir)
        del grammar, matcher
        assert lexer() is None and ir() is None
    finally:
        if was_enabled:
            gc.enable()
