"""Token masks for one (recognizer, vocabulary) pair, cached on what decides them.

A mask after recognizer state ``(lex, parse, fresh)`` is the union of

* the *lexeme part*, decided by the lexer state alone (``walk.lexeme_walk``, plus the plain-text
  slice when the lexer state loops on plain text): cached per lexer state, so every nesting depth
  and every parse reaching that lexer state shares it;
* the *boundary part*, the tokens that end the current lexeme and go on into the next ones
  (``walk.boundary_walk``): a short array of token ids, cached per (lexer state, parse state);
* EOS, when the text so far is a complete sentence.

Whole masks are assembled from the two (a copy of the lexeme part, O(V)) and the most recent ones
kept in a small cache for the states a generation loop revisits. Every cache is an LRU bounded in
bytes (``Limits.cache_bytes`` in all); ``cache_info`` reports entries, bytes, hits and misses. Masks
handed out are read-only.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..engine.completion import Completions
from ..engine.lexer import DEAD
from ..engine.parser import ParseState
from ..engine.recognizer import Recognizer, State
from ..vocab import TokenTrie
from ..limits import DEFAULT_LIMITS, Limits, applied
from ..lru import HITS, VALUE, ByteBoundedLRU
from ..vocab import Vocabulary
from .bitmask import pack_mask
from .slices import plain_run, plain_successor, string_slice
from .walk import Boundary, boundary_walk, lexeme_walk

_UNKNOWN = object()

#: ``finish_tokens`` of a state whose canonical completion this vocabulary cannot spell, or that
#: has none the budget can vouch for.
UNREACHABLE = 1 << 30


class _LexemePart:
    __slots__ = ("mask", "trie", "boundaries", "reached")

    def __init__(self, mask: np.ndarray, trie: TokenTrie, boundaries: list[Boundary], reached: frozenset[int]) -> None:
        self.mask = mask
        self.trie = trie
        self.boundaries = boundaries
        self.reached = reached  # lexer states the lexeme-internal tokens lead to


class _BoundaryPart:
    __slots__ = ("ids", "reached")

    def __init__(self, ids: np.ndarray, reached: frozenset[tuple[int, ParseState]]) -> None:
        self.ids = ids
        self.reached = reached


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
        self._lexeme_parts: ByteBoundedLRU[_LexemePart] = ByteBoundedLRU(max_cache_bytes // 2)
        self._boundary_parts: ByteBoundedLRU[_BoundaryPart] = ByteBoundedLRU(max_cache_bytes // 4)
        self._finish: ByteBoundedLRU[int] = ByteBoundedLRU(max_cache_bytes // 16)
        self.longest = vocab.longest_token()
        self._successor_bytes: ByteBoundedLRU[int] = ByteBoundedLRU(max_cache_bytes // 64)
        self.completions = completions if completions is not None else Completions(recognizer)
        # fewest tokens <= fewest bytes holds when every byte value is an ordinary token
        self._bytes_bound_tokens = not vocab.missing_single_bytes()
        #: whole masks per state; the hit path reads ``mask_cache.entries`` directly (see lru.py)
        self.mask_cache: ByteBoundedLRU[np.ndarray] = ByteBoundedLRU(max_cache_bytes // 8)
        self._mask_entries = self.mask_cache.entries
        self._packed: ByteBoundedLRU[np.ndarray] = ByteBoundedLRU(max_cache_bytes // 8)
        # per lexer state: where every plain character leads (see slices.plain_successor)
        self._plain_next: dict[int, int | None] = {}

    def _lexeme_part(self, lex: int) -> _LexemePart:
        part = self._lexeme_parts.get(lex)
        if part is not None:
            return part
        lexer = self.recognizer.lexer
        mask = np.zeros(self.size, dtype=bool)
        run = plain_run(lexer, self._plain_successor, lex, self.slice.longest)
        trie = self.slice.rest if run is not None else self.trie
        nodes, boundaries, reached = lexeme_walk(lexer, trie, lex)
        mask[trie.tokens_at(nodes)] = True
        if run is not None:
            count, states = run
            if count:
                mask |= self.slice.up_to(count)
            reached.update(states)
        mask.flags.writeable = False
        part = _LexemePart(mask, trie, boundaries, frozenset(reached))
        self._lexeme_parts.put(lex, part, mask.nbytes + 64 * (len(boundaries) + len(reached)))
        return part

    def _plain_successor(self, lex: int) -> int | None:
        found = self._plain_next.get(lex, _UNKNOWN)
        if found is _UNKNOWN:
            found = self._plain_next[lex] = plain_successor(self.recognizer.lexer, lex)
        return found  # type: ignore[return-value]

    def _boundary_part(self, lex: int, parse: ParseState, part: _LexemePart) -> _BoundaryPart:
        key = (lex, parse)
        found = self._boundary_parts.get(key)
        if found is None:
            nodes, reached = boundary_walk(self.recognizer, part.trie, part.boundaries, parse)
            found = _BoundaryPart(part.trie.tokens_at(nodes), frozenset(reached))
            self._boundary_parts.put(key, found, found.ids.nbytes + 64 * (len(reached) + 1))
        return found

    def mask(self, state: State) -> np.ndarray:
        """Bool mask over the vocabulary: token t allowed iff ``state`` + bytes(t) is viable; EOS
        iff the text is a complete sentence. Read-only."""
        entry = self._mask_entries.get(state)
        if entry is not None:
            entry[HITS] += 1
            return entry[VALUE]
        self.mask_cache.misses += 1
        if self.limits is not DEFAULT_LIMITS:  # lazy lexer and parser work runs under the grammar's limits
            with applied(self.limits):
                return self._new_mask(state)
        return self._new_mask(state)

    def _new_mask(self, state: State) -> np.ndarray:
        lex, parse, _fresh = state
        if lex == DEAD:
            mask = np.zeros(self.size, dtype=bool)
        else:
            part = self._lexeme_part(lex)
            mask = part.mask.copy()
            if part.boundaries:
                mask[self._boundary_part(lex, parse, part).ids] = True
        if len(self.eos_ids) and self.recognizer.is_accepting(state):
            mask[self.eos_ids] = True
        mask.flags.writeable = False
        self.mask_cache.put(state, mask, mask.nbytes)
        return mask

    def packed(self, state: State) -> np.ndarray:
        """``mask(state)`` as int32 words (bit j of word j // 32 is token j). Cached."""
        found = self._packed.get(state)
        if found is None:
            found = pack_mask(self.mask(state))
            found.flags.writeable = False
            self._packed.put(state, found, found.nbytes)
        return found

    def cache_info(self) -> dict[str, dict[str, int]]:
        """Entries, bytes held, hits and misses of each cache."""
        return {"lexeme_parts": self._lexeme_parts.info(), "boundary_parts": self._boundary_parts.info(),
                "masks": self.mask_cache.info(), "packed": self._packed.info(), "finish": self._finish.info(),
                "successor_bytes": self._successor_bytes.info()}

    # -- the closing budget --------------------------------------------------------------------

    def finish_tokens(self, state: State) -> int:
        """Fewest tokens of this vocabulary that spell the canonical completion of ``state``
        (``Completions.path``); ``UNREACHABLE`` when there is none to vouch for or the vocabulary
        cannot spell it. Cached per state. A new state costs the part of its completion not yet
        known: the walk along the canonical path stops at the first state already counted, so a
        generation that leaves the path inside a value and rejoins it after the value pays for
        the detour only (O(1) amortised per token, whatever the document's size)."""
        found = self._finish.get(state)
        if found is not None:
            return found
        completions = self.completions
        if completions.min_bytes(state) > completions.limit:
            self._finish.put(state, UNREACHABLE, 96)
            return UNREACHABLE
        accepting = self.recognizer.is_accepting
        states = [state]
        text = bytearray()
        current = state
        while not accepting(current):
            link = completions.next_byte(current)
            if link is None or len(text) >= completions.limit:
                for unreachable in states:
                    self._finish.put(unreachable, UNREACHABLE, 96)
                return UNREACHABLE
            text.append(link[0])
            current = link[1]
            states.append(current)
            if self._finish.get(current) is not None:
                break
        # the counts of the first few known states past the walk (a token may reach into them)
        lookahead = self.longest
        tail_counts: list[int] = []
        tail = current
        while len(tail_counts) <= lookahead:
            count = 0 if accepting(tail) else self._finish.get(tail)
            if count is None:
                count = self.finish_tokens(tail)
            tail_counts.append(count)
            link = None if accepting(tail) else completions.next_byte(tail)
            if link is None:
                break
            text.append(link[0])
            tail = link[1]
        known = len(states) - 1  # index of `current` in text positions
        counts: list[int] = [UNREACHABLE] * known + tail_counts
        tokens = self.vocab.ordinary_tokens()
        for i in range(known - 1, -1, -1):
            best = UNREACHABLE
            for stop in range(i + 1, min(len(counts) - 1, i + lookahead) + 1):
                rest = counts[stop]
                if rest + 1 < best and bytes(text[i:stop]) in tokens:
                    best = rest + 1
            counts[i] = best
            self._finish.put(states[i], best, 96)
        return counts[0]

    def max_successor_bytes(self, state: State) -> int:
        """The most bytes any allowed token can leave to complete (``min_bytes`` of every state a
        token of the mask leads to). From the walks' reached states; cached per state."""
        found = self._successor_bytes.get(state)
        if found is None:
            lex, parse, _fresh = state
            found = 0
            if lex != DEAD:
                cost = self.completions.lexer_cost
                part = self._lexeme_part(lex)
                for reached in part.reached:
                    found = max(found, cost(reached, parse))
                if part.boundaries:
                    for reached, after in self._boundary_part(lex, parse, part).reached:
                        found = max(found, cost(reached, after))
            self._successor_bytes.put(state, found, 64)
        return found

    def budget_mask(self, state: State, remaining_tokens: int) -> np.ndarray:
        """``mask(state)`` narrowed so that the text can still end within ``remaining_tokens``
        tokens, counting the one chosen now; a subset of the mask, never empty while
        ``finish_tokens(state) <= remaining_tokens``.

        While no allowed token can leave more than ``remaining_tokens - 1`` bytes to complete (and
        every byte is a token), the mask is returned as it is. Otherwise only the tokens that
        spell a prefix of the canonical completion and leave a remainder spellable in time are
        kept: following one, the remainder is the new state's canonical completion, so the count
        goes down by at least one per token and the text ends in time (``docs/closing-budget.md``).
        A state with no canonical completion to vouch for gets the plain mask."""
        mask = self.mask(state)
        here = self.finish_tokens(state)
        if here >= UNREACHABLE:
            return mask
        budget = max(remaining_tokens - 1, here - 1, 0)
        if self._bytes_bound_tokens and self.max_successor_bytes(state) <= budget:
            return mask
        narrowed = np.zeros(self.size, dtype=bool)
        ids_by_bytes = self.vocab.ids_by_bytes()
        accepting = self.recognizer.is_accepting
        prefix = bytearray()
        current = state
        for _ in range(self.longest):  # tokens that spell a prefix of the canonical completion
            link = None if accepting(current) else self.completions.next_byte(current)
            if link is None:
                break
            prefix.append(link[0])
            current = link[1]
            ids = ids_by_bytes.get(bytes(prefix))
            if ids is not None and self.finish_tokens(current) <= budget:
                narrowed[list(ids)] = True
        narrowed &= mask
        if len(self.eos_ids) and self.recognizer.is_accepting(state):
            narrowed[self.eos_ids] = True
        narrowed.flags.writeable = False
        return narrowed
