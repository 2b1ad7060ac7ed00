"""The plain-text slice's step (``slices.plain_successor``) and split (``slices.plain_split``):
the C kernels against their Python references on every lexer state met along real documents; masks
taken with splits against the independent reference; broken kernels caught."""

from __future__ import annotations

import json
import types
from typing import Iterator

import numpy as np
import pytest

import grammar_decode as gd
from grammar_decode.engine.lexer import DEAD, Lexer
from grammar_decode.ir.regex import shared_exprs
from grammar_decode.masking import masker, slices, walk
from grammar_decode.oracle.masks import reference_mask
from grammar_decode.oracle.recognizer import ReferenceRecognizer
from helpers import ORDER, PERSON, TAGS


@pytest.fixture(autouse=True)
def kernels_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernels are what this file tests: on wherever they are built, even where
    ``GRAMMAR_DECODE_WALK=python`` turns them off for everything else."""
    monkeypatch.setattr(slices, "COMPILED", slices._walk is not None)
    monkeypatch.setattr(walk, "COMPILED", walk._walk is not None)


DOCUMENTS = [
    (PERSON, {"name": "Ann \u00e9 \u4e2d \U0001f600 \\\" x", "age": 31, "active": True}),
    (TAGS, ["a", "b c", ""]),
    (ORDER, {"id": 7, "status": "new", "items": [{"sku": "A", "qty": 1}], "note": None}),
    ({"type": "string", "maxLength": 12}, "abc d\u00e9f \u4e2d"),
    ({"type": "string", "minLength": 3, "maxLength": 40, "pattern": "^[^)]*$"}, "ab(c"),
    ({"type": "string", "format": "email", "maxLength": 40}, "joe.bloggs@example.com"),
    ({"type": "string", "format": "hostname"}, "xn--9n2bp8q.example.com"),  # guarded states: the Python way
]


def _lexer_states(schema: dict, document: object, ensure_ascii: bool = True) -> Iterator[tuple[Lexer, int]]:
    """The lexer and its state before each byte of the document as JSON."""
    grammar = gd.compile_json_schema(schema)
    recognizer, state = grammar.recognizer, grammar.recognizer.initial
    for byte in json.dumps(document, ensure_ascii=ensure_ascii).encode():
        yield recognizer.lexer, state[0]
        state = recognizer.step(state, byte)
        assert state is not None


def _compare(schema: dict, document: object) -> tuple[int, int]:
    """Lexer states met along the document where the two agree (asserting they do), and how many
    of them have a plain successor."""
    compared = decided = 0
    for lexer, lex in _lexer_states(schema, document):
        fast = slices.plain_successor(lexer, lex)
        slow = slices.python_plain_successor(lexer, lex)
        assert fast == slow, (lex, fast, slow)
        compared += 1
        decided += fast is not None and fast != DEAD
    return compared, decided


@pytest.mark.parametrize("schema,document", DOCUMENTS)
def test_the_kernel_equals_the_python_reference(schema: dict, document: object) -> None:
    compared, decided = _compare(schema, document)
    assert compared > 0
    if schema.get("type") == "string" and "pattern" not in schema and "format" not in schema:
        assert decided > 0  # inside a plain string: every state has a successor


def test_a_kernel_skipping_multi_byte_characters_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """4: the continuation bytes are not explored (a state where a multi-byte character leads
    elsewhere than ASCII does would pass as plain)."""
    schema = {"type": "string", "pattern": "^[^\u00e9]*$"}  # every character but é: its second byte differs
    assert _compare(schema, "ab")[1] == 0
    monkeypatch.setattr(slices, "_MUTATION", 4)
    with pytest.raises(AssertionError):
        _compare(schema, "ab")


# States whose expressions show a plain step (``slices.reads_plain_alike``), and ones that look
# alike but are not: a repeat that may match nothing followed by a plain character (``x``), a
# body that reads some plain character otherwise (``é``: its second byte), and two origins.
STRUCTURAL = DOCUMENTS + [
    ({"type": "string", "minLength": 2, "maxLength": 5}, "ab\u00e9"),
    ({"type": "string", "pattern": "^[^\\n]{0,3}x$"}, "abx"),
    ({"type": "string", "pattern": "^[^\u00e9]{0,6}$"}, "abc"),
    ({"type": "array", "items": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 5}]}},
     ["ab", "abcdefg"]),
    ({"type": "object", "additionalProperties": {"type": "string", "maxLength": 4}}, {"k\u4e2d": "v\U0001f600"}),
]


def _compare_structural(schema: dict, document: object) -> tuple[int, int]:
    """Lexer states met along the document where ``reads_plain_alike`` holds, asserting that one
    step by ``a`` (and ``plain_successor``, which takes it) lands where the Python reference says
    every plain character does; and how many of those states hold more than one pair."""
    alike = several = 0
    for lexer, lex in _lexer_states(schema, document, ensure_ascii=False):
        if lex != DEAD and slices.reads_plain_alike(lexer, lex):
            expected = slices.python_plain_successor(lexer, lex)
            assert lexer.step(lex, 0x61) == expected, (schema, lex)
            assert slices.plain_successor(lexer, lex) == expected, (schema, lex)
            alike += 1
            several += len(lexer.dfa.pairs[lex]) > 1
    return alike, several


@pytest.mark.parametrize("schema,document", STRUCTURAL)
def test_the_structural_step_equals_the_python_reference(schema: dict, document: object) -> None:
    alike, several = _compare_structural(schema, document)
    if "maxLength" in schema and "pattern" not in schema and "format" not in schema:
        assert alike > 0  # a counted string's states are what the structural step is for
    if "anyOf" in json.dumps(schema):
        assert several > 0  # states of two lexemes at once (the two strings of the anyOf)


@pytest.mark.parametrize("schema,document", DOCUMENTS)
def test_the_kernel_alone_equals_the_python_reference(monkeypatch: pytest.MonkeyPatch, schema: dict,
                                                      document: object) -> None:
    """With the structural step off, every state goes through the kernel."""
    monkeypatch.setattr(slices, "_STRUCTURAL", False)
    assert _compare(schema, document)[0] > 0


@pytest.mark.parametrize("mutation,schema,document", [
    (1, {"type": "string", "pattern": "^[^\u00e9]{0,6}$"}, "abc"),
    (2, {"type": "string", "pattern": "^[^\\n]{0,3}x$"}, "abx"),
])
def test_a_broken_structural_step_is_caught(monkeypatch: pytest.MonkeyPatch, mutation: int, schema: dict,
                                            document: object) -> None:
    """1: a body taken as read whole unchecked; 2: the rest after a repeat that may match nothing
    left unchecked. Each passes a state whose plain characters go different ways."""
    _compare_structural(schema, document)
    monkeypatch.setattr(slices, "_STRUCTURAL_MUTATION", mutation)
    slices._WHOLE.clear()
    with pytest.raises(AssertionError):
        _compare_structural(schema, document)
    slices._WHOLE.clear()


# An object with named keys and any other key: in a key, the characters that begin no named key
# lead into the "other key", a plain string from there on (the split's target).
OPEN = {"type": "object",
        "properties": {"name": {"type": "string"}, "nickname": {"type": "string"}, "\u00e9clair": {"type": "integer"},
                       "age": {"type": "integer"}},
        "additionalProperties": {"type": "integer"}}
OPEN_PREFIXES = ['{"', '{"n', '{"na', '{"nick', '{"x', '{"\u00e9', '{"a', '{"name":"a","', '{"name":"a", "ag']


def _compare_splits(schema: dict, document: object) -> int:
    """Lexer states met along the document where the split kernel and its Python reference agree
    (asserting they do); how many have a split."""
    found = 0
    for lexer, lex in _lexer_states(schema, document, ensure_ascii=False):
        fast = slices.plain_split(lexer, lex)
        slow = slices.python_plain_split(lexer, lex)
        assert fast == slow, (lex, fast, slow)
        found += fast is not None
    return found


OPEN_DOCUMENT = {"name": "a", "nickname": "b", "\u00e9clair": 1, "x": 2, "zz\u4e2d": 3, "\u00e9t\u00e9": 4}


@pytest.mark.parametrize("schema,document", DOCUMENTS + [(OPEN, OPEN_DOCUMENT)])
def test_the_split_kernel_equals_the_python_reference(schema: dict, document: object) -> None:
    found = _compare_splits(schema, document)
    if schema is OPEN:
        assert found > 0


def test_a_split_kernel_admitting_unchecked_lead_bytes_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """5: a lead byte joins the split without its characters checked (in a key, 0xC3 begins both
    the named key "éclair" and other keys, so its characters do not all go to the target)."""
    _compare_splits(OPEN, OPEN_DOCUMENT)
    monkeypatch.setattr(slices, "_MUTATION", 5)
    with pytest.raises(AssertionError):
        _compare_splits(OPEN, OPEN_DOCUMENT)


# The first character not "é", then any: every plain character but "é" leads on to a plain run,
# so the split's lead bytes are all but 0xC3 (whose characters but "é" lead there too).
NOT_E_FIRST = {"type": "string", "pattern": "^[^\u00e9]"}
# Other keys of at most five characters: the split's target counts down, and its run ends long
# before the longest plain token (no subtree may be taken whole from it).
SHORT_KEYS = {"type": "object", "properties": {"name": {"type": "integer"}, "size": {"type": "integer"}},
              "propertyNames": {"maxLength": 5}, "additionalProperties": {"type": "integer"}}
# "ab", or one character but "a", then at most three: "a" then "b" reaches the split's target
# (where every other first character leads), whose run ends after three characters.
AB_OR_ONE = {"type": "string", "pattern": "^(ab|[^a])[^\\n]{0,3}$"}
SPLIT_CASES = [(OPEN, prefix) for prefix in OPEN_PREFIXES] + [(NOT_E_FIRST, '"'), (AB_OR_ONE, '"')] + \
    [(SHORT_KEYS, prefix) for prefix in ['{"', '{"n', '{"si', '{"name":1,"']]


def _split_masks(vocab: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[tuple[str, bool]]]:
    """For each case of ``SPLIT_CASES``: whether the mask, taken with splits on, equals the
    independent reference; and how many of those masks used a split."""
    used = []
    split = masker.Masker._split

    def spy(self: masker.Masker, lex: int) -> object:
        found = split(self, lex)
        used.append(found is not None)
        return found

    monkeypatch.setattr(masker.Masker, "_split", spy)
    results = []
    for schema, prefix in SPLIT_CASES:
        shared_exprs().retire()  # a fresh lexer: no lexeme part cached by another test is met
        grammar = gd.compile_json_schema(schema)
        data = prefix.encode()
        state = grammar.recognizer.feed(grammar.recognizer.initial, data)
        fast = grammar.masker(vocab).mask(state)
        slow = reference_mask(ReferenceRecognizer(grammar.ir), vocab, data)
        results.append((prefix, bool(np.array_equal(fast, slow))))
    return sum(used), results


def test_split_masks_equal_the_reference(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """Masks in key states, where the split decides most plain tokens and the walk skips their
    subtrees, equal the reference replaying every token."""
    used, results = _split_masks(gpt2, monkeypatch)
    assert used >= 5
    assert all(equal for _prefix, equal in results), results


def test_a_loop_state_whose_run_ends_early_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """The split's target taken as the loop state though its run ends within three characters
    (``AB_OR_ONE``): tokens that begin "ab" and go on past three more characters are allowed."""
    monkeypatch.setattr(masker, "_LOOP_UNCHECKED", True)
    _used, results = _split_masks(gpt2, monkeypatch)
    assert not all(equal for prefix, equal in results), results


@pytest.mark.parametrize("where,mutation", [("walk", 6), ("slices", 5), ("walk", 7)])
def test_broken_splits_make_wrong_masks(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch, where: str,
                                        mutation: int) -> None:
    """A walk that skips the plain subtrees below every first byte (6: those tokens go missing),
    a split that admits unchecked lead bytes (5: tokens beginning "é" allowed where the pattern
    refuses them) and a walk that takes every subtree whole from the loop state, pure or not (7:
    a key closed inside the token, then anything) give masks the reference refutes."""
    monkeypatch.setattr(walk if where == "walk" else slices, "_MUTATION", mutation)
    _used, results = _split_masks(gpt2, monkeypatch)
    assert not all(equal for _prefix, equal in results), results


def test_the_skipping_walk_kernel_equals_the_python_walk(gpt2: gd.Vocabulary) -> None:
    """The lexeme walk with a split's subtrees left out: the kernel and the Python walk list the
    same nodes, boundaries and states, and leave out something."""
    string_slice = slices.string_slice(gpt2)
    trie = gpt2.trie
    pure = string_slice.pure_nodes(trie)
    for schema, prefix in SPLIT_CASES:
        grammar = gd.compile_json_schema(schema)
        lexer = grammar.recognizer.lexer
        lex = grammar.recognizer.feed(grammar.recognizer.initial, prefix.encode())[0]
        split = slices.plain_split(lexer, lex)
        assert split is not None
        skip = (pure, split[1], -1)
        nodes, boundaries, reached = walk.compiled_lexeme_walk(lexer, trie, lex, None, skip)
        slow_nodes, slow_boundaries, slow_reached = walk.python_lexeme_walk(lexer, trie, lex, skip)
        assert nodes.tolist() == slow_nodes
        assert [tuple(b) for b in boundaries.tolist()] == [tuple(b) for b in slow_boundaries]
        assert reached.tolist() == sorted(slow_reached)
        whole = walk.python_lexeme_walk(lexer, trie, lex)[0]
        assert set(slow_nodes) < set(whole)


def test_subtrees_taken_whole_from_the_loop_state(gpt2: gd.Vocabulary) -> None:
    """With the split's target as the loop state (its plain run reaches the longest plain
    token), the kernel (nodes listed, and bits set) and the Python walk agree, and the nodes are
    those of the walk that steps into every such subtree: taking them whole changes no node."""
    string_slice = slices.string_slice(gpt2)
    trie = gpt2.trie
    pure = string_slice.pure_nodes(trie)
    taken = 0
    for schema, prefix in SPLIT_CASES:
        grammar = gd.compile_json_schema(schema)
        lexer = grammar.recognizer.lexer
        lex = grammar.recognizer.feed(grammar.recognizer.initial, prefix.encode())[0]
        target, firsts = slices.plain_split(lexer, lex)
        run = slices.plain_run(lexer, lambda state: slices.plain_successor(lexer, state), target, string_slice.longest)
        if run is None or run[0] < string_slice.longest:
            continue
        skip, loop = (pure, firsts, -1), (pure, firsts, target)
        nodes, boundaries, reached = walk.compiled_lexeme_walk(lexer, trie, lex, None, loop)
        slow_nodes, slow_boundaries, slow_reached = walk.python_lexeme_walk(lexer, trie, lex, loop)
        assert nodes.tolist() == slow_nodes
        assert [tuple(b) for b in boundaries.tolist()] == [tuple(b) for b in slow_boundaries]
        assert reached.tolist() == sorted(slow_reached)
        bits = np.zeros(4 * gd.bitmask_words(len(gpt2)), dtype=np.uint8)
        walk.compiled_lexeme_walk(lexer, trie, lex, bits, loop)
        assert np.array_equal(bits, walk.token_bits(trie, slow_nodes, len(gpt2)))
        stepped = walk.python_lexeme_walk(lexer, trie, lex, skip)
        assert sorted(slow_nodes) == sorted(stepped[0]) and slow_boundaries == stepped[1]
        taken += _steps(lexer, trie, lex, loop) < _steps(lexer, trie, lex, skip)
    assert taken >= 3


class _CountedRows(list):  # type: ignore[type-arg]
    """A copy of the lexer's rows that counts the lookups (one per node the walk steps)."""

    looked = 0

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        self.looked += 1
        return super().__getitem__(index)


