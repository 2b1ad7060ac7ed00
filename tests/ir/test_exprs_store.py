"""The C expression store (``ir/_exprs.c``) against the Python one, node for node: the same
operations give the same ids, kinds, arguments, nullability, first bytes and flags, over random
expressions and over the lexemes of real schemas and every derivative they reach; deliberately
broken stores are caught by the same comparisons."""

from __future__ import annotations

import os
import threading
from collections import deque
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.ir import regex
from grammar_decode.ir.regex import ExprSet, byte_mask
from helpers import MEASUREMENTS, ORDER, PERSON, TAGS


def test_the_compiled_store_is_built_and_used() -> None:
    """``pip install -e .`` compiles ``_exprs.c`` (setup.py); a build that left it out fails here
    rather than have every comparison below pass vacuously."""
    assert regex._exprs is not None, "grammar_decode/ir/_exprs.c was not compiled"
    assert regex.COMPILED or os.environ.get("GRAMMAR_DECODE_WALK") == "python"
    assert ExprSet(compiled=True).store is not None and ExprSet(compiled=False).store is None


def _mismatch(python: ExprSet, compiled: ExprSet, nodes: "list[tuple[int, int]]") -> str | None:
    """The first difference between the two stores: node counts, then every node's kind, args and
    nullability, then the ids and per-node facts of ``nodes`` (pairs of results); None if none."""
    if len(python) != len(compiled):
        return f"{len(python)} nodes against {len(compiled)}"
    for node in range(len(python)):
        mine = (python.kind[node], python.args[node], python.nullable[node])
        theirs = (compiled.kind[node], compiled.args[node], compiled.nullable[node])
        if mine != theirs:
            return f"node {node}: {mine} against {theirs}"
    for left, right in nodes:
        if left != right:
            return f"ids {left} against {right}"
        facts = (python.first_bytes(left), python.has_boolean(left), python.has_unbounded_repeat(left))
        other = (compiled.first_bytes(right), compiled.has_boolean(right), compiled.has_unbounded_repeat(right))
        if facts != other:
            return f"node {left}: {facts} against {other}"
    return None


ALPHABET = b'ab"\\0\xc3'

#: One operation on the stores, applied to both: (name, operands drawn from the results so far, extras).
operations = st.lists(st.tuples(
    st.sampled_from(["byteset", "literal", "concat", "alt", "both", "negate", "repeat", "derivative"]),
    st.lists(st.integers(0, 10_000), min_size=0, max_size=4),
    st.lists(st.sampled_from(list(ALPHABET)), min_size=1, max_size=20),
    st.integers(0, 3), st.sampled_from([None, 0, 1, 3])), min_size=1, max_size=120)


def _replay(steps: list, python: ExprSet, compiled: ExprSet) -> list[tuple[int, int]]:
    """Apply ``steps`` to both stores; the pairs of results."""
    results = [(0, 0), (1, 1), (2, 2)]
    for name, picks, data, lo, extra in steps:
        operands = [results[p % len(results)] for p in picks] or [results[-1]]
        pair = []
        for side, store in enumerate((python, compiled)):
            items = [operand[side] for operand in operands]
            if name == "byteset":
                pair.append(store.byteset(byte_mask(data[:3])))
            elif name == "literal":
                pair.append(store.literal(bytes(data)))
            elif name in ("concat", "alt", "both"):
                pair.append(getattr(store, name)(*items))
            elif name == "negate":
                pair.append(store.negate(items[0]))
            elif name == "repeat":
                pair.append(store.repeat(items[0], lo, None if extra is None else lo + extra))
            else:
                pair.append(store.derive_bytes(items[0], bytes(data[:4])))
        results.append((pair[0], pair[1]))
    return results


@settings(max_examples=300, deadline=None)
@given(operations)
def test_random_operations_give_the_same_nodes(steps: list) -> None:
    python, compiled = ExprSet(compiled=False), ExprSet(compiled=True)
    results = _replay(steps, python, compiled)
    assert _mismatch(python, compiled, results) is None


