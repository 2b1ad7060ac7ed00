"""Sets of Unicode code points as byte-level regular expressions over their UTF-8 encodings.

A code point range becomes a union of byte-range sequences (the usual split at encoding-length
boundaries and at continuation-byte boundaries), so a character class costs a handful of nodes
however wide it is. Surrogates (U+D800..U+DFFF) have no UTF-8 encoding and are always left out;
so are overlong forms, which no sequence produced here can spell.
"""

from __future__ import annotations

from typing import Iterable

from .regex import ExprSet, byte_range

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
_LENGTH_LIMITS = (0x7F, 0x7FF, 0xFFFF, MAX_CODE_POINT)

Ranges = list[tuple[int, int]]


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, merged, surrogate-free ranges within ``0..MAX_CODE_POINT``."""
    items = sorted((max(lo, 0), min(hi, MAX_CODE_POINT)) for lo, hi in ranges if lo <= hi)
    merged: Ranges = []
    for lo, hi in items:
        if lo > hi:
            continue
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    out: Ranges = []
    for lo, hi in merged:
        if hi < SURROGATES[0] or lo > SURROGATES[1]:
            out.append((lo, hi))
            continue
        if lo < SURROGATES[0]:
            out.append((lo, SURROGATES[0] - 1))
        if hi > SURROGATES[1]:
            out.append((SURROGATES[1] + 1, hi))
    return out


def complement(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Every code point (surrogates excepted) outside ``ranges``."""
    out: Ranges = []
    start = 0
    for lo, hi in normalize(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = hi + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return normalize(out)


def encode(code_point: int) -> bytes:
    return chr(code_point).encode("utf-8")


def _sequences(lo: int, hi: int) -> Iterable[list[tuple[int, int]]]:
    """Byte-range sequences whose products are exactly the encodings of ``lo..hi``."""
    for limit in _LENGTH_LIMITS:
        if lo <= limit < hi:
            yield from _sequences(lo, limit)
            yield from _sequences(limit + 1, hi)
            return
    length = len(encode(lo))
    for i in range(1, length):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask:
                yield from _sequences(lo, lo | mask)
                yield from _sequences((lo | mask) + 1, hi)
                return
            if hi & mask != mask:
                yield from _sequences(lo, (hi & ~mask) - 1)
                yield from _sequences(hi & ~mask, hi)
                return
    yield list(zip(encode(lo), encode(hi)))


def code_points(exprs: ExprSet, ranges: Iterable[tuple[int, int]]) -> int:
    """One character (as UTF-8 bytes) out of ``ranges``."""
    options = []
    for lo, hi in normalize(ranges):
        for sequence in _sequences(lo, hi):
            options.append(exprs.concat(*(exprs.byteset(byte_range(a, b)) for a, b in sequence)))
    return exprs.alt(*options)


def any_char(exprs: ExprSet) -> int:
    """Any one Unicode scalar value, UTF-8 encoded."""
    return code_points(exprs, [(0, MAX_CODE_POINT)])
