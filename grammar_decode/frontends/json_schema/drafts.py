"""Which JSON Schema draft a document is read under, and what that changes.

A document is read under the draft named by ``compile_json_schema(..., draft=...)``, else the one
its root ``$schema`` names (``http://json-schema.org/draft-07/schema#``,
``https://json-schema.org/draft/2020-12/schema``...), else under no draft in particular. The
drafts differ, for what this compiler enforces, in how references are read:

* drafts 4, 6 and 7 ignore every keyword beside ``$ref``, its ``$id`` included; 2019-09 and
  2020-12 apply them all (``$ref`` is one assertion among others);
* draft 4 names a base URI ``id``, later drafts ``$id``;
* drafts 6 and 7 (``"$id": "#name"``) and 4 (``"id": "#name"``) spell a plain-name anchor in
  the identifier; 2019-09 and 2020-12 spell it ``$anchor``.

Each draft's validator reads its own keywords (``VOCABULARIES``, checked against ``jsonschema``'s
validator of each draft) and treats the others as annotations: under ``draft="7"``,
``prefixItems`` and ``minContains`` constrain nothing and ``items`` applies to every item; under
``draft="4"``, ``const`` constrains nothing (``{"not": {"const": 1}}`` is ``{"not": {}}``) and
``exclusiveMaximum`` is the boolean that makes ``maximum`` strict (a boolean in a later draft, or
a number in draft 4, is an invalid schema). ``read_keywords`` turns one schema object into the
compiler's vocabulary (2020-12's keywords, plus ``dependencies`` and ``items`` arrays with
``additionalItems``).

With no draft named and no ``$schema``, a document is read under the drafts whose vocabulary
holds every draft keyword it uses (``candidate_drafts``: ``const`` rules out draft 4,
``prefixItems`` every draft but 2020-12, an ``items`` array 2020-12...): each keyword it uses
means the same in all of them, so it is read as it stands. A document whose keywords belong to
no single draft, or that spells a bound as draft 4's boolean (which 2020-12 validators read as
the number 0 or 1), is refused. Between drafts 4-7 and 2019-09 on, references still differ:
``$ref`` siblings are enforced (fewer documents than drafts 4-7 admit, the same as later drafts),
both anchor spellings are found, and a ``$ref`` beside an ``$id`` is compiled only where both
readings of that ``$id`` reach the same schema.
"""

from __future__ import annotations

from typing import Any, Optional

from ...errors import SchemaError, UnsupportedSchemaError
from .walk import schema_objects

#: The drafts a document can be read under.
DRAFTS = ("4", "6", "7", "2019-09", "2020-12")
#: Drafts that ignore the keywords beside ``$ref``.
LEGACY = frozenset({"4", "6", "7"})
#: Drafts that apply them (and know ``$defs`` and ``$anchor``).
MODERN = frozenset({"2019-09", "2020-12"})
#: The ``jsonschema`` validator class that judges each draft.
VALIDATOR_NAMES = {"4": "Draft4Validator", "6": "Draft6Validator", "7": "Draft7Validator",
                   "2019-09": "Draft201909Validator", "2020-12": "Draft202012Validator"}

_EVERY_DRAFT = frozenset({"$ref", "additionalProperties", "allOf", "anyOf", "enum", "format", "items", "maxItems",
                          "maxLength", "maxProperties", "maximum", "minItems", "minLength", "minProperties",
                          "minimum", "multipleOf", "not", "oneOf", "pattern", "patternProperties", "properties",
                          "required", "type", "uniqueItems", "exclusiveMaximum", "exclusiveMinimum"})
_DRAFT_6 = _EVERY_DRAFT | {"additionalItems", "dependencies", "const", "contains", "propertyNames"}
_MODERN = _EVERY_DRAFT | {"const", "contains", "propertyNames", "if", "then", "else", "dependentRequired",
                          "dependentSchemas", "unevaluatedItems", "unevaluatedProperties", "minContains",
                          "maxContains"}
