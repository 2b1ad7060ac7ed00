"""The lexeme DFA of one ``ExprSet``, shared by every grammar built on it, built lazily from regex
derivatives, one state at a time.

A state is the set of lexemes still possible for the bytes read since the last lexeme boundary,
each with its derivative by those bytes: a sorted tuple of ``(origin, expression)`` pairs,
interned to a small ``int``. An *origin* names a lexeme by what it is, not by its place in one
grammar: its expression before any byte and its guard (``origin``). Two grammars on the same
``ExprSet`` whose lexemes share an expression therefore reach the same states, and every row,
table and mask cached per state serves both: the JSON string, number and literal lexemes that
nearly every schema has are lexed once per process, not once per schema (``engine/lexer.py`` maps
origins back to one grammar's lexemes). Two states with equal tuples have equal futures, because
equal expression ids have equal languages by construction (``ExprSet``); no state key is ever
clamped by hand. Pairs whose expression has an empty language are dropped on creation, and a step
that leaves no pair returns ``DEAD``, so every live state can still reach an accepting one: "the
step succeeded" means "some lexeme can still match".

Guarded lexemes (``Grammar.guards``: a host name's A-labels must decode to valid U-labels) carry a
*tag* beside their expression, the guard's state after the same bytes; a state is then its pairs
and those tags. A guarded pair stays only while its tag is not rejected and, where the guard
asks for one, some witness the guard offers keeps the expression alive (``_vouched``): the same
"no dead end" promise, with the guard's language intersected.

Costs: a state's row of 256 transitions is computed at once, one derivative of each live pair per
byte class (per byte where a guarded pair is live: the guard tells bytes apart that the
expression does not), and then served from a per-state list (``rows[state][byte]``); the DFA
holds only the states that input actually reached, so a bounded repetition such as
``[a-z]{0,100000}`` costs one state per count reached, never 100,000 up front. It grows with
every grammar that uses its ``ExprSet``: past ``MAX_STATES`` states it retires the set
(``ExprSet.retire``), so that later grammars start a new one (``shared_exprs``) and memory stays
bounded by what the live grammars hold. Thread-safe: state creation takes a lock; reads do not.
"""

from __future__ import annotations

import functools
import threading
from array import array
import weakref
from typing import Hashable, Iterable, Mapping

import numpy as np

from ..ir.grammar import LexemeGuard
from ..ir.regex import NOTHING, ExprSet, fill_class, partition_of, row_of, split_key, untracked
from .row_pages import RowPages

DEAD = -1
#: A transition not made yet (``LexemeDFA.dense``).
UNBUILT = -2
#: Whether ``LexemeDFA.start`` makes unguarded start states in C (``Store.make_start``); tests
#: turn it off to compare with the Python path.
_STARTS_IN_C = True

#: The dense table holds each transition plus ``STORED``, so that ``UNBUILT`` is 0 there: a new
#: table is zero pages, which the OS hands out only as rows are written (a mapping of
#: ``MAX_STATES`` rows costs nothing up front), and it never has to grow by copying (a copy of
#: 128 MiB of rows stalled a mask for over a second).
STORED = 2
#: States whose rows a compile lays huge pages under ahead of the states made
#: (``LexemeDFA.prepare_rows``): one 2 MiB region.
ROWS_AHEAD = 2048
#: States one DFA makes before its ``ExprSet`` is retired (new grammars then start a new set;
#: the grammars on this one keep it, and it goes when they do). About 1 KB a state with its row.
MAX_STATES = 1 << 18

Pairs = tuple[tuple[int, int], ...]
#: The tags of a state's guarded pairs, by origin, in origin order.
Tags = tuple[tuple[int, Hashable], ...]
#: Entries of the witness memo (``_vouched``) and of the guards' moves (``_note_moves``) before
#: each is cleared.
_VOUCH_ENTRIES = 1 << 16
#: A guarded tag's moves for the C maker of cells: the class of each byte (255: the cell is made
#: in Python), then per class the next tag (None: rejected) and whether it is complete.
Moves = tuple[bytes, tuple[Hashable | None, ...], tuple[bool, ...]]


#: A class map: a representative byte per class, the class of every byte, and the same as an array.
ClassMap = tuple[tuple[int, ...], tuple[int, ...], np.ndarray]


