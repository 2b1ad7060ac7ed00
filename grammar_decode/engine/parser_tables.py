"""The parser's tables for one grammar, cached process-wide by the grammar's structure.

``Parser`` (``parser.py``) needs the grammar rewritten (``transform.rewrite``), laid out flat
(every alternative's symbols in one array, ``END`` after each; per rule the positions its
alternatives start at, split by whether they begin with a lexeme), and, under a depth limit,
the nesting analysis (``NestingTables``: each symbol's fixed change of depth and the least peak
of the rest of each alternative). All of it is a function of the grammar's *structure* alone:
its rules with their lexeme and rule numbers, its start, which lexemes match nothing, which are
ignored, and, under a depth limit, the limit and each lexeme's nesting. Names only label rules
in messages, and expressions matter only through which are empty.

That is most of a compile's time past the front end (0.5 ms of rewrite and 0.5 ms of analysis
for a median SchemaStore grammar, about half of its compile), and different schemas often have
one structure: the same shape with other constants (lengths, patterns, enums: those live in the
lexemes). So the tables are kept in a bounded process-wide cache keyed by exactly that structure
(``parser_tables``); a grammar whose structure was seen before gets them for the cost of building
its key, its rule names rebuilt from the recipe of the rewrite (``Rewritten.new_rules``). The
size limit is checked on every compile against the largest size the rewrite reached, so a hit
never passes a smaller ``Limits.grammar_size``. What a ``Parser`` builds on the tables (its
states and return points) stays its own.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from ..errors import GrammarError
from ..ir.grammar import Grammar
from ..ir.regex import untracked
from ..kernels import load, selected
from ..limits import active, check_deadline
from ..lru import ByteBoundedLRU
from .transform import empty_lexemes, rewrite, rewritten_names, too_large

END = 1 << 62  # the symbol past the last of an alternative (neither a lexeme nor a rule)
#: ``END`` in the int32 arrays of ``ParserTables.flat``
END32 = (1 << 31) - 1

#: Bytes the process-wide cache of tables holds (estimated: 64 per symbol and per rule).
CACHE_BYTES = 64 << 20


@dataclass(frozen=True)
class NestingTables:
    """The nesting analysis behind a depth limit (``parser._DepthLimit`` reads it): ``net`` per
    symbol (a lexeme's number, a rule's ``~rule``: the fixed depth change of any text it
    derives), and per position ``p`` the least peak above the starting depth (``peak_rest``) and
    the net change (``net_rest``) of the rest of the alternative from ``p``. Read-only."""

    net: dict[int, int]
    peak_rest: tuple[int, ...]
    net_rest: tuple[int, ...]


@dataclass(frozen=True)
class ParserTables:
    """A rewritten grammar laid out for the parser (see the module docstring). Read-only: shared
    by every parser of a grammar with this structure."""

    #: every alternative's symbols, each followed by ``END``
    symbols: tuple[int, ...]
    #: per rule: the positions its alternatives start at
    firsts: tuple[tuple[int, ...], ...]
    #: per rule: those of ``firsts`` whose alternative begins with a lexeme, and the others
    lexeme_firsts: tuple[tuple[int, ...], ...]
    other_firsts: tuple[tuple[int, ...], ...]
    start: int
    start_nullable: bool
    #: how the rules past the grammar's own were named (``Rewritten.new_rules``)
    new_rules: tuple[tuple[int, str], ...]
    #: the largest size the rewrite reached (``Limits.grammar_size`` is checked against it)
    peak_size: int
    #: the nesting analysis, where the grammar has a depth limit
    nesting: NestingTables | None
    #: the same tables as flat arrays for the compiled parser (``parser_compiled.py``): symbols
    #: (int32, ``END`` as ``END32``), per rule the offsets into and the first positions of the
    #: alternatives beginning with a lexeme and of the others (int32, CSR), and per lexeme
    #: ``net``, per position ``peak_rest`` and ``net_rest`` (int64; empty without a depth limit)
    flat: tuple[np.ndarray, ...] = field(compare=False, repr=False)

    def names(self, grammar: Grammar) -> list[str]:
        """The rule names of the rewritten grammar, for a ``grammar`` of this structure."""
        return rewritten_names(grammar.rule_names, self.new_rules)


_nesting = load("grammar_decode.engine._nesting", "the compiled nesting analysis", "it runs in Python")

_CACHE: ByteBoundedLRU[ParserTables] = ByteBoundedLRU(CACHE_BYTES)


def structure_key(grammar: Grammar, empty: frozenset[int]) -> tuple[object, ...]:
    """Everything the tables of ``grammar`` depend on (``empty``: its lexemes that match
    nothing). Sets as sorted tuples, so that the key is a tuple of atoms and of such tuples, and
    taken off the cyclic collector's lists at once: the cache keeps it, and a long-lived tuple of
    tuples is untracked only by a full collection, each of which otherwise visited every symbol
    of every grammar compiled since the one before (a third to a half of the references a full
    collection met in a replay of every compare task)."""
    limited = grammar.max_depth is not None
    return untracked((tuple(map(tuple, grammar.alternatives)), grammar.start, len(grammar.lexeme_exprs),
                      tuple(sorted(empty)), tuple(sorted(grammar.ignored)), grammar.max_depth,
                      tuple(sorted(grammar.nesting.items())) if limited else None))


def parser_tables(grammar: Grammar, max_size: int | None = None) -> tuple[ParserTables, list[str]]:
    """The tables of ``grammar`` and its rewritten rule names: from the cache where a grammar of
    the same structure was seen, else built (``build_tables``) and kept. ``max_size`` as
    ``transform.rewrite``'s (``GrammarTooLarge``; its ``GrammarError`` for a grammar without a
    start); ``GrammarError`` where a depth limit meets a rule whose depth change is not fixed."""
    if max_size is None:
        max_size = active().grammar_size
    empty = empty_lexemes(grammar)
    key = structure_key(grammar, empty)
    found = _CACHE.get(key)
    if found is None:
        found = build_tables(grammar, max_size, empty)
        _CACHE.put(key, found, 64 * (len(found.symbols) + len(found.firsts)) + 1024)
    else:
        too_large(found.peak_size, max_size)
    return found, found.names(grammar)


def build_tables(grammar: Grammar, max_size: int, empty: frozenset[int] | None = None) -> ParserTables:
    """The tables of ``grammar``, built (no cache)."""
    rewritten = rewrite(grammar, max_size, empty)
    symbols: list[int] = []
    firsts: list[tuple[int, ...]] = []
    for alternatives in rewritten.alternatives:
        starts = []
        for alternative in alternatives:
            starts.append(len(symbols))
            symbols.extend(alternative)
            symbols.append(END)
        firsts.append(tuple(starts))
    check_deadline()
    flat = tuple(symbols)
    rule_firsts = tuple(firsts)
    layout = _layout32(flat)
    nesting = None
    if grammar.max_depth is not None:
        nesting = nesting_tables(flat, rule_firsts, rewritten.names, len(grammar.lexeme_exprs), grammar.nesting,
                                 layout=layout)
        check_deadline()
    lexeme_firsts = tuple(tuple(p for p in starts if 0 <= flat[p] < END) for starts in rule_firsts)
    other_firsts = tuple(tuple(p for p in starts if not 0 <= flat[p] < END) for starts in rule_firsts)
    # tuples of ints (or of such tuples) off the collector's lists at once: the cache keeps them,
    # and a tuple of tuples is untracked only by a collection of the generation it has reached
    # (a full one, which visited thousands of items per table of every grammar compiled since)
    flat, rule_firsts, lexeme_firsts, other_firsts = map(untracked, (flat, rule_firsts, lexeme_firsts, other_firsts))
    return ParserTables(
        symbols=flat, firsts=rule_firsts, lexeme_firsts=lexeme_firsts, other_firsts=other_firsts,
        start=rewritten.start, start_nullable=rewritten.start_nullable, new_rules=untracked(tuple(rewritten.new_rules)),
        peak_size=rewritten.peak_size, nesting=nesting,
        flat=_flat_arrays(flat, lexeme_firsts, other_firsts, nesting, len(grammar.lexeme_exprs), layout))


def _layout32(symbols: tuple[int, ...]) -> np.ndarray:
    """The layout's symbols as int32, ``END`` as ``END32``."""
    flat = np.array(symbols, dtype=np.int64)
    flat[flat == END] = END32
    return flat.astype(np.int32)


