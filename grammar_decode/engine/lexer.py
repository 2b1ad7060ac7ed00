"""A DFA over a grammar's lexemes, built lazily from regex derivatives, one state at a time.

A lexer state is the set of lexemes still possible for the bytes read since the last lexeme
boundary, each with its derivative by those bytes: a sorted tuple of ``(lexeme, expression)``
pairs, interned to a small ``int``. Two states with equal tuples have equal futures, because equal
expression ids have equal languages by construction (``ExprSet``); no state key is ever clamped by
hand. Pairs whose expression has an empty language are dropped on creation, and a step that leaves
no pair returns ``DEAD``, so every live state can still reach an accepting one: "the step
succeeded" means "some lexeme can still match".

Costs: a state's row of 256 transitions is computed at once, one derivative of each live pair per
byte class, and then served from a per-state list (``rows[state][byte]``); the DFA holds only the states that input actually reached, so a
bounded repetition such as ``[a-z]{0,100000}`` costs one state per count reached, never 100,000
up front. Thread-safe: state creation takes a lock; reads do not.
"""

from __future__ import annotations

import functools
import threading
from typing import Iterable, Sequence

from ..ir.regex import NOTHING, ExprSet, partition_of

DEAD = -1

LexState = tuple[tuple[int, int], ...]


@functools.lru_cache(maxsize=4096)
def _class_map(splits: frozenset[int]) -> tuple[list[int], list[int]]:
    """The coarsest partition of the bytes along ``splits``: a representative byte per class and
    the class of every byte. Memoised process-wide (few distinct split sets recur)."""
    blocks = partition_of(splits)
    class_of = [0] * 256
    for index, block in enumerate(blocks):
        for byte in _bits(block):
            class_of[byte] = index
    return [(b & -b).bit_length() - 1 for b in blocks], class_of


def _bits(mask: int) -> list[int]:
    text = bin(mask)[:1:-1]  # least significant bit first
    return [i for i, c in enumerate(text) if c == "1"]


class Lexer:
    """The lazily built DFA for the lexemes ``lexemes`` (expression ids in ``exprs``); lexeme
    ``i`` is ``lexemes[i]``."""

    def __init__(self, exprs: ExprSet, lexemes: Sequence[int]) -> None:
        self.exprs = exprs
        self.lexemes = tuple(lexemes)
        self.pairs: list[LexState] = []
        #: ``rows[state][byte]``: the next state or ``DEAD``; None until the row is built (``row``)
        self.rows: list[list[int] | None] = []
        self.accepting: list[frozenset[int]] = []
        #: per state: no byte can extend the lexeme (it ends there, whatever follows; such a state
        #: is accepting, as no live state is a dead end). Exact without complement, else False.
        self.closed: list[bool] = []
        self._ids: dict[LexState, int] = {}
        self._starts: dict[frozenset[int], int] = {}
        self._first: dict[int, list[int]] = {}
        # byte classes per tuple of live expressions: (a representative per class, class per byte)
        self._class_maps: dict[tuple[int, ...], tuple[list[int], list[int]]] = {}
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
            self.closed.append(not any(exprs.first_bytes(e) for _lexeme, e in live))
            self.rows.append(None)
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

    def without(self, state: int, lexeme: int, excluded: int) -> int:
        """``state`` with the texts of ``excluded`` (an expression) taken out of ``lexeme``'s
        remaining language: a new state (interned, so equal requests give equal states), or
        ``DEAD`` when nothing remains at all. Used by ``engine.unique`` to keep an item from
        repeating a value already written."""
        pairs = [(l, self.exprs.difference(e, excluded) if l == lexeme else e) for l, e in self.pairs[state]]
        return self._intern(pairs)

    def step(self, state: int, byte: int) -> int:
        """The state after ``byte``, or ``DEAD``. A list lookup once the state's row exists."""
        row = self.rows[state]
        if row is None:
            row = self.row(state)
        return row[byte]

    def row(self, state: int) -> list[int]:
        """All 256 transitions of ``state``, built on first use: one derivative per byte class
        (bytes no leaf of any live expression tells apart), not per byte; ~10-20 classes for JSON
        lexemes. A pair whose expression cannot start with the class is skipped (its derivative
        is empty)."""
        row = self.rows[state]
        if row is not None:
            return row
        exprs = self.exprs
        pairs = self.pairs[state]
        key = tuple(e for _lexeme, e in pairs)
        class_map = self._class_maps.get(key)
        if class_map is None:
            splits = frozenset().union(*(exprs.split_sets(e) for e in key))
            class_map = self._class_maps[key] = _class_map(splits)
        representatives, class_of = class_map
        firsts = [exprs.first_bytes(e) for e in key]
        targets = []
        for byte in representatives:
            targets.append(self._intern([(lexeme, exprs.derivative(e, byte))
                                         for (lexeme, e), first in zip(pairs, firsts) if (first >> byte) & 1]))
        row = [targets[c] for c in class_of]
        self.rows[state] = row  # published whole: concurrent readers see None or the full row
        return row

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