def _steps(lexer: object, trie: object, lex: int, skip: tuple) -> int:
    """How many nodes the Python walk steps the lexer at."""
    rows = _CountedRows(lexer.rows)  # type: ignore[attr-defined]
    counted = types.SimpleNamespace(rows=rows, matches=lexer.matches, row=lexer.row)  # type: ignore[attr-defined]
    walk.python_lexeme_walk(counted, trie, lex, skip)  # type: ignore[arg-type]
    return rows.looked


@pytest.mark.parametrize("kernel", ["plain_successor", "plain_split"])
def test_the_plain_kernels_make_missing_cells_in_place(kernel: str) -> None:
    """Given the lexer's C maker, a kernel on a state none of whose transitions are made yet
    answers in one call (no hand-back per missing cell), as the Python reference does; without
    it, the first call hands a missing transition back."""
    for with_maker in (False, True):
        shared_exprs().retire()
        grammar = gd.compile_json_schema({"type": "string", "maxLength": 40})
        recognizer = grammar.recognizer
        lexer = recognizer.lexer
        state = recognizer.feed(recognizer.initial, b'"ab')[0]
        table, _accepts = lexer.dense()
        where = np.zeros(2, dtype=np.int64)
        extra = (np.zeros(256, dtype=np.uint8),) if kernel == "plain_split" else ()
        found = getattr(walk._walk, kernel)(table, state, where, *extra, 0, lexer.cell_maker() if with_maker else None)
        if with_maker:
            reference = getattr(slices, f"python_{kernel}")(lexer, state)
            assert found != slices._MISSING
            assert (None if found == slices._UNDECIDED else found) == (
                reference if kernel == "plain_successor" or reference is None else reference[0])
        else:
            assert found == slices._MISSING


