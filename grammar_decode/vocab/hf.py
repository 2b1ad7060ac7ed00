"""Hugging Face tokenizers as vocabularies, exact to the byte.

Works from the backend's own serialisation (``tokenizer.json``: model type, added tokens, decoder)
rather than from names: a token's bytes are what the tokenizer's decoder makes of that token on its
own, replayed here per token:

* byte-level BPE (GPT-2, Llama-3, Qwen): decoder ``ByteLevel`` maps each character through the
  inverse GPT-2 bytes↔unicode table; a token with a character outside the table (an added token
  such as ``"<|im_start|>"`` written with a plain space) is kept as its UTF-8 text, as the decoder
  does;
* SentencePiece style (Llama-2, Gemma, Phi-3): decoders ``Replace("▁", " ")`` / ``Metaspace`` turn
  ``▁`` into a space and ``ByteFallback`` turns ``<0xNN>`` into the byte ``NN``.

Decoder steps that act on the whole decoded text rather than on each token (``Strip`` after
``Fuse``: Llama-2's "drop the leading space of the text"; ``Metaspace`` dropping ``▁`` in the
first token) are not part of any token's bytes: they only change the first characters of a
decoded *sequence*, never what a generated token appends. Decoders that are not byte-exact
(``WordPiece``, ``BPEDecoder``, ``CTC``, regex replacements, no decoder at all) raise
``VocabularyError``.

Special ids: added tokens flagged ``special``, the tokenizer's ``all_special_ids``, the model's
unknown token, and ids no token is defined for (gaps). Added tokens *not* flagged special (e.g.
Gemma's ``"\\n"``, ``"\\n\\n"``, HTML tags) are ordinary text, exactly as the tokenizer produces
them for ordinary input.

Imports ``tokenizers`` only (never at ``grammar_decode`` import time); ``transformers`` objects are
used through their attributes.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable, Union

from ..errors import VocabularyError
from .table import TokenTable
from .token_text import END_OF_GENERATION_TEXTS, gpt2_unicode_to_bytes

_Piece = Union[str, bytes]
_Step = Callable[[_Piece], _Piece]

# tokenizers' ByteFallback: a token of exactly 6 characters "<0x" + 2 + ">" whose middle parses as a
# base-16 u8 (Rust's from_str_radix, which also takes a leading '+').
_BYTE_PIECE = re.compile(r"<0x(\+?[0-9A-Fa-f]{1,2})>")


def token_table_from_hf(tokenizer: Any, eos_token_ids: Union[int, Iterable[int], None] = None
                        ) -> TokenTable:
    """The token table of a ``transformers`` fast tokenizer or a raw
    ``tokenizers.Tokenizer``, for ``Vocabulary.from_hf``.

    Args:
        tokenizer: a ``transformers`` tokenizer backed by ``tokenizers`` (it has
            ``backend_tokenizer``), or a ``tokenizers.Tokenizer``.
        eos_token_ids: extra EOS ids, e.g. a generation config's ``eos_token_id`` (an int or a
            list). EOS = ``tokenizer.eos_token_id`` (when the tokenizer has one), the added
            tokens named like an end of turn (``token_text.END_OF_GENERATION_TEXTS``, as llama.cpp
            does), plus these.

    The vocabulary spans every id the tokenizer defines (model vocabulary and added tokens). Logits
    wider than that (padding columns) are masked by the masker. O(vocabulary size).

    Raises:
        VocabularyError: not a fast tokenizer, or a model/decoder that is not byte-exact.
    """
    backend = _backend(tokenizer)
    spec = json.loads(backend.to_str())
    model = spec.get("model") or {}
    pieces, special = _model_pieces(model)
    for added in spec.get("added_tokens") or []:
        token_id = int(added["id"])
        pieces[token_id] = added["content"]
        if added.get("special"):
            special.add(token_id)
        else:
            special.discard(token_id)  # an added non-special token overrides a model entry
    for token_id in getattr(tokenizer, "all_special_ids", None) or []:
        if token_id is not None and token_id >= 0:
            special.add(int(token_id))

    size = max(pieces) + 1 if pieces else 0
    size = max(size, _declared_size(tokenizer))
    if size == 0:
        raise VocabularyError("the tokenizer defines no tokens")
    decode_piece = _piece_decoder(spec.get("decoder"), model)
    tokens: list[bytes] = []
    for token_id in range(size):
        piece = pieces.get(token_id)
        if piece is None:
            tokens.append(b"")
            special.add(token_id)
        else:
            tokens.append(decode_piece(piece))

    # as llama.cpp: a token spelled like an end of turn ends generation whatever its type
    end_of_generation = {i for i, text in enumerate(tokens) if text in END_OF_GENERATION_TEXTS}
    eos: set[int] = set(end_of_generation)
    special |= end_of_generation
    own = getattr(tokenizer, "eos_token_id", None)
    if isinstance(own, int) and own >= 0:
        eos.add(own)
    if eos_token_ids is not None:
        eos.update([int(eos_token_ids)] if isinstance(eos_token_ids, int) else (int(i) for i in eos_token_ids))
    return TokenTable(tokens, sorted(eos), sorted(i for i in special if 0 <= i < size))


# -- the backend --------------------------------------------------------------------------------


def _backend(tokenizer: Any) -> Any:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return backend
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - transformers fast tokenizers need it
        raise VocabularyError("Vocabulary.from_hf needs the `tokenizers` package") from exc
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    raise VocabularyError(
        f"{type(tokenizer).__name__} is not backed by `tokenizers` (no backend_tokenizer); load it with "
        "use_fast=True or pass a tokenizers.Tokenizer")


def _declared_size(tokenizer: Any) -> int:
    """``len(tokenizer)`` for transformers tokenizers (model vocabulary + added tokens)."""
    if hasattr(tokenizer, "backend_tokenizer"):
        try:
            return int(len(tokenizer))
        except TypeError:  # pragma: no cover - every transformers tokenizer has a length
            return 0
    return 0


def _model_pieces(model: dict[str, Any]) -> tuple[dict[int, str], set[int]]:
    """Token id → piece text from the model, and the model's own special ids (its unknown
    token)."""
    kind = model.get("type")
    special: set[int] = set()
    if kind in ("BPE", "WordLevel"):
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise VocabularyError(
                f"{kind} model with a subword prefix/suffix: decoding is not byte-exact")
        pieces = {int(i): piece for piece, i in model["vocab"].items()}
        unk = model.get("unk_token")
        if unk is not None and unk in model["vocab"]:
            special.add(int(model["vocab"][unk]))
    elif kind == "Unigram":
        pieces = {i: entry[0] for i, entry in enumerate(model["vocab"])}
        unk_id = model.get("unk_id")
        if unk_id is not None:
            special.add(int(unk_id))
    else:
        raise VocabularyError(f"tokenizer model type {kind!r} is not supported (byte-exact decoding needs "
                              "BPE, Unigram or WordLevel with a byte-level or SentencePiece decoder)")
    return pieces, special


# -- the decoder, replayed per token ------------------------------------------------------------


def _piece_decoder(decoder: dict[str, Any] | None, model: dict[str, Any]) -> Callable[[str], bytes]:
    """A function piece text → exact bytes, following the tokenizer's decoder chain."""
    if decoder is None:
        raise VocabularyError("the tokenizer has no decoder (tokens would be joined with spaces): not byte-exact")
    steps: list[_Step] = []
    fused = False
    for step in _flatten(decoder):
        kind = step.get("type")
        if kind == "ByteLevel":
            steps.append(_byte_level_step())
        elif kind == "ByteFallback":
            steps.append(_byte_fallback)
        elif kind == "Fuse":
            fused = True  # later steps see the whole text, not one token
        elif kind == "Replace":
            pattern = step.get("pattern") or {}
            if "String" not in pattern:
                raise VocabularyError(f"decoder Replace with a regex pattern {pattern!r} is not supported")
            old, new = pattern["String"], step.get("content", "")
            if fused and len(old) != 1:
                raise VocabularyError("decoder Replace of a multi-character string across fused tokens")
            steps.append(_replace_step(old, new))
        elif kind == "Strip":
            if not fused:  # per token: strip up to `start` leading and `stop` trailing characters
                steps.append(_strip_step(step.get("content", " "), int(step.get("start", 0)),
                                         int(step.get("stop", 0))))
            # after Fuse it trims the start/end of the whole decoded text only
        elif kind == "Metaspace":
            # every replacement character is a space, except in the first token of a sequence
            # (a sequence-level artifact that never changes what a generated token appends)
            steps.append(_replace_step(step.get("replacement", "\u2581"), " "))
        else:
            raise VocabularyError(f"decoder {kind!r} is not byte-exact; unsupported")

    def decode_piece(piece: str) -> bytes:
        value: _Piece = piece
        for apply in steps:
            value = apply(value)
        return value.encode("utf-8") if isinstance(value, str) else value

    return decode_piece


