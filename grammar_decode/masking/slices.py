"""Slices: vocabulary token sets allowed wholesale in permissive lexer states.

A mask taken inside a permissive region of a lexeme (the body of a JSON string, free text) allows
nearly every token, and walking them all one trie node at a time is what makes a cold mask slow.
A *slice* is a set of tokens precomputed once per vocabulary, here the tokens made only of plain
JSON string characters (``StringSlice``: printable ASCII but ``"`` and ``\\``, and whole UTF-8
characters), with their length in characters. When every such character leads a lexer state to
one same next state, and so on along a run, a plain token's fate depends on its length alone:
the slice's tokens up to the run's length are allowed with one vectorised comparison, and only the
trie of the other tokens is walked (on Gemma 3: 254,292 of 262,144 tokens are in the slice; the
rest trie has 2,288 nodes). Inside an unbounded string the run loops on one state; inside a
counted one (``maxLength``, ``{m,n}``) it counts down.

Where plain characters go different ways, most of them often still go one way: in an object's
key, every character but the first letters of the named keys leads into an "other key" that reads
plain text from there on. ``plain_split`` finds that place (the target of the most plain ASCII
bytes) and the first bytes all of whose characters lead there; when a run follows the target,
the slice's tokens that begin with those bytes are decided by their length alone
(``StringSlice.packed_split``), and the walk of the whole trie skips their subtrees wherever only
plain tokens lie below (``StringSlice.pure_nodes``): on Llama-3, the first key state of
``claude-code-settings.json`` (74 of 93 plain ASCII bytes and every lead byte go to the target)
walks at most 45,502 of the trie's 274,520 nodes, in 0.23 ms instead of 1.4 ms.

``plain_successor(lexer, state)`` decides one step of a run exactly, by exploring the lexer
together with a UTF-8 automaton: every plain character, read byte by byte, must reach the same
state. ``plain_run`` follows the steps as far as the vocabulary's longest plain token. Cached per
lexer state by the caller.
"""

from __future__ import annotations

import re
import threading
import weakref
from typing import Callable

import numpy as np

from ..engine.lexer import DEAD, Lexer
from ..ir.kinds import AND_KIND, CONCAT_KIND, EPSILON, NOT_KIND, NOTHING, REPEAT_KIND
from ..ir.regex import ExprSet
from ..vocab import TokenTrie, Vocabulary
from .bitmask import pack_mask
from .walk import COMPILED, _cell_maker, _walk

#: Most (lexer state, UTF-8 position) pairs explored before giving up (the slice then does not
#: apply and the whole trie is walked: slower, never wrong).
MAX_EXPLORED = 4096

_PLAIN_ASCII = [b for b in range(0x20, 0x80) if b not in (0x22, 0x5C)]

# UTF-8 lead bytes: (first byte range, continuation count, range of the first continuation byte)
_LEADS = [((0xC2, 0xDF), 1, (0x80, 0xBF)), ((0xE0, 0xE0), 2, (0xA0, 0xBF)), ((0xE1, 0xEC), 2, (0x80, 0xBF)),
          ((0xED, 0xED), 2, (0x80, 0x9F)), ((0xEE, 0xEF), 2, (0x80, 0xBF)), ((0xF0, 0xF0), 3, (0x90, 0xBF)),
          ((0xF1, 0xF3), 3, (0x80, 0xBF)), ((0xF4, 0xF4), 3, (0x80, 0x8F))]


# One or more characters that may stand unescaped inside a JSON string, as whole UTF-8 sequences:
# printable ASCII but '"' and '\\', or a well-formed multi-byte character (no surrogates).
_PLAIN_STRING = re.compile(
    rb"(?:[\x20\x21\x23-\x5B\x5D-\x7F]|[\xC2-\xDF][\x80-\xBF]|\xE0[\xA0-\xBF][\x80-\xBF]"
    rb"|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}|\xED[\x80-\x9F][\x80-\xBF]|\xF0[\x90-\xBF][\x80-\xBF]{2}"
    rb"|[\xF1-\xF3][\x80-\xBF]{3}|\xF4[\x80-\x8F][\x80-\xBF]{2})+"
)