# ``slices.absorbs_plain``: (schema, prefix, whether some expression of the lexer state there stays
# alive through any plain text)
CLOSED = {"type": "object", "properties": {"name": {"type": "integer"}, "size": {"type": "integer"}},
          "additionalProperties": False}
# keys beginning "ab" refused: the other key is ``string & ¬(ab...)``, less an infinite language
NO_AB = {"type": "object", "patternProperties": {"^ab": False}}
ABSORB_CASES = [
    (OPEN, '{"', True),  # any other key, beside names whose first letters go their own ways
    (OPEN, '{"n', True),  # inside two names and any other key
    (OPEN, '{"nick', True),
    (OPEN, '{"name":"a","', True),  # one name left out: the other key still absorbs
    ({"type": "string"}, '"ab', True),  # a string's body loops on plain characters
    (CLOSED, '{"', False),  # the names only: each ends on some plain character
    (CLOSED, '{"n', False),
    ({"type": "string", "pattern": "^[a-z]+$"}, '"a', False),  # a digit ends it
    ({"type": "string", "maxLength": 12}, '"', False),  # counts down: not the same expression again
    (SHORT_KEYS, '{"', False),  # the other key with a length: two positive members
    (NO_AB, '{"a', False),  # "b" leads nowhere: less an infinite language
    ({"type": "string", "format": "hostname"}, '"', False),  # guarded: the walk decides
]


