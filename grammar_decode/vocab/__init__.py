"""Vocabularies: token id → exact bytes, for one model, and the structures derived from them alone
(the token trie). Loaders for GGUF files, Hugging Face tokenizers, tiktoken encodings and loaded
llama.cpp models each produce a ``TokenTable``; ``Vocabulary.from_*`` builds the vocabulary.
Nothing here knows of grammars or JSON."""

from .table import TokenTable
from .trie import TokenTrie
from .vocabulary import Vocabulary

__all__ = ["TokenTable", "TokenTrie", "Vocabulary"]
