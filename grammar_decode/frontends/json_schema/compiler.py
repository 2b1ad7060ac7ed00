"""JSON Schema → the grammar IR.

Every keyword is either enforced exactly or refused with ``UnsupportedSchemaError`` naming it
and its JSON pointer: a constraint that silently does nothing lets invalid documents through.

What a schema becomes:

* Lexemes: the punctuation ``{ } [ ] , :``, one whitespace lexeme (``[ \\t\\n\\r]{1,max}``, flexible
  mode only, at most one per gap, never before or after the top-level value), the JSON string
  (exact UTF-8, escapes, surrogate pairs only as pairs), integers and numbers (``lexemes``),
  ``true``/``false``/``null``, each object key (its spellings as ``json.dumps`` writes them, raw
  UTF-8 and ``\\uXXXX``-escaped) and each ``enum``/``const`` value.
* Rules: one per schema object reached (memoised by identity, so recursive ``$ref`` is a
  recursive rule), with an alternative per admitted type and per ``anyOf`` branch; objects are
  built by ``objects`` (named keys in a fixed order, then any other keys the schema admits),
  arrays by ``arrays`` (positions, counts and ``contains`` as a small automaton).
* Any JSON (``{}``, ``true``, no ``type``): a recursive rule for every JSON value.

A subschema that admits nothing (``false``, an ``enum`` none of whose values pass the sibling
keywords) becomes a rule with no alternatives; the grammar rewrite prunes what can never be
emitted, and only a root that admits nothing is an error.

Scope (the README's "Coverage" lists every keyword with its limits): ``type``, ``enum``,
``const``; ``anyOf``; ``oneOf`` (branches proved disjoint, ``disjoint``, or overlapping ones
conjoined with the complements of the others); ``allOf`` and ``$ref``/``anyOf`` with sibling
keywords (merged by ``merge``, one rule per conjunction of document objects); ``not`` and
``if``/``then``/``else`` (``complement``, ``rewrites``); ``dependentSchemas``;
``unevaluatedProperties``/``unevaluatedItems`` over the schema's own ``$ref`` and ``allOf``;
``$ref`` within the document (``refs``: JSON pointers, ``$id`` base URIs, anchors); strings:
``pattern`` (search semantics on the decoded text, whatever escapes spell it; where it must
match, what both Python's ``re`` and ECMA-262 match; where it must not, what either matches:
``regex.Dialect``), ``minLength``/``maxLength`` (code points; with ``pattern``, the
intersection), ``format`` (``formats``); numbers and integers: the four bounds and
``multipleOf`` (``numbers``, ``number_lexemes``); objects (``objects``): ``properties``,
``required``, ``additionalProperties``, ``patternProperties``, ``propertyNames``,
``minProperties``/``maxProperties``, ``dependentRequired``/``dependencies``; arrays
(``arrays``): ``items``, ``prefixItems``, ``additionalItems``, ``minItems``/``maxItems``,
``contains`` with ``minContains``/``maxContains``, ``uniqueItems`` (at most one item, or items
from a finite set). Documents nest at most ``max_depth`` levels. Keywords are read under the
draft chosen by ``drafts``; every cap is a ``Limits`` field.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from ...errors import GrammarAdmitsNothing, GrammarError, SchemaError, UnsupportedRegexError, UnsupportedSchemaError
from ...ir import utf8
from ...limits import active, check_deadline
from ...ir.grammar import Grammar, Symbol
from ...ir.regex import ExprSet
from . import a_labels
from .formats import DRAFT_FORMATS, FORMAT_MAX_LENGTH, FORMATS, HOSTNAME_WITH_A_LABELS, NUMBER_FORMATS
from .lexemes import ANY_CODE_POINT, JsonLexemes, json_string_chars
from .arrays import array_alternatives
from .keywords import (ANNOTATIONS, EVALUATES_NOTHING, NOT_INTEGRAL, NOT_PATTERNS, NOT_STRINGS, SIDES, TYPES,
                       UNEVALUATED_ITEMS, UNEVALUATED_PROPERTIES, MemoResolve, non_negative_int, pointer_join)
from .content import ContentIds
from .merge import Conjunction, Part, Patterns, flatten, key_of, merge
from .number_lexemes import NumberLexemes
from .numbers import BOUND_KEYWORDS, bounds
from .objects import object_rule
from .disjoint import disjoint
from .drafts import choose_draft
from .refs import RefIndex, resource_table
from .rewrites import Rewriter, declared_types
from ..regex import Dialect, translate

#: Keywords that constrain one type only (the others pass them by).
_TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "object": frozenset({"properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                         "minProperties", "maxProperties", "dependentRequired", "dependencies", SIDES}),
    "array": frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains", "minContains",
                        "maxContains", "uniqueItems"}),
    "string": frozenset({"pattern", "minLength", "maxLength", "format"}),
    "integer": frozenset(BOUND_KEYWORDS) | {"multipleOf"},
    "number": frozenset(BOUND_KEYWORDS) | {"multipleOf"},
}
_ALL_TYPE_KEYWORDS = frozenset().union(*_TYPE_KEYWORDS.values())
_KNOWN = ANNOTATIONS | _ALL_TYPE_KEYWORDS | {"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "not",
                                             "dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "if",
                                             "then", "else", NOT_STRINGS, NOT_PATTERNS, NOT_INTEGRAL,
                                             EVALUATES_NOTHING}

#: Why a draft keyword the compiler does not build is refused.
_REFUSED = {
    "contentMediaType": "draft 7 lets a validator assert it, and it is not enforced here (from 2019-09 on it is an "
                        "annotation: name that draft to read it so)",
    "contentEncoding": "draft 7 lets a validator assert it, and it is not enforced here (from 2019-09 on it is an "
                       "annotation: name that draft to read it so)",
}

#: Disjointness proofs one compile may spend pruning the products of distributed ``allOf``s
#: (15-40 µs each; memoised per pair of schema objects): past it the ``allOf`` is refused rather
#: than compiled slowly.
_PRODUCT_PROOFS = 10_000

#: Keywords ``merge`` cannot combine across the parts of a conjunction: where two parts hold one,
#: those parts are rewritten into ``anyOf``/``allOf`` first (``_rewrite_clashes``).
_CLASHING = ("if", "oneOf", "not", "dependentSchemas", "dependencies")


def json_text(value: Any, separators: tuple[str, str] = (",", ":"), ensure_ascii: bool = False) -> bytes:
    """JSON text of ``value`` as UTF-8 (compact, raw UTF-8 by default); ``SchemaError`` for values
    JSON cannot write (NaN, lone surrogates, non-string keys, non-JSON types)."""
    if not _is_json(value):
        raise SchemaError(f"a {type(value).__name__} value is not JSON")
    try:
        return json.dumps(value, ensure_ascii=ensure_ascii, separators=separators, allow_nan=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError) as exc:
        raise SchemaError(f"a {type(value).__name__} value cannot be written as JSON text: {exc}") from exc


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _type_judge(types: list[str]) -> Callable[[bytes], bool]:
    """Whether a literal's spelling is one the value lexemes of ``types`` write: its JSON type
    (``1.0`` is no integer spelling: an integer is written without a fraction). What the grammar
    of a sibling ``type`` alone would accept, without compiling one."""
    def judge(spelling: bytes) -> bool:
        value = json.loads(spelling)
        for name in types:
            if name == "null" and value is None or name == "boolean" and isinstance(value, bool) \
                    or name == "string" and isinstance(value, str) or name == "array" and isinstance(value, list) \
                    or name == "object" and isinstance(value, dict):
                return True
            if name in ("integer", "number") and isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and (name == "number" or isinstance(value, int)):
                return True
        return False
    return judge


def _has_object(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(_has_object(v) for v in value)


def literal_spellings(value: Any, spaced: bool) -> list[bytes]:
    """The spellings of a JSON value: compact, raw UTF-8 and ``ensure_ascii``; with ``spaced``,
    also ``json.dumps``'s ``", "``/``": "`` separators."""
    out: list[bytes] = []
    separators = [(",", ":")] + ([(", ", ": ")] if spaced else [])
    for ascii_only in (False, True):
        for pair in separators:
            text = json_text(value, pair, ascii_only)
            if text not in out:
                out.append(text)
    return out


