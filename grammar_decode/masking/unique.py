"""Masks where array items must be unique: the masker's mask, less the tokens that would repeat
a value (``engine.unique`` has the argument).

The masker walks a token's bytes from the position's recognizer state, so every byte of the
current lexeme is judged exactly (the lexer state there already excludes the values written).
What it cannot see: a token that begins an item inside itself, after a lexeme boundary, in an
array that holds values by then: the walk begins that item from the lexer's plain state. An item
begun by the token's first byte at a boundary starts from the position's own lexer state, which
already excludes the values written; bytes of the current item are judged exactly too. So a
token needs a second look only if, counting its item delimiters (``"``):

* inside an item: it holds two (the first closes the item, the second opens the next);
* at a boundary with values written in the innermost array: it holds one past its first byte
  (`` "a`` opens an item after the whitespace lexeme);
* at a boundary with none written yet: it holds three (open, close, open one that must be new).

Those tokens of the mask, and only those, are replayed through the exact stepping
(``UniqueItems.feed``), and the ones that fail are dropped. Cost per mask in such an
array: a look at the tokens of the case (their ids listed once per vocabulary: ~2-3 % of it hold a
``"``), and one replay of at most ``len(token)`` steps per candidate in the mask; nothing
elsewhere.
"""

from __future__ import annotations

import functools

import numpy as np

from ..engine.unique import Position, UniqueItems
from ..vocab import Vocabulary


def unique_mask(unique: UniqueItems, position: Position, mask: np.ndarray, vocab: Vocabulary) -> np.ndarray:
    """``mask`` less the tokens that would write a value twice in one array or lead where every
    completion would. ``mask`` is read, never written."""
    needs = _needs(unique, position, vocab)
    dropped = _dropped(unique, position, needs[mask[needs]], vocab)  # O(tokens with delimiters)
    if not dropped:
        return mask
    out = mask.copy()
    out[dropped] = False
    return out


def unique_packed(unique: UniqueItems, position: Position, packed: np.ndarray, vocab: Vocabulary) -> np.ndarray:
    """``unique_mask`` on a packed mask (int32 words, ``masking.bitmask``'s layout): the same
    tokens dropped, read and cleared as bits, so a batch row costs no unpacking of the whole
    vocabulary and no packing back (O(tokens with delimiters), plus one copy of the V / 8 bytes
    where a token is dropped). ``packed`` is read, never written; returned as is when nothing is
    dropped."""
    needs = _needs(unique, position, vocab)
    held = packed.view(np.uint8)
    candidates = needs[(held[needs >> 3] >> (needs & 7).astype(np.uint8)) & 1 == 1]
    dropped = _dropped(unique, position, candidates, vocab)
    if not dropped:
        return packed
    out = packed.copy()
    ids = np.array(dropped, dtype=np.int64)
    np.bitwise_and.at(out.view(np.uint8), ids >> 3, ~np.left_shift(1, ids & 7).astype(np.uint8))
    return out


def _needs(unique: UniqueItems, position: Position, vocab: Vocabulary) -> np.ndarray:
    """The ids of the tokens that need a replay at ``position`` when the mask allows them."""
    two, later, three = vocab.derived(("unique item candidates", unique.delimiters),
                                      functools.partial(candidate_ids, delimiters=unique.delimiters))
    _state, frames, item = position
    if item:  # inside an item: its first delimiter closes it, exactly; a second one opens the next
        return two
    if frames[-1]:  # values written: a delimiter after a boundary inside the token opens an item
        return later
    return three  # none yet: open (perhaps at once, exactly), close, then open one that must be new


def _dropped(unique: UniqueItems, position: Position, candidates: np.ndarray, vocab: Vocabulary) -> list[int]:
    """The ``candidates`` whose replay from ``position`` fails (``UniqueItems.feed`` of each one's
    bytes is None). Replayed from the longest prefix already replayed for another candidate (the
    position after every prefix is kept for the call): over the compare set the candidates' bytes
    are twice their distinct prefixes, and a step is a few µs of Python."""
    reached: dict[bytes, Position | None] = {b"": position}
    dropped = []
    for token in candidates.tolist():
        data = vocab.token_bytes(token)
        done = len(data)
        while data[:done] not in reached:
            done -= 1
        at = reached[data[:done]]
        while at is not None and done < len(data):
            at = unique.step(at, data[done])
            done += 1
            reached[data[:done]] = at
        if at is None:
            dropped.append(token)
    return dropped


def _dropped_one_by_one(unique: UniqueItems, position: Position, candidates: np.ndarray, vocab: Vocabulary
                        ) -> list[int]:
    """``_dropped`` by a replay of each candidate from ``position`` (the reference)."""
    return [token for token in candidates.tolist() if unique.feed(position, vocab.token_bytes(token)) is None]


def candidate_ids(vocab: Vocabulary, delimiters: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ids (sorted) of the tokens holding at least two item delimiters, at least one past
    their first byte, and at least three (``delimiter_counts``): the candidates of each case of
    ``unique_mask``, once per vocabulary, so that a mask looks at those tokens only."""
    total, later = delimiter_counts(vocab, delimiters)
    return np.flatnonzero(total >= 2), np.flatnonzero(later >= 1), np.flatnonzero(total >= 3)


def delimiter_counts(vocab: Vocabulary, delimiters: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per ordinary token: how many item delimiters it holds, and how many past its first byte
    (0 for special tokens). O(total token bytes) in numpy, once per vocabulary: a running count of
    delimiters over every token's bytes laid end to end, read at each token's two ends (a loop
    over 262k tokens took 0.36 s, inside the first mask of an array of unique items)."""
    tokens = vocab.tokens
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    ends = np.cumsum(lengths)
    starts = ends - lengths
    flat = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    is_delimiter = np.isin(flat, np.array(delimiters, dtype=np.uint8))
    running = np.concatenate(([0], np.cumsum(is_delimiter, dtype=np.int64)))
    total = (running[ends] - running[starts]).astype(np.int32)
    first = np.zeros(len(tokens), dtype=np.int32)
    nonempty = lengths > 0
    first[nonempty] = is_delimiter[starts[nonempty]]
    ordinary = vocab.ordinary_mask()
    return np.where(ordinary, total, 0).astype(np.int32), np.where(ordinary, total - first, 0).astype(np.int32)
