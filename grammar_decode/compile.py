"""The compile step: a constraint (JSON Schema, regular expression, Lark grammar) through its front
end into grammar IR, then into the public ``CompiledGrammar``, under one ``Limits``.

Front ends build IR only and know nothing of the engine; what they need of it (the JSON Schema
front end filters ``enum`` values through the engine's recognizer) is passed in from here.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Union

from .engine.recognizer import Recognizer
from .errors import GrammarAdmitsNothing, SchemaError
from .frontends.json_schema import DEFAULT_MAX_DEPTH, DEFAULT_MAX_WHITESPACE, parse_schema, schema_grammar
from .frontends.lark import lark_grammar
from .frontends.regex import regex_grammar
from .gcpause import collection_paused
from .grammar import CompiledGrammar
from .ir.compose import after_trigger
from .ir.grammar import Grammar
from .limits import DEFAULT_LIMITS, Limits, applied


def _acceptor(grammar: Grammar) -> Callable[[bytes], bool]:
    return Recognizer(grammar).accepts


def compile_json_schema(schema: Union[dict[str, Any], bool, str, bytes, Any], *, whitespace: str = "flexible",
                        max_whitespace: int = DEFAULT_MAX_WHITESPACE, formats: str = "assert",
                        extra_keys: str = "schema", property_order: str = "schema",
                        draft: str | None = None, max_depth: int = DEFAULT_MAX_DEPTH,
                        unknown_keywords: str = "ignore", resources: Mapping[str, Any] | None = None,
                        base_uri: str = "", limits: Limits = DEFAULT_LIMITS) -> CompiledGrammar:
    """Compile a JSON Schema (a dict, a boolean, JSON text, or a pydantic model class or
    ``TypeAdapter``, whose ``model_json_schema()``/``json_schema()`` is compiled) into a grammar.

    Args:
        whitespace: ``"flexible"`` allows JSON whitespace between tokens, at most
            ``max_whitespace`` bytes per gap (so ``json.dumps``'s ``", "`` and ``": "`` pass);
            ``"compact"`` allows none. Never whitespace before or after the top-level value.
        max_whitespace: longest whitespace run in flexible mode (>= 1).
        formats: ``"assert"`` (default) enforces ``format`` exactly for the formats in
            ``frontends.json_schema.formats.FORMATS`` and refuses the others; ``"annotation"``
            ignores ``format``, as the specification allows (generated strings then need not pass
            a format checker).
        extra_keys: ``"schema"`` (default) admits keys outside ``properties`` as the schema says:
            an absent ``additionalProperties`` admits any such key with any value, as the
            specification says; ``"forbid"`` reads an absent ``additionalProperties`` as
            ``false``, so generated objects hold only the keys the schema names (or its
            ``patternProperties`` match), as generation-oriented users usually want.
        property_order: ``"schema"`` (default) writes named keys in one fixed order
            (``properties`` order, then other named keys), other keys after them; ``"any"``
            accepts named and other keys in any order, each named key at most once, required
            ones before ``}`` (a state per set of named keys written: at most
            ``Limits.any_order_keys`` named keys per object, else refused).
        draft: ``"4"``, ``"6"``, ``"7"``, ``"2019-09"`` or ``"2020-12"``: read the schema as
            that draft's validator does (drafts 4-7 ignore the keywords beside ``$ref``; draft 4
            spells ``$id`` as ``id``). None (default): the draft the root ``$schema`` names, else
            a reading every draft agrees with (``frontends.json_schema.drafts``).
        max_depth: deepest nesting of arrays and objects a document may reach (default 128), so
            that every document admitted is one ``json.loads`` reads (it recurses once per level,
            up to Python's recursion limit). Enforced exactly: no deeper document is accepted, and
            no prefix is admitted whose every completion would go deeper. A schema whose documents
            all nest deeper admits none. (Part of the constraint, so not among the ``Limits``.)
        unknown_keywords: ``"ignore"`` (default) reads a keyword no supported draft defines as
            the annotation every validator reads it as: it constrains nothing. One that looks like
            a misspelling of a draft keyword (``anyof``, ``additionalPropeties``) also warns
            (``SchemaWarning``). ``"error"`` refuses every such keyword
            (``UnsupportedSchemaError``). Draft 3's ``divisibleBy``, ``disallow`` and ``extends``
            are refused either way.
        resources: other schema documents that ``$ref`` may point at, by URI (``{"https://
            example.com/defs.json": {...}}``). A reference is resolved against the base URI of
            the schema that holds it (the ``$id``s around it) and the document at the result
            (fragment removed) is looked up here; each is read when first referenced, under the
            document's draft (one declaring another draft is refused). Keys are absolute URIs,
            or relative ones for references from a document without ``$id``. Nothing is ever
            fetched: a reference to a document neither here nor embedded is refused
            (``UnsupportedSchemaError`` naming the URI). The mapping is read, never changed.
        base_uri: the URI the schema itself was retrieved from (default none): relative
            references resolve against it where the document declares no ``$id`` (or, under
            drafts 4-7, where an ``$id`` stands beside the root ``$ref``, which those drafts
            ignore); a root ``$id`` resolves against it and overrides it.
        limits: caps on compile time and size (``Limits``).

    Warns:
        SchemaWarning: an ignored unknown keyword that looks like a misspelled draft keyword.

    Raises:
        UnsupportedSchemaError: a keyword that cannot be enforced (names keyword and pointer).
        SchemaError: an invalid schema, or one that admits no document.
        RegexTooComplex: string constraints whose combination is too complex to decide here.
        GrammarTooLarge: a grammar past ``Limits.grammar_size``.
        CompileTimeout: compiling ran past ``Limits.compile_seconds``.
        ValueError: an option outside its documented values.
        TypeError: ``resources`` that is not a mapping of URI strings to schemas.
    """
    with applied(limits, timed=True), collection_paused():
        ir = schema_grammar(parse_schema(schema), _acceptor, whitespace=whitespace, max_whitespace=max_whitespace,
                            formats=formats, extra_keys=extra_keys, property_order=property_order, draft=draft,
                            max_depth=max_depth, unknown_keywords=unknown_keywords, resources=resources,
                            base_uri=base_uri)
        try:
            return CompiledGrammar(ir.grammar, "JSON Schema", limits=limits)
        except GrammarAdmitsNothing as exc:
            raise ir.admits_nothing(exc) from exc
        except RecursionError as exc:
            raise SchemaError("the schema is nested too deeply") from exc


def compile_regex(pattern: str, flags: int = 0, *, limits: Limits = DEFAULT_LIMITS) -> CompiledGrammar:
    """Compile a Python regular expression: the texts the grammar accepts are exactly the UTF-8
    encodings of the strings ``re.fullmatch(pattern, s, flags)`` matches.

    Raises:
        GrammarError: invalid syntax; ``GrammarAdmitsNothing`` for a pattern that matches nothing;
            ``RegexTooComplex``, ``GrammarTooLarge``, ``CompileTimeout`` past the ``limits``.
        UnsupportedRegexError: lookaround, backreferences, word boundaries, possessive repeats,
            atomic groups, local case-insensitive groups, or an anchor away from the text's ends.
        TypeError: ``pattern`` is not a str.
    """
    with applied(limits, timed=True), collection_paused():
        return CompiledGrammar(regex_grammar(pattern, flags), f"regex {pattern!r}", limits=limits)


def compile_grammar(text: str, start: str = "start", *, limits: Limits = DEFAULT_LIMITS) -> CompiledGrammar:
    """Compile a Lark grammar; the constraint is its rule ``start``.

    Raises:
        GrammarError: invalid grammar text, a terminal or rule that is referenced but never
            defined (``%declare``), a grammar that admits no text; ``RegexTooComplex``,
            ``GrammarTooLarge``, ``CompileTimeout`` past the ``limits``.
        UnsupportedRegexError: a terminal uses a regex construct the engine refuses.
        TypeError: ``text`` is not a str.
    """
    with applied(limits, timed=True), collection_paused():
        return CompiledGrammar(lark_grammar(text, start), f"lark grammar (start {start!r})", limits=limits)


def compile_triggered(constraint: CompiledGrammar, trigger: str, *, required: bool = False, end: str = "",
                      free_text: bool = True, limits: Limits | None = None) -> CompiledGrammar:
    """Free text until ``trigger``, then ``constraint``: the texts are free text in which
    ``trigger`` does not occur (none when ``required``), or such free text, ``trigger``, a text
    of ``constraint`` and ``end``. The split is exact: the constraint starts right after the
    first occurrence of the trigger (``ir/compose.py``).

    For a tool call a model may or may not make (``compile_triggered(call, "<tool_call>",
    end="</tool_call>")``) and an answer after a reasoning block (``compile_triggered(answer,
    "</think>", required=True)``). With ``required``, the shortest text is ``trigger``, the
    constraint's shortest text and ``end``, as ``min_completion_tokens`` counts, and the closing
    budget forces them when the tokens left run short.

    Args:
        free_text: False leaves the free part out: the texts are ``trigger``, a text of
            ``constraint`` and ``end`` (a tool call that must come at once).
        limits: caps of the new compile (default: ``constraint``'s).

    Raises:
        ValueError: an empty ``trigger``; ``TypeError`` for a ``constraint`` that is not a
            ``CompiledGrammar`` or texts that are not str.
        GrammarTooLarge, CompileTimeout: past the ``limits``.
    """
    if not isinstance(constraint, CompiledGrammar):
        raise TypeError(f"constraint must be a CompiledGrammar, not {type(constraint).__name__}")
    if not isinstance(trigger, str) or not isinstance(end, str):
        raise TypeError("trigger and end are str")
    limits = constraint.limits if limits is None else limits
    with applied(limits, timed=True), collection_paused():
        grammar = after_trigger(constraint.ir, trigger.encode("utf-8"), required=required, end=end.encode("utf-8"),
                                free_text=free_text)
        what = "no free text" if not free_text else "required" if required else "optional"
        return CompiledGrammar(grammar, f"free text, then {trigger!r} ({what}) and {constraint.description}",
                               limits=limits)