#: ``acceptor(grammar)``: a membership test for the texts of an IR grammar (raises
#: ``GrammarAdmitsNothing`` when it admits none). The front end builds IR only; the layer that
#: owns the engine passes one in, and enum/const values are filtered through it.
Acceptor = Callable[[Grammar], Callable[[bytes], bool]]


class JsonSchemaCompiler:
    """Builds the grammar of one schema document."""

    def __init__(self, document: Any, max_whitespace: int, acceptor: Acceptor, capped: bool = True,
                 formats: str = "assert", extra_keys: str = "schema", refs: RefIndex | None = None,
                 property_order: str = "schema", draft: str | None = None,
                 unknown_keywords: str = "ignore", resources: Mapping[str, Any] | None = None,
                 base_uri: str = "") -> None:
        self.document = document
        self.acceptor = acceptor
        self.refs = refs if refs is not None else RefIndex(document, draft, unknown_keywords,
                                                           number_formats=formats == "assert",
                                                           resources=resource_table(resources), base_uri=base_uri)
        self.formats = formats
        #: "schema": keys outside ``properties`` as ``additionalProperties`` says (absent: any);
        #: "forbid": an absent ``additionalProperties`` forbids them
        self.extra_keys = extra_keys
        #: "schema": named keys in a fixed order; "any": in any order, each at most once
        self.property_order = property_order
        self.grammar = Grammar()
        self.lex = JsonLexemes(self.grammar, max_whitespace, capped)
        #: why subschemas admit nothing, first found first: (pointer, message)
        self.empty_reasons: list[tuple[str, str]] = []
        #: the shortest key of each key region before named keys are taken out (``objects``)
        self.region_witnesses: dict[int, object] = {}
        #: whether a key region is empty, by (region, region before named keys, witness core)
        self.empty_regions: dict[tuple[int, int, bytes], bool] = {}
        self.spaced = max_whitespace > 0
        self._rules: dict[int, Symbol] = {}
        self._keep: list[Any] = []  # schemas whose ids key _rules stay alive while compiling
        self._any: Symbol | None = None
        self._filter_depth = 0  # enum/const filters compile their siblings; $ref can nest them
        # string lexemes narrowed by keywords, by what narrows them (pattern, format, lengths)
        self._bounded: dict[tuple[Any, ...], Symbol] = {}
        self.numbers = NumberLexemes(self.grammar, self.lex, self.empty_reasons)
        self._conjunctions: dict[frozenset[tuple[int, frozenset[str]]], Symbol] = {}
        # the same conjunctions by content: parts built while compiling (merged, rewritten) are new
        # objects each time, and real schemas build the same ones many times over
        self._content = ContentIds(self.refs.context_of)
        self._conjunctions_by_content: dict[frozenset[tuple[int, frozenset[str]]], Symbol] = {}
        self._rules_by_content: dict[int, Symbol] = {}
        self._judges: dict[tuple[int, bool], Callable[[bytes], bool]] = {}  # enum filters, by siblings' content
        self._part_views: dict[tuple[int, frozenset[str]], dict[str, Any]] = {}
        # schemas repeat the same patterns and character classes across many objects: each one
        # is translated once per grammar
        self._patterns: dict[tuple[str, str], int] = {}
        self._string_chars: dict[tuple[tuple[int, int], ...], int] = {}
        self._proofs: dict[tuple[int, int], bool] = {}  # disjointness proved, per pair of schema objects
        #: ``refs.resolve``, with the memo of merged views the proofs share (``disjoint.view``)
        self.resolve = MemoResolve(self.refs.resolve)
        self.rewriter = Rewriter(self.refs, self.resolve, self._keep)

    # -- entry ---------------------------------------------------------------------------------

    def compile_root(self) -> Grammar:
        self.grammar.start = self.value(self.refs.view(self.document), "")
        return self.grammar

    def retain(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``schema``, kept alive until compiling ends: a schema object built while compiling
        (rules are memoised by the ids of schema objects, which must not be reused meanwhile)."""
        self._keep.append(schema)
        return schema

    def value(self, schema: Any, pointer: str) -> Symbol:
        """The rule for the values ``schema`` admits (one rule per schema object)."""
        check_deadline()
        if isinstance(schema, Conjunction):
            return self._conjunction(flatten(list(schema), self.resolve, pointer), pointer)
        key = id(schema)
        found = self._rules.get(key)
        if found is not None:
            return found
        content = self._content.schema(schema)
        if content is not None:
            found = self._rules_by_content.get(content)
            if found is not None:
                if isinstance(schema, dict):
                    self._check_keywords(schema, pointer)  # its twin's errors may lie in annotations
                self._rules[key] = found
                self._keep.append(schema)
                return found
        rule = self.grammar.rule(pointer or "/")
        self._rules[key] = rule
        if content is not None:
            self._rules_by_content[content] = rule
        self._keep.append(schema)
        self.grammar.define(rule, self._alternatives(schema, pointer))
        return rule

    # -- schema objects ------------------------------------------------------------------------

    def _alternatives(self, schema: Any, pointer: str) -> list[tuple[Symbol, ...]]:
        if schema is True:
            return [(self.any_value(),)]
        if schema is False:
            return []
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", pointer)
        self._check_keywords(schema, pointer)
        positive = self.rewriter.positive(schema, pointer)
        if positive is None:
            self.empty_reasons.append((pointer_join(pointer, "not"), "'not' excludes every value"))
            return []
        schema = positive
        if "allOf" in schema or ("$ref" in schema and any(k != "$ref" and k not in ANNOTATIONS for k in schema)) \
                or UNEVALUATED_PROPERTIES in schema or UNEVALUATED_ITEMS in schema:
            parts = flatten([schema], self.resolve, pointer)
            return [(self._conjunction(parts, pointer),)]
        if "$ref" in schema:
            return [(self.value(self.resolve(schema, pointer), pointer_join(pointer, "$ref")),)]
        if "enum" in schema or "const" in schema:
            return self._literals(schema, pointer)
        types = declared_types(schema, pointer)
        if "anyOf" in schema:
            branches = schema["anyOf"]
            if not isinstance(branches, list) or not branches:
                raise SchemaError("'anyOf' must be a non-empty array", pointer_join(pointer, "anyOf"))
            if any(k != "anyOf" and k not in ANNOTATIONS for k in schema):
                # A and (B1 or B2) = (A and B1) or (A and B2)
                return [(self._conjunction(flatten([schema], self.resolve, pointer), pointer),)]
            return [(self.value(branch, pointer_join(pointer_join(pointer, "anyOf"), i)),)
                    for i, branch in enumerate(branches)]
        if types is None:
            if any(k in schema for k in _ALL_TYPE_KEYWORDS):
                types = list(TYPES)  # keywords apply to their own type; every type is allowed
            else:
                return [(self.any_value(),)]
        out = []
        for type_name in types:
            out.extend(self._typed(schema, type_name, pointer))
        return out

    def _typed(self, schema: dict[str, Any], type_name: str, pointer: str) -> list[tuple[Symbol, ...]]:
        lex = self.lex
        if type_name == "object":
            return [(self._object(schema, pointer),)]
        if type_name == "array":
            return self._array(schema, pointer)
        if type_name == "string":
            string = self.string_lexeme(schema, pointer)
            return [] if string is None else [(string,)]
        if type_name == "integer":
            integer = self.numbers.integer(schema, pointer)
            return [] if integer is None else [(integer,)]
        if type_name == "number":
            number = self.numbers.number(schema, pointer)
            return [] if number is None else [(number,)]
        if type_name == "boolean":
            return [(lex.literal(b"true"),), (lex.literal(b"false"),)]
        return [(lex.literal(b"null"),)]

    def _check_keywords(self, schema: dict[str, Any], pointer: str) -> None:
        for keyword in schema:
            if keyword not in _KNOWN:
                raise UnsupportedSchemaError(keyword, pointer, _REFUSED.get(keyword, ""))
        if "$ref" in schema:
            if not isinstance(schema["$ref"], str):
                raise SchemaError("'$ref' must be a string", pointer_join(pointer, "$ref"))
        declared_types(schema, pointer)
        non_negative_int(schema, "minItems", pointer)
        non_negative_int(schema, "maxItems", pointer)
        non_negative_int(schema, "minLength", pointer)
        bounds(schema, pointer)
        non_negative_int(schema, "maxLength", pointer)
        if "enum" in schema and not isinstance(schema["enum"], list):
            raise SchemaError("'enum' must be an array", pointer_join(pointer, "enum"))
        self._required(schema, pointer)
        for keyword in ("properties", "patternProperties"):
            if not isinstance(schema.get(keyword, {}), dict):
                raise SchemaError(f"'{keyword}' must be an object", pointer_join(pointer, keyword))
        if "pattern" in schema and not isinstance(schema["pattern"], (str, Patterns)):
            raise SchemaError("'pattern' must be a string", pointer_join(pointer, "pattern"))
        if not isinstance(schema.get("uniqueItems", False), bool):
            raise SchemaError("'uniqueItems' must be a boolean", pointer_join(pointer, "uniqueItems"))
        for keyword in ("$defs", "definitions"):
            if keyword in schema and not isinstance(schema[keyword], dict):
                raise SchemaError(f"'{keyword}' must be an object", pointer_join(pointer, keyword))

    def _required(self, schema: dict[str, Any], pointer: str) -> list[str]:
        required = schema.get("required", [])
        if isinstance(required, bool):
            raise UnsupportedSchemaError("required", pointer, "a boolean 'required' is draft 3's (draft 3 is not "
                                                              "supported; later drafts list the required keys in "
                                                              "the parent object's 'required')")
        if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
            raise SchemaError("'required' must be an array of strings", pointer_join(pointer, "required"))
        if len(set(required)) != len(required):
            raise SchemaError("'required' has duplicate keys", pointer_join(pointer, "required"))
        return required

    def _string_format(self, schema: dict[str, Any], pointer: str) -> str | None:
        """The format ``schema`` asserts on strings, None when none (``formats``: a format no draft
        defines is an annotation, OpenAPI's ``byte`` excepted; a draft format with no expression
        is refused)."""
        if self.formats != "assert" or "format" not in schema:
            return None
        fmt = schema["format"]
        if not isinstance(fmt, str):
            raise SchemaError("'format' must be a string", pointer_join(pointer, "format"))
        if fmt in FORMATS:
            return fmt
        if fmt in DRAFT_FORMATS:
            raise UnsupportedSchemaError("format", pointer, f"format {fmt!r} (supported: {', '.join(FORMATS)}; "
                                                            "or compile with formats='annotation', "
                                                            "on the command line --formats annotation)")
        if self.refs.known.strict and fmt not in NUMBER_FORMATS:
            raise UnsupportedSchemaError("format", pointer, f"format {fmt!r}: no supported draft defines it (an "
                                                            "annotation to validators; refused under "
                                                            "unknown_keywords='error')")
        return None

    def string_lexeme(self, schema: dict[str, Any], pointer: str) -> Symbol | None:
        """The string lexeme for ``pattern``, ``format``, ``minLength`` and ``maxLength`` together
        (their intersection; None when no string passes the lengths)."""
        pattern = schema.get("pattern")
        fmt = self._string_format(schema, pointer)
        low = non_negative_int(schema, "minLength", pointer) or 0
        high = non_negative_int(schema, "maxLength", pointer)
        if high is not None and high < low:
            self.empty_reasons.append((pointer, f"minLength {low} > maxLength {high}"))
            return None
        excluded = tuple(schema.get(NOT_STRINGS, ()))
        unmatched = tuple(schema.get(NOT_PATTERNS, ()))
        if pattern is None and fmt is None and low == 0 and high is None and not excluded and not unmatched:
            return self.lex.string
        key = ("string", pattern, fmt, low, high, excluded, unmatched)
        found = self._bounded.get(key)
        if found is not None:
            return found
        name = " ".join(f"{k}={v!r}" for k, v in zip(("pattern", "format", "minLength", "maxLength", "not", "not"),
                                                      key[1:]) if v and not (k == "minLength" and v == 0))
        expr = self._string_expr(pattern, None if fmt is None else FORMATS[fmt], fmt, low, high, excluded,
                                 unmatched, pointer)
        if fmt == "hostname" and a_labels.available():
            # A-labels admitted by the expression, checked by the guard as the lexer reads them;
            # the expression without them stays for lexemes built from this one (keys)
            guarded = self._string_expr(pattern, HOSTNAME_WITH_A_LABELS, fmt, low, high, excluded, unmatched, pointer)
            found = self.grammar.lexeme(guarded, f"string {name}", distinct=True)
            self.grammar.guards[found] = a_labels.A_LABELS
            self.grammar.unguarded[found] = expr
        else:
            found = self.grammar.lexeme(expr, f"string {name}")
        self._bounded[key] = found
        return found

    def _string_expr(self, pattern: Any, fmt_regex: str | None, fmt: str | None, low: int, high: int | None,
                     excluded: tuple[Any, ...], unmatched: tuple[Any, ...], pointer: str) -> int:
        """The expression of a JSON string (quotes included) under these keywords (``fmt_regex``
        the format's expression over characters)."""
        exprs = self.grammar.exprs
        bodies = []
        for one in (pattern if isinstance(pattern, Patterns) else () if pattern is None else (pattern,)):
            bodies.append(self.pattern_body(one, pointer))
        if fmt_regex is not None:
            bodies.append(translate(exprs, fmt_regex, encode=self.string_chars))
            if fmt in FORMAT_MAX_LENGTH:
                bodies.append(exprs.repeat(json_string_chars(exprs, ANY_CODE_POINT), 0, FORMAT_MAX_LENGTH[fmt]))
        if low or high is not None:
            # lengths count code points of the decoded text: one JSON-encoded character each
            bodies.append(exprs.repeat(json_string_chars(exprs, ANY_CODE_POINT), low, high))
        for one in unmatched:  # strings the pattern does not find (not: {pattern})
            bodies.append(exprs.difference(exprs.star(json_string_chars(exprs, ANY_CODE_POINT)),
                                           self.pattern_body(one, pointer, "either")))
        body = bodies[0] if len(bodies) == 1 else exprs.both(*bodies)
        quote = exprs.literal(b'"')
        expr = exprs.concat(quote, body, quote) if bodies else self.grammar.lexeme_exprs[self.lex.string]
        if excluded:  # not: {enum: [...]} of strings, whatever escapes spell them
            expr = exprs.difference(expr, exprs.alt(*(self.lex.all_spellings(v) for v in excluded)))
        return expr

    def string_chars(self, exprs: ExprSet, ranges: Iterable[tuple[int, int]]) -> int:
        """``json_string_chars`` of these ranges, once per grammar."""
        key = tuple(ranges)
        if exprs is not self.grammar.exprs:
            return json_string_chars(exprs, key)
        found = self._string_chars.get(key)
        if found is None:
            found = self._string_chars[key] = json_string_chars(exprs, key)
        return found

    def pattern_body(self, pattern: str, pointer: str, dialect: Dialect = "both") -> int:
        """The JSON-encoded texts (no quotes) whose decoded text ``pattern`` matches with search
        semantics, whatever escapes spell it. Python's ``re`` (what the ``jsonschema`` validator
        uses) and ECMA-262 (what the specification says) disagree on some characters: with
        ``dialect="both"`` the text must match under both (the reading of a pattern that must
        match), with ``"either"`` under at least one (the reading to subtract where a pattern must
        not match, so what remains matches under neither): see ``translate``."""
        found = self._patterns.get((pattern, dialect))
        if found is not None:
            return found
        try:
            found = translate(self.grammar.exprs, pattern, search=True, encode=self.string_chars, dialect=dialect)
            self._patterns[(pattern, dialect)] = found
            return found
        except UnsupportedRegexError as exc:
            raise UnsupportedSchemaError("pattern", pointer, f"{exc.construct} in {pattern!r}") from exc
        except GrammarError as exc:
            # ECMA-262 syntax that Python's parser does not know (\p{...}, named groups (?<n>...))
            # is refused, not called invalid
            raise UnsupportedSchemaError("pattern", pointer, f"syntax Python's re does not read: {exc}") from exc

    # -- conjunctions (allOf, $ref with siblings, anyOf with siblings) --------------------------

    def _conjunction(self, parts: "list[Part] | bool", pointer: str) -> Symbol:
        """The rule for the conjunction of ``parts`` (``merge``), memoised by the document
        objects it is made of, so a conjunction that refers back to itself is a recursive rule."""
        if parts is True:
            return self.any_value()
        if parts is False:
            rule = self.grammar.rule(pointer or "/")
            self.grammar.define(rule, [])
            self.empty_reasons.append((pointer, "an allOf branch is false"))
            return rule
        key = key_of(parts)
        found = self._conjunctions.get(key)
        if found is not None:
            return found
        content = self._content_key(parts)
        if content is not None:
            found = self._conjunctions_by_content.get(content)
            if found is not None:
                self._conjunctions[key] = found
                return found
        rule = self._conjunctions[key] = self.grammar.rule(f"{pointer or '/'} allOf")
        if content is not None:
            self._conjunctions_by_content[content] = rule
        self.grammar.define(rule, self._conjunction_alternatives(parts, pointer))
        return rule

    def _content_key(self, parts: list[Part]) -> frozenset[tuple[int, frozenset[str]]] | None:
        """``key_of(parts)`` by content (``content.ContentIds``): None where a part has none."""
        out = []
        for part in parts:
            found = self._content.part(part.schema, part.without)
            if found is None:
                return None
            out.append((found, part.without))
        return frozenset(out)

    def _conjunction_alternatives(self, parts: list[Part], pointer: str) -> list[tuple[Symbol, ...]]:
        if any(UNEVALUATED_PROPERTIES in p.schema or UNEVALUATED_ITEMS in p.schema for p in parts):
            # a oneOf branch evaluates its keys only where it is the branch taken: distribute over
            # the branches before merge reads what the conjunction evaluates. The part's own
            # keywords are rewritten (its allOf and $ref are parts already), and what the rewrite
            # adds beside them (an allOf of the types no value passes once) becomes parts too
            distributed: list[Part] = []
            for p in parts:
                if "oneOf" not in p.schema or "oneOf" in p.without:
                    distributed.append(p)
                    continue
                flat = flatten([self.rewriter.one_of_as_any_of(self._part_view(p), pointer)], self.resolve, pointer)
                if flat is False:
                    self.empty_reasons.append((pointer, "no value passes exactly one oneOf branch"))
                    return []
                if flat is not True:
                    distributed.extend(flat)
            parts = distributed
        rewritten = self._rewrite_clashes(parts, pointer)
        if rewritten is False:
            self.empty_reasons.append((pointer, "the allOf branches admit nothing in common"))
            return []
        parts = rewritten
        holders = [p for p in parts if "anyOf" in p.schema and "anyOf" not in p.without]
        if holders:
            return self._distributed(parts, holders, pointer)
        merged = merge(parts, pointer)
        if merged is False:
            self.empty_reasons.append((pointer, "the allOf branches admit nothing in common"))
            return []
        return self._alternatives(merged, pointer)

    def _rewrite_clashes(self, parts: list[Part], pointer: str) -> "list[Part] | bool":
        """``parts`` with every part that holds a keyword another part also holds, among those
        ``merge`` cannot combine (``if``, ``oneOf``, ``not``, ``dependentSchemas``), rewritten
        into ``anyOf``/``allOf`` (``Rewriter.positive``) and flattened again; False when one of
        them admits nothing. Parts without such a clash are left for ``merge``, which copies a
        keyword only one part has (it is rewritten where the merged schema is compiled)."""
        clashing = {k for k in _CLASHING if sum(1 for p in parts if k in p.schema and k not in p.without) > 1}
        if not clashing:
            return parts
        out: list[Part] = []
        for part in parts:
            if not any(k in part.schema and k not in part.without for k in clashing):
                out.append(part)
                continue
            positive = self.rewriter.positive(self._part_view(part), pointer)
            if positive is None:
                return False
            flat = flatten([positive], self.resolve, pointer)
            if flat is False:
                return False
            if flat is not True:
                out.extend(flat)
        return out

    def _part_view(self, part: Part) -> dict[str, Any]:
        """The keywords of ``part`` as a schema object of their own (made once per part, kept
        alive, resolving ``$ref`` like the part's schema)."""
        key = (id(part.schema), part.without)
        found = self._part_views.get(key)
        if found is None:
            found = self._part_views[key] = self.retain(dict(part.items()))
            self.refs.alias(found, part.schema)
        return found

    def _beside(self, start: "list[Part] | bool | None", known: frozenset[Any], branch: Any, pointer: str) -> Any:
        """``branch`` merged with the rest of the conjunction (``start``, flattened once for all
        branches; None where that refused; ``known``: its parts' keys): a schema for the proofs,
        False when that admits nothing, None when it does not merge."""
        if start is None:
            return None
        try:
            flat = flatten([branch], self.resolve, pointer)
            if start is False or flat is False:
                return False
            if start is True or flat is True:
                parts = start if flat is True else flat
                return parts if isinstance(parts, bool) else merge(parts, pointer)
            return merge(start + [p for p in flat if (id(p.schema), p.without) not in known], pointer)
        except (UnsupportedSchemaError, SchemaError):
            return None

    def _distributed(self, parts: list[Part], holders: list[Part], pointer: str) -> list[tuple[Symbol, ...]]:
        """A conjunction some of whose parts hold ``anyOf``: A and (B1 or B2) and (C1 or C2) as
        the union of (A and Bi and Cj), one conjunction per choice of a branch in each holder,
        less the choices ``disjoint`` proves empty (``Limits.all_of_terms`` at most)."""
        others = [p if p not in holders else Part(p.schema, p.without | {"anyOf"}) for p in parts]
        choices = []
        for holder in holders:
            branches = holder.schema["anyOf"]
            if not isinstance(branches, list) or not branches:
                raise SchemaError("'anyOf' must be a non-empty array", pointer_join(pointer, "anyOf"))
            choices.append([(i, holder, branch) for i, branch in enumerate(branches)])
        limit = active().all_of_terms
        start = [self._part_view(p) for p in others]
        # per branch, once: proved apart from the rest alone, and merged with it (two branches
        # on a key the rest requires are apart only beside it)
        def proved(one: Any, other: Any) -> bool:
            key = (id(one), id(other))
            found = self._proofs.get(key)
            if found is None:
                if len(self._proofs) >= _PRODUCT_PROOFS:
                    raise UnsupportedSchemaError("allOf", pointer, f"combining the anyOf branches of the allOfs of "
                                                                   f"this schema needs more than {_PRODUCT_PROOFS} "
                                                                   "disjointness proofs")
                if not len(self._proofs) & 255:
                    check_deadline()
                found = self._proofs[key] = disjoint(one, other, self.resolve, pointer)
                self._keep.extend((one, other))  # the ids key the memo: keep the objects alive
            return found

        alone = {id(c[2]): any(proved(s, c[2]) for s in start) for options in choices for c in options}
        try:
            start_parts: "list[Part] | bool | None" = flatten(start, self.resolve, pointer)
        except (UnsupportedSchemaError, SchemaError):
            start_parts = None
        start_keys = key_of(start_parts) if isinstance(start_parts, list) else frozenset()
        merged_with_rest: dict[int, Any] = {}

        def beside(branch: Any) -> Any:  # merged once per branch, and only when asked for
            key = id(branch)
            if key not in merged_with_rest:
                merged_with_rest[key] = self._beside(start_parts, start_keys, branch, pointer)
            return merged_with_rest[key]

        apart: dict[tuple[int, int], bool] = {}

        def disjoint_pair(one: Any, other: Any) -> bool:
            key = (id(one), id(other))
            found = apart.get(key)
            if found is None:
                found = proved(one, other)
                if not found:
                    a, b = beside(one), beside(other)
                    if a is not None and b is not None:
                        found = a is False or b is False or proved(a, b)
                apart[key] = found
            return found

        terms: list[list[tuple[int, Part, Any]]] = [[]]
        for options in choices:
            grown = []
            for term in terms:
                for choice in options:
                    branch = choice[2]
                    if alone[id(branch)] or beside(branch) is False or \
                            any(disjoint_pair(c[2], branch) for c in term):
                        continue  # "type": "string" and "const": 1, say
                    grown.append(term + [choice])
                    if len(grown) > limit:
                        raise UnsupportedSchemaError("allOf", pointer, f"the anyOf branches of its conjuncts combine "
                                                                       f"into more than {limit} conjunctions")
            terms = grown
        out = []
        for term in terms:
            extra: list[Part] = []
            where = pointer
            empty = False
            for i, _holder, branch in term:
                where = pointer_join(pointer_join(pointer, "anyOf"), i)
                flat = flatten([branch], self.resolve, where)
                if flat is False:
                    empty = True
                    break
                if flat is not True:
                    extra.extend(flat)
            if not empty:
                out.append((self._conjunction(others + extra, where),))
        if not out:
            self.empty_reasons.append((pointer, "no choice of one branch from each anyOf of the allOf has an "
                                                "instance in common"))
        return out

    # -- any JSON ------------------------------------------------------------------------------

    def any_value(self) -> Symbol:
        """Every JSON value (keys of any string; numbers as the number lexeme)."""
        if self._any is not None:
            return self._any
        g, lex = self.grammar, self.lex
        value = self._any = g.rule("any")
        members, elements = g.rule("any-members"), g.rule("any-elements")
        g.define(value, [(lex.string,), (lex.number,), (lex.literal(b"true"),), (lex.literal(b"false"),),
                         (lex.literal(b"null"),)])
        obj, arr = g.rule("any-object"), g.rule("any-array")
        g.define(value, [(obj,), (arr,)])
        pair = lex.seq(lex.string, lex.ws, lex.colon, lex.ws, value)
        g.define(obj, [lex.seq(lex.open_brace, lex.ws, lex.close_brace), lex.seq(lex.open_brace, lex.ws, *pair, members)])
        g.define(members, [lex.seq(lex.ws, lex.comma, lex.ws, *pair, members), lex.seq(lex.ws, lex.close_brace)])
        g.define(arr, [lex.seq(lex.open_bracket, lex.ws, lex.close_bracket),
                       lex.seq(lex.open_bracket, lex.ws, value, elements)])
        g.define(elements, [lex.seq(lex.ws, lex.comma, lex.ws, value, elements), lex.seq(lex.ws, lex.close_bracket)])
        return value

    # -- objects -------------------------------------------------------------------------------

    def _object(self, schema: dict[str, Any], pointer: str) -> Symbol:
        return object_rule(self, schema, pointer)

    # -- arrays --------------------------------------------------------------------------------

    def _array(self, schema: dict[str, Any], pointer: str) -> list[tuple[Symbol, ...]]:
        return array_alternatives(self, schema, pointer)

    # -- enum / const --------------------------------------------------------------------------

    def _literals(self, schema: dict[str, Any], pointer: str) -> list[tuple[Symbol, ...]]:
        """The enum/const values the whole schema admits: each value is kept when one of its
        spellings is accepted by the grammar of the sibling keywords (so every sibling applies,
        exactly as this compiler enforces it)."""
        if "const" in schema:
            values, where = [schema["const"]], pointer_join(pointer, "const")
        else:
            values, where = schema["enum"], pointer_join(pointer, "enum")
        siblings = {k: v for k, v in schema.items() if k not in ("enum", "const")}
        if "const" in schema and "enum" in schema:
            siblings["enum"] = schema["enum"]
        self.refs.alias(siblings, schema)
        constrained = any(k not in ANNOTATIONS for k in siblings)
        if constrained and all(k == "type" or k in ANNOTATIONS for k in siblings):
            judge: Callable[[bytes], bool] | None = _type_judge(declared_types(siblings, pointer) or list(TYPES))
        else:
            judge = self._sibling_judge(siblings, pointer, any(_has_object(v) for v in values)) if constrained \
                else None
        out = []
        for value in values:
            try:
                spellings = literal_spellings(value, self.spaced)
            except SchemaError as exc:
                raise SchemaError(str(exc).rsplit(" (at", 1)[0], where) from exc
            kept = [s for s in spellings if judge is None or judge(s)]
            if not kept and isinstance(value, float) and value.is_integer() and abs(value) < 1e300:
                # 1.0 is an integer too: under "type": "integer" it is written without a fraction
                kept = [s for s in literal_spellings(int(value), self.spaced) if judge is None or judge(s)]
            if kept:
                out.append((self.lex.literal_choice(kept),))
        if not out:
            self.empty_reasons.append((where, "no 'enum'/'const' value satisfies the rest of the schema"))
        return out

    def _sibling_judge(self, siblings: dict[str, Any], pointer: str, objects: bool) -> Callable[[bytes], bool]:
        """A membership test for the texts the sibling keywords admit. Where the values hold
        objects, the test reads keys in any order (a value's own key order is not the fixed
        order the grammar writes named keys in), unless that is past ``Limits.any_order_keys``:
        then keys in the grammar's order only, which can reject a value that satisfies the
        siblings, never keep one that does not."""
        if self._filter_depth >= 8:
            raise UnsupportedSchemaError("enum", pointer, "enum/const filters nested too deeply through $ref")
        content = self._content.schema(siblings)
        key = None if content is None else (content, objects)
        found = self._judges.get(key) if key is not None else None
        if found is None:
            found = self._new_sibling_judge(siblings, pointer, objects)
            if key is not None:
                self._judges[key] = found  # schemas repeat one enum's siblings in many places
        return found

    def _new_sibling_judge(self, siblings: dict[str, Any], pointer: str, objects: bool) -> Callable[[bytes], bool]:
        sub = None
        if objects and self.property_order != "any":
            try:
                sub = self._sub_compiler("any", siblings, pointer)
            except UnsupportedSchemaError:
                sub = None
        if sub is None:
            sub = self._sub_compiler(self.property_order, siblings, pointer)
        try:
            return self.acceptor(sub.grammar)
        except GrammarAdmitsNothing:  # the siblings admit nothing
            return lambda text: False

    def _sub_compiler(self, property_order: str, siblings: dict[str, Any], pointer: str) -> "JsonSchemaCompiler":
        sub = JsonSchemaCompiler(self.document, self.lex.max_whitespace, self.acceptor, capped=False,
                                 formats=self.formats, extra_keys=self.extra_keys, refs=self.refs,
                                 property_order=property_order)
        sub._filter_depth = self._filter_depth + 1
        sub.grammar.start = sub.value(siblings, pointer)
        return sub


WHITESPACE_MODES = ("compact", "flexible")

#: Default longest whitespace run between two JSON tokens in ``flexible`` mode: long enough for
#: ``json.dumps`` separators and a newline plus a short indent, short enough that a model cannot
#: spend its token budget on blank space.
DEFAULT_MAX_WHITESPACE = 4
#: Deepest nesting of arrays and objects a document may reach (``json.loads`` recurses once per level).
DEFAULT_MAX_DEPTH = 128


def parse_schema(schema: Any) -> Any:
    """Accept a schema as a Python value, as JSON text, or as an object that writes one: a
    pydantic model class (``model_json_schema()``) or ``TypeAdapter`` (``json_schema()``), read
    by duck typing so pydantic stays optional. O(size)."""
    if isinstance(schema, type) and callable(getattr(schema, "model_json_schema", None)):
        return _written_schema(schema, schema.model_json_schema)
    if not isinstance(schema, (dict, list, str, bytes, bytearray, bool)) and \
            callable(getattr(schema, "json_schema", None)) and hasattr(schema, "validate_python"):
        return _written_schema(schema, schema.json_schema)
    if isinstance(schema, (str, bytes, bytearray)):
        try:
            return json.loads(schema)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SchemaError(f"schema is not valid JSON: {exc}") from exc
        except RecursionError as exc:  # json.loads recurses once per level of nesting
            raise SchemaError("the schema text is nested too deeply to be read") from exc
    return schema


def _written_schema(source: Any, write: Callable[[], Any]) -> Any:
    try:
        return write()
    except Exception as exc:  # pydantic's own errors (a type it cannot describe): typed here
        raise SchemaError(f"{getattr(source, '__name__', type(source).__name__)} cannot write its JSON Schema: "
                          f"{type(exc).__name__}: {exc}") from exc


class SchemaGrammar:
    """A schema's grammar IR, and why it admits nothing when the engine finds it empty."""

    def __init__(self, grammar: Grammar, empty_reasons: list[tuple[str, str]]) -> None:
        self.grammar = grammar
        self.empty_reasons = empty_reasons

    def admits_nothing(self, exc: GrammarAdmitsNothing) -> SchemaError:
        """The ``SchemaError`` to raise when the engine proves the grammar empty."""
        if exc.depth_limit is not None:
            return SchemaError(f"the schema admits no document nested at most {exc.depth_limit} levels deep")
        if self.empty_reasons:
            where, why = self.empty_reasons[0]
            return SchemaError(f"the schema admits no document: {why}", where)
        return SchemaError("the schema admits no document")


def check_options(whitespace: str, max_whitespace: int, formats: str, extra_keys: str, property_order: str,
                  max_depth: int) -> None:
    """``ValueError`` for an option outside its documented values (``compile_json_schema``)."""
    if whitespace not in WHITESPACE_MODES:
        raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, got {whitespace!r}")
    if isinstance(max_whitespace, bool) or not isinstance(max_whitespace, int) or max_whitespace < 1:
        raise ValueError(f"max_whitespace must be a positive integer, got {max_whitespace!r}")
    if formats not in ("assert", "annotation"):
        raise ValueError(f"formats must be 'assert' or 'annotation', got {formats!r}")
    if extra_keys not in ("schema", "forbid"):
        raise ValueError(f"extra_keys must be 'schema' or 'forbid', got {extra_keys!r}")
    if property_order not in ("schema", "any"):
        raise ValueError(f"property_order must be 'schema' or 'any', got {property_order!r}")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise ValueError(f"max_depth must be a positive integer, got {max_depth!r}")


def schema_grammar(document: Any, acceptor: Acceptor, *, whitespace: str = "flexible",
                   max_whitespace: int = DEFAULT_MAX_WHITESPACE, formats: str = "assert",
                   extra_keys: str = "schema", property_order: str = "schema", draft: str | None = None,
                   max_depth: int = DEFAULT_MAX_DEPTH, unknown_keywords: str = "ignore",
                   resources: Mapping[str, Any] | None = None, base_uri: str = "") -> SchemaGrammar:
    """The grammar IR of a parsed schema document (options as ``compile_json_schema`` documents
    them). Raises what ``compile_json_schema`` documents, but for an empty grammar, which only the
    engine can prove (``SchemaGrammar.admits_nothing`` names the reason)."""
    check_options(whitespace, max_whitespace, formats, extra_keys, property_order, max_depth)
    try:
        compiler = JsonSchemaCompiler(document, max_whitespace if whitespace == "flexible" else 0, acceptor,
                                      formats=formats, extra_keys=extra_keys, property_order=property_order,
                                      draft=choose_draft(document, draft), unknown_keywords=unknown_keywords,
                                      resources=resources, base_uri=base_uri)
        compiler.grammar.max_depth = max_depth
        result = SchemaGrammar(compiler.grammar, compiler.empty_reasons)
        try:
            compiler.compile_root()
        except GrammarAdmitsNothing as exc:
            raise result.admits_nothing(exc) from exc
    except RecursionError as exc:
        raise SchemaError("the schema is nested too deeply") from exc
    return result