#: The keywords each draft's validator reads as assertions or applicators: ``jsonschema``'s
#: validator functions of that draft, and the keywords they read beside their own (``then`` and
#: ``else`` beside ``if``, ``minContains``/``maxContains`` beside ``contains``, draft 4's boolean
#: ``exclusiveMaximum`` beside ``maximum``), and draft 7's content keywords, which its
#: specification lets a validator assert (the JSON-Schema-Test-Suite's optional tests do; the
#: compiler refuses them there). Any other keyword is an annotation under that draft.
VOCABULARIES: dict[str, frozenset[str]] = {
    "4": _EVERY_DRAFT | {"additionalItems", "dependencies"},
    "6": _DRAFT_6,
    # draft 7 (section 8) lets a validator assert the content keywords; later drafts make them
    # annotations, earlier ones do not know them
    "7": _DRAFT_6 | {"if", "then", "else", "contentMediaType", "contentEncoding"},
    "2019-09": _MODERN | {"additionalItems", "$recursiveRef"},
    "2020-12": _MODERN | {"prefixItems", "$dynamicRef"},
}
#: Keywords some draft reads as a constraint.
DRAFT_KEYWORDS = frozenset().union(*VOCABULARIES.values())
#: Keywords enforced under every draft although some drafts' validators ignore them: the
#: JSON-Schema-Test-Suite's compatibility tests ask 2019-09 and 2020-12 to honour ``dependencies``,
#: and enforcing a keyword a validator ignores only admits fewer documents.
ENFORCED_EVERYWHERE = frozenset({"dependencies"})

_METASCHEMAS = {
    "json-schema.org/draft-04/schema": "4",
    "json-schema.org/draft-06/schema": "6",
    "json-schema.org/draft-07/schema": "7",
    "json-schema.org/draft/2019-09/schema": "2019-09",
    "json-schema.org/draft/2020-12/schema": "2020-12",
}


def draft_named(uri: Any) -> Optional[str]:
    """The draft a ``$schema`` value names (http or https, with or without an empty fragment),
    or None for anything else (a custom metaschema, a non-string)."""
    if not isinstance(uri, str):
        return None
    for scheme in ("https://", "http://"):
        if uri.startswith(scheme):
            return _METASCHEMAS.get(uri[len(scheme):].removesuffix("#"))
    return None


def metaschema_uri(draft: str) -> str:
    """The URI of ``draft``'s metaschema as its specification spells it (http up to draft 7)."""
    path = next(p for p, d in _METASCHEMAS.items() if d == draft)
    return ("https://" if draft in MODERN else "http://") + path


def before_draft_4(uri: Any) -> bool:
    """Whether a ``$schema`` value names draft 3 or an earlier one (schema or hyper-schema)."""
    if not isinstance(uri, str):
        return False
    bare = uri.split("://", 1)[-1].removesuffix("#")
    return bare in {f"json-schema.org/draft-0{n}/{kind}" for n in range(4) for kind in ("schema", "hyper-schema")}


def choose_draft(document: Any, draft: Optional[str]) -> Optional[str]:
    """The draft to read ``document`` under: ``draft`` when given, else its root ``$schema``'s,
    else None: the keywords it uses then mean the same in every candidate draft
    (``candidate_drafts``, which refuses a document no single draft reads).

    Raises:
        ValueError: ``draft`` is not one of ``DRAFTS``.
        UnsupportedSchemaError: a root ``$schema`` naming draft 3 or earlier; see also
            ``candidate_drafts``.
    """
    if draft is not None:
        if draft not in DRAFTS:
            raise ValueError(f"draft must be one of {DRAFTS} or None, got {draft!r}")
        return draft
    declared = document.get("$schema") if isinstance(document, dict) else None
    if before_draft_4(declared):
        raise UnsupportedSchemaError("$schema", "", f"{declared!r} names draft 3 or earlier (supported: "
                                                    f"{', '.join(DRAFTS)})")
    named = draft_named(declared)
    if named is not None:
        return named
    candidate_drafts(document)
    return None


def identifier_keyword(draft: Optional[str]) -> str:
    """The keyword naming a schema's base URI under ``draft``."""
    return "id" if draft == "4" else "$id"


