"""``allOf`` (and ``$ref`` with sibling keywords) as one schema: the conjunction, merged keyword
by keyword, exactly or not at all.

A grammar cannot intersect two context-free languages in general, but two JSON schemas can be
conjoined keyword by keyword: ``type`` sets intersect, ``properties`` merge (a key both name gets
the conjunction of its two subschemas, compiled the same way in turn), ``required`` lists unite,
bounds tighten, ``enum``/``const`` lists intersect by JSON equality, ``additionalProperties:
false`` on either side drops the keys the other side alone names. A keyword that occurs in
several conjuncts with different values (``pattern``s are kept together: all must match) and
that this module cannot combine exactly raises
``UnsupportedSchemaError`` naming ``allOf`` and the keyword, so nothing is ever dropped.

Conjunctions are identified by the document objects they are made of (``Part``: a schema object
and the keywords already taken out of it), so a recursive schema whose conjunction refers back to
itself comes back to the same key, and the compiler can memoise it as one recursive rule.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, NamedTuple

from ...errors import SchemaError, UnsupportedSchemaError
from ...limits import active
from .keywords import (ANNOTATIONS, DEPENDENCY_SCHEMA, EVALUATES_NOTHING, NOT_PATTERNS, NOT_STRINGS, SIDES, TYPES,
                       UNEVALUATED_ITEMS, UNEVALUATED_PROPERTIES, MemoResolve, Resolve, fingerprint)


class Part(NamedTuple):
    """A schema object of the document, less the keywords in ``without``."""

    schema: dict[str, Any]
    without: frozenset[str]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, v) for k, v in self.schema.items() if k not in self.without]


class Conjunction(tuple):
    """Subschemas that must all hold (a property both sides name). Not JSON, so never confused
    with a schema the user wrote."""


class Patterns(tuple):
    """The value of a merged ``pattern``: several patterns, all of which must match. Not JSON."""


def same_json(a: Any, b: Any) -> bool:
    """JSON equality as JSON Schema defines it (``1 == 1.0``, ``true != 1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def flatten(schemas: list[Any], resolve: Resolve, pointer: str) -> list[Part] | bool:
    """The parts of the conjunction of ``schemas``, nested ``allOf`` and ``$ref`` followed; True
    when they constrain nothing, False when one admits nothing. One schema object alone is
    flattened once per compile where ``resolve`` carries the memo (``MemoResolve``)."""
    if len(schemas) == 1 and isinstance(schemas[0], dict) and isinstance(resolve, MemoResolve):
        schema = schemas[0]
        found = resolve.flats.get(id(schema))
        if found is None or found[0] is not schema or found[2] != fingerprint(schema):
            found = resolve.flats[id(schema)] = (schema, _flatten(schemas, resolve, pointer), fingerprint(schema))
        return found[1] if isinstance(found[1], bool) else list(found[1])
    return _flatten(schemas, resolve, pointer)


def _flatten(schemas: list[Any], resolve: Resolve, pointer: str) -> list[Part] | bool:
    parts: list[Part] = []
    seen: set[tuple[int, frozenset[str]]] = set()
    expanded: set[int] = set()
    refs = 0
    # a stack of schemas to expand and parts ready to take; a schema expands, in this order, to
    # what its $ref points at (a base comes before what extends it), its own keywords, then its
    # allOf branches, which fixes the order of merged properties
    work: list[Any] = list(reversed(schemas))
    while work:
        schema = work.pop()
        if isinstance(schema, Part):
            key = (id(schema.schema), schema.without)
            if key not in seen and any(k not in ANNOTATIONS and k not in schema.without for k in schema.schema):
                seen.add(key)
                parts.append(schema)
            continue
        if isinstance(schema, Conjunction):
            work.extend(reversed(schema))
            continue
        if schema is True:
            continue
        if schema is False:
            return False
        if not isinstance(schema, dict):
            raise SchemaError(f"a schema must be an object or a boolean, got {type(schema).__name__}", pointer)
        if id(schema) in expanded:
            continue  # A and A is A: a cycle of references adds nothing
        expanded.add(id(schema))
        if "allOf" in schema:
            branches = schema["allOf"]
            if not isinstance(branches, list) or not branches:
                raise SchemaError("'allOf' must be a non-empty array", pointer)
            work.extend(reversed(branches))
        work.append(Part(schema, frozenset(k for k in ("allOf", "$ref") if k in schema)))
        if "$ref" in schema:
            if not isinstance(schema["$ref"], str):
                raise SchemaError("'$ref' must be a string", pointer)
            refs += 1
            if refs > active().schema_refs:
                raise UnsupportedSchemaError("allOf", pointer, f"more than {active().schema_refs} references to follow")
            work.append(resolve(schema, pointer))
    return parts if parts else True


def key_of(parts: list[Part]) -> frozenset[tuple[int, frozenset[str]]]:
    """What identifies a conjunction (the document objects stay alive while compiling)."""
    return frozenset((id(p.schema), p.without) for p in parts)


def _types(value: Any) -> set[str]:
    names = set(value if isinstance(value, list) else [value])
    if "number" in names:
        names.add("integer")  # integer ⊂ number
    return names


#: Keywords that say which schema applies to which item position.
_POSITIONAL = ("prefixItems", "items", "additionalItems")


def item_positions(schema: dict[str, Any], pointer: str) -> tuple[list[Any], str, Any, str]:
    """Which schema holds at which item position, in any draft: the prefix schemas and the keyword
    holding them, then the schema of the items after them and its keyword (``prefixItems`` then
    ``items``; drafts 4 to 2019-09: ``items`` as an array, then ``additionalItems``, which means
    nothing without it)."""
    items = schema.get("items", True)
    if "prefixItems" in schema:
        if not isinstance(schema["prefixItems"], list):
            raise SchemaError("'prefixItems' must be an array of schemas", pointer)
        if isinstance(items, list):
            raise SchemaError("'items' must be a schema beside 'prefixItems'", pointer)
        if "additionalItems" in schema:
            raise UnsupportedSchemaError("additionalItems", pointer, "beside 'prefixItems' (drafts disagree on what "
                                                                     "it applies to)")
        return list(schema["prefixItems"]), "prefixItems", items, "items"
    if isinstance(items, list):
        return list(items), "items", schema.get("additionalItems", True), "additionalItems"
    return [], "items", items, "items"


def merge(parts: list[Part], pointer: str) -> dict[str, Any] | bool:
    """One schema equivalent to the conjunction of ``parts`` (False when it admits nothing that
    can be seen here). At most one part may hold ``anyOf``; the caller distributes over it."""
    def refuse(keyword: str, why: str = "") -> UnsupportedSchemaError:
        detail = f"cannot combine {keyword!r} across allOf branches" + (f": {why}" if why else "")
        return UnsupportedSchemaError("allOf", pointer, detail)

    out: dict[str, Any] = {}
    unevaluated: dict[Any, Any] = {}  # UNEVALUATED_* -> schema, from the one part that holds them
    arrays: list[tuple[list[Any], Any]] = []  # (prefix, rest) of each part that constrains items
    literals: list[Any] | None = None
    closed: list[tuple[set[str], Any, tuple[str, ...]]] = []  # per side with additionalProperties: names, value, patterns
    for part in parts:
        items = dict(part.items())
        for keyword in ("exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(items.get(keyword), bool) and len(parts) > 1:
                raise refuse(keyword, "the draft-4 boolean form")
        if items.get("additionalProperties", True) is not True and len(parts) > 1:
            properties = items.get("properties", {})
            own_patterns = items.get("patternProperties", {})
            closed.append((set(properties) if isinstance(properties, dict) else set(), items["additionalProperties"],
                           tuple(own_patterns) if isinstance(own_patterns, dict) else ()))
        if "const" in items or "enum" in items:
            values = [items["const"]] if "const" in items else list(items["enum"])
            if "const" in items and "enum" in items:
                values = [v for v in values if any(same_json(v, e) for e in items["enum"])]
            literals = values if literals is None else [v for v in literals if any(same_json(v, w) for w in values)]
        if any(k in items for k in _POSITIONAL):
            prefix, _where, rest, _rest_where = item_positions(items, pointer)
            arrays.append((prefix, rest))
        for keyword in ("unevaluatedProperties", "unevaluatedItems"):
            if keyword in items:
                # its scope is the subschema holding it, not this whole conjunction
                raise UnsupportedSchemaError(keyword, pointer, "inside an allOf branch or $ref target (only where "
                                                               "the schema holding it is compiled)")
        for keyword in (UNEVALUATED_PROPERTIES, UNEVALUATED_ITEMS):
            if keyword in items:
                if keyword in unevaluated:
                    raise refuse(keyword[1], "two unevaluated keywords in one conjunction")
                unevaluated[keyword] = items[keyword]
        for keyword, value in items.items():
            if keyword in ANNOTATIONS or keyword in ("const", "enum") or keyword in _POSITIONAL \
                    or keyword in (UNEVALUATED_PROPERTIES, UNEVALUATED_ITEMS, EVALUATES_NOTHING, DEPENDENCY_SCHEMA):
                continue
            if keyword not in out:
                out[keyword] = value
                continue
            mine = out[keyword]
            if keyword == "type":
                both = _types(mine) & _types(value)
                if not both:
                    return False
                if "number" in both:
                    both.discard("integer")
                out["type"] = [t for t in TYPES if t in both]
            elif keyword == "required":
                out["required"] = list(mine) + [k for k in value if k not in mine]
            elif keyword == "properties":
                props = dict(mine)
                for key, sub in value.items():
                    props[key] = Conjunction((props[key], sub)) if key in props else sub
                out["properties"] = props
            elif keyword == "additionalProperties":
                out[keyword] = value  # every side's: combined with the names below (``closed``)
            elif keyword in ("patternProperties", "dependentRequired", "dependencies"):
                # each pattern (each dependency) holds on its own: the conjunction has them all
                both_maps = dict(mine)
                for key, sub in value.items():
                    if key not in both_maps:
                        both_maps[key] = sub
                    elif keyword == "patternProperties":
                        both_maps[key] = Conjunction((both_maps[key], sub))
                    elif isinstance(sub, list) and isinstance(both_maps[key], list):
                        both_maps[key] = list(both_maps[key]) + [k for k in sub if k not in both_maps[key]]
                    elif not same_json(both_maps[key], sub):
                        raise refuse(keyword, f"two dependent schemas for {key!r}")
                out[keyword] = both_maps
            elif keyword == "propertyNames":
                out[keyword] = Conjunction((mine, value))
            elif keyword == "not":
                out[keyword] = {"anyOf": [mine, value]}  # not A and not B: not (A or B)
            elif keyword is SIDES:  # conjuncts merged before: every one of them still holds
                out[keyword] = tuple(mine) + tuple(value)
            elif keyword in ("minItems", "minLength", "minProperties"):
                out[keyword] = max(mine, value)
            elif keyword in ("maxItems", "maxLength", "maxProperties"):
                out[keyword] = min(mine, value)
            elif keyword in ("minimum", "exclusiveMinimum"):
                out[keyword] = value if Fraction(value) > Fraction(mine) else mine
            elif keyword in ("maximum", "exclusiveMaximum"):
                out[keyword] = value if Fraction(value) < Fraction(mine) else mine
            elif keyword == "multipleOf" and all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                                 for v in (mine, value)):
                out[keyword] = math.lcm(mine, value)  # multiples of both: multiples of the lcm
            elif keyword is NOT_STRINGS or keyword is NOT_PATTERNS:  # exclusions (complement): all hold
                out[keyword] = list(mine) + [v for v in value if v not in mine]
            elif keyword == "pattern":
                known = tuple(mine) if isinstance(mine, Patterns) else (mine,)
                out["pattern"] = Patterns(known if value in known else known + (value,))
            elif keyword == "anyOf":
                raise refuse(keyword, "more than one branch has one (the product is not built)")
            elif not same_json(mine, value):
                raise refuse(keyword, "different values")
    if len(arrays) == 1 and len(parts) == 1:
        out.update({k: v for k, v in parts[0].items() if k in _POSITIONAL})
    elif arrays:
        # position by position: each side's prefix schema there, or its rest schema past its prefix
        length = max(len(prefix) for prefix, _rest in arrays)

        def at(index: int) -> Any:
            schemas = [prefix[index] if index < len(prefix) else rest for prefix, rest in arrays]
            return schemas[0] if len(schemas) == 1 else Conjunction(schemas)

        if length:
            out["prefixItems"] = [at(i) for i in range(length)]
        rests = [rest for _prefix, rest in arrays]
        out["items"] = rests[0] if len(rests) == 1 else Conjunction(rests)
    every = [dict(part.items()) for part in parts]
    if unevaluated.get(UNEVALUATED_PROPERTIES, True) is not True \
            and any(DEPENDENCY_SCHEMA in items for items in every):
        raise UnsupportedSchemaError("unevaluatedProperties", pointer, "beside a schema-valued 'dependencies' (from "
                                                                       "2019-09 on it evaluates no key; not built)")
    if unevaluated.get(UNEVALUATED_PROPERTIES, True) is not True \
            and not any("additionalProperties" in items for items in every):
        # keys no properties/patternProperties of the conjunction name: what additionalProperties
        # of the merged schema governs (an additionalProperties anywhere evaluates every key)
        rest = unevaluated[UNEVALUATED_PROPERTIES]
        out["additionalProperties"] = rest
        # a key only what a "not" rejects names is not evaluated either: it must pass rest too
        evaluated = {k for items in every if EVALUATES_NOTHING not in items
                     for k in (items.get("properties") or {})}
        # a new dict: out["properties"] may be a part's own (one part named properties), which
        # other schemas share and which must not change once read
        properties = dict(out.get("properties", {}))
        for key in [k for k in properties if k not in evaluated]:
            properties[key] = Conjunction((properties[key], rest))
        if properties:
            out["properties"] = properties
    if unevaluated.get(UNEVALUATED_ITEMS, True) is not True:
        if any("contains" in items for items in every):
            raise UnsupportedSchemaError("unevaluatedItems", pointer, "beside 'contains' (it evaluates the "
                                                                      "items that match)")
        if not any(("items" in items and not isinstance(items["items"], list)) or
                   (isinstance(items.get("items"), list) and "additionalItems" in items) for items in every):
            out["items"] = unevaluated[UNEVALUATED_ITEMS]  # past every prefix: what no keyword evaluated
    if literals is not None:
        if not literals:
            return False
        out["enum"] = literals
    if closed and (out.get("patternProperties") or SIDES in out or any(patterns for _n, _r, patterns in closed)):
        # patterns on some side (or sides carried from an earlier merge): which keys each side's
        # additionalProperties reaches takes a regex over the keys, which the object builder has
        out[SIDES] = tuple(out.get(SIDES, ())) + tuple((frozenset(names), patterns, rest)
                                                       for names, rest, patterns in closed)
        out.pop("additionalProperties", None)
    elif closed:
        # a side with additionalProperties A and names N holds A on every key outside N: on a key
        # another side names, and on every key no side names (what the merged
        # additionalProperties governs, as no side has patternProperties)
        properties = dict(out.get("properties", {}))
        for key in list(properties) + [k for k in out.get("required", []) if k not in properties]:
            extra = [rest for names, rest, _patterns in closed if key not in names]
            if not extra:
                continue
            if any(rest is False for rest in extra):
                properties[key] = False  # no object passes with it (the key stays out, or none passes)
            else:
                properties[key] = Conjunction(([properties[key]] if key in properties else []) + extra)
        out["properties"] = properties
        rests = [rest for _names, rest, _patterns in closed]
        out["additionalProperties"] = False if any(r is False for r in rests) else \
            (rests[0] if len(rests) == 1 else Conjunction(rests))
    return out