@pytest.mark.parametrize("schema,prefix,expected", ABSORB_CASES)
def test_absorbs_plain(schema: dict, prefix: str, expected: bool) -> None:
    grammar = gd.compile_json_schema(schema)
    lex = grammar.recognizer.feed(grammar.recognizer.initial, prefix.encode())[0]
    assert slices.absorbs_plain(grammar.recognizer.lexer, lex) is expected


def test_an_absorbing_state_keeps_every_plain_token(gpt2: gd.Vocabulary) -> None:
    """Where ``absorbs_plain`` holds, every plain token of the vocabulary is read without the
    lexer dying, byte by byte: the claim the masker takes the whole slice on."""
    plain = np.flatnonzero(slices.string_slice(gpt2).plain).tolist()
    for schema, prefix, expected in ABSORB_CASES:
        if not expected:
            continue
        grammar = gd.compile_json_schema(schema)
        lexer = grammar.recognizer.lexer
        lex = grammar.recognizer.feed(grammar.recognizer.initial, prefix.encode())[0]
        assert all(lexer.feed(lex, gpt2.token_bytes(t)) != DEAD for t in plain), prefix


ABSORBED_PREFIXES = ['{"', '{"n', '{"nick', '{"x', '{"\u00e9', '{"name":"a","', '{"name":"a","ni']