#: The row of a state while only some of its classes are made (``LexemeDFA.cell``): its class
#: map, the pairs that may start with each class (those whose derivative is taken there), and the
#: state each class leads to (int32, ``_UNMADE`` where not made yet; one more entry at the end: the
#: classes still to make). A tuple of tuples and numpy arrays, which the collector stops tracking:
#: pending rows number in the hundred thousands.
Pending = tuple[tuple[int, ...], tuple[int, ...], np.ndarray, tuple[tuple[tuple[int, int], ...], ...], np.ndarray]
_UNMADE = -3


@functools.lru_cache(maxsize=4096)
def _class_map(splits: tuple[int, ...]) -> "ClassMap":
    """The coarsest partition of the bytes along ``splits`` (a ``split_key``): a representative byte per class and
    the class of every byte (a tuple, and an int16 array for the dense table's writes). Memoised
    process-wide (few distinct split sets recur); tuples, which the collector stops tracking."""
    blocks = partition_of(splits)
    class_of = [0] * 256
    representatives = []
    for index, block in enumerate(blocks):
        representatives.append((block & -block).bit_length() - 1)
        while block:  # one pass per set bit: 256 in all, whatever the number of classes
            low = block & -block
            class_of[low.bit_length() - 1] = index
            block ^= low
    class_array = np.array(class_of, dtype=np.int16)
    class_array.flags.writeable = False
    return tuple(representatives), tuple(class_of), class_array


