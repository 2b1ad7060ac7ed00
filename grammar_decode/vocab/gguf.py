"""GGUF vocabularies: a minimal reader for the key/value metadata of a GGUF file (numpy only), and
the token table it holds (``tokenizer.ggml.*``).

Only the metadata section is parsed; tensor data is never touched, so vocabulary-only files and
full model files read equally fast. Format: little-endian, ``GGUF`` magic, version, tensor count,
key/value count, then typed key/value pairs.
"""

from __future__ import annotations

import mmap
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import VocabularyError
from .table import TokenTable
from .token_text import END_OF_GENERATION_TEXTS, gpt2_unicode_to_bytes

_SCALARS = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "<u1",
            10: "<u8", 11: "<i8", 12: "<f8"}
_STRING, _ARRAY = 8, 9


class _Cursor:
    def __init__(self, data: "bytes | mmap.mmap") -> None:
        self.data = data
        self.pos = 0

    def u32(self) -> int:
        (value,) = struct.unpack_from("<I", self.data, self.pos)
        self.pos += 4
        return value

    def u64(self) -> int:
        (value,) = struct.unpack_from("<Q", self.data, self.pos)
        self.pos += 8
        return value

    def string(self) -> bytes:
        length = self.u64()
        start = self.pos
        self.pos += length
        if self.pos > len(self.data):
            raise VocabularyError("truncated GGUF string")
        return self.data[start:self.pos]

    def value(self, kind: int) -> Any:
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            elem, count = self.u32(), self.u64()
            if elem == _STRING:
                return [self.string() for _ in range(count)]
            if elem in _SCALARS:
                dtype = np.dtype(_SCALARS[elem])
                end = self.pos + dtype.itemsize * count
                array = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.pos).copy()
                self.pos = end
                return array
            return [self.value(elem) for _ in range(count)]
        if kind in _SCALARS:
            dtype = np.dtype(_SCALARS[kind])
            (value,) = np.frombuffer(self.data, dtype=dtype, count=1, offset=self.pos)
            self.pos += dtype.itemsize
            return bool(value) if kind == 7 else value.item()
        raise VocabularyError(f"unknown GGUF value type {kind}")


def read_metadata(path: str | Path) -> dict[str, Any]:
    """All key/value metadata of a GGUF file. Strings come back as bytes, arrays as numpy arrays
    (numeric) or lists (strings). Memory-maps the file; O(metadata size), tensors are not read."""
    with open(Path(path), "rb") as handle:
        try:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError as exc:  # empty file
            raise VocabularyError(f"{path}: not a GGUF file") from exc
    try:
        return _read(data, path)
    finally:
        data.close()


def _read(data: "mmap.mmap", path: str | Path) -> dict[str, Any]:
    if data[:4] != b"GGUF":
        raise VocabularyError(f"{path}: not a GGUF file")
    cursor = _Cursor(data)
    cursor.pos = 4
    version = cursor.u32()
    if version < 2:
        raise VocabularyError(f"{path}: GGUF version {version} is not supported (need >= 2)")
    cursor.u64()  # tensor count
    count = cursor.u64()
    metadata: dict[str, Any] = {}
    for _ in range(count):
        key = cursor.string().decode("utf-8")
        metadata[key] = cursor.value(cursor.u32())
    return metadata


# llama.cpp token types (tokenizer.ggml.token_type)
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _UNUSED, _BYTE = 1, 2, 3, 4, 5, 6
_SPECIAL_TYPES = (_UNKNOWN, _CONTROL, _UNUSED)
_BYTE_TOKEN = re.compile(rb"<0x([0-9A-Fa-f]{2})>")
_SPM_SPACE = "\u2581".encode("utf-8")


def token_table_from_gguf(path: str | Path) -> TokenTable:
    """The token table of a GGUF file (``Vocabulary.from_gguf`` documents the reading)."""
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
    return TokenTable(tokens, eos, sorted(special))


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
