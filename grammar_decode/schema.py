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
import math
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
    """An object with exactly these keys, in this order. ``keys[i]`` is the key's JSON text."""

    keys: tuple[bytes, ...]
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
    """One of a fixed set of JSON texts (booleans, null, enum, const), byte for byte."""

    texts: tuple[bytes, ...]


Node = Union[ObjectNode, ArrayNode, StringNode, NumberNode, LiteralsNode]


def _pointer(parent: str, token: str | int) -> str:
    text = str(token).replace("~", "~0").replace("/", "~1")
    return f"{parent}/{text}"


def json_text(value: Any) -> bytes:
    """Compact UTF-8 JSON text of ``value``, as emitted for ``enum``/``const``."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


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

        allowed = ANNOTATIONS | _ALL_TYPE_KEYWORDS | {"type", "enum", "const"}
        for keyword in schema:
            if keyword not in allowed:
                raise UnsupportedSchemaError(keyword, pointer)

        type_name = self._type(schema, pointer)
        if "enum" in schema or "const" in schema:
            return self._literals(schema, type_name, pointer)
        if type_name is None:
            raise UnsupportedSchemaError(
                "type", pointer, "a schema without 'type', 'enum' or 'const' admits any JSON value; "
                "any-JSON is not supported yet"
            )
        for keyword in _ALL_TYPE_KEYWORDS - _TYPE_KEYWORDS[type_name]:
            if keyword in schema:
                # Keywords of other types constrain nothing here; still validate their shape.
                self._check_other_type_keyword(schema, keyword, pointer)
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

    def _check_other_type_keyword(self, schema: dict[str, Any], keyword: str, pointer: str) -> None:
        if keyword in ("minItems", "maxItems"):
            _non_negative_int(schema, keyword, pointer)

    def _type(self, schema: dict[str, Any], pointer: str) -> str | None:
        if "type" not in schema:
            return None
        value = schema["type"]
        if isinstance(value, list):
            if len(value) == 1 and isinstance(value[0], str):
                value = value[0]
            else:
                raise UnsupportedSchemaError(
                    "type", _pointer(pointer, "type"), f"union types {value!r} are not supported yet"
                )
        if not isinstance(value, str) or value not in _TYPE_KEYWORDS:
            raise SchemaError(f"unknown type {value!r}", _pointer(pointer, "type"))
        return value

    def _literals(self, schema: dict[str, Any], type_name: str | None, pointer: str) -> LiteralsNode:
        if "const" in schema:
            values = [schema["const"]]
            where = _pointer(pointer, "const")
            if "enum" in schema:
                values = [v for v in values if any(_json_equal(v, e) for e in schema["enum"])]
        else:
            where = _pointer(pointer, "enum")
            values = schema["enum"]
            if not isinstance(values, list):
                raise SchemaError("'enum' must be an array", where)
        if type_name is not None:
            values = [v for v in values if _matches_type(v, type_name)]
        texts: list[bytes] = []
        for value in values:
            if isinstance(value, float) and not math.isfinite(value):
                raise SchemaError(f"{value!r} is not a JSON value", where)
            text = json_text(value)
            if text not in texts:
                texts.append(text)
        if not texts:
            raise SchemaError("no value satisfies 'enum'/'const' together with 'type'", where)
        return LiteralsNode(tuple(texts))

    def _object(self, schema: dict[str, Any], pointer: str) -> ObjectNode:
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            raise SchemaError("'properties' must be an object", _pointer(pointer, "properties"))
        required = schema.get("required", [])
        if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
            raise SchemaError("'required' must be an array of strings", _pointer(pointer, "required"))
        if len(set(required)) != len(required):
            raise SchemaError("'required' has duplicate keys", _pointer(pointer, "required"))
        additional = schema.get("additionalProperties", True)
        if not isinstance(additional, bool):
            raise UnsupportedSchemaError(
                "additionalProperties", pointer, "only boolean values are supported (no extra key is ever emitted)"
            )
        compiled = {
            key: self.compile(sub, _pointer(_pointer(pointer, "properties"), key)) for key, sub in properties.items()
        }
        values = []
        for index, key in enumerate(required):
            if key not in compiled:
                if additional is False:
                    raise SchemaError(f"required key {key!r} is forbidden by additionalProperties: false", pointer)
                raise UnsupportedSchemaError(
                    "required", _pointer(_pointer(pointer, "required"), index),
                    f"required key {key!r} has no schema in 'properties' (any-JSON values are not supported yet)",
                )
            values.append(compiled[key])
        return ObjectNode(tuple(json_text(k) for k in required), tuple(values))

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
            raise UnsupportedSchemaError("items", _pointer(pointer, "items"), "array form of 'items' (use prefixItems)")
        item_pointer = _pointer(pointer, "items")
        if items is False:
            if min_items > 0:
                raise SchemaError("items: false with minItems > 0 admits no value", pointer)
            return ArrayNode(LiteralsNode((b"null",)), 0, 0)
        return ArrayNode(self.compile(items, item_pointer), min_items, max_items)


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


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
    return _Compiler().compile(parse_schema(schema), "")
