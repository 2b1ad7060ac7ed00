"""Vocabulary: token id → exact bytes, plus which ids are EOS and which are never allowed.

A vocabulary is built once per model and shared by every grammar and matcher. The masker never
sees a tokenizer: byte-level BPE, SentencePiece byte fallback and tiktoken all reduce to "a list
of byte strings".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, KeysView, Sequence

import numpy as np

from .errors import VocabularyError
from .token_text import END_OF_GENERATION_TEXTS, gpt2_unicode_to_bytes
from .trie import StringSlice, TokenTrie


# llama.cpp token types (tokenizer.ggml.token_type)
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
_SPECIAL_TYPES = (_UNKNOWN, _CONTROL, _UNUSED)
_BYTE_TOKEN = re.compile(rb"<0x([0-9A-Fa-f]{2})>")
_SPM_SPACE = "\u2581".encode("utf-8")




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
        self._string_slice: StringSlice | None = None
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
        Dynamic programming over positions; O(len(data) × longest token) dict lookups."""
        tokens = self.ids_by_bytes()
        longest = self._longest
        n = len(data)
        best: list[int | None] = [None] * (n + 1)
        best[n] = 0
        for start in range(n - 1, -1, -1):
            found: int | None = None
            for stop in range(start + 1, min(n, start + longest) + 1):
                rest = best[stop]
                if rest is not None and (found is None or rest + 1 < found) and data[start:stop] in tokens:
                    found = rest + 1
            best[start] = found
        return best[0]

    def prepare(self) -> "Vocabulary":
        """Build the per-vocabulary structures now (trie, string slice) instead of on the first
        mask that needs them: ~0.6 s for a 262k vocabulary, once. Returns ``self``."""
        self.trie
        self.string_slice
        self.missing_single_bytes()
        return self

    @property
    def trie(self) -> TokenTrie:
        """The prefix trie over ordinary tokens; built on first use, O(total token bytes)."""
        if self._trie is None:
            self._trie = TokenTrie(self._tokens, self.ordinary_mask())
        return self._trie

    @property
    def string_slice(self) -> StringSlice:
        """Tokens that are plain JSON-string content, and a trie of the rest; built on first use."""
        if self._string_slice is None:
            self._string_slice = StringSlice(self._tokens, self.ordinary_mask())
        return self._string_slice

    # -- loaders -------------------------------------------------------------------------------

    @classmethod
    def from_tiktoken(cls, encoding: Any, eos_token_ids: Iterable[int] | None = None) -> "Vocabulary":
        """From a ``tiktoken.Encoding`` (see ``grammar_decode.integrations.tiktoken``)."""
        from .integrations.tiktoken import token_table_from_tiktoken

        tokens, eos, special = token_table_from_tiktoken(encoding, None if eos_token_ids is None else list(eos_token_ids))
        return cls(tokens, eos_token_ids=eos, special_token_ids=special)

    @classmethod
    def from_hf(cls, tokenizer: Any, eos_token_ids: Iterable[int] | int | None = None) -> "Vocabulary":
        """From a Hugging Face tokenizer (``transformers`` or ``tokenizers``), exact to the byte
        (see ``grammar_decode.integrations.hf``). ``eos_token_ids`` adds end ids beyond the
        tokenizer's own (e.g. from a generation config)."""
        from .integrations.hf import token_table_from_hf

        tokens, eos, special = token_table_from_hf(tokenizer, eos_token_ids=eos_token_ids)
        return cls(tokens, eos_token_ids=eos, special_token_ids=special)

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
        from ._gguf import read_metadata

        meta = read_metadata(path)
        try:
            raw_tokens: list[bytes] = meta["tokenizer.ggml.tokens"]
            model = meta["tokenizer.ggml.model"].decode("utf-8")
        except KeyError as exc:
            raise VocabularyError(f"{path}: no {exc.args[0]} metadata") from exc
        types = meta.get("tokenizer.ggml.token_type")
        if types is None:
            types = np.full(len(raw_tokens), _NORMAL, dtype=np.int32)
        if len(types) != len(raw_tokens):
            raise VocabularyError(f"{path}: {len(types)} token types for {len(raw_tokens)} tokens")
        if model == "gpt2":
            tokens = _decode_byte_level(raw_tokens, types)
        elif model == "llama" or model.startswith("gemma"):
            tokens = _decode_sentencepiece(raw_tokens, types)
        else:
            raise VocabularyError(f"{path}: tokenizer model {model!r} is not supported")
        eos = [meta[k] for k in ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id",
                                 "tokenizer.ggml.eom_token_id") if k in meta]
        eos += [i for i, raw in enumerate(raw_tokens) if raw in END_OF_GENERATION_TEXTS]
        special = set(np.flatnonzero(np.isin(types, _SPECIAL_TYPES)).tolist()) | set(eos)
        return cls(tokens, eos_token_ids=eos, special_token_ids=sorted(special))


def _decode_byte_level(raw_tokens: list[bytes], types: np.ndarray) -> list[bytes]:
    table = gpt2_unicode_to_bytes()
    tokens = []
    for raw, kind in zip(raw_tokens, types.tolist()):
        text = raw.decode("utf-8")
        if kind == _NORMAL:
            try:
                tokens.append(bytes(table[ch] for ch in text))
                continue
            except KeyError as exc:
                raise VocabularyError(f"byte-level token {text!r} has a character outside the byte table") from exc
        tokens.append(raw)  # special and user-defined tokens are stored as plain text
    return tokens


def _decode_sentencepiece(raw_tokens: list[bytes], types: np.ndarray) -> list[bytes]:
    tokens = []
    for raw, kind in zip(raw_tokens, types.tolist()):
        if kind == _BYTE:
            match = _BYTE_TOKEN.fullmatch(raw)
            if match is None:
                raise VocabularyError(f"byte token {raw!r} is not of the form <0xNN>")
            tokens.append(bytes([int(match.group(1), 16)]))
        elif kind == _NORMAL:
            tokens.append(raw.replace(_SPM_SPACE, b" "))
        else:
            tokens.append(raw)
    return tokens
