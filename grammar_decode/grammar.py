"""The compiled grammar: one constraint on the grammar engine, vocabulary-independent and shared.

Every ``compile_*`` function returns a ``CompiledGrammar``: the IR and its recognizer (lazy lexer
DFA + parser) and the completion tables, all vocabulary-independent; the per-vocabulary maskers
hang off it, held weakly by vocabulary, and ``matcher(vocab)`` starts a request.
"""

from __future__ import annotations

import threading
import weakref
from typing import Union

from .engine.completion import Completions
from .engine.recognizer import Recognizer
from .engine.unique import UniqueItems
from .errors import GrammarError, VocabularyError
from .ir.grammar import Grammar
from .limits import DEFAULT_LIMITS, Limits, applied
from .masking.budget import UNREACHABLE, ClosingBudget
from .masking.masker import Masker
from .matcher import Matcher, text_bytes
from .vocab import Vocabulary


class CompiledGrammar:
    """A constraint compiled onto the grammar engine. Immutable and thread-safe to share."""

    def __init__(self, grammar: Grammar, description: str = "", *, limits: Limits = DEFAULT_LIMITS) -> None:
        """Analyse ``grammar`` for the engine (the rewrite for the parser, the completion tables):
        the costly part of a compile, done once. The ``compile_*`` functions call this."""
        self.ir = grammar
        self.description = description
        self.limits = limits
        with applied(limits):
            self.recognizer = Recognizer(grammar, limits.grammar_size)
            self.completions = Completions(self.recognizer)  # vocabulary-independent
        #: the check of unique array items, where the grammar has any (``engine.unique``)
        self.unique = UniqueItems(self.recognizer) if grammar.unique_items else None
        self._maskers: "weakref.WeakKeyDictionary[Vocabulary, tuple[Masker, ClosingBudget]]" = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CompiledGrammar({self.description or self.ir!r})"

    def min_completion_bytes(self, text: Union[str, bytes, bytearray] = b"") -> int:
        """Fewest bytes that complete ``text`` (from the start by default)."""
        state = self.recognizer.feed(self.recognizer.initial, text_bytes(text))
        if state is None:
            raise ValueError("not a prefix of any text of this grammar")
        return self.completions.min_bytes(state)

    def accepts(self, text: Union[str, bytes, bytearray]) -> bool:
        """Whether ``text`` (str as UTF-8, or bytes) is a complete sentence."""
        if self.unique is not None:
            position = self.unique.feed(self.unique.initial, text_bytes(text))
            return position is not None and self.recognizer.is_accepting(position[0])
        return self.recognizer.accepts(text_bytes(text))

    def accepts_prefix(self, text: Union[str, bytes, bytearray]) -> bool:
        """Whether ``text`` can be extended into a complete sentence."""
        if self.unique is not None:
            return self.unique.feed(self.unique.initial, text_bytes(text)) is not None
        return self.recognizer.accepts_prefix(text_bytes(text))

    def min_completion_tokens(self, vocab: Vocabulary) -> int:
        """Fewest tokens of ``vocab`` that spell the canonical shortest text: the smallest
        ``max_tokens`` for which ``generate`` guarantees a complete text.

        Raises:
            GrammarError: the shortest text is longer than the budget can follow
                (``Limits.completion_bytes``), or has no canonical form to vouch for.
            VocabularyError: the vocabulary cannot spell it.
        """
        count = self.budget(vocab).finish_tokens(self.recognizer.initial)
        if count < UNREACHABLE:
            return count
        length = self.completions.min_bytes(self.recognizer.initial)
        limit = self.completions.limit
        if length > limit or self.completions.path(self.recognizer.initial) is None:
            raise GrammarError(f"the shortest text is {length:,} bytes long; the closing budget follows "
                               f"canonical completions of at most {limit:,} bytes (Limits.completion_bytes)")
        raise VocabularyError("this vocabulary cannot spell the shortest text")

    def _for(self, vocab: Vocabulary) -> tuple[Masker, ClosingBudget]:
        with self._lock:
            found = self._maskers.get(vocab)
            if found is None:
                masker = Masker(self.recognizer, vocab, self.limits, self.completions)
                found = self._maskers[vocab] = (masker, ClosingBudget(masker))
            return found

    def masker(self, vocab: Vocabulary) -> Masker:
        """The shared mask cache for ``vocab`` (created on first use: the first grammar over a
        vocabulary also builds the masking layer's per-vocabulary tables, ~0.3 s for 262k tokens)."""
        return self._for(vocab)[0]

    def budget(self, vocab: Vocabulary) -> ClosingBudget:
        """The shared closing budget for ``vocab`` (created with the masker)."""
        return self._for(vocab)[1]

    def matcher(self, vocab: Vocabulary) -> Matcher:
        """A fresh matcher at the start of the text. O(1) once the vocabulary is prepared."""
        return Matcher(self, vocab)
