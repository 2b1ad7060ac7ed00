"""Minimal reader for the key/value metadata of a GGUF file (numpy only).

Only the metadata section is parsed; tensor data is never touched, so vocabulary-only files and
full model files read equally fast. Format: little-endian, ``GGUF`` magic, version, tensor count,
key/value count, then typed key/value pairs.
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path
from typing import Any

import numpy as np

from .errors import VocabularyError

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
