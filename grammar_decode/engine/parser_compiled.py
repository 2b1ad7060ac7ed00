"""The parser with its states in C (``_parse.c``): what ``parser.Parser`` computes, kept in flat
tables of numbers instead of Python objects.

``parser.py`` stays the reference: same tables (``parser_tables``), same algorithm, and the same
canonical states, so two inputs reach the same ``ParseState`` object in one exactly when they do
in the other (tested state for state, ``tests/engine/test_parser_compiled.py``). What changes is
the cost: a scan at a lexeme boundary is a C loop over threads instead of Python frames per thread
and per return point, and a state is one small object that the cyclic garbage collector does not
track (return points and their sets are not Python objects at all), where a Python state brought
its frozensets, tuples and ``Cont`` objects, which full collections visited.

``new_parser`` picks this parser where the extension is built and ``GRAMMAR_DECODE_WALK`` does not
ask for the Python references (``kernels.py``), else ``parser.Parser``.
"""

from __future__ import annotations

import threading
from typing import Sequence

import numpy as np

from ..errors import GrammarAdmitsNothing
from ..ir.grammar import Grammar
from ..kernels import load, selected
from .parser import Parser, ParseState
from .parser_tables import parser_tables

_parse = load("grammar_decode.engine._parse", "the compiled parser", "parses use the Python parser")

#: Whether ``new_parser`` makes compiled parsers.
COMPILED = selected(_parse)
#: Costs at or above this are "no completion" in the compiled store (``math.inf`` outside).
_COST_INF = 1 << 60


class CompiledParser:
    """``parser.Parser``'s interface over a compiled store of states. Thread-safe: the store's
    entry points run under the GIL and call no Python code while they change it."""

    def __init__(self, grammar: Grammar, max_size: int | None = None, mutation: int = 0) -> None:
        """``mutation`` (tests only): a deliberately broken store (``_parse.c``: 1 does not merge
        the return points reaching a position, 2 ignores the depth limit)."""
        if _parse is None:
            raise RuntimeError("the compiled parser is not built here (pip install -e . builds it)")
        tables, self.rule_names = parser_tables(grammar, max_size)
        self.symbols = tables.symbols
        self.firsts = tables.firsts
        self.ignored = frozenset(grammar.ignored)
        symbols, lexeme_offsets, lexeme_items, other_offsets, other_items, net, peak_rest, net_rest = tables.flat
        ignored = np.array(sorted(self.ignored), dtype=np.int32)
        max_depth = -1 if tables.nesting is None else int(grammar.max_depth)  # type: ignore[arg-type]
        self._store = _parse.Store(symbols, lexeme_offsets, lexeme_items, other_offsets, other_items, ignored,
                                   len(grammar.lexeme_exprs), max_depth, net, peak_rest, net_rest, mutation)
        self._rest: Sequence[float] | None = None
        self._lock = threading.Lock()
        initial = self._store.initial(np.array(tables.firsts[tables.start], dtype=np.int32), tables.start_nullable)
        if initial is None:
            raise GrammarAdmitsNothing(f"the grammar admits no text within {grammar.max_depth} levels of nesting",
                                       grammar.max_depth)
        self.initial: ParseState = initial

    #: whether a sequence of lexemes is a sentence (for tests): the reference's, which reads
    #: only ``initial`` and the states' ``scan``
    accepts = Parser.accepts

    def set_origins(self, origin_of: Sequence[int], mutation: int = 0) -> None:
        """Per lexeme its lexer origin (``Lexer.origin_of``), once: ``ParseState.origins_key`` then
        gives a state's expected lexemes as the lexer's start key. ``mutation`` 1 (tests only)
        leaves the last origin out of every key."""
        self._store.set_origins(np.asarray(origin_of, dtype=np.int32), mutation)

    def live_states(self) -> int:
        """How many parse states are alive (held by a matcher, a cache or a caller)."""
        return int(self._store.live_states())

    def held_bytes(self) -> int:
        """Bytes the store's tables hold (states, return points and their sets)."""
        return int(self._store.held_bytes())

    # -- completion costs (engine/completion.py) -----------------------------------------------

    def set_rest(self, rest: Sequence[float]) -> None:
        """As ``Parser.set_rest``: the first table given is kept."""
        with self._lock:
            if self._rest is None:
                values = np.array([_COST_INF if v >= _COST_INF else int(v) for v in rest], dtype=np.int64)
                self._store.set_rest(values)
                self._rest = rest

    def parse_cost(self, parse: ParseState) -> float:
        """As ``Parser.parse_cost`` (``math.inf`` where nothing completes the text)."""
        return self._store.parse_cost(parse)  # type: ignore[no-any-return]

    def after_costs(self, parse: ParseState) -> dict[int, float]:
        """As ``Parser.after_costs``."""
        return self._store.after_costs(parse)  # type: ignore[no-any-return]


def new_parser(grammar: Grammar, max_size: int | None = None) -> "Parser | CompiledParser":
    """The parser of ``grammar``: compiled where it is built and selected, else the reference."""
    if COMPILED:
        return CompiledParser(grammar, max_size)
    return Parser(grammar, max_size)
