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

import weakref
from typing import Callable

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


#: ``finish_tokens`` of a state whose completion this vocabulary cannot spell.
UNREACHABLE = 1 << 30


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
        # A proxy: grammars keep their maskers in a WeakKeyDictionary keyed by the vocabulary,
        # so a strong reference here would keep every vocabulary alive as long as the grammar.
        self.vocab: Vocabulary = weakref.proxy(vocab)
        self.trie = vocab.trie
        self.eos_ids = np.array(vocab.eos_token_ids, dtype=np.int64)
        self._cache: dict[State, _Entry] = {}
        self._costs_cache: dict[State, np.ndarray] = {}
        self._finish: dict[State, int] = {}
        # fewest tokens <= fewest bytes holds when every byte value is an ordinary token
        self._bytes_bound_tokens = not vocab.missing_single_bytes()
        self.hits = 0
        self.misses = 0

    # -- the walk ------------------------------------------------------------------------------

    def _walk(self, trie: TokenTrie, state: State, cost: Callable[[State], int]) -> tuple[list[int], list[int]]:
        """Joint descent of ``trie`` and the automaton from ``state``: one pass over the nodes,
        skipping the subtree of every rejected byte. Returns the allowed nodes and, for each,
        ``cost`` of the state it leads to (computed once per distinct state). Cost: ~0.3 µs per
        visited node."""
        byte_at, depth_at, end_at = trie.byte, trie.depth, trie.end
        n = len(byte_at)
        nodes: list[int] = []
        costs: list[int] = []
        stack: list[State | None] = [state] * (trie.max_depth + 1)
        # Automaton.step's memo, inlined: this loop runs once per visited trie node
        rows = self.automaton.rows
        step = self.automaton.step_uncached
        cost_of: dict[State, int] = {}
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
            need = cost_of.get(nxt)
            if need is None:
                need = cost_of[nxt] = cost(nxt)
            nodes.append(i)
            costs.append(need)
            i += 1
        return nodes, costs

    def _walk_for(self, state: State, cost: Callable[[State], int]) -> tuple[TokenTrie, list[int], list[int], bool]:
        """The walk ``state`` needs: inside a plain string, only the small trie of non-plain
        tokens (the plain slice is allowed whole and leads back to ``state``); elsewhere the
        full trie. The flag says whether the plain slice applies."""
        if self.automaton.in_plain_string(state):
            rest = self.vocab.string_slice.rest
            return (rest, *self._walk(rest, state, cost), True)
        return (self.trie, *self._walk(self.trie, state, cost), False)

    def finish_tokens(self, state: State) -> int:
        """Fewest tokens of this vocabulary that spell the automaton's canonical shortest
        completion of ``state`` (``Automaton.completion``): an upper bound on the fewest tokens
        that finish the document, and at most ``min_bytes(state)`` when every byte is a token.
        Following the first token of such a spelling lowers it by at least one, which is what the
        closing budget's guarantee rests on. Cached per state; ``UNREACHABLE`` if it cannot be
        spelled at all."""
        cached = self._finish.get(state)
        if cached is None:
            count = self.vocab.fewest_tokens(self.automaton.completion(state))
            cached = self._finish[state] = UNREACHABLE if count is None else count
        return cached

    def _compute(self, state: State) -> _Entry:
        trie, nodes, costs, plain = self._walk_for(state, self.automaton.min_bytes)
        mask = np.zeros(len(self.vocab), dtype=bool)
        mask[trie.tokens_at(nodes)] = True
        worst = max(costs, default=0)
        if plain:
            mask |= self.vocab.string_slice.plain
            worst = max(worst, self.automaton.min_bytes(state))
        if len(self.eos_ids) and self.automaton.is_accepting(state):
            mask[self.eos_ids] = True
        mask.flags.writeable = False
        return _Entry(mask, worst)

    def token_costs(self, state: State) -> np.ndarray:
        """int32 per token: ``finish_tokens`` of the state after it, or -1 where the token is
        not allowed (EOS: 0 when the document is complete). One walk, cached per state; used
        only near the end of the budget."""
        cached = self._costs_cache.get(state)
        if cached is not None:
            return cached
        trie, nodes, costs, plain = self._walk_for(state, self.finish_tokens)
        node_cost = np.full(len(trie), -1, dtype=np.int32)
        node_cost[nodes] = costs
        token_cost = node_cost[trie.token_node]
        if plain:
            token_cost[self.vocab.string_slice.plain] = self.finish_tokens(state)
        if len(self.eos_ids) and self.automaton.is_accepting(state):
            token_cost[self.eos_ids] = 0
        token_cost.flags.writeable = False
        self._costs_cache[state] = token_cost
        return token_cost

    def _entry(self, state: State) -> _Entry:
        entry = self._cache.get(state)
        if entry is not None:
            self.hits += 1
            return entry
        self.misses += 1
        entry = self._cache[state] = self._compute(state)
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

        Allows token t only if ``finish_tokens(state + t) <= remaining_tokens - 1`` (and EOS when
        complete). Never empty while ``finish_tokens(state) <= remaining_tokens``: the first token
        of the shortest spelling of the canonical completion qualifies. By induction, generation
        then ends with a complete document. Always a subset of ``mask(state)``.

        Cost: returns ``mask(state)`` itself while no allowed token can overrun the budget (known
        from the walk that built the mask: ``finish_tokens <= min_bytes`` when every byte is a
        token); otherwise one comparison over ``token_costs(state)`` (a walk, once per state).

        When the budget is already too small (``finish_tokens(state) > remaining_tokens``), the
        mask keeps the tokens that make the most progress towards closing (successors needing at
        most ``finish_tokens(state) - 1`` tokens), which is never empty either. A vocabulary that
        cannot spell the canonical completion at all (no single-byte tokens) gets the plain mask.
        """
        entry = self._entry(state)
        here = self.finish_tokens(state)
        if here >= UNREACHABLE:
            return entry.mask  # this vocabulary cannot spell the canonical completion: no narrowing
        budget = max(remaining_tokens - 1, here - 1, 0)
        if self._bytes_bound_tokens and entry.max_next_min_bytes <= budget:
            return entry.mask
        costs = self.token_costs(state)
        narrowed = (costs >= 0) & (costs <= budget)
        narrowed.flags.writeable = False
        return narrowed

    def cache_info(self) -> dict[str, int]:
        """Hits, misses, the number of cached masks, and of states with cached token costs (the
        closing budget's extra walk)."""
        return {"hits": self.hits, "misses": self.misses, "states": len(self._cache),
                "budget_states": len(self._costs_cache)}
