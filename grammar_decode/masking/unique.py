"""Masks where array items must be unique: the masker's mask, less the tokens that would repeat
a value (``engine.unique`` has the argument).

The masker walks a token's bytes from the position's recognizer state, so every byte of the
current lexeme is judged exactly (the lexer state there already excludes the values written).
What it cannot see: a token that begins an item inside itself, after a lexeme boundary, in an
array that holds values by then: the walk begins that item from the lexer's plain state. With no
value in the innermost array yet, the token must first close an item (one delimiter, ``"``) and
then open the next (a second); with values there already, opening one (one delimiter) is
enough. A token with no delimiter neither opens nor closes an item, and the current item's bytes
are judged exactly. So the tokens of the mask holding two delimiters, or one where the innermost
array holds values, and only those, are replayed through the exact stepping
(``UniqueItems.feed``), and the ones that fail are dropped. Cost per mask in such an
array: one replay of at most ``len(token)`` steps per candidate (tokens holding a ``"``: ~2-3 % of
a vocabulary), nothing elsewhere.
"""

from __future__ import annotations

import functools

import numpy as np

from ..engine.unique import Position, UniqueItems
from ..vocab import Vocabulary


def unique_mask(unique: UniqueItems, position: Position, mask: np.ndarray, vocab: Vocabulary) -> np.ndarray:
    """``mask`` less the tokens that would write a value twice in one array or lead where every
    completion would. ``mask`` is read, never written."""
    holding = vocab.derived(("unique item delimiters", unique.delimiters),
                            functools.partial(delimiter_counts, delimiters=unique.delimiters))
    _state, frames, _item = position
    candidates = np.flatnonzero(mask & (holding >= (1 if frames[-1] else 2)))
    if not len(candidates):
        return mask
    out = mask.copy()
    for token in candidates.tolist():
        if unique.feed(position, vocab.token_bytes(token)) is None:
            out[token] = False
    return out


def delimiter_counts(vocab: Vocabulary, delimiters: tuple[int, ...]) -> np.ndarray:
    """How many item delimiters each ordinary token holds (0 for special tokens). O(vocabulary)."""
    counts = np.zeros(len(vocab), dtype=np.int32)
    for token in np.flatnonzero(vocab.ordinary_mask()).tolist():
        data = vocab.token_bytes(token)
        counts[token] = sum(data.count(d) for d in delimiters)
    return counts