@functools.lru_cache(maxsize=4096)
def _class_blocks(splits: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The bytes of each class of ``_class_map(splits)``, in order (memoised alike)."""
    _representatives, class_of, _array = _class_map(splits)
    blocks: list[list[int]] = [[] for _ in _representatives]
    for byte, c in enumerate(class_of):
        blocks[c].append(byte)
    return tuple(map(tuple, blocks))


class _LazyRow(dict):  # type: ignore[type-arg]
    """The row of a state with guarded pairs: ``row[byte]`` like a list's, each transition made
    when first asked for (a dict written one whole entry at a time: threads may share it). Where
    every guard tells its bytes apart by splits (``LexemeGuard.splits``), a transition is made
    once per byte class (the expressions' and the guards' splits together) and written for every
    byte of it; else once per byte."""

    def __init__(self, dfa: "LexemeDFA", state: int, union: int, firsts: list[int],
                 blocks: tuple[tuple[int, ...], ...] | None, class_of: tuple[int, ...] | None) -> None:
        super().__init__()
        self._dfa, self._state, self._union, self._firsts = dfa, state, union, firsts
        self._blocks, self._class_of = blocks, class_of

    def same_as(self, byte: int) -> tuple[int, ...]:
        """The bytes whose transition is ``byte``'s by construction (its class; itself alone
        where the row is made per byte)."""
        return (byte,) if self._blocks is None else self._blocks[self._class_of[byte]]  # type: ignore[index]

    def __missing__(self, byte: int) -> int:
        if not 0 <= byte < 256:
            raise IndexError(byte)
        found = DEAD if not (self._union >> byte) & 1 else self._dfa._guarded_step(self._state, byte, self._firsts)
        for same in self.same_as(byte):
            self[same] = found
        return found


class LexemeDFA:
    """The lazily built DFA over the lexemes of one ``ExprSet`` (``dfa_for``)."""

    def __init__(self, exprs: ExprSet) -> None:
        self.exprs = exprs
        #: per origin: (its expression, its guard or None)
        self.origins: list[tuple[int, LexemeGuard | None]] = []
        #: keyed by one int (``_origin_key``): a dict keyed by tuples is tracked by the cyclic
        #: collector again at each insert, and every full collection then visits all its keys
        self._origin_ids: dict[int, int] = {}
        #: the origins with a guard
        self._guarded: set[int] = set()
        #: per origin without a guard: whether its expression matches anything (``start``)
        self._live_origins: dict[int, bool] = {}
        self.pairs: list[Pairs] = []
        #: per state: the tags of its guarded pairs (empty without guards)
        self.tags: list[Tags] = []
        self._vouch: dict[tuple[int, int, Hashable], bool] = {}
        #: the moves of guarded tags, for the C maker of cells (``_note_moves``)
        self._moves: dict[tuple[int, Hashable], Moves | None] = {}
        # the rows again as one int32 table of 256 per state (UNBUILT where not built), and a
        # byte per state (1: accepting), for compiled walks; grown by doubling, under the lock
        self._pages, self._accepts = _zeroed_tables(MAX_STATES)
        self._table = self._pages.array
        #: ``rows[state][byte]``: the next state or ``DEAD``; None until the row is built (``row``;
        #: a ``_LazyRow`` for states with guarded pairs)
        self.rows: list[tuple[int, ...] | _LazyRow | None] = []
        #: per state: the origins whose lexeme matches the bytes read
        self.accepting: list[frozenset[int]] = []
        #: per state: whether some lexeme matches (``bool(accepting[state])``, for hot loops)
        self.matches: list[bool] = []
        #: per state: no byte can extend the lexeme (it ends there, whatever follows; such a state
        #: is accepting, as no live state is a dead end). Exact without complement, else False.
        self.closed: list[bool] = []
        self._ids: dict[object, int] = {}
        #: per set of origins, as ``_set_key`` bytes: a frozenset key is tracked by the cyclic
        #: collector for good, and thousands of them (a hundred origins each in objects with many
        #: keys) were a third of what every full collection visited late in a long run
        self._starts: dict[bytes, int] = {}
        self._first: dict[int, tuple[int, ...]] = {}
        # byte classes per tuple of live expressions: (a representative per class, class per byte)
        self._class_maps: dict[tuple[int, ...], ClassMap] = {}
        #: rows made one class at a time (``cell``), until every class is made
        self._pending: dict[int, Pending] = {}
        #: where the expressions are in the C store (``ExprSet.store``), transitions are made one
        #: byte class at a time by it (``_store_cell``), not from class maps; else None
        self._store = exprs.store
        self._lock = threading.Lock()
        self._core = self._make_core()

    def __len__(self) -> int:
        return len(self.pairs)

    def prepare_rows(self) -> None:
        """Lay huge pages under the dense table's next ``ROWS_AHEAD`` rows past the states made
        (``RowPages.prepare``): called when a grammar is compiled on this DFA, so that clearing
        them costs the compile a few milliseconds once per 2,048 states, not a mask."""
        with self._lock:
            self._pages.prepare(1024 * len(self.pairs), 1024 * ROWS_AHEAD)

    def origin(self, expr: int, guard: LexemeGuard | None = None, occurrence: int = 0) -> int:
        """The origin id of the ``occurrence``-th lexeme (from 0) of a grammar with expression
        ``expr`` and ``guard`` (interned: such lexemes of different grammars get the same id;
        guards are told apart by identity)."""
        key = _origin_key(expr, id(guard) if guard is not None else 0, occurrence)
        found = self._origin_ids.get(key)
        if found is None:
            with self._lock:
                found = self._origin_ids.get(key)
                if found is None:
                    found = len(self.origins)
                    self.origins.append((expr, guard))  # holds the guard: its id stays unique
                    if guard is not None:
                        self._guarded.add(found)
                    self._origin_ids[key] = found
        return found

    def _guard(self, origin: int) -> LexemeGuard | None:
        return self.origins[origin][1]

    def _intern(self, pairs: list[tuple[int, int]], tags: Mapping[int, Hashable | None] | None = None) -> int:
        """The state of ``pairs`` (and, for guarded origins, their ``tags``; None: rejected),
        less the pairs that cannot match anything; DEAD when none is left."""
        exprs = self.exprs
        origins = self.origins
        kept = []
        for origin, expr in pairs:
            if expr == NOTHING or exprs.is_empty(expr):
                continue
            if origins[origin][1] is not None:
                tag = tags.get(origin) if tags is not None else None
                if tag is None or not self._vouched(origin, expr, tag):
                    continue
            kept.append((origin, expr))
        live = tuple(sorted(kept))
        if not live:
            return DEAD
        live_tags: Tags = tuple((origin, tags[origin]) for origin, _e in live if origins[origin][1] is not None) \
            if tags else ()
        return self._intern_live(live, live_tags)

    def _intern_live(self, live: Pairs, live_tags: Tags = ()) -> int:
        """The state of ``live``: pairs sorted by origin, none of them empty, guarded ones with
        their ``live_tags``."""
        exprs = self.exprs
        origins = self.origins
        key: object = (live, live_tags) if live_tags else live
        found = self._ids.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._ids.get(key)
            if found is not None:
                return found
            state = len(self.pairs)
            if state >= len(self._accepts):
                self._grow(2 * len(self._accepts))
            tag_of = dict(live_tags)
            accepting = frozenset(origin for origin, e in live
                                  if exprs.nullable[e] and (origin not in tag_of or
                                                            origins[origin][1].complete(tag_of[origin])))  # type: ignore[union-attr]
            accepting = accepting or _NONE  # one empty set for every state that matches nothing
            self.accepting.append(accepting)
            self.matches.append(bool(accepting))
            self.closed.append(not any(exprs.first_bytes(e) for _origin, e in live))
            self._accepts[state] = 1 if accepting else 0
            self.rows.append(None)
            self.tags.append(live_tags)
            # tuples of ints, off the collector's lists (``live`` with the key): as a key of ``_ids``
            # a tracked one would track the dict again, and each full collection then visited all
            # its entries (one per state)
            key = untracked(key)
            self.pairs.append(live)
            self._ids[key] = state  # published last: readers only see complete states
            if state + 1 == MAX_STATES:
                exprs.retire()
            return state

    def _vouched(self, origin: int, expr: int, tag: Hashable) -> bool:
        """Whether a guarded pair may stay: the guard needs no witness at ``tag``, or one of its
        witnesses is a remainder ``expr`` still admits (memoised)."""
        key = (origin, expr, tag)
        found = self._vouch.get(key)
        if found is None:
            witnesses = self._guard(origin).completions(tag)  # type: ignore[union-attr]
            exprs = self.exprs
            found = witnesses is None or any(not exprs.is_empty(exprs.derive_bytes(expr, w)) for w in witnesses)
            if len(self._vouch) >= _VOUCH_ENTRIES:
                self._vouch.clear()  # a cache: a pair is asked about again only while its state is made
            self._vouch[key] = found
        return found

    def start(self, origins: frozenset[int]) -> int:
        """The state before any byte, when the lexemes of ``origins`` may come next (``DEAD`` if
        none of them can match anything). Cached per set; whether an origin's expression is
        empty is asked once per origin (a new parse state asks for a new set, which in an object
        with hundreds of keys is hundreds of origins)."""
        key = _set_key(origins)
        found = self._starts.get(key)
        return found if found is not None else self._new_start(key, origins)

    def start_key(self, key: bytes) -> int:
        """``start`` of the set of origins whose ``_set_key`` is ``key`` (sorted, four bytes each:
        ``ParseState.origins_key`` makes it in C, so a parse state's lexer start costs a dict
        lookup where the DFA has met the set, no Python set or sort)."""
        found = self._starts.get(key)
        return found if found is not None else self._new_start(key, frozenset(array("I", key)))

    def _new_start(self, key: bytes, origins: frozenset[int]) -> int:
        """``start``'s miss (``key`` not in ``start_states``): the state made and cached under ``key``
        (``origins``' ``_set_key``)."""
        found = None
        unguarded = origins.isdisjoint(self._guarded)
        if unguarded and self._store is not None and _STARTS_IN_C:
            # in one C call (``Store.make_start``): the pairs, their emptiness, the state
            # interned; None where an emptiness is left to Python's search
            found = self._store.make_start(self._core, key, self.origins, self._live_origins)
        if found is None:
            found = self._unguarded_start(origins) if unguarded else self._intern(
                [(origin, self.origins[origin][0]) for origin in origins],
                {origin: guard.start for origin in origins if (guard := self._guard(origin)) is not None})
        self._starts[key] = found
        return found

    @property
    def start_states(self) -> dict[bytes, int]:
        """The start states made, by their origins' ``_set_key`` (``start_key``'s dict, read by the
        boundary kernel; never written outside this class)."""
        return self._starts

    def _unguarded_start(self, origins: frozenset[int]) -> int:
        """``start`` of origins none of which is guarded, in Python: the pairs of the origins whose
        expression matches anything (asked once per origin), interned."""
        live = self._live_origins
        pairs = []
        for origin in origins:
            alive = live.get(origin)
            expr = self.origins[origin][0]
            if alive is None:
                alive = live[origin] = expr != NOTHING and not self.exprs.is_empty(expr)
            if alive:
                pairs.append((origin, expr))
        pairs.sort()
        return self._intern_live(tuple(pairs)) if pairs else DEAD

    def without(self, state: int, origin: int, excluded: int) -> int:
        """``state`` with the texts of ``excluded`` (an expression) taken out of ``origin``'s
        remaining language: a new state (interned, so equal requests give equal states), or
        ``DEAD`` when nothing remains at all."""
        pairs = [(o, self.exprs.difference(e, excluded) if o == origin else e) for o, e in self.pairs[state]]
        return self._intern(pairs, dict(self.tags[state]))

    def shape(self, state: int) -> tuple[int, ...] | None:
        """What decides everything about ``state`` but which lexeme each pair belongs to: its
        expressions, sorted. None where that is not enough to tell its pairs apart (two pairs
        with one expression) or where a guard's tag also decides (guarded pairs).

        Two states of one shape are *twins*: the derivative of a pair by some bytes does not
        depend on its origin, so after the same bytes they reach states of one shape again, one
        the other's with its origins renamed (``twin_names``, ``renamed``); whether a state is
        dead, accepting or closed depends on the expressions alone. A mask's lexeme part is
        therefore the same for twins but for the states it names (``masking/masker.py``)."""
        if self.tags[state]:
            return None
        exprs = tuple(sorted([e for _origin, e in self.pairs[state]]))
        return exprs if len(set(exprs)) == len(exprs) else None

    def twin_names(self, state: int, twin: int) -> dict[int, int]:
        """Per origin of ``state``: the origin of ``twin`` with the same expression (``state`` and
        ``twin`` of one ``shape``, which is not None; ``ValueError`` otherwise)."""
        origin_of = {e: origin for origin, e in self.pairs[twin]}
        names = {origin: origin_of.get(e, -1) for origin, e in self.pairs[state]}
        if len(names) != len(origin_of) or -1 in names.values() or self.tags[state] or self.tags[twin]:
            raise ValueError(f"lexer states {state} and {twin} are not twins")
        return names

    def renamed(self, state: int, names: Mapping[int, int]) -> int:
        """``state`` with the origin of each pair renamed by ``names`` (``twin_names``), the
        expressions kept: where a state reached from ``s`` by some bytes is ``state``, the one its
        twin reaches by the same bytes. Interned, so a state is made only where no walk made it
        yet. ``KeyError`` for an origin ``names`` lacks; ``ValueError`` for guarded pairs."""
        if self.tags[state]:
            raise ValueError(f"lexer state {state} has guarded pairs: its tags are not renamed")
        return self._intern_live(tuple(sorted([(names[origin], e) for origin, e in self.pairs[state]])))

    def step(self, state: int, byte: int) -> int:
        """The state after ``byte``, or ``DEAD``. A list lookup once the state's row exists;
        else only ``byte``'s class is made (``cell``)."""
        row = self.rows[state]
        if row is None:
            return self.cell(state, byte)
        return row[byte]

    def row(self, state: int) -> "tuple[int, ...] | _LazyRow":
        """All 256 transitions of ``state``, built on first use: one derivative per byte class
        (bytes no leaf of any live expression tells apart), not per byte; ~10-20 classes for JSON
        lexemes. A pair whose expression cannot start with the class is skipped (its derivative
        is empty). Classes already made one at a time (``cell``) are reused."""
        row = self.rows[state]
        if row is not None:
            return row
        if self.tags[state]:
            row = self._guarded_row(state)
            self.rows[state] = row
            return row
        if self._store is not None:
            while row is None:  # a class at a time, the least byte not made yet first
                cells = self._table[256 * state:256 * (state + 1)]
                self._store_cell(state, int(np.argmin(cells != UNBUILT + STORED)))
                row = self.rows[state]
            return row
        pending = self._pend(state)
        targets = pending[4]
        for c in np.flatnonzero(targets[:-1] == _UNMADE).tolist():
            targets[c] = self._class_target(pending, c)
        return self._publish(state, pending)

    def cell(self, state: int, byte: int) -> int:
        """``row(state)[byte]``, making only ``byte``'s class of the row where the row is not
        built: a walk reads few of a state's classes (over the compare set, 40 % of the classes a
        whole row would intern), and each one made is a derivative of every pair that can start
        with it and an emptiness check of the state it leads to (``dense_cell`` writes the class
        into the dense table for compiled walks). Once every class is made, the row is published
        as ``row`` does."""
        row = self.rows[state]
        if row is not None:
            return row[byte]
        if self.tags[state]:
            return self.row(state)[byte]
        if self._store is not None:
            found = int(self._table[256 * state + byte]) - STORED
            return found if found != UNBUILT else self._store_cell(state, byte)
        pending = self._pend(state)
        c = pending[1][byte]
        targets = pending[4]
        target = targets.item(c)
        if target == _UNMADE:
            target = self._class_target(pending, c)
            targets[c] = target
            targets[-1] -= 1  # threads may race here and miss a count: the row then stays pending
            if targets[-1] <= 0 and not (targets[:-1] == _UNMADE).any():
                self._publish(state, pending)
        return target

    def _make_core(self) -> tuple[object, ...]:
        """What ``Store.make_cell`` reads and writes (``ir/_cells.c``): the per-state lists, the
        ids, the tables, the lock, and the id from which new states are left to ``_intern_live``
        (which retires the set at ``MAX_STATES`` and grows the tables past it)."""
        return (self.pairs, self.accepting, self.matches, self.closed, self.rows, self.tags, self._ids, self._table,
                self._accepts, self._lock, _NONE, MAX_STATES - 1, (), self._moves)

    def _store_cell(self, state: int, byte: int) -> int:
        """``cell`` by the C store (``ExprSet.store``). In one call where it can
        (``Store.make_cell``: no derivative that may be empty, no new state at the limit); else the
        state's pairs derived by ``byte`` (``Store.step_pairs``, which leaves out the dead ones and
        tells the bytes of the class: those no leaf the derivatives read tells apart, each with the
        same transition), the derivatives that may be empty searched, the target interned here,
        and the transition written into the dense table for every byte of the class
        (``fill_class``, which counts the bytes still to make). Once every byte is made, the row is
        published as ``row`` does."""
        store = self._store
        found = store.make_cell(self._core, state, byte)  # type: ignore[union-attr]
        if found is not None:
            return found  # type: ignore[no-any-return]
        live, klass, unsure = store.step_pairs(self.pairs[state], byte)  # type: ignore[union-attr]
        if unsure:  # derivatives with & or ¬ that may be empty: searched (the rest are known not to be)
            is_empty = self.exprs.is_empty
            dropped = [i for i in unsure if is_empty(live[i][1])]
            if dropped:
                live = tuple([pair for i, pair in enumerate(live) if i not in dropped])
        target = self._intern_live(live) if live else DEAD
        with self._lock:
            if self.rows[state] is None and not fill_class(self._table, 256 * state, klass, target + STORED):  # type: ignore[misc]
                # a tuple of ints the collector never tracks (see _publish: tracked, a new row was
                # 256 visits for the next young collection)
                self.rows[state] = row_of(self._table, 256 * state, STORED)  # type: ignore[misc]
        return target

    def _pend(self, state: int) -> Pending:
        """The pending row of ``state`` (not published yet), made on first use with no class made:
        its class map, the pairs each class may start (a pair joins class c when c's
        representative may start it, found per pair: a key's literal starts with one byte and
        visits one class, not all of them, which matters where a state holds hundreds of keys),
        and, in the dense table, ``DEAD`` for the classes no pair can start."""
        found = self._pending.get(state)
        if found is not None:
            return found
        exprs = self.exprs
        pairs = self.pairs[state]
        key = tuple(e for _origin, e in pairs)
        class_map = self._class_maps.get(key)
        if class_map is None:
            splits = split_key(split for e in key for split in exprs.split_sets(e))
            class_map = self._class_maps[key] = _class_map(splits)
        representatives, class_of, class_array = class_map
        classes = len(representatives)
        first_bytes = exprs.first_bytes
        candidates: list[list[tuple[int, int]]] = [[] for _ in range(classes)]
        for pair in pairs:
            first = first_bytes(pair[1])
            if first.bit_count() < classes:
                rest = first
                while rest:
                    low = rest & -rest
                    rest ^= low
                    bucket = candidates[c := class_of[low.bit_length() - 1]]
                    # a class is met once per byte of it: the pair goes in once (pairs come in order)
                    if (not bucket or bucket[-1] is not pair) and (first >> representatives[c]) & 1:
                        bucket.append(pair)
            else:
                for c, byte in enumerate(representatives):
                    if (first >> byte) & 1:
                        candidates[c].append(pair)
        live = np.array([bool(bucket) for bucket in candidates] + [False])
        unmade = int(live.sum())
        targets = np.where(live, _UNMADE, DEAD).astype(np.int32)
        targets[-1] = unmade
        mine = (representatives, class_of, class_array, tuple(map(tuple, candidates)), targets)
        pending = self._pending.setdefault(state, mine)
        if pending is not mine:  # a racing thread's, equal, won
            return pending
        if not unmade:  # no class can go on (a state where every lexeme has ended)
            self._publish(state, pending)
        elif unmade < classes:
            with self._lock:
                # not over a row another thread published meanwhile (it sets rows, then writes here)
                if self.rows[state] is None:
                    self._table[256 * state:256 * (state + 1)] = np.where(live[class_array], UNBUILT, DEAD) + STORED
        return pending

    def _class_target(self, pending: Pending, c: int) -> int:
        """The state class ``c`` of a pending row leads to."""
        byte = pending[0][c]
        derivative = self.exprs.derivative
        return self._intern([(origin, derivative(e, byte)) for origin, e in pending[3][c]])

    def _publish(self, state: int, pending: Pending) -> tuple[int, ...]:
        """The row of a pending state whose classes are all made, published whole."""
        # a tuple of ints: the collector stops tracking it after one pass, where a list of 256
        # would be traversed by every full collection (hundreds of ms once rows number 100k)
        row = tuple(pending[4][pending[2]].tolist())
        self.rows[state] = row  # published whole: concurrent readers see None or the full row
        with self._lock:
            self._table[256 * state:256 * (state + 1)] = np.array(row, dtype=np.int32) + STORED
        self._pending.pop(state, None)
        return row

    def _grow(self, capacity: int) -> None:
        """Room for ``capacity`` states in the dense table (the lock is held). A walk still
        reading the old table sees cells made since as UNBUILT and asks again (``dense_cell``)."""
        pages, accepts = _zeroed_tables(capacity)
        pages.array[:len(self._table)] = self._table
        accepts[:len(self._accepts)] = self._accepts
        self._pages, self._table, self._accepts = pages, pages.array, accepts
        self._core = self._make_core()

    def cell_maker(self) -> tuple[object, tuple[object, ...]] | None:
        """``(make_cell, core)`` for compiled walks: ``Store.make_cell`` and what it reads, so a
        walk makes a missing cell with one C call, and calls back into Python (``dense_cell``)
        only for what it leaves there; None without the C store. Ask again after the table
        grows (the core names the tables)."""
        return None if self._store is None else (self._store.make_cell, self._core)

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """The transitions as an int32 table (``table[256 * state + byte] - STORED``: the next
        state, ``DEAD``, or ``UNBUILT``) and the accepting byte per state, for compiled walks.
        Room for ``MAX_STATES`` states from the start; past that both grow (new arrays), so ask
        again after ``dense_cell``."""
        return self._table, self._accepts

    def dense_cell(self, state: int, byte: int) -> None:
        """Make sure ``state``'s transition on ``byte`` is in the current dense table: its class
        made (``cell``) and written there, every byte of the class. A state with guarded pairs
        (``_LazyRow``) has its transitions made as bytes are asked for, a class at a time where its
        guards give splits (else a byte), and written so: the table holds the classes asked for,
        the rest stay ``UNBUILT`` until a walk asks."""
        if self.tags[state]:
            row = self.row(state)
            target = row[byte]  # type: ignore[index]
            same = np.array(row.same_as(byte), dtype=np.intp)  # type: ignore[union-attr]
            with self._lock:
                cells = self._table[256 * state:256 * (state + 1)]
                same = same[cells[same] == UNBUILT + STORED]
                cells[same] = target + STORED
            return
        target = self.cell(state, byte)
        if self._store is not None:
            return  # the whole class is in the table (_store_cell)
        if self._table[256 * state + byte] == UNBUILT + STORED:
            pending = self._pending.get(state)
            with self._lock:
                if pending is not None:
                    row_cells = self._table[256 * state:256 * (state + 1)]
                    row_cells[pending[2] == pending[1][byte]] = target + STORED
                else:  # published since (the whole row is written, or is being written)
                    self._table[256 * state + byte] = target + STORED

    def _guarded_row(self, state: int) -> "_LazyRow":
        """The row of a state with guarded pairs, filled as bytes are asked for: a guard's tag
        tells apart bytes its expression does not, and inside an A-label every text is a state of
        its own, so building all of a row there would make ~60 states for each one a walk goes on
        from. A transition is made per class of the bytes that neither the pairs' expressions nor
        their guards' tags tell apart (``LexemeGuard.splits``), per byte where a guard gives no
        splits (a host name being read: 6-8 classes, where per byte a walk made ~1,900
        transitions for one mask)."""
        exprs = self.exprs
        firsts = [exprs.first_bytes(e) for _origin, e in self.pairs[state]]
        union = 0
        for first in firsts:
            union |= first
        splits: list[int] = []
        for origin, tag in self.tags[state]:
            guard = self._guard(origin)
            told = getattr(guard, "splits", None)
            found = None if told is None else told(tag)
            if self._store is not None:
                self._note_moves(origin, guard, tag, found)  # type: ignore[arg-type]
            if found is None:
                return _LazyRow(self, state, union, firsts, None, None)
            splits.extend(found)
        splits.extend(split for _origin, e in self.pairs[state] for split in exprs.split_sets(e))
        key = split_key(splits)
        return _LazyRow(self, state, union, firsts, _class_blocks(key), _class_map(key)[1])

    def _note_moves(self, origin: int, guard: LexemeGuard, tag: Hashable, splits: tuple[int, ...] | None) -> None:
        """Write down for the C maker of cells (``ir/_cells.c``) how ``origin``'s ``tag`` moves:
        per class of the guard's ``splits`` at it (None: no class; every cell stays Python's), the
        tag a byte of the class leads to (None: rejected) and whether it is complete, where that tag
        needs no witness (``completions`` None: the pair is vouched for whatever its expression);
        a class whose tag needs one stays Python's (255). Once per (origin, tag) until the table
        is cleared (bounded like the witness memo): a host name's tags outside an A-label are a
        handful, and ``IDLE`` (a label that is no A-label) carries nearly every cell of a walk."""
        key = (origin, tag)
        if key in self._moves:
            return
        moves: Moves | None = None
        if splits is not None:
            representatives, class_of, _array = _class_map(split_key(list(splits)))
            if len(representatives) < 255:
                nexts: list[Hashable | None] = []
                completes: list[bool] = []
                python: set[int] = set()
                for c, byte in enumerate(representatives):
                    following = guard.step(tag, byte)
                    if following is not None and guard.completions(following) is not None:
                        python.add(c)
                    nexts.append(following)
                    completes.append(following is not None and guard.complete(following))
                moves = (bytes(255 if c in python else c for c in class_of), tuple(nexts), tuple(completes))
        with self._lock:
            if len(self._moves) >= _VOUCH_ENTRIES:
                self._moves.clear()
            self._moves[key] = moves

    def _guarded_step(self, state: int, byte: int, firsts: list[int]) -> int:
        exprs = self.exprs
        tags = dict(self.tags[state])
        stepped = []
        next_tags: dict[int, Hashable | None] = {}
        for (origin, e), first in zip(self.pairs[state], firsts):
            if (first >> byte) & 1:
                stepped.append((origin, exprs.derivative(e, byte)))
                if origin in tags:
                    next_tags[origin] = self._guard(origin).step(tags[origin], byte)  # type: ignore[union-attr]
        return self._intern(stepped, next_tags)

    def first_bytes(self, state: int) -> tuple[int, ...]:
        """The bytes that may lead somewhere from ``state`` (a superset of the live ones), in
        increasing order. Cached per state."""
        found = self._first.get(state)
        if found is None:
            mask = 0
            for _origin, e in self.pairs[state]:
                mask |= self.exprs.first_bytes(e)
            found = self._first[state] = tuple([b for b in range(256) if (mask >> b) & 1])
        return found


def _set_key(origins: frozenset[int]) -> bytes:
    """A set of origins (non-negative, below 2**32: ``OverflowError`` past that, never a
    silent wrap) as bytes: sorted, four bytes each."""
    return array("I", sorted(origins)).tobytes()


def _origin_key(expr: int, guard: int, occurrence: int) -> int:
    """``(expr, guard, occurrence)`` (non-negative ints; ``expr`` and ``occurrence`` below 2**48,
    far past any store's size) as one int: the key of ``LexemeDFA._origin_ids``."""
    return (guard << 96) | (occurrence << 48) | expr


#: The empty set of origins, shared: each ``frozenset()`` made from an empty iterable is a new
#: object the collector tracks, and most states match nothing (70,000 of them once tracked made
#: every full collection slower).
_NONE: frozenset[int] = frozenset()

_DFAS: "weakref.WeakKeyDictionary[ExprSet, LexemeDFA]" = weakref.WeakKeyDictionary()
_DFAS_LOCK = threading.Lock()


def _zeroed_tables(capacity: int) -> tuple[RowPages, np.ndarray]:
    """A dense table and accepting bytes for ``capacity`` states, all zero (every transition
    ``UNBUILT``): the table on pages of its own (``engine/row_pages.py``)."""
    return RowPages(256 * capacity), np.zeros(capacity, dtype=np.uint8)


def dfa_for(exprs: ExprSet) -> LexemeDFA:
    """The one DFA of ``exprs`` (made on first use; it lives as long as the set)."""
    found = _DFAS.get(exprs)
    if found is None:
        with _DFAS_LOCK:
            found = _DFAS.get(exprs)
            if found is None:
                found = _DFAS[exprs] = LexemeDFA(exprs)
    return found


def all_origins(dfa: LexemeDFA, exprs: Iterable[int], guards: Mapping[int, LexemeGuard]) -> list[int]:
    """The origin of each lexeme ``i`` of one grammar (expression ``exprs[i]``, guard
    ``guards.get(i)``): distinct ids for distinct lexemes, as lexemes with one expression and
    guard are numbered by occurrence."""
    seen: dict[tuple[int, int], int] = {}
    origins = []
    for index, expr in enumerate(exprs):
        guard = guards.get(index)
        key = (expr, id(guard) if guard is not None else 0)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        origins.append(dfa.origin(expr, guard, occurrence))
    return origins
