"""``$ref`` resolution within one schema document: ``$id`` base URIs, ``$anchor`` and the
draft-6/7 ``"$id": "#name"`` anchors, JSON pointers, all relative to the resource a reference
stands in.

``RefIndex`` walks the document once, through schema positions only (``properties``, ``items``,
``allOf``... never ``enum``/``const``/``examples`` values), and records for every schema object
its base URI (RFC 3986 resolution of each ``$id`` against the enclosing base), every embedded
resource by its absolute URI, and every anchor. A reference is resolved against the base of the
schema object that holds it. A reference to anything outside the document (another file, a
metaschema, a URI no ``$id`` here declares) raises ``UnsupportedSchemaError``: nothing is ever
fetched.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ..errors import SchemaError, UnsupportedSchemaError

#: Keywords whose value is a schema / a list of schemas / an object of schemas.
_ONE = ("additionalProperties", "additionalItems", "items", "contains", "propertyNames", "not", "if", "then",
        "else", "unevaluatedItems", "unevaluatedProperties")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies")


def pointer_join(parent: str, token: str | int) -> str:
    """``parent`` extended by one reference token (``~`` and ``/`` escaped as RFC 6901 says)."""
    return f"{parent}/{str(token).replace('~', '~0').replace('/', '~1')}"


class RefIndex:
    """Base URIs, resources and anchors of one document (built once, O(schema objects))."""

    def __init__(self, document: Any) -> None:
        self.document = document
        self._base: dict[int, str] = {}
        self._outer_base: dict[int, str] = {}  # base around a schema holding $ref (drafts 4-7 ignore its $id)
        self.resources: dict[str, Any] = {}
        self.anchors: dict[str, Any] = {}
        self.root_base = ""
        if isinstance(document, dict) and isinstance(document.get("$id"), str):
            self.root_base = urldefrag(document["$id"]).url
        self.resources[self.root_base] = document
        self._walk(document, self.root_base)

    def _walk(self, root: Any, root_base: str) -> None:
        work = [(root, root_base)]
        while work:
            schema, base = work.pop()
            if not isinstance(schema, dict) or id(schema) in self._base:
                continue
            own = schema.get("$id")
            if "$ref" in schema:
                self._outer_base[id(schema)] = base
            if isinstance(own, str):
                url, fragment = urldefrag(urljoin(base, own))
                if url != base or schema is self.document or not fragment:
                    base = url
                    self.resources.setdefault(url, schema)
                if fragment and not fragment.startswith("/"):
                    self.anchors.setdefault(f"{url}#{fragment}", schema)  # draft 6/7 "$id": "#name"
            if isinstance(schema.get("$anchor"), str):
                self.anchors.setdefault(f"{base}#{schema['$anchor']}", schema)
            self._base[id(schema)] = base
            for keyword in _ONE:
                if isinstance(schema.get(keyword), dict):
                    work.append((schema[keyword], base))
            for keyword in _LIST:
                if isinstance(schema.get(keyword), list):
                    work.extend((sub, base) for sub in schema[keyword])
            for keyword in _MAP:
                if isinstance(schema.get(keyword), dict):
                    work.extend((sub, base) for sub in schema[keyword].values())

    def alias(self, copy: Any, original: Any) -> None:
        """``copy`` (a schema object built from ``original``) resolves references like it."""
        self._base[id(copy)] = self.base_of(original)

    def base_of(self, schema: Any) -> str:
        return self._base.get(id(schema), self.root_base)

    def resolve(self, holder: dict[str, Any], pointer: str) -> Any:
        """The schema ``holder["$ref"]`` points at."""
        ref = holder["$ref"]
        if not isinstance(ref, str):
            raise SchemaError("'$ref' must be a string", pointer_join(pointer, "$ref"))
        found = self._lookup(urljoin(self.base_of(holder), ref), ref, pointer)
        outer = self._outer_base.get(id(holder))
        if outer is not None and outer != self.base_of(holder):
            # drafts 4-7 ignore an $id beside $ref; 2019-09 and later do not: both must agree
            try:
                other = self._lookup(urljoin(outer, ref), ref, pointer)
            except SchemaError:
                other = None
            if other is not found:
                raise UnsupportedSchemaError("$ref", pointer, f"{ref!r} beside '$id' resolves differently in drafts "
                                                              "4-7 (which ignore that $id) and 2019-09 on")
        return found

    def _lookup(self, uri: str, ref: str, pointer: str) -> Any:
        where = pointer_join(pointer, "$ref")
        url, fragment = urldefrag(uri)
        resource = self.resources.get(url)
        if resource is None:
            raise UnsupportedSchemaError("$ref", pointer, f"{ref!r} points outside the document (only references "
                                                          "within it are followed; nothing is fetched)")
        if fragment and not fragment.startswith("/"):
            found = self.anchors.get(f"{url}#{fragment}")
            if found is None:
                raise SchemaError(f"'$ref' {ref!r}: no anchor {fragment!r} in the document", where)
            return found
        target = resource
        for token in fragment.split("/")[1:] if fragment else []:
            token = unquote(token).replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise SchemaError(f"'$ref' {ref!r} points at nothing", where)
        return target
