"""Lark grammars → the grammar IR.

The text is read by Lark's own grammar loader (``lark`` is an optional dependency:
``pip install 'grammar-decode[lark]'``), which expands EBNF (``?``, ``*``, ``+``, ``[...]``,
templates, ``%import``) into plain rules and gives every terminal as a Python regular expression
or a literal string. Terminals become lexemes through the regex front end (so they follow
``re.fullmatch`` exactly, flags ``i``, ``s``, ``m``, ``x`` included); rules become IR rules one for
one; ``%ignore`` terminals may stand between any two lexemes. Lark's ``common.ESCAPED_STRING``
(written with a lookbehind) is replaced by its lookaround-free equivalent.

Lexing differs from Lark's own lexers in one documented way: a lexeme ends by maximal munch, and
when one text matches several terminals the parser keeps every reading (no terminal priorities).
Every text this accepts is therefore accepted by Lark's Earley parser with ``lexer="dynamic"``,
the judge in the tests.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import GrammarError, UnsupportedRegexError
from ..ir.grammar import Grammar
from .regex import translate

_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "m": re.MULTILINE, "x": re.VERBOSE, "u": re.UNICODE}

#: Lark's ``common.ESCAPED_STRING`` is written with a lazy quantifier and a lookbehind, relying on
#: the lexer taking the shortest match: a quoted line whose closing quote is not escaped. The same
#: language without lookaround: characters but quote, backslash and newline, or a backslash and
#: any character but a newline.
_EQUIVALENTS = {r'".*?(?<!\\)(\\\\)*?"': r'"(?:[^"\\\n]|\\.)*"'}


def _load(text: str, start: str) -> tuple[list[Any], list[Any], list[str]]:
    try:
        from lark.exceptions import LarkError
        from lark.load_grammar import GrammarBuilder
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("compile_grammar needs the lark package: pip install 'grammar-decode[lark]'") from exc
    try:
        builder = GrammarBuilder()
        builder.load_grammar(text, "<grammar>")
        return builder.build().compile([start], set())
    except LarkError as exc:
        raise GrammarError(f"invalid Lark grammar: {exc}".strip()) from exc
    except (KeyError, AssertionError, ValueError, RecursionError) as exc:
        raise GrammarError(f"invalid Lark grammar: {type(exc).__name__}: {exc}") from exc


def _flags(pattern: Any, name: str) -> int:
    flags = 0
    for flag in pattern.flags:
        if flag not in _FLAGS:
            raise GrammarError(f"terminal {name}: the regex flag {flag!r} is not supported")
        flags |= _FLAGS[flag]
    return flags


def lark_grammar(text: str, start: str = "start") -> Grammar:
    """The grammar IR of a Lark grammar, started at rule ``start`` (raises what
    ``compile_grammar`` documents)."""
    if not isinstance(text, str):
        raise TypeError(f"a grammar is a str, not {type(text).__name__}")
    terminals, rules, ignore = _load(text, start)
    grammar = Grammar()
    exprs = grammar.exprs
    symbols: dict[str, int] = {}
    expressions: dict[str, int] = {}
    for terminal in terminals:
        pattern = terminal.pattern
        flags = _flags(pattern, terminal.name)
        source = pattern.value if type(pattern).__name__ == "PatternRE" else re.escape(pattern.value)
        source = _EQUIVALENTS.get(source, source)
        try:
            expr = translate(exprs, source, flags)
        except UnsupportedRegexError as exc:
            raise UnsupportedRegexError(exc.construct, source, f"in terminal {terminal.name}") from exc
        expressions[terminal.name] = expr
        symbols[terminal.name] = grammar.token(expr, terminal.name)
    for name in ignore:
        if name not in expressions:
            raise GrammarError(f"%ignore names {name}, which is not a terminal")
        expr = expressions[name]
        non_empty = exprs.without_empty(expr)
        if not exprs.is_empty(non_empty):
            grammar.ignore(non_empty, name)
    for rule in rules:
        if rule.origin.name not in symbols:
            symbols[rule.origin.name] = grammar.rule(rule.origin.name)
    for rule in rules:
        body = []
        for symbol in rule.expansion:
            if symbol.name not in symbols:
                what = "terminal" if symbol.is_term else "rule"
                raise GrammarError(f"the {what} {symbol.name} is used but never defined (%declare is not supported)")
            body.append(symbols[symbol.name])
        grammar.define(symbols[rule.origin.name], [body])
    if start not in symbols:
        raise GrammarError(f"the grammar has no rule {start!r}")
    grammar.start = symbols[start]
    return grammar
