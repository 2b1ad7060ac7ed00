"""JSON Schema → the grammar IR (``schema_grammar``); the layers are listed in ``keywords``."""

from .compiler import (DEFAULT_MAX_DEPTH, DEFAULT_MAX_WHITESPACE, WHITESPACE_MODES, Acceptor, SchemaGrammar,
                       json_text, parse_schema, schema_grammar)
from .drafts import DRAFTS, VALIDATOR_NAMES

__all__ = ["Acceptor", "DEFAULT_MAX_DEPTH", "DEFAULT_MAX_WHITESPACE", "DRAFTS", "SchemaGrammar", "VALIDATOR_NAMES",
           "WHITESPACE_MODES", "json_text", "parse_schema", "schema_grammar"]
