"""The per-request matcher: the position of one text in one compiled grammar.

A ``Matcher`` is a list of recognizer states, one per token consumed, so ``rollback(k)`` is a list
truncation and ``copy()`` a list copy; creating one is O(1) once the grammar's masker for the
vocabulary exists. Masks come from the masker shared by every matcher of the same grammar and
vocabulary.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, Sequence, Union

import numpy as np

from .engine.completion import Completions
from .engine.recognizer import Recognizer, State
from .engine.unique import Position, UniqueItems
from .errors import TokenRejected
from .masking.bitmask import bitmask_words
from .masking.budget import ClosingBudget
from .masking.masker import Masker
from .masking.unique import unique_mask, unique_packed
from .vocab import Vocabulary


def text_bytes(text: Union[str, bytes, bytearray]) -> bytes:
    """A text's bytes: a ``str`` as UTF-8, ``bytes``/``bytearray`` as they are. Anything else is a
    ``TypeError`` (``bytes(5)`` would be five NUL bytes, and a list of ints would be bytes too)."""
    if isinstance(text, str):
        # surrogatepass: a lone surrogate becomes bytes the recognizer rejects, not an exception
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, (bytes, bytearray)):
        return bytes(text)
    raise TypeError(f"a text is a str or bytes, not {type(text).__name__}")


class MaskSource(Protocol):
    """What a matcher needs of its grammar (``CompiledGrammar``)."""

    recognizer: Recognizer
    completions: Completions

    unique: UniqueItems | None

    def masker(self, vocab: Vocabulary) -> Masker: ...

    def budget(self, vocab: Vocabulary) -> ClosingBudget: ...


class Matcher:
    """The position of one request in one grammar: feed tokens, read masks, roll back."""

    def __init__(self, grammar: MaskSource, vocab: Vocabulary) -> None:
        self.grammar = grammar
        self.vocab = vocab  # a strong reference: the shared masker holds only a proxy
        self._masker = grammar.masker(vocab)
        self._budget = grammar.budget(vocab)
        self._mask_entries = self._masker.mask_cache.entries
        self._mask_recent = self._masker.mask_cache.recent
        self._recognizer = grammar.recognizer
        self._states: list[State] = [self._recognizer.initial]
        self._eos = frozenset(vocab.eos_token_ids)
        self._words = bitmask_words(len(vocab))
        self.terminated = False
        #: with unique array items: the exact stepping, and the position after each token
        self._unique = grammar.unique
        self._positions: list[Position] = [] if self._unique is None else [self._unique.initial]

    @property
    def state(self) -> State:
        return self._states[-1]

    @property
    def tokens_consumed(self) -> int:
        return len(self._states) - 1 + (1 if self.terminated else 0)

    def copy(self) -> "Matcher":
        twin = Matcher.__new__(Matcher)
        twin.__dict__.update(self.__dict__)
        twin._states = list(self._states)
        twin._positions = list(self._positions)
        return twin

    def reset(self) -> None:
        del self._states[1:]
        del self._positions[1:]
        self.terminated = False

    def rollback(self, count: int) -> None:
        """Undo the last ``count`` tokens (EOS included). O(count)."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"rollback needs a non-negative int, got {count!r}")
        if count > self.tokens_consumed:
            raise ValueError(f"cannot roll back {count} tokens: only {self.tokens_consumed} consumed")
        if count and self.terminated:
            self.terminated = False
            count -= 1
        if count:
            del self._states[-count:]
            if self._unique is not None:
                del self._positions[-count:]

    def mask(self) -> np.ndarray:
        """Bool array of ``len(vocab)``, True where a token may come next; EOS only when the text
        is complete. Read-only."""
        if self.terminated:
            return np.zeros(len(self.vocab), dtype=bool)
        state = self._states[-1]
        # the cache hit inlined (``Masker.mask`` does the same): this is the per-token hot path
        mask = self._mask_entries.get(state)
        if mask is not None:
            recent = self._mask_recent
            recent[state] = recent.get(state, 0) + 1
        else:
            mask = self._masker.mask(state)
        if self._unique is not None:
            return unique_mask(self._unique, self._positions[-1], mask, self.vocab)
        return mask

    def budget_mask(self, remaining_tokens: int) -> np.ndarray:
        """``mask()`` narrowed so that the text can still end within ``remaining_tokens`` tokens
        (see ``masking.budget``)."""
        if self.terminated:
            return np.zeros(len(self.vocab), dtype=bool)
        narrowed = self._budget.narrow(self.state, remaining_tokens)
        if self._unique is not None:
            return unique_mask(self._unique, self._positions[-1], narrowed, self.vocab)
        return narrowed

    def min_completion_tokens(self) -> int:
        """Fewest tokens that spell the canonical completion from here (the closing budget's
        measure)."""
        return 0 if self.terminated else self._budget.finish_tokens(self.state)

    def min_completion_bytes(self) -> int:
        """Fewest bytes that complete the text from here."""
        return 0 if self.terminated else self.grammar.completions.min_bytes(self.state)

    def fill_bitmask(self, out: np.ndarray, row: int = 0) -> None:
        """Write the mask into row ``row`` of ``out`` (int32, shape ``(batch, ceil(W / 32))``,
        ``W >= len(vocab)``); words past the vocabulary are zeroed."""
        if not isinstance(out, np.ndarray) or out.ndim != 2 or out.dtype != np.int32:
            raise TypeError("out must be a 2-D int32 array of shape (batch, ceil(width / 32))")
        if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not 0 <= row < out.shape[0]:
            raise IndexError(f"row {row!r} is outside 0..{out.shape[0] - 1}")
        words = self._words
        width = out.shape[1]
        if width < words:
            raise ValueError(f"out has {width} words per row; this vocabulary needs {words}")
        if self.terminated:
            out[row, :] = 0
            return
        packed = self._masker.packed(self._states[-1])
        if self._unique is not None:
            packed = unique_packed(self._unique, self._positions[-1], packed, self.vocab)
        out[row, :words] = packed
        if width > words:
            out[row, words:] = 0

    def _fills_from_cache(self) -> bool:
        """Whether ``fill_bitmask`` would copy a cached row (no walk, no Python work to overlap)."""
        return self.terminated or (self._unique is None and self._masker.has_packed(self.state))

    def is_accepting(self) -> bool:
        """True when the text so far is a complete sentence."""
        return self.terminated or self._recognizer.is_accepting(self.state)

    def _check_id(self, token_id: object) -> int:
        if isinstance(token_id, bool) or not isinstance(token_id, (int, np.integer)):
            raise TokenRejected(-1, f"a token id is an int, not {type(token_id).__name__} {token_id!r}")
        return int(token_id)

    def accepts_token(self, token_id: int) -> bool:
        token = self._check_id(token_id)
        if self.terminated or not 0 <= token < len(self.vocab):
            return False
        if self._unique is not None and token not in self._eos:  # one replay, not the whole filter
            base = self._masker.mask(self.state)
            return bool(base[token]) and self._unique.feed(self._positions[-1], self.vocab.token_bytes(token)) is not None
        return bool(self.mask()[token])

    def advance(self, token_id: int) -> None:
        """Consume one token; ``TokenRejected`` (and no change) when it is not allowed. EOS
        terminates the matcher."""
        token = self._check_id(token_id)
        if self.terminated:
            raise TokenRejected(token, "the matcher has terminated")
        if not 0 <= token < len(self.vocab):
            raise TokenRejected(token, f"outside the vocabulary (size {len(self.vocab)})")
        if token in self._eos:
            if not self._recognizer.is_accepting(self.state):
                raise TokenRejected(token, "end of text before the text is complete")
            self.terminated = True
            return
        data = self.vocab.token_bytes(token)
        if not self._masker.ordinary[token]:
            raise TokenRejected(token, "a special token cannot be part of the text")
        if self._unique is not None:
            position = self._unique.feed(self._positions[-1], data)
            if position is None:
                raise TokenRejected(token, f"{data!r} is not allowed here (it would repeat an array item, or "
                                           "is not allowed at all)")
            self._positions.append(position)
            self._states.append(position[0])
            return
        nxt = self._recognizer.feed(self.state, data)
        if nxt is None:
            raise TokenRejected(token, f"{data!r} is not allowed here")
        self._states.append(nxt)