def test_parts_taken_whole_from_the_slice_equal_the_walk(gpt2: gd.Vocabulary) -> None:
    """A lexeme part taken whole from the slice (an absorbing state without a plain run) has the
    bits of the walk of the whole trie, masks equal to the reference, and the
    states reached from that walk once the closing budget asks for them (which then caches the
    walked part in its place)."""
    taken = 0
    for prefix in ABSORBED_PREFIXES:
        shared_exprs().retire()  # a fresh set: no part cached by another case
        grammar = gd.compile_json_schema(OPEN)
        masker_ = grammar.masker(gpt2)
        data = prefix.encode()
        state = grammar.recognizer.feed(grammar.recognizer.initial, data)
        assert np.array_equal(masker_.mask(state),
                              reference_mask(ReferenceRecognizer(grammar.ir), gpt2, data)), prefix
        lex = state[0]
        part = masker_.lexeme_part(lex)
        reached = None
        if part.reached is None:
            taken += 1
            assert part.trie is masker_.slice.rest
            reached = masker_.lexeme_reached(lex)  # walks the whole trie
            assert masker_.lexeme_part(lex).reached is not None  # and that walk took its place
        walked = masker_._walked_part(lex, whole=True)  # a whole walk, whatever is cached
        assert np.array_equal(part.bits, walked.bits), prefix
        if reached is not None:
            assert walked.trie is masker_.trie and np.array_equal(reached, walked.reached), prefix
    assert taken >= 5


