"""The reference for unique array items: a text prefix, read as JSON from scratch, holds no array
with a repeated string, and its open string item (if any) can still become a new one.

Independent of ``engine.unique``: no lexer, no frames, no expressions; the prefix is scanned byte
by byte with a small JSON tokenizer of its own, and every array's complete string items are
decoded with ``json.loads``. For the grammars the tests give it, every array of the document is
an array of unique strings (``uniqueItems`` over ``type: string``). Slow; for tests.
"""

from __future__ import annotations

import json
from typing import Callable, Iterable, Optional

import numpy as np

from ..vocab import Vocabulary
from .masks import reference_mask
from .recognizer import ReferenceRecognizer


def _escapes(character: str) -> list[str]:
    """The JSON spellings of one character inside a string literal."""
    code = ord(character)
    out = {character} if character not in '"\\' and code >= 0x20 else set()
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "/": "\\/"}
    if character in short:
        out.add(short[character])
    if code < 0x10000:
        for digits in {f"{code:04x}", f"{code:04X}"}:
            out.add("\\u" + digits)
    return sorted(out)


def spellings(value: str) -> Iterable[bytes]:
    """Every literal that spells ``value`` (quotes included), for short values."""
    forms = [""]
    for character in value:
        forms = [f + e for f in forms for e in _escapes(character)]
    return (f'"{f}"'.encode("utf-8") for f in forms)


def scan(text: bytes) -> Optional[tuple[list[list[str]], Optional[bytes]]]:
    """The arrays open at the end of ``text`` (outermost first), each with its complete string
    items, and the bytes of the open string item, if the text ends inside one; None when some
    array of the text holds a string twice (closed arrays included)."""
    stack: list[Optional[list[str]]] = []  # per open container: its strings (None for an object)
    i = 0
    while i < len(text):
        byte = text[i]
        if byte == 0x22:  # a string: find its end
            j = i + 1
            while j < len(text) and text[j] != 0x22:
                j += 2 if text[j] == 0x5C else 1
            if j >= len(text):
                top = stack[-1] if stack else None
                return [a for a in stack if a is not None], (text[i:] if top is not None else None)
            literal = text[i:j + 1]
            if stack and stack[-1] is not None:
                value = json.loads(literal)
                if value in stack[-1]:
                    return None
                stack[-1].append(value)
            i = j + 1
            continue
        if byte == 0x5B:
            stack.append([])
        elif byte == 0x7B:
            stack.append(None)
        elif byte in (0x5D, 0x7D) and stack:
            stack.pop()
        i += 1
    return [a for a in stack if a is not None], None


def unique_alive(text: bytes, item_values: Optional[Callable[[], Iterable[str]]]) -> bool:
    """Whether ``text`` holds no repeated array string and its open string item, if any, can
    still become one its array does not hold: always when the items' language is infinite
    (``item_values`` None), else when some value of ``item_values()`` not yet written has a
    spelling that begins with the open item's bytes."""
    found = scan(text)
    if found is None:
        return False
    arrays, open_item = found
    if open_item is None or item_values is None:
        return True
    written = arrays[-1]
    return any(s.startswith(open_item) for v in item_values() if v not in written for s in spellings(v))


def reference_unique_mask(reference: ReferenceRecognizer, vocab: Vocabulary, prefix: bytes,
                          item_values: Optional[Callable[[], Iterable[str]]] = None) -> np.ndarray:
    """The reference mask (``reference_mask``) less the tokens after which ``unique_alive`` fails."""
    mask = reference_mask(reference, vocab, prefix)
    for token in np.flatnonzero(mask).tolist():
        if token in vocab.eos_token_ids:
            continue
        if not unique_alive(prefix + vocab.token_bytes(token), item_values):
            mask[token] = False
    return mask
