"""llama.cpp vocabularies: the token table of a loaded ``llama_cpp.Llama``, read through its C API."""

from __future__ import annotations

import ctypes
from typing import Any

from ..errors import VocabularyError
from .table import TokenTable


def token_table_from_llama(llama: Any) -> TokenTable:
    """The vocabulary of a loaded model, asked of llama.cpp itself, id by id: the bytes it renders
    for the token (``llama_token_to_piece`` without special rendering), end-of-generation ids
    (``llama_vocab_is_eog``) as EOS, and control, unknown and unused ids as special. So the mask
    agrees with what llama.cpp prints and where it stops. O(V) calls, ~0.5 s for 262k tokens."""
    import llama_cpp  # an optional dependency: imported when a llama.cpp model is at hand

    model_vocab = llama_cpp.llama_model_get_vocab(llama.model)
    size = llama_cpp.llama_vocab_n_tokens(model_vocab)
    if size != llama.n_vocab():
        raise VocabularyError(f"llama.cpp lists {size} tokens but the model has {llama.n_vocab()} logits")
    buffer = ctypes.create_string_buffer(4096)
    never = (llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_UNKNOWN
             | llama_cpp.LLAMA_TOKEN_ATTR_UNUSED)
    tokens: list[bytes] = []
    eos: list[int] = []
    special: list[int] = []
    for token_id in range(size):
        length = llama_cpp.llama_token_to_piece(model_vocab, token_id, buffer, len(buffer), 0, False)
        if length < 0:
            raise VocabularyError(f"token {token_id} renders to more than {len(buffer)} bytes")
        tokens.append(buffer.raw[:length])
        if llama_cpp.llama_vocab_is_eog(model_vocab, token_id):
            eos.append(token_id)
            special.append(token_id)
        elif llama_cpp.llama_vocab_get_attr(model_vocab, token_id) & never:
            special.append(token_id)
    return TokenTable(tokens, eos, special)
