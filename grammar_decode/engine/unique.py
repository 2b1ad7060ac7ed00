"""Unique array items: the check a matcher applies where an item ends (``uniqueItems`` over
strings, whose values no finite grammar can remember).

The grammar marks the lexeme of such an array's items (``Grammar.unique_items``: a
``UniqueLexeme``, used directly inside that array only, with ``value(text)`` and
``spellings(value)``). A matcher position is then ``(state, frames, item)``: the recognizer state,
one frame per open nesting level holding the ``(lexeme, value)`` pairs written directly at that
level, and the bytes of the current lexeme while it may be such an item. Stepping is the
recognizer's, with two hooks:

* where a lexeme ends, a lexeme that opens or closes a level pushes or pops a frame, and a unique
  item adds its value to the innermost frame (the array holding it: items are strings, so nothing
  nests between the array and its items);
* where a lexeme begins, a unique item lexeme among those it may be has the spellings of the
  values of the innermost frame taken out of its language (``Lexer.without``). The lexer state
  then has no text that repeats a value, and, as every lexer state, no dead end: a prefix stays
  allowed only if some completion of it is a new value (a prefix of an infinite language always
  has one; a finite one is compared value by value, escapes included).

So feeding bytes is exact. A mask from the masker at a position is exact too, except for tokens
that, inside the token, end an item and begin another one in the same array: the masker's walk
begins that second item from the lexer's plain state. ``masking.unique`` replays those tokens
through this stepping. Cost: O(1) per byte fed, a dict lookup per lexeme begun.
"""

from __future__ import annotations

from typing import Hashable, Optional

from ..ir.grammar import UniqueLexeme
from .lexer import DEAD
from .recognizer import Recognizer, State

#: Per open nesting level, the (lexeme, value) pairs of the unique items written directly there.
Frames = tuple[frozenset[tuple[int, Hashable]], ...]
#: A matcher position in a grammar with unique items.
Position = tuple[State, Frames, Optional[bytes]]

#: Lexer states with values taken out, memoised; cleared past this many (each is a few pointers,
#: and the lexer interns the states themselves).
_MEMO_ENTRIES = 1 << 16


class UniqueItems:
    """The exact stepping of one grammar (vocabulary-independent, shared by every matcher of the
    grammar; ``masking.unique`` filters masks with it; thread-safe: memo tables are written whole,
    idempotently)."""

    def __init__(self, recognizer: Recognizer) -> None:
        grammar = recognizer.grammar
        self.recognizer = recognizer
        self.lexer = recognizer.lexer
        self.items: dict[int, UniqueLexeme] = dict(grammar.unique_items)
        #: the bytes every text of a unique item begins and ends with (``"``)
        self.delimiters = tuple(sorted({spec.delimiter for spec in self.items.values()}))
        self.nesting = {lexeme: net for lexeme, (net, _peak) in grammar.nesting.items() if net}
        self._holds: dict[int, frozenset[int]] = {}
        self._without: dict[tuple[int, frozenset[tuple[int, Hashable]]], int] = {}
        self._spellings: dict[tuple[int, Hashable], int] = {}
        frames: Frames = (frozenset(),)
        self.initial: Position = (recognizer.initial, frames,
                                  b"" if self._items_in(recognizer.initial[0]) else None)

    def _items_in(self, lex: int) -> frozenset[int]:
        """The unique item lexemes lexer state ``lex`` may still be reading."""
        found = self._holds.get(lex)
        if found is None:
            found = self._holds[lex] = frozenset(l for l in self.lexer.live_lexemes(lex) if l in self.items) \
                if lex != DEAD else frozenset()
        return found

    def _ended(self, frames: Frames, matched: frozenset[int], item: Optional[bytes]) -> Frames:
        """``frames`` once a lexeme that ``matched`` lists has been read (its text ``item``
        when it may be a unique item)."""
        for lexeme in matched:
            net = self.nesting.get(lexeme)
            if net:  # every lexeme that matched reads the same text: one nesting for all
                frames = frames + (frozenset(),) * net if net > 0 else frames[:max(1, len(frames) + net)]
                break
        if item is not None:
            written = [(lexeme, self.items[lexeme].value(item)) for lexeme in matched if lexeme in self.items]
            if written:
                frames = frames[:-1] + (frames[-1].union(written),)
        return frames

    def _start(self, parse, frames: Frames) -> int:  # type: ignore[no-untyped-def]
        """The lexer state that begins the next lexeme: the recognizer's, less the values the
        innermost frame holds for the unique items among its lexemes."""
        base = self.recognizer.lexer_start(parse)
        top = frames[-1]
        if not top or base == DEAD:
            return base
        items = self._items_in(base)
        relevant = frozenset(p for p in top if p[0] in items)
        if not relevant:
            return base
        key = (base, relevant)
        found = self._without.get(key)
        if found is None:
            found = base
            for lexeme in sorted({p[0] for p in relevant}):
                spec = self.items[lexeme]
                excluded = self.lexer.exprs.alt(*(self._spelled(lexeme, spec, v) for l, v in relevant if l == lexeme))
                found = self.lexer.without(found, lexeme, excluded)
                if found == DEAD:
                    break
            if len(self._without) >= _MEMO_ENTRIES:
                self._without.clear()
            self._without[key] = found
        return found

    def _spelled(self, lexeme: int, spec: UniqueLexeme, value: Hashable) -> int:
        key = (lexeme, value)
        found = self._spellings.get(key)
        if found is None:
            if len(self._spellings) >= _MEMO_ENTRIES:
                self._spellings.clear()
            found = self._spellings[key] = spec.spellings(value)
        return found

    def step(self, position: Position, byte: int) -> Optional[Position]:
        """The position after ``byte``, or None when no completion can follow (the recognizer's
        ``step``, with the two hooks of the module text)."""
        (lex, parse, fresh), frames, item = position
        if lex == DEAD:
            return None
        lexer = self.lexer
        nxt = lexer.step(lex, byte)
        if nxt == DEAD:
            if fresh:
                return None
            matched = lexer.accepting[lex]
            after = parse.scan(matched) if matched else None
            if after is None:
                return None
            frames = self._ended(frames, matched, item)
            parse = after
            restart = self._start(after, frames)
            if restart == DEAD:
                return None
            item = b"" if self._items_in(restart) else None
            nxt = lexer.step(restart, byte)
            if nxt == DEAD:
                return None
        if item is not None:
            item += bytes((byte,))
        if lexer.closed[nxt]:
            matched = lexer.accepting[nxt]
            after = parse.scan(matched)
            if after is None:
                return None
            frames = self._ended(frames, matched, item)
            start = self._start(after, frames)
            if start == DEAD and self.recognizer.lexer_start(after) != DEAD:
                return None  # every lexeme that could begin here was taken out (not the text's end)
            return ((start, after, True), frames, b"" if self._items_in(start) else None)
        return ((nxt, parse, False), frames, item)

    def feed(self, position: Optional[Position], data: bytes) -> Optional[Position]:
        for byte in data:
            if position is None:
                return None
            position = self.step(position, byte)
        return position
