"""JSON Schema → the grammar IR.

Every keyword is either enforced exactly or refused with ``UnsupportedSchemaError`` naming it
and its JSON pointer: a constraint that silently does nothing lets invalid documents through.

What a schema becomes:

* Lexemes: the punctuation ``{ } [ ] , :``, one whitespace lexeme (``[ \\t\\n\\r]{1,max}``, flexible
  mode only, at most one per gap, never before or after the top-level value), the JSON string
  (exact UTF-8, escapes, surrogate pairs only as pairs), integers and numbers (``json_lexemes``),
  ``true``/``false``/``null``, each object key (its spellings as ``json.dumps`` writes them, raw
  UTF-8 and ``\\uXXXX``-escaped) and each ``enum``/``const`` value.
* Rules: one per schema object reached (memoised by identity, so recursive ``$ref`` is a
  recursive rule), with an alternative per admitted type and per ``anyOf`` branch; objects
  emit their keys in ``properties`` order, each optional key emitted or skipped, required keys
  that ``properties`` does not list last, in ``required`` order, with any JSON value; arrays count
  their items with one rule per count for small bounds and O(log bound) rules for large ones.
* Any JSON (``{}``, ``true``, no ``type``): a recursive rule for every JSON value.

A subschema that admits nothing (``false``, an ``enum`` none of whose values pass the sibling
keywords) becomes a rule with no alternatives; the grammar rewrite prunes what can never be
emitted, and only a root that admits nothing is an error.

Scope: ``type`` (a name or a list), ``enum``, ``const``, ``anyOf``, ``$ref`` (within the document:
``#``, ``#/$defs/...``, ``#/definitions/...``, any JSON pointer), ``$defs``/``definitions``,
``allOf`` and ``$ref``/``anyOf`` with sibling keywords (conjunctions merged by ``json_merge``, one
rule per conjunction of document objects, ``anyOf`` distributed over it); strings: ``pattern`` (search semantics on the decoded text, whatever
escapes spell it; accepted only where Python's ``re``, which the ``jsonschema`` validator uses,
and ECMA-262 agree), ``minLength``/``maxLength`` (code points; with ``pattern``, the intersection);
integers: ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum`` (``json_numbers``;
bounds on ``number`` are refused); objects:
``properties``, ``required``, ``additionalProperties`` as a boolean (keys outside ``properties``
are never emitted); arrays: ``items`` (one schema), ``minItems``, ``maxItems``.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Union
from urllib.parse import unquote

from ..errors import GrammarError, SchemaError, UnsupportedRegexError, UnsupportedSchemaError
from ..engine.compiled import CompiledGrammar
from ..engine.recognizer import Recognizer
from ..ir import utf8
from ..ir.grammar import Grammar, Symbol
from .json_formats import FORMATS
from .json_lexemes import INTEGER_DIGITS_MAX, JsonLexemes, json_string_chars
from .json_merge import Conjunction, Part, Patterns, flatten, key_of, merge
from .json_numbers import BOUND_KEYWORDS, bounds, has_bounds, integer_range
from .regex import translate

#: Keywords that annotate but constrain nothing; accepted anywhere.
ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "examples", "default", "$comment",
                         "$defs", "definitions", "deprecated", "readOnly", "writeOnly"})

TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
#: Keywords that constrain one type only (the others pass them by).
_TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "string": frozenset({"pattern", "minLength", "maxLength", "format"}),
    "integer": frozenset(BOUND_KEYWORDS),
    "number": frozenset(BOUND_KEYWORDS),
}
_ALL_TYPE_KEYWORDS = frozenset().union(*_TYPE_KEYWORDS.values())
_KNOWN = ANNOTATIONS | _ALL_TYPE_KEYWORDS | {"type", "enum", "const", "anyOf", "allOf", "$ref"}

#: Every code point a JSON string can hold (surrogates only inside escaped pairs, as one character).
_CODE_POINTS = utf8.complement([utf8.SURROGATES])

#: Largest item bound compiled with one rule per count; larger bounds take O(log bound) rules.
MAX_LINEAR_ITEMS = 64


def pointer_join(parent: str, token: Union[str, int]) -> str:
    text = str(token).replace("~", "~0").replace("/", "~1")
    return f"{parent}/{text}"


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


def _non_negative_int(schema: dict[str, Any], keyword: str, pointer: str) -> int | None:
    if keyword not in schema:
        return None
    value = schema[keyword]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(f"{keyword!r} must be a non-negative integer, got {value!r}", pointer)
    return value


class JsonSchemaCompiler:
    """Builds the grammar of one schema document."""

    def __init__(self, document: Any, max_whitespace: int, capped: bool = True, formats: str = "assert") -> None:
        self.document = document
        self.formats = formats
        self.grammar = Grammar()
        self.lex = JsonLexemes(self.grammar, max_whitespace, capped)
        #: why subschemas admit nothing, first found first: (pointer, message)
        self.empty_reasons: list[tuple[str, str]] = []
        self.spaced = max_whitespace > 0
        self._rules: dict[int, Symbol] = {}
        self._keep: list[Any] = []  # schemas whose ids key _rules stay alive while compiling
        self._any: Symbol | None = None
        self._filter_depth = 0  # enum/const filters compile their siblings; $ref can nest them
        # lexemes narrowed by keywords, by what narrows them: strings (pattern, format, lengths), integers
        self._bounded: dict[tuple[Any, ...], Symbol] = {}
        self._conjunctions: dict[frozenset[tuple[int, frozenset[str]]], Symbol] = {}

    # -- entry ---------------------------------------------------------------------------------

    def compile_root(self) -> Grammar:
        self.grammar.start = self.value(self.document, "")
        return self.grammar

    def value(self, schema: Any, pointer: str) -> Symbol:
        """The rule for the values ``schema`` admits (one rule per schema object)."""
        if isinstance(schema, Conjunction):
            return self._conjunction(flatten(list(schema), self._resolve, pointer), pointer)
        key = id(schema)
        found = self._rules.get(key)
        if found is not None:
            return found
        rule = self.grammar.rule(pointer or "/")
        self._rules[key] = rule
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
        if "allOf" in schema or ("$ref" in schema and any(k != "$ref" and k not in ANNOTATIONS for k in schema)):
            parts = flatten([schema], self._resolve, pointer)
            return [(self._conjunction(parts, pointer),)]
        if "$ref" in schema:
            return [(self.value(self._resolve(schema["$ref"], pointer), pointer_join(pointer, "$ref")),)]
        if "enum" in schema or "const" in schema:
            return self._literals(schema, pointer)
        types = self._types(schema, pointer)
        if "anyOf" in schema:
            branches = schema["anyOf"]
            if not isinstance(branches, list) or not branches:
                raise SchemaError("'anyOf' must be a non-empty array", pointer_join(pointer, "anyOf"))
            if any(k != "anyOf" and k not in ANNOTATIONS for k in schema):
                # A and (B1 or B2) = (A and B1) or (A and B2)
                return [(self._conjunction(flatten([schema], self._resolve, pointer), pointer),)]
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
            string = self._string(schema, pointer)
            return [] if string is None else [(string,)]
        if type_name == "integer":
            integer = self._integer(schema, pointer)
            return [] if integer is None else [(integer,)]
        if type_name == "number":
            if has_bounds(schema):
                keyword = next(k for k in BOUND_KEYWORDS if k in schema and not isinstance(schema[k], bool))
                raise UnsupportedSchemaError(keyword, pointer, "bounds on numbers that may have a fraction or an "
                                                               "exponent (bounds on 'type': 'integer' are supported)")
            return [(lex.number,)]
        if type_name == "boolean":
            return [(lex.literal(b"true"),), (lex.literal(b"false"),)]
        return [(lex.literal(b"null"),)]

    def _check_keywords(self, schema: dict[str, Any], pointer: str) -> None:
        for keyword in schema:
            if keyword not in _KNOWN:
                raise UnsupportedSchemaError(keyword, pointer)
        if "$id" in schema and schema is not self.document:
            raise UnsupportedSchemaError("$id", pointer, "embedded schema resources (a nested $id changes "
                                                        "what references inside it resolve to)")
        if "$ref" in schema:
            if not isinstance(schema["$ref"], str):
                raise SchemaError("'$ref' must be a string", pointer_join(pointer, "$ref"))
        self._types(schema, pointer)
        _non_negative_int(schema, "minItems", pointer)
        _non_negative_int(schema, "maxItems", pointer)
        _non_negative_int(schema, "minLength", pointer)
        bounds(schema, pointer)
        _non_negative_int(schema, "maxLength", pointer)
        if "enum" in schema and not isinstance(schema["enum"], list):
            raise SchemaError("'enum' must be an array", pointer_join(pointer, "enum"))
        self._required(schema, pointer)
        if not isinstance(schema.get("additionalProperties", True), bool):
            raise UnsupportedSchemaError("additionalProperties", pointer, "only boolean values are supported")
        if not isinstance(schema.get("properties", {}), dict):
            raise SchemaError("'properties' must be an object", pointer_join(pointer, "properties"))
        if "pattern" in schema and not isinstance(schema["pattern"], (str, Patterns)):
            raise SchemaError("'pattern' must be a string", pointer_join(pointer, "pattern"))
        if isinstance(schema.get("items"), list):
            raise UnsupportedSchemaError("items", pointer, "array form of 'items' (use prefixItems)")
        for keyword in ("$defs", "definitions"):
            if keyword in schema and not isinstance(schema[keyword], dict):
                raise SchemaError(f"'{keyword}' must be an object", pointer_join(pointer, keyword))

    def _types(self, schema: dict[str, Any], pointer: str) -> list[str] | None:
        if "type" not in schema:
            return None
        value = schema["type"]
        names = value if isinstance(value, list) else [value]
        if not names:
            raise SchemaError("'type' must not be an empty array", pointer_join(pointer, "type"))
        for name in names:
            if not isinstance(name, str) or name not in TYPES:
                raise SchemaError(f"unknown type {name!r}", pointer_join(pointer, "type"))
        if len(set(names)) != len(names):
            raise SchemaError("'type' lists a type twice", pointer_join(pointer, "type"))
        # integer ⊂ number: listing both adds nothing but ambiguity
        return [n for n in names if not (n == "integer" and "number" in names)]

    def _required(self, schema: dict[str, Any], pointer: str) -> list[str]:
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
            raise SchemaError("'required' must be an array of strings", pointer_join(pointer, "required"))
        if len(set(required)) != len(required):
            raise SchemaError("'required' has duplicate keys", pointer_join(pointer, "required"))
        return required

    def _resolve(self, ref: str, pointer: str) -> Any:
        where = pointer_join(pointer, "$ref")
        if not ref.startswith("#"):
            raise UnsupportedSchemaError("$ref", pointer, f"only references within the document ('#...'), not {ref!r}")
        fragment = ref[1:]
        if fragment and not fragment.startswith("/"):
            raise UnsupportedSchemaError("$ref", pointer, f"anchors ({ref!r}) are not supported")
        target = self.document
        for token in fragment.split("/")[1:] if fragment else []:
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise SchemaError(f"'$ref' {ref!r} points at nothing", where)
        return target

    def _string(self, schema: dict[str, Any], pointer: str) -> Symbol | None:
        """The string lexeme for ``pattern``, ``format``, ``minLength`` and ``maxLength`` together
        (their intersection; None when no string passes the lengths)."""
        pattern = schema.get("pattern")
        fmt = schema.get("format") if self.formats == "assert" else None
        low = _non_negative_int(schema, "minLength", pointer) or 0
        high = _non_negative_int(schema, "maxLength", pointer)
        if high is not None and high < low:
            self.empty_reasons.append((pointer, f"minLength {low} > maxLength {high}"))
            return None
        if pattern is None and fmt is None and low == 0 and high is None:
            return self.lex.string
        key = ("string", pattern, fmt, low, high)
        found = self._bounded.get(key)
        if found is not None:
            return found
        exprs = self.grammar.exprs
        bodies = []
        for one in (pattern if isinstance(pattern, Patterns) else () if pattern is None else (pattern,)):
            bodies.append(self._pattern_body(one, pointer))
        if fmt is not None:
            if not isinstance(fmt, str):
                raise SchemaError("'format' must be a string", pointer_join(pointer, "format"))
            if fmt not in FORMATS:
                raise UnsupportedSchemaError("format", pointer, f"format {fmt!r} (supported: {', '.join(FORMATS)}; "
                                                                "or compile with formats='annotation')")
            bodies.append(translate(exprs, FORMATS[fmt], encode=json_string_chars))
        if low or high is not None:
            # lengths count code points of the decoded text: one JSON-encoded character each
            bodies.append(exprs.repeat(json_string_chars(exprs, _CODE_POINTS), low, high))
        body = bodies[0] if len(bodies) == 1 else exprs.both(*bodies)
        quote = exprs.literal(b'"')
        name = " ".join(f"{k}={v!r}" for k, v in zip(("pattern", "format", "minLength", "maxLength"), key[1:])
                        if v is not None and not (k == "minLength" and v == 0))
        found = self._bounded[key] = self.grammar.lexeme(exprs.concat(quote, body, quote), f"string {name}")
        return found

    def _integer(self, schema: dict[str, Any], pointer: str) -> Symbol | None:
        """The integer lexeme within the bound keywords (None when no integer is within them)."""
        if not has_bounds(schema):
            return self.lex.integer
        low, high = bounds(schema, pointer)
        key = ("integer", low, high)
        found = self._bounded.get(key)
        if found is not None:
            return found
        expr = integer_range(self.grammar.exprs, low, high, INTEGER_DIGITS_MAX if self.lex.capped else None)
        if expr is None:
            self.empty_reasons.append((pointer, f"no integer lies between the bounds ({low} > {high})"))
            return None
        found = self._bounded[key] = self.grammar.lexeme(expr, f"integer [{low}, {high}]")
        return found

    def _pattern_body(self, pattern: str, pointer: str) -> int:
        """The JSON-encoded texts (no quotes) whose decoded text ``pattern`` matches with search
        semantics, whatever escapes spell it. The text must match under both Python's ``re``
        (what the ``jsonschema`` validator uses) and ECMA-262 (what the specification says): see
        ``translate``."""
        try:
            return translate(self.grammar.exprs, pattern, search=True, encode=json_string_chars, ecmascript=True)
        except UnsupportedRegexError as exc:
            raise UnsupportedSchemaError("pattern", pointer, f"{exc.construct} in {pattern!r}") from exc
        except GrammarError as exc:
            # ECMA-262 syntax that Python's parser does not know (\p{...}, named groups (?<n>...))
            # is refused, not called invalid
            raise UnsupportedSchemaError("pattern", pointer, f"syntax Python's re does not read: {exc}") from exc

    # -- conjunctions (allOf, $ref with siblings, anyOf with siblings) --------------------------

    def _conjunction(self, parts: "list[Part] | bool", pointer: str) -> Symbol:
        """The rule for the conjunction of ``parts`` (``json_merge``), memoised by the document
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
        rule = self._conjunctions[key] = self.grammar.rule(f"{pointer or '/'} allOf")
        self.grammar.define(rule, self._conjunction_alternatives(parts, pointer))
        return rule

    def _conjunction_alternatives(self, parts: list[Part], pointer: str) -> list[tuple[Symbol, ...]]:
        holders = [p for p in parts if "anyOf" in p.schema and "anyOf" not in p.without]
        if len(holders) > 1:
            raise UnsupportedSchemaError("allOf", pointer, "more than one conjunct has 'anyOf' (the product is not "
                                                           "built)")
        if holders:
            holder = holders[0]
            branches = holder.schema["anyOf"]
            if not isinstance(branches, list) or not branches:
                raise SchemaError("'anyOf' must be a non-empty array", pointer_join(pointer, "anyOf"))
            others = [p if p is not holder else Part(p.schema, p.without | {"anyOf"}) for p in parts]
            out = []
            for i, branch in enumerate(branches):
                where = pointer_join(pointer_join(pointer, "anyOf"), i)
                extra = flatten([branch], self._resolve, where)
                if extra is False:
                    continue
                out.append((self._conjunction(others + ([] if extra is True else extra), where),))
            return out
        merged = merge(parts, pointer)
        if merged is False:
            self.empty_reasons.append((pointer, "the allOf branches admit nothing in common"))
            return []
        return self._alternatives(merged, pointer)

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
        g, lex = self.grammar, self.lex
        properties: dict[str, Any] = schema.get("properties", {})
        required = self._required(schema, pointer)
        additional = schema.get("additionalProperties", True)
        keys: list[tuple[str, bool, Symbol]] = []  # (key, required, value rule)
        props_pointer = pointer_join(pointer, "properties")
        for key, sub in properties.items():
            if sub is False and key not in required:
                continue  # may never be emitted
            keys.append((key, key in required, self.value(sub, pointer_join(props_pointer, key))))
        for key in required:
            if key not in properties:
                if additional is False:
                    raise SchemaError(f"required key {key!r} is forbidden by additionalProperties: false", pointer)
                keys.append((key, True, self.any_value()))
        n = len(keys)
        members = [lex.seq(lex.key(k), lex.ws, lex.colon, lex.ws, value) for k, _req, value in keys]
        # first[i]: the first emitted key is at index >= i; rest[i]: some key emitted, keys >= i remain
        first = [g.rule(f"{pointer or '/'} keys>={i}") for i in range(n)]
        rest = [g.rule(f"{pointer or '/'} more>={i}") for i in range(n + 1)]
        g.define(rest[n], [lex.seq(lex.ws, lex.close_brace)])
        for i in range(n - 1, -1, -1):
            _key, is_required, _value = keys[i]
            g.define(rest[i], [lex.seq(lex.ws, lex.comma, lex.ws, *members[i], rest[i + 1])])
            g.define(first[i], [(*members[i], rest[i + 1])])
            if not is_required:
                g.define(rest[i], [(rest[i + 1],)])
                if i + 1 < n:
                    g.define(first[i], [(first[i + 1],)])
        obj = g.rule(f"{pointer or '/'} object")
        alternatives = []
        if all(not req for _k, req, _v in keys):
            alternatives.append(lex.seq(lex.open_brace, lex.ws, lex.close_brace))
        if n:
            alternatives.append(lex.seq(lex.open_brace, lex.ws, first[0]))
        g.define(obj, alternatives)
        return obj

    # -- arrays --------------------------------------------------------------------------------

    def _array(self, schema: dict[str, Any], pointer: str) -> list[tuple[Symbol, ...]]:
        g, lex = self.grammar, self.lex
        low = _non_negative_int(schema, "minItems", pointer) or 0
        high = _non_negative_int(schema, "maxItems", pointer)
        if high is not None and high < low:
            raise SchemaError(f"minItems {low} exceeds maxItems {high}", pointer)
        items = schema.get("items", True)
        empty = lex.seq(lex.open_bracket, lex.ws, lex.close_bracket)
        if items is False or high == 0:
            return [empty] if low == 0 else []
        item = self.value(items, pointer_join(pointer, "items"))
        if max(low, high or 0) > MAX_LINEAR_ITEMS:
            return self._counted_array(item, low, high, pointer, empty)
        # after[k]: k items written (k >= 1); counts past max(low, 1) collapse when unbounded
        last = high if high is not None else max(low, 1)
        after = [g.rule(f"{pointer or '/'} items={k}") for k in range(last + 1)]
        for k in range(1, last + 1):
            alternatives = []
            if k >= low:
                alternatives.append(lex.seq(lex.ws, lex.close_bracket))
            if high is None and k == last:
                alternatives.append(lex.seq(lex.ws, lex.comma, lex.ws, item, after[k]))
            elif high is None or k < high:
                alternatives.append(lex.seq(lex.ws, lex.comma, lex.ws, item, after[k + 1]))
            g.define(after[k], alternatives)
        out = [lex.seq(lex.open_bracket, lex.ws, item, after[1])]
        if low == 0:
            out.append(empty)
        return out

    def _counted_array(self, item: Symbol, low: int, high: int | None, pointer: str,
                       empty: tuple[Symbol, ...]) -> list[tuple[Symbol, ...]]:
        """Item counts with O(log bound) rules, unambiguously: ``exactly(n)`` is ``n`` times
        ", item" (by halving), ``up_to(n)`` is 1..``n`` times (the first half, or the whole first
        half and then part of the second), so a bound of 10^8 is a few dozen rules and every count
        has exactly one parse."""
        g, lex = self.grammar, self.lex
        name = pointer or "/"
        one = lex.seq(lex.ws, lex.comma, lex.ws, item)
        exact: dict[int, Symbol] = {}
        upto: dict[int, Symbol] = {}

        def exactly(n: int) -> Symbol:
            found = exact.get(n)
            if found is None:
                found = exact[n] = g.rule(f"{name} (,item)x{n}")
                if n == 1:
                    g.define(found, [one])
                elif n % 2 == 0:
                    g.define(found, [(exactly(n // 2), exactly(n // 2))])
                else:
                    g.define(found, [(exactly(n - 1), exactly(1))])
            return found

        def up_to(n: int) -> Symbol:
            found = upto.get(n)
            if found is None:
                found = upto[n] = g.rule(f"{name} (,item)x1..{n}")
                if n == 1:
                    g.define(found, [(exactly(1),)])
                elif n % 2 == 0:
                    g.define(found, [(up_to(n // 2),), (exactly(n // 2), up_to(n // 2))])
                else:
                    g.define(found, [(up_to(n - 1),), (exactly(n - 1), exactly(1))])
            return found

        close = lex.seq(lex.ws, lex.close_bracket)
        head = lex.seq(lex.open_bracket, lex.ws, item) + ((exactly(low - 1),) if low > 1 else ())
        tail = g.rule(f"{name} more items")
        if high is None:
            g.define(tail, [close, one + (tail,)])
        else:
            spare = high - max(low, 1)
            g.define(tail, [close] + ([(up_to(spare),) + close] if spare > 0 else []))
        return [head + (tail,)] + ([empty] if low == 0 else [])

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
        constrained = any(k not in ANNOTATIONS for k in siblings)
        judge = self._sibling_judge(siblings, pointer) if constrained else None
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

    def _sibling_judge(self, siblings: dict[str, Any], pointer: str) -> Callable[[bytes], bool]:
        if self._filter_depth >= 8:
            raise UnsupportedSchemaError("enum", pointer, "enum/const filters nested too deeply through $ref")
        sub = JsonSchemaCompiler(self.document, self.lex.max_whitespace, capped=False, formats=self.formats)
        sub._filter_depth = self._filter_depth + 1
        sub.grammar.start = sub.value(siblings, pointer)
        try:
            recognizer = Recognizer(sub.grammar)
        except GrammarError:  # the siblings admit nothing
            return lambda text: False
        return recognizer.accepts


WHITESPACE_MODES = ("compact", "flexible")

#: Default longest whitespace run between two JSON tokens in ``flexible`` mode: long enough for
#: ``json.dumps`` separators and a newline plus a short indent, short enough that a model cannot
#: spend its token budget on blank space.
DEFAULT_MAX_WHITESPACE = 4


def parse_schema(schema: Union[dict[str, Any], bool, str, bytes]) -> Any:
    """Accept a schema as a Python value or as JSON text."""
    if isinstance(schema, (str, bytes, bytearray)):
        try:
            return json.loads(schema)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise SchemaError(f"schema is not valid JSON: {exc}") from exc
    return schema


def compile_json_schema(schema: Union[dict[str, Any], bool, str, bytes], *, whitespace: str = "flexible",
                        max_whitespace: int = DEFAULT_MAX_WHITESPACE, formats: str = "assert") -> CompiledGrammar:
    """Compile a JSON Schema (a dict, a boolean, or JSON text) into a grammar.

    Args:
        whitespace: ``"flexible"`` allows JSON whitespace between tokens, at most
            ``max_whitespace`` bytes per gap (so ``json.dumps``'s ``", "`` and ``": "`` pass);
            ``"compact"`` allows none. Never whitespace before or after the top-level value.
        max_whitespace: longest whitespace run in flexible mode (>= 1).
        formats: ``"assert"`` (default) enforces ``format`` exactly for the formats in
            ``json_formats.FORMATS`` and refuses the others; ``"annotation"`` ignores ``format``,
            as the specification allows (generated strings then need not pass a format checker).

    Raises:
        UnsupportedSchemaError: a keyword that cannot be enforced (names keyword and pointer).
        SchemaError: an invalid schema, or one that admits no document.
    """
    if whitespace not in WHITESPACE_MODES:
        raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, got {whitespace!r}")
    if isinstance(max_whitespace, bool) or not isinstance(max_whitespace, int) or max_whitespace < 1:
        raise ValueError(f"max_whitespace must be a positive integer, got {max_whitespace!r}")
    if formats not in ("assert", "annotation"):
        raise ValueError(f"formats must be 'assert' or 'annotation', got {formats!r}")
    document = parse_schema(schema)
    compiler = JsonSchemaCompiler(document, max_whitespace if whitespace == "flexible" else 0, formats=formats)
    try:
        grammar = compiler.compile_root()
        compiled = CompiledGrammar(grammar, "JSON Schema")
    except RecursionError as exc:
        raise SchemaError("the schema is nested too deeply") from exc
    except GrammarError as exc:
        if "admits no text" in str(exc):
            if compiler.empty_reasons:
                where, why = compiler.empty_reasons[0]
                raise SchemaError(f"the schema admits no document: {why}", where) from exc
            raise SchemaError("the schema admits no document") from exc
        raise
    return compiled
