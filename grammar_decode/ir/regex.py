"""Regular expressions over bytes, as hash-consed nodes with Brzozowski derivatives.

An ``ExprSet`` owns every expression node of one grammar. A node is an ``int`` id; the smart
constructors (``concat``, ``alt``, ``both``, ``negate``, ``repeat``, ``byteset``) bring every node
into a canonical form (associativity, commutativity and idempotence of ``|`` and ``&``, absorbing
``∅``, neutral ``ε``, adjacent byte sets merged, ``¬¬r = r``, repeat bounds normalised), so two
nodes built the same way from equal parts get the same id. Owens, Reppy and Turon ("Regular-
expression derivatives re-examined", 2009) show that with these rules every expression has finitely
many distinct derivatives, which is what lets a lexer build its DFA lazily with expression ids as
states: equal ids have equal futures by construction, and no clamp needs a hand-written proof.

Bounded repetition stays symbolic: the derivative of ``r{lo,hi}`` is ``d(r) · r{lo-1,hi-1}``, a
counter inside the node, so ``[a-z]{0,100000}`` is one node, and its derivatives are created one
at a time, only as input reaches them.

Emptiness: without ``&`` and ``¬``, a canonical node other than ``NOTHING`` always has a non-empty
language. With them, ``is_empty`` searches the derivatives (bounded by ``fuel``; exhausting it
raises ``RegexTooComplex``). Costs: a constructor is a dict lookup once the node exists; a
derivative is memoised per (node, byte).
"""

from __future__ import annotations

import functools
import heapq
import threading
from collections import deque

import numpy as np
from typing import Callable, Iterable, Iterator, TypeVar

from ..limits import active, check_deadline
from ..errors import RegexTooComplex
from .counting import CountedIntersections
from .kinds import (ALL_BYTES, AND_KIND, ANYTHING, BYTES_KIND, CONCAT_KIND, EPSILON, EPSILON_KIND, LITERAL_KIND,
                    LONG_LITERAL, NOT_KIND, NOTHING, NOTHING_KIND, OR_KIND, REPEAT_KIND)

from ..kernels import load, selected

_T = TypeVar("_T")
_exprs = load("grammar_decode.ir._exprs", "the compiled expression store", "expressions use the slower Python store")
#: Whether new ``ExprSet``s keep their nodes in the C store (``_exprs.c``; see ``kernels``).
COMPILED = selected(_exprs)
#: ``fill_class(table, offset, klass, value) -> cells still 0``: one byte class of a row of a
#: dense int32 table set to ``value`` (where the C store is built; None elsewhere).
fill_class: "Callable[[np.ndarray, int, int, int], int] | None" = _exprs.fill_class if _exprs is not None else None
#: ``row_of(table, offset, bias) -> tuple``: the 256 cells of a dense int32 table's row less
#: ``bias``, as a tuple of ints the cyclic collector does not track (None without the C store).
row_of: "Callable[[np.ndarray, int, int], tuple[int, ...]] | None" = _exprs.row_of if _exprs is not None else None
#: ``untracked(obj) -> obj``: a tuple of ints (or of tuples of ints) taken off the cyclic
#: collector's lists at once (the identity without the C store).
untracked: "Callable[[_T], _T]" = _exprs.untracked if _exprs is not None else (lambda obj: obj)

__all__ = ["ALL_BYTES", "AND_KIND", "ANYTHING", "BYTES_KIND", "CONCAT_KIND", "EPSILON", "EPSILON_KIND",
           "ExprSet", "LITERAL_KIND", "LONG_LITERAL", "NOT_KIND", "NOTHING", "NOTHING_KIND", "OR_KIND", "REPEAT_KIND",
           "RegexTooComplex", "byte_mask", "byte_range", "fill_class", "partition_of", "row_of", "shared_exprs",
           "split_key", "untracked"]




def byte_mask(values: Iterable[int]) -> int:
    """The 256-bit set of the given byte values."""
    mask = 0
    for value in values:
        mask |= 1 << value
    return mask


def byte_range(lo: int, hi: int) -> int:
    """The 256-bit set of bytes ``lo..hi`` inclusive."""
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


