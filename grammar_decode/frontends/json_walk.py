"""The schema positions of a JSON Schema document, and one walk over them.

Which keywords hold subschemas (``SCHEMA_KEYWORDS``...), how a JSON pointer grows by one token,
and ``schema_objects``: every schema object reached through those positions, once, parents before
children, never entering ``enum``/``const``/``examples`` values; nested ``MAX_SCHEMA_DEPTH`` levels
or deeper is a ``SchemaError`` (the compiler recurses once per level). Shared by the draft
analysis (``json_drafts``) and the reference index (``json_refs``).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

from ..errors import SchemaError

#: Keywords whose value is a schema / a list of schemas / an object of schemas.
SCHEMA_KEYWORDS = ("additionalProperties", "additionalItems", "items", "contains", "propertyNames", "not", "if",
                   "then", "else", "unevaluatedItems", "unevaluatedProperties")
SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
SCHEMA_MAP_KEYWORDS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")

#: Deepest nesting of schema objects read.
MAX_SCHEMA_DEPTH = 256


def pointer_join(parent: str, token: str | int) -> str:
    """``parent`` extended by one reference token (``~`` and ``/`` escaped as RFC 6901 says)."""
    return f"{parent}/{str(token).replace('~', '~0').replace('/', '~1')}"


def schema_objects(document: Any, maps: Iterable[str] = SCHEMA_MAP_KEYWORDS
                   ) -> Iterator[tuple[dict[str, Any], str, Optional[dict[str, Any]]]]:
    """``(schema, pointer, parent)`` for every schema object of ``document`` reached through
    schema positions (subschema maps only under ``maps``), each once, a parent before its
    children (``parent`` None for the root). O(schema objects).

    Raises:
        SchemaError: a schema object nested ``MAX_SCHEMA_DEPTH`` levels deep or deeper.
    """
    maps = tuple(maps)
    work: list[tuple[Any, str, Optional[dict[str, Any]], int]] = [(document, "", None, 0)]
    seen: set[int] = set()
    while work:
        schema, pointer, parent, depth = work.pop()
        if not isinstance(schema, dict) or id(schema) in seen:
            continue
        if depth >= MAX_SCHEMA_DEPTH:
            raise SchemaError(f"the schema nests schema objects deeper than {MAX_SCHEMA_DEPTH} levels",
                              pointer[:200] + ("..." if len(pointer) > 200 else ""))
        seen.add(id(schema))
        yield schema, pointer, parent
        depth += 1
        for keyword in SCHEMA_KEYWORDS:
            if isinstance(schema.get(keyword), dict):
                work.append((schema[keyword], pointer_join(pointer, keyword), schema, depth))
        for keyword in SCHEMA_LIST_KEYWORDS:
            if isinstance(schema.get(keyword), list):
                where = pointer_join(pointer, keyword)
                work.extend((sub, pointer_join(where, i), schema, depth) for i, sub in enumerate(schema[keyword]))
        for keyword in maps:
            if isinstance(schema.get(keyword), dict):
                where = pointer_join(pointer, keyword)
                work.extend((sub, pointer_join(where, k), schema, depth) for k, sub in schema[keyword].items())
