"""Token masks for one (recognizer, vocabulary) pair, cached on what decides them.

A mask after recognizer state ``(lex, parse, fresh)`` is the union of

* the *lexeme part*, decided by the lexer state alone (``walk.lexeme_walk``, plus the plain-text
  slice when the lexer state loops on plain text): cached per lexer state, so every nesting depth
  and every parse reaching that lexer state shares it;
* the *boundary part*, the tokens that end the current lexeme and go on into the next ones
  (``walk.boundary_walk``): a short array of token ids, cached per (lexer state, parse state);
* EOS, when the text so far is a complete sentence.

Whole masks are assembled from the two (a copy of the lexeme part, O(V)) and the most recent ones
kept in a small cache for the states a generation loop revisits. Every cache is an LRU bounded in
bytes (``max_cache_bytes`` in all); ``cache_info`` reports entries, bytes, hits and misses. Masks
handed out are read-only.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from ..engine.lexer import DEAD
from ..engine.recognizer import Recognizer, State
from ..mask import pack_mask
from ..trie import TokenTrie
from ..vocab import Vocabulary
from .cache import ByteBoundedLRU
from .slices import loops_on_plain_text
from .walk import Boundary, boundary_walk, lexeme_walk

#: Default byte budget of one masker's caches (both levels together).
DEFAULT_CACHE_BYTES = 256 << 20


class _LexemePart:
    __slots__ = ("mask", "trie", "boundaries")

    def __init__(self, mask: np.ndarray, trie: TokenTrie, boundaries: list[Boundary]) -> None:
        self.mask = mask
        self.trie = trie
        self.boundaries = boundaries


class Masker:
    """Computes and caches masks; shared by every matcher of one grammar and vocabulary."""

    def __init__(self, recognizer: Recognizer, vocab: Vocabulary, max_cache_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.recognizer = recognizer
        # a proxy: grammars keep maskers in a WeakKeyDictionary keyed by the vocabulary
        self.vocab: Vocabulary = weakref.proxy(vocab)
        self.size = len(vocab)
        self.trie = vocab.trie
        self.slice = vocab.string_slice
        self.eos_ids = np.array(vocab.eos_token_ids, dtype=np.int64)
        self.ordinary = vocab.ordinary_mask()  # O(V), once per (grammar, vocabulary)
        self.ordinary.flags.writeable = False
        self._lexeme_parts: ByteBoundedLRU[_LexemePart] = ByteBoundedLRU(max_cache_bytes // 2)
        self._boundary_ids: ByteBoundedLRU[np.ndarray] = ByteBoundedLRU(max_cache_bytes // 4)
        self._masks: ByteBoundedLRU[np.ndarray] = ByteBoundedLRU(max_cache_bytes // 8)
        self._packed: ByteBoundedLRU[np.ndarray] = ByteBoundedLRU(max_cache_bytes // 8)
        self._loops: dict[int, bool] = {}
        self._lock = threading.Lock()

    def _lexeme_part(self, lex: int) -> _LexemePart:
        part = self._lexeme_parts.get(lex)
        if part is not None:
            return part
        lexer = self.recognizer.lexer
        mask = np.zeros(self.size, dtype=bool)
        loops = self._loops.get(lex)
        if loops is None:
            loops = self._loops[lex] = loops_on_plain_text(lexer, lex)
        trie = self.slice.rest if loops else self.trie
        nodes, boundaries = lexeme_walk(lexer, trie, lex)
        mask[trie.tokens_at(nodes)] = True
        if loops:
            mask |= self.slice.plain
        mask.flags.writeable = False
        part = _LexemePart(mask, trie, boundaries)
        self._lexeme_parts.put(lex, part, mask.nbytes + 64 * len(boundaries))
        return part

    def mask(self, state: State) -> np.ndarray:
        """Bool mask over the vocabulary: token t allowed iff ``state`` + bytes(t) is viable; EOS
        iff the text is a complete sentence. Read-only."""
        found = self._masks.get(state)
        if found is not None:
            return found
        lex, parse, _fresh = state
        if lex == DEAD:
            mask = np.zeros(self.size, dtype=bool)
        else:
            part = self._lexeme_part(lex)
            mask = part.mask.copy()
            if part.boundaries:
                key = (lex, parse)
                ids = self._boundary_ids.get(key)
                if ids is None:
                    ids = part.trie.tokens_at(boundary_walk(self.recognizer, part.trie, part.boundaries, parse))
                    self._boundary_ids.put(key, ids, ids.nbytes + 64)
                mask[ids] = True
        if len(self.eos_ids) and self.recognizer.is_accepting(state):
            mask[self.eos_ids] = True
        mask.flags.writeable = False
        self._masks.put(state, mask, mask.nbytes)
        return mask

    def packed(self, state: State) -> np.ndarray:
        """``mask(state)`` as int32 words (bit j of word j // 32 is token j). Cached."""
        found = self._packed.get(state)
        if found is None:
            found = pack_mask(self.mask(state))
            found.flags.writeable = False
            self._packed.put(state, found, found.nbytes)
        return found

    def cache_info(self) -> dict[str, dict[str, int]]:
        """Entries, bytes held, hits and misses of each cache."""
        return {"lexeme_parts": self._lexeme_parts.info(), "boundary_ids": self._boundary_ids.info(),
                "masks": self._masks.info(), "packed": self._packed.info()}