def _flatten(decoder: dict[str, Any]) -> list[dict[str, Any]]:
    if decoder.get("type") == "Sequence":
        return [leaf for inner in decoder.get("decoders", []) for leaf in _flatten(inner)]
    return [decoder]


def _byte_level_step() -> _Step:
    table = gpt2_unicode_to_bytes()

    def step(value: _Piece) -> _Piece:
        if isinstance(value, bytes):
            return value
        try:
            return bytes(table[ch] for ch in value)
        except KeyError:
            return value.encode("utf-8")  # as tokenizers does: such a token is kept as text

    return step


def _byte_fallback(value: _Piece) -> _Piece:
    if isinstance(value, str) and len(value) == 6:
        match = _BYTE_PIECE.fullmatch(value)
        if match is not None:
            return bytes([int(match.group(1), 16)])
    return value


def _replace_step(old: str, new: str) -> _Step:
    old_b, new_b = old.encode("utf-8"), new.encode("utf-8")

    def step(value: _Piece) -> _Piece:
        return value.replace(old, new) if isinstance(value, str) else value.replace(old_b, new_b)

    return step


def _strip_step(content: str, start: int, stop: int) -> _Step:
    def step(value: _Piece) -> _Piece:
        ch: Any = content if isinstance(value, str) else content.encode("utf-8")
        for _ in range(start):
            if value.startswith(ch):
                value = value[len(ch):]
        for _ in range(stop):
            if value.endswith(ch):
                value = value[: len(value) - len(ch)]
        return value

    return step