def _flat_arrays(symbols: tuple[int, ...], lexeme_firsts: tuple[tuple[int, ...], ...],
                 other_firsts: tuple[tuple[int, ...], ...], nesting: NestingTables | None,
                 lexeme_count: int, layout: np.ndarray) -> tuple[np.ndarray, ...]:
    """``ParserTables.flat`` (see there; ``layout``: ``_layout32(symbols)``). O(grammar), in numpy."""
    out = [layout]
    for per_rule in (lexeme_firsts, other_firsts):
        out.append(np.cumsum([0, *map(len, per_rule)], dtype=np.int64).astype(np.int32))
        out.append(np.fromiter((p for starts in per_rule for p in starts), dtype=np.int32))
    if nesting is None:
        out += [np.zeros(0, dtype=np.int64)] * 3
    else:
        net = np.zeros(lexeme_count, dtype=np.int64)
        for lexeme in range(lexeme_count):
            net[lexeme] = nesting.net.get(lexeme, 0)
        out += [net, np.array(nesting.peak_rest, dtype=np.int64), np.array(nesting.net_rest, dtype=np.int64)]
    for array in out:
        array.flags.writeable = False
    return tuple(out)


def cache_info() -> dict[str, int]:
    """Entries, bytes, hits and misses of the process-wide cache of tables."""
    return _CACHE.info()


