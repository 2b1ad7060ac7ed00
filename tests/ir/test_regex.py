"""The byte-regex IR: canonical forms, derivatives against Python's ``re``, symbolic counters,
emptiness and shortest strings with intersection and complement."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grammar_decode.ir.regex import ANYTHING, EPSILON, NOTHING, ExprSet, RegexTooComplex, byte_mask, byte_range
from grammar_decode.ir import utf8


@pytest.fixture(params=["compiled", "python"])
def exprs(request: pytest.FixtureRequest) -> ExprSet:
    """Both stores: the C one (``_exprs.c``) and the Python reference."""
    return ExprSet(compiled=request.param == "compiled")


def test_canonical_forms_give_equal_ids(exprs: ExprSet) -> None:
    a, b, c = (exprs.literal(x) for x in (b"a", b"b", b"c"))
    assert exprs.alt(a, b) == exprs.alt(b, a) == exprs.alt(a, exprs.alt(b, a)) == exprs.byteset(byte_mask(b"ab"))
    assert exprs.concat(a, exprs.concat(b, c)) == exprs.concat(exprs.concat(a, b), c)
    assert exprs.concat(a, EPSILON, b) == exprs.concat(a, b)
    assert exprs.concat(a, NOTHING) == NOTHING and exprs.alt(a, NOTHING) == a
    assert exprs.negate(exprs.negate(a)) == a
    assert exprs.both(a, ANYTHING) == a and exprs.both(a, NOTHING) == NOTHING
    assert exprs.repeat(a, 1, 1) == a and exprs.repeat(a, 0, 0) == EPSILON
    assert exprs.star(exprs.star(a)) == exprs.star(a) == exprs.star(exprs.plus(a))
    assert exprs.repeat(exprs.optional(a), 2, 5) == exprs.repeat(exprs.optional(a), 0, 5)


def test_bounded_repetition_stays_one_node(exprs: ExprSet) -> None:
    letters = exprs.byteset(byte_range(ord("a"), ord("z")))
    big = exprs.repeat(letters, 0, 100_000)
    before = len(exprs)
    state = exprs.derive_bytes(big, b"abc")
    assert len(exprs) - before < 20  # three derivatives, not 100,000 unrolled copies
    assert exprs.nullable[state]
    assert exprs.min_length(exprs.repeat(letters, 100_000, 100_000)) == 100_000


def test_counters_are_exact_at_their_bounds(exprs: ExprSet) -> None:
    digit = exprs.byteset(byte_range(ord("0"), ord("9")))
    two_to_four = exprs.repeat(digit, 2, 4)
    table = {b"": False, b"1": False, b"12": True, b"123": True, b"1234": True, b"12345": False}
    for text, expected in table.items():
        assert exprs.matches(two_to_four, text) is expected, text


def test_intersection_and_complement(exprs: ExprSet) -> None:
    word = exprs.plus(exprs.byteset(byte_range(ord("a"), ord("z"))))
    keywords = exprs.alt(exprs.literal(b"if"), exprs.literal(b"else"))
    identifier = exprs.difference(word, keywords)
    for text, expected in {b"if": False, b"else": False, b"iff": True, b"i": True, b"": False, b"x1": False}.items():
        assert exprs.matches(identifier, text) is expected, text
    assert not exprs.is_empty(identifier)
    assert exprs.is_empty(exprs.both(exprs.literal(b"a"), exprs.literal(b"b")))
    assert exprs.is_empty(exprs.difference(keywords, keywords))
    assert exprs.shortest(identifier) == b"a"
    assert exprs.min_length(exprs.difference(word, exprs.repeat(exprs.byteset(byte_mask(b"a")), 1, 3))) == 1


def test_emptiness_search_is_bounded(exprs: ExprSet) -> None:
    digits = exprs.repeat(exprs.byteset(byte_range(ord("0"), ord("9"))), 0, 50_000)
    tricky = exprs.both(digits, exprs.negate(exprs.repeat(exprs.byteset(byte_range(ord("0"), ord("9"))), 0, 49_999)),
                        exprs.literal(b"x"))
    with pytest.raises(RegexTooComplex):
        exprs.shortest(exprs.both(digits, exprs.negate(exprs.repeat(
            exprs.byteset(byte_range(ord("0"), ord("9"))), 0, 49_999))), fuel=1000)
    assert exprs.is_empty(tricky)


def test_shortest_is_canonical(exprs: ExprSet) -> None:
    """After the first byte of the shortest string, the derivative's shortest string is the
    rest of it (the closing budget relies on this)."""
    e = exprs.alt(exprs.literal(b"zz"), exprs.literal(b"ab"), exprs.concat(exprs.literal(b"b"), exprs.star(exprs.literal(b"q"))))
    text = exprs.shortest(e)
    assert text == b"b"
    e2 = exprs.alt(exprs.literal(b"zz"), exprs.literal(b"ab"))
    text = exprs.shortest(e2)
    assert text == b"ab" and exprs.shortest(exprs.derivative(e2, text[0])) == text[1:]


@pytest.mark.parametrize("lo,hi", [(0, 0x7F), (0x80, 0x7FF), (0x800, 0xFFFF), (0x10000, 0x10FFFF),
                                   (0x41, 0x10FFFF), (0xD000, 0xE000), (0x3B1, 0x3C9), (0xFFFD, 0x10000)])
def test_code_point_ranges_are_exact(exprs: ExprSet, lo: int, hi: int) -> None:
    e = utf8.code_points(exprs, [(lo, hi)])
    probes = {lo, hi, lo - 1, hi + 1, (lo + hi) // 2, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFF, 0x10000}
    for c in sorted(p for p in probes if 0 <= p <= 0x10FFFF and not 0xD800 <= p <= 0xDFFF):
        assert exprs.matches(e, chr(c).encode()) is (lo <= c <= hi), hex(c)
    # no surrogate, overlong or out-of-range encoding is ever matched
    for bad in (b"\xed\xa0\x80", b"\xc0\x80", b"\xe0\x80\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xff"):
        assert not exprs.matches(e, bad)


_ATOMS = ["a", "b", "ab", "[a-c]", "[^a]", ".", "\\d", "é", "(a|bc)", "x"]


@st.composite
def python_patterns(draw: st.DrawFn, depth: int = 3) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(_ATOMS))
    inner = draw(python_patterns(depth - 1))
    other = draw(python_patterns(depth - 1))
    op = draw(st.sampled_from(["cat", "alt", "star", "plus", "opt", "count"]))
    if op == "cat":
        return f"(?:{inner})(?:{other})"
    if op == "alt":
        return f"(?:{inner}|{other})"
    if op == "count":
        lo = draw(st.integers(0, 3))
        return f"(?:{inner}){{{lo},{lo + draw(st.integers(0, 2))}}}"
    return f"(?:{inner}){ {'star': '*', 'plus': '+', 'opt': '?'}[op] }"


@given(python_patterns(), st.lists(st.text(alphabet="abcxé1\n", max_size=6), min_size=1, max_size=8))
def test_fullmatch_agrees_with_re(pattern: str, texts: list[str]) -> None:
    from grammar_decode.frontends.regex import translate

    exprs = ExprSet()
    e = translate(exprs, pattern)
    compiled = re.compile(pattern)
    for text in texts:
        assert exprs.matches(e, text.encode()) is (compiled.fullmatch(text) is not None), (pattern, text)


# -- intersections with a counter, solved by counting ------------------------------------------

def _small_regex(exprs: ExprSet, draw_tree: object) -> int:
    """A boolean-free expression over the bytes a, b and the two-byte unit 'cd' from a tree."""
    kind, *children = draw_tree  # type: ignore[misc]
    if kind == "a":
        return exprs.literal(b"a")
    if kind == "b":
        return exprs.literal(b"b")
    if kind == "cd":
        return exprs.literal(b"cd")
    parts = [_small_regex(exprs, c) for c in children]
    if kind == "cat":
        return exprs.concat(*parts)
    if kind == "alt":
        return exprs.alt(*parts)
    return exprs.star(parts[0])


_TREES = st.recursive(st.sampled_from([("a",), ("b",), ("cd",)]),
                      lambda inner: st.one_of(st.tuples(st.just("cat"), inner, inner),
                                              st.tuples(st.just("alt"), inner, inner),
                                              st.tuples(st.just("star"), inner)), max_leaves=6)


@given(_TREES, st.integers(0, 6), st.one_of(st.none(), st.integers(0, 6)), st.booleans())
def test_counted_intersections_agree_with_the_derivative_search(tree: object, lo: int, extra: int | None,
                                                                 negated: bool) -> None:
    """The counted shortest length equals the breadth-first search over derivatives (the
    reference), with a plain or a negated other side, and after a partial unit."""
    exprs = ExprSet()
    other = _small_regex(exprs, tree)
    if negated:
        other = exprs.negate(other)
    unit = exprs.alt(exprs.literal(b"a"), exprs.literal(b"b"), exprs.literal(b"cd"))
    counter = exprs.repeat(unit, lo, None if extra is None else lo + extra)
    # a second counter over the same unit joins the first
    both_counters = exprs.both(other, counter, exprs.repeat(unit, 0, lo + 1))
    for item in (exprs.both(other, counter), exprs.both(other, exprs.concat(exprs.literal(b"d"), counter)), both_counters):
        reference = exprs._search_nullable(item, 20_000)
        expected = None if reference is None else len(reference)
        assert exprs.min_length(item) == expected
        # counting itself (min_length asks a short search first, which finds most of these)
        counted = exprs._counted_min(item, 20_000)
        assert counted is NotImplemented or counted == expected


def _composite_unit(exprs: ExprSet, lo: int, extra: int | None, tail: bool) -> int:
    """A unit the counting composes: ``(a|cd){lo,lo+extra}`` then, with ``tail``, ``b(a|b)?``."""
    pair = exprs.alt(exprs.literal(b"a"), exprs.literal(b"cd"))
    counted = exprs.repeat(pair, lo, None if extra is None else lo + extra)
    if not tail:
        return counted
    return exprs.concat(counted, exprs.literal(b"b"), exprs.alt(exprs.literal(b"a"), exprs.literal(b"b"), EPSILON))


@given(_TREES, st.integers(0, 4), st.one_of(st.none(), st.integers(0, 4)), st.booleans(), st.booleans())
def test_composed_unit_steps_equal_the_walk_over_pairs(tree: object, lo: int, extra: int | None, tail: bool,
                                                       negated: bool) -> None:
    """Steps by a concatenation or a counted repeat, composed from their parts, equal the
    breadth-first walk over pairs of derivatives (the reference), state for state."""
    exprs = ExprSet()
    other = _small_regex(exprs, tree)
    if negated:
        other = exprs.negate(other)
    unit = _composite_unit(exprs, lo, extra, tail)
    assert exprs._steps(other, unit, 20_000) == exprs._walk_steps(other, unit, 20_000)


@given(_TREES, st.integers(0, 3), st.integers(0, 5), st.integers(0, 4))
def test_a_counted_prefix_agrees_with_the_derivative_search(tree: object, prefix_lo: int, prefix_extra: int,
                                                            lo: int) -> None:
    """``other & P·B{lo,}`` where the prefix ``P`` is itself counted (an address part way through
    its local part): the counted length equals the derivative search."""
    exprs = ExprSet()
    other = _small_regex(exprs, tree)
    prefix = _composite_unit(exprs, prefix_lo, prefix_extra, True)
    unit = exprs.alt(exprs.literal(b"a"), exprs.literal(b"b"), exprs.literal(b"cd"))
    item = exprs.both(other, exprs.concat(prefix, exprs.repeat(unit, lo, None)))
    reference = exprs._search_nullable(item, 20_000)
    assert exprs.min_length(item) == (None if reference is None else len(reference))


def test_a_broken_composition_is_caught_by_the_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Composing a counted repeat one repetition short disagrees with the walk over pairs."""
    from grammar_decode.ir import counting

    exprs = ExprSet()
    unit = _composite_unit(exprs, 2, 2, False)
    other = exprs.star(exprs.alt(exprs.literal(b"a"), exprs.literal(b"b"), exprs.literal(b"cd")))
    assert exprs._steps(other, unit, 20_000) == exprs._walk_steps(other, unit, 20_000)
    exprs = ExprSet()
    unit = _composite_unit(exprs, 2, 2, False)
    other = exprs.star(exprs.alt(exprs.literal(b"a"), exprs.literal(b"b"), exprs.literal(b"cd")))
    composed = counting.CountedIntersections._compose
    calls = []

    def short(self, costs, part, fuel):  # type: ignore[no-untyped-def]
        calls.append(part)
        return costs if len(calls) == 1 else composed(self, costs, part, fuel)  # the first repetition skipped

    monkeypatch.setattr(counting.CountedIntersections, "_compose", short)
    assert exprs._steps(other, unit, 20_000) != exprs._walk_steps(other, unit, 20_000)


