"""Slices: vocabulary token sets allowed wholesale in permissive lexer states.

A mask taken inside a permissive region of a lexeme (the body of a JSON string, free text) allows
nearly every token, and walking them all one trie node at a time is what makes a cold mask slow.
A *slice* is a set of tokens precomputed once per vocabulary, here the tokens made only of plain
JSON string characters (``StringSlice``: printable ASCII but ``"`` and ``\\``, and whole UTF-8
characters). When every such character leads a lexer state back to itself, every token of the
slice does too, so the slice is allowed with one bitmask operation and only the trie of the other
tokens is walked (on Gemma 3: 254,292 of 262,144 tokens are in the slice; the rest trie has
2,288 nodes).

``loops_on_plain_text(lexer, state)`` decides that condition exactly, by exploring the lexer
together with a UTF-8 automaton: every plain character, read byte by byte, must come back to
``state``. Cached per lexer state by the caller.
"""

from __future__ import annotations

from ..engine.lexer import DEAD, Lexer

#: Most (lexer state, UTF-8 position) pairs explored before giving up (the slice then does not
#: apply and the whole trie is walked: slower, never wrong).
MAX_EXPLORED = 4096

_PLAIN_ASCII = [b for b in range(0x20, 0x80) if b not in (0x22, 0x5C)]

# UTF-8 lead bytes: (first byte range, continuation count, range of the first continuation byte)
_LEADS = [((0xC2, 0xDF), 1, (0x80, 0xBF)), ((0xE0, 0xE0), 2, (0xA0, 0xBF)), ((0xE1, 0xEC), 2, (0x80, 0xBF)),
          ((0xED, 0xED), 2, (0x80, 0x9F)), ((0xEE, 0xEF), 2, (0x80, 0xBF)), ((0xF0, 0xF0), 3, (0x90, 0xBF)),
          ((0xF1, 0xF3), 3, (0x80, 0xBF)), ((0xF4, 0xF4), 3, (0x80, 0x8F))]


def loops_on_plain_text(lexer: Lexer, state: int) -> bool:
    """Whether every plain JSON string character leads ``state`` back to ``state``."""
    if state == DEAD:
        return False
    for byte in _PLAIN_ASCII:
        if lexer.step(state, byte) != state:
            return False
    # (lexer state, continuation bytes still due, allowed range of the next one)
    seen: set[tuple[int, int, int, int]] = set()
    work: list[tuple[int, int, int, int]] = []
    for (lo, hi), count, (clo, chi) in _LEADS:
        for byte in range(lo, hi + 1):
            nxt = lexer.step(state, byte)
            if nxt == DEAD:
                return False
            item = (nxt, count, clo, chi)
            if item not in seen:
                seen.add(item)
                work.append(item)
    while work:
        lex, count, lo, hi = work.pop()
        for byte in range(lo, hi + 1):
            nxt = lexer.step(lex, byte)
            if nxt == DEAD:
                return False
            if count == 1:
                if nxt != state:
                    return False
                continue
            item = (nxt, count - 1, 0x80, 0xBF)
            if item not in seen:
                seen.add(item)
                if len(seen) > MAX_EXPLORED:
                    return False
                work.append(item)
    return True
