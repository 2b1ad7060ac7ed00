"""A second, independent matcher for lexemes the ``regex`` package cannot express: intersection
and complement (a JSON ``pattern`` together with ``minLength``/``maxLength``, ...).

It reads the IR's expression tree into plain nested tuples and matches by textbook Brzozowski
derivatives on those tuples, simplified only by the similarity rules that make the set of
derivatives finite (``|`` and ``&`` as flat sets, ``∅``/``ε`` absorbed). Nothing here is shared
with ``ir/regex.py`` (hash-consed nodes, symbolic counters, byte classes, emptiness by fuel) or
the lexer built on it. Slow and memoised; meant for short test inputs.

``TermPattern`` answers like a compiled ``regex`` pattern: ``fullmatch(text)`` and
``fullmatch(text, partial=True)`` (can ``text`` still grow into a match).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from ..ir.regex import (AND_KIND, BYTES_KIND, CONCAT_KIND, EPSILON_KIND, LITERAL_KIND, NOT_KIND, NOTHING_KIND, OR_KIND,
                        ExprSet)

Term = tuple[Any, ...]
EMPTY: Term = ("0",)  # matches nothing
EPS: Term = ("e",)  # matches the empty text
#: Most distinct derivatives explored to decide whether a term matches anything.
MAX_EXPLORED = 200_000


def _alt(parts: list[Term]) -> Term:
    flat: set[Term] = set()
    for part in parts:
        if part[0] == "|":
            flat.update(part[1])
        elif part != EMPTY:
            flat.add(part)
    if not flat:
        return EMPTY
    if len(flat) == 1:
        return next(iter(flat))
    return ("|", frozenset(flat))


def _both(parts: list[Term]) -> Term:
    flat: set[Term] = set()
    for part in parts:
        if part == EMPTY:
            return EMPTY
        if part[0] == "&":
            flat.update(part[1])
        else:
            flat.add(part)
    if len(flat) == 1:
        return next(iter(flat))
    return ("&", frozenset(flat))


def _cat(left: Term, right: Term) -> Term:
    if left == EMPTY or right == EMPTY:
        return EMPTY
    if left == EPS:
        return right
    if right == EPS:
        return left
    return (".", left, right)


def _not(inner: Term) -> Term:
    return inner[1] if inner[0] == "~" else ("~", inner)


def _repeat(inner: Term, low: int, high: int | None) -> Term:
    if high == 0 or inner == EPS:
        return EPS
    if inner == EMPTY:
        return EPS if low == 0 else EMPTY
    return ("*", inner, low, high)


def term_of(exprs: ExprSet, item: int) -> Term:
    """The IR expression ``item`` as a plain nested tuple."""
    kind, args = exprs.kind[item], exprs.args[item]
    if kind == NOTHING_KIND:
        return EMPTY
    if kind == EPSILON_KIND:
        return EPS
    if kind == BYTES_KIND:
        return ("b", args)
    if kind == LITERAL_KIND:
        data, start = args  # type: ignore[misc]
        out = EPS
        for byte in reversed(data[start:]):
            out = _cat(("b", 1 << byte), out)
        return out
    if kind == CONCAT_KIND:
        out = EPS
        for member in reversed(args):  # type: ignore[arg-type]
            out = _cat(term_of(exprs, member), out)
        return out
    if kind == OR_KIND:
        return _alt([term_of(exprs, m) for m in args])  # type: ignore[union-attr]
    if kind == AND_KIND:
        return _both([term_of(exprs, m) for m in args])  # type: ignore[union-attr]
    if kind == NOT_KIND:
        return _not(term_of(exprs, args))  # type: ignore[arg-type]
    inner, low, high = args  # type: ignore[misc]
    return _repeat(term_of(exprs, inner), low, high)


class TermPattern:
    """Matching by derivatives of one term; memoised per (term, byte)."""

    def __init__(self, term: Term) -> None:
        self.term = term
        self._nullable: dict[Term, bool] = {}
        self._derivatives: dict[tuple[Term, int], Term] = {}
        self._nonempty: dict[Term, bool] = {}

    def nullable(self, t: Term) -> bool:
        found = self._nullable.get(t)
        if found is None:
            tag = t[0]
            if tag in ("0", "b"):
                found = False
            elif tag == "e":
                found = True
            elif tag == ".":
                found = self.nullable(t[1]) and self.nullable(t[2])
            elif tag == "|":
                found = any(self.nullable(p) for p in t[1])
            elif tag == "&":
                found = all(self.nullable(p) for p in t[1])
            elif tag == "~":
                found = not self.nullable(t[1])
            else:
                found = t[2] == 0 or self.nullable(t[1])
            self._nullable[t] = found
        return found

    def derivative(self, t: Term, byte: int) -> Term:
        key = (t, byte)
        found = self._derivatives.get(key)
        if found is None:
            tag = t[0]
            if tag in ("0", "e"):
                found = EMPTY
            elif tag == "b":
                found = EPS if (t[1] >> byte) & 1 else EMPTY
            elif tag == ".":
                head = _cat(self.derivative(t[1], byte), t[2])
                found = _alt([head, self.derivative(t[2], byte)]) if self.nullable(t[1]) else head
            elif tag == "|":
                found = _alt([self.derivative(p, byte) for p in t[1]])
            elif tag == "&":
                found = _both([self.derivative(p, byte) for p in t[1]])
            elif tag == "~":
                found = _not(self.derivative(t[1], byte))
            else:
                inner, low, high = t[1], t[2], t[3]
                rest = _repeat(inner, max(low - 1, 0), None if high is None else high - 1)
                found = _cat(self.derivative(inner, byte), rest)
            self._derivatives[key] = found
        return found

    def matches_something(self, t: Term) -> bool:
        """Whether some text (possibly empty) is in the language of ``t``: breadth-first over
        its derivatives by every byte."""
        found = self._nonempty.get(t)
        if found is not None:
            return found
        seen = {t}
        queue = deque([t])
        found = False
        while queue:
            current = queue.popleft()
            if self.nullable(current) or self._nonempty.get(current):
                found = True
                break
            for byte in range(256):
                nxt = self.derivative(current, byte)
                if nxt != EMPTY and nxt not in seen:
                    seen.add(nxt)
                    if len(seen) > MAX_EXPLORED:
                        raise NotImplementedError("the reference gives up on this intersection: too many derivatives")
                    queue.append(nxt)
        if not found:
            for dead in seen:  # nothing reachable from t matches: none of these can
                self._nonempty[dead] = False
        self._nonempty[t] = found
        return found

    def fullmatch(self, text: bytes, partial: bool = False) -> bool | None:
        t = self.term
        for byte in text:
            t = self.derivative(t, byte)
            if t == EMPTY:
                return None
        ok = self.matches_something(t) if partial else self.nullable(t)
        return True if ok else None
