"""Context-free grammars over lexemes: the IR every front end compiles to.

A ``Grammar`` has *lexemes* (regular expressions over bytes, in the grammar's ``ExprSet``) and
*rules* (non-terminals, each a list of alternatives, each a sequence of symbols). A symbol is an
``int``: a lexeme ``t`` is ``t`` itself (>= 0), a rule ``r`` is ``~r`` (< 0). Recursion of every
kind is allowed, left recursion included; so are ambiguity and empty alternatives.

Lexemes never match the empty string: ``token(expr)`` turns a nullable expression into an
optional rule around its non-empty part. Between two lexemes the text is split by maximal munch:
a lexeme ends where the next byte cannot extend it.

Analysis: ``shortest_derivations`` gives the fewest bytes each rule derives; productive and
nullable rules follow from it (finite, zero). One pass, so recursion of any kind is fine.
"""

from __future__ import annotations

import heapq
import math
from typing import Callable, Hashable, Iterable, NamedTuple, Protocol, Sequence

from ..errors import GrammarError
from ..limits import check_deadline
from .regex import NOTHING, ExprSet, shared_exprs

Symbol = int
Alternative = tuple[Symbol, ...]


def is_lexeme(symbol: Symbol) -> bool:
    return symbol >= 0


class UniqueLexeme(NamedTuple):
    """A lexeme whose texts are the items of an array with ``uniqueItems``: no two texts of it
    written directly inside one array may denote the same value. ``value(text)`` is the value a
    text denotes (the decoded JSON string); ``spellings(value)`` an expression for every text of
    the lexeme that denotes ``value`` (each escaped spelling); ``delimiter`` the byte every text
    begins and ends with (``"``)."""

    value: Callable[[bytes], Hashable]
    spellings: Callable[[Hashable], int]
    delimiter: int


class LexemeGuard(Protocol):
    """A check on a lexeme's texts that its regular expression does not make (a host name's
    A-labels must decode to valid U-labels): the lexeme's language is the texts its expression
    matches *and* the guard accepts. The lexer carries a *tag* beside the lexeme's expression
    (``engine.lexer``): ``start`` before the first byte, ``step`` per byte. A tag keeps the lexeme
    alive only where one of ``completions(tag)`` (each a whole remainder the guard accepts, up to a
    point where the guard has nothing left to check) keeps the expression alive too, so no dead end
    is admitted. ``text_ok`` is the same judgement read from a whole text, for the reference
    (``oracle``). Implementations are immutable and thread-safe."""

    start: Hashable

    def step(self, tag: Hashable, byte: int) -> Hashable | None:
        """The tag after ``byte``; None where the text can no longer be accepted."""
        ...

    def complete(self, tag: Hashable) -> bool:
        """Whether a text whose expression is complete at ``tag`` is accepted."""
        ...

    def completions(self, tag: Hashable) -> Iterable[bytes] | None:
        """None where the tag needs no witness (every completion of the expression is checked
        only later, and one of them passes); else the remainders that vouch for it, each ending
        where the guard has nothing left to check (none: the tag is a dead end), cheapest first
        (the lexer stops at the first one the expression admits)."""
        ...

    # Optional: ``splits(tag) -> tuple[int, ...] | None``, byte sets (256-bit masks) such that two
    # bytes in no set that tells them apart (in each set or in none) step ``tag`` alike; None
    # where every byte may step differently. Where a guard has it, the lexer makes a guarded
    # state's transitions per class of bytes, not per byte (``engine.dfa``).

    def text_ok(self, text: bytes, complete: bool, alive: Callable[[bytes], bool]) -> bool:
        """Whether ``text`` (the lexeme's bytes so far; all of them when ``complete``) passes the
        guard, with ``alive(rest)`` saying whether the expression admits ``text + rest`` as a
        prefix of one of its texts."""
        ...


