"""Python ``re`` syntax → byte-level regular expression, with ``re.fullmatch`` semantics.

The pattern is parsed by Python's own parser (``re._parser``, ``sre_parse`` before 3.11), so the
syntax accepted is exactly Python's, and translated node by node into an ``ExprSet`` expression
over the UTF-8 bytes of the matched text. Character classes (``\\d``, ``\\w``, ``\\s`` in their
Unicode or ``re.ASCII`` meaning) are read off the ``re`` module itself, once per class, so they
agree with it by construction.

Case-insensitive matching (``re.IGNORECASE``, ``(?i)``) is read off ``re`` the same way, class by
class, so Unicode case folding (``k`` matching the Kelvin sign) agrees with it too.

Refused with ``UnsupportedRegexError``, because no finite automaton expresses them exactly or
because their meaning depends on the matcher's search order: lookahead and lookbehind,
backreferences and conditionals, word boundaries, possessive repeats and atomic groups, and
local case-insensitive groups ``(?i:...)``. ``^``/``\\A`` are accepted where they can only stand at the start of the
text and ``$``/``\\Z`` where they can only stand at its end (there, under ``fullmatch``, they match
the empty string).
"""

from __future__ import annotations

import re
import sys
import threading
from array import array
from typing import Any, Callable, Literal

from ..errors import GrammarAdmitsNothing, GrammarError, UnsupportedRegexError
from ..ir import utf8
from ..ir.grammar import Grammar
from ..ir.regex import EPSILON, ExprSet

if sys.version_info >= (3, 11):
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
else:  # pragma: no cover - Python 3.10
    import sre_constants
    import sre_parse

_C = sre_constants
_MAXREPEAT = _C.MAXREPEAT

_CATEGORY_PATTERNS = {
    _C.CATEGORY_DIGIT: r"\d", _C.CATEGORY_NOT_DIGIT: r"\D",
    _C.CATEGORY_WORD: r"\w", _C.CATEGORY_NOT_WORD: r"\W",
    _C.CATEGORY_SPACE: r"\s", _C.CATEGORY_NOT_SPACE: r"\S",
}
_class_cache: dict[tuple[str, int], utf8.Ranges] = {}
_class_lock = threading.Lock()
_every_char: list[str] = []


def _all_characters() -> str:
    """Every code point but the surrogates, in order, as one string: character ``i`` is code point
    ``i`` below U+D800 and ``i + 0x800`` from there (``_code_point``). Decoded from UTF-32 in one
    call (a ``chr`` per code point costs ~0.15 s)."""
    points = array("I", range(0xD800))
    points.extend(range(0xE000, utf8.MAX_CODE_POINT + 1))
    if sys.byteorder != "little":  # pragma: no cover - big-endian machines
        points.byteswap()
    return points.tobytes().decode("utf-32-le")


def _code_point(index: int) -> int:
    """The code point at ``index`` of ``_all_characters()``."""
    return index if index < 0xD800 else index + 0x800


def class_ranges(pattern: str, flags: int) -> utf8.Ranges:
    """Code point ranges of the one-character class ``pattern`` exactly as ``re`` matches it
    under ``flags``: read off ``re`` itself by running it over every code point (~0.02 s per
    distinct class, cached), each run of matches a range by its ends (split at the surrogates,
    which the text leaves out)."""
    key = (pattern, flags)
    with _class_lock:
        found = _class_cache.get(key)
        if found is None:
            if not _every_char:
                _every_char.append(_all_characters())
            ranges: utf8.Ranges = []
            for match in re.finditer(f"(?:{pattern})+", _every_char[0], flags):
                first, last = _code_point(match.start()), _code_point(match.end() - 1)
                if first < 0xD800 <= last:  # the run steps over the surrogates
                    ranges.extend(((first, 0xD7FF), (0xE000, last)))
                else:
                    ranges.append((first, last))
            found = _class_cache[key] = utf8.normalize(ranges)
        return found


def category_ranges(category: Any, ascii_only: bool) -> utf8.Ranges:
    """Code point ranges of ``\\d``/``\\w``/``\\s`` (or their negations) as ``re`` defines them."""
    return class_ranges(_CATEGORY_PATTERNS[category], re.ASCII if ascii_only else 0)


