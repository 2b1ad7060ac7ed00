"""Python ``re`` syntax to the byte-regex IR: tables against ``re.fullmatch`` and typed refusals."""

from __future__ import annotations

import re

import pytest

from grammar_decode.errors import GrammarError, UnsupportedRegexError
from grammar_decode.frontends.regex import translate
from grammar_decode.ir.regex import ExprSet

# pattern -> (accepted, rejected)
TABLE: dict[str, tuple[list[str], list[str]]] = {
    r"\d{4}-\d{2}-\d{2}": (["2024-01-31", "١٢٣٤-٠١-٠٢"], ["2024-1-31", "2024-01-311", ""]),
    r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}": (["a.b@c.io", "x+y@d-e.org"], ["a@b", "@b.io", "a@b.c"]),
    r"^(?:yes|no)$": (["yes", "no"], ["yes\n", "maybe", ""]),
    r"\Aab\Z": (["ab"], ["a", "abb"]),
    r"(?s:.)": (["\n", "é"], ["", "ab"]),
    r".": (["a", "€"], ["\n"]),
    r"[^\d\s]+": (["abc", "é"], ["a1", " ", ""]),
    r"\w+": (["héllo_1", "日本"], ["a-b", ""]),
    r"(?a)\w+": (["hello_1"], ["héllo"]),
    r"a{2,}?b*?": (["aa", "aaabb"], ["a", "b"]),
    r"(?x) a  b  # comment": (["ab"], ["a b"]),
    r"[\U0001F600-\U0001F64F]": (["😀", "🙏"], ["☺", ""]),
    r"": ([""], ["a"]),
}


@pytest.mark.parametrize("pattern", list(TABLE))
def test_table_agrees_with_re(pattern: str) -> None:
    exprs = ExprSet()
    e = translate(exprs, pattern)
    accepted, rejected = TABLE[pattern]
    for text in accepted + rejected:
        expected = re.fullmatch(pattern, text) is not None
        assert expected is (text in accepted), f"the table itself is wrong for {text!r}"
        assert exprs.matches(e, text.encode()) is expected, (pattern, text)


@pytest.mark.parametrize("pattern,construct", [
    (r"a(?=b)", "lookahead"), (r"a(?!b)", "negative lookahead"), (r"(?<=a)b", "lookbehind"),
    (r"(a)\1", "backreference"), (r"(a)?(?(1)b|c)", "conditional"), (r"\bword", "word boundary"),
    (r"a*+", "possessive"), (r"(?>ab)", "atomic"), (r"(?i:a)", "local case-insensitive"),
    (r"(?-i:a)", "local case-insensitive"), (r"a^b", "anchor"), (r"a$b", "anchor"), (r"(?:a?^b)", "anchor"),
])
def test_refusals_are_typed_and_name_the_construct(pattern: str, construct: str) -> None:
    with pytest.raises(UnsupportedRegexError, match=construct) as info:
        translate(ExprSet(), pattern)
    assert info.value.pattern == pattern


def test_flags_argument() -> None:
    exprs = ExprSet()
    assert exprs.matches(translate(exprs, ".", re.DOTALL), b"\n")
    assert exprs.matches(translate(exprs, "ab", re.IGNORECASE), b"aB")


@pytest.mark.parametrize("pattern,flags", [("(?i)kelvin", 0), ("[a-z]+", re.IGNORECASE), ("[^k]", re.IGNORECASE),
                                           ("(?i)straße", 0), ("(?ai)k", 0), ("(?i)[^\\W\\d]", 0)])
def test_case_insensitive_agrees_with_re(pattern: str, flags: int) -> None:
    """Unicode case folding as re does it: 'k' also matches the Kelvin sign, 'ſ' matches 's'."""
    exprs = ExprSet()
    e = translate(exprs, pattern, flags)
    probes = ["kelvin", "KELVIN", "\u212aelvin", "K", "k", "\u212a", "ſ", "S", "straße", "STRASSE", "STRAẞE",
              "Straße", "x", "É", "é", "1", "_"]
    for text in probes:
        assert exprs.matches(e, text.encode()) is (re.fullmatch(pattern, text, flags) is not None), (pattern, text)


@pytest.mark.parametrize("pattern", ["(", "a{2,1}", "[z-a]", "*"])
def test_invalid_syntax_is_a_grammar_error(pattern: str) -> None:
    with pytest.raises(GrammarError, match="invalid regular expression"):
        translate(ExprSet(), pattern)


def test_not_a_string() -> None:
    with pytest.raises(TypeError):
        translate(ExprSet(), b"abc")  # type: ignore[arg-type]


def test_a_pattern_that_matches_nothing_is_its_own_typed_error() -> None:
    from grammar_decode import GrammarAdmitsNothing, compile_regex

    with pytest.raises(GrammarAdmitsNothing) as info:
        compile_regex(r"[^\s\S]")
    assert isinstance(info.value, GrammarError) and info.value.depth_limit is None
