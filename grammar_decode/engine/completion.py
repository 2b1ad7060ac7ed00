"""Shortest completions of recognizer states: lengths from the IR, canonical texts by search.

``min_bytes(state)`` is a lower bound on the bytes that complete ``state``, computed from the
IR without materialising any text (so ``minItems: 10**8`` costs nothing): the fewest bytes of
each lexeme (``ExprSet.min_length``), of each rule (a fixed point over the rewritten grammar), of
the rest of each alternative, and of each return point of the parse (memoised on the interned
parse objects). It is exact wherever maximal munch does not merge the shortest lexemes it strings
together, which the front ends arrange.

``completion(state)`` is the *canonical* completion: the shortest, then bytewise least, text that
completes the state. Canonical means consistent: after its first byte, the canonical completion
of the new state is the rest of it, which is what the closing budget's guarantee rests on
(``docs/closing-budget.md``). It is built greedily, one byte at a time, taking the least byte that
lowers ``min_bytes`` by one. The greedy step is only trusted where ``min_bytes`` is exact: if a
smaller byte leads to a state whose bound is below the target (so the bound is not exact there),
or no byte lowers the bound, ``completion`` returns None and the budget makes no claim.
"""

from __future__ import annotations

import threading
import weakref
from typing import Iterator

from ..lru import ByteBoundedLRU
from .lexer import DEAD
from ..ir.grammar import INFINITE, shortest_derivations
from ..limits import active, check_deadline
from .parser import END, ParseState
from .recognizer import Recognizer, State

_MISSING = object()


