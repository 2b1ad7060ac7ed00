"""JSON objects: the grammar of the members a schema object admits.

Keywords: ``properties``, ``required``, ``additionalProperties`` (a schema; absent means any
value, as the specification says, unless the compiler is asked to forbid keys outside the schema),
``patternProperties``, ``propertyNames``, ``minProperties``/``maxProperties``, and
``dependentRequired``/``dependencies`` in array form.

What the grammar writes:

* **Named keys** first, each at most once, in a fixed order: ``properties`` order, then keys that
  ``required`` or a dependency names and ``properties`` does not. A named key's value is the
  conjunction of its ``properties`` schema and every ``patternProperties`` schema whose pattern
  matches the key, or ``additionalProperties`` when neither applies. Named keys are written as
  ``json.dumps`` spells them (raw UTF-8 or ``\\uXXXX``).
* **Other keys** after them, any number: a JSON string that decodes to none of the named keys
  (whatever escapes spell it), split into regions by which patterns match it (``region`` =
  the string language ∩ matching patterns ∩ ¬ the others, empty regions dropped), each region's
  value the conjunction of its patterns' schemas, or ``additionalProperties`` for keys no pattern
  matches. ``propertyNames`` narrows every key: named keys it rejects cannot be written; other
  keys are intersected with its string language (an ``enum``/``const`` there turns the other
  keys into named ones).

Two other keys may spell the same name; a parser keeps the last value, which passed the same
schema, so the document stays valid, but it then has fewer distinct keys than members. Member
counts bound ``maxProperties`` exactly for that reason, and ``minProperties`` exactly whenever
it is at most one more than the required keys (any other key then adds at least one distinct
name); larger minimums with other keys allowed are refused.

The members are a finite automaton: its state is the next named key, whether a member has been
written (for the comma), the named keys owed to dependencies, the skipped keys a later key
depends on, and the member count. Each reachable state is one rule, built breadth first, so a
500-key object is 1,000 rules and no recursion; ``Limits.object_states`` bounds the rest. An
optional key's skip is a unit rule (``A → B``), which the parser follows as a tail call: after a
member, the threads of every later key share the object's one return point, so a scan costs
O(later keys). (A balanced tree of key ranges, O(keys log keys) symbols where unit rules were
removed, made the parser merge stacks of return points at every step: on SchemaStore's
``claude-code-settings.json``, 340 optional keys, masks took 20× longer.)
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any, NamedTuple

from ...errors import RegexTooComplex, SchemaError, UnsupportedSchemaError
from ...limits import active, check_deadline
from ...ir.grammar import Symbol
from ...ir.regex import NOTHING
from .keywords import ANNOTATIONS, SIDES, SchemaCompiler, non_negative_int, pointer_join
from .merge import Conjunction, flatten, merge
from ..regex import Dialect


#: ``_free_witness``'s answer for a region with no key at all
_EMPTY = object()

_STRING_KEYWORDS = frozenset({"pattern", "minLength", "maxLength", "format"})


class NamedKey(NamedTuple):
    name: str
    required: bool
    value: Symbol


class ObjectState(NamedTuple):
    index: int  # next named key to decide
    wrote: bool  # a member has been written (the next one needs a comma)
    owed: frozenset[str]  # later named keys that dependencies require
    skipped: frozenset[str]  # skipped named keys that some later key depends on
    count: int  # members written, saturated at the largest count that matters


def key_text(name: str) -> bytes:
    """One JSON spelling of ``name`` (ASCII, so any name can be written)."""
    return json.dumps(name).encode("ascii")


class ObjectBuilder:
    """Builds the rule of one object schema (see the module docstring)."""

    def __init__(self, compiler: SchemaCompiler, schema: dict[str, Any], pointer: str) -> None:
        self.c = compiler
        self.schema = schema
        self.pointer = pointer
        self.exprs = compiler.grammar.exprs

    # -- the keys ------------------------------------------------------------------------------

    def build(self) -> Symbol:
        schema, pointer = self.schema, self.pointer
        properties: dict[str, Any] = schema.get("properties", {})
        patterns: dict[str, Any] = schema.get("patternProperties", {})
        additional = schema.get("additionalProperties", False if self.c.extra_keys == "forbid" else True)
        required: list[str] = schema.get("required", [])
        depends = self._dependencies()
        key_expr, key_names = self._key_language()
        # Python's re and ECMA-262 disagree on some keys (``é`` is ``\w`` in one): a key a pattern
        # surely matches (under both) takes its schema; a key it may match (under either) takes
        # its schema too, and additionalProperties as well unless another pattern surely matches
        self._pattern_exprs = {p: self._pattern_key(p, "both") for p in patterns}
        self._pattern_maybe = {p: self._pattern_key(p, "either") for p in patterns}

        # named keys in order: properties, then required, dependent and propertyNames keys
        names = list(dict.fromkeys([*properties, *required, *depends, *(k for ks in depends.values() for k in ks),
                                    *(key_names or ())]))
        check_deadline()
        optional = len(names) - len(set(required) & set(names))
        if optional > active().optional_keys:
            raise UnsupportedSchemaError("properties", pointer, f"{optional:,} optional keys (at most "
                                                                f"{active().optional_keys:,} per object)")
        allowed = {n for n in names if self._key_allowed(n, key_expr, key_names)}
        check_deadline()
        sides = schema.get(SIDES, ())
        schemas = {n: self._value_schemas(n, properties, patterns, additional) + self._side_schemas(n, sides)
                   for n in names}
        check_deadline()
        # a key whose value admits nothing cannot be written, nor can a key depending on one
        impossible = {n for n in names if n not in allowed or any(s is False for s in schemas[n])}
        changed = True
        while changed:
            changed = False
            for name, needs in depends.items():
                if name not in impossible and any(k in impossible for k in needs):
                    impossible.add(name)
                    changed = True
        empty_because = [n for n in required if n in impossible]
        if empty_because:
            self.c.empty_reasons.append((pointer, f"required key {empty_because[0]!r} cannot be written "
                                                  "(its value or propertyNames admits nothing)"))
            return self._rule("object", [])
        keys: list[NamedKey] = []
        for name in names:
            if name in impossible:
                continue
            value = self._value_rule(schemas[name], self._named_pointer(name, properties, patterns))
            keys.append(NamedKey(name, name in required, value))
        extra = [] if key_names is not None else self._other_keys(names, key_expr, patterns, additional, sides)
        return self._members(keys, {n: ks for n, ks in depends.items() if n not in impossible}, extra)

    def _dependencies(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for keyword in ("dependentRequired", "dependencies"):
            value = self.schema.get(keyword)
            if value is None:
                continue
            where = pointer_join(self.pointer, keyword)
            if not isinstance(value, dict):
                raise SchemaError(f"'{keyword}' must be an object", where)
            for name, needs in value.items():
                if needs is True or (isinstance(needs, dict) and all(k in ANNOTATIONS for k in needs)):
                    continue  # a dependent schema that constrains nothing
                if not isinstance(needs, list):
                    raise UnsupportedSchemaError(keyword, where, f"the schema form (for key {name!r}); "
                                                                 "only arrays of keys are supported")
                if not all(isinstance(k, str) for k in needs) or len(set(needs)) != len(needs):
                    raise SchemaError(f"'{keyword}' of {name!r} must be an array of distinct strings", where)
                out.setdefault(name, [])
                out[name].extend(k for k in needs if k != name and k not in out[name])
        return out

    def _key_language(self) -> tuple[int, list[str] | None]:
        """The quoted JSON strings ``propertyNames`` admits as keys, and the finite list of
        names when it is an ``enum``/``const`` (None otherwise)."""
        string = self.c.grammar.lexeme_exprs[self.c.lex.string]
        if "propertyNames" not in self.schema:
            return string, None
        where = pointer_join(self.pointer, "propertyNames")
        names_schema = self.schema["propertyNames"]
        if isinstance(names_schema, Conjunction) or (isinstance(names_schema, dict)
                                                     and ("$ref" in names_schema or "allOf" in names_schema)):
            parts = flatten(list(names_schema) if isinstance(names_schema, Conjunction) else [names_schema],
                            self.c.resolve, where)
            names_schema = parts if isinstance(parts, bool) else merge(parts, where)
        if names_schema is True:
            return string, None
        if names_schema is False:
            return NOTHING, []
        if not isinstance(names_schema, dict):
            raise SchemaError("'propertyNames' must be a schema", where)
        for keyword in names_schema:
            if keyword in ANNOTATIONS or keyword in _STRING_KEYWORDS or keyword in ("type", "enum", "const"):
                continue
            if keyword in _OTHER_TYPE_KEYWORDS:
                continue  # constrains values of another type: every key passes it
            raise UnsupportedSchemaError("propertyNames", where, f"keyword {keyword!r} inside it")
        types = names_schema.get("type", "string")
        if "string" not in (types if isinstance(types, list) else [types]):
            return NOTHING, []
        lexeme = self.c.string_lexeme({k: v for k, v in names_schema.items() if k in _STRING_KEYWORDS}, where)
        # a guarded lexeme's expression admits texts its guard refuses: keys take the guard-free subset
        grammar = self.c.grammar
        expr = NOTHING if lexeme is None else grammar.unguarded.get(lexeme, grammar.lexeme_exprs[lexeme])
        if "const" in names_schema or "enum" in names_schema:
            values = [names_schema["const"]] if "const" in names_schema else names_schema["enum"]
            if not isinstance(values, list):
                raise SchemaError("'enum' must be an array", where)
            if "const" in names_schema and "enum" in names_schema:
                values = [v for v in values if v in names_schema["enum"]]
            names = []
            for v in values:
                if isinstance(v, str) and v not in names and self.exprs.matches(expr, key_text(v)):
                    names.append(v)
            return expr, names
        return expr, None

    def _key_allowed(self, name: str, key_expr: int, key_names: list[str] | None) -> bool:
        if key_names is not None:
            return name in key_names
        return self.exprs.matches(key_expr, key_text(name))

    def _pattern_key(self, pattern: Any, dialect: Dialect) -> int:
        """Quoted JSON strings whose decoded text ``pattern`` finds, under ``dialect``."""
        where = pointer_join(self.pointer, "patternProperties")
        exprs = self.exprs
        quote = exprs.literal(b'"')
        return exprs.concat(quote, self.c.pattern_body(pattern, where, dialect), quote)

    def _value_schemas(self, name: str, properties: dict[str, Any], patterns: dict[str, Any],
                       additional: Any) -> list[Any]:
        """The schemas a named key's value must pass."""
        out = [properties[name]] if name in properties else []
        text = key_text(name)
        out.extend(patterns[p] for p in patterns if self.exprs.matches(self._pattern_maybe[p], text))
        if name not in properties and not any(self.exprs.matches(self._pattern_exprs[p], text) for p in patterns):
            out.append(additional)
        return out

    def _side_schemas(self, name: str, sides: tuple[tuple[frozenset[str], tuple[str, ...], Any], ...]) -> list[Any]:
        """The ``additionalProperties`` of each merged conjunct (``SIDES``) that a named key
        reaches: the conjunct neither names it nor has a pattern that surely matches it."""
        text = key_text(name)
        return [rest for names, own, rest in sides
                if name not in names and not any(self.exprs.matches(self._pattern_exprs[p], text) for p in own)]

    def _named_pointer(self, name: str, properties: dict[str, Any], patterns: dict[str, Any]) -> str:
        if name in properties:
            return pointer_join(pointer_join(self.pointer, "properties"), name)
        matched = [p for p in patterns if self.exprs.matches(self._pattern_maybe[p], key_text(name))]
        if matched:
            return pointer_join(pointer_join(self.pointer, "patternProperties"), matched[0])
        return pointer_join(self.pointer, "additionalProperties")

    def _value_rule(self, schemas: list[Any], pointer: str) -> Symbol:
        if len(schemas) == 1:
            return self.c.value(schemas[0], pointer)
        return self.c.value(Conjunction(schemas), pointer)

    def _empty_region(self, expr: int, free: int, matched: tuple[str, ...], cores: dict[str, bytes]) -> bool:
        """Whether a region of keys is empty. ``free`` is the same region before the named keys
        are taken out (a superset of ``expr``), the same expression in every object with these
        patterns: its shortest key, found once per compile (``_free_witness``), settles most
        regions at once (it is not a named key, or ``free`` is empty). Then a key made of the
        shortest keys of the patterns that match there, run together, often is one of its keys
        (patterns search, so a key holding each pattern's shortest match matches them all):
        tried next, since a witness proves a region non-empty at once where the derivative
        search over an intersection of searches can take seconds. Memoised per compile (objects
        that name the same keys beside the same patterns ask the same question)."""
        joined = b"".join(cores[p] for p in matched)
        key = (expr, free, joined)
        found = self.c.empty_regions.get(key)
        if found is None:
            found = self.c.empty_regions[key] = self._region_is_empty(expr, free, joined)
        return found

    def _region_is_empty(self, expr: int, free: int, joined: bytes) -> bool:
        if free != expr:
            found = self._free_witness(free)
            if found is _EMPTY:
                return True
            if found is not None and self.exprs.witnessed(expr, found, shortest_of_superset=True):
                return False
        for inner in (joined, joined + b"_", b"_" + joined):
            if self.exprs.witnessed(expr, b'"' + inner + b'"'):
                return False
        # a region is an intersection of searches and their complements: each question gets a
        # tenth of the usual search (RegexTooComplex refuses the patternProperties)
        return self.exprs.is_empty(expr, max(1, active().regex_states // 10))

    def _free_witness(self, free: int) -> bytes | None | object:
        """The shortest key of region ``free`` (``_EMPTY`` when it has none, None when the search
        ran out of its fuel), memoised per compile: every object with the same patterns and
        ``additionalProperties`` asks the same question."""
        memo = self.c.region_witnesses
        if free not in memo:
            try:
                shortest = self.exprs.shortest(free, max(1, active().regex_states // 10))
                memo[free] = _EMPTY if shortest is None else shortest
            except RegexTooComplex:
                memo[free] = None
        return memo[free]

    def _other_keys(self, names: list[str], key_expr: int, patterns: dict[str, Any], additional: Any,
                    sides: tuple[tuple[frozenset[str], tuple[str, ...], Any], ...] = ()) -> list[tuple[Symbol, Symbol]]:
        """(key lexeme, value rule) per non-empty region of keys outside ``names``. A region
        records the patterns that match there and which ``additionalProperties`` still apply:
        the schema's own (index -1) while no pattern surely matches, and each merged
        conjunct's (``SIDES``) while none of its own patterns surely matches."""
        exprs = self.exprs
        if len(patterns) > active().key_patterns:
            raise UnsupportedSchemaError("patternProperties", self.pointer, f"more than {active().key_patterns} patterns")
        base = key_expr
        if names:
            base = exprs.difference(key_expr, exprs.alt(*(self.c.lex.all_spellings(n) for n in names)))
        # (keys, patterns that apply, the additionalProperties that apply too: -1 the schema's own,
        # i the i-th conjunct's)
        # each region beside the same region before the named keys were taken out (_empty_region)
        regions: list[tuple[int, tuple[str, ...], frozenset[int], int]] = \
            [(base, (), frozenset(range(-1, len(sides))), key_expr)]
        owners = {p: frozenset([-1] + [i for i, (_n, own, _r) in enumerate(sides) if p in own]) for p in patterns}
        try:
            # the whole string language less finitely many names is never empty
            if key_expr != self.c.grammar.lexeme_exprs[self.c.lex.string] and exprs.is_empty(base):
                return []
            cores: dict[str, bytes] = {}
            for pattern in patterns:
                sure, maybe = self._pattern_exprs[pattern], self._pattern_maybe[pattern]
                core = exprs.shortest(sure)
                cores[pattern] = b"" if core is None else core[1:-1]  # without the quotes
                split = []
                for expr, matched, unmatched, free in regions:
                    parts = [(exprs.both(expr, sure), matched + (pattern,), unmatched - owners[pattern],
                              exprs.both(free, sure) if free != expr else None),
                             (exprs.difference(expr, maybe), matched, unmatched,
                              exprs.difference(free, maybe) if free != expr else None)]
                    if maybe != sure:  # keys the two dialects disagree on: every schema either reading applies
                        inside = exprs.difference(maybe, sure)
                        parts.append((exprs.both(expr, inside), matched + (pattern,), unmatched,
                                      exprs.both(free, inside) if free != expr else None))
                    for part in parts:
                        region = part if part[3] is not None else part[:3] + (part[0],)
                        if not self._empty_region(region[0], region[3], region[1], cores):
                            split.append(region)
                regions = split
                if len(regions) > active().key_regions:
                    raise UnsupportedSchemaError("patternProperties", self.pointer,
                                                 f"the patterns split keys into more than {active().key_regions} regions")
        except RegexTooComplex as exc:
            raise UnsupportedSchemaError("patternProperties", self.pointer, f"keys too complex to split: {exc}") \
                from exc
        out = []
        for expr, matched, unmatched, _free in regions:
            schemas = [patterns[p] for p in matched] + ([additional] if -1 in unmatched else []) + \
                [sides[i][2] for i in sorted(unmatched) if i >= 0]
            if matched:
                where = pointer_join(pointer_join(self.pointer, "patternProperties"), matched[0])
            else:
                where = pointer_join(self.pointer, "additionalProperties")
            if any(s is False for s in schemas):
                continue
            name = "key " + (" & ".join(f"/{p}/" for p in matched) if matched else "(other)")
            out.append((self.c.grammar.lexeme(expr, name), self._value_rule(schemas, where)))
        return out

    # -- the members automaton -----------------------------------------------------------------

    def _members(self, keys: list[NamedKey], depends: dict[str, list[str]],
                 extra: list[tuple[Symbol, Symbol]]) -> Symbol:
        c, lex, pointer = self.c, self.c.lex, self.pointer
        low, high = _count_bounds(self.schema, pointer)
        if high is not None and high < low:
            c.empty_reasons.append((pointer, f"minProperties {low} > maxProperties {high}"))
            return self._rule("object", [])
        n_required = sum(k.required for k in keys)
        if extra and low > n_required + 1:
            raise UnsupportedSchemaError("minProperties", pointer,
                                         f"{low} members where keys outside the named ones may fill the count (two "
                                         "such keys may spell one name, so member counts cannot bound distinct "
                                         f"keys past {n_required + 1} here)")
        cap = high if high is not None else low
        position = {k.name: i for i, k in enumerate(keys)}
        # skipped keys matter only when a later key depends on them
        needed_later = [set() for _ in range(len(keys) + 1)]
        for i in range(len(keys) - 1, -1, -1):
            needed_later[i] = needed_later[i + 1] | set(depends.get(keys[i].name, ()))
        extra_member = None
        if extra:
            extra_member = self._rule("other member", [lex.seq(key, lex.ws, lex.colon, lex.ws, value)
                                                       for key, value in extra])
        members = [lex.seq(lex.key(k.name), lex.ws, lex.colon, lex.ws, k.value) for k in keys]
        rules: dict[Any, Symbol] = {}
        queue: deque[Any] = deque()

        def state(s: Any) -> Symbol:
            found = rules.get(s)
            if found is None:
                check_deadline()
                if len(rules) >= active().object_states:
                    raise UnsupportedSchemaError("properties", pointer, f"the object needs more than "
                                                                        f"{active().object_states} grammar rules "
                                                                        "(dependencies and property counts multiply)")
                found = rules[s] = c.grammar.rule(f"{pointer or '/'} members#{len(rules)}")
                queue.append(s)
            return found

        def separator(wrote: bool) -> tuple[Symbol, ...]:
            return lex.seq(lex.ws, lex.comma, lex.ws) if wrote else ()

        def close(wrote: bool) -> tuple[Symbol, ...]:
            return lex.seq(lex.ws, lex.close_brace) if wrote else (lex.close_brace,)

        if self.c.property_order == "any":
            if len(keys) > active().any_order_keys:
                raise UnsupportedSchemaError("properties", pointer, f"{len(keys)} named keys in any order (at most "
                                                                    f"{active().any_order_keys}: the automaton has a state "
                                                                    "per set of keys written)")
            # state: (keys written, a member written, count); every step writes a member
            begin = state((frozenset(), False, 0))
            while queue:
                written, wrote, count = queue.popleft()
                alternatives = []
                more = high is None or count < high
                counted = min(count + 1, cap)
                done = all(k.name in written for k in keys if k.required) and \
                    all(d in written for name in written for d in depends.get(name, ()))
                if done and count >= low:
                    alternatives.append(close(wrote))
                for i, key in enumerate(keys):
                    if more and key.name not in written:
                        nxt = state((written | {key.name}, True, counted))
                        alternatives.append(separator(wrote) + members[i] + (nxt,))
                if extra_member is not None and more:
                    alternatives.append(separator(wrote) + (extra_member, state((written, True, counted))))
                c.grammar.define(rules[(written, wrote, count)], alternatives)
            return self._rule("object", [(lex.open_brace,) + lex.seq(lex.ws) + (begin,)])

        if not depends and low == 0 and high is None:
            return self._plain_members(keys, members, extra_member)
        start = state(ObjectState(0, False, frozenset(), frozenset(), 0))
        while queue:
            s = queue.popleft()
            alternatives: list[tuple[Symbol, ...]] = []
            more = high is None or s.count < high
            counted = min(s.count + 1, cap)
            if s.index == len(keys):
                if s.count >= low:
                    alternatives.append(close(s.wrote))
                if extra_member is not None and more:
                    nxt = state(ObjectState(s.index, True, s.owed, s.skipped, counted))
                    alternatives.append(separator(s.wrote) + (extra_member, nxt))
            else:
                key = keys[s.index]
                later = needed_later[s.index + 1]
                needs = depends.get(key.name, ())
                if more and not any(k in s.skipped for k in needs):
                    owed = (s.owed - {key.name}) | {k for k in needs if position[k] > s.index}
                    nxt = state(ObjectState(s.index + 1, True, frozenset(owed),
                                            frozenset(k for k in s.skipped if k in later), counted))
                    alternatives.append(separator(s.wrote) + members[s.index] + (nxt,))
                if not key.required and key.name not in s.owed:
                    skipped = frozenset(k for k in s.skipped | {key.name} if k in later)
                    nxt = state(ObjectState(s.index + 1, s.wrote, s.owed, skipped, s.count))
                    alternatives.append((nxt,))
            c.grammar.define(rules[s], alternatives)
        return self._rule("object", [(lex.open_brace,) + lex.seq(lex.ws) + (start,)])

    def _plain_members(self, keys: list[NamedKey], members: list[tuple[Symbol, ...]],
                       extra_member: Symbol | None) -> Symbol:
        """Named keys in order with no dependencies or counts: the automaton above with the comma
        taken out of the choice. ``pick(i)`` writes the next member, key ``i`` or (when it is
        optional) one chosen by ``pick(i + 1)``; ``after(i)`` follows a member: ``}`` when every
        key from ``i`` on is optional, or a comma and ``pick(i)``. After a member the parse
        expects a comma or ``}`` in one thread, not one thread per later key; after the comma,
        one thread per key that may come next, all on the object's return point (the skips are
        unit rules, followed as tail calls). 2 (keys + 1) rules."""
        c, lex = self.c, self.c.lex
        name = self.pointer or "/"
        n = len(keys)
        comma = lex.seq(lex.ws, lex.comma, lex.ws)
        pick: list[Symbol | None] = [None] * (n + 1)
        after: list[Symbol] = [c.grammar.rule(f"{name} after member #{i}") for i in range(n + 1)]
        if extra_member is not None:
            pick[n] = c.grammar.rule(f"{name} pick other")
            c.grammar.define(pick[n], [(extra_member, after[n])])  # type: ignore[arg-type]
        optional_on = True  # every key from i on is optional
        for i in range(n, -1, -1):
            if i < n:
                check_deadline()
                alternatives = [members[i] + (after[i + 1],)]
                if not keys[i].required and pick[i + 1] is not None:
                    alternatives.append((pick[i + 1],))  # type: ignore[arg-type]
                pick[i] = c.grammar.rule(f"{name} pick from #{i}")
                c.grammar.define(pick[i], alternatives)  # type: ignore[arg-type]
                optional_on = optional_on and not keys[i].required
            closing = [lex.seq(lex.ws, lex.close_brace)] if optional_on else []
            c.grammar.define(after[i], closing + ([comma + (pick[i],)] if pick[i] is not None else []))  # type: ignore[operator]
        begin = ([(lex.close_brace,)] if optional_on else []) + ([(pick[0],)] if pick[0] is not None else [])
        return self._rule("object", [(lex.open_brace,) + lex.seq(lex.ws) + alternative  # type: ignore[operator]
                                     for alternative in begin])

    def _rule(self, what: str, alternatives: list[tuple[Symbol, ...]]) -> Symbol:
        rule = self.c.grammar.rule(f"{self.pointer or '/'} {what}")
        self.c.grammar.define(rule, alternatives)
        return rule


_OTHER_TYPE_KEYWORDS = frozenset({
    "properties", "required", "additionalProperties", "patternProperties", "propertyNames", "minProperties",
    "maxProperties", "dependentRequired", "dependencies", "items", "minItems", "maxItems", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})


def _count_bounds(schema: dict[str, Any], pointer: str) -> tuple[int, int | None]:
    return non_negative_int(schema, "minProperties", pointer) or 0, non_negative_int(schema, "maxProperties", pointer)


def object_rule(compiler: SchemaCompiler, schema: dict[str, Any], pointer: str) -> Symbol:
    """The rule for the objects ``schema`` admits (its object keywords; O(named keys × states))."""
    return ObjectBuilder(compiler, schema, pointer).build()

