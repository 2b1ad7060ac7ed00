"""grammar-decode: JSON Schema, regular expressions and grammars → one grammar engine → exact
token masks.

Lifetimes: ``Vocabulary`` (per model) → ``compile_json_schema`` / ``compile_regex`` /
``compile_grammar`` → ``CompiledGrammar`` (per constraint, shared; ``GrammarCache`` keeps them for
a server) → ``grammar.matcher(vocab)`` → ``Matcher`` (per request).
"""

from .cache import GrammarCache
from .compile import compile_grammar, compile_json_schema, compile_regex, compile_triggered
from .errors import (
    CompileTimeout,
    GrammarAdmitsNothing,
    GrammarDecodeError,
    GrammarError,
    GrammarTooLarge,
    RegexTooComplex,
    SchemaError,
    SchemaWarning,
    TokenRejected,
    UnsupportedRegexError,
    UnsupportedSchemaError,
    VocabularyError,
)
from .generation import GenerationResult, apply_mask, generate
from .grammar import CompiledGrammar
from .limits import Limits
from .masking.bitmask import bitmask_words
from .matcher import Matcher, fill_bitmasks
from .vocab import Vocabulary

__all__ = [
    "CompileTimeout",
    "CompiledGrammar",
    "GenerationResult",
    "GrammarAdmitsNothing",
    "GrammarCache",
    "GrammarDecodeError",
    "GrammarError",
    "GrammarTooLarge",
    "Limits",
    "Matcher",
    "RegexTooComplex",
    "SchemaError",
    "SchemaWarning",
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
    "compile_triggered",
    "fill_bitmasks",
    "generate",
]
__version__ = "0.1.0"
