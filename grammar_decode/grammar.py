"""Compiled grammars (per schema, shared) and matchers (per request, cheap)."""

from __future__ import annotations

import threading
import weakref
from typing import Any, Union

import numpy as np

from .automaton import Automaton, State
from .errors import TokenRejected
from .mask import Masker, bitmask_words
from .schema import Node, compile_schema
from .vocab import Vocabulary

#: Default longest whitespace run between two JSON tokens in ``flexible`` mode. Long enough for
#: ``json.dumps`` separators and a newline plus a short indent; short enough that a model cannot
#: spend its token budget on blank space.
DEFAULT_MAX_WHITESPACE = 4

WHITESPACE_MODES = ("compact", "flexible")


class CompiledGrammar:
    """A schema compiled to a byte automaton. Vocabulary-independent, immutable, thread-safe to
    share; per-vocabulary mask caches hang off it and are shared by all its matchers."""

    def __init__(self, node: Node, whitespace: str, max_whitespace: int) -> None:
        self.node = node
        self.whitespace = whitespace
        self.max_whitespace = max_whitespace if whitespace == "flexible" else 0
        self.automaton = Automaton(node, self.max_whitespace)
        self._maskers: "weakref.WeakKeyDictionary[Vocabulary, Masker]" = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CompiledGrammar({self.node!r}, whitespace={self.whitespace!r})"

    def _state_after(self, doc: Union[str, bytes]) -> State | None:
        # surrogatepass: a lone surrogate becomes bytes the automaton rejects, instead of an error
        data = doc.encode("utf-8", "surrogatepass") if isinstance(doc, str) else bytes(doc)
        return self.automaton.feed(self.automaton.initial, data)

    def accepts(self, doc: Union[str, bytes]) -> bool:
        """True iff ``doc`` (str as UTF-8, or bytes) is a complete document of this grammar."""
        state = self._state_after(doc)
        return state is not None and self.automaton.is_accepting(state)

    def accepts_prefix(self, doc: Union[str, bytes]) -> bool:
        """True iff ``doc`` can be extended to a complete document (the empty string can)."""
        return self._state_after(doc) is not None

    def min_completion_bytes(self, doc: Union[str, bytes] = b"") -> int:
        """Fewest bytes that complete ``doc`` (from the start by default)."""
        state = self._state_after(doc)
        if state is None:
            raise ValueError("not a prefix of any document of this grammar")
        return self.automaton.min_bytes(state)

    def min_completion_tokens(self, vocab: Vocabulary) -> int:
        """Fewest tokens of ``vocab`` that spell a shortest complete document: the smallest
        ``max_tokens`` for which ``generate`` guarantees a complete document."""
        return self.masker(vocab).finish_tokens(self.automaton.initial)

    def masker(self, vocab: Vocabulary) -> Masker:
        """The shared mask cache for ``vocab`` (created on first use)."""
        with self._lock:
            masker = self._maskers.get(vocab)
            if masker is None:
                masker = self._maskers[vocab] = Masker(self.automaton, vocab)
            return masker

    def matcher(self, vocab: Vocabulary) -> "Matcher":
        """A fresh matcher at the start of a document. O(1) after the vocabulary's trie exists."""
        return Matcher(self, self.masker(vocab), vocab)