def test_huge_counts_beside_a_pattern_cost_their_digits(exprs: ExprSet) -> None:
    letter = exprs.byteset(byte_range(ord("a"), ord("z")))
    has_x = exprs.concat(exprs.star(letter), exprs.literal(b"x"), exprs.star(letter))
    for count in (10, 100_000, 10 ** 12):
        assert exprs.min_length(exprs.both(has_x, exprs.repeat(letter, count, None))) == count
        assert exprs.min_length(exprs.both(has_x, exprs.repeat(letter, 0, count))) == 1
    even = exprs.star(exprs.repeat(letter, 2, 2))
    assert exprs.is_empty(exprs.both(even, exprs.repeat(letter, 10 ** 9 + 1, 10 ** 9 + 1)))
    assert exprs.min_length(exprs.both(even, exprs.repeat(letter, 10 ** 9 + 1, 10 ** 9 + 2))) == 10 ** 9 + 2


def test_a_counted_intersection_with_too_many_states_is_refused_typed(exprs: ExprSet) -> None:
    import grammar_decode as gd
    from grammar_decode.frontends.regex import translate

    many = translate(exprs, "(a|b)*a(a|b){12}")  # 2**13 states at the unit boundaries
    unit = exprs.byteset(byte_mask(b"ab"))
    item = exprs.both(many, exprs.repeat(unit, 40, 60))
    with pytest.raises(gd.RegexTooComplex):
        exprs.min_length(item)  # the shortest length needs the whole sweep
    # emptiness needs one string: the best-first search finds "a" * 40 at once
    assert not exprs.is_empty(item) and exprs.matches(item, b"a" * 40)


