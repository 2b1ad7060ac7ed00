"""grammar-decode: JSON Schema → byte-level automaton → exact token masks.

Lifetimes: ``Vocabulary`` (per model) → ``compile_json_schema`` → ``CompiledGrammar`` (per schema,
shared) → ``grammar.matcher(vocab)`` → ``Matcher`` (per request).
"""

from .errors import (
    GrammarDecodeError,
    GrammarError,
    SchemaError,
    TokenRejected,
    UnsupportedRegexError,
    UnsupportedSchemaError,
    VocabularyError,
)
from .frontends.lark import compile_grammar
from .frontends.regex import compile_regex
from .generate import GenerationResult, apply_mask, generate
from .grammar import CompiledGrammar, Matcher, compile_json_schema
from .mask import bitmask_words
from .vocab import Vocabulary

__all__ = [
    "CompiledGrammar",
    "GenerationResult",
    "GrammarDecodeError",
    "GrammarError",
    "Matcher",
    "SchemaError",
    "TokenRejected",
    "UnsupportedRegexError",
    "UnsupportedSchemaError",
    "Vocabulary",
    "VocabularyError",
    "apply_mask",
    "bitmask_words",
    "compile_grammar",
    "compile_json_schema",
    "compile_regex",
    "generate",
]
__version__ = "0.1.0"
