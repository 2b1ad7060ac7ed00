"""A DFA over a grammar's lexemes, built lazily from regex derivatives, one state at a time.

A lexer state is the set of lexemes still possible for the bytes read since the last lexeme
boundary, each with its derivative by those bytes: a sorted tuple of ``(lexeme, expression)``
pairs, interned to a small ``int``. Two states with equal tuples have equal futures, because equal
expression ids have equal languages by construction (``ExprSet``); no state key is ever clamped by
hand. Pairs whose expression has an empty language are dropped on creation, and a step that leaves
no pair returns ``DEAD``, so every live state can still reach an accepting one: "the step
succeeded" means "some lexeme can still match".

Costs: a transition is computed once per (state, byte) (derivatives of the live pairs) and then
served from a per-state dict; the DFA holds only the states that input actually reached, so a
bounded repetition such as ``[a-z]{0,100000}`` costs one state per count reached, never 100,000
up front. Thread-safe: state creation takes a lock; reads do not.
"""

from __future__ import annotations

import threading
from typing import Iterable, Sequence

from ..ir.regex import NOTHING, ExprSet

DEAD = -1

LexState = tuple[tuple[int, int], ...]


class Lexer:
    """The lazily built DFA for the lexemes ``lexemes`` (expression ids in ``exprs``); lexeme
    ``i`` is ``lexemes[i]``."""

    def __init__(self, exprs: ExprSet, lexemes: Sequence[int]) -> None:
        self.exprs = exprs
        self.lexemes = tuple(lexemes)
        self.pairs: list[LexState] = []
        self.transitions: list[dict[int, int]] = []
        self.accepting: list[frozenset[int]] = []
        self._ids: dict[LexState, int] = {}
        self._starts: dict[frozenset[int], int] = {}
        self._first: dict[int, list[int]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.pairs)

    def _intern(self, pairs: list[tuple[int, int]]) -> int:
        exprs = self.exprs
        live = tuple(sorted(p for p in pairs if p[1] != NOTHING and not exprs.is_empty(p[1])))
        if not live:
            return DEAD
        found = self._ids.get(live)
        if found is not None:
            return found
        with self._lock:
            found = self._ids.get(live)
            if found is not None:
                return found
            state = len(self.pairs)
            self.accepting.append(frozenset(lexeme for lexeme, e in live if exprs.nullable[e]))
            self.transitions.append({})
            self.pairs.append(live)
            self._ids[live] = state  # published last: readers only see complete states
            return state

    def start(self, allowed: Iterable[int]) -> int:
        """The state before any byte, when the lexemes ``allowed`` may come next (``DEAD`` if
        none of them can match anything). Cached per set."""
        key = frozenset(allowed)
        found = self._starts.get(key)
        if found is None:
            found = self._starts[key] = self._intern([(lexeme, self.lexemes[lexeme]) for lexeme in key])
        return found

    def step(self, state: int, byte: int) -> int:
        """The state after ``byte``, or ``DEAD``. A dict lookup once the state's row exists."""
        row = self.transitions[state]
        found = row.get(byte)
        if found is None:
            self._fill_row(state)
            found = row[byte]
        return found

    def _fill_row(self, state: int) -> None:
        """All 256 transitions of ``state`` at once: one derivative per byte class (bytes no
        leaf of any live expression tells apart), not per byte. ~10-20 classes for JSON lexemes."""
        exprs = self.exprs
        pairs = self.pairs[state]
        row = self.transitions[state]
        splits: set[int] = set()
        for _lexeme, e in pairs:
            splits.update(exprs.byte_classes(e))
        for block in exprs.partition(splits):
            representative = (block & -block).bit_length() - 1
            target = self._intern([(lexeme, exprs.derivative(e, representative)) for lexeme, e in pairs])
            while block:
                low = block & -block
                row[low.bit_length() - 1] = target
                block ^= low

    def feed(self, state: int, data: bytes) -> int:
        for byte in data:
            if state == DEAD:
                return DEAD
            state = self.step(state, byte)
        return state

    def first_bytes(self, state: int) -> list[int]:
        """The bytes that may lead somewhere from ``state`` (a superset of the live ones), in
        increasing order. Cached per state."""
        found = self._first.get(state)
        if found is None:
            mask = 0
            for _lexeme, e in self.pairs[state]:
                mask |= self.exprs.first_bytes(e)
            found = self._first[state] = [b for b in range(256) if (mask >> b) & 1]
        return found

    def live_lexemes(self, state: int) -> tuple[int, ...]:
        """The lexemes that can still match, in order."""
        return tuple(lexeme for lexeme, _ in self.pairs[state])
