"""The rewrite against brute force: the cyclic strongly connected components (unit cycles, left
recursion) of small random graphs and hand-written ones, and the language of random grammars
(the parser on the rewritten grammar against a derivation check of the grammar as written); and
the C rewrite against the Python one, rule for rule."""

from __future__ import annotations

import itertools
import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.engine import transform
from grammar_decode.engine.parser import Parser
from grammar_decode.engine.transform import _cyclic_components, rewrite
from grammar_decode.errors import CompileTimeout, GrammarAdmitsNothing, GrammarError
from grammar_decode.ir.grammar import Grammar
from grammar_decode.limits import applied
from helpers import DATA, REPOSITORY, UNTIMED


def _brute_components(edges: list[list[int]]) -> list[list[int]]:
    """The components on a cycle, from reachability: a and b together when each reaches the other."""
    reach = []
    for node in range(len(edges)):
        seen: set[int] = set()
        stack = list(edges[node])
        while stack:
            other = stack.pop()
            if other not in seen:
                seen.add(other)
                stack.extend(edges[other])
        reach.append(seen)
    found = {tuple(sorted(b for b in range(len(edges)) if b in reach[a] and a in reach[b]))
             for a in range(len(edges)) if a in reach[a]}
    return sorted(list(c) for c in found)


@pytest.mark.parametrize("edges,components", [
    ([[]], []),
    ([[0]], [[0]]),  # a self-loop is a cycle
    ([[1], [0]], [[0, 1]]),
    ([[1], [2], []], []),  # a chain
    ([[1], [2], [1]], [[1, 2]]),  # a cycle reached from outside it
    ([[1, 2], [0], [3], [2], []], [[0, 1], [2, 3]]),
    ([[], [], [3], [2, 4], [4]], [[2, 3], [4]]),
])
def test_cyclic_components_by_hand(edges: list[list[int]], components: list[list[int]]) -> None:
    assert sorted(_cyclic_components(edges)) == components


@st.composite
def _graphs(draw: st.DrawFn) -> list[list[int]]:
    size = draw(st.integers(1, 14))
    # mostly sparse, as the rewrite's graphs are: many nodes without successors
    return [sorted(set(draw(st.lists(st.integers(0, size - 1), max_size=draw(st.sampled_from([0, 0, 1, 2, 3]))))))
            for _ in range(size)]


@settings(max_examples=400, deadline=None)
@given(_graphs())
def test_cyclic_components_equal_brute_force(edges: list[list[int]]) -> None:
    assert sorted(_cyclic_components(edges)) == _brute_components(edges)


# -- the rewrite keeps the language ---------------------------------------------------------------

def _derives_brute(alternatives: list[list[tuple[int, ...]]], start: int, text: tuple[int, ...]) -> bool:
    """Whether rule ``start`` derives ``text`` (lexeme numbers), by a fixed point over spans: the
    set of (rule, i, j) such that the rule derives ``text[i:j]``, grown until nothing is added.
    Any grammar: empty alternatives, unit cycles, left recursion."""
    n = len(text)
    spans: set[tuple[int, int, int]] = set()

    def ends(alternative: tuple[int, ...], i: int) -> set[int]:
        """Where the alternative, begun at i, can end given the spans known."""
        here = {i}
        for symbol in alternative:
            nxt: set[int] = set()
            for k in here:
                if symbol >= 0:
                    if k < n and text[k] == symbol:
                        nxt.add(k + 1)
                else:
                    nxt.update(j for j in range(k, n + 1) if (~symbol, k, j) in spans)
            here = nxt
        return here

    changed = True
    while changed:
        changed = False
        for rule, alts in enumerate(alternatives):
            for alternative in alts:
                for i in range(n + 1):
                    for j in ends(alternative, i):
                        if (rule, i, j) not in spans:
                            spans.add((rule, i, j))
                            changed = True
    return (start, 0, n) in spans


@st.composite
def _grammars(draw: st.DrawFn) -> tuple[int, list[list[tuple[int, ...]]]]:
    """(lexeme count, rules): 1-4 rules over 2 lexemes, alternatives of 0-5 symbols with at most
    two rules among them, so that long alternatives with two nullable rules (which the rewrite
    splits) are common. Highly ambiguous nullable recursion (r → r r a | r r a | ε) is drawn too:
    its parse, once exponential in the text, is polynomial since ``Parser._merge`` is memoised
    (``test_parser.py``)."""
    lexemes, count = 2, draw(st.integers(1, 4))
    symbol = st.one_of(st.integers(0, lexemes - 1), st.integers(0, count - 1).map(lambda r: ~r))
    alternative = st.lists(symbol, max_size=5).filter(lambda alt: sum(s < 0 for s in alt) <= 2).map(tuple)
    rules = [draw(st.lists(alternative, min_size=1, max_size=3)) for _ in range(count)]
    return lexemes, rules


@settings(max_examples=300, deadline=None)
@given(_grammars())
def test_the_parser_on_the_rewrite_accepts_the_grammars_language(drawn: tuple[int, list[list[tuple[int, ...]]]]) -> None:
    """Every lexeme sequence up to length 4: the parser (on the rewritten grammar) accepts it
    exactly when the grammar as written derives it."""
    lexemes, rules = drawn
    grammar = Grammar()
    ids = [grammar.lexeme(grammar.exprs.literal(bytes([97 + k])), chr(97 + k)) for k in range(lexemes)]
    symbols = [grammar.rule(f"r{k}") for k in range(len(rules))]
    for k, alternatives in enumerate(rules):
        grammar.define(symbols[k], [tuple(ids[s] if s >= 0 else symbols[~s] for s in alt) for alt in alternatives])
    grammar.start = symbols[0]
    try:
        parser = Parser(grammar)
    except GrammarAdmitsNothing:
        assert not any(_derives_brute(rules, 0, text) for length in range(5)
                       for text in itertools.product(range(lexemes), repeat=length))
        return
    for length in range(5):
        for text in itertools.product(range(lexemes), repeat=length):
            assert parser.accepts([ids[s] for s in text]) is _derives_brute(rules, 0, text), text


