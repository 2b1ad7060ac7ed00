"""JSON arrays: the grammar of the items a schema object admits.

Keywords: ``prefixItems`` and ``items`` (2020-12), ``items`` as an array with
``additionalItems`` (drafts 4 to 2019-09), ``minItems``/``maxItems``, ``contains`` with
``minContains`` and ``maxContains``, ``uniqueItems`` where at most one item is allowed.

The items are a finite automaton over (items written, matches of ``contains`` so far), both
saturating where their bound stops mattering: the item at position ``i`` is the ``i``-th prefix
schema or the rest schema, and while ``minContains`` is not reached it may also be written as the
conjunction with ``contains`` (an ambiguous grammar, which the parser takes in its stride: the
language is "at least ``minContains`` items match", exactly). Under ``maxContains`` every item is
written either matching ``contains`` or matching its complement (``not``, ``json_complement``),
so the count is exact; where the complement cannot be built, ``maxContains`` is refused. A
schema ``false`` at a position
bounds the length. Large counts without a prefix or ``contains`` take O(log bound) rules
(``_counted``), so ``maxItems: 10**8`` is a few dozen rules.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import SchemaError, UnsupportedSchemaError
from ..ir.grammar import Grammar, Symbol
from .json_lexemes import JsonLexemes
from .json_merge import Conjunction, item_positions
from .json_numbers import non_negative_int
from .json_refs import pointer_join

#: Largest item bound compiled with one rule per count; larger bounds take O(log bound) rules.
MAX_LINEAR_ITEMS = 64


class SchemaCompiler(Protocol):
    grammar: Grammar
    lex: JsonLexemes
    empty_reasons: list[tuple[str, str]]

    def value(self, schema: Any, pointer: str) -> Symbol: ...


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
    if high is not None and high < low:
        raise SchemaError(f"minItems {low} exceeds maxItems {high}", pointer)
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
    if schema.get("uniqueItems") is True and (high is None or high > 1):
        raise UnsupportedSchemaError("uniqueItems", pointer, "unless at most one item is allowed (maxItems <= 1)")
    empty = lex.seq(lex.open_bracket, lex.ws, lex.close_bracket)
    if contains is False and wanted > 0:
        c.empty_reasons.append((pointer, "'contains' is false"))
        return []
    if high is not None and high < max(low, wanted):
        c.empty_reasons.append((pointer, f"fewer items allowed ({high}) than required ({max(low, wanted)})"))
        return []
    if high == 0:
        return [empty]
    if max(low, high or 0) > MAX_LINEAR_ITEMS:
        if prefix or contains is not None:
            raise UnsupportedSchemaError("maxItems" if high is not None and high > MAX_LINEAR_ITEMS else "minItems",
                                         pointer, f"item bounds above {MAX_LINEAR_ITEMS} together with prefixItems "
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

    def item(index: int, matching: bool | None) -> Symbol:
        """The item at ``index``: matching ``contains`` (True), not matching it (False), or either (None)."""
        sub, where = prefix[index] if index < len(prefix) else rest
        if matching is None:
            return c.value(sub, where)
        if matching:
            return c.value(Conjunction((sub, contains)), contains_pointer)
        try:
            return c.value(Conjunction((sub, {"not": contains})), contains_pointer)
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


def _counted(c: SchemaCompiler, item: Symbol, low: int, high: int | None, pointer: str,
             empty: tuple[Symbol, ...]) -> list[tuple[Symbol, ...]]:
    """Item counts with O(log bound) rules, unambiguously: ``exactly(n)`` is ``n`` times
    ", item" (by halving), ``up_to(n)`` is 1..``n`` times (the first half, or the whole first
    half and then part of the second), so a bound of 10^8 is a few dozen rules and every count
    has exactly one parse."""
    g, lex = c.grammar, c.lex
    name = pointer or "/"
    one = lex.seq(lex.ws, lex.comma, lex.ws, item)
    exact: dict[int, Symbol] = {}
    upto: dict[int, Symbol] = {}

    def exactly(n: int) -> Symbol:
        found = exact.get(n)
        if found is None:
            found = exact[n] = g.rule(f"{name} (,item)x{n}")
            if n == 1:
                g.define(found, [one])
            elif n % 2 == 0:
                g.define(found, [(exactly(n // 2), exactly(n // 2))])
            else:
                g.define(found, [(exactly(n - 1), exactly(1))])
        return found

    def up_to(n: int) -> Symbol:
        found = upto.get(n)
        if found is None:
            found = upto[n] = g.rule(f"{name} (,item)x1..{n}")
            if n == 1:
                g.define(found, [(exactly(1),)])
            elif n % 2 == 0:
                g.define(found, [(up_to(n // 2),), (exactly(n // 2), up_to(n // 2))])
            else:
                g.define(found, [(up_to(n - 1),), (exactly(n - 1), exactly(1))])
        return found

    close = lex.seq(lex.ws, lex.close_bracket)
    head = lex.seq(lex.open_bracket, lex.ws, item) + ((exactly(low - 1),) if low > 1 else ())
    tail = g.rule(f"{name} more items")
    if high is None:
        g.define(tail, [close, one + (tail,)])
    else:
        spare = high - max(low, 1)
        g.define(tail, [close] + ([(up_to(spare),) + close] if spare > 0 else []))
    return [head + (tail,)] + ([empty] if low == 0 else [])
