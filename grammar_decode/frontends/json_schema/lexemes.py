"""The lexemes of JSON text, as byte-level regular expressions (RFC 8259, with two caps).

* Strings: exactly the UTF-8 encodings of JSON strings: no raw control characters, no overlong
  forms, no surrogate code points, nothing past U+10FFFF, and ``\\u`` escapes of surrogates only
  as a high-low pair.
* Numbers: no leading zeros; at most ``INTEGER_DIGITS_MAX`` digits before the fraction (every
  64-bit integer fits, every number stays finite as a double and within ``json.loads``'s digit
  limit) and at most ``EXPONENT_DIGITS_MAX`` exponent digits (``1e999`` is valid syntax but
  ``inf`` as a double). ``integer`` has neither fraction nor exponent.
* Whitespace: ``[ \\t\\n\\r]{1,max}`` where the grammar allows a gap (``docs/numbers-and-whitespace.md``).
"""

from __future__ import annotations

import functools

import json
import weakref
from typing import Iterable, Iterator

from ...ir import utf8
from ...ir.grammar import Grammar, Symbol
from ...ir.regex import ExprSet, byte_mask, byte_range

INTEGER_DIGITS_MAX = 20
EXPONENT_DIGITS_MAX = 2


class JsonSpellings:
    """``spellings(name)``: every JSON spelling of the string ``name``, quotes included: each
    character raw or escaped in any way JSON allows (what a key must not be when it is not
    ``name``). Memoised per name and per character (objects name the same keys many times over).
    Holds the expression set only."""

    def __init__(self, exprs: ExprSet) -> None:
        self.exprs = exprs
        self._chars: dict[str, int] = {}
        self._spellings: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        found = self._spellings.get(name)
        if found is not None:
            return found
        exprs = self.exprs
        chars = []
        for ch in name:
            found = self._chars.get(ch)
            if found is None:
                found = self._chars[ch] = json_string_chars(exprs, [(ord(ch), ord(ch))])
            chars.append(found)
        quote = exprs.literal(b'"')
        found = self._spellings[name] = exprs.concat(quote, *chars, quote)
        return found