class ExprSet(CountedIntersections):
    """Hash-consed regular expressions over bytes. Thread-safe: node creation takes a lock;
    lookups of existing nodes and memoised derivatives do not.

    The nodes live in one of two stores with the same canonical forms: the C store
    (``_exprs.Store``: the constructors, derivatives, first bytes and the ``&``/``¬`` and
    unbounded-repeat flags in C, over flat arrays; ``kind``, ``args`` and ``nullable`` are views
    of it) where it is built and ``compiled`` is not False, else the lists and methods below, the
    reference it is tested against node for node. The analyses (emptiness, lengths, counting)
    are Python over either."""

    def __init__(self, compiled: bool | None = None) -> None:
        self.kind: "list[int] | _exprs.View" = []
        self.args: "list[object] | _exprs.View" = []
        self.nullable: "list[bool] | _exprs.View" = []
        self._index: dict[tuple, int] = {}
        self._deriv: dict[int, int] = {}
        self._empty: dict[int, bool] = {}
        self._first: dict[int, int] = {}
        self._boolean: dict[int, bool] = {}
        self._unbounded: dict[int, bool] = {}
        self._classes: dict[int, tuple[int, ...]] = {}
        # as tuples of ints, which the collector stops tracking: frozensets, always tracked, held
        # millions of masks that every full collection walked (hundreds of ms)
        self._split_sets: dict[int, tuple[int, ...]] = {}
        self._min: dict[int, int | None] = {}
        self._bound: dict[int, int | None] = {}  # structural lower bounds on lengths (_lower_bound)
        self._unit_steps: dict[tuple[int, int], dict[int, int]] = {}
        self._infinite: dict[int, bool] = {}  # is_infinite, for every node its walks reached
        self._infinite_untold: set[int] = set()  # where _infinite_less_finite's walk ran out of states
        self._finite: dict[int, bool] = {}  # is_bounded
        self._structural: dict[int, int | None] = {}  # _structural_min, for nodes without &/¬
        #: set by ``retire``: ``shared_exprs`` hands this set to no new grammar
        self.retired = False
        self._lock = threading.Lock()
        #: the C store, or None (the Python one)
        self.store: "_exprs.Store | None" = None
        self._decide = None
        if (COMPILED if compiled is None else compiled and _exprs is not None):
            self._use_store(_exprs.Store())
            return
        # the three fixed ids, in order: NOTHING, EPSILON, ANYTHING
        self._node(NOTHING_KIND, None, False)
        self._node(EPSILON_KIND, None, True)
        self._node(NOT_KIND, NOTHING, True)

    def _use_store(self, store: "_exprs.Store") -> None:
        """Keep the nodes in ``store``: its views stand for the lists, its methods for the
        constructors and derivatives below (instance attributes, found before the class's)."""
        self.store = store
        store.use_decided(self._empty)  # its probes for words read and add to what searches decided
        #: asked first by ``is_empty`` (None: the Python search alone, as without the C store)
        self._decide: "Callable[[int], int] | None" = store.decide
        self.kind, self.args, self.nullable = store.kinds, store.args, store.nullables
        self.byteset = store.byteset  # type: ignore[method-assign]
        self._literal_from = store.literal_from  # type: ignore[method-assign]
        self.concat = store.concat  # type: ignore[method-assign]
        self.alt = store.alt  # type: ignore[method-assign]
        self.both = store.both  # type: ignore[method-assign]
        self.negate = store.negate  # type: ignore[method-assign]
        self.derivative = store.derivative  # type: ignore[method-assign]
        self.first_bytes = store.first_bytes  # type: ignore[method-assign]
        self.has_boolean = store.has_boolean  # type: ignore[method-assign]
        self.has_unbounded_repeat = store.has_unbounded_repeat  # type: ignore[method-assign]
        self._store_repeat = store.repeat

    def __len__(self) -> int:
        return len(self.kind)

    def retire(self) -> None:
        """Hand this set to no new grammar (``shared_exprs`` starts another): what is built on it
        has grown past its bound. Grammars on it keep working."""
        self.retired = True

    def _node(self, kind: int, args: object, nullable: bool) -> int:
        key = (kind, args)
        found = self._index.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._index.get(key)
            if found is not None:
                return found
            node = len(self.kind)
            self.kind.append(kind)
            self.args.append(args)
            self.nullable.append(nullable)
            self._index[key] = node
            return node

    # -- constructors --------------------------------------------------------------------------

    def byteset(self, mask: int) -> int:
        """One byte out of ``mask`` (a 256-bit set); ``NOTHING`` when the set is empty."""
        if not 0 <= mask <= ALL_BYTES:
            raise ValueError("a byte set is a 256-bit non-negative integer")
        return NOTHING if mask == 0 else self._node(BYTES_KIND, mask, False)

    def literal(self, data: bytes) -> int:
        """Exactly the byte string ``data`` (``LONG_LITERAL`` bytes or more: one node)."""
        if len(data) >= LONG_LITERAL:
            return self._literal_from(bytes(data), 0)
        return self.concat(*(self.byteset(1 << b) for b in data))

    def _literal_from(self, data: bytes, start: int) -> int:
        """``data[start:]`` as a node: ``ε``, one byte set, or a ``LITERAL_KIND`` node."""
        left = len(data) - start
        if left == 0:
            return EPSILON
        if left == 1:
            return self.byteset(1 << data[start])
        return self._node(LITERAL_KIND, (data, start), False)

    def concat(self, *items: int) -> int:
        """The concatenation of ``items`` (``ε`` when there are none)."""
        flat: list[int] = []
        for item in items:
            kind = self.kind[item]
            if kind == NOTHING_KIND:
                return NOTHING
            if kind == EPSILON_KIND:
                continue
            if kind == CONCAT_KIND:
                flat.extend(self.args[item])  # type: ignore[arg-type]
            else:
                flat.append(item)
        if not flat:
            return EPSILON
        if len(flat) == 1:
            return flat[0]
        nullable = all(self.nullable[i] for i in flat)
        return self._node(CONCAT_KIND, tuple(flat), nullable)

    def alt(self, *items: int) -> int:
        """The union of ``items`` (``NOTHING`` when there are none)."""
        members: set[int] = set()
        mask = 0
        for item in items:
            kind = self.kind[item]
            if kind == OR_KIND:
                for inner in self.args[item]:  # type: ignore[union-attr]
                    if self.kind[inner] == BYTES_KIND:
                        mask |= self.args[inner]  # type: ignore[operator]
                    else:
                        members.add(inner)
            elif kind == BYTES_KIND:
                mask |= self.args[item]  # type: ignore[operator]
            elif kind != NOTHING_KIND:
                members.add(item)
        if ANYTHING in members:
            return ANYTHING
        if mask:
            members.add(self.byteset(mask))
        if EPSILON in members and any(self.nullable[m] for m in members if m != EPSILON):
            members.discard(EPSILON)  # ε adds nothing to a union that is already nullable
        if not members:
            return NOTHING
        if len(members) == 1:
            return next(iter(members))
        ordered = tuple(sorted(members))
        return self._node(OR_KIND, ordered, any(self.nullable[m] for m in ordered))

    def both(self, *items: int) -> int:
        """The intersection of ``items`` (``ANYTHING`` when there are none; ``NOTHING`` when one
        is another's complement)."""
        members: set[int] = set()
        for item in items:
            kind = self.kind[item]
            if kind == NOTHING_KIND:
                return NOTHING
            if kind == AND_KIND:
                members.update(self.args[item])  # type: ignore[arg-type]
            elif item != ANYTHING:
                members.add(item)
        if not members:
            return ANYTHING
        byte_sets = [m for m in members if self.kind[m] == BYTES_KIND]
        if byte_sets and len(members) == len(byte_sets):
            mask = ALL_BYTES
            for m in byte_sets:
                mask &= self.args[m]  # type: ignore[operator]
            return self.byteset(mask)
        if len(members) == 1:
            return next(iter(members))
        if any(self.kind[m] == NOT_KIND and self.args[m] in members for m in members):
            # a member and its complement: nothing (without it, ``is_empty`` would search the
            # derivatives of e.g. a key region ``string & ¬string`` to tell; ``_exprs.c`` alike)
            return NOTHING
        ordered = tuple(sorted(members))
        return self._node(AND_KIND, ordered, all(self.nullable[m] for m in ordered))

    def negate(self, item: int) -> int:
        """Every byte string not in ``item``."""
        if self.kind[item] == NOT_KIND:
            return self.args[item]  # type: ignore[return-value]
        return self._node(NOT_KIND, item, not self.nullable[item])

    def without_empty(self, item: int) -> int:
        """``item`` minus the empty string. Structural (no ``&``/``¬`` introduced) when ``item``
        has none; ``item & ¬ε`` otherwise."""
        if not self.nullable[item]:
            return item
        if self.has_boolean(item):
            return self.difference(item, EPSILON)
        kind = self.kind[item]
        args = self.args[item]
        if kind == EPSILON_KIND:
            return NOTHING
        if kind == OR_KIND:
            return self.alt(*(self.without_empty(m) for m in args))  # type: ignore[union-attr]
        if kind == CONCAT_KIND:
            head, rest = args[0], self.concat(*args[1:])  # type: ignore[index]
            # both parts are nullable: a non-empty head then anything, or an empty head and a non-empty rest
            return self.alt(self.concat(self.without_empty(head), rest), self.without_empty(rest))
        inner, _lo, hi = args  # type: ignore[misc]  # REPEAT with lo == 0
        return self.concat(self.without_empty(inner), self.repeat(inner, 0, None if hi is None else hi - 1))

    def difference(self, left: int, right: int) -> int:
        """``left`` minus ``right``."""
        return self.both(left, self.negate(right))

    def repeat(self, item: int, lo: int, hi: int | None) -> int:
        """``item{lo,hi}`` (``hi=None``: unbounded). Stays one node whatever the bounds."""
        if lo < 0 or (hi is not None and hi < lo):
            raise ValueError(f"bad repetition bounds {{{lo},{hi}}}")
        if self.store is not None:  # int64 bounds there: clamped to _MAX_BOUND (exact, see there)
            return self._store_repeat(item, min(lo, _MAX_BOUND), None if hi is None else min(hi, _MAX_BOUND))
        if hi == 0 or item == EPSILON:
            return EPSILON
        if item == NOTHING:
            return EPSILON if lo == 0 else NOTHING
        if self.nullable[item]:
            lo = 0  # r{lo,hi} = r{0,hi} when r matches the empty string
        if lo == 1 and hi == 1:
            return item
        if self.kind[item] == REPEAT_KIND:
            inner, ilo, ihi = self.args[item]  # type: ignore[misc]
            # (r*)* = r*, (r*){lo,hi} = r*, (r+)* = r*: flatten the common unbounded cases only
            if ihi is None and ilo <= 1 and (lo == 0 or ilo == 0):
                return self._node(REPEAT_KIND, (inner, 0 if lo == 0 or ilo == 0 else 1, None), True)
        return self._node(REPEAT_KIND, (item, lo, hi), lo == 0 or self.nullable[item])

    def star(self, item: int) -> int:
        return self.repeat(item, 0, None)

    def plus(self, item: int) -> int:
        return self.repeat(item, 1, None)

    def optional(self, item: int) -> int:
        return self.alt(item, EPSILON)

    # -- derivatives ---------------------------------------------------------------------------

    def derivative(self, item: int, byte: int) -> int:
        """The expression matching ``{s : byte + s in item}``. Memoised per (node, byte)."""
        key = item * 256 + byte
        found = self._deriv.get(key)
        if found is not None:
            return found
        result = self._derive(item, byte)
        self._deriv[key] = result
        return result

    def _derive(self, item: int, byte: int) -> int:
        kind = self.kind[item]
        args = self.args[item]
        if kind == BYTES_KIND:
            return EPSILON if (args >> byte) & 1 else NOTHING  # type: ignore[operator]
        if kind in (NOTHING_KIND, EPSILON_KIND):
            return NOTHING
        if kind == LITERAL_KIND:
            data, start = args  # type: ignore[misc]
            return self._literal_from(data, start + 1) if data[start] == byte else NOTHING
        if kind == CONCAT_KIND:
            head, rest = args[0], args[1:]  # type: ignore[index]
            derived = self.derivative(head, byte)
            if derived == NOTHING and not self.nullable[head]:
                return NOTHING  # without building the tail (O(length) for a long concatenation)
            tail = self.concat(*rest)
            first = self.concat(derived, tail)
            if self.nullable[head]:
                return self.alt(first, self.derivative(tail, byte))
            return first
        if kind == OR_KIND:
            # members that cannot begin with ``byte`` derive to ∅: skip them on their first-byte
            # sets (a Unicode class is a union of hundreds of UTF-8 sequences; few take a byte)
            first = self.first_bytes
            return self.alt(*(self.derivative(m, byte) for m in args  # type: ignore[union-attr]
                              if (first(m) >> byte) & 1))
        if kind == AND_KIND:
            return self.both(*(self.derivative(m, byte) for m in args))  # type: ignore[union-attr]
        if kind == NOT_KIND:
            return self.negate(self.derivative(args, byte))  # type: ignore[arg-type]
        inner, lo, hi = args  # type: ignore[misc]
        rest = self.repeat(inner, max(lo - 1, 0), None if hi is None else hi - 1)
        return self.concat(self.derivative(inner, byte), rest)

    def derive_bytes(self, item: int, data: bytes) -> int:
        for byte in data:
            if item == NOTHING:
                break
            item = self.derivative(item, byte)
        return item

    def matches(self, item: int, data: bytes) -> bool:
        """Whether ``data`` is in the language of ``item``."""
        return self.nullable[self.derive_bytes(item, data)]

    def witnessed(self, item: int, data: bytes, shortest_of_superset: bool = False) -> bool:
        """``matches``, and where ``data`` is a string of ``item``, ``item`` is known non-empty
        from then on (``is_empty`` answers from its memo instead of searching again). With
        ``shortest_of_superset`` (the caller's promise: no string of a language holding all of
        ``item``'s is shorter than ``data``), ``len(data)`` is also recorded as ``item``'s
        ``min_length``: no string of ``item`` is shorter, and ``data`` is one."""
        if self.matches(item, data):
            self._empty[item] = False
            if shortest_of_superset:
                self._min.setdefault(item, len(data))
            return True
        return False

    # -- byte classes --------------------------------------------------------------------------

    def first_bytes(self, item: int) -> int:
        """A superset of the bytes whose derivative is not ``NOTHING`` (exact without ``¬``).
        Memoised per node."""
        found = self._first.get(item)
        if found is None:
            found = self._first[item] = self._first_bytes(item)
        return found

    def _first_bytes(self, item: int) -> int:
        kind = self.kind[item]
        args = self.args[item]
        if kind == BYTES_KIND:
            return args  # type: ignore[return-value]
        if kind == LITERAL_KIND:
            return 1 << args[0][args[1]]  # type: ignore[index]
        if kind in (NOTHING_KIND, EPSILON_KIND):
            return 0
        if kind == CONCAT_KIND:
            mask = 0
            for member in args:  # type: ignore[union-attr]
                mask |= self.first_bytes(member)
                if not self.nullable[member]:
                    break
            return mask
        if kind == OR_KIND:
            mask = 0
            for member in args:  # type: ignore[union-attr]
                mask |= self.first_bytes(member)
            return mask
        if kind == AND_KIND:
            mask = ALL_BYTES
            for member in args:  # type: ignore[union-attr]
                mask &= self.first_bytes(member)
            return mask
        if kind == NOT_KIND:
            return ALL_BYTES
        return self.first_bytes(args[0])  # type: ignore[index]

    def partition_of_sets(self, splits: Iterable[int]) -> tuple[int, ...]:
        """The coarsest partition of the bytes along every set in ``splits`` (memoised)."""
        return partition_of(split_key(splits))

    def byte_classes(self, item: int) -> tuple[int, ...]:
        """A partition of the 256 bytes into sets with equal derivatives, in order of least byte;
        never splits less than needed. With the C store, along the leaves a derivative inspects
        (first positions: through a concatenation as far as its first member that cannot be
        empty; ``Store.byte_classes``); else along every leaf under ``item`` (``split_sets``),
        finer: a node holding hundreds of names has a class per letter where the next byte of
        each name would do. Either way every byte's derivative is its class's, so a search by
        class reaches the same derivatives. Memoised per node."""
        found = self._classes.get(item)
        if found is None:
            store = self.store
            found = self._classes[item] = store.byte_classes(item) if store is not None else \
                partition_of(split_key(self.split_sets(item)))
        return found

    @staticmethod
    def partition(parts: Iterable[int]) -> list[int]:
        """The coarsest partition of the 256 bytes that splits along every set in ``parts``,
        ordered by each block's least byte. Many sets (a Unicode class is hundreds of UTF-8
        ranges) are grouped by each byte's membership signature, in O(bytes × sets / 8) with
        numpy; a few by refining block by block."""
        parts = list(parts)
        if len(parts) > 24:
            return _partition_by_signature(parts)
        classes = {ALL_BYTES}
        for part in parts:
            refined = set()
            for block in classes:
                inside, outside = block & part, block & ~part
                if inside:
                    refined.add(inside)
                if outside:
                    refined.add(outside)
            classes = refined
        return sorted(classes, key=lambda m: (m & -m))

    def subterms(self, item: int) -> Iterator[int]:
        """Every node reachable from ``item`` (itself included), each once."""
        stack = [item]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            yield node
            stack.extend(self._children(node))

    def split_sets(self, item: int) -> tuple[int, ...]:
        """The byte sets of the leaves under ``item``, each once, in no particular order: bytes that
        no leaf tells apart have equal derivatives. Memoised per node and built from the children's,
        so a new node over known ones (a counter's next count) costs the union only."""
        found = self._split_sets.get(item)
        if found is not None:
            return found
        # iterative post-order: deep concatenations must not hit the recursion limit
        stack = [item]
        while stack:
            node = stack[-1]
            if node in self._split_sets:
                stack.pop()
                continue
            kind = self.kind[node]
            args = self.args[node]
            children = self._children(node)
            missing = [c for c in children if c not in self._split_sets]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            # tuples of ints, off the collector's lists at once: a tracked value tracks the memo
            # again, and each full collection then visited all its entries (one per node)
            if kind == BYTES_KIND:
                self._split_sets[node] = untracked((args,))  # type: ignore[assignment]
            elif kind == LITERAL_KIND:  # only the next byte decides the derivative
                self._split_sets[node] = untracked((1 << args[0][args[1]],))  # type: ignore[index]
            elif len(children) == 1:
                self._split_sets[node] = self._split_sets[children[0]]
            else:
                self._split_sets[node] = untracked(tuple(frozenset().union(*(self._split_sets[c] for c in children))))
        return self._split_sets[item]

    # -- analyses ------------------------------------------------------------------------------

    def has_boolean(self, item: int) -> bool:
        """Whether ``&`` or ``¬`` occurs in ``item`` (then emptiness needs a search). Memoised per node."""
        found = self._boolean.get(item)
        if found is None:
            found = self._somewhere(item, self._boolean, lambda node: self.kind[node] in (AND_KIND, NOT_KIND))
        return found

    def has_unbounded_repeat(self, item: int) -> bool:
        """Whether a repeat with no upper bound occurs in ``item``. Memoised per node."""
        found = self._unbounded.get(item)
        if found is None:
            found = self._somewhere(item, self._unbounded, lambda node: self.kind[node] == REPEAT_KIND
                                    and self.args[node][2] is None)  # type: ignore[index]
        return found

    def _children(self, node: int) -> tuple[int, ...]:
        kind = self.kind[node]
        args = self.args[node]
        if kind in (CONCAT_KIND, OR_KIND, AND_KIND):
            return args  # type: ignore[return-value]
        if kind == NOT_KIND:
            return (args,)  # type: ignore[return-value]
        if kind == REPEAT_KIND:
            return (args[0],)  # type: ignore[index]
        return ()

    def _somewhere(self, item: int, table: dict[int, bool], test: Callable[[int], bool]) -> bool:
        """Whether ``test`` holds at some node under ``item``, memoised per node in ``table``
        bottom-up (iteratively: deep concatenations must not hit the recursion limit), so a new
        node over known ones costs its children only."""
        stack = [item]
        while stack:
            node = stack[-1]
            if node in table:
                stack.pop()
                continue
            if test(node):
                table[node] = True
                stack.pop()
                continue
            children = self._children(node)
            missing = [c for c in children if c not in table]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            table[node] = any(table[c] for c in children)
        return table[item]

    def is_empty(self, item: int, fuel: int | None = None) -> bool:
        """Whether ``item`` matches nothing at all. Structural without ``&``/``¬``; otherwise a
        breadth-first search over derivatives by byte class, cached per node."""
        if item == NOTHING:
            return True
        if self.nullable[item]:
            return False
        cached = self._empty.get(item)
        if cached is not None:
            return cached
        if not self.has_boolean(item):
            return False
        # a word shown, or a bounded search, in C (ir/_exprs.c); its shortest word and probe are the
        # certificates below, so an undecided answer goes straight to counting and the search
        certified = self._decide is not None
        if certified:
            verdict = self._decide(item)  # type: ignore[misc]
            if verdict:
                self._empty[item] = verdict == 2
                return verdict == 2
        if fuel is None:
            fuel = active().regex_states
        if self._infinite_less_finite(item, fuel):
            return False
        known = self._min.get(item, -1)
        if known != -1:
            empty = known is None
        else:
            kind = self.kind[item]
            args = self.args[item]
            if kind == CONCAT_KIND:
                empty = any(self.is_empty(m, fuel) for m in args)  # type: ignore[union-attr]
            elif kind == OR_KIND:
                empty = all(self.is_empty(m, fuel) for m in args)  # type: ignore[union-attr]
            elif kind == REPEAT_KIND:
                empty = args[1] > 0 and self.is_empty(args[0], fuel)  # type: ignore[index]
            elif kind == AND_KIND and not certified and (self._short_witness(item) or self._greedy_witness(item)):
                empty = False
            else:
                counted = self._counted_min(item, fuel) if kind == AND_KIND else NotImplemented
                if counted is not NotImplemented:  # an intersection with a count: counted, any size
                    self._min[item] = counted
                    empty = counted is None
                else:
                    empty = not self._has_witness(item, fuel)
        self._empty[item] = empty
        return empty

    def is_bounded(self, item: int) -> bool:
        """Whether ``item``'s structure alone shows its language finite: no repeat without an upper
        bound outside an intersection that has a finite member, and no complement. Sound, not
        complete (False says nothing). Memoised per node."""
        found = self._finite.get(item)
        if found is not None:
            return found
        kind = self.kind[item]
        args = self.args[item]
        if kind in (NOTHING_KIND, EPSILON_KIND, BYTES_KIND, LITERAL_KIND):
            result = True
        elif kind == NOT_KIND:
            result = False
        elif kind == AND_KIND:
            result = any(self.is_bounded(m) for m in args)  # type: ignore[union-attr]
        elif kind in (CONCAT_KIND, OR_KIND):
            result = all(self.is_bounded(m) for m in args)  # type: ignore[union-attr]
        else:  # REPEAT
            inner, _lo, hi = args  # type: ignore[misc]
            result = hi is not None and self.is_bounded(inner)
        self._finite[item] = result
        return result

    def _lower_bound(self, item: int) -> int | None:
        """A lower bound on the length of ``item``'s strings, from its structure alone (``¬x``
        counts 0, ``x & y`` the larger bound); None where the structure shows no string at all.
        Memoised per node."""
        found = self._bound.get(item, -1)
        if found != -1:
            return found
        kind = self.kind[item]
        args = self.args[item]
        result: int | None
        if not self.has_boolean(item):
            result = self._structural_min(item, self._structural)
        elif kind == NOT_KIND:
            result = 0
        elif kind == AND_KIND:
            bounds = [self._lower_bound(m) for m in args]  # type: ignore[union-attr]
            result = None if any(b is None for b in bounds) else max(bounds)  # type: ignore[type-var]
        elif kind == OR_KIND:
            known = [b for b in (self._lower_bound(m) for m in args) if b is not None]  # type: ignore[union-attr]
            result = min(known) if known else None
        elif kind == CONCAT_KIND:
            total = 0
            for member in args:  # type: ignore[union-attr]
                part = self._lower_bound(member)
                if part is None:
                    total = -1
                    break
                total += part
            result = None if total < 0 else total
        else:  # REPEAT
            inner, lo, _hi = args  # type: ignore[misc]
            part = self._lower_bound(inner) if lo else 0
            result = 0 if lo == 0 else (None if part is None else part * lo)
        self._bound[item] = result
        return result

    def _has_witness(self, item: int, fuel: int) -> bool:
        """Whether ``item`` matches some string: a best-first search over derivatives, the state
        closest to a complete string (by ``_lower_bound``) first. It stops at the first complete
        string, so a non-empty intersection costs a walk along one string rather than a
        breadth-first sweep of every state up to the shortest length (what ``min_length`` must
        do); an empty one costs the same sweep as the search.

        What a search learns is kept for the next one (the derivatives of a lexer state are the
        next states' questions): a node known non-empty ends the search at once; once a string
        is found, every node on the path to it is non-empty; when none is, every node the search
        reached is empty (it reached all that the item reaches, but those known empty or
        structurally empty)."""
        if self._plain_member_shortest(item, fuel) is not None:
            return True
        empty = self._empty
        heap: list[tuple[int, int, int]] = [(0, 0, item)]
        parent = {item: item}
        order = 0
        while heap:
            _bound, _order, node = heapq.heappop(heap)
            if self.nullable[node] or empty.get(node) is False:
                while True:  # the path to a string: each node on it has one
                    empty[node] = False
                    up = parent[node]
                    if up == node:
                        return True
                    node = up
            for block in self.byte_classes(node):
                nxt = self.derivative(node, (block & -block).bit_length() - 1)
                if nxt == NOTHING or nxt in parent or empty.get(nxt):
                    continue
                bound = self._lower_bound(nxt)
                if bound is None:
                    continue
                parent[nxt] = node
                _explored(len(parent), fuel)
                order += 1
                heapq.heappush(heap, (bound, order, nxt))
        for node in parent:
            empty[node] = True
        return False

    def _short_witness(self, item: int) -> bool:
        """Whether the intersection ``item`` matches a shortest string of one of its plain members
        (no ``&``/``¬``), read off the member's structure (``_structural_shortest``) where it is at
        most ``_SHORT_WITNESS`` bytes: a certificate that ``item`` is not empty, tried before
        counting and searching. A host name or a pattern with a length being read
        (``rest & char{0,k}``) is a new intersection at every byte; each cost ~1 ms by counting
        (the rest's states at the counter's boundaries), and costs a few derivatives this way;
        so does an item of ``uniqueItems`` over an enum (the enum less the values written), where
        a search for the enum's shortest string cost ~15 ms. False proves nothing."""
        for member in self.args[item]:  # type: ignore[union-attr]
            if self.has_boolean(member):  # a ``¬`` member too
                continue
            shortest = self._structural_min(member, self._structural)
            if shortest is None or shortest > _SHORT_WITNESS:
                continue
            candidate = self._structural_shortest(member)
            if candidate is not None and self.matches(item, candidate):
                return True
        return False

    def _greedy_witness(self, item: int) -> bool:
        """Whether a depth-first probe of at most ``_GREEDY_NODES`` derivatives' classes finds a
        string ``item`` matches: at each node, the derivative closest to a complete string (by
        ``_lower_bound``) first, the last byte class on a tie. A certificate that ``item`` is not
        empty (every node on the path to the string is marked so), tried before counting and the
        exhaustive search; False proves nothing. Where a key must be none of an object's names
        and none of its patterns (``string & ¬(names | patterns)``), or an item of ``uniqueItems``
        none of the values written, the shortest strings tried first are the excluded ones, and a
        breadth-first search sweeps every string up to the first length that escapes them (20-40 ms
        in a mask where there are hundreds of names); one path down costs a few derivatives per
        byte."""
        empty = self._empty
        nullable = self.nullable
        seen = {item}
        trail = [item]
        options = [self._ranked_derivatives(item, seen)]
        expanded = 1
        while options:
            ranked = options[-1]
            if not ranked:
                options.pop()
                trail.pop()
                continue
            node = ranked.pop()
            if nullable[node] or empty.get(node) is False:
                empty[node] = False
                for on_path in trail:
                    empty[on_path] = False
                return True
            if expanded >= _GREEDY_NODES:
                return False
            expanded += 1
            check_deadline()  # bounded without fuel (``_GREEDY_NODES``), but on the compile clock
            trail.append(node)
            options.append(self._ranked_derivatives(node, seen))
        return False

    def _ranked_derivatives(self, node: int, seen: set[int]) -> list[int]:
        """The derivatives of ``node`` by each byte class not in ``seen`` (added to it), less those
        known empty: the one to try first last (a nullable one, else by least ``_lower_bound``)."""
        empty = self._empty
        ranked: list[tuple[int, int]] = []
        for block in self.byte_classes(node):
            nxt = self.derivative(node, (block & -block).bit_length() - 1)
            if nxt == NOTHING or nxt in seen or empty.get(nxt):
                continue
            seen.add(nxt)
            bound = -1 if self.nullable[nxt] else self._lower_bound(nxt)
            if bound is not None:
                ranked.append((bound, nxt))
        ranked.sort(key=lambda pair: -pair[0])  # stable: among equal bounds the last class is popped first
        return [nxt for _bound, nxt in ranked]

    def _structural_shortest(self, item: int) -> bytes | None:
        """A shortest string of ``item`` (no ``&``/``¬`` in it), read off its structure without a
        search: the least byte of a byte set, a union's shortest member (the first on a tie), a
        repeat's fewest repetitions. O(the path taken), with ``_structural_min`` memoised. Every
        byte sequence of a concatenation of the byte sets that spell UTF-8 is well formed, so the
        string is one of ``item``'s."""
        kind = self.kind[item]
        args = self.args[item]
        if kind == NOTHING_KIND:
            return None
        if kind == EPSILON_KIND:
            return b""
        if kind == BYTES_KIND:
            return bytes(((args & -args).bit_length() - 1,)) if args else None  # type: ignore[operator]
        if kind == LITERAL_KIND:
            data, start = args  # type: ignore[misc]
            return data[start:]  # type: ignore[no-any-return]
        if kind == CONCAT_KIND:
            parts = []
            for member in args:  # type: ignore[union-attr]
                part = self._structural_shortest(member)
                if part is None:
                    return None
                parts.append(part)
            return b"".join(parts)
        if kind == OR_KIND:
            best, fewest = None, None
            for member in args:  # type: ignore[union-attr]
                length = self._structural_min(member, self._structural)
                if length is not None and (fewest is None or length < fewest):
                    best, fewest = member, length
            return None if best is None else self._structural_shortest(best)
        inner, lo, _hi = args  # type: ignore[misc]  # REPEAT
        if lo == 0:
            return b""
        part = self._structural_shortest(inner)
        return None if part is None else part * lo

    def _infinite_less_finite(self, item: int, fuel: int) -> bool:
        """Non-empty without a search: ``x1 & x2 ... & ¬y1 & ¬y2 ...`` whose positive part ``x``
        is an infinite language and each ``y`` finite (no ``&``/``¬`` inside): ``x`` has strings
        longer than any ``y``'s. A JSON key outside a long list of named keys looks like this
        (structural: ``x`` has no ``&``/``¬``, an unbounded repeat decides), and so does an item of
        a ``uniqueItems`` array less the values written (``x`` a string with a ``pattern``:
        ``is_infinite``, memoised over every derivative it walks, so the next state of the item
        costs a lookup where a witness search walked one string per state)."""
        if self.kind[item] != AND_KIND:
            return False
        positive = [m for m in self.args[item] if self.kind[m] != NOT_KIND]  # type: ignore[union-attr]
        negated = [self.args[m] for m in self.args[item] if self.kind[m] == NOT_KIND]  # type: ignore[union-attr]
        if not positive or any(self.has_boolean(y) or self.has_unbounded_repeat(y) for y in negated):
            return False
        if len(positive) == 1 and not self.has_boolean(positive[0]):
            return self.has_unbounded_repeat(positive[0])
        if any(self.is_bounded(m) for m in positive):
            return False  # a finite member (a format with a length cap): a walk could only prove it finite
        if any((c := self._counter_of(m)) is not None and (c[2] > 0 or c[3] is not None) for m in positive):
            # a count (a length beside a pattern): counting answers it whatever the bound, while
            # a walk would derive every value of the count, and again at each count the lexer reads
            return False
        whole = positive[0] if len(positive) == 1 else self.both(*positive)
        if whole in self._infinite_untold:
            return False
        try:
            return self.is_infinite(whole, min(fuel, _INFINITE_FUEL))
        except RegexTooComplex:
            self._infinite_untold.add(whole)  # not walked again: that would run out of states again
            return False  # too many states to tell this way: the witness search decides

    def is_infinite(self, item: int, fuel: int | None = None) -> bool:
        """Whether ``item`` matches infinitely many strings: some derivative from which a
        match is still reachable lies on a cycle of derivatives. One walk of every derivative
        by byte class (at most ``fuel``, default ``Limits.regex_states``, else
        ``RegexTooComplex``), then the live ones (reaching a nullable one) checked for a cycle
        by peeling off those with no live successor left; what is left after peeling is
        exactly the infinite nodes of the walk, so the answer is memoised for each of them (a
        later question about any derivative walked costs a lookup)."""
        found = self._infinite.get(item)
        if found is not None:
            return found
        if fuel is None:
            fuel = active().regex_states
        if item == NOTHING:
            return False
        edges: dict[int, set[int]] = {}
        work = [item]
        while work:
            node = work.pop()
            if node in edges:
                continue
            if self._infinite.get(node):
                edges[node] = {node}  # known infinite: it stands for its part of the graph as a live loop
                continue
            successors = edges[node] = set()
            for block in self.byte_classes(node):
                nxt = self.derivative(node, (block & -block).bit_length() - 1)
                if nxt != NOTHING:
                    successors.add(nxt)
                    if nxt not in edges:
                        work.append(nxt)
            _explored(len(edges), fuel)
        predecessors: dict[int, set[int]] = {node: set() for node in edges}
        for node, successors in edges.items():
            for nxt in successors:
                predecessors[nxt].add(node)
        live = {node for node in edges if self.nullable[node] or node in edges[node] and self._infinite.get(node)}
        work = list(live)
        while work:
            for before in predecessors[work.pop()]:
                if before not in live:
                    live.add(before)
                    work.append(before)
        # peel live nodes without a live successor; what remains lies on or reaches a cycle
        remaining = {node: len(edges[node] & live) for node in live}
        work = [node for node, count in remaining.items() if count == 0]
        while work:
            node = work.pop()
            del remaining[node]
            for before in predecessors[node]:
                if before in remaining:
                    remaining[before] -= 1
                    if remaining[before] == 0:
                        work.append(before)
        for node in edges:
            self._infinite[node] = node in remaining
        return item in remaining

    def _plain_member_shortest(self, item: int, fuel: int) -> bytes | None:
        """For ``item = p & ...`` with a plain member ``p`` (no ``&``/``¬``): ``p``'s
        shortest-then-least string when ``item`` matches it too (then it is ``item``'s as well,
        since ``item ⊆ p``); None otherwise. One walk of ``p`` instead of a search through the
        derivatives of every member."""
        if self.kind[item] == AND_KIND:
            for member in self.args[item]:  # type: ignore[union-attr]
                if self.kind[member] != NOT_KIND and not self.has_boolean(member):
                    candidate = self._search_nullable(member, fuel)
                    return candidate if candidate is not None and self.matches(item, candidate) else None
        return None

    def _search_nullable(self, item: int, fuel: int) -> bytes | None:
        """Shortest (then least) byte string matched by ``item``, or None if there is none."""
        found = self._plain_member_shortest(item, fuel)
        if found is not None:
            return found
        queue: deque[tuple[int, bytes]] = deque([(item, b"")])
        seen = {item}
        while queue:
            node, path = queue.popleft()
            if self.nullable[node]:
                return path
            for block in self.byte_classes(node):
                byte = (block & -block).bit_length() - 1
                nxt = self.derivative(node, byte)
                if nxt == NOTHING or nxt in seen:
                    continue
                if self._empty.get(nxt):
                    continue
                seen.add(nxt)
                _explored(len(seen), fuel)
                queue.append((nxt, path + bytes([byte])))
        return None

    def min_length(self, item: int, fuel: int | None = None) -> int | None:
        """Length of the shortest string ``item`` matches (None if none). Structural, O(size),
        without ``&``/``¬`` (so ``x{100000}`` costs nothing); with them, structural through
        concatenations, unions and repeats down to the ``&``/``¬`` nodes, where an intersection
        with a counter is solved by counting (``_counted_min``) and anything else by a search."""
        found = self._min.get(item, -1)
        if found != -1:
            return found
        if fuel is None:
            fuel = active().regex_states
        kind = self.kind[item]
        args = self.args[item]
        result: int | None
        if self.nullable[item]:
            result = 0  # the empty string: no search (a search over ``x* & ¬(...)`` can be long)
        elif not self.has_boolean(item):
            result = self._structural_min(item, self._structural)
        elif kind == CONCAT_KIND:
            total: int | None = 0
            for member in args:  # type: ignore[union-attr]
                part = self.min_length(member, fuel)
                if part is None:
                    total = None
                    break
                total += part  # type: ignore[operator]
            result = total
        elif kind == OR_KIND:
            known = [m for m in (self.min_length(a, fuel) for a in args) if m is not None]  # type: ignore[union-attr]
            result = min(known) if known else None
        elif kind == REPEAT_KIND:
            inner, lo, _hi = args  # type: ignore[misc]
            part = self.min_length(inner, fuel) if lo else 0
            result = 0 if lo == 0 else (None if part is None else part * lo)
        else:
            counted = NotImplemented
            if kind == AND_KIND:
                counted = self._searched_min(item, fuel)
                if counted is NotImplemented:
                    counted = self._counted_min(item, fuel)
            if counted is NotImplemented:
                witness = self._search_nullable(item, fuel)
                result = None if witness is None else len(witness)
            else:
                result = counted
        self._min[item] = result
        return result

    def _searched_min(self, item: int, fuel: int) -> int | None:
        """``item``'s shortest length where a search over its derivatives finds it within
        ``_QUICK_SEARCH_STATES`` states, else ``NotImplemented`` (counting decides then). A short
        string under a long bound (``maxLength: 2048`` with ``pattern: "\\.png$"``) is found in
        a few dozen states, where counting walks the pairs of derivatives of every state of the
        pattern at a string character's boundaries (SchemaStore's band-manifest.json: 60 ms of
        its compile); the search is exact either way (breadth-first: the first string found is a
        shortest)."""
        try:
            witness = self._search_nullable(item, min(fuel, _QUICK_SEARCH_STATES))
        except RegexTooComplex:
            return NotImplemented
        return None if witness is None else len(witness)

    def _structural_min(self, item: int, memo: dict[int, int | None]) -> int | None:
        """The shortest length of ``item`` (no ``&``/``¬`` in it) from its structure; None where it
        matches nothing. ``memo`` is the set's own (``_structural``): nodes never change meaning."""
        if item in memo:
            return memo[item]
        kind = self.kind[item]
        args = self.args[item]
        result: int | None
        if kind == NOTHING_KIND:
            result = None
        elif kind == EPSILON_KIND:
            result = 0
        elif kind == BYTES_KIND:
            result = 1
        elif kind == LITERAL_KIND:
            result = len(args[0]) - args[1]  # type: ignore[index]
        elif kind == CONCAT_KIND:
            total = 0
            for member in args:  # type: ignore[union-attr]
                part = self._structural_min(member, memo)
                if part is None:
                    total = -1
                    break
                total += part
            result = None if total < 0 else total
        elif kind == OR_KIND:
            options = [self._structural_min(m, memo) for m in args]  # type: ignore[union-attr]
            known = [o for o in options if o is not None]
            result = min(known) if known else None
        else:  # REPEAT
            inner, lo, _hi = args  # type: ignore[misc]
            part = self._structural_min(inner, memo)
            result = 0 if lo == 0 else (None if part is None else part * lo)
        memo[item] = result
        return result

    def shortest(self, item: int, fuel: int | None = None) -> bytes | None:
        """The canonical shortest string of ``item``: shortest, then least bytewise; following
        its first byte, the shortest string of the derivative is the rest of it. Materialises the
        string: use ``min_length`` for lengths."""
        return self._search_nullable(item, active().regex_states if fuel is None else fuel)

    def describe(self, item: int) -> str:
        """A readable rendering (for errors and debugging), not a parseable syntax."""
        kind = self.kind[item]
        args = self.args[item]
        if kind == NOTHING_KIND:
            return "∅"
        if kind == EPSILON_KIND:
            return "ε"
        if kind == BYTES_KIND:
            return _describe_bytes(args)  # type: ignore[arg-type]
        if kind == LITERAL_KIND:
            return "".join(_show_byte(b) for b in args[0][args[1]:])  # type: ignore[index]
        if kind == CONCAT_KIND:
            return "".join(self._describe_group(m) for m in args)  # type: ignore[union-attr]
        if kind == OR_KIND:
            return "(" + "|".join(self.describe(m) for m in args) + ")"  # type: ignore[union-attr]
        if kind == AND_KIND:
            return "(" + "&".join(self.describe(m) for m in args) + ")"  # type: ignore[union-attr]
        if kind == NOT_KIND:
            return "¬" + self._describe_group(args)  # type: ignore[arg-type]
        inner, lo, hi = args  # type: ignore[misc]
        return f"{self._describe_group(inner)}{{{lo},{'' if hi is None else hi}}}"

    def _describe_group(self, item: int) -> str:
        text = self.describe(item)
        return text if self.kind[item] in (BYTES_KIND, OR_KIND, AND_KIND, LITERAL_KIND) else f"({text})"


