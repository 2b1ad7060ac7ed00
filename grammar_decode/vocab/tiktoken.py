"""tiktoken encodings as vocabularies."""

from __future__ import annotations

from typing import Any

from .table import TokenTable


def token_table_from_tiktoken(encoding: Any, eos_token_ids: list[int] | None = None
                              ) -> TokenTable:
    """The token table of a ``tiktoken.Encoding``, for
    ``Vocabulary.from_tiktoken``: ordinary ids decode to their exact bytes;
    named special tokens and ids the encoding does not define (gaps below ``n_vocab``) are special.
    EOS defaults to the encoding's ``eot_token``. O(n_vocab)."""
    special = {encoding.encode_single_token(name) for name in encoding.special_tokens_set}
    tokens: list[bytes] = []
    for token_id in range(encoding.n_vocab):
        if token_id in special:
            tokens.append(encoding.decode_single_token_bytes(token_id))
            continue
        try:
            tokens.append(encoding.decode_single_token_bytes(token_id))
        except KeyError:
            tokens.append(b"")
            special.add(token_id)
    eos = [encoding.eot_token] if eos_token_ids is None else list(eos_token_ids)
    return TokenTable(tokens, eos, sorted(special))
