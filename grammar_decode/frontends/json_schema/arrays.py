"""JSON arrays: the grammar of the items a schema object admits.

Keywords: ``prefixItems`` and ``items`` (2020-12), ``items`` as an array with
``additionalItems`` (drafts 4 to 2019-09), ``minItems``/``maxItems``, ``contains`` with
``minContains`` and ``maxContains``, ``uniqueItems`` where at most one item is allowed, the
items come from small finite sets (``_unique``), or the items are strings (``_unique_strings``:
checked by the matcher where each item ends, ``engine.unique``).

The items are a finite automaton over (items written, matches of ``contains`` so far), both
saturating where their bound stops mattering: the item at position ``i`` is the ``i``-th prefix
schema or the rest schema, and while ``minContains`` is not reached it may also be written as the
conjunction with ``contains`` (an ambiguous grammar, which the parser takes in its stride: the
language is "at least ``minContains`` items match", exactly). Under ``maxContains`` every item is
written either matching ``contains`` or matching its complement (``not``, ``complement``),
so the count is exact; where the complement cannot be built, ``maxContains`` is refused. A
schema ``false`` at a position
bounds the length. Large counts without a prefix or ``contains`` take O(log bound) rules
(``_counted``), so ``maxItems: 10**8`` is a few dozen rules; so do large ``minContains`` and
``maxContains`` without a prefix or item bounds (``_counted_contains``).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ...errors import RegexTooComplex, UnsupportedSchemaError
from ...limits import active, check_deadline
from ...ir.grammar import Grammar, Symbol, UniqueLexeme
from ...ir.regex import NOTHING
from .disjoint import kinds, literals, view
from .merge import Conjunction, item_positions, same_json
from .keywords import ANNOTATIONS, NOT_PATTERNS, NOT_STRINGS, SchemaCompiler, non_negative_int, pointer_join


def positions(schema: dict[str, Any], pointer: str) -> tuple[list[tuple[Any, str]], Any, str]:
    """The prefix schemas with their pointers, the schema of the items after them, and its pointer."""
    prefix, keyword, rest, rest_keyword = item_positions(schema, pointer)
    where = pointer_join(pointer, keyword)
    return [(s, pointer_join(where, i)) for i, s in enumerate(prefix)], rest, pointer_join(pointer, rest_keyword)


def array_alternatives(c: SchemaCompiler, schema: dict[str, Any], pointer: str) -> list[tuple[Symbol, ...]]:
    """The alternatives for the arrays ``schema`` admits (O(prefix + bounds) rules)."""
    lex = c.lex
    low = non_negative_int(schema, "minItems", pointer) or 0
    high = non_negative_int(schema, "maxItems", pointer)
    if high is not None and high < low:  # a valid schema that admits no array
        c.empty_reasons.append((pointer, f"minItems {low} exceeds maxItems {high}"))
        return []
    prefix, rest, rest_pointer = positions(schema, pointer)
    # a position whose schema is false ends the array before it
    for index, (sub, _where) in enumerate(prefix):
        if sub is False:
            high = index if high is None else min(high, index)
            prefix = prefix[:index]
            break
    if rest is False:
        high = len(prefix) if high is None else min(high, len(prefix))
    prefix = prefix[:high] if high is not None else prefix
    contains, wanted, most = _contains(schema, pointer)
    if most is not None and most < wanted and contains is not False:
        c.empty_reasons.append((pointer, f"minContains {wanted} exceeds maxContains {most}"))
        return []
    if contains is True:  # every item matches
        low, contains, wanted = max(low, wanted), None, 0
        high = most if high is None or (most is not None and most < high) else high
    elif contains is False:  # no item matches: only a lower count means anything
        most = None
    if most is not None and high is not None and most >= high:
        most = None  # bounds nothing
    if contains is not None and wanted == 0 and most is None:
        contains = None
    unique = schema.get("uniqueItems") is True and (high is None or high > 1)
    if unique and contains is not None:
        raise UnsupportedSchemaError("uniqueItems", pointer, "beside contains")
    empty = lex.seq(lex.open_bracket, lex.ws, lex.close_bracket)
    if contains is False and wanted > 0:
        c.empty_reasons.append((pointer, "'contains' is false"))
        return []
    if high is not None and high < max(low, wanted):
        c.empty_reasons.append((pointer, f"fewer items allowed ({high}) than required ({max(low, wanted)})"))
        return []
    if high == 0:
        return [empty]
    if unique:
        strings, distinct = (None, None) if prefix else _unique_strings(c, rest, rest_pointer, high)
        if strings is not None:
            if distinct is not None:  # n distinct values: at most n items, so a comma always has a new one
                high = distinct if high is None else min(high, distinct)
                if high < low:
                    c.empty_reasons.append((pointer, f"uniqueItems over {distinct} values, minItems {low}"))
                    return []
            if strings is False or high == 0:  # no item can be written: only the empty array
                return [empty] if low == 0 else []
            return _counted(c, strings, low, high, pointer, empty)
        return _unique(c, pointer, prefix, (rest, rest_pointer), low, high, empty)
    if contains is not None and max(wanted, most or 0) > active().linear_items:
        if prefix or high is not None or low > max(wanted, 1):
            raise UnsupportedSchemaError("maxContains" if most is not None and most > active().linear_items else
                                         "minContains", pointer, f"counts of contains above {active().linear_items} "
                                         "together with prefixItems, maxItems or a larger minItems")
        return _counted_contains(c, pointer, (rest, rest_pointer), contains, wanted, most, empty)
    if max(low, high or 0) > active().linear_items:
        if prefix or contains is not None:
            raise UnsupportedSchemaError("maxItems" if high is not None and high > active().linear_items else "minItems",
                                         pointer, f"item bounds above {active().linear_items} together with prefixItems "
                                                  "or contains")
        return _counted(c, c.value(rest, rest_pointer), low, high, pointer, empty)
    return _linear(c, pointer, prefix, (rest, rest_pointer), low, high, contains, wanted, most, empty)


def _contains(schema: dict[str, Any], pointer: str) -> tuple[Any, int, int | None]:
    """The ``contains`` schema, how many items must match it at least and at most
    (``(None, 0, None)``: no ``contains``; ``maxContains`` alone means nothing)."""
    if "contains" not in schema:
        return None, 0, None
    wanted = non_negative_int(schema, "minContains", pointer)
    wanted = 1 if wanted is None else wanted
    most = non_negative_int(schema, "maxContains", pointer)
    return schema["contains"], wanted, most


def _linear(c: SchemaCompiler, pointer: str, prefix: list[tuple[Any, str]], rest: tuple[Any, str], low: int,
            high: int | None, contains: Any, wanted: int, most: int | None,
            empty: tuple[Symbol, ...]) -> list[tuple[Symbol, ...]]:
    g, lex = c.grammar, c.lex
    name = pointer or "/"
    top = high if high is not None else max(low, len(prefix), 1)  # counts past top collapse when unbounded
    contains_pointer = pointer_join(pointer, "contains")
    outside = c.retain({"not": contains}) if most is not None else None  # only counted items need it

    def item(index: int, matching: bool | None) -> Symbol:
        """The item at ``index``: matching ``contains`` (True), not matching it (False), or either (None)."""
        sub, where = prefix[index] if index < len(prefix) else rest
        if matching is None:
            return c.value(sub, where)
        if matching:
            return c.value(Conjunction((sub, contains)), contains_pointer)
        try:
            return c.value(Conjunction((sub, outside)), contains_pointer)
        except UnsupportedSchemaError as exc:
            raise UnsupportedSchemaError("maxContains", pointer, "counting matches up to a bound needs the items "
                                                                 f"that do not match 'contains': {exc}") from exc

    rules: dict[tuple[int, int], Symbol] = {}
    work: list[tuple[int, int]] = []

    def state(count: int, matched: int) -> Symbol:
        key = (count, matched)
        if key not in rules:
            rules[key] = g.rule(f"{name} items={count},{matched}")
            work.append(key)
        return rules[key]

    start = state(0, 0)
    while work:
        count, matched = work.pop()
        alternatives: list[tuple[Symbol, ...]] = []
        if count >= low and matched >= wanted and count > 0:
            alternatives.append(lex.seq(lex.ws, lex.close_bracket))
        if high is None or count < high:
            comma = lex.seq(lex.ws, lex.comma, lex.ws) if count else ()
            following = min(count + 1, top)
            if most is None:
                # at least `wanted` matches: an item may be counted or not (ambiguous, exact)
                alternatives.append(comma + (item(count, None), state(following, matched)))
                if matched < wanted:
                    alternatives.append(comma + (item(count, True), state(following, matched + 1)))
            else:
                # at most `most`: every item is counted exactly, matching or not
                alternatives.append(comma + (item(count, False), state(following, matched)))
                if matched < most:
                    alternatives.append(comma + (item(count, True), state(following, matched + 1)))
        g.define(rules[(count, matched)], alternatives)
    out = [lex.seq(lex.open_bracket, lex.ws) + (start,)]
    if low == 0 and wanted == 0:
        out.append(empty)
    return out


#: Keywords an items schema may hold for its strings to be checked unique as the matcher reads
#: them (``_unique_strings``): the string lexeme's own, and annotations.
_STRING_ITEM_KEYWORDS = frozenset({"type", "pattern", "minLength", "maxLength", "format"})


#: Up to this many distinct string values, ``uniqueItems`` over an enum is a grammar (a state per
#: set of values written, ``_unique``); past it, the matcher's item check (no 2^n states).
_ENUM_GRAMMAR_VALUES = 4


def _holds_values(g: Grammar, expr: int, wanted: int, budget: int = 4096) -> bool:
    """Whether the string literals ``expr`` matches decode to at least ``wanted`` distinct
    strings: a depth-first walk of its derivatives (so whole literals are reached at once, and
    the last bytes vary first), a few bytes of each byte class (bytes of one class lead to the
    same derivative), stopped at ``budget`` nodes (then: not shown)."""
    exprs = g.exprs
    found: set[str] = set()
    stack: list[tuple[int, bytes]] = [(expr, b"")]
    visited = 0
    while stack and visited < budget:
        node, path = stack.pop()
        visited += 1
        if exprs.nullable[node]:
            try:
                found.add(json.loads(path))
            except ValueError:
                pass
            if len(found) >= wanted:
                return True
        for block in exprs.byte_classes(node):
            for _ in range(max(2, wanted)):  # the lowest bytes of the class
                if not block:
                    break
                byte = (block & -block).bit_length() - 1
                block &= block - 1
                nxt = exprs.derivative(node, byte)
                if nxt != NOTHING:
                    stack.append((nxt, path + bytes((byte,))))
    return False


def _unique_strings(c: SchemaCompiler, rest: Any, pointer: str, most: int | None = None
                    ) -> tuple[Symbol | bool | None, int | None]:
    """Under ``uniqueItems``, items that are strings of one lexeme: a lexeme of its own for
    them, marked in ``Grammar.unique_items`` so that the matcher keeps every item's value new
    (``engine.unique``), and the number of values when there are finitely many. Two kinds:

    * ``type: string`` with ``pattern``, ``format``, ``minLength``: the language must be
      infinite, so written values never exhaust it and a comma always has a new item after it,
      or hold at least ``most`` (``maxItems``) values, so that fewer items never exhaust it;
    * an ``enum``/``const`` of more than ``_ENUM_GRAMMAR_VALUES`` strings: n values, so the
      caller caps the items at n, and below n a new value remains.

    (False, n) when no string passes; (None, None) when the items are anything else, or a
    small enum, which ``_unique`` compiles as a grammar.

    Raises:
        UnsupportedSchemaError: strings of a finite language that is not an enum (``maxLength``,
            ``format: date``).
    """
    s = view(rest, c.resolve, pointer)
    if not isinstance(s, dict) or kinds(s) != {"string"}:
        return None, None
    g = c.grammar
    domain = finite_domain(c, s, pointer)
    if domain is not None:
        if any(isinstance(k, str) and k not in ("enum", "const", "type") and k not in ANNOTATIONS for k in s) or \
                any(not isinstance(k, str) for k in s):
            return None, None
        values = [v for v in domain if isinstance(v, str)]
        if len(values) <= _ENUM_GRAMMAR_VALUES:
            return None, None
        expr = g.exprs.alt(*(c.lex.all_spellings(v) for v in values))
        count: int | None = len(values)
    else:
        if any(isinstance(k, str) and k not in _STRING_ITEM_KEYWORDS and k not in ANNOTATIONS for k in s) or \
                any(not isinstance(k, str) and k not in (NOT_STRINGS, NOT_PATTERNS) for k in s):
            return None, None
        lexeme = c.string_lexeme(s, pointer)
        if lexeme is None:
            return False, 0
        expr = g.unguarded.get(lexeme, g.lexeme_exprs[lexeme])  # (a guard's language: its guard-free subset)
        if not g.exprs.has_boolean(expr):  # no & or ¬: infinite exactly when a repeat is unbounded
            infinite = g.exprs.has_unbounded_repeat(expr)
        else:
            try:  # a tenth of the usual search: past it, the language is counted instead
                infinite = g.exprs.is_infinite(expr, max(1, active().regex_states // 10))
            except RegexTooComplex:
                infinite = False
        count = None
        if not infinite:
            # a finite language could run out of new values after a comma: a dead end the item
            # check cannot see, unless it holds at least as many values as items may be written
            if most is None or not _holds_values(g, expr, most):
                raise UnsupportedSchemaError("uniqueItems", pointer, "over strings of a finite language (maxLength, "
                                                                     "or a bounded pattern or format) that is not "
                                                                     "an enum, without a maxItems it surely covers")
    item = g.lexeme(expr, f"unique items at {pointer or '/'}", distinct=True)
    g.unique_items[item] = UniqueLexeme(value=_string_value, spellings=c.lex.all_spellings, delimiter=0x22)
    return item, count


def _string_value(text: bytes) -> str:
    """The string a JSON string literal spells (escapes decoded)."""
    return json.loads(text)


def finite_domain(c: SchemaCompiler, schema: Any, pointer: str) -> list[Any] | None:
    """The distinct values (JSON equality) among which ``schema``'s lie, when it names them: an
    ``enum``/``const``, or only booleans and null (None: not known to be finite). A superset:
    each value is compiled together with ``schema``, which may admit none of its spellings."""
    s = view(schema, c.resolve, pointer)
    if s is False:
        return []
    if not isinstance(s, dict):
        return None
    values = literals(s)
    if values is None:
        found = kinds(s)
        if not found <= {"boolean", "null"}:
            return None
        values = ([True, False] if "boolean" in found else []) + ([None] if "null" in found else [])
    return _distinct(values)


def _distinct(values: Iterable[Any]) -> list[Any]:
    """``values`` without repeats under JSON equality, first seen first (O(n²) over small sets)."""
    out: list[Any] = []
    for value in values:
        if not any(same_json(value, seen) for seen in out):
            out.append(value)
    return out


def _unique(c: SchemaCompiler, pointer: str, prefix: list[tuple[Any, str]], rest: tuple[Any, str], low: int,
            high: int | None, empty: tuple[Symbol, ...]) -> list[tuple[Symbol, ...]]:
    """``uniqueItems`` over items drawn from finite domains: a state per set of values written
    (items are distinct, so the set's size is the item count and fixes the position). Each value
    at a position is the position's schema conjoined with ``const``. Refused when a reachable
    position's domain is not finite or the sets outgrow ``Limits.unique_states``."""
    g, lex = c.grammar, c.lex
    name = pointer or "/"
    positions = len(prefix) + 1 if high is None or high > len(prefix) else high  # the rest's schema last
    domains: list[list[Any]] = []
    for index in range(positions):
        sub, where = prefix[index] if index < len(prefix) else rest
        domain = finite_domain(c, sub, where)
        if domain is None:
            raise UnsupportedSchemaError("uniqueItems", pointer, f"items at {where} are not drawn from a finite "
                                                                 "set of values (enum, const, boolean, null)")
        domains.append(domain)
    values = _distinct(v for domain in domains for v in domain)
    if len(values) > active().unique_values:
        raise UnsupportedSchemaError("uniqueItems", pointer, f"over {len(values)} distinct values (at most "
                                                             f"{active().unique_values})")
    index_of = [[next(i for i, seen in enumerate(values) if same_json(v, seen)) for v in domain]
                for domain in domains]
    items: dict[tuple[int, int], Symbol] = {}
    constants = [c.retain({"const": value}) for value in values]

    def item(position: int, value: int) -> Symbol:
        key = (position, value)
        if key not in items:
            sub, where = prefix[position] if position < len(prefix) else rest
            items[key] = c.value(Conjunction((sub, constants[value])), where)
        return items[key]

    rules: dict[frozenset[int], Symbol] = {}
    work: list[frozenset[int]] = []

    def state(written: frozenset[int]) -> Symbol:
        if written not in rules:
            check_deadline()
            if len(rules) >= active().unique_states:
                raise UnsupportedSchemaError("uniqueItems", pointer, f"more than {active().unique_states} sets of distinct "
                                                                     "values to track")
            rules[written] = g.rule(f"{name} unique items {sorted(written)}")
            work.append(written)
        return rules[written]

    start = state(frozenset())
    while work:
        written = work.pop()
        count = len(written)
        alternatives: list[tuple[Symbol, ...]] = []
        if count >= low and count > 0:
            alternatives.append(lex.seq(lex.ws, lex.close_bracket))
        if high is None or count < high:
            position = min(count, len(prefix))
            comma = lex.seq(lex.ws, lex.comma, lex.ws) if count else ()
            for value in index_of[position]:
                if value not in written:
                    alternatives.append(comma + (item(position, value), state(written | {value})))
        g.define(rules[written], alternatives)
    out = [lex.seq(lex.open_bracket, lex.ws) + (start,)]
    if low == 0:
        out.append(empty)
    return out


class _Powers:
    """``exactly(n)``: ``n`` copies of ``unit`` in a row (by halving); ``up_to(n)``: 1..``n`` of
    them (the first half, or the whole first half and then part of the second). O(log n) rules
    for any ``n``, and every count has exactly one parse."""

    def __init__(self, g: Grammar, name: str, unit: tuple[Symbol, ...]) -> None:
        self.g, self.name, self.unit = g, name, unit
        self._exact: dict[int, Symbol] = {}
        self._upto: dict[int, Symbol] = {}

    def exactly(self, n: int) -> Symbol:
        found = self._exact.get(n)
        if found is None:
            found = self._exact[n] = self.g.rule(f"{self.name} x{n}")
            if n == 1:
                self.g.define(found, [self.unit])
            elif n % 2 == 0:
                self.g.define(found, [(self.exactly(n // 2), self.exactly(n // 2))])
            else:
                self.g.define(found, [(self.exactly(n - 1), self.exactly(1))])
        return found

    def up_to(self, n: int) -> Symbol:
        found = self._upto.get(n)
        if found is None:
            found = self._upto[n] = self.g.rule(f"{self.name} x1..{n}")
            if n == 1:
                self.g.define(found, [(self.exactly(1),)])
            elif n % 2 == 0:
                self.g.define(found, [(self.up_to(n // 2),), (self.exactly(n // 2), self.up_to(n // 2))])
            else:
                self.g.define(found, [(self.up_to(n - 1),), (self.exactly(n - 1), self.exactly(1))])
        return found

    def between(self, low: int, high: int | None) -> tuple[Symbol, ...]:
        """``low`` to ``high`` copies (None: ``low`` exactly, for callers whose following symbols
        absorb any more)."""
        out: tuple[Symbol, ...] = (self.exactly(low),) if low else ()
        if high is not None and high > low:
            spare = self.g.rule(f"{self.name} x0..{high - low}")
            self.g.define(spare, [(), (self.up_to(high - low),)])
            out += (spare,)
        return out


def _counted(c: SchemaCompiler, item: Symbol, low: int, high: int | None, pointer: str,
             empty: tuple[Symbol, ...]) -> list[tuple[Symbol, ...]]:
    """Item counts with O(log bound) rules, unambiguously (``_Powers`` of ", item"), so a bound
    of 10^8 is a few dozen rules and every count has exactly one parse."""
    g, lex = c.grammar, c.lex
    name = pointer or "/"
    one = lex.seq(lex.ws, lex.comma, lex.ws, item)
    powers = _Powers(g, f"{name} (,item)", one)
    close = lex.seq(lex.ws, lex.close_bracket)
    head = lex.seq(lex.open_bracket, lex.ws, item) + ((powers.exactly(low - 1),) if low > 1 else ())
    tail = g.rule(f"{name} more items")
    if high is None:
        g.define(tail, [close, one + (tail,)])
    else:
        spare = high - max(low, 1)
        g.define(tail, [close] + ([(powers.up_to(spare),) + close] if spare > 0 else []))
    return [head + (tail,)] + ([empty] if low == 0 else [])


def _counted_contains(c: SchemaCompiler, pointer: str, rest: tuple[Any, str], contains: Any, wanted: int,
                      most: int | None, empty: tuple[Symbol, ...]) -> list[tuple[Symbol, ...]]:
    """Arrays with ``wanted``..``most`` items matching ``contains`` (no prefix, no item bounds)
    in O(log bound) rules, whatever the counts: the items are ``others (match others)^k``, the
    blocks of one match and the items after it counted by ``_Powers``. With no ``maxContains``
    the others are any items (ambiguous where they match too, which the parser takes in its
    stride: "at least ``wanted``" exactly); under it they are the items outside ``contains``, so
    ``k`` is the exact number of matches."""
    g, lex = c.grammar, c.lex
    name = pointer or "/"
    sub, where = rest
    contains_pointer = pointer_join(pointer, "contains")
    match = c.value(Conjunction((sub, contains)), contains_pointer)
    if most is None:
        other = c.value(sub, where)
    else:
        try:
            other = c.value(Conjunction((sub, c.retain({"not": contains}))), contains_pointer)
        except UnsupportedSchemaError as exc:
            raise UnsupportedSchemaError("maxContains", pointer, "counting matches up to a bound needs the items "
                                                                 f"that do not match 'contains': {exc}") from exc
    comma = lex.seq(lex.ws, lex.comma, lex.ws)
    others = g.rule(f"{name} (,other)*")
    g.define(others, [(), comma + (other, others)])
    powers = _Powers(g, f"{name} (,match (,other)*)", comma + (match, others))
    close = lex.seq(lex.ws, lex.close_bracket)
    out = [lex.seq(lex.open_bracket, lex.ws, other, others) + powers.between(wanted, most) + close]
    if most is None or most >= 1:
        out.append(lex.seq(lex.open_bracket, lex.ws, match, others)
                   + powers.between(max(wanted - 1, 0), None if most is None else most - 1) + close)
    if wanted == 0:
        out.append(empty)
    return out