class StringSlice:
    """The tokens that are entirely plain string content, precomputed once per vocabulary.

    In a lexer state that loops on plain text (inside an unconstrained JSON string, between
    characters), every such token is allowed and leads back to that very state, so a mask there is
    ``plain`` plus a walk over the small trie of the remaining tokens (those with a quote, a
    backslash, a control byte or a partial UTF-8 character). On GPT-2, 49,722 of 50,257 tokens
    are plain (the rest trie has 637 nodes); on Gemma 3, 254,292 of 262,144 (2,288 nodes). Built
    once per vocabulary (``string_slice``), ~0.3 s for 262k tokens.
    """

    def __init__(self, tokens: "tuple[bytes, ...] | list[bytes]", ordinary: np.ndarray) -> None:
        plain = np.array([bool(t) and _PLAIN_STRING.fullmatch(t) is not None for t in tokens], dtype=bool)
        self.plain = plain & ordinary
        self.plain.flags.writeable = False
        self.rest = TokenTrie(tokens, ordinary & ~self.plain)
        #: characters (code points) of each plain token; 0 elsewhere
        chars = np.zeros(len(tokens), dtype=np.int32)
        for token_id in np.flatnonzero(self.plain).tolist():
            chars[token_id] = len(tokens[token_id].decode("utf-8"))
        chars.flags.writeable = False
        self.chars = chars
        self.longest = int(chars.max(initial=0))
        #: the first byte of each plain token; 0 elsewhere
        first = np.array([t[0] if t else 0 for t in tokens], dtype=np.uint8)
        first[~self.plain] = 0
        first.flags.writeable = False
        self.first = first
        #: the bytes some plain token begins with
        self.first_bytes = frozenset(np.unique(first[self.plain]).tolist())
        self._up_to: dict[int, np.ndarray] = {}
        self._packed_up_to: dict[int, np.ndarray] = {}
        self._packed_first: dict[int, np.ndarray] = {}
        self._packed_split: dict[tuple[bytes, int], np.ndarray] = {}
        self._pure: tuple[TokenTrie, np.ndarray] | None = None

    def up_to(self, count: int) -> np.ndarray:
        """The plain tokens of at most ``count`` characters (read-only; cached per count). O(V)
        the first time."""
        count = min(count, self.longest)
        found = self._up_to.get(count)
        if found is None:
            found = self.plain & (self.chars <= count) if count < self.longest else self.plain
            found.flags.writeable = False
            self._up_to[count] = found
        return found

    def packed_up_to(self, count: int) -> np.ndarray:
        """``up_to(count)`` packed as ``masking.bitmask`` packs masks, as uint8 (read-only;
        cached per count: at most ``longest`` of them, V / 8 bytes each)."""
        count = min(count, self.longest)
        found = self._packed_up_to.get(count)
        if found is None:
            found = pack_mask(self.up_to(count)).view(np.uint8)
            found.flags.writeable = False
            self._packed_up_to[count] = found
        return found


    def packed_first(self, byte: int) -> np.ndarray:
        """The plain tokens that begin with ``byte``, packed as ``packed_up_to`` (read-only; cached
        per byte: V / 8 bytes each, at most one per byte a plain token begins with)."""
        found = self._packed_first.get(byte)
        if found is None:
            found = pack_mask(self.plain & (self.first == byte)).view(np.uint8)
            found.flags.writeable = False
            found = self._packed_first.setdefault(byte, found)
        return found

    def packed_split(self, firsts: bytes, count: int) -> np.ndarray:
        """The plain tokens of at most ``count`` characters whose first byte ``b`` has
        ``firsts[b]`` set (256 bytes, 0 or 1), packed as ``packed_up_to`` (read-only). Made from
        the per-byte sets on the smaller side of the split; the last ``_SPLITS`` kept."""
        key = (firsts, min(count, self.longest))
        found = self._packed_split.get(key)
        if found is None:
            inside = [b for b in sorted(self.first_bytes) if firsts[b]]
            outside = [b for b in sorted(self.first_bytes) if not firsts[b]]
            some = np.zeros_like(self.packed_up_to(0))
            for byte in (outside if len(outside) <= len(inside) else inside):
                some |= self.packed_first(byte)
            found = self.packed_up_to(count) & (~some if len(outside) <= len(inside) else some)
            found.flags.writeable = False
            if len(self._packed_split) >= _SPLITS:
                self._packed_split.clear()  # a cache: states with one split recur, few splits do
            self._packed_split[key] = found
        return found

    def pure_nodes(self, trie: TokenTrie) -> np.ndarray:
        """Per node of ``trie`` (the vocabulary's whole trie), uint8: 1 where every token spelled
        in the node's subtree (the node included) is a plain token, so that a slice that decides
        those tokens lets a walk skip the subtree. Made on first use and kept (one byte per node)."""
        found = self._pure
        if found is None or found[0] is not trie:
            n = len(trie)
            starts = trie.node_token_start
            owner = np.repeat(np.arange(n), np.diff(starts))
            impure = np.zeros(n + 1, dtype=np.int64)
            impure[owner[~self.plain[trie.node_token_ids]] + 1] = 1
            below = np.cumsum(impure)  # below[j]: impure nodes among 0 .. j - 1
            end = np.array(trie.end, dtype=np.int64)
            end[0] = n
            pure = (below[end] - below[:n] == 0).astype(np.uint8)
            pure.flags.writeable = False
            found = self._pure = (trie, pure)
        return found[1]


