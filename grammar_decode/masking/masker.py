"""Token masks for one (recognizer, vocabulary) pair, cached on what decides them.

A mask after recognizer state ``(lex, parse, fresh)`` is the union of

* the *lexeme part*, decided by the lexer state alone (``walk.lexeme_bits``, plus the plain-text
  slice when plain text runs on from the lexer state, when no plain text can end its lexeme
  (``slices.absorbs_plain``), or from where most plain characters lead it:
  ``slices.plain_split``): cached per lexer state, so every nesting depth
  and every parse reaching that lexer state shares it, and, as lexer states are the shared DFA's
  (``engine/dfa.py``), every grammar on the same ``ExprSet`` and vocabulary shares it too
  (``SharedParts``): a JSON string's lexeme part is walked once per process, not once per schema;
* the *boundary part*, the tokens that end the current lexeme and go on into the next ones
  (``walk.boundary_walk``): a short array of token ids, cached per (lexer state, parse state);
* EOS, when the text so far is a complete sentence.

Whole masks are assembled from the two in packed form (a copy of the lexeme part's bits, V / 8
bytes, with the boundary part's tokens set in it: ``packed``; the bool form is that unpacked), and
the most recent ones kept in a small cache for the states a generation loop revisits. Every cache is an LRU bounded in
bytes: a (grammar, vocabulary) pair's in ``Limits.cache_bytes`` in all, the shared lexeme parts
counted in it (half of it; they are shared by the grammars with the same DFA, vocabulary and
``cache_bytes``, so a grammar given a small budget has a store of that size);
``cache_info`` reports entries, bytes, hits and misses. Masks handed out are read-only.
"""

from __future__ import annotations

import threading
import weakref
from functools import partial
from collections.abc import Set as AbstractSet

import numpy as np

from ..engine.completion import Completions
from ..engine.dfa import LexemeDFA
from ..engine.lexer import DEAD
from ..engine.parser import ParseState
from ..engine.recognizer import Recognizer, State
from ..vocab import TokenTrie
from ..limits import DEFAULT_LIMITS, Limits, applied
from ..lru import ByteBoundedLRU
from ..vocab import Vocabulary
from .bitmask import bitmask_words
from .slices import (absorbs_plain, plain_ascii_reach, plain_run, plain_split, plain_successor,
                     string_slice)
from .walk import Boundaries, BoundaryWalker, LexemeWalker, ReachedPairs, add_token_bits, renamed_boundaries

_UNKNOWN = object()
#: Fewest plain ASCII bytes (of 93) a split must send to its target to be used: below that, the
#: subtrees it lets a walk skip are too few to pay for the slice's mask.
_MIN_SPLIT = 32
#: Tests only: True runs the run and split checks whatever ``plain_ascii_reach`` says.
_CHECKS_ALWAYS = False
#: Tests only: the split's target taken as the walk's loop state even where its plain run ends
#: before the longest plain token (a deliberately broken masker).
_LOOP_UNCHECKED = False
#: Tests only: a twin's lexeme part taken with its boundaries' states not renamed (a deliberately
#: broken masker: the lexeme that ends there is the twin's, not this state's).
_TWIN_NOT_RENAMED = False
#: Tests only: 1 renames a twin's boundary states wrongly (to the next state id).
_RENAME_MUTATION = 0

class LexemePart:
    __slots__ = ("bits", "trie", "boundaries", "reached")

    def __init__(self, bits: np.ndarray, trie: TokenTrie, boundaries: Boundaries, reached: np.ndarray | None) -> None:
        self.bits = bits  # packed as ``packed`` masks are, as uint8: an eighth of a bool mask
        self.trie = trie
        self.boundaries = boundaries
        #: the lexer states the lexeme-internal tokens lead to, sorted int32 (an array: no work
        #: for the cyclic collector, which would visit each int of a set on every full collection);
        #: None in a part renamed from a twin's or taken whole from the slice
        #: (``Masker.lexeme_reached``)
        self.reached = reached


class BoundaryPart:
    __slots__ = ("nodes", "trie", "reached")

    def __init__(self, nodes: np.ndarray, trie: TokenTrie, reached: "AbstractSet[tuple[int, ParseState]]") -> None:
        #: the allowed trie nodes (int32), whose tokens a mask sets in one pass in C
        #: (``walk.add_token_bits``): no ids gathered, no ``np.bitwise_or.at``
        self.nodes = nodes
        self.trie = trie
        self.reached = reached


