"""Keywords compiled by rewriting the schema into ones the compiler builds directly:

* ``oneOf`` → ``anyOf``: branches ``disjoint`` proves disjoint as they are, others
  conjoined with the complements (``complement``) of the branches they may overlap;
* ``dependentSchemas`` (and schema-valued ``dependencies``) → an ``anyOf`` over which of their
  keys are present (disjoint branches);
* ``if``/``then``/``else`` → ``(if and then) or (not if and else)``, ``not if`` from
  ``complement``;
* ``not`` → the union ``complement`` finds, or a narrower ``type``;
* ``unevaluatedProperties``/``unevaluatedItems`` → keys ``merge`` reads after merging the
  schema's own conjunction.

Each rewritten schema is a new dict, made once per (schema, reason), kept alive and resolving
``$ref`` like the original, so the compiler's identity-keyed memo tables stay sound.
"""

from __future__ import annotations

from typing import Any

from ...errors import SchemaError, UnsupportedSchemaError
from ...limits import active
from .complement import complement, pruned_product
from .disjoint import disjoint, view
from .keywords import (ANNOTATIONS, DEPENDENCY_SCHEMA, TYPES, UNEVALUATED_ITEMS, UNEVALUATED_PROPERTIES, Resolve,
                       pointer_join)
from .drafts import LEGACY
from .refs import RefIndex


def declared_types(schema: dict[str, Any], pointer: str) -> list[str] | None:
    """The types ``type`` names (``integer`` dropped beside ``number``), None without ``type``."""
    if "type" not in schema:
        return None
    value = schema["type"]
    names = value if isinstance(value, list) else [value]
    if not names:
        raise SchemaError("'type' must not be an empty array", pointer_join(pointer, "type"))
    for name in names:
        if not isinstance(name, str) or name not in TYPES:
            raise SchemaError(f"unknown type {name!r}", pointer_join(pointer, "type"))
    if len(set(names)) != len(names):
        raise SchemaError("'type' lists a type twice", pointer_join(pointer, "type"))
    # integer ⊂ number: listing both adds nothing but ambiguity
    return [n for n in names if not (n == "integer" and "number" in names)]


#: Keywords that constrain values of one type only (every value of another type passes them).
_KINDS_OF_KEYWORDS = {
    "object": frozenset({"properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                         "minProperties", "maxProperties", "dependentRequired", "dependencies", "dependentSchemas",
                         "unevaluatedProperties"}),
    "array": frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains",
                        "minContains", "maxContains", "unevaluatedItems"}),
    "string": frozenset({"minLength", "maxLength", "pattern"}),  # (not format: some name numbers)
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "boolean": frozenset(),
    "null": frozenset(),
}
_KIND_OF_KEYWORD = {keyword: kind for kind, words in _KINDS_OF_KEYWORDS.items() for keyword in words}