def nesting_tables(symbols: tuple[int, ...], firsts: tuple[tuple[int, ...], ...], names: list[str], lexeme_count: int,
                   nesting: dict[int, tuple[int, int]], *, compiled: bool | None = None,
                   mutation: int = 0, layout: np.ndarray | None = None) -> NestingTables:
    """The nesting analysis of a layout (``symbols``, ``firsts`` as ``ParserTables``'s; ``names``
    of its rules, for the error; ``nesting``: each lexeme's (net, peak)): by the C kernel
    (``_nesting.c``) where it is built and the kernels are selected (``compiled``), else by
    ``_Nesting``, the Python reference it equals (``tests/engine/test_parser_tables.py``).
    O(grammar) but for the peaks' fixed point, which revisits what a cycle reaches. ``mutation``
    (tests only): a broken kernel (1: no worklist after the pass in dependency order).
    ``layout``: ``_layout32(symbols)`` where the caller has it.

    Raises:
        GrammarError: a rule changes the depth by different amounts in different derivations.
    """
    if compiled is None:
        compiled = selected(_nesting)
    if not compiled:
        analysis = _Nesting(symbols, firsts, names, lexeme_count, nesting)
        return NestingTables(analysis.net, analysis.peak_rest, analysis.net_rest)
    if _nesting is None:
        raise RuntimeError("the compiled nesting analysis is not built here (pip install -e . builds it)")
    if layout is None:
        layout = _layout32(symbols)
    lexeme_net = np.zeros(lexeme_count, dtype=np.int64)
    lexeme_peak = np.zeros(lexeme_count, dtype=np.int64)
    for lexeme, (net, peak) in nesting.items():
        if 0 <= lexeme < lexeme_count:
            lexeme_net[lexeme], lexeme_peak[lexeme] = net, peak
    out = _nesting.nesting(layout, np.cumsum([0, *map(len, firsts)], dtype=np.int64).astype(np.int32),
                           np.fromiter(itertools.chain.from_iterable(firsts), dtype=np.int32), lexeme_net, lexeme_peak,
                           check_deadline, mutation)
    if out[0] == 1:
        raise GrammarError(f"rule {names[out[1]]!r} changes the nesting depth by different amounts: a depth limit "
                           "needs a fixed one")
    _, rule_net, known, peak_rest, net_rest = out
    net: dict[int, int] = dict(enumerate(lexeme_net.tolist()))
    totals = np.frombuffer(rule_net, dtype=np.int64)
    for rule in np.flatnonzero(np.frombuffer(known, dtype=np.uint8)).tolist():
        net[~rule] = int(totals[rule])
    return NestingTables(net, untracked(tuple(np.frombuffer(peak_rest, dtype=np.int64).tolist())),
                         untracked(tuple(np.frombuffer(net_rest, dtype=np.int64).tolist())))