#: Splits ``StringSlice.packed_split`` keeps.
_SPLITS = 64


def string_slice(vocab: Vocabulary) -> StringSlice:
    """The vocabulary's string slice, built on first use and kept with the vocabulary (shared by
    every grammar masked over it). The whole trie's flat arrays and its pure nodes, which the first
    walk of a key state needs, are made with it: once per vocabulary, beside the slice, rather than
    inside some request's mask (26 ms on Llama-3's 128k tokens)."""
    return vocab.derived(StringSlice, _string_slice)


def _string_slice(vocab: Vocabulary) -> StringSlice:
    found = StringSlice(vocab.tokens, vocab.ordinary_mask())
    vocab.trie.arrays()
    found.pure_nodes(vocab.trie)
    return found


#: The plain ASCII bytes as a 256-bit mask (``ExprSet.first_bytes``'s form), and how many they are (93).
_PLAIN_ASCII_MASK = sum(1 << b for b in _PLAIN_ASCII)
PLAIN_ASCII_COUNT = len(_PLAIN_ASCII)
#: Tests only: a deliberately broken ``plain_ascii_reach`` (1: only the first pair's bytes counted;
#: 2: an expression whose first bytes are every plain ASCII byte taken as sending them apart).
_REACH_MUTATION = 0


def plain_ascii_reach(lexer: Lexer, state: int) -> tuple[int, bool]:
    """What the first bytes of ``state``'s expressions tell of where plain ASCII bytes lead it, no
    transition made: ``(bound, apart)``, ``bound`` the plain ASCII bytes that may lead it anywhere
    live (``ExprSet.first_bytes`` is a superset of the bytes with a non-empty derivative: every
    other one leads to ``DEAD``), ``apart`` whether plain characters surely go different ways
    (``plain_successor`` is None): some expression free of ``&`` and ``¬``, in a state no guard
    can refuse, has exact first bytes, and its plain ASCII ones are some but not all; the bytes
    among them keep its lexeme in the state they lead to and the others do not (a state holds one
    expression per lexeme). A ``bound`` under ``_MIN_SPLIT`` is one that no split pays
    (``Masker._split``). Cost: one memoised lookup per pair, fewer where all is known."""
    dfa = lexer.dfa
    exprs = dfa.exprs
    first, boolean = exprs.first_bytes, exprs.has_boolean
    guarded = bool(dfa.tags[state])
    union, apart = 0, False
    for _origin, expr in dfa.pairs[state]:
        found = first(expr) & _PLAIN_ASCII_MASK
        if found:
            union |= found
            if not apart and not guarded and (found != _PLAIN_ASCII_MASK or _REACH_MUTATION == 2) \
                    and not boolean(expr):
                apart = True
            if apart and union == _PLAIN_ASCII_MASK:
                break
        if _REACH_MUTATION == 1:
            break
    return union.bit_count(), apart


