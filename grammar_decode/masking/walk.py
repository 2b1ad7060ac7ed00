"""Trie walks driven by the recognizer: which tokens can follow a state.

A token is allowed after a recognizer state when every one of its bytes steps to a viable state.
The walk descends the vocabulary trie (``trie.py``) once, stepping the lexer per node and
skipping the whole subtree of a rejected byte.

It is split in two, so that the expensive part is shared across contexts:

* ``lexeme_bits(lexer, trie, lex, size)`` looks at the lexer alone: the tokens that stay inside the
  current lexeme (decided by the lexer state, whatever the parse), and the *boundaries*: trie
  nodes where the lexeme must end (the lexer cannot take the byte, but a lexeme matches just
  before it). It depends on the lexer state only, so it is cached per lexer state and serves every
  nesting depth and every parse that reaches that lexer state.
* ``boundary_walk(recognizer, trie, boundaries, parse)`` finishes the job for one parse: at each
  boundary the parse scans the matched lexemes, the lexer restarts on what the parse expects, and
  the subtree below is walked with both (further boundaries included). Boundary subtrees are small
  (tokens such as ``",`` or ``"}]``).

Cost: two list lookups per visited node once the lexer's rows exist (~0.2 µs in CPython). Both
walks also run compiled (``_walk.c``, built by the package's build): the same loops over the
trie's flat arrays and the lexer's dense table (``Lexer.dense``), without the GIL. A missing
transition is made by Python: the lexeme walk calls back where it stands (``make``), the boundary
walk returns and is called again, which it also does to have a restart (the parse's scan of a
lexeme that ends inside a token) computed, once per walk each. ``GRAMMAR_DECODE_WALK=python``
selects the Python walks, which stay the reference fast path; where the extension is missing, one
warning says so and the Python walks run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Set

import numpy as np

from ..engine.lexer import DEAD, Lexer
from ..engine.parser import ParseState
from ..engine.recognizer import Recognizer
from ..kernels import load, selected
from ..vocab import TokenTrie
from .bitmask import bitmask_words, pack_mask

_walk = load("grammar_decode.masking._walk", "the compiled trie walk", "masks use the slower Python walk")

#: A boundary: (trie node, lexer state just before that node's byte).
Boundary = tuple[int, int]
#: The boundaries of one walk: a list of them (the Python walk), or an int32 array of shape (k, 2)
#: (the compiled one: no Python tuple per boundary, where a state may have thousands).
Boundaries = "list[Boundary] | np.ndarray"

#: Whether lexeme walks use the compiled kernel (``GRAMMAR_DECODE_WALK=python``: never).
COMPILED = selected(_walk)
#: Whether the kernels make missing cells by calling the lexer's C maker directly (tests turn it
#: off to compare with the Python ``make`` callbacks).
_CELLS_IN_C = True
#: Whether the boundary kernel answers the restarts it can itself (``Recognizer.restart`` C to C:
#: the parse's scan, the ``lexer_start`` it holds); tests turn it off to have every restart asked
#: of Python.
_RESTARTS_IN_C = True
#: Whether a restart the boundary kernel answers takes a new parse's lexer start from the DFA's
#: start states by origins key (``ParseState.origins_key``) where they hold it, rather than asking
#: Python (tests turn it off to compare).
_STARTS_IN_C = True
#: Tests only: a deliberately broken kernel (1: rejected subtrees not skipped; 2: boundaries lost;
#: 3: the last token of each node left out of the bits).
_MUTATION = 0


def token_bits(trie: TokenTrie, nodes: "list[int] | np.ndarray", size: int) -> np.ndarray:
    """The mask of the tokens spelled exactly at ``nodes``, packed as ``masking.bitmask`` packs
    masks, as a new writable uint8 array of ``4 * bitmask_words(size)`` bytes: by the C kernel
    in one pass over the nodes where it is built and selected, else ``python_token_bits``."""
    if COMPILED:
        bits = np.zeros(4 * bitmask_words(size), dtype=np.uint8)
        _walk.set_token_bits(np.asarray(nodes, dtype=np.int32), trie.node_token_start, trie.node_token_ids, bits,
                             _MUTATION)
        return bits
    return python_token_bits(trie, nodes, size)


def add_token_bits(bits: np.ndarray, trie: TokenTrie, nodes: np.ndarray) -> None:
    """Set in ``bits`` (``token_bits``'s layout, writable) the tokens spelled exactly at
    ``nodes`` (int32): by the C kernel in place where it is built and selected, else or-ed from
    ``python_token_bits``."""
    if COMPILED:
        _walk.set_token_bits(nodes, trie.node_token_start, trie.node_token_ids, bits, _MUTATION)
    else:
        bits |= python_token_bits(trie, nodes, 8 * len(bits))  # the same layout, as long


def python_token_bits(trie: TokenTrie, nodes: "list[int] | np.ndarray", size: int) -> np.ndarray:
    """``token_bits`` with numpy: the ids gathered, a bool mask set, then packed (the reference)."""
    mask = np.zeros(size, dtype=bool)
    mask[trie.tokens_at(nodes)] = True
    return pack_mask(mask).view(np.uint8).copy()




def renamed_boundaries(boundaries: np.ndarray, rename: "Callable[[int], int]", mutation: int = 0) -> np.ndarray:
    """A read-only copy of ``boundaries`` (the compiled walk's int32 ``(node, state)`` rows) with
    each state renamed by ``rename``, asked once per distinct state: by the C kernel in one pass
    where it is built and selected (a twin's part: 73 rows at the median, a state or two among
    them; ~2 µs where the numpy loop took ~25 µs in context), else ``python_renamed_boundaries``.
    ``mutation`` 1 (tests): a state ``rename`` changes is written as itself plus one."""
    if COMPILED:
        rows = np.frombuffer(_walk.rename_column(np.ascontiguousarray(boundaries, dtype=np.int32), rename, mutation),
                             dtype=np.int32)
        return rows.reshape(-1, 2)
    return python_renamed_boundaries(boundaries, rename, mutation)


def python_renamed_boundaries(boundaries: np.ndarray, rename: "Callable[[int], int]", mutation: int = 0
                              ) -> np.ndarray:
    """``renamed_boundaries`` in numpy (the reference): each distinct state renamed once, its
    rows found by one comparison over the original column (not the one being renamed: a state's
    new name may be another row's old one, which must not be renamed again)."""
    renamed = np.array(boundaries, dtype=np.int32).reshape(-1, 2)
    original = renamed[:, 1].copy()
    column = renamed[:, 1]
    left = original
    while len(left):
        before = int(left[0])
        after = rename(before)
        if after != before:
            column[original == before] = after if mutation != 1 else before + 1
        left = left[left != before]
    renamed.flags.writeable = False
    return renamed


#: Subtrees a walk may leave out or take whole (``python_lexeme_walk``): per trie node, 1 where only
#: plain tokens lie below; per byte, 1 where the subtrees below that first byte's node are left
#: out so; a lexer state (-1: none) from which every plain token is allowed.
Skip = tuple[np.ndarray, bytes, int]


def lexeme_bits(lexer: Lexer, trie: TokenTrie, lex: int, size: int, skip: Skip | None = None
                ) -> tuple[np.ndarray, Boundaries, np.ndarray]:
    """The lexeme walk and ``token_bits`` of its nodes at once: the mask of the tokens that stay
    inside the lexeme begun at ``lex`` (packed, as ``token_bits`` gives it), the boundaries met,
    and the lexer states reached (sorted, int32: an array rather than a set, because cached parts
    hold it, and the cyclic collector would visit every int of a set on each full collection).
    The compiled walk sets each allowed node's tokens as it goes (no list of nodes, no second
    pass); else the Python walk, then ``token_bits``. ``skip``: subtrees left out, for a slice
    that decides their tokens (``python_lexeme_walk``)."""
    if COMPILED:
        bits = np.zeros(4 * bitmask_words(size), dtype=np.uint8)
        found = compiled_lexeme_walk(lexer, trie, lex, bits, skip)
        return bits, found[1], found[2]
    nodes, boundaries, reached = python_lexeme_walk(lexer, trie, lex, skip)
    return token_bits(trie, nodes, size), boundaries, np.array(sorted(reached), dtype=np.int32)


class LexemeWalker:
    """``lexeme_bits`` on one (lexer, trie, vocabulary size), with what every walk passes the
    kernel (the trie's arrays and token tables) fetched once: a masker's lexeme-part miss makes
    one call of this. The same results as ``lexeme_bits``, whose Python walk it falls back to
    where the kernel is not selected (the switch read per call, as ``lexeme_bits`` reads it)."""

    __slots__ = ("trie", "_lexer", "_size", "_arrays", "_tokens")

    def __init__(self, lexer: Lexer, trie: TokenTrie, size: int) -> None:
        self.trie = trie
        self._lexer = lexer
        self._size = size
        self._arrays = trie.arrays() if _walk is not None else None
        self._tokens = (trie.node_token_start, trie.node_token_ids, trie.node_token)

    def __call__(self, lex: int, skip: Skip | None = None) -> tuple[np.ndarray, Boundaries, np.ndarray]:
        if not COMPILED or self._arrays is None:
            return lexeme_bits(self._lexer, self.trie, lex, self._size, skip)
        bits = np.zeros(4 * bitmask_words(self._size), dtype=np.uint8)
        _nodes, bounds, reached = _lexeme_kernel(self._lexer, self._arrays, self.trie.max_depth, lex,
                                                 (bits, *self._tokens), skip)
        return bits, bounds, reached


def _cell_maker(lexer: Lexer) -> object:
    """The lexer's maker of cells in C for the kernels (``Lexer.cell_maker``), unless
    ``_CELLS_IN_C`` is off (tests: every cell then goes through ``make``)."""
    return lexer.cell_maker() if _CELLS_IN_C else None


def compiled_lexeme_walk(lexer: Lexer, trie: TokenTrie, lex: int, bits: np.ndarray | None = None,
                         skip: Skip | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``python_lexeme_walk`` by the C kernel, in one call (``_walk.lexeme_part``), the states
    reached as a sorted int32 array. Each missing cell is made where the kernel stands
    (``Lexer.cell_maker``, else ``Lexer.dense_cell``; guarded states' cells one byte at a time).
    With ``bits`` (``token_bits``'s layout, zeroed), the allowed nodes' tokens are set there
    instead of the nodes listed (the nodes returned are then empty). ``skip`` as
    ``python_lexeme_walk``. The arrays returned are read-only."""
    if bits is None:
        tokens: tuple[object, ...] = (None, None, None, None)
    else:
        tokens = (bits, trie.node_token_start, trie.node_token_ids, trie.node_token)
    return _lexeme_kernel(lexer, trie.arrays(), trie.max_depth, lex, tokens, skip)


def _lexeme_kernel(lexer: Lexer, arrays: tuple[np.ndarray, np.ndarray, np.ndarray], max_depth: int, lex: int,
                   tokens: tuple[object, ...], skip: Skip | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The one call of ``_walk.lexeme_part`` (``compiled_lexeme_walk``, ``LexemeWalker``): the
    lexer's current table and cell maker read here, since both change as the DFA grows."""
    table, accepts = lexer.dense()
    pure, rest_first, loop = skip if skip is not None else (None, None, -1)
    nodes, bounds, reached = _walk.lexeme_part(*arrays, table, accepts, lex, max_depth, lexer, _cell_maker(lexer),
                                               *tokens, pure, rest_first, loop, _MUTATION)
    return (_NO_NODES if nodes is None else np.frombuffer(nodes, dtype=np.int32),
            np.frombuffer(bounds, dtype=np.int32).reshape(-1, 2), np.frombuffer(reached, dtype=np.int32))


_NO_NODES = np.zeros(0, dtype=np.int32)
_NO_NODES.flags.writeable = False


def python_lexeme_walk(lexer: Lexer, trie: TokenTrie, lex: int, skip: Skip | None = None
                       ) -> tuple[list[int], list[Boundary], set[int]]:
    """Nodes whose bytes all stay inside the lexeme begun at ``lex``, the boundaries met, and the
    lexer states those nodes lead to. With ``skip = (pure, rest_first)``, below each depth-1 node
    whose byte ``b`` has ``rest_first[b]`` set, the subtree of every node with ``pure[node]`` set
    is left out unwalked (a slice decides its tokens: ``Masker.lexeme_part``). With ``skip =
    (pure, rest_first, loop)`` and the lexer state ``loop`` (-1: none) one from which every plain
    token is allowed however long, a node elsewhere whose ASCII byte leads to ``loop`` and whose
    subtree is pure is listed with every node of its subtree, unwalked (each token there is the
    node's path, then whole plain characters from ``loop`` on)."""
    byte_at, depth_at, end_at = trie.byte, trie.depth, trie.end
    rows, accepting, build_row = lexer.rows, lexer.matches, lexer.row
    n = len(byte_at)
    stack = [lex] * (trie.max_depth + 1)
    nodes: list[int] = []
    boundaries: list[Boundary] = []
    reached: set[int] = set()
    pure, rest_first, loop = skip if skip is not None else (None, b"", -1)
    rest = False
    i = 1
    while i < n:
        if pure is not None:
            if depth_at[i] == 1:
                rest = bool(rest_first[byte_at[i]])
            if rest and pure[i]:
                i = end_at[i]
                continue
        parent = stack[depth_at[i] - 1]
        row = rows[parent]
        if row is None:
            row = build_row(parent)
        nxt = row[byte_at[i]]
        if nxt == DEAD:
            if accepting[parent]:
                boundaries.append((i, parent))
            i = end_at[i]
            continue
        reached.add(nxt)
        if nxt == loop and byte_at[i] < 0x80 and pure[i]:  # type: ignore[index]
            nodes.extend(range(i, end_at[i]))
            i = end_at[i]
            continue
        stack[depth_at[i]] = nxt
        nodes.append(i)
        i += 1
    return nodes, boundaries, reached


def boundary_walk(recognizer: Recognizer, trie: TokenTrie, boundaries: Boundaries, parse: ParseState
                  ) -> tuple["list[int] | np.ndarray", "set[tuple[int, ParseState]] | ReachedPairs"]:
    """Allowed nodes inside the subtrees of ``boundaries`` when the lexemes before them were read
    from ``parse`` (in trie order), and the (lexer, parse) states those nodes lead to: compiled
    where it can run, else ``python_boundary_walk``; both give the same."""
    if COMPILED and len(boundaries):
        return compiled_boundary_walk(recognizer, trie, boundaries, parse)
    return python_boundary_walk(recognizer, trie, boundaries, parse)


#: The slots the boundary kernel's tables start with (a power of two; they double when half full).
_FIRST_SLOTS = 64
#: An empty slot of those tables.
_EMPTY = -3


class ReachedPairs(Set):
    """The (lexer state, parse) pairs a compiled boundary walk reached, as a set: kept as the
    kernel left them (its hash table of pairs of numbers, as bytes, and the parses numbered) and
    made into Python tuples only when first read. Masks never read them (the closing budget does),
    so a boundary part costs no tuple per pair. Holds its parse states alive, as a set of them
    would."""

    __slots__ = ("_table", "_parses", "_count", "_pairs")

    def __init__(self, table: bytes, parses: list[ParseState], count: int) -> None:
        self._table = table  # int32 (lexer state, parse number) per slot, _EMPTY where free
        self._parses = parses
        self._count = count
        self._pairs: frozenset[tuple[int, ParseState]] | None = None

    def _materialized(self) -> frozenset[tuple[int, ParseState]]:
        pairs = self._pairs
        if pairs is None:
            table = np.frombuffer(self._table, dtype=np.int32).reshape(-1, 2)
            parses = self._parses
            found = table[table[:, 0] != _EMPTY].tolist()
            pairs = self._pairs = frozenset((lex, parses[number]) for lex, number in found)
        return pairs

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held: the kernel's table (the parses are the cache's to count)."""
        return len(self._table)

    def __iter__(self) -> Iterator[tuple[int, ParseState]]:
        return iter(self._materialized())

    def __contains__(self, pair: object) -> bool:
        return pair in self._materialized()

    def __hash__(self) -> int:
        return hash(self._materialized())


def compiled_boundary_walk(recognizer: Recognizer, trie: TokenTrie, boundaries: Boundaries, parse: ParseState
                           ) -> tuple[np.ndarray, ReachedPairs]:
    """``python_boundary_walk`` by the C kernel, in one call (``_walk.boundary_part``): parse
    states numbered in a list (0: ``parse``), each restart answered once per walk, by the kernel
    itself, C to C, where its lexer start state is made already (``Recognizer.restart``'s scan
    and ``lexer_start``, read where ``Recognizer.restart`` reads them; for a recognizer whose
    ``restart`` is that method), else by ``recognizer.restart``; each missing cell made where the
    kernel stands (``Lexer.cell_maker``, else ``Lexer.dense_cell``). The nodes are a read-only
    array; the pairs reached a ``ReachedPairs``."""
    return _boundary_kernel(recognizer, trie.arrays(), trie.max_depth, boundaries, parse,
                            _restarts_known(recognizer))


def _restarts_known(recognizer: Recognizer) -> bool:
    """Whether the boundary kernel may answer restarts C to C: ``recognizer``'s ``restart`` is
    ``Recognizer.restart``, whose reads the kernel repeats."""
    return type(recognizer).restart is Recognizer.restart


def _boundary_kernel(recognizer: Recognizer, arrays: tuple[np.ndarray, np.ndarray, np.ndarray], max_depth: int,
                     boundaries: Boundaries, parse: ParseState, known: bool) -> tuple[np.ndarray, ReachedPairs]:
    """The one call of ``_walk.boundary_part`` (``compiled_boundary_walk``, ``BoundaryWalker``):
    the boundaries as the (k, 2) int32 array the kernel reads (the lexeme walk's as it is), the
    lexer's current table and cell maker read here, since both change as the DFA grows."""
    lexer = recognizer.lexer
    if isinstance(boundaries, np.ndarray) and boundaries.dtype == np.int32 and boundaries.flags.c_contiguous:
        pairs = boundaries
    else:
        pairs = np.ascontiguousarray(np.asarray(boundaries, dtype=np.int32).reshape(-1, 2))
    parses: list[ParseState] = [parse]
    table, accepts = lexer.dense()
    in_c = _RESTARTS_IN_C and known
    starts = lexer.dfa.start_states if in_c and _STARTS_IN_C and getattr(recognizer, "_starts_by_key", False) else None
    nodes, reached, count = _walk.boundary_part(*arrays, table, accepts, pairs, max_depth, recognizer, lexer, parses,
                                                lexer.accepting if in_c else None, _cell_maker(lexer), _MUTATION,
                                                _FIRST_SLOTS, starts)
    return np.frombuffer(nodes, dtype=np.int32), ReachedPairs(reached, parses, count)


class BoundaryWalker:
    """``boundary_walk`` on one (recognizer, trie), with what every walk passes the kernel (the
    trie's arrays, whether restarts may be answered C to C) fetched once: a masker's miss makes
    one call of this. The same results as ``boundary_walk``, whose Python walk it falls back to
    where the kernel is not selected (the switch read per call)."""

    __slots__ = ("trie", "_recognizer", "_arrays", "_known")

    def __init__(self, recognizer: Recognizer, trie: TokenTrie) -> None:
        self.trie = trie
        self._recognizer = recognizer
        self._arrays = trie.arrays() if _walk is not None else None
        self._known = _restarts_known(recognizer)

    def __call__(self, boundaries: Boundaries, parse: ParseState
                 ) -> tuple["list[int] | np.ndarray", "set[tuple[int, ParseState]] | ReachedPairs"]:
        if not COMPILED or self._arrays is None or not len(boundaries):
            return python_boundary_walk(self._recognizer, self.trie, boundaries, parse)
        return _boundary_kernel(self._recognizer, self._arrays, self.trie.max_depth, boundaries, parse, self._known)


def python_boundary_walk(recognizer: Recognizer, trie: TokenTrie, boundaries: Boundaries,
                         parse: ParseState) -> tuple[list[int], set[tuple[int, ParseState]]]:
    """Allowed nodes inside the subtrees of ``boundaries`` when the lexemes before them were read
    from ``parse``, and the (lexer, parse) states those nodes lead to (the reference)."""
    if isinstance(boundaries, np.ndarray):
        boundaries = [(top, before) for top, before in boundaries.tolist()]
    lexer = recognizer.lexer
    byte_at, depth_at, end_at = trie.byte, trie.depth, trie.end
    rows, build_row, step, accepting = lexer.rows, lexer.row, lexer.step, lexer.matches
    nodes: list[int] = []
    reached: set[tuple[int, ParseState]] = set()
    lex_stack = [DEAD] * (trie.max_depth + 1)
    parse_stack: list[ParseState | None] = [None] * (trie.max_depth + 1)
    # Recognizer.restart, once per (lexer state, parse) for the whole walk: many boundaries share one
    restarts: dict[tuple[int, ParseState], tuple[ParseState | None, int]] = {}

    for top, before in boundaries:
        found = restarts.get((before, parse))
        if found is None:
            found = restarts[(before, parse)] = recognizer.restart(before, parse)
        after, fresh = found
        if fresh == DEAD:
            continue
        base = depth_at[top] - 1
        lex_stack[base] = fresh
        parse_stack[base] = after
        stop = end_at[top]
        i = top
        while i < stop:
            depth = depth_at[i]
            lex = lex_stack[depth - 1]
            current = parse_stack[depth - 1]
            b = byte_at[i]
            row = rows[lex]
            if row is None:
                row = build_row(lex)
            nxt = row[b]
            if nxt == DEAD:
                # another boundary inside the token, where a lexeme matches (a fresh lexer state
                # never does: lexemes are never empty)
                if not accepting[lex]:
                    i = end_at[i]
                    continue
                found = restarts.get((lex, current))  # type: ignore[arg-type]
                if found is None:
                    found = restarts[(lex, current)] = recognizer.restart(lex, current)  # type: ignore[arg-type]
                scanned, restart = found
                nxt = step(restart, b) if restart != DEAD else DEAD
                if nxt == DEAD:
                    i = end_at[i]
                    continue
                current = scanned
            lex_stack[depth] = nxt
            parse_stack[depth] = current
            nodes.append(i)
            reached.add((nxt, current))  # type: ignore[arg-type]
            i += 1
    return nodes, reached
