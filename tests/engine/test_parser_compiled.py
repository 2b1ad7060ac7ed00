"""The compiled parser (``engine/_parse.c``) against the reference (``engine/parser.py``): the same
states, structure for structure, along the same lexemes; the same interning (one state object in
one exactly where one in the other); the same completion costs; states freed when nothing holds
them; deliberately broken stores caught."""

from __future__ import annotations

import gc
import os
import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.engine import parser_compiled
from grammar_decode.engine.parser import ROOT, Parser
from grammar_decode.engine.parser_compiled import CompiledParser
from grammar_decode.errors import GrammarAdmitsNothing
from grammar_decode.ir.grammar import INFINITE, Grammar

from helpers import COMBINATOR_SCHEMAS, run_in_threads


class Canon:
    """Structural numbers of return points, shared by both parsers' states: two return points
    get one number exactly when their positions and their parents' numbers are the same (nested
    tuples would compare and print in time exponential in the merges of a return-point DAG)."""

    def __init__(self) -> None:
        self.numbers: dict[tuple, int] = {("ROOT",): 0}
        self.lock = threading.Lock()

    def number(self, position: int, parents: list[int]) -> int:
        with self.lock:
            return self.numbers.setdefault((position, tuple(sorted(parents))), len(self.numbers))


def _python_form(canon: Canon, state, memo: dict) -> tuple:
    """A reference state as threads of (position, its return points' numbers), accepting, depth."""
    def cont(c) -> int:
        if c is ROOT:
            return 0
        found = memo.get(id(c))
        if found is None:
            found = memo[id(c)] = canon.number(c.position, [cont(p) for p in c.parents])
        return found

    return (tuple((position, tuple(sorted(cont(c) for c in cs))) for position, cs in state.threads),
            state.accepting, state.depth)


def _compiled_form(canon: Canon, parser: CompiledParser, state, memo: dict) -> tuple:
    """A compiled state in ``_python_form``'s shape, read from its store."""
    store = parser._store

    def cont(c: int) -> int:
        if c == 0:
            return 0
        found = memo.get(c)
        if found is None:
            position, parents = store.cont(c)
            found = memo[c] = canon.number(position, [cont(p) for p in store.set_items(parents)])
        return found

    return (tuple((position, tuple(sorted(cont(c) for c in store.set_items(s)))) for position, s in state.threads),
            state.accepting, state.depth)


class Lockstep:
    """Both parsers of one grammar driven together; every state reached is compared."""

    def __init__(self, grammar: Grammar, mutation: int = 0) -> None:
        self.reference = Parser(grammar)
        self.compiled = CompiledParser(grammar, mutation=mutation)
        # per reference state object: the compiled state object it corresponds to, and back
        self.forward: dict[int, object] = {}
        self.backward: dict[int, object] = {}
        self.held: list[object] = []  # keeps the states alive, so that ids stay meaningful
        self.canon = Canon()

    def check(self, ref, com) -> None:
        assert (ref is None) == (com is None)
        if ref is None:
            return
        self.held += [ref, com]
        assert self.forward.setdefault(id(ref), com) is com, "one reference state, two compiled ones"
        assert self.backward.setdefault(id(com), ref) is ref, "one compiled state, two reference ones"
        assert _compiled_form(self.canon, self.compiled, com, {}) == _python_form(self.canon, ref, {})
        assert com.expected == ref.expected

    def scan(self, ref, com, lexemes: frozenset[int]):
        after_ref, after_com = ref.scan(lexemes), com.scan(lexemes)
        self.check(after_ref, after_com)
        return after_ref, after_com


@st.composite
def _grammars(draw: st.DrawFn) -> tuple[int, list[list[tuple[int, ...]]], bool]:
    """(lexeme count, rules, whether a third lexeme is ignored): 1-4 rules over 2 lexemes,
    alternatives of 0-5 symbols with at most two rules among them, ambiguous and nullable
    recursion included (``test_transform``'s shapes: three rules in one alternative made
    grammars whose reference parse of four lexemes took minutes and gigabytes)."""
    lexemes, count = 2, draw(st.integers(1, 4))
    symbol = st.one_of(st.integers(0, lexemes - 1), st.integers(0, count - 1).map(lambda r: ~r))
    alternative = st.lists(symbol, max_size=5).filter(lambda alt: sum(s < 0 for s in alt) <= 2).map(tuple)
    rules = [draw(st.lists(alternative, min_size=1, max_size=3)) for _ in range(count)]
    return lexemes, rules, draw(st.booleans())