#: Nodes one shared set holds before ``shared_exprs`` starts another (about 0.3 KB a node with its
#: memo entries).
SHARED_NODES = 1 << 20
#: The largest repetition bound the C store keeps (an int64 there); larger bounds are clamped to
#: it. Exact for every text shorter than 2**62 bytes, the only texts there are: such a text goes
#: through fewer than 2**62 non-empty repetitions, so ``r{lo,hi}`` with ``hi`` past the bound
#: accepts what ``r{lo,2**62}`` does, and with ``lo`` past it (``r`` not nullable: else ``lo`` is
#: 0) accepts none of them, as ``r{2**62,...}`` does. Emptiness, nullability and finiteness are
#: unchanged; only a shortest length past 2**62 reads as the clamped one.
_MAX_BOUND = 1 << 62
#: Derivatives ``_infinite_less_finite`` may walk to show a positive part infinite before it
#: leaves the question to the witness search.
_INFINITE_FUEL = 4096
#: The longest shortest string of a plain member ``_short_witness`` tries: a certificate worth
#: having only while it is cheap.
_SHORT_WITNESS = 64
#: The derivatives' classes ``_greedy_witness`` may expand before it leaves the question to
#: counting and the exhaustive search: its cost where it finds nothing.
_GREEDY_NODES = 48
_shared: ExprSet | None = None
_shared_lock = threading.Lock()


