"""The independent reference: a slow, plain recognizer over the grammar IR.

It shares no code with the fast path (``engine/``: lazy DFA lexer, rewritten grammar, interned
parse states; ``masking/``: trie walks, slices, caches). Lexemes are checked with the ``regex``
package's partial matching (``fullmatch(text, partial=True)`` answers "can this text still grow
into a match"), on patterns printed from the IR; rules are parsed by a textbook Earley chart over
the grammar exactly as the front end built it (empty alternatives, left recursion and ambiguity
handled the classic way), with no rewriting.

Semantics, the same as the fast path's by specification: lexemes are split by maximal munch (a
lexeme ends where the next byte cannot extend any expected lexeme), ``ignored`` lexemes may stand
between any two lexemes, and a prefix is viable when the lexeme being read can still grow into an
expected lexeme. Expressions built with intersection or complement cannot be printed as patterns;
those lexemes are matched by ``terms.TermPattern`` instead, plain derivatives on nested tuples
(independent of ``ir/regex.py`` as well).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import regex

from ..ir.grammar import Grammar
from ..ir.regex import (
    BYTES_KIND,
    CONCAT_KIND,
    EPSILON_KIND,
    LITERAL_KIND,
    NOTHING_KIND,
    OR_KIND,
    REPEAT_KIND,
    ExprSet,
)
from .terms import TermPattern, term_of


def pattern_of(exprs: ExprSet, item: int) -> bytes:
    """A ``regex`` bytes pattern for an expression without intersection or complement."""
    kind = exprs.kind[item]
    args = exprs.args[item]
    if kind == NOTHING_KIND:
        return rb"(?!)"
    if kind == EPSILON_KIND:
        return rb"(?:)"
    if kind == BYTES_KIND:
        values = [b for b in range(256) if (args >> b) & 1]  # type: ignore[operator]
        return b"[" + b"".join(b"\\x%02x" % v for v in values) + b"]"
    if kind == LITERAL_KIND:
        data, start = args  # type: ignore[misc]
        return b"".join(b"\\x%02x" % v for v in data[start:])
    if kind == CONCAT_KIND:
        return b"".join(b"(?:" + pattern_of(exprs, m) + b")" for m in args)  # type: ignore[union-attr]
    if kind == OR_KIND:
        return b"(?:" + b"|".join(pattern_of(exprs, m) for m in args) + b")"  # type: ignore[union-attr]
    if kind == REPEAT_KIND:
        inner, lo, hi = args  # type: ignore[misc]
        bound = b"{%d,}" % lo if hi is None else b"{%d,%d}" % (lo, hi)
        return b"(?:" + pattern_of(exprs, inner) + b")" + bound
    raise NotImplementedError("the reference cannot print intersection or complement as a pattern")


def _compile(exprs: ExprSet, item: int) -> Any:
    """A ``regex`` pattern for the lexeme, or a ``TermPattern`` where it uses ``&``/``¬``."""
    try:
        return regex.compile(pattern_of(exprs, item))
    except NotImplementedError:
        return TermPattern(term_of(exprs, item))


@dataclass(frozen=True)
class _Item:
    rule: int
    alternative: int
    dot: int
    origin: int


class EarleyChart:
    """A textbook Earley recognizer over lexemes, one item set per lexeme read. Append-only:
    ``extend`` returns a new chart sharing the earlier sets."""

    def __init__(self, grammar: Grammar, sets: Optional[tuple[frozenset[_Item], ...]] = None) -> None:
        self.grammar = grammar
        if sets is None:
            if grammar.start is None:
                raise ValueError("the grammar has no start symbol")
            # rule -1 is a virtual start rule with the one alternative (start,)
            sets = (self._close({_Item(-1, 0, 0, 0)}, 0, ()),)
        self.sets = sets

    def _alternative(self, rule: int, alternative: int) -> tuple[int, ...]:
        if rule == -1:
            return (self.grammar.start,)  # type: ignore[return-value]
        return self.grammar.alternatives[rule][alternative]

    def _close(self, items: set[_Item], position: int, earlier: tuple[frozenset[_Item], ...]) -> frozenset[_Item]:
        """Prediction and completion to a fixed point (with the nullable-completion rule)."""
        grammar = self.grammar
        done = set()
        work = list(items)
        result = set(items)
        nullable_done: set[int] = set()  # rules completed empty at this position
        while work:
            item = work.pop()
            if item in done:
                continue
            done.add(item)
            body = self._alternative(item.rule, item.alternative)
            if item.dot < len(body):
                symbol = body[item.dot]
                if symbol < 0:
                    rule = ~symbol
                    for index in range(len(grammar.alternatives[rule])):
                        new = _Item(rule, index, 0, position)
                        if new not in result:
                            result.add(new)
                            work.append(new)
                    if rule in nullable_done:
                        new = _Item(item.rule, item.alternative, item.dot + 1, item.origin)
                        if new not in result:
                            result.add(new)
                            work.append(new)
            elif item.rule != -1:  # the virtual start rule completes the text; nothing waits for it
                # complete: advance every item waiting for this rule at the origin
                source = result if item.origin == position else earlier[item.origin]
                if item.origin == position:
                    nullable_done.add(item.rule)
                for waiting in list(source):
                    wbody = self._alternative(waiting.rule, waiting.alternative)
                    if waiting.dot < len(wbody) and wbody[waiting.dot] == ~item.rule:
                        new = _Item(waiting.rule, waiting.alternative, waiting.dot + 1, waiting.origin)
                        if new not in result:
                            result.add(new)
                            work.append(new)
        return frozenset(result)

    def expected(self) -> frozenset[int]:
        """Lexemes some item of the last set expects next, plus the ignored ones."""
        out = set(self.grammar.ignored)
        for item in self.sets[-1]:
            body = self._alternative(item.rule, item.alternative)
            if item.dot < len(body) and body[item.dot] >= 0:
                out.add(body[item.dot])
        return frozenset(out)

    def accepting(self) -> bool:
        return any(item.rule == -1 and item.dot == 1 for item in self.sets[-1])

    def extend(self, lexemes: frozenset[int]) -> Optional["EarleyChart"]:
        """The chart after one (non-ignored) lexeme that is any of ``lexemes``; None if none is
        expected."""
        position = len(self.sets)
        moved = set()
        for item in self.sets[-1]:
            body = self._alternative(item.rule, item.alternative)
            if item.dot < len(body) and body[item.dot] in lexemes:
                moved.add(_Item(item.rule, item.alternative, item.dot + 1, item.origin))
        if not moved:
            return None
        return EarleyChart(self.grammar, self.sets + (self._close(moved, position, self.sets),))


Config = tuple[tuple[EarleyChart, ...], bytes]


def productive_only(grammar: Grammar) -> Grammar:
    """A copy of ``grammar`` without the alternatives that can never derive text (a rule with no
    alternatives, or one that only leads to such rules). An Earley chart would otherwise call a
    prefix viable because it predicts a rule that can never be completed."""
    productive: set[int] = set()
    changed = True
    while changed:
        changed = False
        for rule, alternatives in enumerate(grammar.alternatives):
            if rule not in productive and any(all(s >= 0 or ~s in productive for s in alt) for alt in alternatives):
                productive.add(rule)
                changed = True
    copy = Grammar(grammar.exprs)
    copy.lexeme_exprs, copy.lexeme_names = grammar.lexeme_exprs, grammar.lexeme_names
    copy.rule_names, copy.ignored, copy.start = grammar.rule_names, grammar.ignored, grammar.start
    copy.guards = grammar.guards
    copy.alternatives = [[alt for alt in alternatives if all(s >= 0 or ~s in productive for s in alt)]
                         for alternatives in grammar.alternatives]
    return copy


class ReferenceRecognizer:
    """Viable-prefix and acceptance answers for one grammar, the slow and obvious way. A
    configuration is the set of charts still alive (an ignored lexeme that is also an ordinary one
    forks the parse) and the text of the lexeme being read."""

    def __init__(self, grammar: Grammar) -> None:
        grammar = productive_only(grammar)
        self.grammar = grammar
        self.ignored = frozenset(grammar.ignored)
        self.patterns = [_compile(grammar.exprs, e) for e in grammar.lexeme_exprs]
        self.initial: Config = ((EarleyChart(grammar),), b"")

    def _can_grow(self, lexemes: frozenset[int], text: bytes) -> bool:
        return any(self.patterns[t].fullmatch(text, partial=True) is not None and self._guard_ok(t, text, None)
                   for t in lexemes)

    def _matched(self, lexemes: frozenset[int], text: bytes) -> frozenset[int]:
        return frozenset(t for t in lexemes if self.patterns[t].fullmatch(text) is not None
                         and self._guard_ok(t, text, True))

    def _guard_ok(self, lexeme: int, text: bytes, complete: Optional[bool]) -> bool:
        """The lexeme's guard (``Grammar.guards``) read off the whole text: as a complete text,
        or (None) as one complete or still growing."""
        guard = self.grammar.guards.get(lexeme)
        if guard is None:
            return True
        pattern = self.patterns[lexeme]

        def alive(rest: bytes) -> bool:
            return pattern.fullmatch(text + rest, partial=True) is not None

        if complete is None:
            return guard.text_ok(text, False, alive) or guard.text_ok(text, True, alive)
        return guard.text_ok(text, complete, alive)

    def _end_lexeme(self, charts: tuple[EarleyChart, ...], text: bytes) -> tuple[EarleyChart, ...]:
        """Every chart after the lexeme ``text`` ends (each chart reads the lexemes it expects)."""
        out = []
        for chart in charts:
            matched = self._matched(chart.expected(), text)
            if matched & self.ignored:
                out.append(chart)
            after = chart.extend(matched - self.ignored) if matched - self.ignored else None
            if after is not None:
                out.append(after)
        return tuple(out)

    def step(self, config: Config, byte: int) -> Optional[Config]:
        charts, text = config
        expected = frozenset().union(*(chart.expected() for chart in charts))
        grown = text + bytes([byte])
        if self._can_grow(expected, grown):
            return (charts, grown)
        if not text:
            return None
        after = self._end_lexeme(charts, text)
        fresh = bytes([byte])
        alive = tuple(chart for chart in after if self._can_grow(chart.expected(), fresh))
        return (alive, fresh) if alive else None

    def feed(self, config: Optional[Config], data: bytes) -> Optional[Config]:
        for byte in data:
            if config is None:
                return None
            config = self.step(config, byte)
        return config

    def is_accepting(self, config: Config) -> bool:
        charts, text = config
        if not text:
            return any(chart.accepting() for chart in charts)
        return any(chart.accepting() for chart in self._end_lexeme(charts, text))

    def accepts(self, data: bytes) -> bool:
        config = self.feed(self.initial, data)
        return config is not None and self.is_accepting(config)

    def accepts_prefix(self, data: bytes) -> bool:
        return self.feed(self.initial, data) is not None