# -- the C rewrite equals the Python one ----------------------------------------------------------



def _outcome(grammar: Grammar, compiled: bool, max_size: int = 10**7, mutation: int = 0) -> object:
    """Everything ``rewrite`` returns, or the error it raises (type and message)."""
    try:
        out = rewrite(grammar, max_size, compiled=compiled, mutation=mutation)
    except GrammarError as exc:
        return type(exc), str(exc)
    return out.alternatives, out.names, out.start, out.start_nullable, out.new_rules, out.peak_size


def _from_rules(lexemes: int, rules: list[list[tuple[int, ...]]]) -> Grammar:
    grammar = Grammar()
    for k in range(lexemes):
        grammar.lexeme(grammar.exprs.literal(bytes([97 + k])), chr(97 + k))
    symbols = [grammar.rule(f"r{k}") for k in range(len(rules))]
    for k, alternatives in enumerate(rules):
        grammar.define(symbols[k], alternatives)
    grammar.start = symbols[0]
    return grammar


def _corpus_grammars() -> list[Grammar]:
    corpus = json.loads((DATA / "json_schema_corpus.json").read_text())
    grammars = [gd.compile_json_schema(schema, limits=UNTIMED).ir for schema in corpus.values()]
    grammars.append(gd.compile_grammar((REPOSITORY / "examples" / "calc.lark").read_text(), limits=UNTIMED).ir)
    return grammars


LARK = [
    # left recursion, direct and through another rule, and a unit cycle
    "start: expr\nexpr: expr \"+\" term | term\nterm: term \"*\" atom | atom\natom: \"x\" | \"(\" expr \")\"",
    "start: a\na: b \"x\" | \"y\"\nb: a \"z\" | a\n",
    "start: a\na: b | \"p\"\nb: c | \"q\"\nc: a | \"r\" c\n",
    "start: s\ns: s s | \"(\" s \")\" | \n",
]


@pytest.mark.parametrize("text", LARK)
def test_the_c_rewrite_equals_python_on_lark_grammars(text: str) -> None:
    grammar = gd.compile_grammar(text, limits=UNTIMED).ir
    assert _outcome(grammar, True) == _outcome(grammar, False)


def test_the_c_rewrite_equals_python_on_the_corpus() -> None:
    """Rule for rule, alternative for alternative, names and sizes: every corpus schema and the
    calculator example; the parser's tables rest on this order."""
    grammars = _corpus_grammars()
    assert len(grammars) > 80
    for grammar in grammars:
        assert _outcome(grammar, True) == _outcome(grammar, False), grammar


@st.composite
def _larger_grammars(draw: st.DrawFn) -> tuple[int, list[list[tuple[int, ...]]]]:
    """Up to 8 rules over 3 lexemes, alternatives of up to 7 symbols with any number of rules:
    empty rules, unit cycles, left recursion through several rules, equal rules."""
    lexemes, count = 3, draw(st.integers(1, 8))
    symbol = st.one_of(st.integers(0, lexemes - 1), st.integers(0, count - 1).map(lambda r: ~r))
    alternative = st.lists(symbol, max_size=7).map(tuple)
    rules = [draw(st.lists(alternative, max_size=4)) for _ in range(count)]
    return lexemes, rules


@settings(max_examples=600, deadline=None)
@given(st.one_of(_grammars(), _larger_grammars()), st.sampled_from([10**7, 40]))
def test_the_c_rewrite_equals_python_on_random_grammars(drawn: tuple[int, list[list[tuple[int, ...]]]],
                                                        max_size: int) -> None:
    """The same rules, numbering, names, start, nullability and peak, or the same error (a
    grammar that admits nothing, one that grows past ``max_size``)."""
    grammar = _from_rules(*drawn)
    assert _outcome(grammar, True, max_size) == _outcome(grammar, False, max_size)


def test_a_broken_c_rewrite_is_caught() -> None:
    """Mutation 1 keeps every nullable symbol (no variant leaves it out): the comparison above
    fails on the corpus, and the parser on its tables rejects a text the grammar derives."""
    grammars = _corpus_grammars()
    assert any(_outcome(g, True, mutation=1) != _outcome(g, False) for g in grammars)
    grammar = _from_rules(2, [[(~1, 0)], [(1,), ()]])  # r0 → r1 a, r1 → b | ε
    broken = rewrite(grammar, compiled=True, mutation=1).alternatives
    assert broken != rewrite(grammar, compiled=False).alternatives
    assert (0,) not in broken[0] and (0,) in rewrite(grammar, compiled=True).alternatives[0]


def test_the_c_rewrite_stops_at_the_compile_deadline() -> None:
    grammar = _corpus_grammars()[0]
    with applied(gd.Limits(compile_seconds=0.001), timed=True):
        time.sleep(0.01)
        with pytest.raises(CompileTimeout):
            rewrite(grammar, compiled=True)


@pytest.mark.parametrize("rules,start", [([[(5,)]], ~0), ([[(~3,)]], ~0), ([[(0,)]], ~4), ([[(0,)]], 7)])
def test_the_c_rewrite_refuses_symbols_outside_the_grammar(rules: list, start: int) -> None:
    with pytest.raises(ValueError, match="not in the grammar|neither a lexeme nor a rule"):
        transform._rewrite.rewrite(rules, start, 2, (), 100, lambda: None)
