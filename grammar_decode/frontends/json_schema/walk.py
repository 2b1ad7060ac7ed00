"""The schema positions of a JSON Schema document, and one walk over them.

``schema_objects``: every schema object reached through those positions, once, parents before
children, never entering ``enum``/``const``/``examples`` values; nested ``Limits.schema_depth`` levels
or deeper is a ``SchemaError`` (the compiler recurses once per level). Shared by the draft
analysis (``drafts``) and the reference index (``refs``).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional

from ...errors import SchemaError
from ...limits import active
from .keywords import SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS, pointer_join


def schema_objects(document: Any, maps: Iterable[str] = SCHEMA_MAP_KEYWORDS
                   ) -> Iterator[tuple[dict[str, Any], str, Optional[dict[str, Any]]]]:
    """``(schema, pointer, parent)`` for every schema object of ``document`` reached through
    schema positions (subschema maps only under ``maps``), each once, a parent before its
    children (``parent`` None for the root). O(schema objects).

    Raises:
        SchemaError: a schema object nested ``Limits.schema_depth`` levels deep or deeper.
    """
    maps = tuple(maps)
    work: list[tuple[Any, str, Optional[dict[str, Any]], int]] = [(document, "", None, 0)]
    seen: set[int] = set()
    while work:
        schema, pointer, parent, depth = work.pop()
        if not isinstance(schema, dict) or id(schema) in seen:
            continue
        if depth >= active().schema_depth:
            raise SchemaError(f"the schema nests schema objects deeper than {active().schema_depth} levels",
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
