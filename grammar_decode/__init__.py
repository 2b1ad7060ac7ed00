"""grammar-decode: JSON Schema, regular expressions and grammars → one grammar engine → exact
token masks.

Lifetimes: ``Vocabulary`` (per model) → ``compile_json_schema`` / ``compile_regex`` /
``compile_grammar`` → ``CompiledGrammar`` (per constraint, shared) → ``grammar.matcher(vocab)``
→ ``Matcher`` (per request).
"""

from .errors import (
    GrammarAdmitsNothing,
    GrammarDecodeError,
    GrammarError,
    GrammarTooLarge,
    RegexTooComplex,
    SchemaError,
    TokenRejected,
    UnsupportedRegexError,
    UnsupportedSchemaError,
    VocabularyError,
)
from .engine.compiled import CompiledGrammar, Matcher
from .frontends.json_schema import compile_json_schema
from .frontends.lark import compile_grammar
from .frontends.regex import compile_regex
from .generation import GenerationResult, apply_mask, generate
from .masking.bitmask import bitmask_words
from .vocab import Vocabulary

__all__ = [
    "CompiledGrammar",
    "GenerationResult",
    "GrammarAdmitsNothing",
    "GrammarDecodeError",
    "GrammarError",
    "GrammarTooLarge",
    "Matcher",
    "RegexTooComplex",
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
