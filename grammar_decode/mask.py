"""Token masks: joint descent of the vocabulary trie and the automaton, cached per state.

One ``Masker`` exists per (compiled grammar, vocabulary) and is shared by all matchers of that
pair. ``mask(state)`` is computed once per distinct automaton state (a cold walk, O(trie nodes
visited)) and then served from the cache (a dict lookup). The cache key is the state itself; see
``automaton.py`` for why equal states have equal futures.

Bitmask contract (shared with ``fill_bitmask``): int32 words, shape ``(batch, ceil(W / 32))`` for a
logits width ``W >= len(vocab)``; token ``j`` is allowed iff bit ``j % 32`` of word ``j // 32`` is
set. Ids at or past ``len(vocab)`` (padding columns of the logits) are never allowed.
"""

from __future__ import annotations

import numpy as np

from .automaton import Automaton, State
from .trie import TokenTrie
from .vocab import Vocabulary


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


class _Entry:
    __slots__ = ("mask", "packed", "max_next_min_bytes")

    def __init__(self, mask: np.ndarray, max_next_min_bytes: int) -> None:
        self.mask = mask
        self.packed: np.ndarray | None = None
        self.max_next_min_bytes = max_next_min_bytes


class Masker:
    """Computes and caches token masks for one (automaton, vocabulary) pair.

    Masks handed out are read-only views into the cache; copy before modifying.
    """

    def __init__(self, automaton: Automaton, vocab: Vocabulary) -> None:
        self.automaton = automaton
        self.vocab = vocab
        self.trie = vocab.trie
        self.eos_ids = np.array(vocab.eos_token_ids, dtype=np.int64)
        self._cache: dict[State, _Entry] = {}
        self._budget_cache: dict[tuple[State, int], np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    # -- the walk ------------------------------------------------------------------------------

    def _walk(self, trie: TokenTrie, state: State, budget: int | None = None) -> tuple[bytearray, int]:
        """Joint descent of ``trie`` and the automaton from ``state``: one pass over the nodes,
        skipping the subtree of every rejected byte. Returns per-node allowed flags and the largest
        ``min_bytes`` over the allowed nodes' states. With ``budget``, a node is allowed only if
        its state can still be completed in ``budget`` bytes (its subtree is still explored: a
        longer token may close the document). Cost: ~0.3 µs per visited node."""
        byte_at, depth_at, end_at = trie.byte, trie.depth, trie.end
        n = len(byte_at)
        allowed = bytearray(n)
        stack: list[State | None] = [state] * (trie.max_depth + 1)
        rows = self.automaton.rows
        step = self.automaton.step_uncached
        min_bytes = self.automaton.min_bytes
        min_bytes_of: dict[State, int] = {}
        worst = 0
        i = 1
        while i < n:
            parent = stack[depth_at[i] - 1]
            row = rows.get(parent)
            if row is None:
                row = rows[parent] = {}
            b = byte_at[i]
            if b in row:
                nxt = row[b]
            else:
                nxt = row[b] = step(parent, b)
            if nxt is None:
                i = end_at[i]
                continue
            stack[depth_at[i]] = nxt
            need = min_bytes_of.get(nxt)
            if need is None:
                need = min_bytes_of[nxt] = min_bytes(nxt)
            if budget is None or need <= budget:
                allowed[i] = 1
                if need > worst:
                    worst = need
            i += 1
        return allowed, worst

    def _compute(self, state: State, budget: int | None = None) -> tuple[np.ndarray, int]:
        """The token mask of ``state`` (optionally under a byte budget) and the largest
        ``min_bytes`` among allowed successors. Inside a plain string, the precomputed slice of
        plain tokens is taken whole and only the rest trie is walked."""
        if self.automaton.in_plain_string(state):
            string_slice = self.vocab.string_slice
            flags, worst = self._walk(string_slice.rest, state, budget)
            mask = self._flags_to_tokens(string_slice.rest, flags)
            # plain tokens lead back to this very state
            here = self.automaton.min_bytes(state)
            if budget is None or here <= budget:
                mask |= string_slice.plain
                worst = max(worst, here)
        else:
            flags, worst = self._walk(self.trie, state, budget)
            mask = self._flags_to_tokens(self.trie, flags)
        if len(self.eos_ids) and self.automaton.is_accepting(state):
            mask[self.eos_ids] = True
        mask.flags.writeable = False
        return mask, worst

    @staticmethod
    def _flags_to_tokens(trie: TokenTrie, node_flags: bytearray) -> np.ndarray:
        flags = np.frombuffer(node_flags, dtype=np.uint8).view(bool)
        return flags[trie.token_node]  # node 0 (tokens outside the trie) is never flagged

    def _entry(self, state: State) -> _Entry:
        entry = self._cache.get(state)
        if entry is not None:
            self.hits += 1
            return entry
        self.misses += 1
        entry = self._cache[state] = _Entry(*self._compute(state))
        return entry

    # -- public --------------------------------------------------------------------------------

    def mask(self, state: State) -> np.ndarray:
        """Bool mask over the vocabulary: token t allowed iff state + bytes(t) can still complete;
        EOS allowed iff the state is a complete document. Cached per state."""
        return self._entry(state).mask

    def packed(self, state: State) -> np.ndarray:
        """``mask(state)`` packed as int32 words (see the module's bitmask contract). Cached."""
        entry = self._entry(state)
        if entry.packed is None:
            entry.packed = pack_mask(entry.mask)
            entry.packed.flags.writeable = False
        return entry.packed

    def budget_mask(self, state: State, remaining_tokens: int) -> np.ndarray:
        """The mask narrowed so that the document can still be completed within
        ``remaining_tokens`` tokens, counting the one being chosen now.

        Allows token t only if ``min_bytes(state + t) <= remaining_tokens - 1`` (and EOS when
        complete). Every vocabulary with all 256 single-byte tokens can write any completion one
        byte per token, so if ``min_bytes(state) <= remaining_tokens`` the narrowed mask is never
        empty and generation ends with a complete document. Always a subset of ``mask(state)``.
        Returns ``mask(state)`` itself when no allowed token can overrun the budget.

        When the budget is already too small (``min_bytes(state) > remaining_tokens``), the mask
        keeps only tokens that make the most progress towards closing (successors needing at most
        ``min_bytes(state) - 1`` bytes), which is never empty either.
        """
        entry = self._entry(state)
        budget = max(remaining_tokens - 1, self.automaton.min_bytes(state) - 1)
        if entry.max_next_min_bytes <= budget:
            return entry.mask
        key = (state, budget)
        narrowed = self._budget_cache.get(key)
        if narrowed is None:
            narrowed = self._budget_cache[key] = self._compute(state, budget)[0]
        return narrowed

    def cache_info(self) -> dict[str, int]:
        """Hits, misses and the number of cached states."""
        return {"hits": self.hits, "misses": self.misses, "states": len(self._cache)}