class Matcher:
    """The position of one request inside one grammar: feed tokens, read masks.

    Cheap to create and to copy; all heavy state (trie, mask cache) is shared.
    """

    def __init__(self, grammar: CompiledGrammar, masker: Masker, vocab: Vocabulary) -> None:
        self.grammar = grammar
        self._masker = masker
        self._automaton = grammar.automaton
        self.vocab = vocab  # a strong reference: the shared masker only holds a weak one
        self.state: State = self._automaton.initial
        self.terminated = False
        self._eos = frozenset(self.vocab.eos_token_ids)

    def copy(self) -> "Matcher":
        twin = Matcher(self.grammar, self._masker, self.vocab)
        twin.state, twin.terminated = self.state, self.terminated
        return twin

    def reset(self) -> None:
        self.state = self._automaton.initial
        self.terminated = False

    def mask(self) -> np.ndarray:
        """Bool array of length ``len(vocab)``: True = allowed next. EOS only when complete.
        Read-only (shared with the cache). Cached per automaton state."""
        if self.terminated:
            return np.zeros(len(self.vocab), dtype=bool)
        return self._masker.mask(self.state)

    def budget_mask(self, remaining_tokens: int) -> np.ndarray:
        """``mask()`` narrowed so the document can still end within ``remaining_tokens`` tokens
        (see ``Masker.budget_mask``)."""
        if self.terminated:
            return np.zeros(len(self.vocab), dtype=bool)
        return self._masker.budget_mask(self.state, remaining_tokens)

    def fill_bitmask(self, out: np.ndarray, row: int = 0) -> None:
        """Write this matcher's mask into row ``row`` of ``out``, an int32 array of shape
        ``(batch, ceil(W / 32))`` with ``W >= len(vocab)``. Words past the vocabulary are zeroed,
        so padding ids of wider logits stay masked."""
        if out.ndim != 2 or out.dtype != np.int32:
            raise TypeError("out must be a 2-D int32 array of shape (batch, ceil(width / 32))")
        words = bitmask_words(len(self.vocab))
        if out.shape[1] < words:
            raise ValueError(f"out has {out.shape[1]} words per row; this vocabulary needs {words}")
        if self.terminated:
            out[row, :] = 0
            return
        out[row, :words] = self._masker.packed(self.state)
        out[row, words:] = 0

    def is_accepting(self) -> bool:
        """True when the bytes fed so far form a complete document."""
        return self.terminated or self._automaton.is_accepting(self.state)

    def accepts_token(self, token_id: int) -> bool:
        """Whether ``advance(token_id)`` would succeed. Uses the cached mask."""
        if self.terminated or not 0 <= token_id < len(self.vocab):
            return False
        return bool(self.mask()[token_id])

    def advance(self, token_id: int) -> None:
        """Consume one token. Raises ``TokenRejected`` (and changes nothing) if the token is not
        allowed here. EOS terminates the matcher; nothing is allowed after it."""
        if self.terminated:
            raise TokenRejected(token_id, "the matcher has terminated")
        if not 0 <= token_id < len(self.vocab):
            raise TokenRejected(token_id, f"outside the vocabulary (size {len(self.vocab)})")
        if not self._masker.mask(self.state)[token_id]:
            raise TokenRejected(token_id, f"{self.vocab.token_bytes(token_id)!r} is not allowed here")
        if token_id in self._eos:
            self.terminated = True
            return
        nxt = self._automaton.feed(self.state, self.vocab.token_bytes(token_id))
        if nxt is None:  # pragma: no cover - the mask and the automaton agree by construction
            raise TokenRejected(token_id, "mask and automaton disagree")
        self.state = nxt

    def min_completion_bytes(self) -> int:
        """Fewest bytes that complete the document from here."""
        return 0 if self.terminated else self._automaton.min_bytes(self.state)

    def min_completion_tokens(self) -> int:
        """Fewest tokens that spell the canonical shortest completion from here (the closing
        budget's measure; see ``Masker.finish_tokens``)."""
        return 0 if self.terminated else self._masker.finish_tokens(self.state)


def compile_json_schema(schema: Union[dict[str, Any], bool, str, bytes], *, whitespace: str = "flexible",
                        max_whitespace: int = DEFAULT_MAX_WHITESPACE) -> CompiledGrammar:
    """Compile a JSON Schema (a dict, or its JSON text) into a grammar.

    Args:
        whitespace: ``"flexible"`` allows JSON whitespace between tokens, at most
            ``max_whitespace`` bytes per gap (so ``json.dumps``'s ``", "`` and ``": "`` pass);
            ``"compact"`` allows none. Never whitespace before or after the top-level value.
        max_whitespace: longest whitespace run in flexible mode (>= 1).

    Raises:
        UnsupportedSchemaError: a keyword that cannot be enforced (names keyword and pointer).
        SchemaError: an invalid or unsatisfiable schema.
    """
    if whitespace not in WHITESPACE_MODES:
        raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, got {whitespace!r}")
    if isinstance(max_whitespace, bool) or not isinstance(max_whitespace, int) or max_whitespace < 1:
        raise ValueError(f"max_whitespace must be a positive integer, got {max_whitespace!r}")
    return CompiledGrammar(compile_schema(schema), whitespace, max_whitespace)
