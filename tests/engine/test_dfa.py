"""The lexeme DFA shared by the grammars of one ExprSet: shared states, each grammar's own lexeme
numbers, guards told apart, retirement of a grown set."""

from __future__ import annotations

import sys
from collections import deque

import numpy as np
import pytest

import grammar_decode as gd
from grammar_decode.engine import dfa as dfa_module
from grammar_decode.engine.dfa import DEAD, dfa_for
from grammar_decode.engine.lexer import Lexer
from grammar_decode.frontends.regex import translate
from grammar_decode.ir import regex as regex_module
from grammar_decode.ir.regex import ExprSet, shared_exprs
from grammar_decode.oracle.masks import reference_mask
from grammar_decode.oracle.recognizer import ReferenceRecognizer

from helpers import run_in_threads


@pytest.fixture(autouse=True, params=["compiled", "python"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here on both expression stores: the C one, whose transitions are made a byte
    class at a time by ``step_pairs``, and the Python one, whose rows are made from class maps."""
    monkeypatch.setattr(regex_module, "COMPILED", request.param == "compiled" and regex_module._exprs is not None)
    return request.param

def test_two_grammars_share_states_and_keep_their_own_lexeme_numbers() -> None:
    exprs = ExprSet()
    word, digits, keyword = (translate(exprs, p) for p in (r"[a-z]+", r"[0-9]+", r"if"))
    first = Lexer(exprs, [word, digits, keyword])
    second = Lexer(exprs, [keyword, word])  # the same lexemes, numbered otherwise
    assert first.dfa is second.dfa
    a = first.feed(first.start([0, 2]), b"if")
    b = second.feed(second.start([0, 1]), b"if")
    assert a == b != DEAD  # one state for both
    assert first.accepting[a] == {0, 2} and second.accepting[b] == {0, 1}
    assert first.live_lexemes(a) == (0, 2) and second.live_lexemes(b) == (0, 1)
    assert dict(first.pairs[a])[0] == dict(second.pairs[b])[1]  # the word's remainder, one expression
    after = first.step(a, ord("x"))
    assert first.accepting[after] == {0} and second.accepting[after] == {1}
    assert first.start([1]) != first.start([0])


def test_lexemes_with_one_expression_in_one_grammar_stay_apart() -> None:
    """A string and a string that is a unique array item share an expression; where only one
    may come next, only that one matches (else the other's bookkeeping would run on it)."""
    exprs = ExprSet()
    word = translate(exprs, r"[a-z]+")
    lexer = Lexer(exprs, [word, word])
    state = lexer.feed(lexer.start([0, 1]), b"ab")
    assert lexer.accepting[state] == {0, 1} and lexer.live_lexemes(state) == (0, 1)
    assert lexer.accepting[lexer.feed(lexer.start([1]), b"ab")] == {1}
    other = Lexer(exprs, [word])  # another grammar's first such lexeme: lexeme 0's states
    assert other.feed(other.start([0]), b"ab") == lexer.feed(lexer.start([0]), b"ab")


class _Everything:
    """A guard that admits every text (its identity is what the DFA tells apart)."""

    start = 0

    def step(self, tag: int, byte: int) -> int:
        return tag + 1

    def complete(self, tag: int) -> bool:
        return True

    def completions(self, tag: int) -> None:
        return None


def test_guards_are_told_apart_by_identity() -> None:
    exprs = ExprSet()
    word = translate(exprs, r"[a-z]+")
    dfa = dfa_for(exprs)
    guard = _Everything()
    assert dfa.origin(word) != dfa.origin(word, guard) != dfa.origin(word, _Everything())
    assert dfa.origin(word, guard) == dfa.origin(word, guard)
    plain, guarded = Lexer(exprs, [word]), Lexer(exprs, [word], {0: guard})
    assert plain.start([0]) != guarded.start([0]) and guarded.guarded(guarded.start([0]))



def test_a_guarded_state_has_its_cells_written_one_byte_at_a_time() -> None:
    """A state with guarded pairs gets dense cells too (so compiled walks go through it): the
    byte asked for, and no other byte of its class, each equal to the row's."""
    exprs = ExprSet()
    lexer = Lexer(exprs, [translate(exprs, r"[a-z]+")], {0: _Everything()})
    state = lexer.start([0])
    assert lexer.guarded(state)
    table, _accepts = lexer.dense()
    row = table[256 * state:256 * (state + 1)]
    assert (row == 0).all()
    lexer.dense_cell(state, ord("q"))
    table, _accepts = lexer.dense()
    row = table[256 * state:256 * (state + 1)] - dfa_module.STORED
    assert row[ord("q")] == lexer.step(state, ord("q")) >= 0
    assert (row[[b for b in range(256) if b != ord("q")]] == dfa_module.UNBUILT).all()
    lexer.dense_cell(state, ord("!"))
    assert lexer.dense()[0][256 * state + ord("!")] - dfa_module.STORED == DEAD

class _Unsplit:
    """``A_LABELS`` without its splits: every byte of a guarded state made on its own."""

    def __init__(self) -> None:
        from grammar_decode.frontends.json_schema.a_labels import A_LABELS
        self.inner = A_LABELS
        self.start = A_LABELS.start

    def step(self, tag, byte):  # type: ignore[no-untyped-def]
        return self.inner.step(tag, byte)

    def complete(self, tag):  # type: ignore[no-untyped-def]
        return self.inner.complete(tag)

    def completions(self, tag):  # type: ignore[no-untyped-def]
        return self.inner.completions(tag)


def test_guarded_transitions_made_per_class_equal_those_made_per_byte() -> None:
    """A host name's lexer with the guard's splits (a transition per class, written for every
    byte of it) and without (per byte): breadth first over the pairs of states both reach, every
    byte leads both alive or both dead, and every pair matches alike; the class rows fill whole
    classes of dense cells."""
    from grammar_decode.frontends.json_schema.a_labels import A_LABELS
    from grammar_decode.frontends.json_schema.formats import HOSTNAME_WITH_A_LABELS
    exprs = ExprSet()
    host = exprs.concat(exprs.literal(b'"'), translate(exprs, HOSTNAME_WITH_A_LABELS), exprs.literal(b'"'))
    split, whole = Lexer(exprs, [host], {0: A_LABELS}), Lexer(exprs, [host], {0: _Unsplit()})
    start = (split.start([0]), whole.start([0]))
    seen, queue = {start}, deque([start])
    while queue and len(seen) < 3000:
        left, right = queue.popleft()
        assert split.matches[left] == whole.matches[right]
        for byte in range(256):
            pair = (split.step(left, byte), whole.step(right, byte))
            assert (pair[0] == DEAD) == (pair[1] == DEAD), (left, right, byte)
            if pair[0] != DEAD and pair not in seen:
                seen.add(pair)
                queue.append(pair)
    assert len(seen) >= 3000
    state = split.feed(split.start([0]), b'"ab')
    split.dense_cell(state, ord("c"))
    cells = split.dense()[0][256 * state:256 * (state + 1)] - dfa_module.STORED
    assert cells[ord("q")] == cells[ord("c")] == split.step(state, ord("c")) >= 0  # one class, made once


def test_compiled_grammars_share_the_string_lexemes_states() -> None:
    shared_exprs().retire()  # a fresh set: the count below is this test's
    first = gd.compile_json_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    second = gd.compile_json_schema({"type": "array", "items": {"type": "string"}})
    dfa = first.recognizer.lexer.dfa
    assert second.recognizer.lexer.dfa is dfa
    one = first.recognizer.feed(first.recognizer.initial, b'{"a": "xyz')
    two = second.recognizer.feed(second.recognizer.initial, b'["xyz')
    assert one is not None and two is not None
    inside = lambda state, recognizer: recognizer.lexer.pairs[state[0]]  # noqa: E731
    assert [e for _l, e in inside(one, first.recognizer)] == [e for _l, e in inside(two, second.recognizer)]


def test_masks_of_a_second_grammar_reuse_the_lexeme_parts(gpt2: gd.Vocabulary) -> None:
    shared_exprs().retire()
    first = gd.compile_json_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    first.masker(gpt2).mask(first.recognizer.feed(first.recognizer.initial, b'{"a": "hello'))
    second = gd.compile_json_schema({"type": "array", "items": {"type": "string"}})
    masker = second.masker(gpt2)
    before = masker.cache_info()["lexeme_parts"]
    prefix = b'["hello'
    mask = masker.mask(second.recognizer.feed(second.recognizer.initial, prefix))
    after = masker.cache_info()["lexeme_parts"]
    assert after["hits"] > before["hits"] and after["entries"] == before["entries"]
    assert np.array_equal(mask, reference_mask(ReferenceRecognizer(second.ir), gpt2, prefix))


def test_a_set_past_its_bound_is_retired(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    exprs = ExprSet()
    monkeypatch.setattr(dfa_module, "MAX_STATES", 3)
    lexer = Lexer(exprs, [translate(exprs, r"[a-z]{0,10}")])
    lexer.feed(lexer.start([0]), b"abcd")
    assert exprs.retired
    shared = shared_exprs()
    shared.retire()
    assert shared_exprs() is not shared and not shared_exprs().retired


def _mapping_flags(address: int) -> list[str]:
    """The ``VmFlags`` of the mapping of this process that holds ``address`` (Linux)."""
    inside = False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split(" ", 1)[0]
            if "-" in head and ":" not in head:
                low, high = (int(part, 16) for part in head.split("-"))
                inside = low <= address < high
            elif inside and line.startswith("VmFlags:"):
                return line.split()[1:]
    raise LookupError(hex(address))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_the_dense_table_has_huge_pages_only_where_a_compile_laid_them() -> None:
    """NumPy advises huge pages for large arrays; a first write into each 2 MiB of the table would
    then clear a whole huge page inside one cell (milliseconds). The table is a private mapping of
    its own with huge pages off except in the regions a compile prepared ahead of the states."""
    exprs = ExprSet()
    lexer = Lexer(exprs, [translate(exprs, r"[a-z]+")])
    table, _ = lexer.dfa.dense()
    pages = lexer.dfa._pages
    assert pages.prepared >= 1
    ahead = _mapping_flags(table.ctypes.data + pages._aligned)
    assert "hg" in ahead and "sh" not in ahead
    tail = _mapping_flags(table.ctypes.data + table.nbytes - 1)
    assert "nh" in tail and "sh" not in tail
    assert table.flags.writeable and not table[-4096:].any()
    # the states made since are past what the last compile prepared: the next compile prepares more
    assert pages.prepare(pages._frontier, 1) == 1 and pages.prepare(0, 1) == 0


def test_a_kernel_refusing_huge_page_advice_leaves_a_plain_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel built without transparent huge pages answers the advice with ``EINVAL``: the table
    is then a plain zeroed mapping and no region is prepared (an advice no kernel knows stands in)."""
    from grammar_decode.engine import row_pages

    monkeypatch.setattr(row_pages, "_NO_HUGE", 0x7FFF)
    pages = row_pages.RowPages(1 << 20)
    assert not pages.advised and pages.prepare(0, 1 << 22) == 0 and pages.prepared == 0
    pages.array[5] = 7
    assert pages.array[5] == 7 and not pages.array[6:].any()


def test_threads_build_one_dfa_alike() -> None:
    exprs = ExprSet()
    patterns = [r"[a-z]+", r"[a-z]*[0-9]{1,3}", r'"[^"]{0,40}"']

    def work() -> list[int]:
        lexer = Lexer(exprs, [translate(exprs, p) for p in patterns])  # a grammar per thread
        return [lexer.feed(lexer.start([0, 1, 2]), text) for text in (b"abc123", b"zz9", b'"q w e', b"q") * 40]

    results = run_in_threads(work)
    assert all(r == results[0] for r in results) and DEAD not in results[0]


def test_the_growing_tables_are_left_to_the_collector_untracked() -> None:
    """Rows, class maps, first-byte lists and split sets are tuples of ints, which the collector
    stops tracking after a pass: held in lists, those of 256 entries (and frozensets of split masks)
    were walked by every full collection, pauses of hundreds of ms in a long-lived process."""
    import gc

    exprs = ExprSet()
    lexer = Lexer(exprs, [translate(exprs, r"[a-z][a-z0-9_-]{0,40}@[a-z]+\.(com|org)")])
    state = lexer.feed(lexer.start([0]), b"joe_")
    assert state != DEAD
    lexer.row(state)  # its split sets and class map made (the Python store's path)
    splits = [exprs.split_sets(e) for _origin, e in lexer.dfa.pairs[state]]
    gc.collect()
    gc.collect()  # a tuple of tuples goes untracked once its members have been seen untracked
    dfa = lexer.dfa
    rows = [row for row in dfa.rows if row is not None]
    assert rows and all(type(row) is tuple and not gc.is_tracked(row) for row in rows)
    tracked = [m for m in dfa._class_maps.values() if type(m) is not tuple or gc.is_tracked(m)]
    assert not tracked, [(type(m), gc.is_tracked(m), [(type(x), gc.is_tracked(x)) for x in m]) for m in tracked][:3]
    assert type(dfa.first_bytes(state)) is tuple
    assert splits and all(type(s) is tuple and not gc.is_tracked(s) for s in splits)


def test_states_are_made_off_the_collectors_lists() -> None:
    """With the C store, a state's pairs, its key in ``_ids`` and its row are untracked as they
    are made, not at the next collection: a new row tracked was 256 visits for the next young
    collection, and a tracked key tracks ``_ids`` again, whose every entry each full collection
    then visits. So once a full collection has untracked ``_ids``, making states keeps it so."""
    import gc

    exprs = ExprSet(compiled=True)  # the Python store's are untracked by the collector's passes
    lexer = Lexer(exprs, [translate(exprs, _EMAIL), translate(exprs, r"[a-z]+[0-9]*")])
    dfa = lexer.dfa
    gc.collect()
    assert not gc.is_tracked(dfa._ids)
    for text in (b"joe_", b"ann.b@x", b"zed9", b"q-q-q@qq.org"):
        state = lexer.start([0, 1])
        for byte in text:
            lexer.row(state)  # whole rows (each published as a tuple) as well as single cells
            state = lexer.step(state, byte)
    assert len(dfa) > 10
    tracked_keys = [key for key in dfa._ids if gc.is_tracked(key)]
    assert not tracked_keys and not gc.is_tracked(dfa._ids)
    assert not [pairs for pairs in dfa.pairs if gc.is_tracked(pairs) or any(gc.is_tracked(p) for p in pairs)]
    rows = [row for row in dfa.rows if type(row) is tuple]
    assert rows and not [row for row in rows if gc.is_tracked(row)]
    for state, row in enumerate(dfa.rows):  # the rows say what the dense table says
        if type(row) is tuple:
            assert list(row) == (dfa._table[256 * state:256 * (state + 1)] - dfa_module.STORED).tolist()


_EMAIL = r"[a-z][a-z0-9_.-]{0,40}@[a-z0-9-]+\.(com|org|net)"
_ESCAPED = r'"([^"\\]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4})){0,20}"'


def _fed(pattern: str, text: bytes, compiled: bool | None = None) -> tuple[Lexer, int]:
    exprs = ExprSet(compiled=compiled)
    lexer = Lexer(exprs, [translate(exprs, pattern)])
    state = lexer.feed(lexer.start([0]), text)
    assert state != DEAD
    return lexer, state


@pytest.mark.parametrize("pattern, text", [(_EMAIL, b"jo"), (_ESCAPED, b'"a')])
def test_cells_made_one_class_at_a_time_behave_as_whole_rows(pattern: str, text: bytes) -> None:
    """Two DFAs of one pattern, one built by whole rows, one by single cells asked for in a
    shuffled order: every state reached pairwise within eight bytes agrees (dead, accepting)."""
    rows_lexer, a = _fed(pattern, text)
    cells_lexer, b = _fed(pattern, text)
    rng = np.random.default_rng(7)
    frontier, seen = [(a, b)], {(a, b)}
    for _depth in range(8):
        following = []
        for x, y in frontier:
            row = rows_lexer.dfa.row(x)
            for byte in rng.permutation(256).tolist():
                p, q = row[byte], cells_lexer.dfa.cell(y, byte)
                assert (p == DEAD) == (q == DEAD), (x, y, byte)
                if p != DEAD:
                    assert rows_lexer.dfa.matches[p] == cells_lexer.dfa.matches[q]
                    if (p, q) not in seen and len(seen) < 400:
                        seen.add((p, q))
                        following.append((p, q))
        frontier = following
    assert len(seen) >= 15


def _canonical(exprs: ExprSet, item: int) -> str:
    """``item`` described with the members of each union and intersection in sorted order: two
    stores number their nodes in the order they made them, and the members of ``&`` and ``|`` are
    kept in id order, so equal expressions may be described in different orders."""
    kind, args = exprs.kind[item], exprs.args[item]
    if kind in (regex_module.AND_KIND, regex_module.OR_KIND):
        joint = "&" if kind == regex_module.AND_KIND else "|"
        return "(" + joint.join(sorted(_canonical(exprs, m) for m in args)) + ")"  # type: ignore[union-attr]
    if kind == regex_module.CONCAT_KIND:
        return "(" + "".join(_canonical(exprs, m) for m in args) + ")"  # type: ignore[union-attr]
    if kind == regex_module.NOT_KIND:
        return "¬" + _canonical(exprs, args)  # type: ignore[arg-type]
    if kind == regex_module.REPEAT_KIND:
        inner, lo, hi = args  # type: ignore[misc]
        return f"{_canonical(exprs, inner)}{{{lo},{'' if hi is None else hi}}}"
    return exprs.describe(item)


def _compare_stores(fast: Lexer, a: int, slow: Lexer, b: int, depth: int = 6, limit: int = 300,
                    fast_step: "object | None" = None) -> int:
    """Every state reached pairwise from ``a`` and ``b`` within ``depth`` bytes agrees (dead,
    accepting, guard tags, the expressions left, described); how many pairs were compared (at
    most ``limit`` followed). ``fast_step``: how ``fast`` steps, if not by ``Lexer.step``."""
    step = fast.step if fast_step is None else fast_step
    frontier, seen = [(a, b)], {(a, b)}
    for _depth in range(depth):
        following = []
        for x, y in frontier:
            for byte in range(256):
                p, q = step(x, byte), slow.step(y, byte)  # type: ignore[operator]
                assert (p == DEAD) == (q == DEAD), (x, y, byte)
                if p != DEAD:
                    assert fast.dfa.matches[p] == slow.dfa.matches[q]
                    assert fast.dfa.tags[p] == slow.dfa.tags[q], (x, y, byte)
                    assert [_canonical(fast.exprs, e) for _o, e in fast.dfa.pairs[p]] == \
                        [_canonical(slow.exprs, e) for _o, e in slow.dfa.pairs[q]]
                    if (p, q) not in seen and len(seen) < limit:
                        seen.add((p, q))
                        following.append((p, q))
        frontier = following
    return len(seen)


@pytest.mark.parametrize("pattern, text", [(_EMAIL, b"jo"), (_ESCAPED, b'"a'), (_EMAIL, b"joe@x")])
def test_the_two_stores_build_equivalent_dfas(pattern: str, text: bytes) -> None:
    """The DFA on the C store (transitions by ``make_cell`` and ``step_pairs``) and the one on
    the Python store (class maps) agree state for state."""
    fast, a = _fed(pattern, text, compiled=True)
    slow, b = _fed(pattern, text, compiled=False)
    assert fast.dfa._store is not None and slow.dfa._store is None
    assert _compare_stores(fast, a, slow, b) >= 8


def _key_lexer(compiled: bool, mutation: int = 0) -> Lexer:
    """A JSON key other than the named ``"name"`` and ``"age"``: ``"[a-z]*" & ¬("name"|"age")``."""
    exprs = ExprSet(compiled=compiled)
    if mutation:
        exprs._use_store(regex_module._exprs.Store(mutation=mutation))
    named = exprs.alt(translate(exprs, '"name"'), translate(exprs, '"age"'))
    return Lexer(exprs, [exprs.both(translate(exprs, '"[a-z]*"'), exprs.negate(named))])


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
def test_an_other_key_is_stepped_without_an_emptiness_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string less finitely many named keys is non-empty by its structure: ``make_cell`` asks
    for no search but where a named key's closing quote is read (``"age"`` less ``"age"``: only a
    search tells it is empty); the states agree with the Python store's."""
    fast, slow = _key_lexer(True), _key_lexer(False)
    fast_start, slow_start = fast.start([0]), slow.start([0])
    searched = []
    is_empty = fast.exprs.is_empty

    def counted(item: int, fuel: int | None = None) -> bool:
        searched.append(fast.exprs.describe(item))
        return is_empty(item, fuel)

    monkeypatch.setattr(fast.exprs, "is_empty", counted)
    assert _compare_stores(fast, fast_start, slow, slow_start, depth=5) >= 8
    assert set(searched) <= {"(ε&¬(ε))"}, searched
    assert fast.step(fast.feed(fast_start, b'"age'), ord('"')) == DEAD
    assert fast.dfa.matches[fast.step(fast.feed(fast_start, b'"ag'), ord('"'))]


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
def test_a_cell_maker_that_never_accepts_is_caught() -> None:
    """4: ``make_cell`` appends every new state as matching nothing; the comparison with the
    Python store sees it."""
    fast, slow = _key_lexer(True, mutation=4), _key_lexer(False)
    with pytest.raises(AssertionError):
        _compare_stores(fast, fast.start([0]), slow, slow.start([0]), depth=5)


def _with_an_empty_step(mutation: int) -> Lexer:
    """A lexer whose start reads ``xy``, or an intersection that no text matches (``a[a-z]*b`` and
    ``a[a-z]*c``): after ``a`` only that intersection is left, which no constructor reduces to
    NOTHING, so only an emptiness search can tell the step is dead: the C store's own
    (``searched`` in ``ir/_exprs.c``; the memo of the Python search the start state asked for is
    cleared, so nothing is known before). ``mutation``: the C store deliberately broken (3:
    ``step_pairs`` never asks whether a derivative is empty; 7: an intersection's witness word
    goes unchecked by its other member; 8: the probe for a word takes the first derivative it
    expands for one)."""
    exprs = ExprSet(compiled=True)
    if mutation:
        exprs._use_store(regex_module._exprs.Store(mutation=mutation))
    never = exprs.both(translate(exprs, "a[a-z]*b"), translate(exprs, "a[a-z]*c"))
    lexer = Lexer(exprs, [exprs.alt(never, translate(exprs, "xy"))])
    lexer.start([0])  # its Python search, remembered with the start state
    exprs._empty.clear()  # the same dict the C store reads
    return lexer


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
def test_a_step_to_an_empty_intersection_is_dead_in_the_c_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C store decides the emptiness of a derivative with ``&`` itself (a search over its
    derivatives, ``searched``), with no Python search; the broken variants keep a state that
    matches nothing."""
    lexer = _with_an_empty_step(0)
    start = lexer.start([0])
    monkeypatch.setattr(lexer.exprs, "is_empty", lambda *args: pytest.fail("a Python search"))
    assert lexer.step(start, ord("a")) == DEAD and lexer.step(start, ord("x")) != DEAD
    for mutation in (3, 7, 8):
        broken = _with_an_empty_step(mutation)
        assert broken.step(broken.start([0]), ord("a")) != DEAD, mutation


def _first_letter_not_a(mutation: int = 0, compiled: bool = True) -> Lexer:
    """``q`` then a word that does not begin with ``a`` (``[a-z]+ & ¬a[a-z]*``): after ``q`` the
    intersection's shortest plain word (``a``) is excluded, so only a probe along its derivatives
    finds one (``b``). ``mutation`` 9: the C probe and search try each node's first byte class
    alone, so they find none and call the intersection empty."""
    exprs = ExprSet(compiled=compiled)
    if mutation:
        exprs._use_store(regex_module._exprs.Store(mutation=mutation))
    word = exprs.both(translate(exprs, "[a-z]+"), exprs.negate(translate(exprs, "a[a-z]*")))
    lexer = Lexer(exprs, [exprs.concat(exprs.literal(b"q"), word, exprs.literal(b";"))])
    lexer.start([0])
    exprs._empty.clear()
    return lexer


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
def test_an_intersection_shown_non_empty_by_a_probe_in_c(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its derivatives agree with the Python store's for four bytes, with no Python search; the
    probe's finding is written into the Python set's memo; the broken probe (9) is caught."""
    fast, slow = _first_letter_not_a(), _first_letter_not_a(compiled=False)
    monkeypatch.setattr(fast.exprs, "is_empty", lambda *args: pytest.fail("a Python search"))
    fast_start = fast.start([0])
    after = fast.step(fast_start, ord("q"))
    assert after != DEAD and fast.step(after, ord("a")) == DEAD and fast.step(after, ord("b")) != DEAD
    word = fast.exprs.args[fast.dfa.pairs[after][0][1]][0]  # (word);
    assert fast.exprs.kind[word] == regex_module.AND_KIND and fast.exprs._empty.get(word) is False
    assert _compare_stores(fast, fast_start, slow, slow.start([0]), depth=4) >= 4
    broken = _first_letter_not_a(mutation=9)  # its own start, decided in C too, may be dead already
    broken_start = broken.start([0])
    assert broken_start == DEAD or broken.step(broken_start, ord("q")) == DEAD


_REGIONS = [  # (the plain language, what is taken out of it): regions of keys a pattern splits
    (r'"[a-z]*"', r'"[a-z]*f.o[a-z]*"'),
    (r'"[a-z0-9_]*"', r'"[a-z]*[0-9][a-z0-9_]*"'),
    (r'"[a-z]{0,12}"', r'"(ab|cd)[a-z]*"'),
    (r'"[a-z.]*@[a-z]+"', r'"[a-z]*\.\.[a-z.]*@[a-z]+"'),
]


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
@pytest.mark.parametrize("plain, taken", _REGIONS)
def test_regions_of_keys_are_decided_in_c_as_the_python_store_decides(
        plain: str, taken: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``plain & ¬taken`` and ``plain & taken``, lexed side by side: every state within five bytes
    agrees with the Python store's (dead where a region has no text left), and the C store asks
    Python for no emptiness search."""
    lexers = []
    for compiled in (True, False):
        exprs = ExprSet(compiled=compiled)
        left, right = translate(exprs, plain), translate(exprs, taken)
        lexers.append(Lexer(exprs, [exprs.both(left, exprs.negate(right)), exprs.both(left, right)]))
    fast, slow = lexers
    fast_start, slow_start = fast.start([0, 1]), slow.start([0, 1])
    fast.exprs._empty.clear()
    monkeypatch.setattr(fast.exprs, "is_empty", lambda *args: pytest.fail("a Python search"))
    assert _compare_stores(fast, fast_start, slow, slow_start, depth=5, limit=200) >= 5


_LENGTHS = r"[a-z]+(\.[a-z]+)*@[a-z]+"  # a pattern beside a length bound: pattern & byte{0,40}


def _bounded(compiled: bool) -> tuple[Lexer, int]:
    exprs = ExprSet(compiled=compiled)
    expr = exprs.both(translate(exprs, _LENGTHS), exprs.repeat(translate(exprs, "[\\x00-\\xff]"), 0, 40))
    lexer = Lexer(exprs, [exprs.concat(expr, exprs.literal(b'"'))])
    return lexer, lexer.start([0])


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
def test_a_pattern_beside_a_length_bound_is_stepped_without_emptiness_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    """``pattern & byte{0,k}`` after each byte: the pattern's shortest rest, read by the bound's
    rest, shows the intersection non-empty (``witnessed`` in ``ir/_empty.c``), so no cell asks
    for a search until the bound is too short for any rest; the states agree with the Python
    store's, the bound's end included."""
    fast, fast_start = _bounded(True)
    slow, slow_start = _bounded(False)
    searched = []
    is_empty = fast.exprs.is_empty

    def counted(item: int, fuel: int | None = None) -> bool:
        searched.append(item)
        return is_empty(item, fuel)

    monkeypatch.setattr(fast.exprs, "is_empty", counted)
    assert _compare_stores(fast, fast_start, slow, slow_start, depth=4) >= 8
    assert not searched
    text = b"ab.cd@" + b"e" * 33  # 39 bytes: one more letter fits, then only the quote
    state = fast.feed(fast_start, text)
    assert fast.step(state, ord("e")) != DEAD
    assert fast.step(fast.step(state, ord("e")), ord("e")) == DEAD
    assert fast.dfa.matches[fast.step(fast.step(state, ord("e")), ord('"'))]


def _host_lexer(compiled: bool, mutation: int = 0, loose: bool = False) -> Lexer:
    """A host name's lexeme, guarded, with a length bound as ``format: hostname`` has; ``loose``:
    letters, digits, dots and hyphens in any order instead, an expression that does not tell
    ``x`` or ``n`` from other letters (the guard's splits do)."""
    from grammar_decode.frontends.json_schema.a_labels import A_LABELS
    from grammar_decode.frontends.json_schema.formats import HOSTNAME_WITH_A_LABELS
    exprs = ExprSet(compiled=compiled)
    if mutation:
        exprs._use_store(regex_module._exprs.Store(mutation=mutation))
    bound = exprs.repeat(translate(exprs, "[\\x00-\\xff]"), 0, 30)
    body = translate(exprs, "[a-z0-9.-]*" if loose else HOSTNAME_WITH_A_LABELS)
    host = exprs.concat(exprs.literal(b'"'), exprs.both(body, bound), exprs.literal(b'"'))
    return Lexer(exprs, [host], {0: A_LABELS})


def _start_lexer(mutation: int = 0) -> Lexer:
    """Lexemes whose start states cover every way ``make_start`` decides an origin: literal keys,
    a string, a string less the keys (non-empty by its structure), one that is empty though
    made of & and ¬ (only a search tells), and one that matches the empty text."""
    exprs = ExprSet(compiled=True)
    if mutation:
        exprs._use_store(regex_module._exprs.Store(mutation=mutation))
    keys = [exprs.literal(b'"' + name + b'"') for name in (b"name", b"size")]
    string = translate(exprs, r'"[a-z]*"')
    other = exprs.difference(string, exprs.alt(*keys))
    empty = exprs.difference(keys[0], exprs.alt(*keys))
    assert empty != regex_module.NOTHING  # left for a search to decide
    return Lexer(exprs, [*keys, string, other, empty, translate(exprs, r"[0-9]*")])


@pytest.mark.parametrize("mutation", [0, 10])
def test_start_states_made_in_c_equal_those_made_in_python(mutation: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``Store.make_start`` starts the lexer on every set of lexemes as ``LexemeDFA.start``
    does in Python (the same pairs, so the same futures), and answers them all itself (the
    empty lexeme's search included); a store that takes every expression as matching something
    (mutation 10) is caught."""
    from itertools import combinations

    fast, slow = _start_lexer(mutation), _start_lexer()
    in_python: list[frozenset[int]] = []
    unguarded = dfa_module.LexemeDFA._unguarded_start

    def counted(dfa: dfa_module.LexemeDFA, origins: frozenset[int]) -> int:
        if dfa is fast.dfa:
            in_python.append(origins)
        return unguarded(dfa, origins)

    monkeypatch.setattr(dfa_module.LexemeDFA, "_unguarded_start", counted)
    sets = [list(c) for size in (1, 2, 3, 6) for c in combinations(range(6), size)]
    mismatches = []
    for lexemes in sets:
        monkeypatch.setattr(dfa_module, "_STARTS_IN_C", True)
        a = fast.start(lexemes)
        monkeypatch.setattr(dfa_module, "_STARTS_IN_C", False)
        b = slow.start(lexemes)
        if (a == DEAD) != (b == DEAD) or (a != DEAD and (fast.pairs[a] != slow.pairs[b] or
                                                          fast.accepting[a] != slow.accepting[b] or
                                                          fast.dfa.closed[a] != slow.dfa.closed[b])):
            mismatches.append(lexemes)
        elif a != DEAD:
            _compare_stores(fast, a, slow, b, depth=2, limit=20)
    if mutation:
        assert mismatches
        return
    assert not mismatches, mismatches[:5]
    assert not in_python
    assert fast.start([4]) == DEAD and not fast.dfa._live_origins[fast.origin_of[4]]
    import gc

    # the Python path's keys are untracked as they are interned, as C's are
    assert not [key for key in slow.dfa._ids if gc.is_tracked(key)]


def _walked(lexer: Lexer) -> "tuple[object, object]":
    """A cell as a compiled walk makes it: ``make_cell`` in C, else ``dense_cell`` in Python,
    then read from the dense table; and a list of the cells C made for guarded states."""
    make_cell, core = lexer.cell_maker()
    made_in_c: list[tuple[int, int]] = []

    def step(state: int, byte: int) -> int:
        found = make_cell(core, state, byte)
        if found is None:
            lexer.dense_cell(state, byte)
        elif lexer.guarded(state):
            made_in_c.append((state, byte))
        return int(lexer.dense()[0][256 * state + byte]) - dfa_module.STORED

    return step, made_in_c


def _compare_hosts(fast: Lexer, slow: Lexer, texts: tuple[bytes, ...]) -> int:
    """From the states after each of ``texts``, three bytes deep over every byte, ``fast`` stepped
    as a compiled walk steps (``_walked``) agrees with ``slow`` (``_compare_stores``); how many
    cells of guarded states C made."""
    step, made_in_c = _walked(fast)
    for text in texts:
        _compare_stores(fast, fast.feed(fast.start([0]), text), slow, slow.feed(slow.start([0]), text),
                        depth=3, limit=60, fast_step=step)
    return len(made_in_c)


_HOST_TEXTS = (b'"', b'"imap', b'"imap.', b'"x', b'"xn-', b'"a.xn--', b'"mail.example.co',
               b'"a.b.c.d.e.f.g.h.i.j.k.l.m')


def test_guarded_states_made_in_c_are_keyed_off_the_collectors_lists() -> None:
    """A guarded state's key in ``_ids`` is (pairs, tags), a tuple C makes for it: untracked as
    the state is made, so ``_ids`` stays untracked (see
    ``test_states_are_made_off_the_collectors_lists``)."""
    import gc

    lexer = _host_lexer(compiled=True)
    step, made_in_c = _walked(lexer)
    gc.collect()
    assert not gc.is_tracked(lexer.dfa._ids)
    for text in _HOST_TEXTS:
        state = lexer.start([0])
        for byte in text:
            state = step(state, byte)
    assert made_in_c
    guarded_keys = [key for key in lexer.dfa._ids if type(key[0]) is tuple and type(key[0][0]) is tuple]
    assert guarded_keys and not [key for key in guarded_keys if gc.is_tracked(key)]
    assert not gc.is_tracked(lexer.dfa._ids)


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
@pytest.mark.parametrize("loose", [False, True])
def test_guarded_cells_made_in_c_equal_those_made_in_python(loose: bool) -> None:
    """A host name's states (a guarded pair, a length bound): cells made by ``make_cell`` from
    the guard's noted moves (``LexemeDFA._note_moves``) lead where the Python store's lexer goes,
    tag for tag, past labels, dots, ``xn--`` prefixes, the closing quote and the bound's end;
    most of the cells asked for are made in C."""
    made_in_c = _compare_hosts(_host_lexer(True, loose=loose), _host_lexer(False, loose=loose), _HOST_TEXTS)
    assert made_in_c > 1000


@pytest.mark.skipif(not regex_module.COMPILED, reason="the C store is not built or not selected")
def test_a_guard_class_left_wide_is_caught() -> None:
    """6: ``make_cell`` leaves a guarded state's class as wide as the expression's, where only
    the guard tells ``x`` from ``a`` (the loose expression): a label beginning ``x`` loses its
    A-label check, which the comparison sees."""
    with pytest.raises(AssertionError):
        _compare_hosts(_host_lexer(True, mutation=6, loose=True), _host_lexer(False, loose=True), _HOST_TEXTS)


def test_a_cell_makes_only_its_class(store: str) -> None:
    """One cell interns one state; the dense table gets that class's bytes (and, from class
    maps, DEAD for the classes no pair can start), the rest stays UNBUILT; the row is published
    once every class is made, equal to the cells."""
    lexer, state = _fed(_EMAIL, b"jo")
    dfa = lexer.dfa
    before = len(dfa)
    lexer.dense_cell(state, ord("x"))
    assert len(dfa) == before + 1  # the state after a letter, and no other
    table, _accepts = dfa.dense()
    cells = table[256 * state:256 * (state + 1)] - dfa_module.STORED
    assert cells[ord("x")] == cells[ord("a")] == dfa.cell(state, ord("a")) >= 0
    if store == "python":
        assert cells[ord("!")] == DEAD and cells[0xFF] == DEAD  # no pair can start with them
    else:
        assert cells[ord("!")] == dfa_module.UNBUILT  # made when asked for
    assert cells[ord("@")] == dfa_module.UNBUILT and dfa.rows[state] is None
    made = [dfa.cell(state, byte) for byte in range(256)]
    assert dfa.rows[state] == tuple(made) and state not in dfa._pending
    assert list(dfa.dense()[0][256 * state:256 * (state + 1)] - dfa_module.STORED) == made


def test_pending_rows_are_left_to_the_collector_untracked() -> None:
    import gc

    lexer, state = _fed(_EMAIL, b"joe_", compiled=False)  # pending rows are the Python store's path
    lexer.dfa.cell(state, ord("q"))
    for _level in range(4):  # a collection untracks one more level of a tuple of tuples
        gc.collect()
    pending = list(lexer.dfa._pending.values())
    assert pending and not any(gc.is_tracked(p) for p in pending)


def _keys_lexer() -> Lexer:
    """Three named keys (closing quote included) and a string that is none of them, as a JSON
    object's key lexemes are."""
    exprs = ExprSet()
    keys = [exprs.literal(b'"' + name + b'"') for name in (b"name", b"size", b"note")]
    other = exprs.difference(translate(exprs, r'"[a-z]*"'), exprs.alt(*keys))
    return Lexer(exprs, [*keys, other])


@pytest.mark.parametrize("left,right,twins", [
    (b'"name', b'"size', True),  # each: its own key's closing quote, the other key's string
    (b'"na', b'"si', False),  # the other key's string less "me\"" against less "ze\""
    (b'"n', b'"s', False),  # "name" and "note" both live after "n: three pairs against two
    (b'"name', b'"nam', False),
    (b'"', b'"', True),  # one state: its own twin
])
def test_twins_reach_renamed_states_by_the_same_bytes(left: bytes, right: bytes, twins: bool) -> None:
    lexer = _keys_lexer()
    dfa = lexer.dfa
    start = lexer.start([0, 1, 2, 3])
    a, b = lexer.feed(start, left), lexer.feed(start, right)
    assert (dfa.shape(a) == dfa.shape(b) is not None) is twins
    if not twins:
        with pytest.raises(ValueError):
            dfa.twin_names(a, b)
        return
    names = dfa.twin_names(a, b)
    for text in (b"", b'"', b"x", b"e", b'e"', b"xy", b'xy"', b"me", b'me"'):
        after_a, after_b = lexer.feed(a, text), lexer.feed(b, text)
        if after_a == DEAD:
            assert after_b == DEAD, text
            continue
        assert dfa.renamed(after_a, names) == after_b, text
        assert dfa.renamed(after_b, dfa.twin_names(b, a)) == after_a, text
        assert dfa.matches[after_a] == dfa.matches[after_b] and dfa.closed[after_a] == dfa.closed[after_b]


def test_a_state_with_two_pairs_of_one_expression_has_no_shape() -> None:
    exprs = ExprSet()
    word = translate(exprs, r"[a-z]+")
    lexer = Lexer(exprs, [word, word])
    state = lexer.feed(lexer.start([0, 1]), b"ab")
    assert lexer.dfa.shape(state) is None
    assert lexer.dfa.shape(lexer.feed(lexer.start([0]), b"ab")) is not None
