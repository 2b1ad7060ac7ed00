"""Keywords no draft defines: annotations, as the specification and every validator read them.

A JSON Schema validator ignores a keyword its draft does not define (2020-12, section 6.5: an
unknown keyword is collected as an annotation; drafts 4-7 say the same in their own words). Real
schemas are full of them: editor hints (``markdownDescription``, ``propertyOrder``), vendor
extensions (``x-kubernetes-...``, ``javaType``), keywords a preprocessor renamed away
(``_format``), misplaced ones (``name`` beside ``type``). None of them changes which documents
validate, so none of them changes the grammar.

``KnownKeywords.read(schema, pointer)`` gives the keywords of one schema object that mean
something to some supported draft, and decides about each other one:

* a keyword of JSON Schema draft 3 (``divisibleBy``, ``disallow``, ``extends``), which no
  supported draft reads but whose author meant a constraint, is refused
  (``UnsupportedSchemaError`` naming it; ``drafts.choose_draft`` refuses a root ``$schema``
  naming draft 3 or earlier);
* a keyword that looks like a misspelling of a draft keyword (the same letters in another case,
  one edit away, a ``$`` dropped: ``anyof``, ``additionalPropeties``, ``requried``, ``ref``)
  is ignored with a ``SchemaWarning`` naming it, its pointer and the keyword it resembles: the
  schema's author probably meant a constraint that no validator applies either;
* any other is ignored silently;
* with ``unknown_keywords="error"`` every one of them is refused instead.

Cost: O(keywords) per schema object, and O(draft keywords x length) per unknown keyword.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...errors import SchemaWarning, UnsupportedSchemaError
from .drafts import DRAFT_KEYWORDS
from .keywords import ANNOTATIONS

#: What ``unknown_keywords=`` accepts.
UNKNOWN_KEYWORD_MODES = ("ignore", "error")

#: Keywords the supported drafts define without asserting anything: ``ANNOTATIONS``, and draft
#: 4's identifier ``id`` (read by ``refs`` under draft 4, then dropped).
DEFINED_ANNOTATIONS = ANNOTATIONS | {"id"}

#: Draft 3's constraint keywords that no later draft kept: their authors meant a constraint.
DRAFT_3_KEYWORDS = {"divisibleBy": "multipleOf", "disallow": "not", "extends": "allOf"}

def _one_edit(a: str, b: str) -> bool:
    """One insertion, deletion, substitution or adjacent transposition turns ``a`` into ``b``."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) < len(b):  # one letter inserted at i
        return a[i:] == b[i + 1:]
    if a[i + 1:] == b[i + 1:]:  # substituted at i
        return True
    return i + 1 < len(a) and a[i] == b[i + 1] and a[i + 1] == b[i] and a[i + 2:] == b[i + 2:]


#: The keywords a misspelling is compared with: every draft keyword that asserts or applies.
_TARGETS = tuple(sorted(k for k in DRAFT_KEYWORDS if not k.startswith("$") or k == "$ref"))


def misspelling_of(keyword: str) -> str | None:
    """The draft keyword an unknown ``keyword`` looks like a misspelling of, or None: the same
    letters in another case, a dropped ``$``, or one edit (insertion, deletion, substitution,
    adjacent transposition) between words of four or more letters, so that short words
    (``id``/``if``, ``note``/``not``) are not confused. O(keywords x length)."""
    folded = keyword.lower()
    for target in _TARGETS:
        if target.lower() == folded or target.lower() == "$" + folded:
            return target
    if len(folded) < 4:
        return None
    for target in _TARGETS:
        if len(target) >= 4 and _one_edit(target.lower(), folded):
            return target
    return None


class KnownKeywords:
    """The keywords of schema objects that some supported draft defines (see the module text)."""

    def __init__(self, unknown_keywords: str = "ignore") -> None:
        if unknown_keywords not in UNKNOWN_KEYWORD_MODES:
            raise ValueError(f"unknown_keywords must be one of {UNKNOWN_KEYWORD_MODES}, got {unknown_keywords!r}")
        self.strict = unknown_keywords == "error"

    def known(self, keyword: Any) -> bool:
        return not isinstance(keyword, str) or keyword in DRAFT_KEYWORDS or keyword in DEFINED_ANNOTATIONS

    def read(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """``schema`` without the keywords no supported draft defines (``schema`` itself when it
        has none). Warns about likely misspellings (``refs.view`` reads each schema object once,
        so each warns once).

        Raises:
            UnsupportedSchemaError: a draft-3 keyword, or any unknown keyword under
                ``unknown_keywords="error"``.
        """
        unknown = [k for k in schema if not self.known(k)]
        if not unknown:
            return schema
        for keyword in unknown:
            if keyword in DRAFT_3_KEYWORDS:
                raise UnsupportedSchemaError(keyword, pointer, f"a draft 3 keyword (draft 3 is not supported; "
                                                               f"later drafts spell it {DRAFT_3_KEYWORDS[keyword]!r})")
            if self.strict:
                raise UnsupportedSchemaError(keyword, pointer, "no supported draft defines it (an annotation to "
                                                               "validators; refused under unknown_keywords='error')")
            guess = misspelling_of(keyword)
            if guess is not None:
                warnings.warn(SchemaWarning(keyword, pointer, guess), stacklevel=2)
        return {k: v for k, v in schema.items() if k not in unknown}
