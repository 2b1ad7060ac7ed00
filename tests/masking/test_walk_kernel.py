"""The compiled walks (``masking/_walk.c``) against the Python walks, bit for bit: every lexer
state met along real documents for the lexeme walk, every (lexer state, parse) with boundaries for
the boundary walk, on real vocabularies; deliberately broken kernels are caught by the same
comparisons."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import grammar_decode as gd
from grammar_decode.kernels import selected
from grammar_decode.engine import dfa as dfa_module
from grammar_decode.engine.dfa import DEAD, STORED
from grammar_decode.engine.recognizer import Recognizer
from grammar_decode.ir.regex import shared_exprs
from grammar_decode.masking import walk
from helpers import MEASUREMENTS, ORDER, PERSON, TAGS



def test_the_compiled_walk_is_built_and_used() -> None:
    """``pip install -e .`` compiles ``_walk.c`` (setup.py); a build that left it out fails here
    rather than have every comparison below pass vacuously."""
    assert walk._walk is not None, "grammar_decode/masking/_walk.c was not compiled"
    # the module-level choice (this file's fixture turns the kernel on for the comparisons)
    assert selected(walk._walk) or os.environ.get("GRAMMAR_DECODE_WALK") == "python"


@pytest.fixture(autouse=True)
def kernels_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels are what this file tests: on wherever they are built, even where
    ``GRAMMAR_DECODE_WALK=python`` turns them off for everything else."""
    monkeypatch.setattr(walk, "COMPILED", walk._walk is not None)


DOCUMENTS = [
    (PERSON, {"name": "Ann \u00e9 \\\" x", "age": 31, "active": True}),
    (MEASUREMENTS, {"sensor": "t", "values": [1.5e3, -0.25, 7]}),
    (TAGS, ["a", "b c", ""]),
    (ORDER, {"id": 7, "status": "new", "items": [{"sku": "A", "qty": 1}], "note": None}),
    ({"type": "string", "format": "hostname"}, "xn--9n2bp8q.example.com"),  # guarded states: cells byte by byte
    ({"type": "string", "format": "email", "maxLength": 40}, "joe.bloggs@example.com"),
]


def _lexer_states(grammar: gd.CompiledGrammar, text: bytes) -> list[int]:
    states, state = [], grammar.recognizer.initial
    for byte in text:
        states.append(state[0])
        state = grammar.recognizer.step(state, byte)
        assert state is not None
    return sorted(set(s for s in states if s >= 0))


def _compare(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, text: bytes) -> int:
    """How many lexer states the two walks agree on (asserting they do), guarded ones (whose
    cells are made one byte at a time) included: the kernel hands none back."""
    lexer, trie = grammar.recognizer.lexer, vocab.trie
    compared = 0
    for lex in _lexer_states(grammar, text):
        fast = walk.compiled_lexeme_walk(lexer, trie, lex)
        slow_nodes, slow_bounds, slow_reached = walk.python_lexeme_walk(lexer, trie, lex)
        assert fast is not None, lex
        nodes, bounds, reached = fast
        assert nodes.tolist() == slow_nodes, lex
        assert bounds.dtype == np.int32 and [tuple(b) for b in bounds.tolist()] == slow_bounds, lex
        assert reached.dtype == np.int32 and reached.tolist() == sorted(slow_reached), lex
        compared += 1
    return compared


@pytest.mark.parametrize("schema,document", DOCUMENTS)
def test_compiled_walk_equals_the_python_walk(gpt2: gd.Vocabulary, schema: dict, document: object) -> None:
    grammar = gd.compile_json_schema(schema)
    assert _compare(grammar, gpt2, json.dumps(document).encode()) > 0


@pytest.mark.reference
def test_compiled_walk_equals_the_python_walk_on_262k_gemma(gemma: gd.Vocabulary) -> None:
    for schema, document in DOCUMENTS[:4]:
        grammar = gd.compile_json_schema(schema)
        assert _compare(grammar, gemma, json.dumps(document).encode()) > 0