def plain_successor(lexer: Lexer, state: int) -> int | None:
    """Where every plain JSON string character leads ``state``, when they all lead to one place:
    that state, ``DEAD`` when none of them can be read, None when they go different ways (or the
    exploration passes ``MAX_EXPLORED``). Where the state's expressions show it
    (``reads_plain_alike``: a counted or starred run of string characters), one transition, by
    ``a``; else by the C kernel (``_walk.plain_successor``, a few hundred reads of the dense
    table, and the transitions of every lead and continuation byte made: ~30 µs a new state of a
    counted string) where it runs, else ``python_plain_successor``; all give the same."""
    if state != DEAD and _STRUCTURAL and reads_plain_alike(lexer, state):
        return lexer.step(state, 0x61)
    if COMPILED and state != DEAD:
        where = np.zeros(2, dtype=np.int64)
        while True:
            table, _accepts = lexer.dense()
            found = _walk.plain_successor(table, state, where, _MUTATION, _cell_maker(lexer))
            if found != _MISSING:
                return None if found == _UNDECIDED else found
            lexer.dense_cell(int(where[0]), int(where[1]))
    return python_plain_successor(lexer, state)


#: Tests only: False leaves every state to the exploration (``reads_plain_alike`` unused).
_STRUCTURAL = True
#: Tests only: a deliberately broken ``reads_plain_alike`` (1: bodies taken as read whole unchecked;
#: 2: the rest after a repeat that may match nothing not checked).
_STRUCTURAL_MUTATION = 0

#: The bytes a plain character can begin with: plain ASCII and the well-formed UTF-8 lead bytes.
_PLAIN_FIRST = sum(1 << b for b in _PLAIN_ASCII) | sum(1 << b for b in range(0xC2, 0xF5))


def reads_plain_alike(lexer: Lexer, state: int) -> bool:
    """Whether the expressions of ``state`` show that every plain character leads it to one
    same state, with no transition made: each of its expressions either begins with no plain
    character's first byte (every plain character ends it), or is ``body{lo,hi}``, alone or
    followed by the rest of a concatenation, where every plain character reads ``body`` whole
    into the empty string (``_reads_chars_whole``, checked once per body and expression set)
    and, where ``body{lo,hi}`` may match nothing, the rest begins with no plain first byte.
    Then each plain character, read byte by byte, derives every pair to one same expression
    (``body{lo-1,hi-1}`` and the rest, or nothing), and the DFA's target is the same for all of
    them. False (the exploration decides) for anything else, and for guarded states, whose
    transitions a guard may refuse byte by byte. Cost: a few node lookups per pair."""
    dfa = lexer.dfa
    if dfa.tags[state]:
        return False
    exprs = dfa.exprs
    kinds, args, nullable, first = exprs.kind, exprs.args, exprs.nullable, exprs.first_bytes
    for _origin, expr in dfa.pairs[state]:
        if not first(expr) & _PLAIN_FIRST:
            continue  # (a superset of the bytes that derive it to something: exact enough here)
        kind = kinds[expr]
        if kind == CONCAT_KIND:
            head, *rest = args[expr]  # type: ignore[misc]
        elif kind == REPEAT_KIND:
            head, rest = expr, []
        else:
            return False
        if kinds[head] != REPEAT_KIND:
            return False
        if not _reads_chars_whole(exprs, args[head][0]) and _STRUCTURAL_MUTATION != 1:  # type: ignore[index]
            return False
        if nullable[head] and _STRUCTURAL_MUTATION != 2:  # the rest may be read from the first byte on: no plain byte may begin it
            for item in rest:
                if first(item) & _PLAIN_FIRST:
                    return False
                if not nullable[item]:
                    break
    return True