class JsonLexemes:
    """The lexemes (and the optional-whitespace rule) of one JSON grammar, made on first use."""

    def __init__(self, grammar: Grammar, max_whitespace: int, capped: bool = True) -> None:
        """``capped=False`` drops the digit caps (for checking literal values a schema names
        explicitly, which are written as they are)."""
        self.grammar = grammar
        self.max_whitespace = max_whitespace
        self.capped = capped
        exprs = grammar.exprs
        self.open_brace = self.literal(b"{")
        self.close_brace = self.literal(b"}")
        self.open_bracket = self.literal(b"[")
        self.close_bracket = self.literal(b"]")
        for opener in (self.open_brace, self.open_bracket):
            grammar.nest(opener, 1, 1)
        for closer in (self.close_brace, self.close_bracket):
            grammar.nest(closer, -1, 0)
        self.comma = self.literal(b",")
        self.colon = self.literal(b":")
        self.ws: Symbol | None = None
        if max_whitespace > 0:
            blank = exprs.repeat(exprs.byteset(byte_mask(b" \t\n\r")), 1, max_whitespace)
            self.ws = grammar.token(exprs.optional(blank), "ws")
        digit = exprs.byteset(byte_range(0x30, 0x39))
        natural = exprs.alt(exprs.literal(b"0"),
                            exprs.concat(exprs.byteset(byte_range(0x31, 0x39)),
                                         exprs.repeat(digit, 0, INTEGER_DIGITS_MAX - 1 if capped else None)))
        whole = exprs.concat(exprs.optional(exprs.literal(b"-")), natural)
        fraction = exprs.concat(exprs.literal(b"."), exprs.plus(digit))
        exponent = exprs.concat(exprs.byteset(byte_mask(b"eE")), exprs.optional(exprs.byteset(byte_mask(b"+-"))),
                                exprs.repeat(digit, 1, EXPONENT_DIGITS_MAX if capped else None))
        self.integer = grammar.lexeme(whole, "integer")
        self.number = grammar.lexeme(exprs.concat(whole, exprs.optional(fraction), exprs.optional(exponent)), "number")
        self.string = grammar.lexeme(string_expr(grammar), "string")
        self._keys: dict[str, Symbol] = {}
        #: ``all_spellings``, held apart from the grammar: a ``UniqueLexeme`` the grammar holds
        #: keeps it, and a bound method of this object there would close a reference cycle
        #: (grammar -> lexeme -> method -> these lexemes -> grammar), which only a full collection
        #: frees, on some later mask
        self.all_spellings = JsonSpellings(exprs)

    def literal(self, text: bytes) -> Symbol:
        return self.grammar.lexeme(self.grammar.exprs.literal(text), text.decode("utf-8", "replace"))

    def literal_choice(self, spellings: list[bytes]) -> Symbol:
        """One lexeme matching any of ``spellings`` (the spellings of one JSON value)."""
        exprs = self.grammar.exprs
        lexeme = self.grammar.lexeme(exprs.alt(*(exprs.literal(s) for s in spellings)),
                                     spellings[0].decode("utf-8", "replace")[:40])
        self.grammar.nest(lexeme, 0, json_depth(spellings[0]))  # an array or object value nests
        return lexeme

    def key(self, name: str) -> Symbol:
        """An object key: its JSON spellings, raw UTF-8 and ``\\uXXXX``-escaped."""
        found = self._keys.get(name)
        if found is None:
            spellings = []
            for ascii_only in (False, True):
                text = json.dumps(name, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
                if text not in spellings:
                    spellings.append(text)
            found = self._keys[name] = self.literal_choice(spellings)
        return found

    def seq(self, *symbols: Symbol | None) -> tuple[Symbol, ...]:
        """An alternative, with the optional-whitespace slots (None in compact mode) dropped."""
        return tuple(s for s in symbols if s is not None)


def json_depth(text: bytes) -> int:
    """How deep the JSON text ``text`` nests its arrays and objects (0 for a scalar)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in text:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


_SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x2F: b"\\/", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n",
                  0x0D: b"\\r", 0x09: b"\\t"}
_HEX_DIGITS = "0123456789abcdef"


@functools.lru_cache(maxsize=None)  # 136 digit ranges at most
def _hex_digit_set(lo: int, hi: int) -> int:
    """The bytes of the hex digits ``lo..hi`` in either case, as a byte mask."""
    values = set()
    for digit in range(lo, hi + 1):
        values.update(_HEX_DIGITS[digit].encode() + _HEX_DIGITS[digit].upper().encode())
    return byte_mask(values)


def _hex_sequences(lo: int, hi: int, digits: int) -> Iterator[list[tuple[int, int]]]:
    """Digit-range sequences whose products are exactly the ``digits``-digit hex numerals of
    ``lo..hi``."""
    if digits == 1:
        yield [(lo, hi)]
        return
    size = 16 ** (digits - 1)
    first, last = lo // size, hi // size
    if first == last:
        for rest in _hex_sequences(lo % size, hi % size, digits - 1):
            yield [(first, first)] + rest
        return
    if lo % size:
        for rest in _hex_sequences(lo % size, size - 1, digits - 1):
            yield [(first, first)] + rest
        first += 1
    tail = None
    if hi % size != size - 1:
        tail = last
        last -= 1
    if first <= last:
        yield [(first, last)] + [(0, 15)] * (digits - 1)
    if tail is not None:
        for rest in _hex_sequences(0, hi % size, digits - 1):
            yield [(tail, tail)] + rest


def _u_escapes(exprs: ExprSet, lo: int, hi: int) -> int:
    """``\\uXXXX`` (hex digits in either case) for the 16-bit values ``lo..hi``."""
    return exprs.alt(*(exprs.concat(exprs.literal(b"\\u"), *(exprs.byteset(_hex_digit_set(a, b)) for a, b in seq))
                       for seq in _hex_sequences(lo, hi, 4)))


#: Per ``ExprSet``: expressions built from constants alone (the JSON string, the spellings of a
#: character), whose ids every grammar on that set shares; a compile finds them made rather than
#: building them again (about a tenth of a small schema's compile). Bounded: cleared past
#: ``_MEMO_ENTRIES``; it goes with its set.
_MEMOS: "weakref.WeakKeyDictionary[ExprSet, dict[object, int]]" = weakref.WeakKeyDictionary()
_MEMO_ENTRIES = 1 << 16


def _memo(exprs: ExprSet) -> dict[object, int]:
    found = _MEMOS.get(exprs)
    if found is None:
        found = _MEMOS.setdefault(exprs, {})
    elif len(found) >= _MEMO_ENTRIES:
        found.clear()
    return found


def json_string_chars(exprs: ExprSet, ranges: Iterable[tuple[int, int]]) -> int:
    """One character out of ``ranges`` as it may be written inside a JSON string: raw UTF-8 where
    JSON allows it, a short escape (``\\n``, ``\\"``, ``\\/``...), ``\\uXXXX``, or a surrogate
    pair for characters past U+FFFF. Decoding any of these gives a character of ``ranges``.
    Memoised per set and ranges (the expression is canonical: built again, it gets the same id)."""
    wanted = utf8.normalize(ranges)
    memo = _memo(exprs)
    key = ("chars", tuple(wanted))
    found = memo.get(key)
    if found is None:
        found = memo[key] = _json_string_chars(exprs, wanted)
    return found


def _json_string_chars(exprs: ExprSet, wanted: utf8.Ranges) -> int:
    options = [utf8.code_points(exprs, [(lo, hi) for lo, hi in _intersect(wanted, _RAW)])]
    for code, escape in _SHORT_ESCAPES.items():
        if any(lo <= code <= hi for lo, hi in wanted):
            options.append(exprs.literal(escape))
    for lo, hi in _intersect(wanted, [(0, 0xFFFF)]):
        options.append(_u_escapes(exprs, lo, hi))
    for lo, hi in _intersect(wanted, [(0x10000, utf8.MAX_CODE_POINT)]):
        high_lo, high_hi = 0xD800 + ((lo - 0x10000) >> 10), 0xD800 + ((hi - 0x10000) >> 10)
        low_lo, low_hi = 0xDC00 + ((lo - 0x10000) & 0x3FF), 0xDC00 + ((hi - 0x10000) & 0x3FF)
        if high_lo == high_hi:
            options.append(exprs.concat(_u_escapes(exprs, high_lo, high_lo), _u_escapes(exprs, low_lo, low_hi)))
            continue
        options.append(exprs.concat(_u_escapes(exprs, high_lo, high_lo), _u_escapes(exprs, low_lo, 0xDFFF)))
        if high_lo + 1 <= high_hi - 1:
            options.append(exprs.concat(_u_escapes(exprs, high_lo + 1, high_hi - 1), _u_escapes(exprs, 0xDC00, 0xDFFF)))
        options.append(exprs.concat(_u_escapes(exprs, high_hi, high_hi), _u_escapes(exprs, 0xDC00, low_hi)))
    return exprs.alt(*options)


#: Every character a JSON string may hold: a code point that is not a surrogate (surrogates only
#: inside escaped pairs, as one character).
ANY_CODE_POINT = utf8.complement([utf8.SURROGATES])

#: Characters JSON lets stand unescaped inside a string.
_RAW = utf8.complement([(0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C)])


def _intersect(left: utf8.Ranges, right: Iterable[tuple[int, int]]) -> utf8.Ranges:
    out = []
    for a, b in left:
        for c, d in right:
            lo, hi = max(a, c), min(b, d)
            if lo <= hi:
                out.append((lo, hi))
    return utf8.normalize(out)


def string_expr(grammar: Grammar) -> int:
    """A JSON string, quotes included. Memoised per ``ExprSet``."""
    memo = _memo(grammar.exprs)
    found = memo.get("string")
    if found is None:
        found = memo["string"] = _string_expr(grammar.exprs)
    return found


def _string_expr(exprs: ExprSet) -> int:
    # the characters as ``json_string_chars`` spells every code point, the very node that patterns
    # and lengths over any character build (``.``, ``maxLength``): an intersection or difference
    # of this string with theirs then meets equal nodes, which the expression store simplifies,
    # instead of two spellings of one language that only a search over derivatives tells apart
    char = json_string_chars(exprs, ANY_CODE_POINT)
    quote = exprs.literal(b'"')
    return exprs.concat(quote, exprs.star(char), quote)
