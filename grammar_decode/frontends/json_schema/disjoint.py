"""Proofs that two subschemas admit no value in common, so that ``oneOf`` ("exactly one branch
holds") may be compiled as ``anyOf`` ("at least one holds"): when no value can pass two branches,
the two say the same.

A proof is conservative: ``disjoint`` answers True only when it has shown that no JSON value
passes both schemas, and False when it could not (the caller then refuses the ``oneOf``). It looks
at each kind of JSON value the two schemas can both admit and needs, for each, one of:

* two ``enum``/``const`` sets with no value in common (JSON equality);
* integer bounds, or string lengths, or array item counts, whose ranges do not meet;
* for objects, a discriminator: a key both require whose values are ``const``/``enum`` sets
  with nothing in common, or that one requires and the other forbids.

Kinds are the JSON types, with numbers split in two (integral values, which ``integer`` admits,
and the rest), so ``{"type": "integer"}`` and ``{"type": "number"}`` overlap and ``{"type":
"string"}`` and ``{"type": "number"}`` do not. ``$ref`` and ``allOf`` are merged first
(``merge``); a branch with ``anyOf`` or ``oneOf`` is disjoint from another when each of its
branches (with the keywords beside them) is.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ...errors import UnsupportedSchemaError
from .keywords import MemoResolve, Resolve, fingerprint
from .merge import Conjunction, flatten, merge, same_json
from .numbers import bounds

KINDS = ("object", "array", "string", "integral", "fractional", "boolean", "null")
_TYPE_KINDS = {"object": {"object"}, "array": {"array"}, "string": {"string"}, "integer": {"integral"},
               "number": {"integral", "fractional"}, "boolean": {"boolean"}, "null": {"null"}}


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integral"
    if isinstance(value, float):
        return "integral" if value.is_integer() else "fractional"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def view(schema: Any, resolve: Resolve, pointer: str) -> Any:
    """``schema`` with ``$ref`` and ``allOf`` merged away, and a conjunction of properties that
    merging built (True, False or a dict)."""
    if not isinstance(schema, Conjunction) and \
            (not isinstance(schema, dict) or ("$ref" not in schema and "allOf" not in schema)):
        return schema
    memo = resolve.views if isinstance(resolve, MemoResolve) else None
    mark = (fingerprint(schema) if isinstance(schema, dict) else tuple(map(id, schema))) if memo is not None else None
    if memo is not None:
        found = memo.get(id(schema))
        if found is not None and found[0] is schema and found[2] == mark:
            if isinstance(found[1], UnsupportedSchemaError):
                raise found[1].with_traceback(None)  # the same refusal again
            return found[1]
    try:
        parts = flatten(list(schema) if isinstance(schema, Conjunction) else [schema], resolve, pointer)
        merged = parts if isinstance(parts, bool) else merge(parts, pointer)
    except UnsupportedSchemaError as exc:
        if memo is not None:
            memo[id(schema)] = (schema, exc.with_traceback(None), mark)
        raise
    if memo is not None:
        memo[id(schema)] = (schema, merged, mark)
    return merged


def literals(schema: dict[str, Any]) -> list[Any] | None:
    """The values an ``enum``/``const`` allows (None when neither is there)."""
    if "const" in schema:
        values = [schema["const"]]
        if isinstance(schema.get("enum"), list):
            values = [v for v in values if any(same_json(v, e) for e in schema["enum"])]
        return values
    if isinstance(schema.get("enum"), list):
        return list(schema["enum"])
    return None


def kinds(schema: Any) -> set[str]:
    """The kinds of value ``schema`` may admit (a superset)."""
    if schema is False:
        return set()
    if not isinstance(schema, dict):
        return set(KINDS)
    values = literals(schema)
    out = {kind_of(v) for v in values} if values is not None else set(KINDS)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        allowed: set[str] = set()
        for name in names:
            allowed |= _TYPE_KINDS.get(name, set())
        out &= allowed
    return out


def disjoint(a: Any, b: Any, resolve: Resolve, pointer: str, depth: int = 0) -> bool:
    """True when no JSON value passes both ``a`` and ``b`` (proved, see the module docstring)."""
    if depth > 8:
        return False
    try:
        a, b = view(a, resolve, pointer), view(b, resolve, pointer)
    except UnsupportedSchemaError:  # a conjunction that does not merge: nothing proved
        return False
    for one, other in ((a, b), (b, a)):
        for combinator in ("anyOf", "oneOf"):  # a value passing either passes one of its branches
            if isinstance(one, dict) and isinstance(one.get(combinator), list):
                rest = {k: v for k, v in one.items() if k != combinator}
                if not (kinds(rest) & kinds(other)):
                    return True
                return all(disjoint({"allOf": [rest, branch]} if rest else branch, other, resolve, pointer, depth + 1)
                           for branch in one[combinator])
    common = kinds(a) & kinds(b)
    if not common:
        return True
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False  # one admits everything of a shared kind
    values_a, values_b = literals(a), literals(b)
    if values_a is not None and values_b is not None:
        return not any(same_json(x, y) for x in values_a for y in values_b)
    for values, other in ((values_a, b), (values_b, a)):
        if values is not None and all(_excludes(other, v, pointer) for v in values):
            return True
    return all(_disjoint_within(kind, a, b, resolve, pointer, depth) for kind in common)


def _disjoint_within(kind: str, a: dict[str, Any], b: dict[str, Any], resolve: Resolve, pointer: str,
                     depth: int) -> bool:
    if kind == "integral":
        return _apart(_integers(a, pointer), _integers(b, pointer))
    if kind == "string":
        return _apart(_range(a, "minLength", "maxLength"), _range(b, "minLength", "maxLength"))
    if kind == "array":
        return _apart(_range(a, "minItems", "maxItems"), _range(b, "minItems", "maxItems"))
    if kind == "object":
        return _discriminated(a, b, resolve, pointer, depth) or _discriminated(b, a, resolve, pointer, depth)
    return False


def _excludes(schema: dict[str, Any], value: Any, pointer: str) -> bool:
    """True when ``schema`` is shown to reject ``value`` by its kind, bounds or lengths."""
    kind = kind_of(value)
    if kind not in kinds(schema):
        return True
    point = Fraction(len(value)) if isinstance(value, (str, list)) else None
    if kind == "integral":
        return _apart((Fraction(value), Fraction(value)), _integers(schema, pointer))
    if kind == "string":
        return _apart((point, point), _range(schema, "minLength", "maxLength"))
    if kind == "array":
        return _apart((point, point), _range(schema, "minItems", "maxItems"))
    return False


def _integers(schema: dict[str, Any], pointer: str) -> tuple[Fraction | None, Fraction | None]:
    low, high = bounds(schema, pointer)
    return (None if low is None else Fraction(low)), (None if high is None else Fraction(high))


def _range(schema: dict[str, Any], low_keyword: str, high_keyword: str) -> tuple[Fraction | None, Fraction | None]:
    low, high = schema.get(low_keyword), schema.get(high_keyword)
    ok = (int, float)
    return (Fraction(low) if isinstance(low, ok) and not isinstance(low, bool) else None,
            Fraction(high) if isinstance(high, ok) and not isinstance(high, bool) else None)


def _apart(a: tuple[Fraction | None, Fraction | None], b: tuple[Fraction | None, Fraction | None]) -> bool:
    (a_low, a_high), (b_low, b_high) = a, b
    return (a_high is not None and b_low is not None and a_high < b_low) or \
        (b_high is not None and a_low is not None and b_high < a_low)


def _discriminated(a: dict[str, Any], b: dict[str, Any], resolve: Resolve, pointer: str, depth: int) -> bool:
    """A key ``a`` requires that ``b`` forbids, or that both require with disjoint values."""
    required_b = b.get("required", []) if isinstance(b.get("required"), list) else []
    for key in a.get("required", []) if isinstance(a.get("required"), list) else []:
        if not isinstance(key, str):
            continue
        if _forbids(b, key):
            return True
        if key in required_b and disjoint(_value_schema(a, key), _value_schema(b, key), resolve, pointer, depth + 1):
            return True
    return False


def _value_schema(schema: dict[str, Any], key: str) -> Any:
    properties = schema.get("properties", {})
    if isinstance(properties, dict) and key in properties:
        return properties[key]
    return True  # patterns and additionalProperties may apply too: claim nothing


def _forbids(schema: dict[str, Any], key: str) -> bool:
    properties = schema.get("properties", {})
    if isinstance(properties, dict) and key in properties:
        return properties[key] is False
    if schema.get("patternProperties"):
        return False
    return schema.get("additionalProperties", True) is False

