"""The values a schema rejects, as a union of positive schemas: what ``not`` and the ``else``
side of ``if`` compile to.

By De Morgan, a value fails a schema when it fails one of its keywords, and each keyword fails in
a way another schema can say: a value of another ``type``; a string shorter than ``minLength``
(``{"type": "string", "maxLength": n - 1}``); a string ``pattern`` does not find; a number below
``minimum``; an object without a ``required`` key (``{"properties": {k: false}}``) or whose
property fails its schema (recursively); an array with an item that fails ``items`` (``contains``
the complement); a value outside an ``enum`` of strings, numbers, booleans and nulls; a value every
``anyOf`` branch rejects (a conjunction of their complements, the product written out); an object
with a key that ``additionalProperties`` governs and whose value fails it (where the schema the
result is conjoined with names every key an object may hold: one schema per such key); a value
``oneOf`` rejects (no branch holds it, or two do: a conjunction per pair); ``not S`` fails exactly
where ``S`` holds. Every other keyword raises ``UnsupportedSchemaError``.

The union is exact except where the schemas it is made of are themselves compiled as subsets
(number bounds write fixed-point decimals only), so ``not`` never admits a value its schema
holds. Strings outside a set and strings a pattern does not find are carried by keys that are
never JSON (``NOT_STRINGS``, ``NOT_PATTERNS``) to the string lexeme, which subtracts them.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ...errors import SchemaError, UnsupportedSchemaError
from ...limits import active
from .disjoint import disjoint, kinds, view
from .keywords import (ANNOTATIONS, DEPENDENCY_SCHEMA, EVALUATES_NOTHING, NOT_INTEGRAL, NOT_PATTERNS, NOT_STRINGS,
                       SIDES, TYPES, Resolve)
from .merge import Patterns


_BOUND_COMPLEMENTS = {"minimum": "exclusiveMaximum", "exclusiveMinimum": "maximum",
                      "maximum": "exclusiveMinimum", "exclusiveMaximum": "minimum"}
_COUNT_COMPLEMENTS = {"minLength": ("string", "maxLength", -1), "maxLength": ("string", "minLength", 1),
                      "minItems": ("array", "maxItems", -1), "maxItems": ("array", "minItems", 1),
                      "minProperties": ("object", "maxProperties", -1), "maxProperties": ("object", "minProperties", 1)}


def complement(schema: Any, resolve: Resolve, pointer: str, keyword: str = "not", depth: int = 0,
               within: Any = None) -> list[Any]:
    """Schemas whose union admits exactly the values ``schema`` rejects (see the module
    docstring); ``keyword`` names the refusal (``not`` or ``if``). ``within``, when given, is a
    schema the result will only ever be conjoined with (the siblings of a ``not``, the other
    ``oneOf`` branch): the union may then differ outside it, which is what lets
    ``additionalProperties`` be complemented where ``within`` names every key an object may
    hold."""
    def refuse(why: str) -> UnsupportedSchemaError:
        return UnsupportedSchemaError(keyword, pointer, why)

    if depth > 8:
        raise refuse("nested too deeply")
    s = view(schema, resolve, pointer)
    if s is True:
        return []
    if s is False:
        return [True]
    if not isinstance(s, dict):
        raise SchemaError(f"a schema must be an object or a boolean, got {type(s).__name__}", pointer)
    out: list[Any] = []
    for name, value in s.items():
        if name in ANNOTATIONS or name is EVALUATES_NOTHING or name is DEPENDENCY_SCHEMA:
            continue
        if name == "type":
            names = value if isinstance(value, list) else [value]
            others = [t for t in TYPES if t not in names and not (t == "integer" and "number" in names)
                      and not (t == "number" and "integer" in names)]
            if others:
                out.append({"type": others})
            if "integer" in names and "number" not in names:
                out.append({"type": "number", NOT_INTEGRAL: True})  # numbers with a fraction
        elif name == "not":
            out.append(value)
        elif name == "enum" or (name == "const" and "enum" not in s):
            out.extend(_outside(s, refuse))
        elif name in _COUNT_COMPLEMENTS:
            kind, other, step = _COUNT_COMPLEMENTS[name]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SchemaError(f"{name!r} must be a non-negative integer, got {value!r}", pointer)
            if value + step >= 0:
                out.append({"type": kind, other: value + step})
        elif name in _BOUND_COMPLEMENTS:
            if isinstance(value, bool) or isinstance(s.get("exclusiveMinimum"), bool) \
                    or isinstance(s.get("exclusiveMaximum"), bool):
                raise refuse("the draft-4 boolean exclusive bounds")
            out.append({"type": "number", _BOUND_COMPLEMENTS[name]: value})
        elif name == "pattern":
            patterns = list(value) if isinstance(value, Patterns) else [value]
            out.extend({"type": "string", NOT_PATTERNS: [p]} for p in patterns)
        elif name == "required":
            if not isinstance(value, list):
                raise SchemaError("'required' must be an array of strings", pointer)
            out.extend({"type": "object", "properties": {k: False}} for k in value)
        elif name == "properties":
            keys = None if within is None else _closed_keys(within, resolve, pointer)
            # what each key's value meets within, where within is itself closed (nothing else governs it)
            around = _merged_or_none(within, resolve, pointer) if keys is not None else None
            closed = around.get("properties", {}) if isinstance(around, dict) and _closed(around) else {}
            for key, sub in value.items():
                if keys is not None and key not in keys:
                    continue  # no object within holds the key: nothing fails here
                inner = closed.get(key) if isinstance(closed, dict) else None
                if inner is not None and _same_schema(sub, inner, resolve, pointer):
                    continue  # a value failing it there fails it here: no object within
                for c in complement(sub, resolve, pointer, keyword, depth + 1, inner):
                    out.append({"type": "object", "required": [key], "properties": {key: c}})
        elif name == "anyOf":
            out.extend(_outside_all(value, resolve, pointer, keyword, depth, refuse, within))
        elif name == "oneOf":
            out.extend(_not_exactly_one(value, resolve, pointer, keyword, depth, refuse, within))
        elif name == "additionalProperties":
            out.extend(_outside_additional(s, value, within, resolve, pointer, keyword, depth, refuse))
        elif name == "items" and not isinstance(value, list):
            out.extend({"type": "array", "contains": c} for c in complement(value, resolve, pointer, keyword,
                                                                             depth + 1))
        else:
            raise refuse(f"the values that fail {name!r} are not built")
    # what a "not" (or a failed "if") names evaluates no key: unevaluatedProperties still
    # reaches the keys only these schemas name (``merge`` reads the mark)
    return [{**o, EVALUATES_NOTHING: True} if isinstance(o, dict) and "properties" in o else o for o in out]


def pruned_product(start: list[Any], choices: Iterable[list[Any]], resolve: Resolve, pointer: str, limit: int,
                   too_many: Callable[[], UnsupportedSchemaError]) -> list[list[Any]]:
    """The conjunctions of ``start`` and one schema from each list of ``choices`` (read lazily),
    less those a disjointness proof (``disjoint``) shows empty; ``too_many()`` is raised
    past ``limit`` of them. [] as soon as no conjunction is left."""
    terms = [list(start)]
    for options in choices:
        grown = []
        for term in terms:
            for c in options:
                if any(disjoint(t, c, resolve, pointer) for t in term):
                    continue  # "const 0" and "a string", say
                grown.append(term + [c])
                if len(grown) > limit:
                    raise too_many()
        terms = grown
        if not terms:
            break
    return terms


def _outside_all(branches: Any, resolve: Resolve, pointer: str, keyword: str, depth: int,
                 refuse: Callable[[str], UnsupportedSchemaError], within: Any = None) -> list[Any]:
    """Schemas for the values every branch of an ``anyOf`` rejects: the product of the
    branches' complements, one conjunction per choice, less those proved empty
    (``Limits.complement_terms`` at most); [] when the branches together admit every value."""
    if not isinstance(branches, list) or not branches:
        raise SchemaError("'anyOf' must be a non-empty array", pointer)
    terms = pruned_product([], (complement(b, resolve, pointer, keyword, depth + 1, within) for b in branches), resolve,
                           pointer, active().complement_terms, lambda: refuse("the values every anyOf branch rejects need more "
                                                                f"than {active().complement_terms} conjunctions"))
    return [term[0] if len(term) == 1 else {"allOf": term} for term in terms]


def _closed_keys(schema: Any, resolve: Resolve, pointer: str, depth: int = 0) -> frozenset[str] | None:
    """Every key an object ``schema`` admits may hold (None: not known to be finite):
    ``properties`` not ``False`` under ``additionalProperties: false`` with no
    ``patternProperties`` (merged, so an ``allOf`` of closed sides counts), or the union of
    those of every ``anyOf``/``oneOf`` branch."""
    s = _merged_or_none(schema, resolve, pointer)
    if s is None:
        return None
    if s is False:
        return frozenset()
    if not isinstance(s, dict):
        return None  # True: any object
    if "object" not in kinds(s):
        return frozenset()  # no object at all
    if _closed(s):
        properties = s.get("properties", {})
        return frozenset(k for k, v in properties.items() if v is not False) if isinstance(properties, dict) else None
    for combinator in ("anyOf", "oneOf"):
        # every object passes some branch (with the rest): the union of what the branches name
        branches = s.get(combinator)
        if isinstance(branches, list) and branches and depth < 4:
            rest = {k: v for k, v in s.items() if k not in ("anyOf", "oneOf")}
            union: set[str] = set()
            for branch in branches:
                keys = _closed_keys({"allOf": [rest, branch]}, resolve, pointer, depth + 1)
                if keys is None:
                    break
                union |= keys
            else:
                return frozenset(union)
    return None


def _merged_or_none(schema: Any, resolve: Resolve, pointer: str) -> Any:
    """``schema`` merged (``view``), or None where the merge refuses."""
    try:
        return view(schema, resolve, pointer)
    except UnsupportedSchemaError:
        return None


def _closed(s: dict[str, Any]) -> bool:
    """Whether a merged object schema admits no key outside its ``properties``."""
    return s.get("additionalProperties", True) is False and not s.get("patternProperties") and SIDES not in s


def _same_schema(a: Any, b: Any, resolve: Resolve, pointer: str) -> bool:
    """Whether ``a`` and ``b`` are shown to be one schema: the same object, or references to
    the same target (the usual case of two branches sharing a definition)."""
    if a is b:
        return True
    if isinstance(a, dict) and isinstance(b, dict) and set(a) == {"$ref"} == set(b):
        try:
            return resolve(a, pointer) is resolve(b, pointer)
        except (SchemaError, UnsupportedSchemaError):
            return False
    return False


def _outside_additional(s: dict[str, Any], value: Any, within: Any, resolve: Resolve, pointer: str, keyword: str,
                        depth: int, refuse: Callable[[str], UnsupportedSchemaError]) -> list[Any]:
    """Schemas for the objects (among those ``within`` admits) with a key outside
    ``properties`` and ``patternProperties`` whose value fails ``additionalProperties``: one
    per key ``within`` may hold that ``s`` does not name, that key required with a failing value.
    Refused where ``within`` may hold keys no list names, or a pattern would have to be matched."""
    if value is True or value == {}:
        return []
    keys = None if within is None else _closed_keys(within, resolve, pointer)
    if keys is None:
        raise refuse("the values that fail 'additionalProperties' are not built (only where the schema "
                     "it is conjoined with names every key)")
    named = s.get("properties", {})
    others = sorted(k for k in keys if not (isinstance(named, dict) and k in named))
    if others and s.get("patternProperties"):
        raise refuse("the values that fail 'additionalProperties' beside 'patternProperties' are not built")
    if value is False:
        return [{"type": "object", "required": [k]} for k in others]
    failing = complement(value, resolve, pointer, keyword, depth + 1)
    return [{"type": "object", "required": [k], "properties": {k: c}} for k in others for c in failing]


def _not_exactly_one(branches: Any, resolve: Resolve, pointer: str, keyword: str, depth: int,
                     refuse: Callable[[str], UnsupportedSchemaError], within: Any = None) -> list[Any]:
    """Schemas for the values a ``oneOf`` rejects: those no branch holds (as for ``anyOf``),
    and those two or more hold (one conjunction per pair of branches, less the pairs a
    disjointness proof shows empty). ``Limits.complement_terms`` pairs at most."""
    if not isinstance(branches, list) or not branches:
        raise SchemaError("'oneOf' must be a non-empty array", pointer)
    limit = active().complement_terms
    out = _outside_all(branches, resolve, pointer, keyword, depth, refuse, within)
    for i, first in enumerate(branches):
        for second in branches[i + 1:]:
            if disjoint(first, second, resolve, pointer):
                continue
            out.append({"allOf": [first, second]})
            if len(out) > limit:
                raise refuse(f"the values a oneOf rejects need more than {limit} conjunctions")
    return out


def _outside(schema: dict[str, Any], refuse: Callable[[str], UnsupportedSchemaError]) -> list[Any]:
    """Schemas for the values outside ``enum``/``const`` (strings, numbers, booleans and null).

    Numbers outside a set are the open intervals between its members, so a spelling whose double
    equals a member (``1.0`` and ``1.00000000000000000001`` for ``1``, as ``jsonschema`` compares
    them) is excluded with it."""
    values = [schema["const"]] if "const" in schema else schema.get("enum", [])
    if not isinstance(values, list):
        raise refuse("'enum' must be an array")
    if "const" in schema and "enum" in schema:  # outside both = outside one or outside the other
        return _outside({"const": schema["const"]}, refuse) + _outside({"enum": schema["enum"]}, refuse)
    strings = [v for v in values if isinstance(v, str)]
    booleans = {v for v in values if isinstance(v, bool)}
    numbers = sorted({v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)})
    if any(isinstance(v, (list, dict)) for v in values):
        raise refuse("the values outside an enum of arrays or objects are not built")
    out: list[Any] = [{"type": ["object", "array"]}]
    if numbers:
        out.append({"type": "number", "exclusiveMaximum": numbers[0]})
        out.extend({"type": "number", "exclusiveMinimum": a, "exclusiveMaximum": b}
                   for a, b in zip(numbers, numbers[1:]))
        out.append({"type": "number", "exclusiveMinimum": numbers[-1]})
    else:
        out.append({"type": "number"})
    out.append({"type": "string", NOT_STRINGS: strings} if strings else {"type": "string"})
    if None not in values:
        out.append({"type": "null"})
    out.extend({"const": b} for b in (True, False) if b not in booleans)
    return out
