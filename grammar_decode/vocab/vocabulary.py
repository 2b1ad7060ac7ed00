"""Vocabulary: token id → exact bytes, plus which ids are EOS and which are never allowed.

A vocabulary is built once per model and shared by every grammar and matcher. The masker never
sees a tokenizer: byte-level BPE, SentencePiece byte fallback and tiktoken all reduce to "a list
of byte strings".
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, KeysView, Sequence, TypeVar

import numpy as np

from ..errors import VocabularyError
from .gguf import token_table_from_gguf
from .hf import token_table_from_hf
from .llama_cpp import token_table_from_llama
from .table import TokenTable
from .tiktoken import token_table_from_tiktoken
from .trie import TokenTrie

_Derived = TypeVar("_Derived")






def _token_id(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise VocabularyError(f"a token id is an int, not {type(value).__name__} {value!r}")
    return int(value)


class Vocabulary:
    """Token id → bytes, for one model.

    Args:
        tokens: the exact bytes each token id decodes to.
        eos_token_ids: ids that end generation; allowed exactly when the document is complete.
        special_token_ids: ids that are never allowed inside a document (BOS, pad, control,
            unknown...). EOS ids may be listed here too; they stay EOS.

    Empty tokens (``b""``) are never allowed either: they would let generation loop in place.
    """

    def __init__(self, tokens: Sequence[bytes], eos_token_ids: Iterable[int] = (),
                 special_token_ids: Iterable[int] = ()) -> None:
        checked: list[bytes] = []
        for index, token in enumerate(tokens):
            if not isinstance(token, (bytes, bytearray, memoryview)):
                raise VocabularyError(f"token {index} is a {type(token).__name__}, not bytes")
            checked.append(bytes(token))
        # a tuple of bytes: immutable, and untracked by the garbage collector once it has looked
        # at it (a list of 262,144 tokens would be traversed by every full collection)
        self._tokens: tuple[bytes, ...] = tuple(checked)
        n = len(self._tokens)
        if n == 0:
            raise VocabularyError("a vocabulary needs at least one token")
        self._eos: tuple[int, ...] = tuple(sorted({_token_id(i) for i in eos_token_ids}))
        self._special: tuple[int, ...] = tuple(sorted({_token_id(i) for i in special_token_ids}))
        for token_id in self._eos + self._special:
            if not 0 <= token_id < n:
                raise VocabularyError(f"token id {token_id} is outside the vocabulary (size {n})")
        self._trie: TokenTrie | None = None
        self._derived: dict[Hashable, Any] = {}
        self._derived_lock = threading.Lock()
        self._longest = 0
        self._missing_bytes: list[int] | None = None
        self._ordinary_mask: np.ndarray | None = None
        self._ids_by_bytes: dict[bytes, tuple[int, ...]] | None = None

    def __len__(self) -> int:
        return len(self._tokens)

    # Read-only: the trie and the string slice are built from them once.
    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        """Ids that end generation; allowed exactly when the document is complete."""
        return self._eos

    @property
    def special_token_ids(self) -> tuple[int, ...]:
        """Ids never allowed inside a document (EOS ids may be among them)."""
        return self._special

    def __repr__(self) -> str:
        return f"Vocabulary({len(self)} tokens, eos={list(self.eos_token_ids)})"

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes token ``token_id`` decodes to."""
        return self._tokens[token_id]

    @property
    def tokens(self) -> tuple[bytes, ...]:
        """All token byte strings, indexed by id."""
        return self._tokens

    def decode(self, token_ids: Iterable[int]) -> bytes:
        """Concatenated bytes of ``token_ids`` (EOS and special ids contribute nothing)."""
        skip = set(self.eos_token_ids) | set(self.special_token_ids)
        return b"".join(self._tokens[i] for i in token_ids if i not in skip)

    def ordinary_mask(self) -> np.ndarray:
        """Bool array: True for ids that may appear inside a document (not special, not EOS,
        not empty). O(V) once, then cached; a read-only array."""
        mask = self._ordinary_mask
        if mask is None:
            mask = np.array([len(t) > 0 for t in self._tokens], dtype=bool)
            mask[list(self.special_token_ids)] = False
            mask[list(self.eos_token_ids)] = False
            mask.flags.writeable = False
            self._ordinary_mask = mask
        return mask

    def missing_single_bytes(self) -> list[int]:
        """Byte values that no ordinary token spells on its own. When empty, any byte string can
        be written one byte per token, so "fewest tokens" ≤ "fewest bytes". Cached."""
        if self._missing_bytes is None:
            present = {t[0] for t in self.ids_by_bytes() if len(t) == 1}
            self._missing_bytes = [b for b in range(256) if b not in present]
        return list(self._missing_bytes)

    def ordinary_tokens(self) -> KeysView[bytes]:
        """The byte strings of the ordinary tokens (a set-like view). Cached."""
        return self.ids_by_bytes().keys()

    def longest_token(self) -> int:
        """Bytes in the longest ordinary token. Cached."""
        self.ids_by_bytes()
        return self._longest

    def ids_by_bytes(self) -> dict[bytes, tuple[int, ...]]:
        """Ordinary token ids by their bytes (several ids may spell the same bytes). O(V) once,
        then cached; do not modify."""
        found = self._ids_by_bytes
        if found is None:
            lists: dict[bytes, list[int]] = {}
            for token_id in np.flatnonzero(self.ordinary_mask()).tolist():
                lists.setdefault(self._tokens[token_id], []).append(token_id)
            # tuples of ints: the collector stops tracking them (see ``_tokens``)
            found = {data: tuple(ids) for data, ids in lists.items()}
            # _longest first: a thread that sees _ids_by_bytes set must also see its _longest
            self._longest = max(map(len, found), default=0)
            self._ids_by_bytes = found
        return found

    def fewest_tokens(self, data: bytes) -> int | None:
        """Fewest ordinary tokens whose concatenation is exactly ``data`` (None if impossible).
        O(len(data) × longest token) dict lookups."""
        return self.fewest_tokens_table(data, [0])[0]

    def fewest_tokens_table(self, data: bytes, tail: Sequence[int | None]) -> list[int | None]:
        """For every position ``i`` of ``data`` (0 to ``len(data)``), the fewest ordinary tokens
        that spell ``data[i:j]`` for some ``j`` and then need ``counts[j]`` more, where the last
        ``len(tail)`` positions have the given counts (``tail[-1]`` is position ``len(data)``;
        None: impossible) and the others are computed, right to left. With ``tail == [0]`` it is
        the fewest tokens spelling each suffix; the closing budget passes the known counts of the
        states past a stretch of text. Dynamic programming, O(len(data) × longest token)."""
        tokens = self.ids_by_bytes()
        longest = self._longest
        n = len(data)
        given = len(tail)
        if not 1 <= given <= n + 1:
            raise ValueError(f"tail gives {given} counts for {n + 1} positions")
        best: list[int | None] = [None] * (n + 1 - given) + list(tail)
        for start in range(n - given, -1, -1):
            found: int | None = None
            for stop in range(start + 1, min(n, start + longest) + 1):
                rest = best[stop]
                if rest is not None and (found is None or rest + 1 < found) and data[start:stop] in tokens:
                    found = rest + 1
            best[start] = found
        return best

    def prepare(self) -> "Vocabulary":
        """Build the per-vocabulary structures the vocabulary owns now (trie, token index)
        instead of on the first mask that needs them. Returns ``self``. (The masking layer's own
        per-vocabulary tables are built by ``grammar_decode.masking.prepare``.)"""
        self.trie
        self.missing_single_bytes()
        return self

    def derived(self, key: Hashable, build: Callable[["Vocabulary"], _Derived]) -> _Derived:
        """A structure derived from this vocabulary alone, built once by ``build(self)`` and kept
        for the vocabulary's lifetime under ``key`` (the layers above keep their per-vocabulary
        tables here, so they are shared by every grammar). Thread-safe: two threads asking at
        once build it once. ``key`` names the structure; keep the set of keys small and fixed."""
        found = self._derived.get(key)
        if found is None:
            with self._derived_lock:
                found = self._derived.get(key)
                if found is None:
                    found = self._derived[key] = build(self)
        return found

    @property
    def trie(self) -> TokenTrie:
        """The prefix trie over ordinary tokens; built on first use, O(total token bytes)."""
        if self._trie is None:
            self._trie = TokenTrie(self._tokens, self.ordinary_mask())
        return self._trie

    # -- loaders -------------------------------------------------------------------------------

    @classmethod
    def from_table(cls, table: TokenTable) -> "Vocabulary":
        """From a loader's ``TokenTable``."""
        return cls(table.tokens, eos_token_ids=table.eos_token_ids, special_token_ids=table.special_token_ids)

    @classmethod
    def from_tiktoken(cls, encoding: Any, eos_token_ids: Iterable[int] | None = None) -> "Vocabulary":
        """From a ``tiktoken.Encoding`` (see ``grammar_decode.vocab.tiktoken``)."""
        return cls.from_table(token_table_from_tiktoken(encoding, None if eos_token_ids is None else list(eos_token_ids)))

    @classmethod
    def from_hf(cls, tokenizer: Any, eos_token_ids: Iterable[int] | int | None = None) -> "Vocabulary":
        """From a Hugging Face tokenizer (``transformers`` or ``tokenizers``), exact to the byte
        (see ``grammar_decode.vocab.hf``). ``eos_token_ids`` adds end ids beyond the
        tokenizer's own (e.g. from a generation config)."""
        return cls.from_table(token_table_from_hf(tokenizer, eos_token_ids=eos_token_ids))

    @classmethod
    def from_llama(cls, llama: Any) -> "Vocabulary":
        """The vocabulary of a loaded ``llama_cpp.Llama``, asked of llama.cpp itself id by id (see
        ``grammar_decode.vocab.llama_cpp``): the mask agrees with what llama.cpp prints and where
        it stops. O(V) calls, ~0.5 s for 262k tokens."""
        return cls.from_table(token_table_from_llama(llama))

    @classmethod
    def from_gguf(cls, path: str | Path) -> "Vocabulary":
        """Read ``tokenizer.ggml.*`` from a GGUF file (vocabulary-only files work).

        Supports ``tokenizer.ggml.model`` ``gpt2`` (byte-level BPE) and SentencePiece-style
        models (``llama``, ``gemma*``: ``▁`` is a space, ``<0xNN>`` is one byte). As in llama.cpp:
        unknown, control and unused tokens are special (never allowed); user-defined tokens are
        text (Gemma 3 spells ``\\n`` and HTML tags that way) and stand for their raw bytes. EOS
        is ``eos_token_id`` plus ``eot_token_id``/``eom_token_id`` and the tokens named like an end
        of turn (``END_OF_GENERATION_TEXTS``), whatever their type.
        """
        return cls.from_table(token_table_from_gguf(path))
