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

Under no particular draft, the compiler reads a document so that what it admits is valid under
every draft: ``$ref`` siblings are enforced (fewer documents than drafts 4-7 admit, the same as
later drafts), both anchor spellings are found, and a ``$ref`` beside an ``$id`` is compiled only
where both readings of that ``$id`` reach the same schema. Naming the draft (or declaring it with
``$schema``) admits exactly what that draft's validator accepts.
"""

from __future__ import annotations

from typing import Any, Optional

#: The drafts a document can be read under.
DRAFTS = ("4", "6", "7", "2019-09", "2020-12")
#: Drafts that ignore the keywords beside ``$ref``.
LEGACY = frozenset({"4", "6", "7"})
#: Drafts that apply them (and know ``$defs`` and ``$anchor``).
MODERN = frozenset({"2019-09", "2020-12"})
#: The ``jsonschema`` validator class that judges each draft.
VALIDATOR_NAMES = {"4": "Draft4Validator", "6": "Draft6Validator", "7": "Draft7Validator",
                   "2019-09": "Draft201909Validator", "2020-12": "Draft202012Validator"}

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


def choose_draft(document: Any, draft: Optional[str]) -> Optional[str]:
    """The draft to read ``document`` under: ``draft`` when given, else its root ``$schema``'s.

    Raises:
        ValueError: ``draft`` is not one of ``DRAFTS``.
    """
    if draft is not None:
        if draft not in DRAFTS:
            raise ValueError(f"draft must be one of {DRAFTS} or None, got {draft!r}")
        return draft
    if isinstance(document, dict):
        return draft_named(document.get("$schema"))
    return None


def identifier_keyword(draft: Optional[str]) -> str:
    """The keyword naming a schema's base URI under ``draft``."""
    return "id" if draft == "4" else "$id"
