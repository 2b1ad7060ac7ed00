"""A general context-free parser over lexemes, with hash-consed states.

The grammar is first rewritten (``transform.py``: no empty alternatives, no unit cycles, no left
recursion; the language is unchanged) and laid out flat (``parser_tables.py``, which caches those
tables by the grammar's structure). The parser then predicts top-down and keeps every
alternative alive at once, like a generalised LL parser: a *state* is a set of *threads*, each a
position inside an alternative that expects a lexeme next, together with the set of *return
points* (``Cont``) it goes back to when that alternative completes. Return points form a
graph-structured stack, merged by position at every level, so one state stands for every parse
stack of the input read so far, in a canonical form: two inputs leading to the same set of
stacks lead to the same ``ParseState`` object. Ambiguity costs threads, never copies of stacks.

A return point is pushed only when something follows the rule being entered (tail calls), so a
right-recursive list keeps a flat stack however long it grows.

A grammar with a depth limit (``Grammar.max_depth``, with the nesting of its lexemes) keeps the
nesting depth in each state and, of its threads, only those with a completion that stays within
the limit (``_DepthLimit``): no text deeper than the limit is ever a viable prefix, and no viable
prefix leads where every completion would have to go deeper.

``ParseState.scan(lexemes)`` (the state after one lexeme, any of ``lexemes``) is memoised on the
state, so a matcher that revisits a state pays a dict lookup. States and return points are interned
in weak tables and memoised weakly: they live as long as a matcher or a bounded cache holds them,
so memory stays bounded however many documents a long-running process sees. Thread-safe.
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Iterable, Sequence, TypeVar

from _weakref import _remove_dead_weakref  # what WeakValueDictionary's callbacks use

from ..errors import GrammarAdmitsNothing
from ..ir.grammar import INFINITE, Grammar
from .parser_tables import END, NestingTables, parser_tables


class Cont:
    """A return point: continue at ``position``; when that alternative completes, return to
    ``parents``. ``ROOT`` (position -1) is the end of the text."""

    __slots__ = ("position", "parents", "need", "__weakref__")

    def __init__(self, position: int, parents: frozenset["Cont"]) -> None:
        self.position = position
        self.parents = parents
        #: ``_DepthLimit.cont_need`` once asked (-1 before): a return point belongs to one parser
        self.need = -1

    def __repr__(self) -> str:
        return f"Cont({self.position}, {len(self.parents)} parents)"


ROOT = Cont(-1, frozenset())

#: Threads being gathered for a new state: per position, the sets of return points that reached
#: it (each canonical; ``Parser._state`` merges them).
Contributions = dict[int, list[frozenset[Cont]]]


def _position(thread: tuple[int, frozenset[Cont]]) -> int:
    return thread[0]

_UNSEEN = object()
_T = TypeVar("_T")
_NO_CONTS: frozenset[Cont] = frozenset()
#: Entries of ``_DepthLimit._most_need`` before it is cleared.
_MOST_NEED_ENTRIES = 1 << 16


class ParseState:
    """Every parse of the lexemes read so far. Immutable and interned: compare by identity."""

    __slots__ = ("parser", "threads", "accepting", "depth", "expected", "lexer_start", "_scans", "__weakref__")

    def __init__(self, parser: "Parser", threads: tuple[tuple[int, frozenset[Cont]], ...], accepting: bool,
                 depth: int = 0) -> None:
        self.parser = parser
        self.threads = threads
        self.accepting = accepting
        self.depth = depth  # nesting depth of the text read (0 without a depth limit)
        symbols = parser.symbols
        self.expected = frozenset(symbols[position] for position, _ in threads) | parser.ignored
        #: the lexer state that begins the next lexeme, once the recognizer has asked
        #: (``Recognizer.lexer_start``; a parser belongs to one recognizer)
        self.lexer_start: int | None = None
        # successors held weakly: a strong memo would keep every state ever reached alive from
        # the initial one, and a long-running server would grow without bound
        self._scans: dict[frozenset[int], "weakref.ReferenceType[ParseState] | None"] = {}

    def scan(self, lexemes: frozenset[int]) -> "ParseState | None":
        """The state after one lexeme that is any of ``lexemes`` (several when the text matched
        several lexemes), or None when none is expected here. Memoised on this state while the
        successor is alive (interning makes a recomputed one the same object)."""
        memo = self._scans.get(lexemes, _UNSEEN)
        if memo is None:
            return None
        if memo is not _UNSEEN:
            found = memo()  # type: ignore[operator]
            if found is not None:
                return found
        found = self.parser._scan(self, lexemes)
        self._scans[lexemes] = None if found is None else weakref.ref(found)
        return found

    def __repr__(self) -> str:
        return f"ParseState({len(self.threads)} threads, accepting={self.accepting})"


def _interned(table: dict[tuple, "weakref.ReferenceType[_T]"], key: tuple, made: _T) -> _T:
    """The object interned under ``key`` in a weak intern table (a dict of weak references, each
    dropped by its callback once its object is gone: ``weakref.WeakValueDictionary``'s layout,
    without its Python-level methods, which cost a microsecond per lookup): the live one there,
    else ``made``, entered. The caller holds the parser's lock (two threads making one object
    keep the first)."""
    known = table.get(key)
    found = None if known is None else known()
    if found is None:
        table[key] = weakref.ref(made, functools.partial(_drop_dead, table, key))
        return made
    return found


def _drop_dead(table: dict, key: tuple, _reference: object) -> None:
    """A weak intern table's callback: ``key``'s entry goes if its object is gone (a new live
    object entered under the same key meanwhile stays)."""
    _remove_dead_weakref(table, key)


class Parser:
    """Tables for one grammar, and the interning of its states. Built once per grammar."""

    def __init__(self, grammar: Grammar, max_size: int | None = None) -> None:
        tables, self.rule_names = parser_tables(grammar, max_size)
        self.symbols = tables.symbols
        self.firsts = tables.firsts
        # each rule's alternatives split by what they begin with: a lexeme (a thread at once,
        # ``_expand`` adds it without its worklist), or a rule (expanded further)
        self._lexeme_firsts = tables.lexeme_firsts
        self._other_firsts = tables.other_firsts
        self.ignored = frozenset(grammar.ignored)
        self._conts: dict[tuple, weakref.ReferenceType[Cont]] = {}
        self._states: dict[tuple, weakref.ReferenceType[ParseState]] = {}
        self._lock = threading.Lock()
        self._rest: Sequence[float] | None = None
        self._cont_cost: "weakref.WeakKeyDictionary[Cont, float]" = weakref.WeakKeyDictionary()
        self._parse_cost: "weakref.WeakKeyDictionary[ParseState, float]" = weakref.WeakKeyDictionary()
        self.limit = None if tables.nesting is None else _DepthLimit(grammar.max_depth, tables.nesting)  # type: ignore[arg-type]
        threads: Contributions = {}
        for position in tables.firsts[tables.start]:
            self._expand(position, frozenset((ROOT,)), threads)
        initial = self._state(threads, tables.start_nullable)
        if initial is None:
            raise GrammarAdmitsNothing(f"the grammar admits no text within {grammar.max_depth} levels of nesting",
                                       grammar.max_depth)
        self.initial = initial

    # -- interning -----------------------------------------------------------------------------

    def _cont(self, position: int, parents: frozenset[Cont]) -> Cont:
        key = (position, parents)
        known = self._conts.get(key)
        found = None if known is None else known()
        if found is None:
            with self._lock:
                found = _interned(self._conts, key, Cont(position, parents))
        return found

    def _merge(self, conts: Iterable[Cont], memo: dict[frozenset[Cont], frozenset[Cont]] | None = None) -> frozenset[Cont]:
        """The canonical form of a set of return points: one per position, parents merged.
        Merging return points merges their parents in turn; ``memo`` keeps each set's answer for
        the rest of one merge, because in a highly ambiguous grammar (``r → r r r a | ε``) the
        same sets meet again along every path of the return-point graph, exponentially many
        without it. Only for the one call: a memo kept across states held their return points
        alive, for the collector to visit, and cost more than it saved (3-10 % of the mask time over
        the compare tasks)."""
        key = frozenset(conts)
        if memo is not None:
            found = memo.get(key)
            if found is not None:
                return found
        by_position: dict[int, list[Cont]] = {}
        for cont in key:
            by_position.setdefault(cont.position, []).append(cont)
        out = []
        for position, group in by_position.items():
            if len(group) == 1:
                out.append(group[0])
            else:
                if memo is None:
                    memo = {}
                parents = self._merge([p for c in group for p in c.parents], memo)
                out.append(self._cont(position, parents))
        merged = frozenset(out)
        if memo is not None:
            memo[key] = merged
        return merged

    def _state(self, threads: Contributions, accepting: bool, depth: int = 0) -> ParseState | None:
        """The interned state of ``threads``: per position, the sets of return points that reached
        it. Each set is canonical already (a state's own, a return point's parents, or a single
        new return point), so a position reached by one set, or by the same set each time, keeps
        that set as it is; only positions that several different sets reach are merged. Under a
        depth limit, the return points no completion within the limit follows are dropped
        (``_DepthLimit.kept``; a subset of a canonical set is canonical)."""
        limit = self.limit
        merged = []
        for position, parts in threads.items():
            conts = parts[0]
            for other in parts:
                if other is not conts:
                    conts = self._merge(frozenset().union(*parts))
                    break
            if limit is not None:
                conts = limit.kept(position, conts, depth)
                if not conts:
                    continue
            merged.append((position, conts))
        if not merged and not accepting:
            return None
        merged.sort(key=_position)
        canonical = tuple(merged)
        key = (canonical, accepting, depth)
        known = self._states.get(key)
        found = None if known is None else known()
        if found is None:
            with self._lock:
                found = _interned(self._states, key, ParseState(self, canonical, accepting, depth))
        return found

    # -- moves ---------------------------------------------------------------------------------

    def _expand(self, position: int, conts: frozenset[Cont], threads: Contributions) -> bool:
        """Add the threads reached from ``position`` (with return points ``conts``) without
        reading a lexeme; returns True when the end of the text is reached."""
        symbols = self.symbols
        lexeme_firsts, other_firsts = self._lexeme_firsts, self._other_firsts
        accepted = False
        work = [(position, conts)]
        # each (position, return points) once: unit rules and shared rules make diamonds (A → B |
        # C, B → D, C → D), which without this would be walked once per path, 2^k for k of them
        seen = set(work)
        while work:
            position, conts = work.pop()
            symbol = symbols[position]
            if symbol == END:
                for cont in conts:
                    if cont is ROOT:
                        accepted = True
                    elif (cont.position, cont.parents) not in seen:
                        seen.add((cont.position, cont.parents))
                        work.append((cont.position, cont.parents))
            elif symbol >= 0:
                found = threads.get(position)
                if found is None:
                    threads[position] = [conts]
                else:
                    found.append(conts)
            else:
                after = position + 1
                inner = conts if symbols[after] == END else frozenset((self._cont(after, conts),))
                # alternatives that begin with a lexeme are threads at once: no worklist entry and
                # no ``seen`` check (a repeat only adds the same set again, which ``_state`` takes
                # once); a rule's property list has hundreds of them
                for first in lexeme_firsts[~symbol]:
                    found = threads.get(first)
                    if found is None:
                        threads[first] = [inner]
                    elif found[-1] is not inner:
                        found.append(inner)
                for first in other_firsts[~symbol]:
                    if (first, inner) not in seen:
                        seen.add((first, inner))
                        work.append((first, inner))
        return accepted

    def _scan(self, state: ParseState, lexemes: frozenset[int]) -> ParseState | None:
        symbols = self.symbols
        threads: Contributions = {}
        accepting = False
        depth = state.depth
        for position, conts in state.threads:
            if symbols[position] in lexemes:
                accepting |= self._expand(position + 1, conts, threads)
                if self.limit is not None:
                    depth = state.depth + self.limit.net[symbols[position]]  # one text: one net
        if lexemes & self.ignored:
            # an ignored lexeme leaves the parse where it was
            for position, conts in state.threads:
                threads.setdefault(position, []).append(conts)
            accepting |= state.accepting
        return self._state(threads, accepting, depth)

    def accepts(self, lexeme_sequence: Iterable[int]) -> bool:
        """Whether this sequence of lexemes is a sentence (for tests)."""
        state: ParseState | None = self.initial
        for lexeme in lexeme_sequence:
            if state is None:
                return False
            state = state.scan(frozenset((lexeme,)))
        return state is not None and state.accepting

    def live_states(self) -> int:
        """How many parse states are alive (held by a matcher, a cache or a caller)."""
        with self._lock:
            return sum(1 for reference in list(self._states.values()) if reference() is not None)

    # -- completion costs (engine/completion.py) -----------------------------------------------

    def set_rest(self, rest: Sequence[float]) -> None:
        """The fewest bytes from each position to the end of its alternative
        (``Completions.rest``), which the costs below read. The first table given is kept: every
        caller computes the same one from the grammar."""
        with self._lock:
            if self._rest is None:
                self._rest = rest

    def cont_cost(self, cont: Cont) -> float:
        """Fewest bytes from a return point to the end of the text (memoised weakly on it)."""
        if cont is ROOT:
            return 0
        memo = self._cont_cost
        found = memo.get(cont)
        if found is not None:
            return found
        rest = self._rest
        if rest is None:
            raise RuntimeError("set_rest first")
        stack = [cont]  # iterative post-order: stacks can be deep
        while stack:
            top = stack[-1]
            pending = [p for p in top.parents if p is not ROOT and p not in memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if top in memo:
                continue
            below = min((0 if p is ROOT else memo[p]) for p in top.parents)
            memo[top] = min(INFINITE, rest[top.position] + below)
        return memo[cont]

    def parse_cost(self, parse: ParseState) -> float:
        """Fewest bytes that complete the text from a lexeme boundary with this parse (the
        cheapest thread: the rest of its alternative and its cheapest return point)."""
        found = self._parse_cost.get(parse)
        if found is None:
            if parse.accepting:
                found = 0
            else:
                rest = self._rest
                if rest is None:
                    raise RuntimeError("set_rest first")
                found = INFINITE
                for position, conts in parse.threads:
                    below = min(self.cont_cost(c) for c in conts)
                    found = min(found, rest[position] + below)
            self._parse_cost[parse] = found
        return found

    def after_costs(self, parse: ParseState) -> dict[int, float]:
        """For each lexeme a thread of ``parse`` expects: the fewest bytes completing the text
        after it, ``parse_cost(parse.scan({lexeme}))`` without the scan: the rest of the thread's
        alternative (``rest[p + 1]``) and its cheapest return point."""
        rest = self._rest
        if rest is None:
            raise RuntimeError("set_rest first")
        symbols = self.symbols
        out: dict[int, float] = {}
        for position, conts in parse.threads:
            cost = min(INFINITE, rest[position + 1] + min(self.cont_cost(c) for c in conts))
            lexeme = symbols[position]
            if cost < out.get(lexeme, INFINITE):
                out[lexeme] = cost
        return out


class _DepthLimit:
    """``Grammar.max_depth`` enforced on parse states, from the nesting analysis
    (``parser_tables.NestingTables``: every symbol's fixed ``net`` change of depth, and per
    position the least ``peak_rest`` and the ``net_rest`` of the rest of its alternative): a
    thread at depth ``d`` has a completion within the limit exactly when ``d`` plus the peak of
    its rest and of its cheapest return path is at most the limit. O(threads) per state."""

    def __init__(self, max_depth: int, tables: NestingTables) -> None:
        self.max_depth = max_depth
        #: per set of return points: the largest ``cont_need`` in it (``kept``)
        self._most_need: dict[frozenset[Cont], int] = {}
        self.net = tables.net
        self.peak_rest = tables.peak_rest
        self.net_rest = tables.net_rest

    def cont_need(self, cont: Cont) -> int:
        """Fewest levels above the current depth a completion from return point ``cont`` must
        reach (0 at the end of the text). Memoised on the return point itself (``Cont.need``: a
        WeakKeyDictionary lookup cost microseconds per thread, on every parse state made)."""
        if cont is ROOT:
            return 0
        if cont.need >= 0:
            return cont.need
        stack = [cont]  # iterative post-order: stacks can be deep
        while stack:
            top = stack[-1]
            pending = [p for p in top.parents if p is not ROOT and p.need < 0]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            below = min(0 if p is ROOT else p.need for p in top.parents)
            top.need = max(self.peak_rest[top.position], self.net_rest[top.position] + below)
        return cont.need

    def kept(self, position: int, conts: frozenset[Cont], depth: int) -> frozenset[Cont]:
        """The return points of a thread at ``position`` and ``depth`` that some completion within
        the limit follows: ``conts`` itself when all are (the common case, answered from the
        largest need among them, memoised per set), else the subset."""
        room = self.max_depth - depth  # type: ignore[operator]
        if self.peak_rest[position] > room:
            return _NO_CONTS
        room -= self.net_rest[position]
        most = self._most_need.get(conts)
        if most is None:
            need = self.cont_need
            most = max(need(c) for c in conts)
            if len(self._most_need) >= _MOST_NEED_ENTRIES:
                self._most_need.clear()  # a cache: states being made ask again
            self._most_need[conts] = most
        if most <= room:
            return conts
        need = self.cont_need
        return frozenset([c for c in conts if need(c) <= room])
