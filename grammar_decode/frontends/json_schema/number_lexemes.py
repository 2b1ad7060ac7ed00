"""The integer and number lexemes a schema's numeric keywords narrow: bounds (``minimum``...),
``multipleOf`` and the numbers with a fraction that ``not`` of ``integer`` leaves. The languages
are built in ``numbers``; this module picks one per schema and caches the lexeme by what
narrows it, so equal constraints share one lexeme."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from ...errors import SchemaError, UnsupportedSchemaError
from ...ir.grammar import Grammar, Symbol
from .keywords import NOT_INTEGRAL
from .lexemes import INTEGER_DIGITS_MAX, JsonLexemes
from .numbers import (FRACTION_DIGITS_MAX, bounds, dyadic, exact_bounds, float_bounds, fractional_multiple_of,
                           has_bounds, integer_range, multiple_of, non_integral, number_range)


class NumberLexemes:
    """Lexemes for ``integer`` and ``number`` under the numeric keywords of one grammar (cached
    per distinct constraint). Reasons a schema admits no number go to ``empty_reasons``."""

    def __init__(self, grammar: Grammar, lex: JsonLexemes, empty_reasons: list[tuple[str, str]]) -> None:
        self.grammar = grammar
        self.lex = lex
        self.empty_reasons = empty_reasons
        self._digits = INTEGER_DIGITS_MAX if lex.capped else None
        self._cache: dict[tuple[Any, ...], Symbol] = {}

    def integer(self, schema: dict[str, Any], pointer: str) -> Symbol | None:
        """The integer lexeme within the bound keywords and ``multipleOf`` (None when no integer
        passes them)."""
        if NOT_INTEGRAL in schema:  # integers never have a fraction
            self.empty_reasons.append((pointer, "an integer is not a number with a fraction"))
            return None
        divisor = self._divisor(schema, pointer)
        if not has_bounds(schema) and divisor is None:
            return self.lex.integer
        low, high = bounds(schema, pointer)
        key = ("integer", low, high, divisor)
        found = self._cache.get(key)
        if found is not None:
            return found
        exprs = self.grammar.exprs
        expr = integer_range(exprs, low, high, self._digits)
        if expr is None:
            if low is None or high is None or low <= high:  # integers exist, past the digit cap
                raise self._unwritable(pointer, "minimum" if high is None or (low is not None and low > 0) else
                                       "maximum", f"the integers from {_show(low)} to {_show(high)}")
            self.empty_reasons.append((pointer, f"no integer lies between the bounds ({_show(low)} > {_show(high)})"))
            return None
        name = f"integer [{low}, {high}]"
        if divisor is not None:
            expr = exprs.both(expr, self._multiples(divisor, pointer, fraction=False))
            name += f" multipleOf {divisor}"
        found = self._cache[key] = self.grammar.lexeme(expr, name)
        return found

    def _unwritable(self, pointer: str, keyword: str, what: str) -> UnsupportedSchemaError:
        """The refusal of bounds that admit numbers the number grammar cannot write: under
        bounds, numbers are written without an exponent, with at most ``INTEGER_DIGITS_MAX``
        integer digits and ``FRACTION_DIGITS_MAX`` fraction digits (so every one reads back as
        the double it spells)."""
        digits = "" if self._digits is None else f"at most {self._digits} integer digits, "
        return UnsupportedSchemaError(keyword, pointer, f"{what} are not written here (under bounds: {digits}at "
                                                          f"most {FRACTION_DIGITS_MAX} fraction digits, no exponent)")

    def _multiples(self, divisor: Fraction, pointer: str, fraction: bool) -> int:
        """Spellings of the multiples of ``divisor`` (``numbers.multiple_of`` for integer
        divisors: integers only; ``fractional_multiple_of`` otherwise)."""
        exprs = self.grammar.exprs
        try:
            if divisor.denominator == 1:
                return multiple_of(exprs, divisor.numerator)
            return fractional_multiple_of(exprs, divisor.numerator, divisor.denominator.bit_length() - 1, fraction)
        except ValueError as exc:
            raise UnsupportedSchemaError("multipleOf", pointer, str(exc)) from exc

    def _divisor(self, schema: dict[str, Any], pointer: str) -> Fraction | None:
        """``multipleOf`` as an exact rational (None when absent): an integer, or a double with a
        small power-of-two denominator (``numbers.dyadic``)."""
        if "multipleOf" not in schema:
            return None
        value = schema["multipleOf"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value != value:
            raise SchemaError(f"'multipleOf' must be a number above 0, got {value!r}", pointer)
        if isinstance(value, float) and not (value.is_integer() and value < 2 ** 63):
            if value == float("inf") or dyadic(value) is None:
                raise UnsupportedSchemaError("multipleOf", pointer, f"{value!r}: a divisor whose double is not a "
                                             f"small binary fraction (jsonschema divides doubles, and x / {value!r} "
                                             "rounds)")
            return Fraction(value)
        return Fraction(int(value))

    def number(self, schema: dict[str, Any], pointer: str) -> Symbol | None:
        """The number lexeme within the bound keywords (``numbers.number_range``: no
        exponent under bounds; None when no number is within them)."""
        if NOT_INTEGRAL in schema:
            return self._non_integral(schema, pointer)
        if "multipleOf" in schema:
            divisor = self._divisor(schema, pointer)
            if divisor is not None and divisor.denominator == 1:
                return self.integer(schema, pointer)  # integers only: a subset, written without fraction
            return self._fractional_multiples(schema, divisor, pointer)
        if not has_bounds(schema):
            return self.lex.number
        low, high = float_bounds(schema, pointer)
        return self._within_bounds(("number", low, high, bounds(schema, pointer)), schema, pointer, None,
                                   f"number [{low}, {high}]")

    def _within_bounds(self, key: tuple[Any, ...], schema: dict[str, Any], pointer: str,
                       narrowed: Callable[[], int] | None, name: str) -> Symbol | None:
        """The lexeme cached under ``key``: the numbers ``narrowed()`` spells (all numbers
        without it) within the bound keywords (``numbers.number_range``); None when no
        number lies within them."""
        found = self._cache.get(key)
        if found is not None:
            return found
        exprs = self.grammar.exprs
        expr = narrowed() if narrowed is not None else None
        if has_bounds(schema):
            within = number_range(exprs, schema, pointer, self._digits)
            if within is None or exprs.is_empty(within):
                low, high, strict = exact_bounds(schema, pointer)
                if low is None or high is None or low < high or (low == high and not strict):
                    # numbers exist there, but not as the fixed-point decimals written under bounds
                    raise self._unwritable(pointer, "maximum" if low is None else "minimum",
                                           f"the numbers from {_show(low)} to {_show(high)}")
                self.empty_reasons.append((pointer, f"no number lies between the bounds ({_show(low)} > "
                                                    f"{_show(high)})"))
                return None
            expr = within if expr is None else exprs.both(expr, within)
        found = self._cache[key] = self.grammar.lexeme(expr, name)
        return found

    def _fractional_multiples(self, schema: dict[str, Any], divisor: Fraction | None, pointer: str) -> Symbol | None:
        """Numbers within the bound keywords that are multiples of a divisor with a fraction
        (``numbers.fractional_multiple_of``: fixed-point spellings, below 2**53 once scaled)."""
        key = ("number", bounds(schema, pointer), float_bounds(schema, pointer), divisor)
        return self._within_bounds(key, schema, pointer, lambda: self._multiples(divisor, pointer, fraction=True),
                                   f"number multipleOf {divisor}")

    def _non_integral(self, schema: dict[str, Any], pointer: str) -> Symbol | None:
        """Numbers with a fraction (``not`` of ``integer``), within the bound keywords
        (``numbers.non_integral``)."""
        if "multipleOf" in schema:
            self.empty_reasons.append((pointer, "only integers are written under 'multipleOf', and these must not be"))
            return None
        key = ("non-integral", bounds(schema, pointer), float_bounds(schema, pointer))
        return self._within_bounds(key, schema, pointer, lambda: non_integral(self.grammar.exprs),
                                   "number with a fraction")


def _show(value: "Fraction | int | None") -> str:
    """A bound for a message: exact where short, else its double's shortest decimal; "unbounded"
    for None."""
    if value is None:
        return "unbounded"
    value = Fraction(value)
    if value.denominator == 1 and abs(value) < 10 ** 24:
        return str(value.numerator)
    return repr(float(value))
