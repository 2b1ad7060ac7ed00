"""Rewrites a grammar into the form the parser needs, keeping its language.

The parser (``parser.py``) predicts top-down, so it needs a grammar with no empty alternatives
(only the start may be nullable, as a flag), no unit cycles and no left recursion. Only the
language matters to constrained decoding, never the parse trees, so these classic rewrites are
free to restructure rules:

1. keep each rule's alternatives once, merge rules with the same alternatives (front ends build the same shape many times over:
   a JSON Schema's ``allOf`` distributed over ``oneOf`` branches repeats whole objects), then
   drop unproductive and unreachable symbols (a grammar whose start derives nothing is an error);
2. split into right-nested chains the alternatives longer than two symbols that hold more than
   one nullable rule (so step 3 makes at most two variants of an alternative it keeps whole, and
   three of each link of a chain). Only those: splitting every long alternative made a third more
   rules, and with them more time in every later step, in the nesting analysis and in the
   parser's expansions (426 grammars of ``bench/compare.py``: 75,594 rules and 335,507 symbols,
   against 48,850 and 308,763; SchemaStore's ``liquibase.json``: 5,100 rules against 3,304);
3. remove empty alternatives (every nullable symbol becomes optional where it is used);
4. merge unit cycles (rules that derive one another through unit alternatives ``A → B`` alone
   become one rule); other unit rules stay: the parser follows them as tail calls, and removing
   them would copy every alternative of ``B`` into each ``A`` (on SchemaStore's
   ``web-types.json``, 93k parser symbols instead of 36k);
5. remove left recursion, only inside the strongly connected parts of the left-corner graph that
   have it (Paull's algorithm; direct recursion ``A → A α | β`` becomes ``A → β | β A'``,
   ``A' → α | α A'``).

Each step checks the size against ``max_size`` and raises ``GrammarTooLarge`` past it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..errors import GrammarAdmitsNothing, GrammarError, GrammarTooLarge
from ..ir.grammar import Alternative, Grammar, Symbol
from ..kernels import load, selected
from ..limits import active, check_deadline

_rewrite = load("grammar_decode.engine._rewrite", "the compiled grammar rewrite", "grammars are rewritten in Python")

@dataclass
class Rewritten:
    """Rules as lists of alternatives (indexed by rule; rule symbols as in ``Grammar``), the
    start rule, and whether the empty text is a sentence. ``new_rules`` says how each rule past
    the grammar's own was named: ``(rule it was made from, suffix)``, or ``(-1, name)``;
    ``peak_size`` is the largest size a step reached (what ``max_size`` was checked against)."""

    alternatives: list[list[Alternative]]
    names: list[str]
    start: int
    start_nullable: bool
    new_rules: list[tuple[int, str]]
    peak_size: int


def empty_lexemes(grammar: Grammar) -> frozenset[int]:
    """The lexemes of ``grammar`` whose expression matches nothing (the rewrite drops the
    alternatives that use them)."""
    empty = set()
    for index, expr in enumerate(grammar.lexeme_exprs):
        if not index & 255:
            check_deadline()
        if grammar.exprs.is_empty(expr):
            empty.add(index)
    return frozenset(empty)


def rewrite(grammar: Grammar, max_size: int | None = None, empty: frozenset[int] | None = None, *,
            compiled: bool | None = None, mutation: int = 0) -> Rewritten:
    """The grammar rewritten for the parser (steps in the module docstring); ``max_size``
    symbols at most (default ``Limits.grammar_size``), else ``GrammarTooLarge``. ``empty``:
    ``empty_lexemes(grammar)`` where the caller has it.

    ``compiled``: run the C rewrite (``_rewrite.c``; the default where it is built and the
    kernels are selected, ``kernels.py``) or this module's Python, the reference it equals rule
    for rule and alternative for alternative (``tests/engine/test_transform.py``). O(grammar)
    per step but for step 5, which may grow the grammar up to ``max_size``; a few µs per symbol
    in Python, a few hundred ns in C. ``mutation`` (tests only): a broken C rewrite (1: every
    nullable symbol kept, never left out)."""
    if max_size is None:
        max_size = active().grammar_size
    if grammar.start is None:
        raise GrammarError("the grammar has no start symbol")
    if compiled is None:
        compiled = selected(_rewrite)
    if compiled:
        return _compiled_rewrite(grammar, max_size, empty_lexemes(grammar) if empty is None else empty, mutation)
    return _python_rewrite(grammar, grammar.start, max_size, empty)


def _compiled_rewrite(grammar: Grammar, max_size: int, empty: frozenset[int], mutation: int) -> Rewritten:
    """``rewrite`` by the C kernel (its outcome codes turned into the reference's errors)."""
    if _rewrite is None:
        raise RuntimeError("the compiled grammar rewrite is not built here (pip install -e . builds it)")
    out = _rewrite.rewrite(grammar.alternatives, grammar.start, len(grammar.lexeme_exprs), tuple(sorted(empty)),
                           max_size, check_deadline, mutation)
    if out[0] == 1:
        too_large(out[1], max_size)
    if out[0] == 2:
        raise GrammarAdmitsNothing("the grammar admits no text (its start symbol derives nothing)")
    if out[0] == 3:
        raise GrammarAdmitsNothing("the grammar admits no text")
    _, rules, start_rule, start_nullable, new_rules, peak = out
    return Rewritten(rules, rewritten_names(grammar.rule_names, new_rules), start_rule, start_nullable, new_rules, peak)


def rewritten_names(names: list[str], new_rules: Iterable[tuple[int, str]]) -> list[str]:
    """The rule names after a rewrite: ``names`` (the grammar's), then each new rule's from its
    recipe (``Rewritten.new_rules``: the rule it was made from and a suffix, or -1 and a name)."""
    out = list(names)
    for source, suffix in new_rules:
        out.append(suffix if source < 0 else out[source] + suffix)
    return out


def _python_rewrite(grammar: Grammar, start: Symbol, max_size: int, empty: frozenset[int] | None) -> Rewritten:
    """``rewrite`` in Python, from the grammar's ``start`` (checked by ``rewrite``): the reference."""
    names = list(grammar.rule_names)
    new_rules: list[tuple[int, str]] = []
    # an alternative written twice is one (each copy would double the parses the parser keeps
    # apart: r → r r a | r r a | ε made every split of the text a parse twice over)
    rules = [list(dict.fromkeys(alts)) for alts in grammar.alternatives]
    if start >= 0:  # a lone lexeme: wrap it in a rule
        names.append("start")
        new_rules.append((-1, "start"))
        rules.append([(start,)])
        start = ~(len(names) - 1)
    start_rule = ~start

    # 1. equal rules merged, productive, then reachable
    rules, start_rule = _merge_equal_rules(rules, start_rule)
    empty_lexemes_ = empty_lexemes(grammar) if empty is None else empty
    if empty_lexemes_:
        rules = [[alt for alt in alts if not any(s in empty_lexemes_ for s in alt)] for alts in rules]
    check_deadline()
    productive = _productive(rules)
    check_deadline()
    if not productive[start_rule]:
        raise GrammarAdmitsNothing("the grammar admits no text (its start symbol derives nothing)")
    rules = [[alt for alt in alts if all(s >= 0 or productive[~s] for s in alt)] for alts in rules]
    rules = _reachable_only(rules, start_rule)

    # 2. binarize the alternatives that step 3 would otherwise blow up (rules appended while
    # splitting are visited too)
    def new_rule(source: int, suffix: str) -> int:
        names.append(names[source] + suffix)
        new_rules.append((source, suffix))
        rules.append([])
        return len(rules) - 1

    check_deadline()
    # which rules derive the empty text: splitting keeps each rule's language, and a new link
    # derives it exactly when every symbol it holds does (a lexeme never does)
    nullable = _nullable(rules)
    index = 0
    while index < len(rules):
        if not index & 1023:
            check_deadline()
        out = []
        for alt in rules[index]:
            if len(alt) > 2 and _optional_count(alt, nullable) > _MOST_OPTIONAL:
                tail = new_rule(index, "·")
                rules[tail] = [alt[1:]]
                nullable.append(all(s < 0 and nullable[~s] for s in alt[1:]))
                alt = (alt[0], ~tail)
            out.append(alt)
        rules[index] = out
        index += 1
    peak = _check(rules, max_size)

    # 3. empty alternatives
    start_nullable = nullable[start_rule]
    for index, alts in enumerate(rules):
        if not index & 1023:
            check_deadline()
        variants: dict[Alternative, None] = {}
        for alt in alts:
            options: list[list[Symbol]] = [[]]
            for symbol in alt:
                keep = [o + [symbol] for o in options]
                options = keep + (options if symbol < 0 and nullable[~symbol] else [])
            for option in options:
                if option:
                    variants[tuple(option)] = None
        rules[index] = list(variants)
    check_deadline()
    live = [bool(alts) for alts in rules]
    rules = [[alt for alt in alts if all(s >= 0 or live[~s] for s in alt)] for alts in rules]
    check_deadline()
    if not rules[start_rule]:
        if start_nullable:  # only the empty text: a start rule with no alternatives
            return Rewritten(rules, names, start_rule, True, new_rules, peak)
        raise GrammarAdmitsNothing("the grammar admits no text")  # pragma: no cover - caught by step 1

    # 4. unit cycles: rules that derive one another through unit alternatives alone are one rule
    unit_edges = _first_symbol_edges(rules, unit_only=True)
    check_deadline()
    for component in _cyclic_components(unit_edges):
        members = {~m for m in component}
        body = list(dict.fromkeys(alt for m in component for alt in rules[m] if not (len(alt) == 1 and alt[0] in members)))
        for m in component:
            rules[m] = list(body)
    rules = _reachable_only(rules, start_rule)
    peak = max(peak, _check(rules, max_size))

    # 5. left recursion
    check_deadline()
    for component in _left_recursive_components(rules):
        for i, rule in enumerate(component):
            check_deadline()
            for earlier in component[:i]:
                replaced: list[Alternative] = []
                for alt in rules[rule]:
                    if alt[0] == ~earlier:
                        replaced.extend(head + alt[1:] for head in rules[earlier])
                    else:
                        replaced.append(alt)
                rules[rule] = list(dict.fromkeys(replaced))
            recursive = [alt[1:] for alt in rules[rule] if alt[0] == ~rule]
            if recursive:
                base = [alt for alt in rules[rule] if alt[0] != ~rule]
                rest = new_rule(rule, "'")
                rules[rule] = base + [b + (~rest,) for b in base]
                rules[rest] = recursive + [r + (~rest,) for r in recursive]
            peak = max(peak, _check(rules, max_size))
    # (Paull's algorithm leaves no left recursion; tests/engine check it on every grammar they
    # build rather than paying a second component search per compile here)
    return Rewritten(rules, names, start_rule, start_nullable, new_rules, peak)


#: Nullable rules an alternative may hold and stay whole: step 3 makes up to 2 ** k variants of an
#: alternative with k of them (an alternative with more is split into a right-nested chain, where
#: each link has at most one more).
_MOST_OPTIONAL = 1


def _optional_count(alternative: Alternative, nullable: list[bool]) -> int:
    """How many of ``alternative``'s symbols are nullable rules."""
    return sum(1 for s in alternative if s < 0 and nullable[~s])


def _check(rules: list[list[Alternative]], max_size: int) -> int:
    """The size of ``rules`` (symbols, one more per alternative), ``GrammarTooLarge`` past ``max_size``."""
    check_deadline()
    size = sum(len(alt) + 1 for alts in rules for alt in alts)
    too_large(size, max_size)
    return size


def too_large(size: int, max_size: int) -> None:
    """``GrammarTooLarge`` when a rewrite of ``size`` symbols passes ``max_size``."""
    if size > max_size:
        raise GrammarTooLarge(f"the grammar grows past {max_size:,} symbols when rewritten for the parser "
                              "(Limits.grammar_size)")


def _derives(rules: list[list[Alternative]], with_lexemes: bool) -> list[bool]:
    """Which rules derive some text (``with_lexemes``: productive) or the empty text (not:
    nullable): a least fixed point by counting, O(size). An alternative holds once each of its
    rules does (and, for the empty text, when it has no lexeme); a rule, once one of its
    alternatives does."""
    holds = [False] * len(rules)
    waiting: list[int] = []  # per alternative: its rule symbols not known to hold yet
    owner: list[int] = []
    users: list[list[int]] = [[] for _ in rules]
    ready: list[int] = []
    for rule, alternatives in enumerate(rules):
        if not rule & 1023:
            check_deadline()
        for alternative in alternatives:
            if not with_lexemes and any(symbol >= 0 for symbol in alternative):
                continue  # a lexeme: never empty
            index = len(owner)
            owner.append(rule)
            count = 0
            for symbol in alternative:
                if symbol < 0:
                    users[~symbol].append(index)
                    count += 1
            waiting.append(count)
            if count == 0:
                ready.append(index)
    while ready:
        rule = owner[ready.pop()]
        if holds[rule]:
            continue
        holds[rule] = True
        for index in users[rule]:
            waiting[index] -= 1
            if waiting[index] == 0:
                ready.append(index)
    return holds


def _merge_equal_rules(rules: list[list[Alternative]], start: int) -> tuple[list[list[Alternative]], int]:
    """Rules whose alternatives are the same, symbol for symbol once the rules they use are
    merged, replaced by one of them (the first); the others are left unused for
    ``_reachable_only``. One pass in post-order over the rule graph (a rule after the rules it
    uses): rules on a cycle are compared by the names they use, so equal cycles may stay apart.
    Returns the rules and the start rule. O(grammar)."""
    canonical = list(range(len(rules)))
    by_body: dict[tuple[Alternative, ...], int] = {}
    done = [False] * len(rules)
    for root in range(len(rules)):
        if done[root]:
            continue
        # iterative post-order: (rule, index of the next alternative symbol to visit)
        stack = [(root, iter([~s for alt in rules[root] for s in alt if s < 0]))]
        done[root] = True
        while stack:
            rule, children = stack[-1]
            child = next(children, None)
            if child is not None:
                if not done[child]:
                    done[child] = True
                    stack.append((child, iter([~s for alt in rules[child] for s in alt if s < 0])))
                continue
            stack.pop()
            alternatives = rules[rule]
            if any(canonical[~s] != ~s for alt in alternatives for s in alt if s < 0):
                alternatives = [tuple(s if s >= 0 else ~canonical[~s] for s in alt) for alt in alternatives]
                rules[rule] = alternatives
            canonical[rule] = by_body.setdefault(tuple(alternatives), rule)
        check_deadline()
    if all(c == r for r, c in enumerate(canonical)):
        return rules, start
    return [[tuple(s if s >= 0 else ~canonical[~s] for s in alt) for alt in alts] for alts in rules], canonical[start]


def _productive(rules: list[list[Alternative]]) -> list[bool]:
    return _derives(rules, with_lexemes=True)


def _nullable(rules: list[list[Alternative]]) -> list[bool]:
    return _derives(rules, with_lexemes=False)


def _reachable_only(rules: list[list[Alternative]], start: int) -> list[list[Alternative]]:
    seen = {start}
    stack = [start]
    while stack:
        for alt in rules[stack.pop()]:
            for symbol in alt:
                if symbol < 0 and ~symbol not in seen:
                    seen.add(~symbol)
                    stack.append(~symbol)
    return [alts if index in seen else [] for index, alts in enumerate(rules)]


def _left_recursive_components(rules: list[list[Alternative]]) -> list[list[int]]:
    """Strongly connected components of the left-corner graph (A → B when an alternative of A
    starts with B) that contain a cycle, each in index order."""
    return _cyclic_components(_first_symbol_edges(rules, unit_only=False))


def _first_symbol_edges(rules: list[list[Alternative]], unit_only: bool) -> list[list[int]]:
    """Per rule, the rules its alternatives begin with (``unit_only``: its alternatives that are
    one rule alone), sorted; a shared empty list where there are none (most rules: one list per
    rule made and sorted costs more than the rest of the step)."""
    none: list[int] = []
    edges = [none] * len(rules)
    for index, alts in enumerate(rules):
        found = None
        for alt in alts:
            if alt and alt[0] < 0 and (len(alt) == 1 or not unit_only):
                if found is None:
                    found = {~alt[0]}
                else:
                    found.add(~alt[0])
        if found is not None:
            edges[index] = sorted(found)
    return edges


def _cyclic_components(edges: list[list[int]]) -> list[list[int]]:
    """Strongly connected components of the graph ``edges`` (node -> its successors) that contain
    a cycle, each in index order. Tarjan's algorithm, iterative, over the nodes that have both
    successors and predecessors (no other node lies on a cycle: the unit and left-corner graphs
    the rewrite asks about have few such nodes among thousands of rules)."""
    entered = [False] * len(edges)
    for targets in edges:
        for target in targets:
            entered[target] = True
    # the graph without the nodes no cycle passes through (repeated: a node left without
    # successors by that is on no cycle either, but one pass removes most)
    inner = [[t for t in targets if edges[t] and entered[t]] if targets and entered[node] else []
             for node, targets in enumerate(edges)]
    index_of = [-1] * len(edges)
    low = [0] * len(edges)
    on_stack = [False] * len(edges)
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for root, root_targets in enumerate(inner):
        if not root & 1023:
            check_deadline()
        if not root_targets or index_of[root] >= 0:
            continue
        work = [(root, 0)]
        while work:
            node, edge = work.pop()
            if edge == 0:
                index_of[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack[node] = True
            targets = inner[node]
            if edge < len(targets):
                work.append((node, edge + 1))
                target = targets[edge]
                if index_of[target] < 0:
                    work.append((target, 0))
                elif on_stack[target]:
                    low[node] = min(low[node], index_of[target])
                continue
            if low[node] == index_of[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in targets:
                    components.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return components
