"""What every vocabulary loader returns: the exact bytes of each token id, and which ids end
generation or are never allowed. ``Vocabulary`` is built from one; the loaders (GGUF, Hugging Face,
tiktoken, llama.cpp) know nothing of ``Vocabulary`` itself."""

from __future__ import annotations

from typing import NamedTuple


class TokenTable(NamedTuple):
    """A loader's result: ``tokens[i]`` is the bytes id ``i`` decodes to."""

    tokens: list[bytes]
    eos_token_ids: list[int]
    special_token_ids: list[int]