class Completions:
    """Completion lengths and canonical completions for one recognizer. Thread-safe (memos are
    filled idempotently)."""

    def __init__(self, recognizer: Recognizer, max_cache_bytes: int = 32 << 20) -> None:
        """O(lexemes): each lexeme's fewest bytes now (where a lexeme too complex to analyse is
        refused at compile time, ``RegexTooComplex``); the tables over the rewritten grammar
        (O(grammar), a large share of a big grammar's compile) on first use, as many grammars
        are only ever masked without a closing budget."""
        self.recognizer = recognizer
        #: longest canonical completion followed (bytes): ``Limits.completion_bytes`` when built
        self.limit = active().completion_bytes
        exprs = recognizer.exprs
        #: fewest bytes of each lexeme (None: it matches nothing)
        self.lexeme_min: list[int | None] = []
        for index, expr in enumerate(recognizer.grammar.lexeme_exprs):
            if not index & 255:
                check_deadline()
            self.lexeme_min.append(exprs.min_length(expr))
        self._rest: list[float] | None = None
        self._build_lock = threading.Lock()
        self._links: ByteBoundedLRU[tuple[int, State] | None] = ByteBoundedLRU(max_cache_bytes)
        self._after: "weakref.WeakKeyDictionary[ParseState, dict[int, int]]" = weakref.WeakKeyDictionary()

    @property
    def rest(self) -> list[float]:
        """``rest[p]``: fewest bytes from parser position ``p`` to the end of its alternative."""
        found = self._rest
        return found if found is not None else self._build()

    def _build(self) -> list[float]:
        with self._build_lock:  # one build, whichever thread asks first
            if self._rest is None:
                rest = self._compute()
                self.recognizer.parser.set_rest(rest)
                self._rest = rest
            return self._rest

    def _compute(self) -> list[float]:
        parser = self.recognizer.parser
        lexeme_min = self.lexeme_min
        symbols = parser.symbols
        # fewest bytes per rewritten rule
        alternatives = []
        for index, firsts in enumerate(parser.firsts):
            if not index & 1023:
                check_deadline()
            alts = []
            for first in firsts:
                position = first
                while symbols[position] != END:
                    position += 1
                alts.append(tuple(symbols[first:position]))
            alternatives.append(alts)
        check_deadline()
        rule_min = shortest_derivations(alternatives, lambda t: lexeme_min[t])
        check_deadline()
        # rest[p]: fewest bytes from position p to the end of its alternative
        rest: list[float] = [0] * len(symbols)
        for position in range(len(symbols) - 1, -1, -1):
            symbol = symbols[position]
            if symbol == END:
                continue
            if symbol >= 0:
                found = lexeme_min[symbol]
                own: float = INFINITE if found is None else found
            else:
                own = rule_min[~symbol]
            rest[position] = min(INFINITE, own + rest[position + 1])
        return rest

    def parse_cost(self, parse: ParseState) -> float:
        """Fewest bytes that complete the text from a lexeme boundary with this parse (the
        parser's ``parse_cost``, memoised there)."""
        self.rest  # noqa: B018 (built on first use, and handed to the parser)
        return self.recognizer.parser.parse_cost(parse)

    def lexer_cost(self, lex: int, parse: ParseState) -> int:
        """Fewest bytes completing the text when the current lexeme (begun, not fresh) is in
        lexer state ``lex`` after ``parse``. O(live lexemes + threads): what follows each lexeme
        is read off the threads expecting it (``_after_lexeme``), not by scanning it."""
        recognizer = self.recognizer
        exprs = recognizer.exprs
        after = self._after_lexeme(parse)
        ignored = recognizer.parser.ignored
        best = INFINITE
        for lexeme, expr in recognizer.lexer.pairs[lex]:
            following = after.get(lexeme, INFINITE)
            if lexeme in ignored:  # an ignored lexeme leaves the parse where it was
                following = min(following, self.parse_cost(parse))
            if following >= INFINITE:
                continue
            length = exprs.min_length(expr)
            if length is not None:
                best = min(best, length + following)
        return best

    def _after_lexeme(self, parse: ParseState) -> dict[int, int]:
        """For each lexeme a thread of ``parse`` expects: the fewest bytes completing the text
        after it, ``parse_cost(parse.scan({lexeme}))`` without the scan: the rest of the thread's
        alternative (``rest[p + 1]``, rules at their shortest) and its cheapest return point.
        Memoised per parse state."""
        found = self._after.get(parse)
        if found is not None:
            return found
        self.rest  # noqa: B018 (built on first use, and handed to the parser)
        out = self.recognizer.parser.after_costs(parse)
        self._after[parse] = out
        return out

    def min_bytes(self, state: State) -> int:
        """A lower bound on the bytes completing ``state`` (exact where munch does not interfere);
        0 exactly when the state is a complete text."""
        lex, parse, fresh = state
        if fresh:
            return self.parse_cost(parse)
        return self.lexer_cost(lex, parse)

    def _candidates(self, state: State) -> "list[int] | tuple[int, ...]":
        """The bytes that can follow ``state``, a superset, in increasing order: those the current
        lexeme can take, and, once it may end, those that can begin the lexemes after it."""
        recognizer = self.recognizer
        lexer = recognizer.lexer
        lex, parse, fresh = state
        if lex == DEAD:
            return []
        out: "list[int] | tuple[int, ...]" = lexer.first_bytes(lex)
        if not fresh:
            restart = recognizer.restart(lex, parse)[1]
            if restart != DEAD:
                out = sorted(set(out) | set(lexer.first_bytes(restart)))
        return out

    def next_byte(self, state: State) -> tuple[int, State] | None:
        """The first byte of the canonical completion of ``state`` and the state it leads to
        (None when the state is complete, or where the bound is not exact). Cached per state,
        so following a completion costs one lookup per byte after the first time."""
        found = self._links.get(state, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        need = self.min_bytes(state)
        link = None
        if 0 < need < INFINITE:
            target = need - 1
            for byte in self._candidates(state):
                nxt = self.recognizer.step(state, byte)
                if nxt is None:
                    continue
                bound = self.min_bytes(nxt)
                if bound < target:
                    break  # the bound is not exact next door: no canonical claim here
                if bound == target:
                    link = (byte, nxt)
                    break
        self._links.put(state, link, 96)
        return link

    def canonical(self, state: State) -> Iterator[tuple[int, State]]:
        """The canonical completion of ``state``, one ``(byte, state after it)`` at a time, as
        far as it is known to be canonical: it stops at a complete state, or where the bound is
        not exact (``next_byte`` is None there). The one walk along canonical completions: the
        closing budget follows it, ``path`` materialises it."""
        accepting = self.recognizer.is_accepting
        while not accepting(state):
            link = self.next_byte(state)
            if link is None:
                return
            yield link
            state = link[1]

    def path(self, state: State, limit: int | None = None) -> tuple[bytes, list[State]] | None:
        """The canonical completion of ``state`` and the states along it (``len(states) ==
        len(text) + 1``, the last one complete); None where there is none to vouch for or it is
        longer than ``limit`` (default ``self.limit``)."""
        if limit is None:
            limit = self.limit
        if self.min_bytes(state) >= min(limit, INFINITE) + 1:
            return None
        text = bytearray()
        states = [state]
        for byte, state in self.canonical(state):
            text.append(byte)
            states.append(state)
        if not self.recognizer.is_accepting(states[-1]):
            return None
        return bytes(text), states

    def completion(self, state: State) -> bytes | None:
        """The canonical completion of ``state`` (see the module docstring), or None where the
        bound is not exact or the completion is longer than ``self.limit``."""
        found = self.path(state)
        return None if found is None else found[0]