class Grammar:
    """A mutable grammar under construction; the engine reads it."""

    def __init__(self, exprs: ExprSet | None = None) -> None:
        self.exprs = exprs if exprs is not None else shared_exprs()
        self.lexeme_exprs: list[int] = []
        self.lexeme_names: list[str] = []
        self._lexeme_ids: dict[int, int] = {}
        self.rule_names: list[str] = []
        self.alternatives: list[list[Alternative]] = []
        self.ignored: list[int] = []
        self.start: Symbol | None = None
        #: (net, peak) of the lexemes that open or close a nesting level, by lexeme: a text
        #: matching it changes the nesting depth by ``net`` and reaches ``peak`` levels above
        #: where it starts (``[``: (1, 1); ``]``: (-1, 0); ``[[1]]``: (0, 2)); others are (0, 0)
        self.nesting: dict[int, tuple[int, int]] = {}
        #: Deepest nesting a text may reach (None: no limit); the parser enforces it exactly
        self.max_depth: int | None = None
        #: Lexemes whose texts must be distinct values within the array that holds them
        #: (``UniqueLexeme``); the matcher enforces it where such an item ends (``engine.unique``)
        self.unique_items: dict[int, UniqueLexeme] = {}
        #: Lexemes whose texts must also pass a ``LexemeGuard`` (the lexer applies it byte by
        #: byte); ``unguarded[lexeme]`` is a guard-free expression for a subset of their texts,
        #: for front ends that build other lexemes from one (keys, unique items)
        self.guards: dict[int, LexemeGuard] = {}
        self.unguarded: dict[int, int] = {}

    def copy(self) -> "Grammar":
        """A grammar with this one's lexemes and rules at the same ids (new symbols go after them),
        on the same expression set; every list and table copied, so either can grow alone. O(size)."""
        grammar = Grammar(self.exprs)
        grammar.lexeme_exprs = list(self.lexeme_exprs)
        grammar.lexeme_names = list(self.lexeme_names)
        grammar._lexeme_ids = dict(self._lexeme_ids)
        grammar.rule_names = list(self.rule_names)
        grammar.alternatives = [list(alternatives) for alternatives in self.alternatives]
        grammar.ignored = list(self.ignored)
        grammar.start = self.start
        grammar.nesting = dict(self.nesting)
        grammar.max_depth = self.max_depth
        grammar.unique_items = dict(self.unique_items)
        grammar.guards = dict(self.guards)
        grammar.unguarded = dict(self.unguarded)
        return grammar

    # -- building ------------------------------------------------------------------------------

    def lexeme(self, expr: int, name: str = "", distinct: bool = False) -> Symbol:
        """The lexeme matching ``expr`` (one per distinct expression, unless ``distinct``: then a
        new lexeme that shares no identity with others of the same expression, as a unique
        item needs). ``expr`` must not match the empty string; see ``token``."""
        if self.exprs.nullable[expr]:
            raise GrammarError(f"lexeme {name or self.exprs.describe(expr)!r} matches the empty string")
        found = None if distinct else self._lexeme_ids.get(expr)
        if found is not None:
            return found
        index = len(self.lexeme_exprs)
        self.lexeme_exprs.append(expr)
        self.lexeme_names.append(name or self.exprs.describe(expr)[:60])
        if not distinct:
            self._lexeme_ids[expr] = index
        return index

    def token(self, expr: int, name: str = "") -> Symbol:
        """A symbol matching ``expr``: its lexeme, or, when ``expr`` matches the empty string, a
        rule with two alternatives, the lexeme of its non-empty part and nothing."""
        if not self.exprs.nullable[expr]:
            return self.lexeme(expr, name)
        non_empty = self.exprs.without_empty(expr)
        rule = self.rule(f"{name or 'token'}?")
        if non_empty == NOTHING or self.exprs.is_empty(non_empty):
            self.define(rule, [()])
        else:
            self.define(rule, [(self.lexeme(non_empty, name),), ()])
        return rule

    def rule(self, name: str) -> Symbol:
        """A new rule with no alternatives yet (``define`` gives them)."""
        if not len(self.rule_names) & 255:
            check_deadline()  # front ends build rules in loops of their own: one clock for all
        self.rule_names.append(name)
        self.alternatives.append([])
        return ~(len(self.rule_names) - 1)

    def define(self, rule: Symbol, alternatives: Iterable[Sequence[Symbol]]) -> Symbol:
        """Add ``alternatives`` to ``rule``; returns the rule."""
        if is_lexeme(rule):
            raise GrammarError("only a rule can be defined")
        for alternative in alternatives:
            self.alternatives[~rule].append(tuple(alternative))
        return rule

    def nest(self, lexeme: Symbol, net: int, peak: int) -> None:
        """Declare the nesting ``lexeme`` opens or closes (see ``nesting``). Every text a rule
        derives must change the depth by one fixed amount, as in JSON."""
        if (net, peak) != (0, 0):
            self.nesting[lexeme] = (net, peak)

    def ignore(self, expr: int, name: str = "") -> None:
        """Text matching ``expr`` may stand between any two lexemes (``%ignore`` in Lark)."""
        self.ignored.append(self.lexeme(expr, name or "ignored"))

    def symbol_name(self, symbol: Symbol) -> str:
        return self.lexeme_names[symbol] if is_lexeme(symbol) else self.rule_names[~symbol]

    def __repr__(self) -> str:
        return (f"Grammar({len(self.rule_names)} rules, {len(self.lexeme_exprs)} lexemes, "
                f"start={self.symbol_name(self.start) if self.start is not None else None})")


#: The cost of what derives nothing. A float, so that real costs, however large (a minimum of
#: 10^30 items), always compare below it.
INFINITE = math.inf


def shortest_derivations(rules: Sequence[Sequence[Alternative]], lexeme_cost: Callable[[int], int | None]) -> list[float]:
    """Fewest bytes each rule derives (``INFINITE`` for unproductive rules), given each lexeme's
    cost (None: the lexeme matches nothing). Knuth's generalisation of Dijkstra's algorithm to
    grammars: a rule's cost is final when it is the cheapest candidate left, and an alternative
    becomes a candidate once all its rules are final. O(size · log size), recursion of any kind."""
    best: list[float] = [INFINITE] * len(rules)
    uses: list[list[int]] = [[] for _ in rules]
    owner: list[int] = []
    remaining: list[int] = []
    partial: list[int] = []
    heap: list[tuple[int, int]] = []
    for rule, alternatives in enumerate(rules):
        if not rule & 1023:
            check_deadline()
        for alternative in alternatives:
            index = len(owner)
            owner.append(rule)
            total, waiting, dead = 0, 0, False
            for symbol in alternative:
                if symbol >= 0:
                    cost = lexeme_cost(symbol)
                    if cost is None:
                        dead = True
                        break
                    total += cost
                else:
                    waiting += 1
            remaining.append(-1 if dead else waiting)
            partial.append(total)
            if dead:
                continue
            for symbol in alternative:
                if symbol < 0:
                    uses[~symbol].append(index)
            if waiting == 0:
                heapq.heappush(heap, (total, rule))
    final = [False] * len(rules)
    done = 0
    while heap:
        cost, rule = heapq.heappop(heap)
        if final[rule]:
            continue
        final[rule] = True
        done += 1
        if not done & 1023:
            check_deadline()
        best[rule] = cost
        for index in uses[rule]:
            if remaining[index] <= 0:
                continue
            partial[index] += cost
            remaining[index] -= 1
            if remaining[index] == 0 and not final[owner[index]]:
                heapq.heappush(heap, (partial[index], owner[index]))
    return best
