"""Compiled grammars (per constraint, shared) and their matchers (per request, cheap).

Every front end (JSON Schema, regular expressions, Lark grammars) returns a ``CompiledGrammar``:
the IR and its recognizer (lazy lexer DFA + parser), both vocabulary-independent; per-vocabulary
maskers hang off it, held weakly by vocabulary. A ``Matcher`` is a list of recognizer states, one
per token consumed, so ``rollback(k)`` is a list truncation and ``copy()`` a list copy.
"""

from __future__ import annotations

import threading
import weakref
from typing import Union

import numpy as np

from ..errors import GrammarError, TokenRejected, VocabularyError
from ..ir.grammar import Grammar
from ..lru import HITS, VALUE
from ..masking.bitmask import bitmask_words
from ..masking.masker import DEFAULT_CACHE_BYTES, UNREACHABLE, Masker
from ..vocab import Vocabulary
from .completion import MAX_COMPLETION, Completions
from .recognizer import Recognizer, State
from .transform import DEFAULT_MAX_SIZE


def _as_bytes(text: Union[str, bytes, bytearray]) -> bytes:
    """A text's bytes: a ``str`` as UTF-8, ``bytes``/``bytearray`` as they are. Anything else is a
    ``TypeError`` (``bytes(5)`` would be five NUL bytes, and a list of ints would be bytes too)."""
    if isinstance(text, str):
        # surrogatepass: a lone surrogate becomes bytes the recognizer rejects, not an exception
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, (bytes, bytearray)):
        return bytes(text)
    raise TypeError(f"a text is a str or bytes, not {type(text).__name__}")


class CompiledGrammar:
    """A constraint compiled onto the grammar engine. Immutable and thread-safe to share."""

    def __init__(self, grammar: Grammar, description: str = "", *, max_size: int = DEFAULT_MAX_SIZE,
                 max_cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.ir = grammar
        self.description = description
        self.recognizer = Recognizer(grammar, max_size)
        self.completions = Completions(self.recognizer)  # vocabulary-independent
        self.max_cache_bytes = max_cache_bytes
        self._maskers: "weakref.WeakKeyDictionary[Vocabulary, Masker]" = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CompiledGrammar({self.description or self.ir!r})"

    def min_completion_bytes(self, text: Union[str, bytes, bytearray] = b"") -> int:
        """Fewest bytes that complete ``text`` (from the start by default)."""
        state = self.recognizer.feed(self.recognizer.initial, _as_bytes(text))
        if state is None:
            raise ValueError("not a prefix of any text of this grammar")
        return self.completions.min_bytes(state)

    def accepts(self, text: Union[str, bytes, bytearray]) -> bool:
        """Whether ``text`` (str as UTF-8, or bytes) is a complete sentence."""
        return self.recognizer.accepts(_as_bytes(text))

    def accepts_prefix(self, text: Union[str, bytes, bytearray]) -> bool:
        """Whether ``text`` can be extended into a complete sentence."""
        return self.recognizer.accepts_prefix(_as_bytes(text))

    def min_completion_tokens(self, vocab: Vocabulary) -> int:
        """Fewest tokens of ``vocab`` that spell the canonical shortest text: the smallest
        ``max_tokens`` for which ``generate`` guarantees a complete text.

        Raises:
            GrammarError: the shortest text is longer than the budget can follow
                (``MAX_COMPLETION`` bytes), or has no canonical form to vouch for.
            VocabularyError: the vocabulary cannot spell it.
        """
        count = self.masker(vocab).finish_tokens(self.recognizer.initial)
        if count < UNREACHABLE:
            return count
        length = self.completions.min_bytes(self.recognizer.initial)
        if length > MAX_COMPLETION or self.completions.path(self.recognizer.initial) is None:
            raise GrammarError(f"the shortest text is {length:,} bytes long; the closing budget follows "
                               f"canonical completions of at most {MAX_COMPLETION:,} bytes")
        raise VocabularyError("this vocabulary cannot spell the shortest text")

    def masker(self, vocab: Vocabulary) -> Masker:
        """The shared mask cache for ``vocab`` (created on first use)."""
        with self._lock:
            masker = self._maskers.get(vocab)
            if masker is None:
                masker = self._maskers[vocab] = Masker(self.recognizer, vocab, self.max_cache_bytes, self.completions)
            return masker

    def matcher(self, vocab: Vocabulary) -> "Matcher":
        """A fresh matcher at the start of the text. O(1) once the vocabulary is prepared."""
        return Matcher(self, vocab)


class Matcher:
    """The position of one request in one grammar: feed tokens, read masks, roll back."""

    def __init__(self, grammar: CompiledGrammar, vocab: Vocabulary) -> None:
        self.grammar = grammar
        self.vocab = vocab  # a strong reference: the shared masker holds only a proxy
        self._masker = grammar.masker(vocab)
        self._mask_entries = self._masker.mask_cache.entries
        self._recognizer = grammar.recognizer
        self._states: list[State] = [self._recognizer.initial]
        self._eos = frozenset(vocab.eos_token_ids)
        self.terminated = False

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
        return twin

    def reset(self) -> None:
        del self._states[1:]
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

    def mask(self) -> np.ndarray:
        """Bool array of ``len(vocab)``, True where a token may come next; EOS only when the text
        is complete. Read-only."""
        if self.terminated:
            return np.zeros(len(self.vocab), dtype=bool)
        state = self._states[-1]
        # the cache hit inlined (``Masker.mask`` does the same): this is the per-token hot path
        entry = self._mask_entries.get(state)
        if entry is not None:
            entry[HITS] += 1
            return entry[VALUE]
        return self._masker.mask(state)

    def budget_mask(self, remaining_tokens: int) -> np.ndarray:
        """``mask()`` narrowed so that the text can still end within ``remaining_tokens`` tokens
        (see ``Masker.budget_mask``)."""
        if self.terminated:
            return np.zeros(len(self.vocab), dtype=bool)
        return self._masker.budget_mask(self.state, remaining_tokens)

    def min_completion_tokens(self) -> int:
        """Fewest tokens that spell the canonical completion from here (the closing budget's
        measure)."""
        return 0 if self.terminated else self._masker.finish_tokens(self.state)

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
        words = bitmask_words(len(self.vocab))
        if out.shape[1] < words:
            raise ValueError(f"out has {out.shape[1]} words per row; this vocabulary needs {words}")
        if self.terminated:
            out[row, :] = 0
            return
        out[row, :words] = self._masker.packed(self.state)
        out[row, words:] = 0

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
        nxt = self._recognizer.feed(self.state, data)
        if nxt is None:
            raise TokenRejected(token, f"{data!r} is not allowed here")
        self._states.append(nxt)
