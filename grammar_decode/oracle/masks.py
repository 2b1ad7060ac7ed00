"""Reference token masks: every token replayed through the reference recognizer.

Token ``t`` is allowed after ``prefix`` iff ``prefix + bytes(t)`` is a viable prefix; EOS iff
``prefix`` is a complete sentence; special tokens never. Replays share work through a memo keyed
by the byte string read so far (a plain dict, not the vocabulary trie). Slow: seconds per mask on
a 262k vocabulary; for tests.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..vocab import Vocabulary
from .recognizer import Config, ReferenceRecognizer


def reference_mask(reference: ReferenceRecognizer, vocab: Vocabulary, prefix: bytes) -> np.ndarray:
    start = reference.feed(reference.initial, prefix)
    if start is None:
        raise ValueError(f"{prefix!r} is not a viable prefix")
    memo: dict[bytes, Optional[Config]] = {b"": start}

    def after(data: bytes) -> Optional[Config]:
        if data in memo:
            return memo[data]
        before = after(data[:-1])
        found = None if before is None else reference.step(before, data[-1])
        memo[data] = found
        return found

    mask = np.zeros(len(vocab), dtype=bool)
    ordinary = vocab.ordinary_mask()
    for token_id in np.flatnonzero(ordinary).tolist():
        mask[token_id] = after(vocab.token_bytes(token_id)) is not None
    if reference.is_accepting(start):
        mask[list(vocab.eos_token_ids)] = True
    return mask
