"""Numeric keywords of JSON Schema as regular languages over JSON number text.

``integer_range(exprs, low, high)`` is the decimal spelling of every integer in ``[low, high]``
(either bound may be None), without leading zeros and without ``-0``, as a byte regex: digit
strings of one length at a time, split digit by digit where they leave the bounds' common prefix
(the classic range-to-regex construction). O(digits²) nodes; no integer is enumerated, so
``maximum: 10**18`` costs the same as ``maximum: 10``.

``bounds(schema)`` reads ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum`` (the
draft-4 boolean form too) into the integer interval they leave, exactly: the bounds are read as
the exact rationals their JSON numbers denote (floats as their exact binary value), so the
comparison ``jsonschema`` makes on the parsed number agrees with the interval on every integer.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import SchemaError
from ..ir.regex import ExprSet, byte_range

#: The numeric keywords (each applies to integers and numbers alike).
BOUND_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _number(schema: dict[str, Any], keyword: str, pointer: str) -> Fraction | None:
    value = schema.get(keyword)
    if value is None or isinstance(value, bool):
        return None
    if not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        raise SchemaError(f"{keyword!r} must be a number, got {value!r}", pointer)
    return Fraction(value)


def bounds(schema: dict[str, Any], pointer: str) -> tuple[int | None, int | None]:
    """The integers the bound keywords of ``schema`` allow: ``(low, high)``, None for no bound.

    Raises:
        SchemaError: a bound that is not a finite number, or a draft-4 boolean
            ``exclusiveMinimum``/``exclusiveMaximum`` that is not a boolean.
    """
    for keyword in ("minimum", "maximum"):  # only the exclusive ones have a boolean form
        if isinstance(schema.get(keyword), bool):
            raise SchemaError(f"{keyword!r} must be a number, got {schema[keyword]!r}", pointer)
    low: int | None = None
    high: int | None = None
    minimum, maximum = _number(schema, "minimum", pointer), _number(schema, "maximum", pointer)
    # draft 4: exclusiveMinimum/exclusiveMaximum are booleans that make minimum/maximum strict
    strict_min = schema.get("exclusiveMinimum") is True
    strict_max = schema.get("exclusiveMaximum") is True
    if minimum is not None:
        low = math.floor(minimum) + 1 if strict_min else math.ceil(minimum)
    if maximum is not None:
        high = math.ceil(maximum) - 1 if strict_max else math.floor(maximum)
    exclusive_min = _number(schema, "exclusiveMinimum", pointer)
    exclusive_max = _number(schema, "exclusiveMaximum", pointer)
    if exclusive_min is not None:
        candidate = math.floor(exclusive_min) + 1
        low = candidate if low is None else max(low, candidate)
    if exclusive_max is not None:
        candidate = math.ceil(exclusive_max) - 1
        high = candidate if high is None else min(high, candidate)
    return low, high


def has_bounds(schema: dict[str, Any]) -> bool:
    """Whether any bound keyword constrains ``schema`` (a draft-4 boolean alone does not)."""
    return any(k in schema and not isinstance(schema[k], bool) for k in BOUND_KEYWORDS)


def integer_range(exprs: ExprSet, low: int | None, high: int | None, max_digits: int | None) -> int | None:
    """The spellings of the integers in ``[low, high]`` (None: unbounded) with at most
    ``max_digits`` digits (None: any number); None when there are none."""
    if max_digits is not None:
        limit = 10 ** max_digits - 1
        low = -limit if low is None else max(low, -limit)
        high = limit if high is None else min(high, limit)
    if low is not None and high is not None and low > high:
        return None
    parts = []
    if low is None or low < 0:
        # -1 .. low as "-" and the magnitudes |min(high, -1)| .. |low|
        top = -1 if high is None else min(high, -1)
        parts.append(exprs.concat(exprs.literal(b"-"), _non_negative(exprs, -top, None if low is None else -low)))
    if high is None or high >= 0:
        parts.append(_non_negative(exprs, 0 if low is None else max(low, 0), high))
    return exprs.alt(*parts)


def _non_negative(exprs: ExprSet, low: int, high: int | None) -> int:
    parts = []
    last = len(str(low)) if high is None else len(str(high))
    for digits in range(len(str(low)), last + 1):
        start = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        stop = 10 ** digits - 1 if high is None else min(high, 10 ** digits - 1)
        if start <= stop:
            parts.append(_same_length(exprs, str(start), str(stop)))
    if high is None:  # every longer spelling
        digit = _digits(exprs, "0", "9")
        parts.append(exprs.concat(_digits(exprs, "1", "9"), exprs.repeat(digit, len(str(low)), None)))
    return exprs.alt(*parts)


def _digits(exprs: ExprSet, first: str, last: str) -> int:
    return exprs.byteset(byte_range(ord(first), ord(last)))


def _same_length(exprs: ExprSet, low: str, high: str) -> int:
    """Digit strings of ``len(low)`` between ``low`` and ``high`` (equal lengths, low <= high)."""
    common = 0
    while common < len(low) and low[common] == high[common]:
        common += 1
    prefix = exprs.literal(low[:common].encode())
    low, high = low[common:], high[common:]
    if not low:
        return prefix
    rest = len(low) - 1
    if low[1:] == "0" * rest and high[1:] == "9" * rest:
        return exprs.concat(prefix, _digits(exprs, low[0], high[0]), exprs.repeat(_digits(exprs, "0", "9"), rest, rest))
    options = [exprs.concat(_digits(exprs, low[0], low[0]), _same_length(exprs, low[1:], "9" * rest))]
    if ord(high[0]) - ord(low[0]) > 1:
        options.append(exprs.concat(_digits(exprs, chr(ord(low[0]) + 1), chr(ord(high[0]) - 1)),
                                    exprs.repeat(_digits(exprs, "0", "9"), rest, rest)))
    options.append(exprs.concat(_digits(exprs, high[0], high[0]), _same_length(exprs, "0" * rest, high[1:])))
    return exprs.concat(prefix, exprs.alt(*options))