def test_a_broken_counting_is_caught_by_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """An off-by-one in the matrix power (one edge fewer than the count) disagrees with the
    derivative search the property above uses as its reference."""
    from grammar_decode.ir import counting

    exact = counting._min_plus_power
    monkeypatch.setattr(counting, "_min_plus_power", lambda m, e: exact(m, max(e - 1, 0)))
    exprs = ExprSet()
    letter = exprs.byteset(byte_range(ord("a"), ord("z")))
    item = exprs.both(exprs.concat(exprs.star(letter), exprs.literal(b"x")), exprs.repeat(letter, 3, None))
    assert exprs._counted_min(item, 20_000) != len(exprs._search_nullable(item, 20_000))  # type: ignore[arg-type]


def _derivatives(exprs: ExprSet, item: int, depth: int) -> list[int]:
    """``item`` and its derivatives by every string over a, b, c, d of at most ``depth`` bytes."""
    found, frontier = [item], [item]
    for _ in range(depth):
        frontier = [exprs.derivative(node, byte) for node in frontier for byte in b"abcd"]
        found.extend(frontier)
    return found


@given(_TREES, _TREES, st.booleans())
def test_infinite_answers_memoised_along_a_walk_equal_a_fresh_walk(left: object, right: object,
                                                                  negated: bool) -> None:
    """``is_infinite`` memoises every derivative its walk reached; asked later about any of
    them, the answer equals a walk from that derivative in a store that knows nothing."""
    exprs = ExprSet()
    other = _small_regex(exprs, right)
    item = exprs.both(_small_regex(exprs, left), exprs.negate(other) if negated else other)
    exprs.is_infinite(item)
    for node in _derivatives(exprs, item, 3):
        fresh = ExprSet()
        copy = fresh.both(_small_regex(fresh, left), fresh.negate(_small_regex(fresh, right)) if negated
                          else _small_regex(fresh, right))
        text = next((w for w in _strings_to(exprs, item, node)), None)
        assert text is not None
        assert exprs.is_infinite(node) == fresh.is_infinite(fresh.derive_bytes(copy, text))