#: One pool per thread count asked for, kept for the process (a batch fill per decoding step).
_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
#: Most threads ``fill_bitmasks`` starts.
MAX_FILL_THREADS = 64


def fill_bitmasks(matchers: Sequence[Matcher], out: np.ndarray, threads: int = 1) -> None:
    """Row ``i`` of ``out`` gets ``matchers[i]``'s mask (``Matcher.fill_bitmask``), for a batch.
    Rows are independent, so ``threads > 1`` fills them from a thread pool; the compiled trie
    walk releases the GIL, so cache-missing rows overlap there (row building and cache hits are
    Python and take turns); a batch whose every row is a cache hit is filled in this thread.
    Matchers may share grammars and vocabularies (their caches are
    thread-safe), but not be the same matcher twice. ``out`` must have at least
    ``len(matchers)`` rows."""
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= MAX_FILL_THREADS:
        raise ValueError(f"threads must be an int in 1..{MAX_FILL_THREADS}, got {threads!r}")
    if not isinstance(out, np.ndarray) or out.ndim != 2 or out.shape[0] < len(matchers):
        raise ValueError(f"out needs at least {len(matchers)} rows (a 2-D int32 array)")
    if len({id(m) for m in matchers}) != len(matchers):
        raise ValueError("a matcher appears twice in the batch")
    if threads == 1 or len(matchers) < 2 or all(m._fills_from_cache() for m in matchers):
        # cache hits take microseconds each: handing them to threads would cost more than they do
        for row, matcher in enumerate(matchers):
            matcher.fill_bitmask(out, row)
        return
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="grammar-decode-fill")
    # contiguous slices, one per thread: fewer hand-offs than a task per row
    step = -(-len(matchers) // threads)
    futures = [pool.submit(_fill_slice, matchers, out, start, min(start + step, len(matchers)))
               for start in range(0, len(matchers), step)]
    for future in futures:
        future.result()  # re-raises a row's error here


def _fill_slice(matchers: Sequence[Matcher], out: np.ndarray, start: int, stop: int) -> None:
    for row in range(start, stop):
        matchers[row].fill_bitmask(out, row)
