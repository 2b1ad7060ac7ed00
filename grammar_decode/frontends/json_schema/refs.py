"""``$ref`` resolution within one schema document: ``$id`` base URIs, ``$anchor`` and the
draft-6/7 ``"$id": "#name"`` anchors, JSON pointers, all relative to the resource a reference
stands in.

``RefIndex`` walks the document once, through schema positions only (``properties``, ``items``,
``allOf``... never ``enum``/``const``/``examples`` values), and records for every schema object
its base URI (RFC 3986 resolution of each ``$id`` against the enclosing base), every embedded
resource by its absolute URI, and every anchor. A reference is resolved against the base of the
schema object that holds it; a reference that is only a fragment (``#/$defs/a``, ``#name``) stays
in the resource of its base, whatever its scheme (``urn:`` included), as ``jsonschema`` reads it.
A reference to another document is followed where the caller supplied that document
(``resources``: absolute URI -> schema, as ``compile_json_schema(..., resources=...)`` takes
them), read when first referenced (an ``$id`` inside one names a resource from then on: no
search through every supplied document, whose cost would grow with the catalogue), under the
same draft; a reference to the metaschema of a
supported draft is read from the ``jsonschema-specifications`` package when it is installed (it
ships them as data). A reference to anything else outside the document (a URI that no ``$id``
here declares and no resource supplies) raises ``UnsupportedSchemaError``: nothing is ever
fetched.

How identifiers and ``$ref`` siblings are read depends on the draft (``drafts``). ``view``
gives the schema objects the compiler reads: copies without the keywords no supported draft
defines (``annotations``), in which, under drafts 4-7, an object holding ``$ref`` keeps nothing
else (those drafts ignore its siblings) and draft 4's ``id`` is gone (read here); the originals
stay the targets of JSON pointers.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional
from urllib.parse import unquote, urldefrag, urljoin

from ...errors import SchemaError, UnsupportedSchemaError
from .annotations import KnownKeywords
from .drafts import (LEGACY, MODERN, before_draft_4, candidate_drafts, draft_named, identifier_keyword,
                     metaschema_uri, read_keywords)
from .keywords import SCHEMA_KEYWORDS as _ONE
from .keywords import SCHEMA_LIST_KEYWORDS as _LIST
from .keywords import SCHEMA_MAP_KEYWORDS as _MAP
from .keywords import NUMBER_FORMATS, pointer_join
from .walk import schema_objects

__all__ = ["RefIndex", "declared_uri", "join_uri", "pointer_join", "resource_table"]


def join_uri(base: str, reference: str) -> str:
    """``reference`` resolved against ``base``; a bare fragment keeps ``base``'s resource even
    where ``urljoin`` knows no relative form (``urn:``, ``tag:``...)."""
    if reference.startswith("#"):
        return urldefrag(base).url + reference
    return urljoin(base, reference)


def _with_range(schema: dict[str, Any], low: int, high: int) -> dict[str, Any]:
    """``schema`` with ``minimum``/``maximum`` narrowed to ``[low, high]`` (OpenAPI's ``int32``
    and ``int64``); a bound that is not a number is left for the bound reader to refuse."""
    out = dict(schema)
    for keyword, edge, tighter in (("minimum", low, max), ("maximum", high, min)):
        value = out.get(keyword)
        if value is None:
            out[keyword] = edge
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            out[keyword] = tighter(value, edge)
    return out


def declared_uri(document: Any) -> Optional[str]:
    """The URI a schema document declares for itself (its root ``$id``, or draft 4's ``id``),
    without fragment; None where it declares none."""
    declared = document.get("$id", document.get("id")) if isinstance(document, dict) else None
    url = urldefrag(declared).url if isinstance(declared, str) else ""
    return url or None


def resource_table(resources: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """``resources`` (URI -> schema document) keyed by URI without its fragment (an empty one,
    ``...schema.json#``, is the same resource), checked once. A reference is resolved against
    the base URI of the schema holding it (its ``$id``s), and the result looked up here: keys are
    absolute URIs, or relative ones for references from a document that declares no ``$id``.

    Raises:
        TypeError: ``resources`` is not a mapping, a key is not a string, or a value is not a
            schema (an object or a boolean).
        ValueError: an empty key, or one with a non-empty fragment.
    """
    if resources is None:
        return {}
    if not isinstance(resources, Mapping):
        raise TypeError(f"resources must be a mapping of URIs to schemas, got {type(resources).__name__}")
    table: dict[str, Any] = {}
    for uri, schema in resources.items():
        if not isinstance(uri, str):
            raise TypeError(f"a resources key must be a URI string, got {uri!r}")
        url, fragment = urldefrag(uri)
        if fragment:
            raise ValueError(f"a resources key names a whole document, not a fragment: {uri!r}")
        if not url:
            raise ValueError(f"a resources key must name a document, got {uri!r}")
        if not isinstance(schema, (dict, bool)):
            raise TypeError(f"resources[{uri!r}] must be a schema (an object or a boolean), "
                            f"got {type(schema).__name__}")
        table[url] = schema
    return table


class RefIndex:
    """Base URIs, resources and anchors of one document (built once, O(schema objects)), read
    under ``draft`` (one of ``drafts.DRAFTS``, or None: in a way every draft agrees with), and
    of the ``resources`` it references (a ``resource_table``), each indexed when first reached;
    ``base_uri`` is the document's own URI (where it was retrieved from), which its ``$id``
    resolves against and overrides."""

    def __init__(self, document: Any, draft: Optional[str] = None, unknown_keywords: str = "ignore",
                 number_formats: bool = True, resources: Optional[dict[str, Any]] = None,
                 base_uri: str = "") -> None:
        self.document = document
        self._supplied = resources or {}
        self._candidates: Optional[frozenset[str]] = None  # drafts the document reads alike under (draft None)
        self.draft = draft
        self.known = KnownKeywords(unknown_keywords)
        self.number_formats = number_formats
        self._id = identifier_keyword(draft)
        self._base: dict[int, str] = {}
        self._outer_base: dict[int, str] = {}  # base around a schema holding $ref (drafts 4-7 ignore its $id)
        self._views: dict[int, Any] = {}
        self._resolved: dict[int, tuple[dict[str, Any], Any, Any]] = {}  # id(holder) -> (holder, $ref, target)
        self._pointers: dict[int, str] = {}  # where each schema object stands (for errors of the views)
        # where embedded resources are looked for: drafts 4-7 know no $defs/dependentSchemas, later
        # drafts no dependencies (a schema under an unknown keyword is no resource there)
        self._maps = tuple(k for k in _MAP if not (draft in LEGACY and k in ("$defs", "dependentSchemas"))
                           and not (draft in MODERN and k == "dependencies"))
        self.resources: dict[str, Any] = {}
        self.anchors: dict[str, Any] = {}
        self._retrieved = urldefrag(base_uri).url
        self.root_base = self._retrieved
        root_id = self._own_id(document)
        if root_id is not None:
            self.root_base = urldefrag(join_uri(self.root_base, root_id)).url
        self.resources[self.root_base] = document
        self.resources.setdefault(self._retrieved, document)  # where a draft that ignores its $id finds it
        self._walk(document, self._retrieved)  # the walk reads the root $id against it

    def _own_id(self, schema: Any) -> Optional[str]:
        """The identifier ``schema`` declares, as its draft reads it (drafts 4-7: none beside $ref)."""
        if not isinstance(schema, dict) or not isinstance(schema.get(self._id), str):
            return None
        if self.draft in LEGACY and "$ref" in schema:
            return None
        return schema[self._id]

    def _walk(self, root: Any, root_base: str, where: str = "") -> None:
        """Index ``root`` (a resource at ``root_base``); ``where`` prefixes its pointers in errors
        (the URI of a resource other than the document)."""
        for schema, pointer, parent in schema_objects(root, self._maps):
            pointer = where + pointer
            base = root_base if parent is None else self._base[id(parent)]
            if self.draft is not None and schema is not root and "$schema" in schema \
                    and draft_named(schema["$schema"]) != self.draft:
                raise UnsupportedSchemaError("$schema", pointer, f"a resource read under draft {self.draft} "
                                                                 f"declares {schema['$schema']!r}")
            own = self._own_id(schema)
            if "$ref" in schema and self.draft is None:
                # the base drafts 4-7 read it under: its own $id ignored, even at the root
                self._outer_base[id(schema)] = self._retrieved if schema is self.document else base
            if own is not None:
                url, fragment = urldefrag(join_uri(base, own))
                if url != base or schema is self.document or not fragment:
                    base = url
                    self.resources.setdefault(url, schema)
                if fragment and not fragment.startswith("/") and self.draft not in MODERN:
                    self.anchors.setdefault(f"{url}#{fragment}", schema)  # drafts 4-7: "$id": "#name"
            if isinstance(schema.get("$anchor"), str) and self.draft not in LEGACY:
                self.anchors.setdefault(f"{base}#{schema['$anchor']}", schema)
            if isinstance(schema.get("$dynamicAnchor"), str) and self.draft in (None, "2020-12"):
                # a plain anchor for $ref; $dynamicRef itself is refused wherever it stands
                self.anchors.setdefault(f"{base}#{schema['$dynamicAnchor']}", schema)
            self._base[id(schema)] = base
            self._pointers[id(schema)] = pointer

    def view(self, schema: Any) -> Any:
        """``schema`` as the compiler reads it: a copy (made once per object, so rules memoised by
        identity stay sound) without the keywords no supported draft defines
        (``annotations.KnownKeywords``: ignored, warned about, or refused), and, under a named
        draft, in the compiler's vocabulary (``drafts.read_keywords``: keywords the draft does
        not define dropped, draft 4's bounds rewritten; under drafts 4-7 an object holding
        ``$ref`` keeps only ``$ref``; draft 4's ``id`` dropped). O(size) once."""
        if not isinstance(schema, dict):
            return schema
        found = self._views.get(id(schema))
        if found is not None:
            return found
        copy: dict[str, Any] = {}
        self._views[id(schema)] = copy
        self.alias(copy, schema)
        pointer = self._pointers.get(id(schema), "")
        if "$ref" in schema and self.draft in LEGACY:
            copy["$ref"] = schema["$ref"]
            return copy
        keywords = self.known.read(schema, pointer)
        if self.draft is not None:
            keywords = read_keywords(keywords, self.draft, pointer)
        if self.number_formats and isinstance(keywords.get("format"), str) and keywords["format"] in NUMBER_FORMATS:
            keywords = _with_range(keywords, *NUMBER_FORMATS[keywords["format"]])
        for keyword, value in keywords.items():
            if keyword == "id":
                continue  # draft 4's base URI (read above), an annotation in later drafts
            if keyword in _ONE and isinstance(value, dict):
                value = self.view(value)
            elif keyword in _LIST and isinstance(value, list):
                value = [self.view(sub) for sub in value]
            elif keyword in _MAP and isinstance(value, dict):
                value = {name: self.view(sub) for name, sub in value.items()}
            copy[keyword] = value
        if "unevaluatedProperties" in copy and not self._evaluates_keys_in_place(schema, set()):
            # only its own properties/patternProperties evaluate keys: what is left is what
            # additionalProperties governs (nothing, if it is there), exactly
            left = copy.pop("unevaluatedProperties")
            copy.setdefault("additionalProperties", left)
        return copy

    _EVALUATING = ("properties", "patternProperties", "additionalProperties", "unevaluatedProperties")

    def _evaluates_keys_in_place(self, schema: dict[str, Any], seen: set[int]) -> bool:
        """Whether a subschema applied in place to the same object (``allOf``/``anyOf``/``oneOf``,
        ``if``/``then``/``else``, ``dependentSchemas``, ``$ref``: not ``not``, which yields no
        annotations) may evaluate keys. Conservative: a dynamic reference, a cycle or a
        reference that does not resolve counts as evaluating."""
        if id(schema) in seen:
            return True
        seen.add(id(schema))
        subschemas: list[Any] = []
        for keyword in ("allOf", "anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list):
                subschemas.extend(schema[keyword])
        subschemas.extend(schema[k] for k in ("if", "then", "else") if k in schema)
        if isinstance(schema.get("dependentSchemas"), dict):
            subschemas.extend(schema["dependentSchemas"].values())
        if "$dynamicRef" in schema or "$recursiveRef" in schema:
            return True
        if isinstance(schema.get("$ref"), str):
            try:
                subschemas.append(self._lookup(join_uri(self.base_of(schema), schema["$ref"]), schema["$ref"], ""))
            except SchemaError:
                return True
        for sub in subschemas:
            if isinstance(sub, dict) and (any(k in sub for k in self._EVALUATING)
                                          or self._evaluates_keys_in_place(sub, seen)):
                return True
        return False

    def _metaschema(self, url: str, pointer: str) -> Any:
        """The metaschema of a supported draft at ``url`` (http or https, as ``$schema`` names
        it), read from the ``jsonschema-specifications`` package when it is installed (it ships
        them as data; nothing is fetched), added to the document's resources; None otherwise."""
        draft = draft_named(url)
        if draft is None:
            return None
        try:
            import jsonschema_specifications  # optional: the metaschemas as data
        except ImportError:
            return None
        if self.draft is not None and draft != self.draft:
            raise UnsupportedSchemaError("$ref", pointer, f"{url!r} is draft {draft}'s metaschema, and this document "
                                                          f"is read under draft {self.draft}")
        try:
            contents = jsonschema_specifications.REGISTRY.contents(metaschema_uri(draft))
        except Exception:  # a package version without it
            return None
        self.resources[url] = contents
        self._walk(contents, url, url + "#")
        return contents

    def _supplied_resource(self, url: str, pointer: str) -> Any:
        """The caller's resource at ``url``, indexed now (its own ``$id``, if it declares one,
        names it too), or None where none was supplied.

        Raises:
            UnsupportedSchemaError: it declares another draft than the document is read under
                (or, with no draft named, keywords no draft the document reads alike under
                holds), or draft 3.
        """
        contents = self._supplied.get(url)
        if contents is None:
            return None
        declared = contents.get("$schema") if isinstance(contents, dict) else None
        if before_draft_4(declared):
            raise UnsupportedSchemaError("$schema", url + "#", f"{declared!r} names draft 3 or earlier")
        if self.draft is not None:
            if declared is not None and draft_named(declared) != self.draft:
                raise UnsupportedSchemaError("$ref", pointer, f"{url!r} declares {declared!r}, and the document is "
                                                              f"read under draft {self.draft}")
        else:
            if self._candidates is None:
                self._candidates = frozenset(candidate_drafts(self.document))
            named = draft_named(declared)
            theirs = {named} if named is not None else set(candidate_drafts(contents))
            if not theirs & self._candidates:
                raise UnsupportedSchemaError("$ref", pointer, f"{url!r} and the document use keywords no single "
                                                              "draft holds; name the draft (draft=, or $schema)")
        self.resources[url] = contents
        self._walk(contents, url, url + "#")
        return contents

    def alias(self, copy: Any, original: Any) -> None:
        """``copy`` (a schema object built from ``original``) resolves references like it."""
        self._base[id(copy)] = self.base_of(original)
        if id(original) in self._outer_base:
            self._outer_base[id(copy)] = self._outer_base[id(original)]

    def base_of(self, schema: Any) -> str:
        return self._base.get(id(schema), self.root_base)

    def context_of(self, schema: Any) -> tuple[str, Optional[str]]:
        """What a ``$ref`` held by ``schema`` resolves against: its base URI, and the base drafts
        4-7 read it under where that differs (``_resolve``). Two schema objects with the same
        content and context mean the same (``content.ContentIds``)."""
        return self.base_of(schema), self._outer_base.get(id(schema))

    def resolve(self, holder: dict[str, Any], pointer: str) -> Any:
        """The schema ``holder["$ref"]`` points at (memoised per holder: proofs and merges ask
        for the same references many times)."""
        found = self._resolved.get(id(holder))
        if found is not None and found[0] is holder and found[1] == holder.get("$ref"):
            return found[2]
        target = self._resolve(holder, pointer)
        self._resolved[id(holder)] = (holder, holder["$ref"], target)  # the holder kept: ids stay unique
        return target

    def _resolve(self, holder: dict[str, Any], pointer: str) -> Any:
        ref = holder["$ref"]
        if not isinstance(ref, str):
            raise SchemaError("'$ref' must be a string", pointer_join(pointer, "$ref"))
        found = self._lookup(join_uri(self.base_of(holder), ref), ref, pointer)
        outer = self._outer_base.get(id(holder))
        if outer is not None and outer != self.base_of(holder):
            # drafts 4-7 ignore an $id beside $ref; 2019-09 and later do not: both must agree
            try:
                other = self._lookup(join_uri(outer, ref), ref, pointer)
            except SchemaError:
                other = None
            if other is not found:
                raise UnsupportedSchemaError("$ref", pointer, f"{ref!r} beside '$id' resolves differently in drafts "
                                                              "4-7 (which ignore that $id) and 2019-09 on; name "
                                                              "the draft ($schema, or draft=)")
        return self.view(found)

    def _lookup(self, uri: str, ref: str, pointer: str) -> Any:
        where = pointer_join(pointer, "$ref")
        url, fragment = urldefrag(uri)
        resource = self.resources.get(url)
        if resource is None:
            resource = self._supplied_resource(url, pointer)
        if resource is None:
            resource = self._metaschema(url, pointer)
        if resource is None:
            raise UnsupportedSchemaError("$ref", pointer, f"{ref!r} points outside the document, at {url!r}, which "
                                                          "no resource supplies (resources=; nothing is fetched)"
                                                          + ("; an $id inside a supplied document names a resource "
                                                             "once a reference has reached that document: supply it "
                                                             "under its own URI too" if self._supplied else ""))
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