@pytest.mark.parametrize("schema,document", DOCUMENTS)
def test_cells_made_by_the_c_maker_give_the_walks_of_the_python_callbacks(
        gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch, schema: dict, document: object) -> None:
    """The kernels' direct calls of ``Store.make_cell`` (no Python frame per missing cell) and
    the ``make`` callbacks alone build DFAs whose walks are the same, state for state, along the
    document: each on a fresh expression set, so that every cell is made on the way."""
    text = json.dumps(document).encode()
    walks = []
    for in_c in (True, False):
        monkeypatch.setattr(walk, "_CELLS_IN_C", in_c)
        shared_exprs().retire()
        grammar = gd.compile_json_schema(schema)
        masker, recognizer = grammar.masker(gpt2), grammar.recognizer
        state, out = recognizer.initial, []
        for byte in text:
            out.append(masker.packed(state).tobytes())
            state = recognizer.step(state, byte)
        walks.append(out)
    assert walks[0] == walks[1]


def test_walks_go_on_when_the_table_grows_under_them(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table of 64 states grows (by Python, past ``make_cell``'s limit) in the middle of walks
    that hold the C maker's core from before: the maker leaves what its older table has no row
    for to Python, and the walks equal the Python walk."""
    monkeypatch.setattr(dfa_module, "MAX_STATES", 64)
    shared_exprs().retire()
    grown = 0
    for schema, document in DOCUMENTS[3:]:
        grammar = gd.compile_json_schema(schema)
        assert _compare(grammar, gpt2, json.dumps(document).encode()) > 0
        grown += len(grammar.recognizer.lexer.dfa) > 64
    assert grown


def test_the_c_maker_leaves_a_labels_to_python() -> None:
    """Inside an A-label every byte moves the guard's tag somewhere new (no noted moves): the C
    maker answers None and Python makes the cell."""
    grammar = gd.compile_json_schema({"type": "string", "format": "hostname"})
    lexer = grammar.recognizer.lexer
    state = grammar.recognizer.feed(grammar.recognizer.initial, b'"xn--')[0]
    assert lexer.guarded(state)
    make_cell, core = lexer.cell_maker()
    assert make_cell(core, state, ord("a")) is None


def test_masks_are_the_same_with_either_walk(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps(DOCUMENTS[3][1]).encode()
    masks = []
    for compiled in (True, False):
        monkeypatch.setattr(walk, "COMPILED", compiled)
        grammar = gd.compile_json_schema(ORDER)
        state, out = grammar.recognizer.initial, []
        for byte in text:
            out.append(grammar.masker(gpt2).mask(state))
            state = grammar.recognizer.step(state, byte)
        masks.append(out)
    assert all(np.array_equal(a, b) for a, b in zip(*masks))


@pytest.mark.parametrize("mutation", [1, 2, 8, 9])
def test_a_broken_kernel_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch, mutation: int) -> None:
    """1: a rejected byte's subtree is walked instead of skipped; 2: boundaries are dropped; 8: a
    finished walk leaves its marks of the states it reached set (the next walk then misses them);
    9: it leaves them in the order first reached."""
    monkeypatch.setattr(walk, "_MUTATION", mutation)
    grammar = gd.compile_json_schema(PERSON)
    try:
        with pytest.raises(AssertionError):
            _compare(grammar, gpt2, json.dumps(DOCUMENTS[0][1]).encode())
    finally:
        walk._walk.drop_scratch()  # the marks mutation 8 left set would break the walks of later tests


def _compare_bits(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, text: bytes, fused: bool) -> int:
    """How many walks' token bits the kernel and the numpy reference agree on (asserting they do),
    over the whole trie and over the trie of the tokens outside the plain-text slice: the bits of
    the Python walk's nodes set by ``token_bits``, or (``fused``) set by the lexeme walk itself as
    it goes (``lexeme_bits`` and ``LexemeWalker``, with their boundaries and states reached)."""
    from grammar_decode.masking.slices import string_slice

    lexer, compared = grammar.recognizer.lexer, 0
    for trie in (vocab.trie, string_slice(vocab).rest):
        for lex in _lexer_states(grammar, text):
            nodes, bounds, reached = walk.python_lexeme_walk(lexer, trie, lex)
            slow = walk.python_token_bits(trie, nodes, len(vocab))
            if fused:
                fast, fast_bounds, fast_reached = walk.lexeme_bits(lexer, trie, lex, len(vocab))
                assert [tuple(b) for b in np.asarray(fast_bounds).tolist()] == bounds
                assert fast_reached.tolist() == sorted(reached)
                # the masker's walker (the kernel's arguments bound once) gives the same three
                bound, bound_bounds, bound_reached = walk.LexemeWalker(lexer, trie, len(vocab))(lex)
                assert np.array_equal(bound, slow), lex
                assert [tuple(b) for b in bound_bounds.tolist()] == bounds
                assert bound_reached.tolist() == sorted(reached)
            else:
                fast = walk.token_bits(trie, np.array(nodes, dtype=np.int32), len(vocab))
            assert fast.dtype == slow.dtype == np.uint8 and np.array_equal(fast, slow), lex
            compared += bool(nodes)
    return compared


@pytest.mark.parametrize("fused", [False, True])
@pytest.mark.parametrize("schema,document", DOCUMENTS[:4])
def test_token_bits_equal_the_numpy_reference(gpt2: gd.Vocabulary, schema: dict, document: object,
                                              fused: bool) -> None:
    assert _compare_bits(gd.compile_json_schema(schema), gpt2, json.dumps(document).encode(), fused) > 0


@pytest.mark.parametrize("fused", [False, True])
def test_a_kernel_leaving_out_tokens_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch,
                                               fused: bool) -> None:
    """3: the last token spelled at each node is left out of the bits (either kernel)."""
    monkeypatch.setattr(walk, "_MUTATION", 3)
    with pytest.raises(AssertionError):
        _compare_bits(gd.compile_json_schema(PERSON), gpt2, json.dumps(DOCUMENTS[0][1]).encode(), fused)


def _tiny_trie_and_lexer() -> tuple[np.ndarray, ...]:
    """A trie of two one-byte tokens under the root and a lexer of one state that takes nothing
    (every transition DEAD, stored plus ``STORED``): byte, depth, end, table, accepting."""
    return (np.zeros(3, dtype=np.uint8), np.array([0, 1, 1], dtype=np.int32), np.array([3, 2, 3], dtype=np.int32),
            np.full(256, DEAD + STORED, dtype=np.int32), np.zeros(1, dtype=np.uint8))


def _tiny_lexeme_part(lexer: "_TinyLexer", start: int = 0, **changes: object) -> tuple[object, bytes, bytes]:
    byte, depth, end, _table, _accepts = _tiny_trie_and_lexer()
    args: dict[str, object] = dict(byte=byte, depth=depth, end=end, table=lexer.table, accepts=lexer.accepts,
                                   start=start, max_depth=1, lexer=lexer, cell=None, bits=None, token_start=None,
                                   token_ids=None, node_token=None, pure=None, rest_first=None, loop=-1)
    args.update(changes)
    return walk._walk.lexeme_part(*args.values())


def test_missing_cells_are_asked_of_the_lexer() -> None:
    """A missing cell is made by ``lexer.dense_cell`` where the walk stands, and the walk goes on
    over the table ``lexer.dense`` then hands back (a new one here): the second node reads it, so
    the cell is asked once. A lexer whose ``dense`` returns something else, or whose
    ``dense_cell`` raises, is an error from the walk."""
    _byte, _depth, _end, _table, accepts = _tiny_trie_and_lexer()
    unbuilt = np.zeros(256, dtype=np.int32)  # every transition missing (UNBUILT is stored as 0)
    made = np.full(256, DEAD + STORED, dtype=np.int32)
    lexer = _TinyLexer(unbuilt, accepts, made)
    assert _tiny_lexeme_part(lexer) == (b"", b"", b"") and lexer.cells == [(0, 0)]

    class NoPair(_TinyLexer):
        def dense(self) -> tuple[np.ndarray, np.ndarray]:
            return self.table  # type: ignore[return-value]

    class Failing(_TinyLexer):
        def dense_cell(self, state: int, byte: int) -> None:
            raise ZeroDivisionError(state)

    with pytest.raises(TypeError):
        _tiny_lexeme_part(NoPair(unbuilt, accepts, made))
    with pytest.raises(ZeroDivisionError):
        _tiny_lexeme_part(Failing(unbuilt, accepts, made))


def test_bad_buffers_are_refused() -> None:
    byte, depth, end, table, accepts = _tiny_trie_and_lexer()
    lexer = _TinyLexer(table, accepts, table)
    with pytest.raises(ValueError):
        _tiny_lexeme_part(lexer, start=5)  # a start state past the table
    with pytest.raises(TypeError):
        _tiny_lexeme_part(lexer, depth=depth.astype(np.int64))
    with pytest.raises(ValueError):
        _tiny_lexeme_part(lexer, max_depth=-1)
    with pytest.raises(ValueError):
        _tiny_lexeme_part(lexer, loop=0)  # a loop state without pure and rest_first
    with pytest.raises(TypeError):
        _tiny_lexeme_part(lexer, pure=np.ones(3, dtype=np.uint8))  # pure without rest_first
    with pytest.raises(ValueError):
        _tiny_lexeme_part(lexer, pure=np.ones(2, dtype=np.uint8), rest_first=np.zeros(256, dtype=np.uint8))
    with pytest.raises(ValueError):  # bits without the token arrays of the trie's size
        _tiny_lexeme_part(lexer, bits=np.zeros(1, np.uint8), token_start=np.zeros(3, np.int64),
                          token_ids=np.zeros(0, np.int64), node_token=np.full(3, -1, np.int32))
    assert _tiny_lexeme_part(lexer) == (b"", b"", b"")
    start = np.array([0, 1, 2, 3], dtype=np.int64)
    ids = np.array([0, 9, 1], dtype=np.int64)
    with pytest.raises(ValueError):  # a token past the bits
        walk._walk.set_token_bits(np.array([1], dtype=np.int32), start, ids, np.zeros(1, dtype=np.uint8))
    with pytest.raises(ValueError):  # a node past the trie
        walk._walk.set_token_bits(np.array([3], dtype=np.int32), start, ids, np.zeros(2, dtype=np.uint8))
    bits = np.zeros(2, dtype=np.uint8)
    walk._walk.set_token_bits(np.array([1, 2], dtype=np.int32), start, ids, bits)
    assert bits.tolist() == [2, 2]  # tokens 1 and 9


# -- the boundary walk ----------------------------------------------------------------------------

def _compare_boundaries(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, text: bytes) -> int:
    """How many boundary walks the kernel and the Python walk agree on (asserting they do), at
    every state along ``text`` whose lexeme part met boundaries, guarded rows included."""
    recognizer, masker, compared = grammar.recognizer, grammar.masker(vocab), 0
    state = recognizer.initial
    for byte in text:
        lex, parse, _fresh = state
        if lex >= 0:
            part = masker.lexeme_part(lex)
            if len(part.boundaries):
                # the kernel first: the restarts it asks for make lexer states its table does not
                # hold yet (the Python walk, run first, would have made them)
                fast = walk.compiled_boundary_walk(recognizer, part.trie, part.boundaries, parse)
                slow_nodes, slow_reached = walk.python_boundary_walk(recognizer, part.trie, part.boundaries, parse)
                assert fast is not None, lex
                nodes, reached = fast
                assert nodes.dtype == np.int32 and nodes.tolist() == slow_nodes, lex
                assert reached == slow_reached, lex
                # the masker's walker, its kernel arguments bound once, walks the same
                bound_nodes, bound_reached = walk.BoundaryWalker(recognizer, part.trie)(part.boundaries, parse)
                assert bound_nodes.tolist() == slow_nodes and bound_reached == slow_reached, lex
                compared += 1
        state = recognizer.step(state, byte)
        assert state is not None
    return compared


@pytest.mark.parametrize("schema,document", DOCUMENTS)
def test_compiled_boundary_walk_equals_the_python_walk(gpt2: gd.Vocabulary, schema: dict, document: object) -> None:
    shared_exprs().retire()  # a fresh set: no lexer state made by earlier tests
    grammar = gd.compile_json_schema(schema)
    compared = _compare_boundaries(grammar, gpt2, json.dumps(document).encode())
    assert compared > 0 or schema.get("type") == "string"


@pytest.mark.reference
def test_compiled_boundary_walk_equals_the_python_walk_on_262k_gemma(gemma: gd.Vocabulary) -> None:
    for schema, document in DOCUMENTS[:4]:
        assert _compare_boundaries(gd.compile_json_schema(schema), gemma, json.dumps(document).encode()) > 0


def test_the_boundary_tables_grow(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables of two slots grow by rehashing many times in one walk, and the walk is unchanged."""
    monkeypatch.setattr(walk, "_FIRST_SLOTS", 2)
    assert _compare_boundaries(gd.compile_json_schema(ORDER), gpt2, json.dumps(DOCUMENTS[3][1]).encode()) > 0


def _count_restarts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``Recognizer.restart`` patched to note the lexer state of each call (what the boundary
    kernel asks of Python), in the list returned."""
    asked: list[int] = []
    original = Recognizer.restart

    def counted(self: Recognizer, lex: int, parse: object) -> object:
        asked.append(lex)
        return original(self, lex, parse)  # type: ignore[arg-type]

    monkeypatch.setattr(Recognizer, "restart", counted)
    return asked


def test_restarts_are_answered_in_c_where_their_start_state_is_made(gpt2: gd.Vocabulary,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel answers a restart itself once the lexer start state after it is made: a walk
    repeated asks Python for none, and finds what the Python walk finds; with the answers in C
    turned off, every restart is Python's, and the walk is the same."""
    grammar = gd.compile_json_schema(ORDER)
    recognizer, masker = grammar.recognizer, grammar.masker(gpt2)
    asked = _count_restarts(monkeypatch)
    state = recognizer.feed(recognizer.initial, b'{"id": 12')
    part = masker.lexeme_part(state[0])
    first = walk.compiled_boundary_walk(recognizer, part.trie, part.boundaries, state[1])
    asked.clear()
    again = walk.compiled_boundary_walk(recognizer, part.trie, part.boundaries, state[1])
    assert asked == [] and again[0].tolist() == first[0].tolist() and set(again[1]) == set(first[1])
    slow_nodes, slow_reached = walk.python_boundary_walk(recognizer, part.trie, part.boundaries, state[1])
    assert again[0].tolist() == slow_nodes and set(again[1]) == slow_reached and len(slow_nodes)
    monkeypatch.setattr(walk, "_RESTARTS_IN_C", False)
    asked.clear()
    by_python = walk.compiled_boundary_walk(recognizer, part.trie, part.boundaries, state[1])
    assert asked and by_python[0].tolist() == slow_nodes and set(by_python[1]) == slow_reached


def test_new_parses_take_their_lexer_start_from_the_dfa_in_c(gpt2: gd.Vocabulary,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A parse the walk reaches whose ``lexer_start`` is not set yet, but whose origins key the
    DFA has met (another recognizer of the grammar made the state), is answered in C: fewer
    restarts asked of Python than with that turned off, the same walk as the Python walk's, and
    the parse's ``lexer_start`` set to what ``Recognizer.lexer_start`` gives."""
    grammar = gd.compile_json_schema(ORDER)
    state = grammar.recognizer.feed(grammar.recognizer.initial, b'{"id": 12')
    part = grammar.masker(gpt2).lexeme_part(state[0])
    walk.compiled_boundary_walk(grammar.recognizer, part.trie, part.boundaries, state[1])  # the DFA's starts made
    asked = _count_restarts(monkeypatch)
    counts = {}
    for in_c in (True, False):
        monkeypatch.setattr(walk, "_STARTS_IN_C", in_c)
        fresh = Recognizer(grammar.recognizer.grammar)  # its own parse states: no lexer_start set
        parse = fresh.feed(fresh.initial, b'{"id": 12')[1]
        asked.clear()
        nodes, reached = walk.compiled_boundary_walk(fresh, part.trie, part.boundaries, parse)
        counts[in_c] = len(asked)
        slow_nodes, slow_reached = walk.python_boundary_walk(fresh, part.trie, part.boundaries, parse)
        assert nodes.tolist() == slow_nodes and set(reached) == slow_reached and len(slow_nodes)
        for _lex, after in reached:
            assert after.lexer_start == fresh.lexer.start(after.expected)
    assert counts[True] < counts[False], counts


def test_a_restart_answered_by_another_method_is_asked_of_python(gpt2: gd.Vocabulary) -> None:
    """A recognizer whose ``restart`` is not ``Recognizer.restart`` (a subclass's) has every
    restart asked of that method: the kernel answers only what it would answer alike."""
    asked: list[int] = []

    class Counting(Recognizer):
        def restart(self, lex: int, parse: object) -> object:  # type: ignore[override]
            asked.append(lex)
            return super().restart(lex, parse)  # type: ignore[arg-type]

    grammar = gd.compile_json_schema(ORDER)
    recognizer = Counting(grammar.recognizer.grammar)
    state = recognizer.feed(recognizer.initial, b'{"id": 12')
    lexeme = walk.compiled_lexeme_walk(recognizer.lexer, gpt2.trie, state[0])
    for _ in range(2):
        asked.clear()
        walk.compiled_boundary_walk(recognizer, gpt2.trie, lexeme[1], state[1])
        assert asked


@pytest.mark.parametrize("mutation", [4, 5, 11])
def test_a_broken_boundary_kernel_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch,
                                            mutation: int) -> None:
    """4: after a boundary inside a token the parse from before the scan goes on; 5: the
    subtrees of boundaries inside a token are dropped; 11: a restart answered in C begins the
    next lexeme where the parse before the scan would."""
    monkeypatch.setattr(walk, "_MUTATION", mutation)
    with pytest.raises(AssertionError):
        _compare_boundaries(gd.compile_json_schema(ORDER), gpt2, json.dumps(DOCUMENTS[3][1]).encode())


def test_the_boundary_pairs_are_read_as_the_lexeme_walk_left_them(gpt2: gd.Vocabulary) -> None:
    """The kernel reads the lexeme walk's (k, 2) array of boundaries in place, and two arrays of
    their nodes and states alike: the same nodes and pairs reached."""
    grammar = gd.compile_json_schema(ORDER)
    recognizer, trie = grammar.recognizer, gpt2.trie
    state = recognizer.feed(recognizer.initial, b'{"id": 1')
    _nodes, boundaries, _reached = walk.compiled_lexeme_walk(recognizer.lexer, trie, state[0])
    assert len(boundaries) and boundaries.flags.c_contiguous
    paired = walk.compiled_boundary_walk(recognizer, trie, boundaries, state[1])
    as_list = walk.compiled_boundary_walk(recognizer, trie, [tuple(b) for b in boundaries.tolist()], state[1])
    assert paired[0].tolist() == as_list[0].tolist() and set(paired[1]) == set(as_list[1]) and len(paired[0])


class _TinyRecognizer:
    """What ``_walk.boundary_part`` calls on a recognizer: ``restart``, answered by ``answer``."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.asked: list[tuple[int, object]] = []

    def restart(self, lex: int, parse: object) -> object:
        self.asked.append((lex, parse))
        return self.answer(lex, parse) if callable(self.answer) else self.answer


class _TinyLexer:
    """What ``_walk.boundary_part`` calls on a lexer: ``dense_cell`` (here: the table becomes
    ``made``) and ``dense``."""

    def __init__(self, table: np.ndarray, accepts: np.ndarray, made: np.ndarray) -> None:
        self.table, self.accepts, self.made = table, accepts, made
        self.cells: list[tuple[int, int]] = []

    def dense_cell(self, state: int, byte: int) -> None:
        self.cells.append((state, byte))
        self.table = self.made

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        return self.table, self.accepts


def _tiny_boundary_part(recognizer: object, lexer: _TinyLexer, tops: list[int], known: object = None,
                        parses: object = None, slots: int = 4) -> tuple[bytes, bytes, int]:
    byte, depth, end, _table, _accepts = _tiny_trie_and_lexer()
    pairs = np.array([[top, 0] for top in tops], dtype=np.int32).reshape(-1, 2)
    return walk._walk.boundary_part(byte, depth, end, lexer.table, lexer.accepts, pairs, 1, recognizer, lexer,
                                    ["parse"] if parses is None else parses, known, None, 0, slots)


def test_bad_boundary_inputs_are_refused() -> None:
    byte, depth, end, table, accepts = _tiny_trie_and_lexer()
    lexer = _TinyLexer(table, accepts, table)
    ends_nowhere = _TinyRecognizer((None, DEAD))
    with pytest.raises(ValueError):
        _tiny_boundary_part(ends_nowhere, lexer, [1], slots=3)  # not a power of two
    with pytest.raises(ValueError):
        _tiny_boundary_part(ends_nowhere, lexer, [7])  # a node past the trie
    with pytest.raises(TypeError):
        _tiny_boundary_part(ends_nowhere, lexer, [1], parses=[])  # not the one parse to start from
    with pytest.raises(TypeError):
        _tiny_boundary_part(ends_nowhere, lexer, [1], known=[])  # known: the lexer's dict, or None
    with pytest.raises(ValueError):  # pairs that are not pairs
        walk._walk.boundary_part(byte, depth, end, table, accepts, np.array([1, 0, 2], dtype=np.int32), 1,
                                 ends_nowhere, lexer, ["parse"], None, None)
    with pytest.raises(TypeError):
        walk._walk.boundary_part(byte, depth, end, table, accepts, np.zeros((1, 2), dtype=np.int64), 1,
                                 ends_nowhere, lexer, ["parse"], None, None)
    with pytest.raises(TypeError, match="starts"):  # starts: the DFA's dict, or None
        walk._walk.boundary_part(byte, depth, end, table, accepts, np.zeros((1, 2), dtype=np.int32), 1,
                                 ends_nowhere, lexer, ["parse"], None, None, 0, 64, [])


def test_the_boundary_callback_protocol() -> None:
    """The restart the walk needs is asked of ``recognizer.restart`` where it stands and the walk
    goes on (here the lexeme ends nowhere: no parse after, lexer DEAD, so the walk is done, each
    restart asked once); a ``restart`` that returns something else, or raises, is an error from
    the walk; a missing cell is made by ``lexer.dense_cell`` where it stands, and the walk goes on
    over the table ``lexer.dense`` then hands back; a parse after a restart is numbered once."""
    byte, depth, end, table, accepts = _tiny_trie_and_lexer()
    lexer = _TinyLexer(table, accepts, table)
    ends_nowhere = _TinyRecognizer((None, DEAD))
    nodes, reached, count = _tiny_boundary_part(ends_nowhere, lexer, [1, 2])
    assert nodes == b"" and count == 0 and ends_nowhere.asked == [(0, "parse")]
    with pytest.raises(TypeError):
        _tiny_boundary_part(_TinyRecognizer(None), lexer, [1])
    with pytest.raises(ZeroDivisionError):
        _tiny_boundary_part(_TinyRecognizer(lambda lex, parse: 1 // 0), lexer, [1])
    # the boundary's lexer starts over in state 0, whose cells are all missing: made where it stands
    unbuilt = np.zeros(256, dtype=np.int32)
    made = np.full(256, 0 + STORED, dtype=np.int32)  # every byte leads back to state 0
    lexer = _TinyLexer(unbuilt, accepts, made)
    parses: list[object] = ["parse"]
    nodes, reached, count = _tiny_boundary_part(_TinyRecognizer(("after", 0)), lexer, [1, 2], parses=parses)
    assert lexer.cells == [(0, 0)] and np.frombuffer(nodes, dtype=np.int32).tolist() == [1, 2]
    assert parses == ["parse", "after"] and count == 1
    pairs = np.frombuffer(reached, dtype=np.int32).reshape(-1, 2)
    assert pairs[pairs[:, 0] != -3].tolist() == [[0, 1]]  # lexer state 0 with the parse numbered 1


# --- renaming a twin's boundaries (``walk.renamed_boundaries``, ``_walk.rename_column``) ----------


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(-1, 40)), max_size=200),
       shift=st.integers(-3, 3), mutation=st.sampled_from([0, 1]))
def test_renamed_boundaries_equal_the_numpy_reference(rows: list[tuple[int, int]], shift: int, mutation: int) -> None:
    boundaries = np.array(rows, dtype=np.int32).reshape(-1, 2)
    asked: list[int] = []

    def rename(state: int) -> int:
        asked.append(state)
        return state + shift if state % 3 else state  # some states keep their name

    found = walk.renamed_boundaries(boundaries, rename, mutation)
    distinct = len(set(boundaries[:, 1].tolist()))
    assert sorted(asked) == sorted(set(boundaries[:, 1].tolist())), "each distinct state asked once"
    expected = walk.python_renamed_boundaries(boundaries, rename, mutation)
    assert found.dtype == np.int32 and found.shape == boundaries.shape and not found.flags.writeable
    assert np.array_equal(found, expected) and len(asked) == 2 * distinct
    assert np.array_equal(found[:, 0], boundaries[:, 0]), "the nodes are kept"


@pytest.mark.parametrize("compiled", [True, False])
def test_a_new_name_that_is_another_rows_old_one_is_not_renamed_again(monkeypatch: pytest.MonkeyPatch,
                                                                        compiled: bool) -> None:
    """A twin's origins and its own may overlap (origin 1 renamed to 2, 2 to 3), so a boundary
    state's new name can be another boundary's old one. Renaming in place by comparing the column
    being renamed (what the masker did before) renamed such rows twice: (1, e) to (2, e), then on
    to (3, e)."""
    monkeypatch.setattr(walk, "COMPILED", compiled)
    boundaries = np.array([[0, 34], [1, 35], [2, 34]], dtype=np.int32)
    assert walk.renamed_boundaries(boundaries, lambda s: s + 1)[:, 1].tolist() == [35, 36, 35]


def test_a_broken_renaming_is_told_from_the_reference() -> None:
    """Mutation 1 (a renamed state written as itself plus one) differs wherever a state is renamed
    to anything but that: the comparison above can fail."""
    boundaries = np.array([[5, 10], [6, 11], [7, 10]], dtype=np.int32)
    good = walk.renamed_boundaries(boundaries, lambda s: s + 7)
    assert good[:, 1].tolist() == [17, 18, 17]
    assert walk.renamed_boundaries(boundaries, lambda s: s + 7, 1)[:, 1].tolist() == [11, 12, 11]


def test_bad_renaming_inputs_are_refused() -> None:
    with pytest.raises(TypeError):
        walk._walk.rename_column(np.zeros((2, 2), dtype=np.int32), 3)
    with pytest.raises(ValueError, match="rows"):
        walk._walk.rename_column(b"\0" * 12, lambda s: s)
    with pytest.raises(ZeroDivisionError):  # the callback's error comes through, nothing leaks
        walk._walk.rename_column(np.zeros((2, 2), dtype=np.int32), lambda s: 1 // 0)
    with pytest.raises(OverflowError):
        walk._walk.rename_column(np.zeros((1, 2), dtype=np.int32), lambda s: 1 << 40)
    with pytest.raises(TypeError):
        walk._walk.rename_column(np.zeros((1, 2), dtype=np.int32), lambda s: "x")
    many = np.stack([np.arange(100, dtype=np.int32), np.arange(100, dtype=np.int32)], axis=1)
    assert walk._walk.rename_column(many, lambda s: -s) == np.stack([many[:, 0], -many[:, 1]], axis=1).tobytes()