def candidate_drafts(document: Any) -> tuple[str, ...]:
    """The drafts whose vocabulary holds every draft keyword ``document`` uses, in ``DRAFTS``
    order (an ``items`` array rules out 2020-12, where it is an invalid schema; a numeric
    exclusive bound draft 4, where it is a flag). O(schema size).

    Raises:
        UnsupportedSchemaError: a draft-4 boolean ``exclusiveMinimum``/``exclusiveMaximum``
            (2020-12's validators read it as the number 0 or 1), keywords no single draft
            holds together, or, where draft 4 remains a candidate, an ``id`` that could change
            what a ``$ref`` resolves to (one below the root, or one at the root beside a
            reference that is not a bare fragment); each names the keyword and asks for the draft.
    """
    candidates = set(DRAFTS)
    first_use: dict[str, str] = {}
    identifiers: list[tuple[str, bool]] = []  # draft 4's "id": (pointer, at the root)
    references: list[str] = []
    for schema, pointer, parent in schema_objects(document):
        if isinstance(schema.get("id"), str):
            identifiers.append((pointer, parent is None))
        if isinstance(schema.get("$ref"), str):
            references.append(schema["$ref"])
        for keyword, value in schema.items():
            if keyword not in DRAFT_KEYWORDS or keyword in ENFORCED_EVERYWHERE:
                continue
            if keyword in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                raise UnsupportedSchemaError(keyword, pointer, "a boolean bound is draft 4's (later drafts' "
                                             "validators read it as the number 0 or 1); name the draft "
                                             "(draft='4', or $schema)")
            fits = {d for d in candidates if keyword in VOCABULARIES[d]}
            if keyword == "items" and isinstance(value, list):
                fits.discard("2020-12")
            if keyword in ("exclusiveMinimum", "exclusiveMaximum"):
                fits.discard("4")  # a number: draft 4 reads it as the flag of minimum/maximum
            if not fits:
                earlier = ", ".join(f"{k!r} (at {w or '/'})" for k, w in first_use.items())
                raise UnsupportedSchemaError(keyword, pointer, f"no draft has both it and {earlier}; name the draft "
                                             "(draft=, or $schema)")
            if fits != candidates:
                first_use[keyword] = pointer
            candidates = fits
    if "4" in candidates and identifiers and references:
        # draft 4 reads "id" as a base URI, later drafts as an annotation: references may differ
        nested = [p for p, root in identifiers if not root]
        if nested or any(not r.startswith("#") for r in references):
            where = nested[0] if nested else ""
            raise UnsupportedSchemaError("id", where, "draft 4 reads it as a base URI and later drafts as an "
                                                      "annotation, and the references here may resolve "
                                                      "differently; name the draft (draft=, or $schema)")
    return tuple(d for d in DRAFTS if d in candidates)


def read_keywords(schema: dict[str, Any], draft: str, pointer: str) -> dict[str, Any]:
    """The keywords of one schema object in the compiler's vocabulary, as ``draft`` reads them
    (a shallow copy; subschemas are not entered): keywords the draft does not define are dropped
    (annotations there; ``ENFORCED_EVERYWHERE`` excepted); draft 4's boolean exclusive bounds
    become numeric ones; ``additionalItems``
    beside a schema-valued ``items`` (which it does not constrain) is dropped. (With no draft
    named nothing is rewritten: every candidate draft reads the keywords alike.)

    Raises:
        SchemaError: a bound spelled for another draft, or an ``items`` array under 2020-12.
    """
    vocabulary = VOCABULARIES[draft]
    out = {k: v for k, v in schema.items() if k not in DRAFT_KEYWORDS or k in vocabulary or k in ENFORCED_EVERYWHERE}
    for keyword, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if keyword not in out:
            continue
        if draft == "4":
            if not isinstance(out[keyword], bool):
                raise SchemaError(f"{keyword!r} must be a boolean under draft 4, got {out[keyword]!r}", pointer)
            strict = out.pop(keyword)
            if strict and bound in out:
                out[keyword] = out.pop(bound)
        elif isinstance(out[keyword], bool):
            raise SchemaError(f"{keyword!r} must be a number under draft {draft} (a boolean is draft 4's)", pointer)
    if draft == "2020-12" and isinstance(out.get("items"), list):
        raise SchemaError("'items' must be a schema under draft 2020-12 (an array of schemas is 'prefixItems')",
                          pointer)
    if "additionalItems" in out and not isinstance(out.get("items"), list):
        del out["additionalItems"]
    return out
