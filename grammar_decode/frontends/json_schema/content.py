"""Content identity of schema objects: two objects that mean the same get the same small integer.

The compiler memoises rules by the identity of the schema objects they are built from, which is
what makes a recursive ``$ref`` a recursive rule. Schemas built while compiling (a merged
conjunction, a rewritten ``oneOf``) are new objects each time, though, and real schemas make the
same ones over and over, or write the same subschema in many places with another
``description``: on SchemaStore's ``web-types.json`` about 70 % of the rules built were copies
of others. ``ContentIds`` gives such twins one id, so the compiler's memos hit on content as
well as on identity.

What a schema object means is its content, less its annotations, *and where its references
resolve from*: a ``$ref`` reads against the base URI of the object holding it
(``RefIndex.context_of``). So the id of a schema is built from its keywords in order (the order
of ``properties`` fixes the order named keys are written in), less those in ``ANNOTATIONS``
(``title``, ``description``, ``$id``: the context carries what ``$id`` does), the ids of the
values, each read in its role (a subschema as a schema, a list or object of subschemas as such,
anything else as data: ``enum``, ``const``, ``required``, ...), and its own context. Data is
compared exactly, by type and value, in order (``1``, ``1.0`` and ``true`` differ; floats by
``repr``, so ``-0.0`` is not ``0.0``; an object's key order is kept, as ``const`` spells it);
internal markers by identity. A value of any other kind has no id (``None``): the caller falls
back to identity.

Cost: O(keys) per dict the first time it is seen in a role (ids are hash-consed: a dict's key
holds the ids of what it contains, not their content), a dict lookup after that; memoised by
identity and checked against the dict's ``fingerprint`` (the keys and the identities of the
values).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Optional

from .keywords import (ANNOTATIONS, SCHEMA_KEYWORDS, SCHEMA_LIST_KEYWORDS, SCHEMA_MAP_KEYWORDS, Marker,
                       fingerprint)

#: ``context(schema)``: what a ``$ref`` inside ``schema`` resolves against (``RefIndex.context_of``).
Context = Callable[[Any], Hashable]

_DATA, _SCHEMA = 0, 1
#: how a schema keyword's value is read: one schema, a list of them, an object of them
_ONE, _LIST, _MAP = 2, 3, 4
_ROLES: dict[str, int] = {**{k: _MAP for k in SCHEMA_MAP_KEYWORDS}, **{k: _LIST for k in SCHEMA_LIST_KEYWORDS},
                          **{k: _ONE for k in SCHEMA_KEYWORDS}}


class ContentIds:
    """Content ids for the schema objects of one compile (bounded by the objects it sees)."""

    def __init__(self, context: Context) -> None:
        self._context = context
        self._ids: dict[Hashable, int] = {}  # content key -> id
        # (role, id(d)) -> (d, fingerprint, id): d held, so its id stays its own
        self._dicts: dict[tuple[int, int], tuple[Any, tuple[Any, ...], Optional[int]]] = {}
        self._open: set[tuple[int, int]] = set()  # dicts being keyed (a cycle has no content id)

    def schema(self, schema: Any) -> Optional[int]:
        """The content id of ``schema`` (annotations aside), None where it has none."""
        try:
            return self._schema(schema)
        except RecursionError:  # nesting deeper than the interpreter's stack: identity only
            return None

    def part(self, schema: dict[Any, Any], without: frozenset[str]) -> Optional[int]:
        """The content id of ``schema`` less the keywords in ``without`` (a ``merge.Part``)."""
        if not without:
            return self.schema(schema)
        try:
            return self._schema_items(schema, without)
        except RecursionError:
            return None

    def _intern(self, key: Hashable) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._ids)
        return found

    def _memo(self, role: int, value: dict[Any, Any], build: Callable[[], Optional[int]]) -> Optional[int]:
        key = (role, id(value))
        entry = self._dicts.get(key)
        if entry is not None and entry[0] is value and entry[1] == fingerprint(value):
            return entry[2]
        if key in self._open:
            return None
        self._open.add(key)
        try:
            found = build()
        finally:
            self._open.discard(key)
        self._dicts[key] = (value, fingerprint(value), found)
        return found

    # -- schemas -------------------------------------------------------------------------------

    def _schema(self, schema: Any) -> Optional[int]:
        if type(schema) is not dict:
            return self._data(schema)  # true, false, or no schema at all: compared exactly
        return self._memo(_SCHEMA, schema, lambda: self._schema_items(schema, frozenset()))

    def _schema_items(self, schema: dict[Any, Any], without: frozenset[str]) -> Optional[int]:
        items = []
        for key, value in schema.items():
            if key in without or key in ANNOTATIONS:
                continue
            role = _ROLES.get(key, _DATA) if type(key) is str else _DATA
            if role == _ONE or role == _LIST:  # "items": one schema, or a list of them
                found = self._sequence(value, self._schema, True) if type(value) is list else self._schema(value)
            elif role == _MAP and type(value) is dict:
                found = self._memo(_MAP, value, lambda value=value: self._schema_map(value))
            else:
                found = self._data(value)
            pair = (self._data(key), found)
            if None in pair:
                return None
            items.append(pair)
        return self._intern((_SCHEMA, self._context(schema), tuple(items)))

    def _schema_map(self, value: dict[Any, Any]) -> Optional[int]:
        pairs = self._pairs(value, self._schema)
        return None if pairs is None else self._intern((_MAP, pairs))

    def _pairs(self, value: dict[Any, Any], of: Callable[[Any], Optional[int]]) -> Optional[tuple[Any, ...]]:
        """(key id, ``of(value)``) per entry, in order; None where one has no id."""
        items = []
        for key, item in value.items():
            pair = (self._data(key), of(item))
            if None in pair:
                return None
            items.append(pair)
        return tuple(items)

    # -- data ----------------------------------------------------------------------------------

    def _data(self, value: Any) -> Optional[int]:
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            return self._intern((kind, value))
        if kind is float:
            return self._intern((kind, repr(value)))
        if kind is dict:
            return self._memo(_DATA, value, lambda: self._data_dict(value))
        if kind is Marker:
            return self._intern((kind, id(value)))  # one instance per meaning (module constants)
        if kind is list or isinstance(value, tuple):
            return self._sequence(value, self._data, False, kind)
        if kind is frozenset:
            members = [self._data(v) for v in value]
            return None if None in members else self._intern((kind, frozenset(members)))
        return None

    def _data_dict(self, value: dict[Any, Any]) -> Optional[int]:
        pairs = self._pairs(value, self._data)
        # a dict inside data may still be a schema the compiler reads (a marker's value): its
        # references resolve from its own context
        return None if pairs is None else self._intern((dict, self._context(value), pairs))

    def _sequence(self, value: Any, of: Callable[[Any], Optional[int]], schemas: bool,
                  kind: type = list) -> Optional[int]:
        members = []
        for item in value:
            found = of(item)
            if found is None:
                return None
            members.append(found)
        return self._intern((kind, schemas, tuple(members)))
