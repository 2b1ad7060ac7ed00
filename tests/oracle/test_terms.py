"""The reference's derivative matcher for intersections (oracle/terms.py) against brute force."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from grammar_decode.ir.regex import ExprSet
from grammar_decode.oracle.terms import TermPattern, term_of

ALPHABET = b"ab"
LONGEST = 8  # every language below holds texts of at most this many bytes


@st.composite
def bounded(draw: st.DrawFn, exprs: ExprSet, depth: int = 2) -> int:
    """A random expression over {a, b} whose texts are at most LONGEST bytes long."""
    if depth == 0 or draw(st.booleans()):
        return exprs.literal(draw(st.sampled_from([b"a", b"b", b"ab", b""])))
    kind = draw(st.sampled_from(["cat", "alt", "rep", "and"]))
    left = draw(bounded(exprs, depth - 1))
    right = draw(bounded(exprs, depth - 1))
    if kind == "cat":
        return exprs.concat(left, right)
    if kind == "alt":
        return exprs.alt(left, right)
    if kind == "and":
        return exprs.both(left, right)
    low = draw(st.integers(0, 1))
    return exprs.repeat(left, low, low + draw(st.integers(0, 1)))


def texts(limit: int) -> list[bytes]:
    return [bytes(t) for n in range(limit + 1) for t in itertools.product(ALPHABET, repeat=n)]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_full_and_partial_matches_agree_with_enumeration(data: st.DataObject) -> None:
    exprs = ExprSet()
    item = data.draw(bounded(exprs))
    pattern = TermPattern(term_of(exprs, item))
    every = texts(LONGEST)
    language = {t for t in every if exprs.matches(item, t)}
    for text in texts(4):
        assert (pattern.fullmatch(text) is not None) == (text in language), text
        viable = any(t.startswith(text) for t in language)
        assert (pattern.fullmatch(text, partial=True) is not None) == viable, text


def test_intersection_of_disjoint_counts_matches_nothing() -> None:
    exprs = ExprSet()
    x = exprs.literal(b"x")
    pattern = TermPattern(term_of(exprs, exprs.both(exprs.repeat(x, 2, 2), exprs.repeat(x, 3, 3))))
    assert pattern.fullmatch(b"", partial=True) is None
    assert pattern.fullmatch(b"xx") is None


def test_complement() -> None:
    exprs = ExprSet()
    word = exprs.repeat(exprs.byteset(1 << ord("a")), 0, None)
    not_aa = exprs.both(word, exprs.negate(exprs.literal(b"aa")))
    pattern = TermPattern(term_of(exprs, not_aa))
    assert pattern.fullmatch(b"a") and pattern.fullmatch(b"aaa") and pattern.fullmatch(b"aa") is None
    assert pattern.fullmatch(b"aa", partial=True)  # "aaa" extends it
