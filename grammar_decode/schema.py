"""JSON Schema → node tree.

The node tree is the vocabulary-independent meaning of a schema: what JSON values it admits, in a
form the automaton can walk. Compilation checks every keyword; a keyword we cannot enforce raises
``UnsupportedSchemaError`` naming it and its JSON pointer, because a constraint that silently does
nothing lets invalid documents through.

Scope: ``type`` ∈ {object, array, string, integer, number, boolean, null}; ``properties`` +
``required`` (required keys are emitted in schema order; keys that are not required are never
emitted); ``additionalProperties`` as a boolean (never violated, since only listed keys are
emitted); ``items`` + ``minItems`` + ``maxItems``; ``enum`` and ``const`` (emitted as their compact
JSON text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

from .errors import SchemaError, UnsupportedSchemaError

#: Keywords that annotate but constrain nothing; accepted anywhere.
ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "examples", "default", "$comment"})

_TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "object": frozenset({"properties", "required", "additionalProperties"}),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "string": frozenset(),
    "integer": frozenset(),
    "number": frozenset(),
    "boolean": frozenset(),
    "null": frozenset(),
}
_ALL_TYPE_KEYWORDS = frozenset().union(*_TYPE_KEYWORDS.values())


@dataclass(frozen=True)
class ObjectNode:
    """An object with exactly these keys, in this order. ``keys[i]`` holds the key's accepted
    JSON spellings (UTF-8 first, then ``\\uXXXX``-escaped as ``json.dumps`` writes it)."""

    keys: tuple["LiteralsNode", ...]
    values: tuple["Node", ...]


@dataclass(frozen=True)
class ArrayNode:
    """An array of ``item`` values, ``min_items <= len <= max_items`` (``None``: unbounded)."""

    item: "Node"
    min_items: int
    max_items: int | None


@dataclass(frozen=True)
class StringNode:
    """Any JSON string."""


@dataclass(frozen=True)
class NumberNode:
    """A JSON number; ``integer`` forbids fraction and exponent."""

    integer: bool


@dataclass(frozen=True)
class LiteralsNode:
    """One of a fixed set of JSON texts (booleans, null, enum, const, object keys), byte for byte.

    ``compact`` are the spellings without whitespace, ``spaced`` those with ``json.dumps``'s
    ``", "`` and ``": "`` separators (only differ for arrays and objects); the automaton uses
    ``spaced`` too when whitespace is flexible. Each value is spelled with raw UTF-8 and with
    ``\\uXXXX`` escapes (``ensure_ascii``). The first compact spelling is the canonical one.
    """

    compact: tuple[bytes, ...]
    spaced: tuple[bytes, ...] = ()

    @staticmethod
    def of(values: list[Any]) -> "LiteralsNode":
        compact: list[bytes] = []
        spaced: list[bytes] = []
        for value in values:
            for ascii_only in (False, True):
                for separators, out in (((",", ":"), compact), ((", ", ": "), spaced)):
                    text = json_text(value, separators, ascii_only)
                    if text not in out:
                        out.append(text)
        return LiteralsNode(tuple(compact), tuple(t for t in spaced if t not in compact))


Node = Union[ObjectNode, ArrayNode, StringNode, NumberNode, LiteralsNode]


def _pointer(parent: str, token: str | int) -> str:
    text = str(token).replace("~", "~0").replace("/", "~1")
    return f"{parent}/{text}"


def json_text(value: Any, separators: tuple[str, str] = (",", ":"), ensure_ascii: bool = False) -> bytes:
    """JSON text of ``value`` as UTF-8 bytes (compact, raw UTF-8 by default)."""
    try:
        return json.dumps(value, ensure_ascii=ensure_ascii, separators=separators, allow_nan=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError) as exc:  # lone surrogates, NaN, integers past the str limit
        raise SchemaError(f"a {type(value).__name__} value cannot be written as JSON text: {exc}") from exc


def _matches_type(value: Any, type_name: str) -> bool:
    if type_name == "null":
        return value is None
    if type_name == "boolean":
        return isinstance(value, bool)
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "object":
        return isinstance(value, dict)
    if type_name == "array":
        return isinstance(value, list)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if type_name == "number":
        return True
    return isinstance(value, int) or value.is_integer()


def _non_negative_int(schema: dict[str, Any], keyword: str, pointer: str) -> int | None:
    if keyword not in schema:
        return None
    value = schema[keyword]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SchemaError(f"{keyword!r} must be a non-negative integer, got {value!r}", pointer)
    return value


class _Compiler:
    def compile(self, schema: Any, pointer: str) -> Node:
        if isinstance(schema, bool):
            if schema:
                raise UnsupportedSchemaError(
                    "true", pointer, "the schema 'true' admits any JSON value; any-JSON is not supported yet"
                )
            raise SchemaError("the schema 'false' admits no value", pointer)
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", pointer)

        self._check_keywords(schema, pointer)
        if "enum" in schema or "const" in schema:
            return self._literals(schema, pointer)
        type_name = self._type(schema, pointer)
        if type_name is None:
            raise UnsupportedSchemaError(
                "type", pointer, "a schema without 'type', 'enum' or 'const' admits any JSON value; "
                "any-JSON is not supported yet"
            )
        if type_name == "object":
            return self._object(schema, pointer)
        if type_name == "array":
            return self._array(schema, pointer)
        if type_name == "string":
            return StringNode()
        if type_name in ("integer", "number"):
            return NumberNode(integer=type_name == "integer")
        if type_name == "boolean":
            return LiteralsNode((b"true", b"false"))
        return LiteralsNode((b"null",))

    # -- enum / const --------------------------------------------------------------------------

    def _check_keywords(self, schema: Any, pointer: str) -> None:
        """Check a schema tree before compiling it: every keyword must be one we can enforce, and
        keyword values must be well-formed (keywords of other types included: they constrain
        nothing here, but a malformed one is still an error)."""
        if isinstance(schema, bool):
            return
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", pointer)
        allowed = ANNOTATIONS | _ALL_TYPE_KEYWORDS | {"type", "enum", "const"}
        for keyword in schema:
            if keyword not in allowed:
                raise UnsupportedSchemaError(keyword, pointer)
        self._type(schema, pointer)
        _non_negative_int(schema, "minItems", pointer)
        _non_negative_int(schema, "maxItems", pointer)
        if "enum" in schema and not isinstance(schema["enum"], list):
            raise SchemaError("'enum' must be an array", _pointer(pointer, "enum"))
        self._required(schema, pointer)
        if not isinstance(schema.get("additionalProperties", True), bool):
            raise UnsupportedSchemaError("additionalProperties", pointer, "only boolean values are supported")
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            raise SchemaError("'properties' must be an object", _pointer(pointer, "properties"))
        for key, sub in properties.items():
            self._check_keywords(sub, _pointer(_pointer(pointer, "properties"), key))
        if "items" in schema:
            if isinstance(schema["items"], list):
                raise UnsupportedSchemaError("items", pointer, "array form of 'items' (use prefixItems)")
            self._check_keywords(schema["items"], _pointer(pointer, "items"))

    def _literals(self, schema: dict[str, Any], pointer: str) -> LiteralsNode:
        """The enum/const values that the whole schema admits (every sibling keyword applies)."""
        if "const" in schema:
            values, where = [schema["const"]], _pointer(pointer, "const")
        else:
            values, where = schema["enum"], _pointer(pointer, "enum")
        integer = schema.get("type") in ("integer", ["integer"])
        kept = [_integral(v) if integer else v for v in values if _admits(schema, v)]
        if not kept:
            raise SchemaError("no 'enum'/'const' value satisfies the rest of the schema", where)
        return LiteralsNode.of(kept)

    def _type(self, schema: dict[str, Any], pointer: str) -> str | None:
        if "type" not in schema:
            return None
        value = schema["type"]
        if isinstance(value, list):
            if len(value) == 1 and isinstance(value[0], str):
                value = value[0]
            else:
                raise UnsupportedSchemaError("type", pointer, f"union types {value!r} are not supported yet")
        if not isinstance(value, str) or value not in _TYPE_KEYWORDS:
            raise SchemaError(f"unknown type {value!r}", _pointer(pointer, "type"))
        return value

    def _required(self, schema: dict[str, Any], pointer: str) -> list[str]:
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
            raise SchemaError("'required' must be an array of strings", _pointer(pointer, "required"))
        if len(set(required)) != len(required):
            raise SchemaError("'required' has duplicate keys", _pointer(pointer, "required"))
        return required

    def _object(self, schema: dict[str, Any], pointer: str) -> ObjectNode:
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            raise SchemaError("'properties' must be an object", _pointer(pointer, "properties"))
        required = self._required(schema, pointer)
        additional = schema.get("additionalProperties", True)
        if not isinstance(additional, bool):
            raise UnsupportedSchemaError(
                "additionalProperties", pointer, "only boolean values are supported (no extra key is ever emitted)"
            )
        # Keys that are not required are never emitted, so a 'false' subschema there is satisfied.
        compiled = {
            key: self.compile(sub, _pointer(_pointer(pointer, "properties"), key))
            for key, sub in properties.items() if sub is not False or key in required
        }
        values = []
        for index, key in enumerate(required):
            if key not in compiled:
                if additional is False:
                    raise SchemaError(f"required key {key!r} is forbidden by additionalProperties: false", pointer)
                raise UnsupportedSchemaError(
                    "required", pointer,
                    f"required key {key!r} (index {index}) has no schema in 'properties' "
                    "(any-JSON values are not supported yet)",
                )
            values.append(compiled[key])
        return ObjectNode(tuple(LiteralsNode.of([k]) for k in required), tuple(values))

    def _array(self, schema: dict[str, Any], pointer: str) -> ArrayNode:
        min_items = _non_negative_int(schema, "minItems", pointer) or 0
        max_items = _non_negative_int(schema, "maxItems", pointer)
        if max_items is not None and max_items < min_items:
            raise SchemaError(f"minItems {min_items} exceeds maxItems {max_items}", pointer)
        if "items" not in schema:
            if max_items == 0:
                return ArrayNode(LiteralsNode((b"null",)), 0, 0)
            raise UnsupportedSchemaError(
                "items", pointer, "an array without 'items' admits any JSON items; any-JSON is not supported yet"
            )
        items = schema["items"]
        if isinstance(items, list):
            raise UnsupportedSchemaError("items", pointer, "array form of 'items' (use prefixItems)")
        item_pointer = _pointer(pointer, "items")
        if items is False:
            if min_items > 0:
                raise SchemaError("items: false with minItems > 0 admits no value", pointer)
            return ArrayNode(LiteralsNode((b"null",)), 0, 0)
        return ArrayNode(self.compile(items, item_pointer), min_items, max_items)


def _json_equal(a: Any, b: Any) -> bool:
    """JSON Schema equality: numbers by value (1 == 1.0), booleans never equal to numbers, at any
    depth."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _admits(schema: Any, value: Any) -> bool:
    """JSON Schema validation of ``value`` by the keywords this module supports (callers have
    checked that no other keyword is present). Used to filter enum/const values."""
    if isinstance(schema, bool):
        return schema
    type_name = schema.get("type")
    if isinstance(type_name, list):
        type_name = type_name[0] if len(type_name) == 1 else None
    if type_name is not None and not _matches_type(value, type_name):
        return False
    if "const" in schema and not _json_equal(value, schema["const"]):
        return False
    if "enum" in schema and not any(_json_equal(value, e) for e in schema["enum"]):
        return False
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        if any(key not in value for key in schema.get("required", [])):
            return False
        for key, item in value.items():
            if key in properties:
                if not _admits(properties[key], item):
                    return False
            elif schema.get("additionalProperties", True) is False:
                return False
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            return False
        if "items" in schema and not all(_admits(schema["items"], item) for item in value):
            return False
    return True


def _integral(value: Any) -> Any:
    """An integral float as an int, so an ``integer`` literal carries no fraction or exponent."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def parse_schema(schema: Union[dict[str, Any], bool, str, bytes]) -> Any:
    """Accept a schema as a Python value or as JSON text."""
    if isinstance(schema, (str, bytes)):
        try:
            return json.loads(schema)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"schema is not valid JSON: {exc}") from exc
    return schema


def compile_schema(schema: Union[dict[str, Any], bool, str, bytes]) -> Node:
    """Compile a JSON Schema (dict or JSON text) into its node tree. O(schema size)."""
    try:
        return _Compiler().compile(parse_schema(schema), "")
    except RecursionError as exc:
        raise SchemaError("the schema is nested too deeply") from exc
