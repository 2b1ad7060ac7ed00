"""Free text until a trigger, then a constraint: the grammar of a tool call a model may or may not
make (``auto``), and of an answer after a reasoning block (``</think>``).

``after_trigger(inner, trigger)`` is a new grammar over ``inner``'s expression set whose texts are

* free text: any UTF-8 text in which ``trigger`` does not occur (the empty text included), unless
  the trigger is ``required``; or
* free text in which ``trigger`` does not occur, then ``trigger``, then a text of ``inner``, then
  ``end`` (a literal, empty by default).

The split is exact and needs no lookahead: the lexeme "free text, then the trigger" is the texts
that end with ``trigger`` and hold it nowhere else (``Σ*T ∩ ¬(Σ*TΣ+)``), so it ends at the first
occurrence of the trigger and cannot go on (maximal munch has nothing to choose); the lexeme of
free text alone is ``¬(Σ*TΣ*)``, dead from the byte that completes the trigger. Their derivatives
are at most ``len(trigger) + 1`` distinct states each (where in the trigger the text stands), so
the lexer's states recur and the masks of the free part are cached after the first few tokens.

Cost: O(size of ``inner``) to copy its rules and lexemes (its lists are copied, never shared).
"""

from __future__ import annotations

from .grammar import Grammar
from .kinds import ALL_BYTES
from .utf8 import any_char


def after_trigger(inner: Grammar, trigger: bytes, *, required: bool = False, end: bytes = b"",
                  free_text: bool = True) -> Grammar:
    """The grammar "free text without ``trigger``, then optionally ``trigger`` + ``inner`` +
    ``end``" (``trigger`` required when ``required``), described in the module docstring. Without
    ``free_text``: ``trigger`` + ``inner`` + ``end`` alone (``required`` is then implied).

    Raises:
        ValueError: an empty ``trigger``, one or an ``end`` that is not UTF-8, or a grammar
            without a start symbol.
    """
    if not trigger:
        raise ValueError("the trigger is empty: free text would end before it starts")
    for name, text in (("trigger", trigger), ("end", end)):
        try:
            text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"the {name} {text!r} is not UTF-8 text") from exc
    if inner.start is None:
        raise ValueError("the inner grammar has no start symbol")
    grammar = inner.copy()
    exprs = grammar.exprs
    byte = exprs.byteset(ALL_BYTES)
    char = any_char(exprs)
    mark = exprs.literal(trigger)
    holds = exprs.concat(exprs.star(byte), mark, exprs.star(byte))
    # free text, then the trigger, which occurs nowhere before its end
    until = exprs.both(exprs.concat(exprs.star(char), mark), exprs.negate(exprs.concat(exprs.star(byte), mark, exprs.plus(byte)))) \
        if free_text else mark
    start = grammar.rule("free text, then the constraint")
    tail: tuple[int, ...] = (grammar.lexeme(exprs.literal(end), "end"),) if end else ()
    grammar.define(start, [(grammar.lexeme(until, "free text, then the trigger" if free_text else "trigger"), inner.start) + tail])
    if free_text and not required:
        free = exprs.both(exprs.plus(char), exprs.negate(holds))
        grammar.define(start, [(grammar.lexeme(free, "free text"),), ()])
    grammar.start = start
    return grammar