@pytest.mark.parametrize("compiled", [False, True])
def test_a_member_and_its_complement_intersect_to_nothing(compiled: bool) -> None:
    """``x & ¬x`` is NOTHING by construction, nested intersections included, in both stores;
    ``x & ¬y`` for another ``y`` stays an intersection (not empty), and so do its derivatives."""
    exprs = ExprSet(compiled=compiled)
    word = exprs.concat(exprs.literal(b"k"), exprs.star(exprs.byteset(byte_mask(b"abc"))))
    other = exprs.literal(b"kab")
    assert exprs.difference(word, word) == regex.NOTHING
    assert exprs.both(exprs.both(word, other), exprs.negate(word)) == regex.NOTHING
    assert exprs.both(exprs.negate(word), word, exprs.negate(other)) == regex.NOTHING
    region = exprs.difference(word, other)
    assert exprs.kind[region] == regex.AND_KIND and not exprs.is_empty(region)
    assert exprs.derive_bytes(region, b"kab") == exprs.difference(exprs.derive_bytes(word, b"kab"), regex.EPSILON)


def _closure(exprs: ExprSet, roots: list[int], limit: int) -> list[int]:
    """Every derivative of ``roots`` by one byte per class, breadth first, up to ``limit`` nodes,
    in a fixed order (so both stores walk the same way)."""
    seen = dict.fromkeys(roots)
    queue = deque(roots)
    while queue and len(seen) < limit:
        node = queue.popleft()
        for block in exprs.byte_classes(node):
            nxt = exprs.derivative(node, (block & -block).bit_length() - 1)
            if nxt not in seen:
                seen[nxt] = None
                queue.append(nxt)
    return list(seen)


SCHEMAS = [PERSON, MEASUREMENTS, TAGS, ORDER,
           {"type": "string", "format": "email", "maxLength": 40},
           {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3,5}$", "minLength": 6},
           {"type": "integer", "minimum": -40, "maximum": 1250, "multipleOf": 5},
           {"type": "number", "exclusiveMinimum": 0.5, "maximum": 99.25},
           {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"},
            "required": ["a"]},
           {"type": "array", "items": {"enum": ["x", "y", 3]}, "uniqueItems": True}]


