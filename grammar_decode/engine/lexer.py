"""One grammar's lexer: its lexemes on the shared DFA of their ``ExprSet`` (``engine/dfa.py``).

Lexer states are the DFA's states, so every grammar on one ``ExprSet`` shares them, their rows
and whatever is cached per state (the lexeme part of a mask, ``masking/masker.py``). What is the
grammar's own is the naming: lexeme ``i`` of this grammar is DFA origin ``origin_of[i]``, and the
lexemes a state matches or still reads are told in this grammar's numbers (``accepting``,
``pairs``, ``live_lexemes``), memoised per state as they are asked for.

Costs: ``step`` and ``row`` are the DFA's (a list lookup once a row exists); ``accepting[state]``
is a dict lookup after the first time. Thread-safe as the DFA is: the memo dicts are written one
whole entry at a time.
"""

from __future__ import annotations

from functools import partial
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..ir.grammar import LexemeGuard
from ..ir.regex import ExprSet, untracked
from .dfa import DEAD, UNBUILT, LexemeDFA, all_origins, dfa_for

__all__ = ["DEAD", "UNBUILT", "Lexer"]


class _ByState(dict):  # type: ignore[type-arg]
    """``table[state]``: a value per DFA state in this grammar's lexeme numbers, made when
    first asked for."""

    def __init__(self, make) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self._make = make

    def __missing__(self, state: int):  # type: ignore[no-untyped-def]
        found = self[state] = self._make(state)
        return found


def _accepting(dfa: LexemeDFA, lexeme_at: dict[int, int], state: int) -> frozenset[int]:
    """The lexemes (in a grammar's numbers, ``lexeme_at``) that match in DFA state ``state``."""
    origins = dfa.accepting[state]
    return frozenset(lexeme_at[origin] for origin in origins) if origins else origins  # the shared empty set


def _pairs(dfa: LexemeDFA, lexeme_at: dict[int, int], state: int) -> tuple[tuple[int, int], ...]:
    """The sorted (lexeme, remaining expression) pairs of DFA state ``state``, in a grammar's numbers."""
    return tuple(sorted((lexeme_at[origin], e) for origin, e in dfa.pairs[state]))


class Lexer:
    """The lexer of the lexemes ``lexemes`` (expression ids in ``exprs``, guards by lexeme);
    lexeme ``i`` is ``lexemes[i]``."""

    def __init__(self, exprs: ExprSet, lexemes: Sequence[int], guards: Mapping[int, LexemeGuard] | None = None) -> None:
        self.exprs = exprs
        self.lexemes = tuple(lexemes)
        self.guards: dict[int, LexemeGuard] = dict(guards or {})
        self.dfa: LexemeDFA = dfa_for(exprs)
        self.dfa.prepare_rows()
        #: per lexeme: its DFA origin
        self.origin_of: list[int] = all_origins(self.dfa, self.lexemes, self.guards)
        #: per origin of this grammar: its lexeme (one each: ``all_origins`` keeps them apart)
        self.lexeme_at: dict[int, int] = {origin: lexeme for lexeme, origin in enumerate(self.origin_of)}
        # shared with the DFA (the same lists, grown by it)
        self.rows = self.dfa.rows
        self.closed = self.dfa.closed
        #: per state: whether some lexeme matches (hot loops read this, not ``accepting``)
        self.matches = self.dfa.matches
        # the makers hold the DFA and the naming, not the lexer: no reference cycle, so a grammar
        # dropped is freed at once by reference counting, not later by a full collection (which
        # then lands on some mask: 20-40 ms late in a long run)
        #: per state: the lexemes that match the bytes read (a frozenset; empty: none)
        self.accepting: dict[int, frozenset[int]] = _ByState(partial(_accepting, self.dfa, self.lexeme_at))
        #: per state: the sorted (lexeme, remaining expression) pairs still alive
        self.pairs: dict[int, tuple[tuple[int, int], ...]] = _ByState(partial(_pairs, self.dfa, self.lexeme_at))
        #: start states by the sorted lexemes allowed: tuples of ints, untracked, so the dict is
        #: never visited by the cyclic collector (frozenset keys, a parse state's whole expected
        #: set each, were up to 24,000 items visited by every full collection)
        self._starts: dict[tuple[int, ...], int] = {}

    def __len__(self) -> int:
        """States the shared DFA holds (every grammar's on this ``ExprSet``)."""
        return len(self.dfa)

    def start(self, allowed: Iterable[int]) -> int:
        """The state before any byte, when the lexemes ``allowed`` may come next (``DEAD`` if
        none of them can match anything). Cached per set (a sort of the set per call: callers keep
        the answer per parse state)."""
        key = untracked(tuple(sorted(set(allowed))))
        found = self._starts.get(key)
        if found is None:
            origin_of = self.origin_of
            found = self._starts[key] = self.dfa.start(frozenset(origin_of[lexeme] for lexeme in key))
        return found

    def start_key(self, key: bytes) -> int:
        """``start`` of the lexemes whose origins' ``_set_key`` is ``key`` (``LexemeDFA.start_key``;
        ``ParseState.origins_key`` gives it for a parse state's expected lexemes)."""
        return self.dfa.start_key(key)

    def without(self, state: int, lexeme: int, excluded: int) -> int:
        """``state`` with the texts of ``excluded`` (an expression) taken out of ``lexeme``'s
        remaining language: a new state (interned, so equal requests give equal states), or
        ``DEAD`` when nothing remains at all. Used by ``engine.unique`` to keep an item from
        repeating a value already written."""
        return self.dfa.without(state, self.origin_of[lexeme], excluded)

    def step(self, state: int, byte: int) -> int:
        """The state after ``byte``, or ``DEAD``. A list lookup once the state's row exists."""
        row = self.rows[state]
        if row is None:
            return self.dfa.cell(state, byte)
        return row[byte]

    def row(self, state: int):  # type: ignore[no-untyped-def]
        """All 256 transitions of ``state`` (``LexemeDFA.row``)."""
        return self.dfa.row(state)

    def guarded(self, state: int) -> bool:
        """Whether ``state`` has guarded pairs (its cells are made one byte at a time)."""
        return bool(self.dfa.tags[state])

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """``LexemeDFA.dense``: the transitions as one int32 table and the accepting bytes."""
        return self.dfa.dense()

    def cell_maker(self) -> tuple[object, tuple[object, ...]] | None:
        """``LexemeDFA.cell_maker``."""
        return self.dfa.cell_maker()

    def dense_cell(self, state: int, byte: int) -> None:
        """``LexemeDFA.dense_cell``."""
        self.dfa.dense_cell(state, byte)

    def feed(self, state: int, data: bytes) -> int:
        for byte in data:
            if state == DEAD:
                return DEAD
            state = self.step(state, byte)
        return state

    def first_bytes(self, state: int) -> tuple[int, ...]:
        """The bytes that may lead somewhere from ``state`` (a superset of the live ones), in
        increasing order. Cached per state."""
        return self.dfa.first_bytes(state)

    def live_lexemes(self, state: int) -> tuple[int, ...]:
        """The lexemes that can still match, in order."""
        return tuple(lexeme for lexeme, _ in self.pairs[state])
