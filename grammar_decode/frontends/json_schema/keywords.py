"""What the JSON Schema front end's modules share: the keyword tables, the internal markers, the
``SchemaCompiler`` protocol the IR builders call back through, and the readers of keyword values.

Layers of this package (each module imports only from the layers before it):

1. this module;
2. the document: ``walk`` (schema positions), ``drafts`` (which draft's keywords apply),
   ``refs`` (``$ref`` resolution and the draft view of each schema object);
3. schema algebra on dicts: ``content`` (content ids: which objects mean the same),
   ``numbers`` (bounds and multiples), ``merge`` (conjunctions),
   ``disjoint`` (proofs that schemas share no instance), ``complement`` (``not`` pushed inward),
   ``rewrites`` (``not``, ``if``, ``oneOf``, ``dependentSchemas`` into ``anyOf``/``allOf``);
4. IR builders: ``lexemes`` (JSON's lexemes), ``formats``, ``number_lexemes``, ``objects``,
   ``arrays``;
5. ``compiler``: one rule per schema object, the entry point.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Union

from ...errors import SchemaError
from ...ir.grammar import Grammar, Symbol
from ..regex import Dialect
from .lexemes import JsonLexemes


class Marker:
    """A key the front end adds to a schema dict for what no JSON Schema keyword can say (strings
    to exclude, the ``unevaluated*`` of the schema being merged). Never equal to a string, so a
    schema the user wrote can never spell one; one instance per meaning, compared by identity."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


#: A schema object as the front end handles it: the document's keywords, perhaps with markers.
Key = Union[str, Marker]
Schema = dict[Any, Any]

#: Decoded strings a string schema excludes (a tuple of str).
NOT_STRINGS = Marker("not strings")
#: Patterns that must not match a string schema's strings (a tuple of patterns).
NOT_PATTERNS = Marker("not patterns")
#: A number schema that admits only numbers with a fraction (not built: refused if compiled).
NOT_INTEGRAL = Marker("not integral")
#: ``unevaluatedProperties``/``unevaluatedItems`` of the schema being compiled, carried into the
#: merge of its own conjunction, whose keywords are what evaluates.
UNEVALUATED_PROPERTIES = Marker("unevaluated properties")
UNEVALUATED_ITEMS = Marker("unevaluated items")
#: The conjuncts of a merged object schema that had ``additionalProperties`` beside
#: ``patternProperties`` (theirs or another conjunct's): a tuple of (names, patterns,
#: additional) per conjunct, each ``additional`` holding on the keys its own conjunct neither
#: names nor matches (``objects`` reads it).
SIDES = Marker("additional properties of each conjunct")
#: A schema built by ``complement`` (what a ``not`` or a failing ``if`` rejects): the keys it names
#: in ``properties`` are not evaluated by it (annotations of a ``not`` are dropped), so
#: ``unevaluatedProperties`` still applies to them. Constrains nothing itself.
EVALUATES_NOTHING = Marker("evaluates nothing")
#: The conjunct a schema-valued ``dependencies`` contributes outside drafts 4-7: enforced here in
#: every draft, but from 2019-09 on no applicator, so what it names is not evaluated for
#: ``unevaluatedProperties`` (``merge`` refuses the combination). Constrains nothing itself.
DEPENDENCY_SCHEMA = Marker("a dependencies schema")
MARKERS = (NOT_STRINGS, NOT_PATTERNS, NOT_INTEGRAL, UNEVALUATED_PROPERTIES, UNEVALUATED_ITEMS, SIDES, EVALUATES_NOTHING,
           DEPENDENCY_SCHEMA)

#: Keywords the supported drafts define that annotate but constrain nothing; accepted anywhere.
#: ``discriminator`` is OpenAPI's hint at which ``oneOf`` branch applies: the branches themselves
#: must prove it. (``contentMediaType``/``contentEncoding`` are annotations from 2019-09 on, but
#: draft 7 lets a validator assert them: ``drafts.VOCABULARIES`` lists them under draft 7, where
#: the compiler refuses them.)
ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "examples", "default", "$comment",
                         "$defs", "definitions", "deprecated", "readOnly", "writeOnly", "discriminator",
                         "$anchor", "$dynamicAnchor", "$vocabulary", "$recursiveAnchor", "contentSchema"})
#: OpenAPI's integer formats: the range a number with that format must lie in (read as bounds
#: beside ``minimum``/``maximum`` by ``refs``; ``formats`` documents the choice).
NUMBER_FORMATS: dict[str, tuple[int, int]] = {"int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}

TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")

#: Keywords whose value is a schema / a list of schemas / an object of schemas.
SCHEMA_KEYWORDS = ("additionalProperties", "additionalItems", "items", "contains", "propertyNames", "not", "if",
                   "then", "else", "unevaluatedItems", "unevaluatedProperties")
SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
SCHEMA_MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")

#: ``resolve(holder, pointer)``: the schema ``holder["$ref"]`` points at.
Resolve = Callable[[Schema, str], Any]


class MemoResolve:
    """A ``Resolve`` that also carries the memos of one compile: merged views
    (``disjoint.view``: the same ``$ref``/``allOf`` schema is merged for many proofs) and
    flattened conjunctions (``merge.flatten``), keyed by the schema's id and holding the schema,
    so the id stays its own while the memo lives, and its ``fingerprint``."""

    def __init__(self, resolve: Resolve) -> None:
        self._resolve = resolve
        self.views: dict[int, tuple[Any, Any, Any]] = {}
        #: ``merge.flatten`` of one schema object, by its id (with the schema, as above)
        self.flats: dict[int, tuple[Any, Any, Any]] = {}

    def __call__(self, holder: Schema, pointer: str) -> Any:
        return self._resolve(holder, pointer)


def fingerprint(schema: dict[str, Any]) -> tuple[Any, ...]:
    """What a memo entry keyed by ``id(schema)`` checks on a hit: the keys and the identities of
    the values. Schema objects are not changed once other code has seen them; this catches a
    key set or replaced afterwards (a stale entry there would drop a constraint). O(keys)."""
    return tuple(schema), tuple(map(id, schema.values()))


def pointer_join(parent: str, token: str | int) -> str:
    """``parent`` extended by one reference token (``~`` and ``/`` escaped as RFC 6901 says)."""
    return f"{parent}/{str(token).replace('~', '~0').replace('/', '~1')}"


def non_negative_int(schema: Schema, keyword: str, pointer: str) -> int | None:
    """The value of a count keyword (``minItems``, ``maxLength``...; ``2.0`` reads as 2), None
    when absent; ``SchemaError`` for anything but a non-negative integer."""
    if keyword not in schema:
        return None
    value = schema[keyword]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(f"{keyword!r} must be a non-negative integer, got {value!r}", pointer)
    return value


class SchemaCompiler(Protocol):
    """What the object and array builders call back into: the compiler of the whole document."""

    grammar: Grammar
    lex: JsonLexemes
    empty_reasons: list[tuple[str, str]]
    region_witnesses: dict[int, object]
    empty_regions: dict[tuple[int, int, bytes], bool]
    extra_keys: str
    property_order: str

    def value(self, schema: Any, pointer: str) -> Symbol: ...

    def string_lexeme(self, schema: Schema, pointer: str) -> Symbol | None: ...

    def pattern_body(self, pattern: str, pointer: str, dialect: Dialect = "both") -> int: ...

    def resolve(self, holder: Schema, pointer: str) -> Any: ...

    def retain(self, schema: Schema) -> Schema: ...

    def any_value(self) -> Symbol: ...