def _build(drawn: tuple[int, list[list[tuple[int, ...]]], bool]) -> tuple[Grammar, list[int]]:
    lexemes, rules, ignore = drawn
    grammar = Grammar()
    ids = [grammar.lexeme(grammar.exprs.literal(bytes([97 + k])), chr(97 + k)) for k in range(lexemes)]
    symbols = [grammar.rule(f"r{k}") for k in range(len(rules))]
    for k, alternatives in enumerate(rules):
        grammar.define(symbols[k], [tuple(ids[s] if s >= 0 else symbols[~s] for s in alt) for alt in alternatives])
    grammar.start = symbols[0]
    if ignore:
        grammar.ignore(grammar.exprs.literal(b" "))
        ids.append(grammar.ignored[-1])
    return grammar, ids


@settings(max_examples=200, deadline=None)
@given(_grammars())
def test_every_state_up_to_four_lexemes_equals_the_reference(drawn) -> None:
    """Every sequence of up to four lexeme sets (single lexemes, and two at once as a text that
    matches both): the same structure, the same interning, the same expected lexemes."""
    grammar, ids = _build(drawn)
    try:
        pair = Lockstep(grammar)
    except GrammarAdmitsNothing:
        with pytest.raises(GrammarAdmitsNothing):
            Parser(grammar)
        return
    pair.check(pair.reference.initial, pair.compiled.initial)
    choices = [frozenset((i,)) for i in ids] + [frozenset(ids[:2])]  # a text matching both lexemes
    frontier = [(pair.reference.initial, pair.compiled.initial)]
    for _ in range(4):
        following = []
        for ref, com in frontier:
            for lexemes in choices:
                after = pair.scan(ref, com, lexemes)
                if after[0] is not None:
                    following.append(after)
        frontier = following


def _walk(pair: Lockstep, rng: random.Random, steps: int, lexeme_count: int) -> None:
    """A random walk of ``steps`` scans from the initial state, each of a lexeme the state expects
    (now and then one it does not, or two at once), restarting at the initial state at a dead end
    or an accepting state, at random."""
    ref, com = pair.reference.initial, pair.compiled.initial
    pair.check(ref, com)
    for _ in range(steps):
        expected = sorted(ref.expected)
        if not expected or (ref.accepting and rng.random() < 0.2):
            ref, com = pair.reference.initial, pair.compiled.initial
            continue
        pick = {rng.choice(expected)}
        if rng.random() < 0.1:
            pick.add(rng.randrange(lexeme_count))
        after = pair.scan(ref, com, frozenset(pick))
        if after[0] is None:
            ref, com = pair.reference.initial, pair.compiled.initial
        else:
            ref, com = after


_SCHEMAS = {
    "tree (depth limit)": COMBINATOR_SCHEMAS["tree"],
    "optional keys": {"type": "object", "properties": {f"k{i}": {"type": "integer"} for i in range(12)},
                      "required": ["k3"]},
    "nested arrays": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "array",
                                                                                   "items": {"type": "string"}}]}},
    "anything": {},
}


@pytest.mark.parametrize("name", sorted(_SCHEMAS))
def test_json_schema_grammars_along_random_walks(name: str) -> None:
    """Real front-end grammars (a depth limit, hundreds of rules): 600 random scans each."""
    grammar = gd.compile_json_schema(_SCHEMAS[name]).recognizer.grammar
    pair = Lockstep(grammar)
    _walk(pair, random.Random(7), 600, len(grammar.lexeme_exprs))


def test_the_compiled_parser_is_built_and_used() -> None:
    """The build makes the extension, and the recognizer uses it unless the references are asked
    for (``GRAMMAR_DECODE_WALK=python``: the reference parser then)."""
    assert parser_compiled._parse is not None
    python = os.environ.get("GRAMMAR_DECODE_WALK") == "python"
    assert parser_compiled.COMPILED is not python
    grammar = gd.compile_json_schema({"type": "array"})
    assert isinstance(grammar.recognizer.parser, Parser if python else CompiledParser)
    assert grammar.accepts("[1, [2, {}]]") and not grammar.accepts("[1, ]")