_WHOLE: "weakref.WeakKeyDictionary[ExprSet, dict[int, bool]]" = weakref.WeakKeyDictionary()
_WHOLE_LOCK = threading.Lock()


def _reads_chars_whole(exprs: ExprSet, body: int) -> bool:
    """Whether every plain character, read byte by byte, derives ``body`` to the empty string
    exactly (``EPSILON``), through expressions that neither match nothing nor match the empty
    string on the way (so a repeat of ``body`` cannot end inside a character). Explores the
    derivatives by every plain ASCII byte and every well-formed UTF-8 sequence (memoised on the
    expression, a few hundred derivatives), once per body and expression set."""
    nullable = exprs.nullable
    return _every_char_leads(exprs, body, _WHOLE, EPSILON, lambda nxt: nxt != NOTHING and not nullable[nxt])


def _every_char_leads(exprs: ExprSet, expr: int, memo: "weakref.WeakKeyDictionary[ExprSet, dict[int, bool]]",
                      end: int, on_the_way: Callable[[int], bool]) -> bool:
    """Whether every plain character, read byte by byte, derives ``expr`` to ``end`` exactly,
    through derivatives ``on_the_way`` accepts (between the bytes of a multi-byte character).
    Every plain ASCII byte and every well-formed UTF-8 sequence, each derivative made once;
    the answer memoised per expression in ``memo``'s dict for ``exprs``."""
    with _WHOLE_LOCK:
        known = memo.get(exprs)
        if known is None:
            known = memo[exprs] = {}
    found = known.get(expr)
    if found is not None:
        return found
    derive = exprs.derivative
    seen: dict[tuple[int, int, int, int], bool] = {}

    def rest_leads(node: int, count: int, lo: int, hi: int) -> bool:
        """Every continuation byte in ``lo..hi``, and ``count - 1`` more after it, ends in ``end``."""
        key = (node, count, lo, hi)
        answer = seen.get(key)
        if answer is None:
            answer = True
            for byte in range(lo, hi + 1):
                nxt = derive(node, byte)
                answer = nxt == end if count == 1 else on_the_way(nxt) and rest_leads(nxt, count - 1, 0x80, 0xBF)
                if not answer:
                    break
            seen[key] = answer
        return answer

    found = all(derive(expr, byte) == end for byte in _PLAIN_ASCII)
    for (lo, hi), count, (clo, chi) in _LEADS if found else ():
        for lead in range(lo, hi + 1):
            after = derive(expr, lead)
            if not on_the_way(after) or not rest_leads(after, count, clo, chi):
                found = False
                break
        if not found:
            break
    known[expr] = found
    return found


#: Tests only: a deliberately broken ``absorbs_plain`` (1: the expression that must loop on plain
#: characters is not checked to; 2: the excluded texts are not checked to be finite).
_ABSORB_MUTATION = 0

_LOOPS: "weakref.WeakKeyDictionary[ExprSet, dict[int, bool]]" = weakref.WeakKeyDictionary()