def _strings_to(exprs: ExprSet, item: int, node: int) -> list[bytes]:
    """The strings of at most three bytes over a, b, c, d whose derivative of ``item`` is ``node``."""
    found, frontier = [], [(item, b"")]
    for _ in range(4):
        found.extend(text for state, text in frontier if state == node)
        frontier = [(exprs.derivative(state, byte), text + bytes((byte,))) for state, text in frontier
                    for byte in b"abcd"]
    return found


@given(_TREES, _TREES, st.lists(st.binary(min_size=0, max_size=4).map(lambda b: bytes(x % 4 + 97 for x in b)),
                                min_size=1, max_size=4))
def test_an_infinite_language_less_finitely_many_strings_agrees_with_the_search(
        left: object, right: object, taken: list[bytes]) -> None:
    """``x & y & ¬(w1|w2...)`` (an item of a ``uniqueItems`` array less the values written):
    emptiness decided without a search where ``x & y`` is infinite equals the breadth-first
    search (the reference) at the item and at its derivatives."""
    exprs = ExprSet()
    positive = exprs.both(_small_regex(exprs, left), exprs.negate(_small_regex(exprs, right)))
    item = exprs.difference(positive, exprs.alt(*(exprs.literal(w) for w in taken)))
    for node in _derivatives(exprs, item, 2):
        reference = ExprSet()
        copy = reference.difference(
            reference.both(_small_regex(reference, left), reference.negate(_small_regex(reference, right))),
            reference.alt(*(reference.literal(w) for w in taken)))
        text = _strings_to(exprs, item, node)[0]
        expected = reference._search_nullable(reference.derive_bytes(copy, text), 20_000) is None
        assert exprs.is_empty(node) is expected