def _sorted_union(ids: np.ndarray, more: list[int]) -> np.ndarray:
    """The sorted int32 ids of ``ids`` (sorted) and ``more``, each once. Not ``np.union1d``,
    whose first call in a process imports ``numpy.ma`` (~12 ms, inside some mask)."""
    both = np.sort(np.concatenate((ids, np.asarray(more, dtype=np.int32))))
    keep = np.ones(len(both), dtype=bool)
    np.not_equal(both[1:], both[:-1], out=keep[1:])
    return both[keep]


def _set_bits(bits: np.ndarray, ids: np.ndarray) -> None:
    """Set the bits of token ``ids`` in ``bits`` (uint8, little-endian bit order)."""
    if len(ids):
        np.bitwise_or.at(bits, ids >> 3, np.left_shift(1, ids & 7).astype(np.uint8))


class SharedParts:
    """The lexeme parts and plain-text successors of one (DFA, vocabulary, budget), shared by
    every grammar on that DFA with that ``Limits.cache_bytes`` (``shared_parts``)."""

    def __init__(self, max_bytes: int) -> None:
        #: per lexer state: ``(bits, whether the trie is the slice's rest, boundaries, reached)``
        #: of its ``LexemePart``
        self.lexeme_parts: ByteBoundedLRU[tuple[np.ndarray, bool, np.ndarray, np.ndarray]] = \
            ByteBoundedLRU(max_bytes)
        # per lexer state: where every plain character leads (see slices.plain_successor)
        self.plain_next: ByteBoundedLRU[int | None] = ByteBoundedLRU(max_bytes // 32)
        # per lexer state: where most plain characters lead, and which (see slices.plain_split)
        self.plain_splits: ByteBoundedLRU[tuple[int, bytes] | None] = ByteBoundedLRU(max_bytes // 32)
        #: per ``LexemeDFA.shape``: a lexer state of that shape whose lexeme part was walked
        self.shapes: ByteBoundedLRU[int] = ByteBoundedLRU(max_bytes // 32)


_SHARED: "weakref.WeakKeyDictionary[LexemeDFA, weakref.WeakKeyDictionary[Vocabulary, dict[int, SharedParts]]]" = \
    weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def shared_parts(dfa: LexemeDFA, vocab: Vocabulary, max_bytes: int) -> SharedParts:
    """The ``SharedParts`` of ``dfa`` and ``vocab`` with a budget of ``max_bytes``, made on first
    use; it lives while both do."""
    with _SHARED_LOCK:
        per_vocab = _SHARED.get(dfa)
        if per_vocab is None:
            per_vocab = _SHARED[dfa] = weakref.WeakKeyDictionary()
        by_budget = per_vocab.get(vocab)
        if by_budget is None:
            by_budget = per_vocab[vocab] = {}
        found = by_budget.get(max_bytes)
        if found is None:
            found = by_budget[max_bytes] = SharedParts(max_bytes)
        return found


class Masker:
    """Computes and caches masks; shared by every matcher of one grammar and vocabulary."""

    def __init__(self, recognizer: Recognizer, vocab: Vocabulary, limits: Limits = DEFAULT_LIMITS,
                 completions: Completions | None = None) -> None:
        max_cache_bytes = limits.cache_bytes
        self.limits = limits
        self.recognizer = recognizer
        # a proxy: grammars keep maskers in a WeakKeyDictionary keyed by the vocabulary
        self.vocab: Vocabulary = weakref.proxy(vocab)
        self.size = len(vocab)
        self.trie = vocab.trie
        self.slice = string_slice(vocab)
        self.eos_ids = np.array(vocab.eos_token_ids, dtype=np.int64)
        self.ordinary = vocab.ordinary_mask()  # read-only, cached by the vocabulary
        shared = shared_parts(recognizer.lexer.dfa, vocab, max_cache_bytes // 2)
        self._lexeme_parts = shared.lexeme_parts
        self._boundary_parts: ByteBoundedLRU[BoundaryPart] = ByteBoundedLRU(max_cache_bytes // 4)
        self.completions = completions if completions is not None else Completions(recognizer)
        #: whole masks per state; the hit path reads ``mask_cache.entries`` directly (see lru.py)
        self.mask_cache: ByteBoundedLRU[np.ndarray] = ByteBoundedLRU(max_cache_bytes // 8)
        self._mask_entries = self.mask_cache.entries
        self._mask_recent = self.mask_cache.recent
        self._packed: ByteBoundedLRU[np.ndarray] = ByteBoundedLRU(max_cache_bytes // 8)
        self._plain_next: ByteBoundedLRU[int | None] = shared.plain_next
        self._plain_splits: ByteBoundedLRU[tuple[int, bytes] | None] = shared.plain_splits
        self._shapes: ByteBoundedLRU[int] = shared.shapes
        # the miss path reads the caches' dicts directly (see lru.py) and walks with the arguments
        # that never change bound once: a miss is ~20 Python steps, each a few hundred ns in context
        self._lexeme_entries, self._lexeme_recent = self._lexeme_parts.entries, self._lexeme_parts.recent
        self._boundary_entries, self._boundary_recent = self._boundary_parts.entries, self._boundary_parts.recent
        # a part's trie is the whole one or the slice's rest: a walker for each
        self._walk_whole = LexemeWalker(recognizer.lexer, self.trie, self.size)
        self._walk_rest = LexemeWalker(recognizer.lexer, self.slice.rest, self.size)
        self._bound_whole = BoundaryWalker(recognizer, self.trie)
        self._bound_rest = BoundaryWalker(recognizer, self.slice.rest)

    def lexeme_part(self, lex: int) -> LexemePart:
        """The lexeme part of lexer state ``lex`` (cached): its mask, the trie walked, the
        boundaries met, and the lexer states its tokens lead to (None where the part was renamed
        from a twin's or taken whole from the slice: ``lexeme_reached`` walks for them). A state
        whose twin's part is cached
        (``LexemeDFA.shape``: the same expressions, other lexemes; a key's state once its name is
        read, and the same state of every other key) takes that part with the states its
        boundaries name renamed, no walk."""
        held = self._lexeme_parts.get(lex)
        if held is not None:
            bits, rest, boundaries, reached = held
            return LexemePart(bits, self.slice.rest if rest else self.trie, boundaries, reached)
        dfa = self.recognizer.lexer.dfa
        shape = dfa.shape(lex)
        if shape is not None:
            twin = self._shapes.get(shape)
            held = self._lexeme_parts.get(twin) if twin is not None and twin != lex else None
            if held is not None and held[3] is not None:
                return self._renamed_part(lex, twin, held)  # type: ignore[arg-type]
        part = self._walked_part(lex)
        if shape is not None:
            self._shapes.put(shape, lex, 64 + 8 * len(shape))
        return part

    def _renamed_part(self, lex: int, twin: int, held: tuple[np.ndarray, bool, Boundaries, np.ndarray]) -> LexemePart:
        """The lexeme part of ``lex`` from its twin ``twin``'s (``held``, cached): the same bits
        and boundary nodes, each boundary's lexer state renamed to the one ``lex`` reaches there
        (``LexemeDFA.renamed``); the states reached are left to ``lexeme_reached``."""
        bits, rest, boundaries, _reached = held
        dfa = self.recognizer.lexer.dfa
        names = dfa.twin_names(twin, lex)
        if _TWIN_NOT_RENAMED:
            names = {origin: origin for origin in names}
        if isinstance(boundaries, np.ndarray):
            # a state or three among up to thousands of boundaries: each renamed once, in one
            # pass (no Python int per row)
            boundaries = renamed_boundaries(boundaries, partial(dfa.renamed, names=names), _RENAME_MUTATION)
        else:
            renamed = {before: dfa.renamed(before, names) for before in {b for _node, b in boundaries}}
            boundaries = [(node, renamed[before]) for node, before in boundaries]
        # the bits are the twin's array, counted again: an entry must not hold bytes its twin's
        # eviction would leave uncounted
        self._lexeme_parts.put(lex, (bits, rest, boundaries, None), bits.nbytes + 64 * len(boundaries))
        return LexemePart(bits, self.slice.rest if rest else self.trie, boundaries, None)

    def lexeme_reached(self, lex: int) -> np.ndarray:
        """The lexer states the tokens of ``lex``'s lexeme part lead to (sorted int32): the
        cached part's, or, for a part renamed from a twin's or one taken whole from the slice
        (``_walked_part``), from a walk of the whole trie (which then caches the walked part in its
        place)."""
        reached = self.lexeme_part(lex).reached
        return reached if reached is not None else self._walked_part(lex, whole=True).reached  # type: ignore[return-value]

    def _walked_part(self, lex: int, whole: bool = False) -> LexemePart:
        """The lexeme part of ``lex`` by a walk of the trie (cached). Where every plain token
        keeps the lexeme open (``slices.absorbs_plain``) and no run decides them by length, the
        part is the whole slice and a walk of the other tokens' trie, and the states the plain
        tokens reach are left unknown (None: ``lexeme_reached`` asks again with ``whole``, for a
        walk of the whole trie)."""
        lexer = self.recognizer.lexer
        # plain characters that surely go different ways have no run, and too few that may lead
        # anywhere no split: both checks left out (a key's literal rest, a number, a keyword; a
        # key's prefix, where the names' next letters go one way and the others another)
        reach, apart = plain_ascii_reach(lexer, lex)
        mixed = apart and not _CHECKS_ALWAYS
        run = None if mixed else plain_run(lexer, self._plain_successor, lex, self.slice.longest)
        reached: np.ndarray | None
        if run is not None:
            trie = self.slice.rest
            bits, boundaries, reached = self._walk_rest(lex)
            count, states = run
            if count:
                bits |= self.slice.packed_up_to(count)
            if states:
                reached = _sorted_union(reached, states)
        elif not whole and absorbs_plain(lexer, lex):
            # an object's key (any other key beside the named ones): a split would skip the
            # plain subtrees only below the first bytes no name begins with, and walk every name's
            # prefixes (new lexer states each time the names left change)
            trie = self.slice.rest
            bits, boundaries, _reached = self._walk_rest(lex)
            bits |= self.slice.packed_up_to(self.slice.longest)
            reached = None
        else:
            trie = self.trie
            split = None if reach < _MIN_SPLIT and not _CHECKS_ALWAYS else self._split(lex)
            if split is None:
                bits, boundaries, reached = self._walk_whole(lex)
            else:
                # the plain tokens whose first character leads to the split's target: a run from
                # there decides them by length (one character to the target, then k more at most)
                (target, firsts), (count, states) = split
                # where the target's run reaches the longest plain token, a pure subtree whose path
                # leads there is allowed whole wherever the walk meets it (below a named key's
                # first letters, past the letters no named key goes on with)
                loop = target if count >= self.slice.longest or _LOOP_UNCHECKED else -1
                skip = (self.slice.pure_nodes(trie), firsts, loop)
                bits, boundaries, reached = self._walk_whole(lex, skip)
                bits |= self.slice.packed_split(firsts, count + 1)
                reached = _sorted_union(reached, [target, *states])
        bits.flags.writeable = False
        if reached is not None:
            reached.flags.writeable = False
        # cached as a plain tuple of arrays and a flag, which the cyclic collector stops tracking
        # (with the compiled walk; the Python walk's boundaries are a list, which keeps it
        # tracked): thousands of part objects held late in a long run were a sixth of what every
        # full collection visited (the trie is the vocabulary's, told by the flag)
        self._lexeme_parts.put(lex, (bits, trie is self.slice.rest, boundaries, reached),
                               bits.nbytes + (0 if reached is None else reached.nbytes) + 64 * len(boundaries))
        return LexemePart(bits, trie, boundaries, reached)

    def _split(self, lex: int) -> "tuple[tuple[int, bytes], tuple[int, list[int]]] | None":
        """Where most plain characters lead ``lex`` and which first bytes lead there
        (``slices.plain_split``), with the run that follows there (``slices.plain_run``), where
        that pays: at least ``_MIN_SPLIT`` plain ASCII bytes lead there and a run follows. The
        split is cached per lexer state."""
        split = self._plain_splits.get(lex, _UNKNOWN)
        if split is _UNKNOWN:
            split = plain_split(self.recognizer.lexer, lex)
            self._plain_splits.put(lex, split, 320)
        if split is None or sum(split[1][:0x80]) < _MIN_SPLIT:  # type: ignore[index]
            return None
        run = plain_run(self.recognizer.lexer, self._plain_successor, split[0], self.slice.longest)  # type: ignore[index]
        return None if run is None else (split, run)  # type: ignore[return-value]

    def _plain_successor(self, lex: int) -> int | None:
        found = self._plain_next.get(lex, _UNKNOWN)
        if found is _UNKNOWN:
            found = plain_successor(self.recognizer.lexer, lex)
            self._plain_next.put(lex, found, 64)
        return found  # type: ignore[return-value]

    def boundary_part(self, lex: int, parse: ParseState, part: LexemePart) -> BoundaryPart:
        """The boundary part of ``(lex, parse)`` (cached): the trie nodes allowed and the states
        their tokens reach."""
        return self._boundary(lex, parse, part.trie, part.boundaries)

    def _boundary(self, lex: int, parse: ParseState, trie: TokenTrie, boundaries: Boundaries) -> BoundaryPart:
        """``boundary_part`` from the lexeme part's trie and boundaries (a cached part read without
        a part object): the cache's dict read inline (``ByteBoundedLRU.get``'s two operations), a
        miss walked and put."""
        key = (lex, parse)
        found = self._boundary_entries.get(key)
        if found is not None:
            recent = self._boundary_recent
            recent[key] = recent.get(key, 0) + 1
            return found
        self._boundary_parts.misses += 1
        walker = self._bound_rest if trie is self.slice.rest else self._bound_whole
        nodes, reached = walker(boundaries, parse)
        # the compiled walk's pairs stay in its table until read (``walk.ReachedPairs``)
        found = BoundaryPart(np.asarray(nodes, dtype=np.int32), trie,
                             reached if isinstance(reached, ReachedPairs) else frozenset(reached))
        held = found.nodes.nbytes + 64 * (len(reached) + 1) + getattr(reached, "nbytes", 0)
        self._boundary_parts.put(key, found, held)
        return found

    def mask(self, state: State) -> np.ndarray:
        """Bool mask over the vocabulary: token t allowed iff ``state`` + bytes(t) is viable; EOS
        iff the text is a complete sentence. Read-only. ``packed(state)`` unpacked (O(V))."""
        found = self._mask_entries.get(state)
        if found is not None:
            recent = self._mask_recent
            recent[state] = recent.get(state, 0) + 1
            return found
        self.mask_cache.misses += 1
        mask = np.unpackbits(self.packed(state).view(np.uint8), count=self.size, bitorder="little").view(bool)
        mask.flags.writeable = False
        self.mask_cache.put(state, mask, mask.nbytes)
        return mask

    def packed(self, state: State) -> np.ndarray:
        """The mask of ``state`` as int32 words (bit j of word j // 32 is token j), assembled in
        packed form: the lexeme part's bits, then the boundary part's and EOS's tokens or-ed in.
        Cached; read-only."""
        found = self._packed.get(state)
        if found is None:
            if self.limits is not DEFAULT_LIMITS:  # lazy lexer and parser work runs under the grammar's limits
                with applied(self.limits):
                    found = self._new_packed(state)
            else:
                found = self._new_packed(state)
            found.flags.writeable = False
            self._packed.put(state, found, found.nbytes)
        return found

    def _new_packed(self, state: State) -> np.ndarray:
        """``packed``'s miss: the lexeme part's bits copied, the boundary part's tokens and EOS set
        there. The cache hits on the way are read inline (``ByteBoundedLRU.get``'s two dict
        operations), no part object made for them."""
        lex, parse, _fresh = state
        if lex == DEAD:
            bits = np.zeros(4 * bitmask_words(self.size), dtype=np.uint8)
        else:
            held = self._lexeme_entries.get(lex)
            if held is not None:
                recent = self._lexeme_recent
                recent[lex] = recent.get(lex, 0) + 1
                part_bits, rest, boundaries, _reached = held
                trie = self.slice.rest if rest else self.trie
            else:
                part = self.lexeme_part(lex)
                part_bits, trie, boundaries = part.bits, part.trie, part.boundaries
            bits = part_bits.copy()
            if len(boundaries):
                boundary = self._boundary(lex, parse, trie, boundaries)
                if len(boundary.nodes):
                    add_token_bits(bits, boundary.trie, boundary.nodes)
        if len(self.eos_ids) and self.recognizer.is_accepting(state):
            _set_bits(bits, self.eos_ids)
        return bits.view("<i4")

    def has_packed(self, state: State) -> bool:
        """Whether ``packed(state)`` is a cache hit now (a dict lookup; it may be evicted after)."""
        return state in self._packed.entries

    def cache_info(self) -> dict[str, dict[str, int]]:
        """Entries, bytes held, hits and misses of each cache (``lexeme_parts``, ``plain_next`` and
        ``plain_splits`` are shared with the other grammars on the same DFA and vocabulary)."""
        return {"lexeme_parts": self._lexeme_parts.info(), "boundary_parts": self._boundary_parts.info(),
                "masks": self.mask_cache.info(), "packed": self._packed.info(), "plain_next": self._plain_next.info(),
                "plain_splits": self._plain_splits.info()}
