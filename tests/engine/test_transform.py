"""The rewrite's graph analyses against brute force: the cyclic strongly connected components
(unit cycles, left recursion) of small random graphs, and of hand-written ones."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammar_decode.engine.transform import _cyclic_components


def _brute_components(edges: list[list[int]]) -> list[list[int]]:
    """The components on a cycle, from reachability: a and b together when each reaches the other."""
    reach = []
    for node in range(len(edges)):
        seen: set[int] = set()
        stack = list(edges[node])
        while stack:
            other = stack.pop()
            if other not in seen:
                seen.add(other)
                stack.extend(edges[other])
        reach.append(seen)
    found = {tuple(sorted(b for b in range(len(edges)) if b in reach[a] and a in reach[b]))
             for a in range(len(edges)) if a in reach[a]}
    return sorted(list(c) for c in found)


@pytest.mark.parametrize("edges,components", [
    ([[]], []),
    ([[0]], [[0]]),  # a self-loop is a cycle
    ([[1], [0]], [[0, 1]]),
    ([[1], [2], []], []),  # a chain
    ([[1], [2], [1]], [[1, 2]]),  # a cycle reached from outside it
    ([[1, 2], [0], [3], [2], []], [[0, 1], [2, 3]]),
    ([[], [], [3], [2, 4], [4]], [[2, 3], [4]]),
])
def test_cyclic_components_by_hand(edges: list[list[int]], components: list[list[int]]) -> None:
    assert sorted(_cyclic_components(edges)) == components


@st.composite
def _graphs(draw: st.DrawFn) -> list[list[int]]:
    size = draw(st.integers(1, 14))
    # mostly sparse, as the rewrite's graphs are: many nodes without successors
    return [sorted(set(draw(st.lists(st.integers(0, size - 1), max_size=draw(st.sampled_from([0, 0, 1, 2, 3]))))))
            for _ in range(size)]


@settings(max_examples=400, deadline=None)
@given(_graphs())
def test_cyclic_components_equal_brute_force(edges: list[list[int]]) -> None:
    assert sorted(_cyclic_components(edges)) == _brute_components(edges)