def absorbs_plain(lexer: Lexer, state: int) -> bool:
    """Whether some expression of ``state`` stays alive through any plain text, however long:
    then every plain token keeps the lexeme open from ``state`` (its lexeme part is the whole
    slice, plus a walk of the other tokens' trie), though plain characters may lead to many
    states. True for an expression ``x`` that every plain character derives back to itself
    (``_loops_on_plain``: a string's body and closing quote), or ``x & ¬f1 & ¬f2 ...`` with that
    ``x`` and finite ``f`` (no ``&``, ``¬`` or unbounded repeat): an object's "other key" less the
    named ones, in its first state and after any part of a name. Such an ``x`` matches arbitrarily
    long strings after any plain text ``w`` (``x/w = x``, not empty), and each ``f/w`` finitely
    many, so ``(x & ¬f...)/w`` is never empty. False for guarded states (a guard may refuse a
    byte) and anything else (the walk decides). Cost: a few node lookups per expression, and once
    per ``x`` and expression set, the derivatives of every plain character."""
    dfa = lexer.dfa
    if dfa.tags[state]:
        return False
    exprs = dfa.exprs
    kinds, args, first = exprs.kind, exprs.args, exprs.first_bytes
    for _origin, expr in dfa.pairs[state]:
        plain_first = first(expr) & _PLAIN_FIRST
        if plain_first != _PLAIN_FIRST and (_ABSORB_MUTATION != 1 or not plain_first):
            continue  # some plain first byte ends it (a name's literal: most pairs of a key state)
        if kinds[expr] == AND_KIND:
            members = args[expr]
            positive = [m for m in members if kinds[m] != NOT_KIND]  # type: ignore[union-attr]
            if len(positive) != 1:
                continue
            if _ABSORB_MUTATION != 2 and any(
                    exprs.has_boolean(args[m]) or exprs.has_unbounded_repeat(args[m])  # type: ignore[arg-type]
                    for m in members if kinds[m] == NOT_KIND):  # type: ignore[union-attr]
                continue
            expr = positive[0]
        if not exprs.has_boolean(expr) and _loops_on_plain(exprs, expr):
            return True
    return False


def _loops_on_plain(exprs: ExprSet, expr: int) -> bool:
    """Whether every plain character, read byte by byte, derives ``expr`` (no ``&``/``¬``) back
    to ``expr`` exactly, through expressions that match something (``_every_char_leads``: a few
    hundred derivatives, once per expression and expression set)."""
    if _ABSORB_MUTATION == 1:
        return expr != NOTHING
    if exprs.first_bytes(expr) & _PLAIN_FIRST != _PLAIN_FIRST:
        return False  # some plain first byte ends it: no derivative needed
    return _every_char_leads(exprs, expr, _LOOPS, expr, lambda nxt: nxt != NOTHING)


#: ``_walk.plain_successor``'s answers that are not states: plain characters go different ways;
#: a transition is missing from the table.
_UNDECIDED, _MISSING = -2, -3
#: Tests only: a deliberately broken kernel (4: multi-byte characters not explored; 5: a lead byte
#: admitted to a split without its continuation bytes checked).
_MUTATION = 0


def python_plain_successor(lexer: Lexer, state: int) -> int | None:
    """``plain_successor`` in Python, one ``Lexer.step`` at a time (the reference)."""
    if state == DEAD:
        return DEAD
    target = lexer.step(state, _PLAIN_ASCII[0])
    for byte in _PLAIN_ASCII:
        if lexer.step(state, byte) != target:
            return None
    # (lexer state, continuation bytes still due, allowed range of the next one)
    seen: set[tuple[int, int, int, int]] = set()
    work: list[tuple[int, int, int, int]] = []
    for (lo, hi), count, (clo, chi) in _LEADS:
        for byte in range(lo, hi + 1):
            nxt = lexer.step(state, byte)
            if nxt == DEAD:
                if target != DEAD:
                    return None
                continue
            if target == DEAD:
                return None  # a lead byte lives on where ASCII dies: decided by what follows
            item = (nxt, count, clo, chi)
            if item not in seen:
                seen.add(item)
                work.append(item)
    while work:
        lex, count, lo, hi = work.pop()
        for byte in range(lo, hi + 1):
            nxt = lexer.step(lex, byte)
            if count == 1:
                if nxt != target:
                    return None
                continue
            if nxt == DEAD:
                return None
            item = (nxt, count - 1, 0x80, 0xBF)
            if item not in seen:
                seen.add(item)
                if len(seen) > MAX_EXPLORED:
                    return None
                work.append(item)
    return target


