"""The closing budget: masks narrowed so that a text ends within a token budget.

A generation with ``max_tokens`` must not run out of tokens mid-document. For one (grammar,
vocabulary) pair, ``ClosingBudget`` answers two questions about a recognizer state:

* ``finish_tokens(state)``: the fewest tokens of this vocabulary that spell the state's
  *canonical completion* (``Completions.canonical``: the shortest, then bytewise least, text that
  completes it, and consistent: after its first byte the canonical completion of the new state is
  the rest of it). ``UNREACHABLE`` where there is none to vouch for or the vocabulary cannot
  spell it.
* ``narrow(state, remaining_tokens)``: the mask, less the tokens after which the text could no
  longer end in time. While no allowed token can leave more than ``remaining_tokens - 1`` bytes to
  complete (and every byte is a token), nothing is removed. Otherwise only the tokens that spell
  a prefix of the canonical completion and leave a remainder spellable in time are kept:
  following one, the remainder is the new state's canonical completion, so the count goes down by
  at least one per token and the text ends in time (``docs/closing-budget.md``).

Every walk along a canonical completion here is ``Completions.canonical``, and every count of
tokens spelling a text is ``Vocabulary.fewest_tokens_table``. Caches are bounded in bytes, as a
share of ``Limits.cache_bytes``.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..engine.lexer import DEAD
from ..engine.recognizer import State
from ..lru import ByteBoundedLRU
from .masker import Masker

#: ``finish_tokens`` of a state whose canonical completion this vocabulary cannot spell, or that
#: has none the budget can vouch for.
UNREACHABLE = 1 << 30


class ClosingBudget:
    """The closing budget of one (grammar, vocabulary) pair, over its masker. Shared by every
    matcher of the pair, as the masker is; thread-safe in the same way (caches filled
    idempotently)."""

    def __init__(self, masker: Masker) -> None:
        self.masker = masker
        self.recognizer = masker.recognizer
        self.completions = masker.completions
        self.vocab = masker.vocab  # a proxy, as the masker's
        self.longest = self.vocab.longest_token()
        # fewest tokens <= fewest bytes holds when every byte value is an ordinary token
        self._bytes_bound_tokens = not self.vocab.missing_single_bytes()
        cache_bytes = masker.limits.cache_bytes
        self._finish: ByteBoundedLRU[int] = ByteBoundedLRU(cache_bytes // 16)
        self._successor_bytes: ByteBoundedLRU[int] = ByteBoundedLRU(cache_bytes // 64)

    def cache_info(self) -> dict[str, dict[str, int]]:
        """Entries, bytes held, hits and misses of each cache."""
        return {"finish": self._finish.info(), "successor_bytes": self._successor_bytes.info()}

    def _count(self, state: State) -> int:
        if self.recognizer.is_accepting(state):
            return 0
        found = self._finish.get(state)
        return self.finish_tokens(state) if found is None else found

    def finish_tokens(self, state: State) -> int:
        """Fewest tokens of this vocabulary that spell the canonical completion of ``state``;
        ``UNREACHABLE`` when there is none to vouch for or the vocabulary cannot spell it.
        Cached per state. A new state costs the part of its completion not yet known: the walk
        along the canonical path stops at the first state already counted, so a generation that
        leaves the path inside a value and rejoins it after the value pays for the detour only
        (O(1) amortised per token, whatever the document's size)."""
        found = self._finish.get(state)
        if found is not None:
            return found
        completions = self.completions
        if completions.min_bytes(state) > completions.limit:
            self._finish.put(state, UNREACHABLE, 96)
            return UNREACHABLE
        states = [state]
        text = bytearray()
        for byte, current in completions.canonical(state):
            text.append(byte)
            states.append(current)
            if len(text) > completions.limit:
                break
            if self._finish.get(current) is not None:
                break
        current = states[-1]
        if len(text) > completions.limit or (self._finish.get(current) is None
                                             and not self.recognizer.is_accepting(current)):
            for unreachable in states:  # no canonical completion to vouch for
                self._finish.put(unreachable, UNREACHABLE, 96)
            return UNREACHABLE
        # the counts of the first few known states past the walk (a token may reach into them)
        tail = [self._count(current)]
        for byte, after in itertools.islice(completions.canonical(current), self.longest):
            text.append(byte)
            tail.append(self._count(after))
        table = self.vocab.fewest_tokens_table(bytes(text), [None if c >= UNREACHABLE else c for c in tail])
        for i in range(len(states) - 2, -1, -1):
            count = table[i]
            self._finish.put(states[i], UNREACHABLE if count is None else count, 96)
        first = table[0]
        return UNREACHABLE if first is None else first

    def max_successor_bytes(self, state: State) -> int:
        """The most bytes any allowed token can leave to complete (``min_bytes`` of every state a
        token of the mask leads to). From the walks' reached states; cached per state."""
        found = self._successor_bytes.get(state)
        if found is None:
            lex, parse, _fresh = state
            found = 0
            if lex != DEAD:
                cost = self.completions.lexer_cost
                for reached in self.masker.lexeme_reached(lex).tolist():
                    found = max(found, cost(reached, parse))
                part = self.masker.lexeme_part(lex)
                if len(part.boundaries):
                    for reached, after in self.masker.boundary_part(lex, parse, part).reached:
                        found = max(found, cost(reached, after))
            self._successor_bytes.put(state, found, 64)
        return found

    def narrow(self, state: State, remaining_tokens: int) -> np.ndarray:
        """``masker.mask(state)`` narrowed so that the text can still end within
        ``remaining_tokens`` tokens, counting the one chosen now; a subset of the mask, never
        empty while ``finish_tokens(state) <= remaining_tokens``. A state with no canonical
        completion to vouch for gets the plain mask. Read-only."""
        mask = self.masker.mask(state)
        here = self.finish_tokens(state)
        if here >= UNREACHABLE:
            return mask
        budget = max(remaining_tokens - 1, here - 1, 0)
        if self._bytes_bound_tokens and self.max_successor_bytes(state) <= budget:
            return mask
        narrowed = np.zeros(self.masker.size, dtype=bool)
        ids_by_bytes = self.vocab.ids_by_bytes()
        prefix = bytearray()
        # the tokens that spell a prefix of the canonical completion
        for byte, current in itertools.islice(self.completions.canonical(state), self.longest):
            prefix.append(byte)
            ids = ids_by_bytes.get(bytes(prefix))
            if ids is not None and self.finish_tokens(current) <= budget:
                narrowed[list(ids)] = True
        narrowed &= mask
        eos = self.masker.eos_ids
        if len(eos) and self.recognizer.is_accepting(state):
            narrowed[eos] = True
        narrowed.flags.writeable = False
        return narrowed