def test_values_taken_out_of_a_pattern_string_need_no_witness_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """A string with a pattern, less the values already written, is shown non-empty by its
    positive part being infinite (memoised over its derivatives), not by a search per state;
    a finite positive part is left to the other analyses, which find it empty."""
    exprs = ExprSet()
    ab = exprs.byteset(byte_mask(b"ab"))
    has_b = exprs.concat(exprs.star(ab), exprs.literal(b"b"), exprs.star(ab))
    string = exprs.both(exprs.plus(ab), has_b)
    taken = exprs.alt(exprs.literal(b"b"), exprs.literal(b"ab"), exprs.literal(b"bb"))
    item = exprs.difference(string, taken)
    searched: list[int] = []
    original = ExprSet._has_witness

    def counting(self: ExprSet, node: int, fuel: int) -> bool:
        searched.append(node)
        return original(self, node, fuel)

    monkeypatch.setattr(ExprSet, "_has_witness", counting)
    for text in (b"", b"a", b"ab", b"abab", b"bbb"):
        assert not exprs.is_empty(exprs.derive_bytes(item, text)), text
    assert searched == []
    finite = exprs.difference(exprs.both(exprs.repeat(ab, 1, 2), has_b), exprs.alt(taken, exprs.literal(b"ba")))
    assert exprs.is_empty(finite)