@pytest.mark.parametrize("mutation,schema,prefix", [(1, CLOSED, '{"'), (2, NO_AB, '{"a')])
def test_a_broken_absorption_is_caught(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch, mutation: int,
                                       schema: dict, prefix: str) -> None:
    """An expression taken as looping on plain characters unchecked (1: a closed object's names
    then take every plain token) or an excluded language taken as finite unchecked (2: after
    ``{"a`` with keys beginning "ab" refused, "b" is allowed) gives a mask the reference refutes."""
    monkeypatch.setattr(slices, "_ABSORB_MUTATION", mutation)
    shared_exprs().retire()  # a fresh set: the broken check makes the part, not finds it made
    grammar = gd.compile_json_schema(schema)
    data = prefix.encode()
    state = grammar.recognizer.feed(grammar.recognizer.initial, data)
    fast = grammar.masker(gpt2).mask(state)
    assert not np.array_equal(fast, reference_mask(ReferenceRecognizer(grammar.ir), gpt2, data))


REACH_DOCUMENTS = DOCUMENTS + [
    ({"type": "object", "properties": {name: {"type": "integer"} for name in
                                       ("alpha", "alps", "beta", "gamma", "delta", "epsilon", "zeta", "eta")}},
     {"alps": 1, "gamma": 2, "zeta": 4, "other": 3}),
    ({"enum": ["red", "green", "blue", 12, True, None]}, "green"),
    # an enum's literal beside a free string: the literal's pair alone reaches one plain byte
    ({"anyOf": [{"enum": ["red", "rose"]}, {"type": "string", "maxLength": 30}]}, "rosy"),
    ({"type": "array", "items": {"type": "number"}}, [1.5, -2e10, 0, 3.25]),
]


def _reach_checks(schema: dict, document: object) -> tuple[int, int]:
    """At each lexer state of the document: where ``plain_ascii_reach`` says plain characters go
    different ways, ``plain_successor`` is None; where it bounds the bytes under ``_MIN_SPLIT``,
    no split pays. Returns how many states skipped each check."""
    no_run = no_split = 0
    for lexer, lex in _lexer_states(schema, document):
        if lex == DEAD:
            continue
        reach, apart = slices.plain_ascii_reach(lexer, lex)
        if apart:
            assert slices.python_plain_successor(lexer, lex) is None, lex
            no_run += 1
        if reach < masker._MIN_SPLIT:
            split = slices.python_plain_split(lexer, lex)
            assert split is None or sum(split[1][:0x80]) < masker._MIN_SPLIT, lex
            no_split += 1
    return no_run, no_split


def test_the_checks_plain_ascii_reach_leaves_out_would_find_nothing() -> None:
    """The run and split checks a walked part leaves out (``Masker._walked_part``) are ones that
    would find no run and no split, at every state of every document here; and it leaves out
    many (a number's digits, a keyword, a key's rest, an enum value)."""
    skipped = [_reach_checks(schema, document) for schema, document in REACH_DOCUMENTS]
    assert sum(run for run, _ in skipped) >= 40 and sum(split for _, split in skipped) >= 40


@pytest.mark.parametrize("mutation", [1, 2])
def test_a_broken_reach_is_caught(monkeypatch: pytest.MonkeyPatch, mutation: int) -> None:
    """``plain_ascii_reach`` counting only the first pair's bytes (1), or taking an expression
    that every plain ASCII byte begins as sending them apart (2), leaves out a check that would
    have found something."""
    monkeypatch.setattr(slices, "_REACH_MUTATION", mutation)
    with pytest.raises(AssertionError):
        for schema, document in REACH_DOCUMENTS:
            _reach_checks(schema, document)


def test_masks_equal_with_the_checks_always_run(gpt2: gd.Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leaving checks out changes no mask: along every document here, the masks equal those of a
    masker that runs every run and split check."""
    for schema, document in REACH_DOCUMENTS:
        text = json.dumps(document).encode()
        masks = []
        for always in (False, True):
            monkeypatch.setattr(masker, "_CHECKS_ALWAYS", always)
            shared_exprs().retire()  # fresh lexer states and parts for each run
            grammar = gd.compile_json_schema(schema)
            matcher = grammar.matcher(gpt2)
            found = []
            for byte_end in range(1, len(text) + 1):
                state = grammar.recognizer.feed(grammar.recognizer.initial, text[:byte_end])
                found.append(matcher._masker.packed(state).tobytes())
            masks.append(found)
        assert masks[0] == masks[1], schema
