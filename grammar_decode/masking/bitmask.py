"""Packed masks: the bitmask contract shared with ``Matcher.fill_bitmask``.

int32 words, shape ``(batch, ceil(W / 32))`` for a logits width ``W >= len(vocab)``; token ``j``
is allowed iff bit ``j % 32`` of word ``j // 32`` is set. Ids at or past ``len(vocab)`` (padding
columns of the logits) are never allowed.
"""

from __future__ import annotations

import numpy as np


def bitmask_words(width: int) -> int:
    """Number of int32 words holding ``width`` bits."""
    return (width + 31) // 32


def pack_mask(mask: np.ndarray) -> np.ndarray:
    """Pack a bool mask into little-endian int32 words (bit j of word j//32 = token j). O(V)."""
    words = bitmask_words(len(mask))
    packed = np.packbits(mask, bitorder="little")
    buffer = np.zeros(words * 4, dtype=np.uint8)
    buffer[: len(packed)] = packed
    return buffer.view("<i4")