def test_a_broken_infinite_shortcut_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Answering "infinite" for a finite positive part makes an empty difference look
    non-empty: the agreement with the search fails."""

    def item_of(exprs: ExprSet) -> int:
        # a* & (b* | a) = {"", "a"}: finite, though no member's structure shows it (a member that
        # does, such as (a|b){1,2}, settles the question before any walk)
        a = exprs.literal(b"a")
        positive = exprs.both(exprs.star(a), exprs.alt(exprs.star(exprs.literal(b"b")), a))
        return exprs.difference(positive, exprs.alt(EPSILON, a))

    exprs = ExprSet(compiled=False)  # the Python search (the C store decides this one itself)
    assert exprs.is_empty(item_of(exprs)) and exprs._search_nullable(item_of(exprs), 100) is None
    monkeypatch.setattr(ExprSet, "is_infinite", lambda self, node, fuel=None: True)
    broken = ExprSet(compiled=False)
    assert not broken.is_empty(item_of(broken)) and broken._search_nullable(item_of(broken), 100) is None


@pytest.mark.parametrize("build, bounded", [
    (lambda e: e.literal(b"abc"), True),
    (lambda e: e.repeat(e.literal(b"a"), 0, 100), True),
    (lambda e: e.star(e.literal(b"a")), False),
    (lambda e: e.concat(e.literal(b"a"), e.star(e.literal(b"b"))), False),
    (lambda e: e.alt(e.literal(b"a"), e.star(e.literal(b"b"))), False),
    (lambda e: e.both(e.star(e.literal(b"a")), e.repeat(e.literal(b"a"), 1, 3)), True),
    (lambda e: e.both(e.star(e.literal(b"a")), e.star(e.literal(b"b"))), False),  # finite ({""}), not shown
    (lambda e: e.negate(e.literal(b"a")), False),
    (lambda e: e.concat(e.literal(b"x"), e.both(e.star(e.literal(b"a")), e.repeat(e.literal(b"a"), 0, 9))), True),
])
def test_is_bounded_only_where_the_language_is_finite(build, bounded: bool) -> None:  # type: ignore[no-untyped-def]
    exprs = ExprSet()
    item = build(exprs)
    assert exprs.is_bounded(item) is bounded
    if bounded:  # sound: the language is finite indeed
        assert not exprs.is_infinite(item)


def test_an_intersection_with_a_short_plain_witness_is_not_counted(exprs: ExprSet,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``rest & char{0,k}`` (a host name or a pattern with a length being read) is shown non-empty
    by the shortest string of a plain member, which the intersection matches, before any count;
    where no such string is matched (the count's lower bound rules out the shortest), counting
    still decides, both ways (the greedy probe, which would find ``reachable``'s string first,
    left out)."""
    monkeypatch.setattr(ExprSet, "_greedy_witness", lambda self, item: False)
    label = exprs.plus(exprs.byteset(byte_range(ord("a"), ord("z"))))
    host = exprs.concat(label, exprs.star(exprs.concat(exprs.literal(b"."), label)))
    anything = exprs.byteset(byte_range(0, 0x7F))
    item = exprs.both(host, exprs.repeat(anything, 0, 252))
    counted: list[int] = []
    original = ExprSet._counted_min
    monkeypatch.setattr(ExprSet, "_counted_min", lambda self, i, fuel: counted.append(i) or original(self, i, fuel))
    assert not exprs.is_empty(item) and counted == []
    too_short = exprs.both(exprs.literal(b"ab"), exprs.repeat(anything, 3, 5))
    reachable = exprs.both(label, exprs.repeat(anything, 3, 5))
    assert exprs.is_empty(too_short) and not exprs.is_empty(reachable)
    # the C store decides both itself (a bounded search over a few counts); the Python one counts
    assert len(counted) == (0 if exprs.store is not None else 2)


def _names(exprs: ExprSet, names: list[bytes]) -> int:
    return exprs.alt(*(exprs.literal(b'"' + name + b'"') for name in names))