def plain_split(lexer: Lexer, state: int) -> tuple[int, bytes] | None:
    """For a state where plain characters go different ways: the state most plain ASCII bytes
    lead ``state`` to (the least such state on a tie), and per byte (256 bytes, 0 or 1) whether
    it is a plain first byte all of whose plain characters lead there: a plain ASCII byte that
    does, a UTF-8 lead byte whose every well-formed character does, never dead on the way (a lead
    byte whose check passes ``MAX_EXPLORED`` items is left out, and so are those after it). None
    when no plain ASCII byte leads anywhere live. By the C kernel (``_walk.plain_split``) where it
    runs, else ``python_plain_split``; both give the same."""
    if COMPILED and state != DEAD:
        where = np.zeros(2, dtype=np.int64)
        firsts = np.zeros(256, dtype=np.uint8)
        while True:
            table, _accepts = lexer.dense()
            found = _walk.plain_split(table, state, where, firsts, _MUTATION, _cell_maker(lexer))
            if found != _MISSING:
                return None if found == _UNDECIDED else (found, firsts.tobytes())
            lexer.dense_cell(int(where[0]), int(where[1]))
    return python_plain_split(lexer, state)


def python_plain_split(lexer: Lexer, state: int) -> tuple[int, bytes] | None:
    """``plain_split`` in Python, one ``Lexer.step`` at a time (the reference)."""
    if state == DEAD:
        return None
    step = lexer.step
    counts: dict[int, int] = {}
    for byte in _PLAIN_ASCII:
        nxt = step(state, byte)
        if nxt != DEAD:
            counts[nxt] = counts.get(nxt, 0) + 1
    if not counts:
        return None
    target = min(counts, key=lambda s: (-counts[s], s))
    firsts = bytearray(256)
    for byte in _PLAIN_ASCII:
        firsts[byte] = step(state, byte) == target
    known: dict[tuple[int, int, int, int], bool] = {}
    explored = 0

    def check(lex: int, count: int, lo: int, hi: int) -> bool | None:
        """Whether every rest of a character from ``lex`` ends in ``target`` (None: too many to tell)."""
        nonlocal explored
        key = (lex, count, lo, hi)
        found = known.get(key)
        if found is not None:
            return found
        explored += 1
        if explored > MAX_EXPLORED:
            return None
        answer: bool | None = True
        for byte in range(lo, hi + 1):
            nxt = step(lex, byte)
            if count == 1:
                answer = nxt == target
            elif nxt == DEAD:
                answer = False
            else:
                answer = check(nxt, count - 1, 0x80, 0xBF)
            if answer is not True:
                break
        if answer is not None:
            known[key] = answer
        return answer

    for (lo, hi), count, (clo, chi) in _LEADS:
        for byte in range(lo, hi + 1):
            nxt = step(state, byte)
            if nxt == DEAD:
                continue
            ok = check(nxt, count, clo, chi)
            if ok is None:
                return target, bytes(firsts)  # the rest of the lead bytes are walked
            firsts[byte] = ok
    return target, bytes(firsts)


def plain_run(lexer: Lexer, successor: Callable[[int], int | None], state: int,
              longest: int) -> tuple[int, list[int]] | None:
    """How many plain characters ``state`` can read in a row, as far as the longest plain token
    (``longest`` characters) can see, when where they lead depends on their number alone: ``(k,
    states)`` with ``states[j]`` the state after ``j + 1`` characters; ``k == longest`` when the
    run reaches that far (or loops). Then a plain token of ``j <= k`` characters leads to
    ``states[j - 1]`` and a longer one is rejected. None when plain characters do not behave
    alike, or when the run ends in an accepting state (a longer token would end the lexeme there
    and go on in the next one: a walk must decide). ``successor`` is ``plain_successor``
    (memoised by the caller)."""
    states: list[int] = []
    current = state
    while len(states) < longest:
        nxt = successor(current)
        if nxt is None:
            return None
        if nxt == DEAD:
            return None if lexer.matches[current] else (len(states), states)
        states.append(nxt)
        if nxt == current:  # a loop: every further length leads here too
            return longest, states
        current = nxt
    return longest, states