class _Nesting:
    """The nesting analysis behind ``Grammar.max_depth``. Every symbol changes the depth by a
    fixed ``net`` (a lexeme's declared one; a rule's, the same for each of its derivations, as in
    JSON, checked here) and reaches at least ``peak`` levels above its start in its shallowest
    derivation (a least fixed point over the rules). ``peak_rest[p]``/``net_rest[p]`` say the same
    of the rest of an alternative from position ``p``. O(grammar): the two fixed points walk the
    alternatives in Python once each (a worklist), the passes over every position run in numpy
    (a compile's tail was these loops: 0.3 s over 25 large SchemaStore grammars)."""

    def __init__(self, symbols: tuple[int, ...], firsts: tuple[tuple[int, ...], ...], names: list[str],
                 lexeme_count: int, nesting: dict[int, tuple[int, int]]) -> None:
        self.symbols = symbols
        flat = np.array(symbols, dtype=np.int64)
        ends = flat == END
        rule_at = (flat < 0) & ~ends
        lexeme_net = np.zeros(lexeme_count, dtype=np.int64)
        lexeme_peak = np.zeros(lexeme_count, dtype=np.int64)
        for lexeme, (net, peak) in nesting.items():
            if 0 <= lexeme < lexeme_count:
                lexeme_net[lexeme], lexeme_peak[lexeme] = net, peak
        self.net: dict[int, int] = dict(enumerate(lexeme_net.tolist()))
        peak: dict[int, int] = dict(enumerate(lexeme_peak.tolist()))
        # alternatives in layout order (rule by rule), each position's alternative, and which
        # alternatives use each rule (CSR: users_at[rule]..users_at[rule + 1] in users)
        alternatives = [(rule, first) for rule, starts in enumerate(firsts) for first in starts]
        owner = np.cumsum(ends) - ends
        rule_positions = np.flatnonzero(rule_at)
        used = ~flat[rule_positions]
        using = owner[rule_positions]
        order = np.argsort(used, kind="stable")
        users = using[order].tolist()
        users_at = np.searchsorted(used[order], np.arange(len(firsts) + 1)).tolist()
        unknown = np.bincount(using, minlength=len(alternatives)).tolist()
        check_deadline()
        # each rule's net, from its first alternative whose rules are all known (a worklist: linear)
        rule_net: dict[int, int] = {}
        ready = [index for index, count in enumerate(unknown) if count == 0]
        steps = 0
        while ready:
            steps += 1
            if not steps & 1023:
                check_deadline()
            rule, first = alternatives[ready.pop()]
            if rule in rule_net:
                continue
            rule_net[rule] = self._alternative_net(first, rule_net)  # type: ignore[assignment]
            for index in users[users_at[rule]:users_at[rule + 1]]:
                unknown[index] -= 1
                if unknown[index] == 0:
                    ready.append(index)
        # every alternative of a rule changes the depth by the rule's net (an alternative that
        # reads a rule without one has none, as such a rule has none)
        known = np.zeros(len(firsts), dtype=bool)
        nets = np.zeros(len(firsts), dtype=np.int64)
        for rule, total in rule_net.items():
            if total is not None:
                known[rule], nets[rule] = True, total
        symbol_net = np.zeros(len(flat), dtype=np.int64)
        lexeme_at = ~ends & ~rule_at
        symbol_net[lexeme_at] = lexeme_net[flat[lexeme_at]]
        symbol_net[rule_positions] = nets[used]
        unknown_at = np.zeros(len(flat), dtype=np.int64)
        unknown_at[rule_positions] = ~known[used]
        starts = np.array([first for _rule, first in alternatives], dtype=np.int64)
        if len(starts):
            totals = np.add.reduceat(symbol_net, starts)
            without = np.add.reduceat(unknown_at, starts) > 0
            owners = np.array([rule for rule, _first in alternatives], dtype=np.int64)
            wrong = np.flatnonzero(np.where(without, known[owners], ~known[owners] | (totals != nets[owners])))
            if len(wrong):
                raise GrammarError(f"rule {names[alternatives[int(wrong[0])][0]]!r} changes the nesting depth by "
                                   "different amounts: a depth limit needs a fixed one")
        for rule, total in rule_net.items():
            self.net[~rule] = total
        check_deadline()
        # each rule's shallowest peak: a least fixed point from above. Rules are evaluated once
        # each in dependency order (a rule after those it uses, cycles aside), then a worklist
        # re-evaluates only the alternatives that read a rule before its peak went down (those
        # a cycle reaches): O(grammar) where the grammar has no recursion, instead of one
        # re-evaluation of every user each time a rule's value falls. Each alternative is read
        # right to left from its own tuple: max(peak, net + the rest's peak).
        inf = 1 << 40
        rule_peak = [inf] * len(firsts)
        evaluated = [False] * len(alternatives)
        work: list[int] = []

        def lowered(rule: int, value: int) -> None:
            rule_peak[rule] = value
            work.extend(index for index in users[users_at[rule]:users_at[rule + 1]] if evaluated[index])

        net = self.net
        end_positions = np.flatnonzero(ends)
        bodies = [symbols[first:end][::-1] for (_rule, first), end in zip(alternatives, end_positions.tolist())]

        def rest_peak(index: int) -> int:
            out = 0
            for symbol in bodies[index]:
                own = peak[symbol] if symbol >= 0 else rule_peak[~symbol]
                if own >= inf:
                    return inf
                rest = net[symbol] + out
                out = own if own > rest else rest
            return out

        first_alternative = [0] * (len(firsts) + 1)
        for rule, starts_of_rule in enumerate(firsts):
            first_alternative[rule + 1] = first_alternative[rule] + len(starts_of_rule)
        for rule in _dependency_order(bodies, first_alternative):
            steps += 1
            if not steps & 1023:
                check_deadline()
            best = inf
            for index in range(first_alternative[rule], first_alternative[rule + 1]):
                evaluated[index] = True
                value = rest_peak(index)
                if value < best:
                    best = value
            if best < rule_peak[rule]:
                lowered(rule, best)
        while work:
            steps += 1
            if not steps & 1023:
                check_deadline()
            index = work.pop()
            rule = alternatives[index][0]
            value = rest_peak(index)
            if value < rule_peak[rule]:
                lowered(rule, value)
        for rule, value in enumerate(rule_peak):
            peak[~rule] = value
        check_deadline()
        # the rest of each alternative, from its end back, one distance from the end at a time
        # (alternatives are short: a few passes): net_rest[p] = net + net_rest[p + 1], peak_rest[p]
        # = max(peak, net + peak_rest[p + 1]); 0 at END
        symbol_peak = np.zeros(len(flat), dtype=np.int64)
        symbol_peak[lexeme_at] = lexeme_peak[flat[lexeme_at]]
        symbol_peak[rule_positions] = np.array(rule_peak, dtype=np.int64)[used]
        distance = end_positions[owner] - np.arange(len(flat)) if len(end_positions) else np.zeros(0, dtype=np.int64)
        net_rest = np.zeros(len(flat), dtype=np.int64)
        peak_rest = np.zeros(len(flat), dtype=np.int64)
        by_distance = np.argsort(distance, kind="stable")
        bounds = np.searchsorted(distance[by_distance], np.arange(int(distance.max(initial=0)) + 2))
        for step in range(1, len(bounds) - 1):
            at = by_distance[bounds[step]:bounds[step + 1]]
            net_rest[at] = symbol_net[at] + net_rest[at + 1]
            peak_rest[at] = np.maximum(symbol_peak[at], symbol_net[at] + peak_rest[at + 1])
        self.peak_rest, self.net_rest = untracked(tuple(peak_rest.tolist())), untracked(tuple(net_rest.tolist()))

    def _alternative_net(self, first: int, rule_net: dict[int, int]) -> int | None:
        symbols, total, position = self.symbols, 0, first
        while symbols[position] != END:
            symbol = symbols[position]
            part = self.net.get(symbol) if symbol >= 0 else rule_net.get(~symbol)
            if part is None:
                return None
            total += part
            position += 1
        return total


def _dependency_order(bodies: list[tuple[int, ...]], first_alternative: list[int]) -> list[int]:
    """Every rule once, each after the rules its alternatives use except where a cycle makes
    that impossible (a depth-first post-order, iterative: grammars nest deeply). ``bodies``: each
    alternative's symbols, last first; rule ``r``'s are ``first_alternative[r]`` up to ``[r + 1]``."""
    rules = len(first_alternative) - 1

    def used(rule: int) -> list[int]:
        return [~symbol for index in range(first_alternative[rule], first_alternative[rule + 1])
                for symbol in reversed(bodies[index]) if symbol < 0]

    order: list[int] = []
    state = [0] * rules  # 0 unseen, 1 on the stack, 2 done
    for root in range(rules):
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, used(root))]
        while stack:
            rule, pending = stack[-1]
            if pending:
                other = pending.pop()
                if not state[other]:
                    state[other] = 1
                    stack.append((other, used(other)))
                continue
            stack.pop()
            state[rule] = 2
            order.append(rule)
    return order