def _build(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[ExprSet, list[int]]:
    exprs = ExprSet(compiled=compiled)
    # the C store's own emptiness decisions derive nodes of their own, numbered in between; node
    # for node, both stores leave emptiness to the Python search here
    exprs._decide = None
    monkeypatch.setattr(regex, "_shared", exprs)
    roots = []
    for schema in SCHEMAS:
        grammar = gd.compile_json_schema(schema)
        assert grammar.ir.exprs is exprs
        roots.extend(grammar.ir.lexeme_exprs)
    return exprs, _closure(exprs, roots, 20_000)


def test_real_lexemes_and_their_derivatives_give_the_same_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The front ends build every schema's lexemes in each store, and every derivative they reach
    is walked: node for node, the two stores agree."""
    python, walked = _build(False, monkeypatch)
    compiled, walked_too = _build(True, monkeypatch)
    assert len(walked) > 1000 and walked == walked_too
    assert _mismatch(python, compiled, list(zip(walked, walked_too))) is None


@pytest.mark.parametrize("mutation", [1, 2])
def test_broken_stores_are_caught(mutation: int) -> None:
    """A store that keeps ε where a union is nullable without it (1), or derives a bounded repeat
    without counting it down (2), differs from the reference on these steps."""
    steps = [("byteset", [], list(b"a"), 0, None), ("repeat", [3], list(b"a"), 0, 3),
             ("alt", [4, 1], list(b"a"), 0, None), ("derivative", [4], list(b"aaa"), 0, None)]
    python = ExprSet(compiled=False)
    broken = ExprSet(compiled=False)
    broken._use_store(regex._exprs.Store(mutation=mutation))
    assert _mismatch(python, broken, _replay(steps, python, broken)) is not None
    reference, fine = ExprSet(compiled=False), ExprSet(compiled=True)
    assert _mismatch(reference, fine, _replay(steps, reference, fine)) is None


def _grow(store: ExprSet, rounds: int) -> list[int]:
    """Nodes made in ``rounds`` rounds of new literals, each round also asking again for nodes of
    every earlier round (some still in a table's old half while it grows) and for derivatives of
    them (the memo grows too): the ids, in order."""
    ids = []
    for round_ in range(rounds):
        for i in range(1_000):
            ids.append(store.literal(b"k%d-%d" % (round_, i)))
            ids.append(store.derivative(ids[-1], ord("k")))
        for earlier in range(0, len(ids), 97):
            ids.append(store.derivative(ids[earlier], ord("k")))
            ids.append(store.literal(b"k%d-%d" % (earlier // 2_000, earlier % 2_000 // 2)))
    return ids


def test_tables_growing_step_by_step_keep_every_node() -> None:
    """The node index and the derivative memo move their entries into a doubled table a few at a
    time; lookups during the move find nodes in either half: over 80,000 nodes, interleaved with
    lookups of old ones, the compiled store gives the reference's ids and no node twice, and a
    store whose lookups forget the old half (mutation 5) makes duplicates and is caught."""
    reference, compiled = ExprSet(compiled=False), ExprSet(compiled=True)
    expected = _grow(reference, 40)
    assert _grow(compiled, 40) == expected and len(compiled) == len(reference)
    assert compiled.store.memo_size() > 4_096  # the memo grew past its first table
    broken = ExprSet(compiled=False)
    broken._use_store(regex._exprs.Store(mutation=5))
    assert _grow(broken, 40) != expected


def test_step_pairs_and_fill_class() -> None:
    """``step_pairs`` leaves out the dead pairs, keeps a looping pair as the same object, and
    gives the byte class; ``fill_class`` writes that class into a row and counts the cells left,
    and refuses a table of another type or a row outside it."""
    import numpy as np

    exprs = ExprSet(compiled=True)
    if exprs.store is None:
        pytest.skip("the C store is not built or not selected")
    letters = exprs.star(exprs.byteset(byte_mask(b"abc")))
    digit = exprs.byteset(byte_mask(b"0123456789"))
    loop, dead = (0, letters), (1, digit)
    live, klass, unsure = exprs.store.step_pairs((loop, dead), ord("b"))
    assert live == (loop,) and live[0] is loop and klass == byte_mask(b"abc") and unsure == ()
    # after "a" only the intersection of a[a-z]*b and a[a-z]*c is left of the first pair: empty,
    # but not NOTHING; the store's own search over its derivatives decides it (left out, and
    # written into the set's memo as empty); the loop stays
    lower = exprs.star(exprs.byteset(byte_mask(bytes(range(97, 123)))))
    a, b, c = (exprs.byteset(byte_mask(x)) for x in (b"a", b"b", b"c"))
    never = exprs.both(exprs.concat(a, lower, b), exprs.concat(a, lower, c))
    live, _klass, unsure = exprs.store.step_pairs(((0, never), loop), ord("a"))
    assert live == (loop,) and unsure == ()
    assert exprs._empty.get(exprs.derivative(never, ord("a"))) is True
    # one whose search would pass the store's bound (a count of 6,000) is listed as unsure (its
    # position in live), for the Python search (counting) to decide
    counted = exprs.both(exprs.concat(a, exprs.repeat(a, 0, 6000), b), exprs.concat(a, exprs.star(a), c))
    live, _klass, unsure = exprs.store.step_pairs(((0, counted), loop), ord("a"))
    assert [origin for origin, _d in live] == [0, 0] and unsure == (0,) and exprs.is_empty(live[0][1])
    # and so is one whose words are all longer than the search would go (a minLength of 1,000
    # beside a pattern), with no derivative made for it
    long = exprs.both(exprs.concat(a, lower), exprs.concat(a, exprs.repeat(exprs.byteset((1 << 256) - 1), 1000, None)))
    before = len(exprs)
    live, _klass, unsure = exprs.store.step_pairs(((0, long),), ord("a"))
    assert unsure == (0,) and len(exprs) - before <= 2 and not exprs.is_empty(live[0][1])
    table = np.zeros(512, dtype=np.int32)
    assert regex.fill_class(table, 256, klass, 7) == 253
    assert table[256 + ord("a")] == 7 and table[ord("a")] == 0 and int((table != 0).sum()) == 3
    with pytest.raises(TypeError):
        regex.fill_class(np.zeros(512, dtype=np.int64), 0, klass, 7)
    with pytest.raises(IndexError):
        regex.fill_class(table, 300, klass, 7)


@pytest.mark.parametrize("make", [lambda e: e.byteset(-1), lambda e: e.byteset(1 << 256),
                                  lambda e: e.repeat(3, 2, 1), lambda e: e.repeat(3, -1, None)])
def test_bad_arguments_raise_the_same_errors(make: Callable[[ExprSet], int]) -> None:
    for compiled in (False, True):
        with pytest.raises(ValueError):
            make(ExprSet(compiled=compiled))


def test_bounds_past_the_store_are_clamped_where_no_text_tells(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds past 2**62 are clamped to it in the C store: the same node as the clamped bound, and
    a schema with such lengths compiles and accepts alike in both stores."""
    exprs = ExprSet(compiled=True)
    a = exprs.byteset(byte_mask(b"a"))
    assert exprs.repeat(a, 0, 1 << 70) == exprs.repeat(a, 0, 1 << 62) != exprs.star(a)
    assert exprs.repeat(a, 1 << 70, None) == exprs.repeat(a, 1 << 62, None)
    assert exprs.repeat(a, 0, 1 << 40) > 2  # large bounds stay symbolic
    for schema in ({"type": "string", "maxLength": 10 ** 30}, {"type": "string", "minLength": 10 ** 19}):
        results = []
        for compiled in (True, False):
            monkeypatch.setattr(regex, "_shared", ExprSet(compiled=compiled))
            grammar = gd.compile_json_schema(schema)
            results.append([grammar.accepts(text) for text in ('""', '"aa"', '"' + "b" * 300 + '"')])
        assert results[0] == results[1]


def test_the_compiled_store_is_shared_safely_between_threads() -> None:
    """Threads deriving and building in one store at once get what one thread alone gets."""

    def work(exprs: ExprSet, out: list) -> None:
        letters = exprs.byteset(byte_mask(b"abc"))
        item = exprs.concat(exprs.repeat(letters, 2, 40), exprs.literal(b'"'), exprs.star(letters))
        out.append([exprs.derive_bytes(item, bytes(b"abc"[(i * 7) % 3] for i in range(n))) for n in range(60)])

    shared = ExprSet(compiled=True)
    outs: list = []
    threads = [threading.Thread(target=work, args=(shared, outs)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    alone: list = []
    single = ExprSet(compiled=True)
    work(single, alone)
    expected = [single.describe(n) for n in alone[0]]
    assert len(outs) == 4 and all([shared.describe(n) for n in out] == expected for out in outs)


def test_compiled_byte_classes_are_coarser_and_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """The C store's classes (the leaves at first positions) partition the bytes in order of
    least byte; every byte of a class has its class's derivative; and each class is a union of the
    Python store's classes (every leaf under the node), never a split of one."""
    compiled, walked = _build(True, monkeypatch)
    python = ExprSet(compiled=False)
    coarser = 0
    for node in walked[::37]:
        classes = compiled.byte_classes(node)
        assert sum(classes) == (1 << 256) - 1 and all(a & b == 0 for a, b in zip(classes, classes[1:]))
        assert list(classes) == sorted(classes, key=lambda block: block & -block)
        for block in classes:
            first = compiled.derivative(node, (block & -block).bit_length() - 1)
            assert all(compiled.derivative(node, b) == first for b in range(256) if block >> b & 1)
        finer = python.partition_of_sets(compiled.split_sets(node))
        assert all(any(block & big == block for big in classes) for block in finer)
        coarser += len(finer) > len(classes)
    assert coarser > 0


def _intersections(exprs: ExprSet) -> dict[str, int]:
    """Intersections with and without words, built in ``exprs``."""
    lower = exprs.byteset(byte_mask(bytes(range(97, 123))))
    digits = exprs.byteset(byte_mask(b"0123456789"))
    a, b, c = (exprs.byteset(byte_mask(x)) for x in (b"a", b"b", b"c"))
    abc = exprs.byteset(byte_mask(b"abc"))
    return {
        "letters and a short count": exprs.both(exprs.repeat(lower, 1, None), exprs.repeat(abc, 2, 5)),
        "letters less two words": exprs.both(exprs.repeat(lower, 3, None),
                                             exprs.negate(exprs.alt(exprs.concat(a, b, c), exprs.concat(a, b, a)))),
        "a label that is not all digits": exprs.both(exprs.repeat(exprs.alt(lower, digits), 1, 63),
                                                     exprs.negate(exprs.repeat(digits, 1, None))),
        "letters and digits": exprs.both(exprs.repeat(lower, 1, None), exprs.repeat(digits, 1, None)),
        "two endings": exprs.both(exprs.concat(a, exprs.star(lower), b), exprs.concat(a, exprs.star(lower), c)),
    }


def test_witnessed_and_decide_agree_with_the_python_search() -> None:
    """``Store.witnessed`` (a word read off the structure) says True only of intersections the
    Python search finds non-empty, and ``Store.decide`` (word, probe, bounded search) answers 1
    (a word) or 2 (empty) only as that search does; both decide every case here."""
    python = ExprSet(compiled=True)
    python._decide = None  # the Python search alone
    expected = {name: python.is_empty(item) for name, item in _intersections(python).items()}
    assert sorted(expected.values()) == [False, False, False, True, True]
    exprs = ExprSet(compiled=True)
    assert exprs.store is not None
    for name, item in _intersections(exprs).items():
        shown = exprs.store.witnessed(item)
        decided = exprs.store.decide(item)
        assert shown == (not expected[name]), name  # every non-empty one here has a word to read
        assert decided == (2 if expected[name] else 1), name


def test_a_word_left_unread_by_the_other_members_is_caught() -> None:
    """Mutation 7 (the word of one member not read by the others) shows an empty intersection
    non-empty."""
    exprs = ExprSet(compiled=True)
    exprs._use_store(regex._exprs.Store(mutation=7))
    items = _intersections(exprs)
    assert exprs.store.witnessed(items["two endings"]) or exprs.store.witnessed(items["letters and digits"])


def test_untracked_takes_tuples_of_atoms_off_the_collectors_lists() -> None:
    """``untracked`` untracks a tuple of atoms, and one of such tuples, at once; a tuple holding
    anything the collector must see (a list: a cycle could pass through it) stays tracked."""
    import gc

    from grammar_decode.ir.regex import untracked

    inner = tuple([1, 2 ** 70, b"x", None])
    outer = tuple([inner, (3, "four"), ()])
    assert gc.is_tracked(inner) and gc.is_tracked(outer)
    assert untracked(outer) is outer
    assert not gc.is_tracked(outer) and not gc.is_tracked(inner)
    holder: list[object] = []
    keeps = tuple([(1, 2), holder])
    assert untracked(keeps) is keeps and gc.is_tracked(keeps)
    holder.append(keeps)  # the cycle the collector must still see
    assert untracked(5) == 5 and untracked(holder) is holder and gc.is_tracked(holder)