#: ECMA-262 LineTerminator: what ``.`` never matches there.
_LINE_TERMINATORS = [(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]
#: ECMA-262 WhiteSpace and LineTerminator: its ``\\s``.
_ECMA_SPACE = utf8.normalize([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                              (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
                              (0xFEFF, 0xFEFF)])
_ECMA_DIGIT = [(0x30, 0x39)]
_ECMA_WORD = utf8.normalize([(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])


def ecmascript_category(category: Any) -> utf8.Ranges:
    """ECMA-262's (non-Unicode-mode) meaning of ``\\d \\D \\w \\W \\s \\S``."""
    positive = {_C.CATEGORY_DIGIT: _ECMA_DIGIT, _C.CATEGORY_NOT_DIGIT: _ECMA_DIGIT,
                _C.CATEGORY_WORD: _ECMA_WORD, _C.CATEGORY_NOT_WORD: _ECMA_WORD,
                _C.CATEGORY_SPACE: _ECMA_SPACE, _C.CATEGORY_NOT_SPACE: _ECMA_SPACE}[category]
    negated = category in (_C.CATEGORY_NOT_DIGIT, _C.CATEGORY_NOT_WORD, _C.CATEGORY_NOT_SPACE)
    return utf8.complement(positive) if negated else list(positive)


def _intersection(left: utf8.Ranges, right: utf8.Ranges) -> utf8.Ranges:
    return utf8.complement(utf8.complement(left) + utf8.complement(right))


def _union(left: utf8.Ranges, right: utf8.Ranges) -> utf8.Ranges:
    return utf8.normalize(list(left) + list(right))


def _class_pattern(ranges: utf8.Ranges, negate: bool, categories: tuple[str, ...] = ()) -> str:
    body = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges) + "".join(categories)
    return f"[{'^' if negate else ''}{body}]" if body else ("[^\\s\\S]" if not negate else "[\\s\\S]")


#: Turns a set of code points into the expression for one such character, as bytes.
CharEncoder = Callable[[ExprSet, utf8.Ranges], int]


#: How a pattern is read. ``"python"``: as ``re`` reads it. The two JSON Schema readings keep
#: Python's syntax and are built construct by construct from Python's and ECMA-262's meanings:
#: ``"both"`` takes at each construct what both dialects match (so a text it matches matches
#: under each dialect: the sound reading of a pattern that must match), ``"either"`` what either
#: matches (a text either dialect matches is in it: the sound reading of a pattern that must
#: *not* match, whose complement is then what neither dialect matches).
Dialect = Literal["python", "both", "either"]
DIALECTS = ("python", "both", "either")


#: Most branches of an alternation with anchors inside that a search is split into.
_ANCHORED_BRANCHES = 64


def _anchored(branches: Any) -> bool:
    """Whether an alternation's branches begin or end with an anchor."""
    return any(items and (items[0][0] is _C.AT or items[-1][0] is _C.AT) for items in (list(b) for b in branches))


class _Translator:
    def __init__(self, exprs: ExprSet, pattern: str, flags: int, encode: CharEncoder, dialect: Dialect) -> None:
        self.dialect = dialect
        self.exprs = exprs
        self.pattern = pattern
        self.ascii_only = bool(flags & re.ASCII)
        self.ignore_case = bool(flags & re.IGNORECASE)
        self.encode = encode

    def chars(self, ranges: utf8.Ranges, negate: bool = False, categories: tuple[str, ...] = ()) -> int:
        """One character out of ``ranges`` or the class escapes ``categories`` (or outside them all).
        Under case-insensitive matching the class is read off ``re`` with its categories kept as
        escapes: ``re`` folds literals and ranges but tests ``\\w``-style categories unfolded, so
        spelling a category as the ranges it covers would fold it (``\\u0345`` would match ``\\w``)."""
        if self.ignore_case:
            flags = re.IGNORECASE | (re.ASCII if self.ascii_only else 0)
            return self.encode(self.exprs, class_ranges(_class_pattern(ranges, negate, categories), flags))
        if categories:
            ranges = _union(ranges, [r for c in categories for r in class_ranges(c, re.ASCII if self.ascii_only else 0)])
        return self.encode(self.exprs, utf8.complement(ranges) if negate else utf8.normalize(ranges))

    def search(self, items: list, dotall: bool) -> int:
        """``re.search`` semantics: text may precede the match unless it is anchored with ``^``
        or ``\\A``, and follow it unless it ends with ``\\Z``, or with ``$`` (then one final
        newline may follow, as Python's ``$`` allows)."""
        if len(items) == 1 and items[0][0] is _C.BRANCH:
            return self.exprs.alt(*(self.search(list(branch), dotall) for branch in items[0][1][1]))
        split = next((i for i, (op, av) in enumerate(items) if op is _C.BRANCH and _anchored(av[1])), None)
        if split is not None and len(items[split][1][1]) <= _ANCHORED_BRANCHES:
            # anchors inside an alternation (``^a$|^b$``, whose common ``^`` re factors out): one
            # search per branch, with what surrounds the alternation
            return self.exprs.alt(*(self.search(items[:split] + list(branch) + items[split + 1:], dotall)
                                    for branch in items[split][1][1]))
        anything = self.exprs.star(self.encode(self.exprs, [(0, utf8.MAX_CODE_POINT)]))
        starts = items[:1] in ([(_C.AT, _C.AT_BEGINNING)], [(_C.AT, _C.AT_BEGINNING_STRING)])
        if starts and len(items) > 1 and items[1][0] in (_C.ASSERT, _C.ASSERT_NOT) and items[1][1][0] == 1:
            return self.anchored_lookahead(items, dotall)
        ends = items[-1:] in ([(_C.AT, _C.AT_END)], [(_C.AT, _C.AT_END_STRING)])
        before = EPSILON if starts else anything
        if not ends:
            after = anything
        elif items[-1] == (_C.AT, _C.AT_END) and self.dialect != "both":
            # Python's $ also matches before one final newline; ECMA-262's only at the end
            after = self.exprs.optional(self.encode(self.exprs, [(10, 10)]))
        else:
            after = EPSILON
        # anchors are only understood where they were recognised above; elsewhere they are refused
        return self.exprs.concat(before, self.sequence(items, dotall, starts, ends), after)

    def anchored_lookahead(self, items: list, dotall: bool) -> int:
        """``^(?!X)Y`` as the texts ``^Y`` finds that do not begin with a match of ``X``, and
        ``^(?=X)Y`` as those that do (several lookaheads in a row: each applies). Where the
        reading is ``"both"``, the ``X`` subtracted is read as ``"either"`` (no dialect's ``X``
        begins the text, so every dialect's lookahead succeeds) and the other way round; an
        ``X`` that must begin the text is read in the same dialect."""
        exprs = self.exprs
        position, lookaheads = 1, []
        while position < len(items) and items[position][0] in (_C.ASSERT, _C.ASSERT_NOT) \
                and items[position][1][0] == 1:
            lookaheads.append(items[position])
            position += 1
        result = self.search([items[0]] + items[position:], dotall)
        for op, (_direction, body) in lookaheads:
            negative = op is _C.ASSERT_NOT
            dialect: Dialect = {"both": "either", "either": "both"}.get(self.dialect, "python") if negative \
                else self.dialect
            reader = _Translator(exprs, self.pattern, 0, self.encode, dialect)
            reader.ascii_only, reader.ignore_case = self.ascii_only, self.ignore_case
            begins = reader.search([items[0]] + list(body), dotall)  # texts X begins
            result = exprs.difference(result, begins) if negative else exprs.both(result, begins)
        return result

    def refuse(self, construct: str, detail: str = "") -> UnsupportedRegexError:
        return UnsupportedRegexError(construct, self.pattern, detail)

    def sequence(self, items: list, dotall: bool, at_start: bool, at_end: bool) -> int:
        parts = [self.item(op, av, dotall, at_start and i == 0, at_end and i == len(items) - 1)
                 for i, (op, av) in enumerate(items)]
        return self.exprs.concat(*parts)

    def item(self, op: Any, av: Any, dotall: bool, at_start: bool, at_end: bool) -> int:
        exprs = self.exprs
        if op is _C.LITERAL:
            return self.chars([(av, av)])
        if op is _C.NOT_LITERAL:
            return self.chars([(av, av)], negate=True)
        if op is _C.ANY:
            if dotall:
                return self.encode(exprs, [(0, utf8.MAX_CODE_POINT)])
            # Python's . stops at \n only, ECMA-262's at every line terminator: "both" keeps out
            # all of them, "either" (the union) only \n
            excluded = _LINE_TERMINATORS if self.dialect == "both" else [(10, 10)]
            return self.encode(exprs, utf8.complement(excluded))
        if op is _C.IN:
            ranges, negate, categories = self.char_class(av)
            return self.chars(ranges, negate, categories)
        if op is _C.BRANCH:
            return exprs.alt(*(self.sequence(list(branch), dotall, at_start, at_end) for branch in av[1]))
        if op is _C.SUBPATTERN:
            _group, add_flags, del_flags, body = av
            if add_flags & re.IGNORECASE or del_flags & re.IGNORECASE:
                raise self.refuse("a local case-insensitive flag", "(?i:...) or (?-i:...)")
            if add_flags & re.ASCII:
                raise self.refuse("a local ASCII flag", "(?a:...)")
            if add_flags & re.DOTALL:
                dotall = True
            if del_flags & re.DOTALL:
                dotall = False
            return self.sequence(list(body), dotall, at_start, at_end)
        if op in (_C.MAX_REPEAT, _C.MIN_REPEAT):
            lo, hi, body = av
            inner = self.sequence(list(body), dotall, False, False)
            return exprs.repeat(inner, lo, None if hi is _MAXREPEAT or hi == _MAXREPEAT else hi)
        if op is _C.AT:
            if av in (_C.AT_BEGINNING, _C.AT_BEGINNING_STRING, _C.AT_BEGINNING_LINE) and at_start:
                return EPSILON
            if av in (_C.AT_END, _C.AT_END_STRING, _C.AT_END_LINE) and at_end:
                return EPSILON
            if av in (_C.AT_BOUNDARY, _C.AT_NON_BOUNDARY):
                raise self.refuse("a word boundary", r"\b or \B")
            raise self.refuse("an anchor that is not at the start or end of the text", str(av))
        if op in (_C.ASSERT, _C.ASSERT_NOT):
            direction = "lookahead" if av[0] == 1 else "lookbehind"
            raise self.refuse(f"a {'negative ' if op is _C.ASSERT_NOT else ''}{direction}")
        if op in (_C.GROUPREF, _C.GROUPREF_EXISTS):
            raise self.refuse("a backreference" if op is _C.GROUPREF else "a conditional group")
        if op is getattr(_C, "POSSESSIVE_REPEAT", None):
            raise self.refuse("a possessive repeat")
        if op is getattr(_C, "ATOMIC_GROUP", None):
            raise self.refuse("an atomic group")
        raise self.refuse(f"the construct {op}")

    def category(self, category: Any, negated_class: bool) -> utf8.Ranges:
        """``\\d``-style classes in the JSON Schema readings, as code point ranges. ``"both"``: the
        intersection of ECMA-262's set (ASCII ``\\d``/``\\w``, its own ``\\s``) and Python's, or,
        inside a negated class, their union (so the class's complement is the intersection);
        ``"either"``: the other way round."""
        python = category_ranges(category, self.ascii_only)
        ecma = ecmascript_category(category)
        if (self.dialect == "both") != negated_class:
            return _intersection(python, ecma)
        return _union(python, ecma)

    def char_class(self, items: list) -> tuple[utf8.Ranges, bool, tuple[str, ...]]:
        """(ranges, negated, category escapes) of a class. In the Python reading the categories
        stay escapes (``chars`` reads them off ``re``); in the JSON Schema readings they become
        ranges: the class's categories under each dialect, united per dialect, then combined as
        ``category`` combines one (so ``[\\s\\S]`` is every character under both readings,
        though each of ``\\s`` and ``\\S`` alone loses the characters the dialects disagree on:
        the class's literals and ranges read alike in both, so the class matches a character in
        both dialects exactly when its ranges or both dialects' categories hold it)."""
        negate = False
        ranges: utf8.Ranges = []
        categories: list[str] = []
        python: utf8.Ranges = []
        ecma: utf8.Ranges = []
        for op, av in items:
            if op is _C.NEGATE:
                negate = True
            elif op is _C.LITERAL:
                ranges.append((av, av))
            elif op is _C.RANGE:
                ranges.append(av)
            elif op is _C.CATEGORY:
                if av not in _CATEGORY_PATTERNS:
                    raise self.refuse(f"the class category {av}")
                if self.dialect != "python":
                    python.extend(category_ranges(av, self.ascii_only))
                    ecma.extend(ecmascript_category(av))
                elif _CATEGORY_PATTERNS[av] not in categories:
                    categories.append(_CATEGORY_PATTERNS[av])
            else:
                raise self.refuse(f"the class item {op}")
        if python or ecma:
            python, ecma = utf8.normalize(python), utf8.normalize(ecma)
            both = (self.dialect == "both") != negate
            ranges.extend(_intersection(python, ecma) if both else _union(python, ecma))
        return utf8.normalize(ranges), negate, tuple(categories)


#: Escapes Python reads one way and ECMA-262 (non-Unicode mode, Annex B) another: ``\\U0001F600``
#: and ``\\N{...}`` are characters in Python, the letters U and N there; ``\\a`` is BEL in Python,
#: ``a`` there; ``\\A`` and ``\\Z`` are anchors in Python, letters there.
_PYTHON_ONLY_ESCAPES = frozenset("UNaAZ")


def _python_only_syntax(pattern: str) -> str | None:
    """The first construct of ``pattern`` that Python's ``re`` and ECMA-262 read differently and
    that the parsed pattern no longer shows: a Python-only escape, or ``{,n}`` (a repeat in
    Python, literal text in ECMA-262)."""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            if pattern[i + 1] in _PYTHON_ONLY_ESCAPES:
                return f"the escape \\{pattern[i + 1]}"
            i += 2
            continue
        if char == "{" and pattern[i + 1:i + 2] == ",":
            return "a repeat {,n}"
        i += 1
    return None


def translate(exprs: ExprSet, pattern: str, flags: int = 0, *, search: bool = False,
              encode: CharEncoder = utf8.code_points, dialect: Dialect = "python") -> int:
    """The expression in ``exprs`` matching exactly the encodings of the strings ``s`` with
    ``re.fullmatch(pattern, s, flags)`` (``re.search`` with ``search=True``). Characters are
    encoded by ``encode``: UTF-8 by default (strings with lone surrogates excepted: they have no
    UTF-8 encoding); ``lexemes.json_string_chars`` gives their spellings inside a JSON string.

    ``dialect`` (see ``Dialect``): ``"both"`` (a JSON Schema ``pattern`` that must match) keeps
    Python's syntax but accepts only what both Python's ``re`` and ECMA-262 accept: ``\\d``/``\\w``
    are ASCII, ``\\s`` is the intersection of both definitions, ``.`` stops at every ECMA-262 line
    terminator, and ``$`` matches only at the very end. ``"either"`` (a pattern that must not
    match: ``not``, ``else``, the keys beside ``patternProperties``) accepts what either accepts:
    Unicode ``\\d``/``\\w``, the union of the ``\\s`` sets, ``.`` stopping at ``\\n`` only, ``$``
    before a final newline. Under both readings, constructs the two dialects parse differently
    (inline case-insensitivity, which ECMA-262 does not have, and ``_PYTHON_ONLY_ESCAPES``) are
    refused.

    Raises:
        GrammarError: the pattern is not valid Python regex syntax.
        UnsupportedRegexError: a construct listed in the module docstring.
    """
    if not isinstance(pattern, str):
        raise TypeError(f"a pattern is a str, not {type(pattern).__name__}")
    allowed = re.ASCII | re.DOTALL | re.MULTILINE | re.VERBOSE | re.UNICODE | re.IGNORECASE
    if flags & ~allowed:
        raise UnsupportedRegexError("the flags", pattern, str(flags))
    try:
        parsed = sre_parse.parse(pattern, flags)
    except (re.error, OverflowError, RecursionError) as exc:
        raise GrammarError(f"invalid regular expression {pattern!r}: {exc}") from exc
    global_flags = parsed.state.flags
    if dialect not in DIALECTS:
        raise ValueError(f"dialect is one of {DIALECTS}, not {dialect!r}")
    if dialect != "python":
        if global_flags & re.IGNORECASE:
            raise UnsupportedRegexError("case-insensitive matching", pattern, "ECMA-262 has no inline flags")
        construct = _python_only_syntax(pattern)
        if construct is not None:
            raise UnsupportedRegexError(construct, pattern, "Python's re and ECMA-262 read it differently")
    translator = _Translator(exprs, pattern, global_flags, encode, dialect)
    dotall = bool(global_flags & re.DOTALL)
    try:
        if search:
            if global_flags & re.MULTILINE:
                raise UnsupportedRegexError("re.MULTILINE in a search", pattern)
            return translator.search(list(parsed), dotall)
        return translator.sequence(list(parsed), dotall, True, True)
    except RecursionError as exc:
        raise GrammarError(f"the regular expression {pattern!r} is nested too deeply") from exc


def regex_grammar(pattern: str, flags: int = 0) -> Grammar:
    """The grammar IR of a Python regular expression: one lexeme whose texts are exactly the UTF-8
    encodings of the strings ``re.fullmatch(pattern, s, flags)`` matches (raises what
    ``compile_regex`` documents)."""
    grammar = Grammar()
    expr = translate(grammar.exprs, pattern, flags)
    if grammar.exprs.is_empty(expr):
        raise GrammarAdmitsNothing(f"the regular expression {pattern!r} matches nothing")
    grammar.start = grammar.token(expr, "regex")
    return grammar