@pytest.mark.parametrize("build, empty", [
    # an enum less the values written, the shortest ones first (an item of uniqueItems)
    (lambda e: e.difference(_names(e, [b"C", b"Go", b"Rust", b"Python"]), _names(e, [b"C", b"Go"])), False),
    (lambda e: e.difference(_names(e, [b"C", b"Go"]), _names(e, [b"C", b"Go", b"Rust"])), True),
    # a key none of the names and none of a pattern's (additionalProperties beside patternProperties)
    (lambda e: e.difference(
        e.concat(e.literal(b'"'), e.star(e.byteset(byte_range(ord("a"), ord("z")))), e.literal(b'"')),
        e.alt(_names(e, [b"", b"a", b"b", b"ab"]),
              e.concat(e.literal(b'"x'), e.star(e.byteset(byte_range(ord("a"), ord("z")))), e.literal(b'"')))),
     False),
    (lambda e: e.difference(e.repeat(e.literal(b"a"), 1, 3), e.alt(e.literal(b"a"), e.literal(b"aa"),
                                                                      e.literal(b"aaa"))), True),
])
def test_a_greedy_probe_shows_non_empty_intersections_and_proves_nothing_else(
        exprs: ExprSet, build, empty: bool, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Where the shortest strings are the excluded ones, one path down finds a string: no
    exhaustive search runs; where the intersection is empty the probe says nothing and the
    search decides."""
    item = build(exprs)
    searched: list[int] = []
    original = ExprSet._has_witness
    monkeypatch.setattr(ExprSet, "_has_witness",
                        lambda self, node, fuel: searched.append(node) or original(self, node, fuel))
    monkeypatch.setattr(ExprSet, "_counted_min", lambda self, node, fuel: NotImplemented)
    assert exprs._greedy_witness(item) is not empty
    assert exprs.is_empty(item) is empty
    if not empty:
        assert searched == []


def _boolean_item(exprs: ExprSet, left: object, middle: object, right: object, shape: int) -> int:
    """An intersection over three small trees with ``&`` and ``¬`` nested in one of four ways."""
    a, b, c = (_small_regex(exprs, t) for t in (left, middle, right))
    if shape == 0:
        return exprs.both(a, exprs.negate(b))
    if shape == 1:
        return exprs.both(a, exprs.negate(exprs.both(b, exprs.negate(c))))
    if shape == 2:
        return exprs.both(exprs.concat(a, exprs.negate(b)), exprs.star(c))
    return exprs.both(a, exprs.alt(b, exprs.both(c, exprs.negate(a))))


@given(_TREES, _TREES, _TREES, st.integers(0, 3))
def test_a_greedy_witness_marks_only_nodes_the_search_finds_a_string_in(left: object, middle: object,
                                                                         right: object, shape: int) -> None:
    """In either store, the probe answers True only where the breadth-first search finds a
    string, and every node it marks non-empty on the way (``_empty``, which later emptiness
    questions read) has a string too, with ``&`` and ``¬`` nested inside the members. The search
    (``_search_nullable``) returns only at a nullable node: a mark saying "not empty" never
    answers it."""
    for compiled in (True, False):
        exprs = ExprSet(compiled=compiled)
        item = _boolean_item(exprs, left, middle, right, shape)
        exprs._empty.clear()
        found = exprs._greedy_witness(item)
        marked = [node for node, empty in exprs._empty.items() if empty is False]
        assert found is bool(marked)
        for node in marked:
            assert exprs._search_nullable(node, 20_000) is not None


def test_a_broken_greedy_probe_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe that claims a string where there is none makes an empty intersection look
    non-empty, which the search (the reference) contradicts."""
    def item_of(exprs: ExprSet) -> int:
        return exprs.difference(_names(exprs, [b"C", b"Go"]), _names(exprs, [b"C", b"Go", b"Rust"]))

    exprs = ExprSet(compiled=False)  # the Python search (the C store decides this one itself)
    assert exprs.is_empty(item_of(exprs))
    monkeypatch.setattr(ExprSet, "_greedy_witness", lambda self, item: True)
    broken = ExprSet(compiled=False)
    assert not broken.is_empty(item_of(broken)) and broken._search_nullable(item_of(broken), 100) is None


def test_a_short_string_under_a_long_count_is_found_by_a_search_not_counted(
        exprs: ExprSet, monkeypatch: pytest.MonkeyPatch) -> None:
    """``maxLength: 2048`` beside ``pattern: "\\.png$"``: the shortest string (".png") is a few
    dozen states away, so counting (which walks every pattern state at each character
    boundary) is not asked; a shortest string past the search's states is counted."""
    counted: list[int] = []
    original = ExprSet._counted_min
    monkeypatch.setattr(ExprSet, "_counted_min", lambda self, i, fuel: counted.append(i) or original(self, i, fuel))
    char = exprs.byteset(byte_range(0x20, 0x7E))
    png = exprs.concat(exprs.star(char), exprs.literal(b".png"))
    assert exprs.min_length(exprs.both(png, exprs.repeat(char, 0, 2048))) == 4 and counted == []
    assert exprs.min_length(exprs.both(png, exprs.repeat(char, 5000, 6000))) == 5000 and len(counted) == 1