class Rewriter:
    """The rewrites of one compilation (memoised per schema object and reason)."""

    def __init__(self, refs: RefIndex, resolve: Resolve, keep: list[Any]) -> None:
        self.refs = refs
        self.resolve = resolve
        self._keep = keep
        self._views: dict[tuple[int, str], dict[str, Any]] = {}

    def positive(self, schema: dict[str, Any], pointer: str) -> dict[str, Any] | None:
        """``schema`` with every keyword above rewritten (None: it admits nothing)."""
        if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
            for keyword in ("not", "if"):
                if keyword in schema:
                    # what they evaluate is not what their rewriting into allOf branches would
                    raise UnsupportedSchemaError("unevaluatedProperties" if "unevaluatedProperties" in schema
                                                 else "unevaluatedItems", pointer, f"beside {keyword!r}")
            schema = self.unevaluated_as_marks(schema)
        if "oneOf" in schema:
            schema = self.one_of_as_any_of(schema, pointer)
        if "dependentSchemas" in schema or isinstance(schema.get("dependencies"), dict):
            schema = self.dependent_schemas_as_any_of(schema, pointer)
        if "if" in schema or "then" in schema or "else" in schema:
            schema = self.if_as_any_of(schema, pointer)
        if "not" in schema:
            return self.without_not(schema, pointer)
        return schema

    def without_not(self, schema: dict[str, Any], pointer: str) -> dict[str, Any] | None:
        """``schema`` with ``not`` turned into positive keywords (None: it admits nothing): the
        union of the schemas ``complement`` finds for what ``not`` rejects, as one more
        ``allOf`` branch, or, when that union is only types, a narrower ``type``."""
        done = self._views.get((id(schema), "not"))  # the rewrite depends on the schema alone
        if done is not None:
            return done
        rest = {k: v for k, v in schema.items() if k != "not"}
        rejected = complement(schema["not"], self.resolve, pointer, "not", within=rest)
        if not rejected:
            return None
        if all(isinstance(r, dict) and set(r) == {"type"} for r in rejected):
            kept = {t for r in rejected for t in (r["type"] if isinstance(r["type"], list) else [r["type"]])}
            if "number" in kept:
                kept.add("integer")
            own = declared_types(schema, pointer) or list(TYPES)
            allowed = [t for t in own if t in kept]
            if not allowed:
                return None
            # new dicts, never ``rest`` changed: ``complement`` saw it, and memo tables key on ids
            rewritten = dict(rest, type=allowed)
        else:
            rewritten = dict(rest, allOf=list(schema.get("allOf", [])) + [{"anyOf": rejected}])
        return self.view(schema, "not", rewritten)

    def if_as_any_of(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """``if``/``then``/``else`` as ``(if and then) or (not if and else)``, ``not if`` from
        ``complement``; one more ``allOf`` branch. Without ``if``, ``then``/``else`` do
        nothing (as the specification says)."""
        done = self._views.get((id(schema), "if"))  # the rewrite depends on the schema alone
        if done is not None:
            return done
        rest = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        if "if" in schema and ("then" in schema or "else" in schema):  # alone, each of them constrains nothing
            condition = schema["if"]
            otherwise = complement(condition, self.resolve, pointer, "if",
                                   within={"allOf": [rest, schema.get("else", True)]})
            branches = [{"allOf": [condition, schema.get("then", True)]}]
            if otherwise:
                branches.append({"allOf": [{"anyOf": otherwise}, schema.get("else", True)]})
            rest = dict(rest, allOf=list(schema.get("allOf", [])) + [{"anyOf": branches}])  # (as in without_not)
        return self.view(schema, "if", rest)

    def unevaluated_as_marks(self, schema: dict[str, Any]) -> dict[str, Any]:
        """``schema`` with ``unevaluatedProperties``/``unevaluatedItems`` under keys ``merge``
        reads once the conjunction of the schema's own ``$ref`` and ``allOf`` is known (then
        what they leave unevaluated is what a merged ``additionalProperties``/``items`` governs).
        ``anyOf`` branches are merged one at a time, so each sees the keys its branch evaluates:
        a valid instance that needs two branches' keys is rejected, never an invalid one accepted."""
        done = self._views.get((id(schema), "unevaluated"))  # the rewrite depends on the schema alone
        if done is not None:
            return done
        rewritten = {k: v for k, v in schema.items() if k not in ("unevaluatedProperties", "unevaluatedItems")}
        if "unevaluatedProperties" in schema:
            rewritten[UNEVALUATED_PROPERTIES] = schema["unevaluatedProperties"]
        if "unevaluatedItems" in schema:
            rewritten[UNEVALUATED_ITEMS] = schema["unevaluatedItems"]
        return self.view(schema, "unevaluated", rewritten)

    def dependent_schemas_as_any_of(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """``dependentSchemas`` (and ``dependencies`` with schema values) as an ``anyOf`` over which
        of their keys are present: one branch per subset, each requiring its keys, forbidding
        the others and holding their schemas. The branches are disjoint, so the union is exact;
        2^n branches for n keys (``Limits.dependent_schemas``)."""
        done = self._views.get((id(schema), "dependentSchemas"))  # the rewrite depends on the schema alone
        if done is not None:
            return done
        dependent: list[tuple[str, Any]] = []
        rest = {k: v for k, v in schema.items() if k != "dependentSchemas"}
        for keyword in ("dependentSchemas", "dependencies"):
            value = schema.get(keyword)
            if value is None:
                continue
            if not isinstance(value, dict):
                raise SchemaError(f"'{keyword}' must be an object", pointer_join(pointer, keyword))
            for key, sub in value.items():
                if keyword == "dependencies" and isinstance(sub, list):
                    continue  # the array form stays (objects)
                if sub is True or (isinstance(sub, dict) and all(k in ANNOTATIONS for k in sub)):
                    continue
                if keyword == "dependencies" and self.refs.draft not in LEGACY:
                    sub = {DEPENDENCY_SCHEMA: True, "allOf": [sub]}  # (merge: it evaluates no key there)
                    self.refs.alias(sub, schema)
                    self._keep.append(sub)
                dependent.append((key, sub))
            if keyword == "dependencies":
                arrays = {k: v for k, v in value.items() if isinstance(v, list)}
                rest.pop("dependencies")
                if arrays:
                    rest["dependencies"] = arrays
        if not dependent:
            return schema if "dependentSchemas" not in schema else self.view(schema, "dependentSchemas", rest)
        if len(dependent) > active().dependent_schemas:
            raise UnsupportedSchemaError("dependentSchemas", pointer, f"more than {active().dependent_schemas} keys with "
                                                                      "dependent schemas")
        if "anyOf" in rest:
            raise UnsupportedSchemaError("dependentSchemas", pointer, "beside 'anyOf' or 'oneOf' (the product is "
                                                                      "not built)")
        branches = []
        for mask in range(1 << len(dependent)):
            present = [(k, sub) for i, (k, sub) in enumerate(dependent) if mask >> i & 1]
            absent = [k for i, (k, _sub) in enumerate(dependent) if not mask >> i & 1]
            branch: dict[str, Any] = {"properties": {k: False for k in absent}, "required": [k for k, _ in present]}
            if present:
                branch["allOf"] = [sub for _k, sub in present]
            self.refs.alias(branch, schema)
            self._keep.append(branch)
            branches.append(branch)
        rest["anyOf"] = branches
        return self.view(schema, "dependentSchemas", rest)

    def view(self, schema: dict[str, Any], why: str, rewritten: dict[str, Any]) -> dict[str, Any]:
        """One rewritten copy of ``schema`` per reason, kept alive and resolving references
        like the original (ids key the memo tables)."""
        key = (id(schema), why)
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = rewritten
            self._keep.extend((schema, found))
            self.refs.alias(found, schema)
        return found

    def one_of_as_any_of(self, schema: dict[str, Any], pointer: str) -> dict[str, Any]:
        """``schema`` with ``oneOf`` read as an ``anyOf``. Branches that ``disjoint`` proves
        apart (pair by pair; O(branches²) proofs) stay as they are: a value passing one fails the
        other. A branch that overlaps others becomes, exactly, "this branch and none of those":
        ``B_i and not B_j and ...``, each ``not B_j`` a union from ``complement``, the
        product written out less the conjunctions proved empty (at most ``Limits.one_of_terms`` in
        all, else refused)."""
        done = self._views.get((id(schema), "oneOf"))  # the rewrite depends on the schema alone
        if done is not None:
            return done
        where = pointer_join(pointer, "oneOf")
        branches = schema["oneOf"]
        if not isinstance(branches, list) or not branches:
            raise SchemaError("'oneOf' must be a non-empty array", where)
        if "anyOf" in schema:
            raise UnsupportedSchemaError("oneOf", pointer, "next to 'anyOf' (the product is not built)")
        if len(branches) > active().one_of_branches:
            raise UnsupportedSchemaError("oneOf", pointer, f"more than {active().one_of_branches} branches to prove apart")
        siblings = {k: v for k, v in schema.items() if k != "oneOf" and k not in ANNOTATIONS}
        shared = self._passed_by_two(branches, where)
        if shared:
            # every value of these types passes two branches or more (object keywords say nothing
            # of a string): none of them passes the oneOf
            kept = [t for t in TYPES if t not in shared and not (t == "integer" and "number" in shared)]
            siblings = dict(siblings, allOf=list(siblings.get("allOf", [])) + [{"type": kept} if kept else False])
        # the proofs may use what the siblings already rule out ("type": "object" beside the branches);
        # each merged once here rather than once per proof (O(branches²) of them)
        views = [self._merged({"allOf": [siblings, branch]} if siblings else branch, where) for branch in branches]
        overlapping: list[list[int]] = [[] for _ in branches]
        for i, first in enumerate(views):
            for j in range(i + 1, len(views)):
                if not disjoint(first, views[j], self.resolve, where):
                    overlapping[i].append(j)
                    overlapping[j].append(i)
        rewritten = {k: v for k, v in schema.items() if k != "oneOf"}
        if shared:
            rewritten["allOf"] = siblings["allOf"]
        rewritten["anyOf"] = self._exclusive_branches(branches, views, overlapping, pointer) \
            if any(overlapping) else branches
        return self.view(schema, "oneOf", rewritten)

    def _merged(self, schema: Any, pointer: str) -> Any:
        """``schema`` with its ``$ref``/``allOf`` merged (``disjoint.view``), or as it is where the
        merge refuses (the proofs then claim nothing of it)."""
        try:
            merged = view(schema, self.resolve, pointer)
        except UnsupportedSchemaError:
            return schema
        if isinstance(merged, dict):
            self._keep.append(merged)
        return merged

    def _passed_by_two(self, branches: list[Any], pointer: str) -> set[str]:
        """The JSON types (``number`` standing for both numeric ones) every value of which two
        branches or more pass: those of branches whose keywords all constrain other types only
        (an object-only branch passes every string). Conservative: a branch with any other
        keyword (``type``, ``enum``, ``not``, an applicator...) counts for no type."""
        counts: dict[str, int] = {}
        for branch in branches:
            try:
                s = view(branch, self.resolve, pointer)
            except UnsupportedSchemaError:
                continue
            passed = set(_KINDS_OF_KEYWORDS) if s is not False else set()
            for keyword in s if isinstance(s, dict) else ():
                if keyword in ANNOTATIONS:
                    continue
                owner = _KIND_OF_KEYWORD.get(keyword)
                if owner is None:
                    passed = set()
                    break
                passed.discard(owner)
            for kind in passed:
                counts[kind] = counts.get(kind, 0) + 1
        shared = {kind for kind, count in counts.items() if count >= 2}
        return shared | ({"integer"} if "number" in shared else set())

    def _exclusive_branches(self, branches: list[Any], views: list[Any], overlapping: list[list[int]],
                            pointer: str) -> list[Any]:
        """Each branch conjoined with the complements of the branches it may overlap, as a flat
        list of conjunctions (``[False]`` when none is left); ``views[i]`` is branch ``i`` with
        the ``oneOf``'s siblings, what the complements it meets are built within."""
        where = pointer_join(pointer, "oneOf")
        # the values branch j rejects: one union for every branch it meets where it can be built
        # alone (None where it cannot), else one per branch met
        alone: dict[int, list[Any] | None] = {}
        met: dict[tuple[int, int], list[Any]] = {}

        def outside(j: int, i: int) -> list[Any]:
            if j not in alone:
                try:
                    alone[j] = complement(branches[j], self.resolve, pointer_join(where, j), "oneOf")
                except UnsupportedSchemaError:
                    alone[j] = None
            found = alone[j]
            if found is not None:
                return found
            if (j, i) not in met:
                try:
                    met[(j, i)] = complement(branches[j], self.resolve, pointer_join(where, j), "oneOf",
                                             within=views[i])
                except UnsupportedSchemaError as exc:
                    why = exc.detail or f"{exc.keyword!r} is unknown"
                    raise UnsupportedSchemaError("oneOf", pointer, f"branch {j} is not provably disjoint from "
                                                                   f"branch {i}, and {why} "
                                                                   f"(at {exc.pointer or '/'})") from exc
            return met[(j, i)]

        out: list[Any] = []
        for i, branch in enumerate(branches):
            terms = pruned_product([branch], (outside(j, i) for j in overlapping[i]), self.resolve, where,
                                   active().one_of_terms - len(out), lambda: UnsupportedSchemaError(
                                       "oneOf", pointer, f"more than {active().one_of_terms} conjunctions would say "
                                                         "that exactly one branch holds"))
            for term in terms:
                conjunction = {"allOf": term}
                self._keep.append(conjunction)
                out.append(conjunction)
        return out or [False]
