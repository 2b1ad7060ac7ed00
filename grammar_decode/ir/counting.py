"""Shortest strings of intersections with a counter, by counting instead of deriving.

``pattern & char{lo,hi}`` (a ``pattern`` beside ``minLength``) has one derivative per count
written, so a search over derivatives costs the bound. Counted instead: the states of the rest
at the boundaries of the counted unit form a small graph whose edge weights are the fewest bytes
of one unit; paths of exactly ``lo`` edges, then up to ``hi - lo`` more, are min-plus matrix
powers by repeated squaring, O(n³ log bound) for n states. A mixin of ``ExprSet``: it reads the
store's nodes, derivatives and analyses.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import RegexTooComplex
from ..limits import active, check_deadline
from .kinds import CONCAT_KIND, EPSILON, NOTHING, REPEAT_KIND


class Exploration:
    """The derivative states one unit step has explored, against its ``Limits.regex_states``
    fuel: the walks and compositions of its parts spend from one count (a cap bounds the
    work of the step, not of each of its parts, as it bounded the one walk over pairs that a
    step was before it was composed); the compile clock is read every 128 states. Answers
    found in the memo cost nothing."""

    __slots__ = ("fuel", "spent")

    def __init__(self, fuel: int) -> None:
        self.fuel = fuel
        self.spent = 0

    def spend(self, states: int) -> None:
        before = self.spent
        self.spent += states
        if self.spent > self.fuel:
            raise RegexTooComplex(f"more than {self.fuel} derivative states explored (Limits.regex_states)")
        if before >> 7 != self.spent >> 7:
            check_deadline()


class CountedIntersections:
    """``_counted_min`` and its helpers, for ``ExprSet``."""

    kind: list[int]
    args: list[Any]
    nullable: list[bool]
    _unit_steps: dict[tuple[int, int], dict[int, int]]

    def _counter_of(self, member: int) -> tuple[int, int, int, int | None] | None:
        """``(prefix, body, lo, hi)`` when ``member`` is ``prefix · body{lo,hi}`` with no ``&``/``¬``
        in prefix or body (a count the derivatives have begun: ``prefix`` is what is left of the
        item being read), else None."""
        kind = self.kind[member]
        if kind == REPEAT_KIND:
            prefix, counter = EPSILON, member
        elif kind == CONCAT_KIND and self.kind[self.args[member][-1]] == REPEAT_KIND:  # type: ignore[index]
            prefix, counter = self.concat(*self.args[member][:-1]), self.args[member][-1]  # type: ignore[index]
            if self.has_boolean(prefix):
                return None
        else:
            return None
        body, lo, hi = self.args[counter]  # type: ignore[misc]
        if self.has_boolean(body) or self.nullable[body]:
            return None
        return prefix, body, lo, hi

    def _prefix_free(self, item: int, fuel: int) -> bool:
        """Whether no string of ``item`` is a proper prefix of another (then a concatenation of
        its strings splits one way only). A walk over its derivatives."""
        seen, work = {item}, [item]
        while work:
            node = work.pop()
            if self.nullable[node] and node != item and self.first_bytes(node):
                return False
            if node != item and self.nullable[node]:
                continue
            for block in self.byte_classes(node):
                nxt = self.derivative(node, (block & -block).bit_length() - 1)
                if nxt != NOTHING and nxt not in seen:
                    seen.add(nxt)
                    if len(seen) > fuel:
                        raise RegexTooComplex(f"more than {fuel} derivative states explored (Limits.regex_states)")
                    work.append(nxt)
        return not (self.nullable[item] and self.first_bytes(item))

    def _steps(self, state: int, unit: int, fuel: int | Exploration) -> dict[int, int]:
        """For each derivative ``d`` of ``state`` by a string ``w`` of ``unit``: the fewest bytes
        of such a ``w``. Memoised. A concatenation is its parts' steps composed (every string of
        ``A·B`` is one of ``A`` then one of ``B``) and a counted repeat ``X{lo,hi}`` with
        ``lo <= _COMPOSED_COUNT`` is ``X``'s steps composed ``lo`` times, then at most
        ``hi - lo`` more (until nothing improves): a prefix such as ``X{0,56}@`` (an address
        being read) then costs X's steps from each state, shared by every count, instead of a
        walk over the pairs of derivatives that the count multiplies (SchemaStore's revola.json:
        23 s of its masks). Other units: a breadth-first walk of the pairs of derivatives."""
        found = self._unit_steps.get((state, unit))
        if found is not None:
            return found
        budget = fuel if isinstance(fuel, Exploration) else Exploration(fuel)
        kind = self.kind[unit]
        if kind == CONCAT_KIND:
            current = {state: 0}
            for part in self.args[unit]:  # type: ignore[union-attr]
                current = self._compose(current, part, budget)
            self._unit_steps[(state, unit)] = current
            return current
        if kind == REPEAT_KIND and self.args[unit][1] <= _COMPOSED_COUNT:  # type: ignore[index]
            body, lo, hi = self.args[unit]  # type: ignore[misc]
            current = {state: 0}
            for _ in range(lo):
                current = self._compose(current, body, budget)
            best = dict(current)
            more = 0
            while current and (hi is None or more < hi - lo):
                # only what improved goes on: a state reached sooner and cheaper already went on
                # with more repetitions left
                current = {d: c for d, c in self._compose(current, body, budget).items() if c < best.get(d, _INF)}
                best.update(current)
                more += 1
            self._unit_steps[(state, unit)] = best
            return best
        return self._walk_steps(state, unit, budget)

    def _compose(self, costs: dict[int, int], unit: int, budget: Exploration) -> dict[int, int]:
        """``costs`` (state → fewest bytes) followed by one string of ``unit``; every state it
        reaches is spent from ``budget``."""
        out: dict[int, int] = {}
        for node, cost in costs.items():
            for nxt, more in self._steps(node, unit, budget).items():
                total = cost + more
                if total < out.get(nxt, _INF):
                    out[nxt] = total
        budget.spend(len(out))
        return out

    def _walk_steps(self, state: int, unit: int, fuel: int | Exploration) -> dict[int, int]:
        """``_steps`` by a breadth-first walk of the pairs of derivatives of ``state`` and ``unit``."""
        budget = fuel if isinstance(fuel, Exploration) else Exploration(fuel)
        out: dict[int, int] = {}
        seen = {(state, unit)}
        frontier = [(state, unit)]
        depth = 0
        while frontier:
            following = []
            for x, y in frontier:
                if self.nullable[y] and x not in out:
                    out[x] = depth
                for block in self.partition_of_sets(self.split_sets(x) + self.split_sets(y)):
                    byte = (block & -block).bit_length() - 1
                    nx, ny = self.derivative(x, byte), self.derivative(y, byte)
                    if nx == NOTHING or ny == NOTHING or (nx, ny) in seen:
                        continue
                    seen.add((nx, ny))
                    budget.spend(1)
                    following.append((nx, ny))
            frontier = following
            depth += 1
        self._unit_steps[(state, unit)] = out
        return out

    def _counted_min(self, item: int, fuel: int) -> int | None:
        """Shortest length of ``R & P·B{lo,hi}`` (an intersection with a counter), or
        ``NotImplemented`` where ``item`` has no counter. Counting, not deriving: the states of
        ``R`` at the boundaries of ``B``'s strings form a small graph whose edge weights are the
        fewest bytes of one ``B`` string; paths of exactly ``lo`` edges, then up to ``hi - lo`` more
        (or any number), are min-plus matrix powers by repeated squaring. Cost O(n³ log lo) for n
        such states, whatever the bounds (``[a-z]{100000} & .*x.*`` costs what ``{10}`` does).
        Counters over the same (prefix-free) unit are one count with the tighter bounds. Past
        ``Limits.counted_states`` states, ``NotImplemented``: the caller searches instead."""
        members = list(self.args[item])  # type: ignore[arg-type]
        counters = {m: c for m in members if (c := self._counter_of(m)) is not None}
        if not counters or all(c[2] == 0 and c[3] is None for c in counters.values()):
            # no count to solve (a plain star counts nothing): the derivative search, which stops
            # at the first complete string, is the cheaper way (a JSON string less a search
            # pattern over a Unicode class costs seconds by counting, milliseconds by searching)
            return NotImplemented
        # the count with the largest bound; others over the same prefix and unit join it
        chosen = max(counters, key=lambda m: counters[m][2] + (counters[m][3] or counters[m][2]))
        prefix, body, lo, hi = counters[chosen]
        joined = [chosen]
        others = [m for m in counters if m != chosen and counters[m][:2] == (prefix, body)]
        if others and self._prefix_free(body, fuel) and self._prefix_free(prefix, fuel):
            for m in others:
                lo = max(lo, counters[m][2])
                other_hi = counters[m][3]
                hi = other_hi if hi is None else (hi if other_hi is None else min(hi, other_hi))
                joined.append(m)
            if hi is not None and hi < lo:
                return None
        rest = self.both(*(m for m in members if m not in joined))
        # each unit step is one question with its own fuel, as one walk over pairs was
        start = {rest: 0} if prefix == EPSILON else self._steps(rest, prefix, fuel)
        index: dict[int, int] = {}
        edges: dict[int, dict[int, int]] = {}
        work = list(start)
        for node in work:
            index.setdefault(node, len(index))
        while work:
            node = work.pop()
            if node in edges:
                continue
            edges[node] = self._steps(node, body, fuel)
            for nxt in edges[node]:
                if nxt not in index:
                    index[nxt] = len(index)
                    if len(index) > active().counted_states:
                        return NotImplemented  # too many for matrices: the derivative search decides
                    work.append(nxt)
        n = len(index)
        weights = np.full((n, n), _INF, dtype=np.int64)
        for node, targets in edges.items():
            for nxt, cost in targets.items():
                weights[index[node], index[nxt]] = min(weights[index[node], index[nxt]], cost)
        vector = np.full((1, n), _INF, dtype=np.int64)
        for node, cost in start.items():
            vector[0, index[node]] = cost
        vector = _min_plus(vector, _min_plus_power(weights, lo))
        if hi is None or hi > lo:
            up_to = weights.copy()
            np.fill_diagonal(up_to, np.minimum(np.diagonal(up_to), 0))  # "at most m more" = (I ⊕ W)^m
            vector = _min_plus(vector, _min_plus_power(up_to, n if hi is None else hi - lo))
        accepting = [index[node] for node in index if self.nullable[node]]
        best = int(vector[0, accepting].min()) if accepting else _INF
        return None if best >= _INF else best


#: Infinity for min-plus products (sums of two stay inside int64).
_INF = 1 << 60
#: Counted repeats with at most this many required repetitions have their steps composed.
_COMPOSED_COUNT = 256


def _min_plus(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The min-plus product: ``out[i, j] = min_k left[i, k] + right[k, j]`` (saturating at _INF).
    Small matrices in plain Python (numpy's per-call cost dominates there)."""
    rows, inner = left.shape
    cols = right.shape[1]
    if inner <= 8:
        a, b = left.tolist(), right.tolist()
        out = [[min(min(a[i][k] + b[k][j] for k in range(inner)), _INF) for j in range(cols)] for i in range(rows)]
        return np.array(out, dtype=np.int64).reshape(rows, cols)
    return np.minimum((left[:, :, None] + right[None, :, :]).min(axis=1), _INF)


def _min_plus_power(matrix: np.ndarray, exponent: int) -> np.ndarray:
    """``matrix`` to the min-plus power ``exponent`` by repeated squaring (O(n³ log exponent))."""
    n = matrix.shape[0]
    result = np.full((n, n), _INF, dtype=np.int64)
    np.fill_diagonal(result, 0)
    base = matrix
    while exponent:
        if exponent & 1:
            result = _min_plus(result, base)
        exponent >>= 1
        if exponent:
            base = _min_plus(base, base)
    return result