def _costs_grammar() -> Grammar:
    return gd.compile_json_schema(_SCHEMAS["optional keys"]).recognizer.grammar


def test_completion_costs_equal_the_reference() -> None:
    """parse_cost and after_costs over the states of a random walk, with one table of rests (some
    positions without a completion)."""
    grammar = _costs_grammar()
    pair = Lockstep(grammar)
    rng = random.Random(3)
    rest = [rng.choice([0, 1, 2, 5, 40, INFINITE]) for _ in pair.reference.symbols]
    pair.reference.set_rest(rest)
    pair.compiled.set_rest(rest)
    _walk(pair, rng, 300, len(grammar.lexeme_exprs))
    for ref, com in zip(pair.held[::2], pair.held[1::2]):
        assert pair.compiled.parse_cost(com) == pair.reference.parse_cost(ref)
        assert pair.compiled.after_costs(com) == pair.reference.after_costs(ref)


def test_states_live_while_held() -> None:
    """A state lives while its handle does; its scan memo on a freed target recomputes the same
    structure. Handles are not tracked by the cyclic collector."""
    grammar = gd.compile_json_schema(COMBINATOR_SCHEMAS["tree"]).recognizer.grammar
    parser = CompiledParser(grammar)
    canon = Canon()
    before = parser.live_states()
    state = parser.initial
    path = []
    for _ in range(30):
        if not state.expected:
            break
        lexeme = min(state.expected)
        state = state.scan(frozenset((lexeme,)))
        path.append((lexeme, _compiled_form(canon, parser, state, {})))
    assert len(path) >= 5 and parser.live_states() > before
    assert not gc.is_tracked(parser.initial)
    del state
    assert parser.live_states() == before  # nothing else holds them
    state = parser.initial
    for lexeme, form in path:  # the memos point at freed states: scanned again, the same
        state = state.scan(frozenset((lexeme,)))
        assert _compiled_form(canon, parser, state, {}) == form


def test_concurrent_scans_agree() -> None:
    grammar = gd.compile_json_schema(_SCHEMAS["nested arrays"]).recognizer.grammar
    parser = CompiledParser(grammar)
    canon = Canon()

    def work() -> list[tuple]:
        rng = random.Random(11)
        state, forms = parser.initial, []
        for _ in range(400):
            expected = sorted(state.expected)
            nxt = state.scan(frozenset((rng.choice(expected),))) if expected else None
            state = parser.initial if nxt is None or nxt.accepting and rng.random() < 0.3 else nxt
            forms.append(_compiled_form(canon, parser, state, {}))
        return forms

    results = run_in_threads(work)
    assert all(result == results[0] for result in results)


def _ambiguous() -> Grammar:
    grammar = Grammar()
    a = grammar.lexeme(grammar.exprs.literal(b"a"), "a")
    r = grammar.rule("r")
    grammar.define(r, [(r, r, r, a), ()])
    grammar.start = r
    return grammar


def test_highly_ambiguous_grammar_parses() -> None:
    """r → r r r a | ε: the merges of ``Parser._merge``, memoised the same way."""
    pair = Lockstep(_ambiguous())
    ref, com = pair.reference.initial, pair.compiled.initial
    a = frozenset((0,))
    for _ in range(10):
        ref, com = pair.scan(ref, com, a)
    assert com.accepting


@pytest.mark.parametrize("mutation, grammar", [(1, _ambiguous), (2, lambda: gd.compile_json_schema(
    COMBINATOR_SCHEMAS["tree"], max_depth=4).recognizer.grammar)])
def test_a_broken_store_is_caught(mutation: int, grammar) -> None:
    """1: return points reaching one position not merged; 2: the depth limit ignored."""
    built = grammar()
    with pytest.raises(AssertionError):
        pair = Lockstep(built, mutation=mutation)
        _walk(pair, random.Random(5), 2000, len(built.lexeme_exprs))
        ref, com = pair.reference.initial, pair.compiled.initial
        for _ in range(12):  # the ambiguous grammar: a straight run of its one lexeme
            if 0 not in ref.expected:
                break
            ref, com = pair.scan(ref, com, frozenset((0,)))