def shared_exprs() -> ExprSet:
    """The process-wide ``ExprSet`` new grammars are built on, so that the lexemes every grammar
    has (JSON strings, numbers, literals) are one set of nodes, derivatives and DFA states for
    all of them (``engine/dfa.py``). A new set replaces it once it holds ``SHARED_NODES`` nodes or
    is retired; grammars built on an older one keep theirs. Hash-consing makes equal expressions
    one node whatever was built before, so a grammar's languages do not depend on what else
    shares the set; only ids and the memo hits do."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.retired or len(_shared) >= SHARED_NODES:
            _shared = ExprSet()
        return _shared


def _partition_by_signature(parts: list[int]) -> list[int]:
    """``ExprSet.partition`` for many sets: bytes with equal membership in every set form a block."""
    rows = np.frombuffer(b"".join(part.to_bytes(32, "little") for part in parts), dtype=np.uint8)
    members = np.unpackbits(rows.reshape(len(parts), 32), axis=1, bitorder="little")  # (sets, 256)
    signatures = np.packbits(members.T, axis=1)  # (256, ceil(sets / 8)): one row per byte
    # grouped by a dict over each byte's signature bytes: 2-3x faster than np.unique(axis=0)
    width = signatures.shape[1]
    data = signatures.tobytes()
    groups: dict[bytes, int] = {}
    for byte in range(256):
        key = data[byte * width:(byte + 1) * width]
        groups[key] = groups.get(key, 0) | (1 << byte)
    return sorted(groups.values(), key=lambda m: (m & -m))


#: States a search for a shortest string explores before counting is asked instead (``min_length``).
_QUICK_SEARCH_STATES = 256


def _explored(states: int, fuel: int) -> None:
    """The accounting of a search over derivatives: ``RegexTooComplex`` past ``fuel`` states, and
    the compile clock checked every 128."""
    if states > fuel:
        raise RegexTooComplex(f"more than {fuel} derivative states explored (Limits.regex_states)")
    if not states & 127:
        check_deadline()


def split_key(splits: Iterable[int]) -> tuple[int, ...]:
    """``splits`` (byte sets) as the memo key of ``partition_of``: sorted and without repeats. A
    tuple of ints, which the cyclic collector stops tracking; a frozenset stays tracked, and each
    full collection would visit every set in every key (~0.4 M of them over a long run)."""
    return tuple(sorted(set(splits)))


@functools.lru_cache(maxsize=4096)
def partition_of(splits: tuple[int, ...]) -> tuple[int, ...]:
    """``ExprSet.partition`` memoised process-wide: few distinct sets of leaves recur. ``splits``
    is a ``split_key``."""
    return tuple(ExprSet.partition(splits))


def _describe_bytes(mask: int) -> str:
    values = [b for b in range(256) if (mask >> b) & 1]
    if len(values) == 1:
        return _show_byte(values[0])
    runs: list[str] = []
    start = prev = values[0]
    for value in values[1:] + [-2]:
        if value != prev + 1:
            runs.append(_show_byte(start) if start == prev else f"{_show_byte(start)}-{_show_byte(prev)}")
            start = value
        prev = value
    return "[" + "".join(runs) + "]"


def _show_byte(value: int) -> str:
    char = chr(value)
    if 0x21 <= value < 0x7F and char not in "[]()|&\\-{}¬":
        return char
    return f"\\x{value:02x}"
