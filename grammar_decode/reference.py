"""The replay reference: slow, obviously correct, and the oracle every fast path is tested against.

Token ``t`` is allowed after prefix ``p`` iff ``p + bytes(t)`` is a prefix of some accepted
document; EOS is allowed iff ``p`` itself is accepted; special and empty tokens never are. Because
the automaton has no dead states, "a prefix of some accepted document" is "every byte steps". Each
token is replayed from scratch with the unmemoised transition function, so no cache is involved.
O(total vocabulary bytes) per call.
"""

from __future__ import annotations

import numpy as np

from .automaton import Automaton, State
from .mask import UNREACHABLE
from .vocab import Vocabulary


def replay_mask(automaton: Automaton, vocab: Vocabulary, state: State) -> np.ndarray:
    """Bool mask of the tokens allowed in ``state``, by replaying every token."""
    ordinary = vocab.ordinary_mask()
    mask = np.zeros(len(vocab), dtype=bool)
    for token_id, text in enumerate(vocab.tokens):
        if not ordinary[token_id]:
            continue
        current: State | None = state
        for byte in text:
            current = automaton.step_uncached(current, byte)
            if current is None:
                break
        mask[token_id] = current is not None
    if automaton.is_accepting(state):
        mask[list(vocab.eos_token_ids)] = True
    return mask


def replay_budget_mask(automaton: Automaton, vocab: Vocabulary, state: State, remaining_tokens: int) -> np.ndarray:
    """Reference for ``Masker.budget_mask``: the replay mask restricted to tokens after which the
    canonical completion can be spelled in at most ``remaining_tokens - 1`` tokens (or, when that
    is impossible, in fewer tokens than from ``state``: the most progress towards closing)."""

    def finish(s: State) -> int:
        count = vocab.fewest_tokens(automaton.completion(s))
        return UNREACHABLE if count is None else count

    mask = replay_mask(automaton, vocab, state)
    if finish(state) >= UNREACHABLE:
        return mask
    budget = max(remaining_tokens - 1, finish(state) - 1, 0)
    for token_id in np.flatnonzero(mask).tolist():
        if token_id in vocab.eos_token_ids:
            continue
        nxt = state
        for byte in vocab.token_bytes(token_id):
            nxt = automaton.step_uncached(nxt, byte)
        if finish(nxt) > budget:
            mask[token_id] = False
    return mask
