"""Numeric keywords of JSON Schema as regular languages over JSON number text.

``integer_range(exprs, low, high)`` is the decimal spelling of every integer in ``[low, high]``
(either bound may be None), without leading zeros and without ``-0``, as a byte regex: digit
strings of one length at a time, split digit by digit where they leave the bounds' common prefix
(the classic range-to-regex construction). O(digits²) nodes; no integer is enumerated, so
``maximum: 10**18`` costs the same as ``maximum: 10``.

``number_range(exprs, schema)`` is the same for ``type: number``: integer spellings as above,
and fixed-point spellings (``-?int.frac``, no exponent: a subset of the valid numbers, stated in
``docs/numbers-and-whitespace.md``) whose exact decimal value lies within the bounds moved
outward to the nearest doubles, so that ``json.loads`` (which reads such text as a double,
rounding to nearest) can never carry a written value across a bound.

``bounds(schema)`` reads ``minimum``/``maximum``/``exclusiveMinimum``/``exclusiveMaximum`` into the
integer interval they leave, exactly (draft 4's boolean form is folded into numeric bounds when
the schema is read under draft 4, ``drafts.read_keywords``; anywhere else it is refused): the bounds are read as
the exact rationals their JSON numbers denote (floats as their exact binary value), so the
comparison ``jsonschema`` makes on the parsed number agrees with the interval on every integer.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any
from ...errors import SchemaError, UnsupportedSchemaError
from ...limits import active
from ...ir.regex import EPSILON, NOTHING, ExprSet, byte_range

#: The numeric keywords (each applies to integers and numbers alike).
BOUND_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")


def _number(schema: dict[str, Any], keyword: str, pointer: str) -> Fraction | None:
    """The bound ``keyword`` as an exact rational (None when absent).

    Raises:
        SchemaError: not a finite number.
        UnsupportedSchemaError: a boolean ``exclusiveMinimum``/``exclusiveMaximum`` not read
            under draft 4 (reachable through a ``$ref`` into a position no draft analysis walks).
    """
    value = schema.get(keyword)
    if value is None:
        return None
    if isinstance(value, bool):
        if keyword.startswith("exclusive"):
            raise UnsupportedSchemaError(keyword, pointer, "a boolean bound is draft 4's; name the draft (draft='4', "
                                                           "or $schema)")
        raise SchemaError(f"{keyword!r} must be a number, got {value!r}", pointer)
    if not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        raise SchemaError(f"{keyword!r} must be a number, got {value!r}", pointer)
    return Fraction(value)


def bounds(schema: dict[str, Any], pointer: str) -> tuple[int | None, int | None]:
    """The integers the bound keywords of ``schema`` allow: ``(low, high)``, None for no bound.

    Raises:
        SchemaError, UnsupportedSchemaError: see ``_number``.
    """
    low: int | None = None
    high: int | None = None
    minimum, maximum = _number(schema, "minimum", pointer), _number(schema, "maximum", pointer)
    if minimum is not None:
        low = math.ceil(minimum)
    if maximum is not None:
        high = math.floor(maximum)
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
    """Whether any bound keyword constrains ``schema``."""
    return any(k in schema for k in BOUND_KEYWORDS)


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


#: Most digits of a number with a fraction written where it must not be integral: below 2**53
#: for digits + fraction digits, a decimal's distance to the nearest integer (at least 10**-k)
#: exceeds half the spacing of doubles near it, so the double it parses to keeps a fraction.
NON_INTEGRAL_DIGITS_MAX = 15


def non_integral(exprs: ExprSet) -> int:
    """Fixed-point spellings of numbers whose double is not an integer (``jsonschema``'s
    ``integer`` is ``float.is_integer()``): a fraction ending in a non-zero digit, at most
    ``NON_INTEGRAL_DIGITS_MAX`` digits in all (a subset: ``1.5e0`` and longer spellings are not
    written)."""
    digit, nonzero = exprs.byteset(byte_range(0x30, 0x39)), exprs.byteset(byte_range(0x31, 0x39))
    whole = exprs.alt(exprs.literal(b"0"), exprs.concat(nonzero, exprs.star(digit)))
    body = exprs.concat(whole, exprs.literal(b"."), exprs.star(digit), nonzero)
    short = exprs.repeat(exprs.alt(digit, exprs.literal(b".")), 0, NON_INTEGRAL_DIGITS_MAX + 1)
    return exprs.concat(exprs.optional(exprs.literal(b"-")), exprs.both(body, short))


def exact_bounds(schema: dict[str, Any], pointer: str) -> tuple[Fraction | None, Fraction | None, bool]:
    """The tightest lower and upper bound the keywords state, exactly (None: unbounded), and
    whether they hold strictly where they meet (the reals between them are what they admit)."""
    lows: list[tuple[Fraction, bool]] = []
    highs: list[tuple[Fraction, bool]] = []
    for keyword, into, strict in (("minimum", lows, False), ("exclusiveMinimum", lows, True),
                                  ("maximum", highs, False), ("exclusiveMaximum", highs, True)):
        value = _number(schema, keyword, pointer)
        if value is not None:
            into.append((value, strict))
    low = max(lows, key=lambda b: (b[0], b[1])) if lows else None
    high = min(highs, key=lambda b: (b[0], not b[1])) if highs else None
    strict = (low is not None and low[1]) or (high is not None and high[1])
    return (None if low is None else low[0]), (None if high is None else high[0]), strict


def float_bounds(schema: dict[str, Any], pointer: str) -> tuple[Fraction | None, Fraction | None]:
    """Inclusive bounds ``[low, high]``, each a double (as an exact rational), such that every
    decimal text whose exact value lies within them parses (rounding to nearest) to a double
    the bound keywords of ``schema`` accept. None for no bound."""
    lows: list[Fraction] = []
    highs: list[Fraction] = []
    minimum, maximum = _number(schema, "minimum", pointer), _number(schema, "maximum", pointer)
    if minimum is not None:
        lows.append(_double_above(minimum, False))
    if maximum is not None:
        highs.append(-_double_above(-maximum, False))
    exclusive_min = _number(schema, "exclusiveMinimum", pointer)
    exclusive_max = _number(schema, "exclusiveMaximum", pointer)
    if exclusive_min is not None:
        lows.append(_double_above(exclusive_min, True))
    if exclusive_max is not None:
        highs.append(-_double_above(-exclusive_max, True))
    return (max(lows) if lows else None), (min(highs) if highs else None)


#: Most fraction digits of a decimal bound (a bound with more is moved inward to this many).
FRACTION_DIGITS_MAX = 24

#: Bounds beyond this magnitude are clamped to it (every number the lexer spells is smaller).
_HUGE = Fraction(10) ** 30


def _double_above(bound: Fraction, strict: bool) -> Fraction:
    """A decimal ``D`` such that every text of exact value ``>= D`` parses to a double ``>=
    bound`` (``> bound`` when ``strict``): the shortest decimal that reads back as the least
    such double ``L``. It reads back as ``L``, so it lies at or above the midpoint below
    ``L``, and rounding to nearest takes anything at or above it to ``L`` or higher."""
    bound = max(-_HUGE, min(_HUGE, bound))
    value = float(bound)
    if Fraction(value) < bound or (strict and Fraction(value) == bound):
        value = math.nextafter(value, math.inf)
    # rounded up to FRACTION_DIGITS_MAX decimals: a tighter bound still, and expressions whose
    # depth a bound like 5e-324 (324 fraction digits) cannot blow up
    scale = 10 ** FRACTION_DIGITS_MAX
    return Fraction(math.ceil(Fraction(repr(value)) * scale), scale)


def number_range(exprs: ExprSet, schema: dict[str, Any], pointer: str, max_digits: int | None) -> int | None:
    """Spellings of numbers within the bound keywords: integers exactly (``integer_range``) and
    fixed-point decimals within ``float_bounds``; None when there are none."""
    int_low, int_high = bounds(schema, pointer)
    low, high = float_bounds(schema, pointer)
    parts = []
    whole = integer_range(exprs, int_low, int_high, max_digits)
    if whole is not None:
        parts.append(whole)
    if low is None or high is None or low <= high:
        limit = None if max_digits is None else Fraction(10) ** max_digits  # the integer part stays below
        negative_top = None if low is None else -low  # magnitudes of the negative values
        if low is None or low <= 0:
            top = negative_top if limit is None or (negative_top is not None and negative_top < limit) else limit
            bottom = Fraction(0) if high is None or high >= 0 else -high
            if top is None or bottom <= top:
                parts.append(exprs.concat(exprs.literal(b"-"), _decimal_magnitudes(exprs, bottom, top, limit)))
        if high is None or high >= 0:
            top = high if limit is None or (high is not None and high < limit) else limit
            bottom = Fraction(0) if low is None or low <= 0 else low
            if top is None or bottom <= top:
                parts.append(_decimal_magnitudes(exprs, bottom, top, limit))
    return exprs.alt(*parts) if parts else None


def _decimal_magnitudes(exprs: ExprSet, low: Fraction, high: Fraction | None, limit: Fraction | None) -> int:
    """``(0|[1-9][0-9]*)\\.[0-9]+`` with exact value in ``[low, high]`` (0 <= low; ``high``
    None: unbounded; an integer part of ``limit`` or more never)."""
    digit = _digits(exprs, "0", "9")
    point = exprs.literal(b".")
    any_fraction = exprs.concat(point, exprs.plus(digit))
    low_int, low_frac = _split(low)
    cap = None if limit is None else int(limit) - 1
    if high is not None and high == limit:
        high = None  # the cap bounds the integer part on its own
    if cap is not None and low_int > cap:
        return NOTHING
    if high is None:
        options = [exprs.concat(_natural(exprs, low_int, low_int), point, _fraction_at_least(exprs, low_frac, True))]
        if cap is None or low_int + 1 <= cap:
            options.append(exprs.concat(_natural(exprs, low_int + 1, cap), any_fraction))
        return exprs.alt(*options)
    high_int, high_frac = _split(high)
    if low_int == high_int:
        between = exprs.both(_fraction_at_least(exprs, low_frac, True), _fraction_at_most(exprs, high_frac, True))
        return exprs.concat(_natural(exprs, low_int, low_int), point, between)
    options = [exprs.concat(_natural(exprs, low_int, low_int), point, _fraction_at_least(exprs, low_frac, True)),
               exprs.concat(_natural(exprs, high_int, high_int), point, _fraction_at_most(exprs, high_frac, True))]
    if low_int + 1 <= high_int - 1:
        options.append(exprs.concat(_natural(exprs, low_int + 1, high_int - 1), any_fraction))
    return exprs.alt(*options)


def _natural(exprs: ExprSet, low: int, high: int | None) -> int:
    return _non_negative(exprs, low, high)


def _split(value: Fraction) -> tuple[int, str]:
    """Integer part and the fraction's decimal digits without trailing zeros (``value`` is a
    non-negative double, so its expansion is finite)."""
    whole = math.floor(value)
    rest = value - whole
    digits = []
    while rest:
        rest *= 10
        digit = math.floor(rest)
        digits.append(str(digit))
        rest -= digit
    return whole, "".join(digits)


def _fraction_at_least(exprs: ExprSet, digits: str, non_empty: bool) -> int:
    """Digit strings ``d`` with ``0.d >= 0.digits`` (at least one digit when ``non_empty``).
    Built from the last digit back: O(len(digits)) nodes, no recursion."""
    digit = _digits(exprs, "0", "9")
    if not digits:
        return exprs.plus(digit) if non_empty else exprs.star(digit)
    tail = exprs.star(digit)  # past the last digit of the bound: anything
    for d in reversed(digits):
        options = [exprs.concat(exprs.literal(d.encode()), tail)]
        if d != "9":
            options.append(exprs.concat(_digits(exprs, chr(ord(d) + 1), "9"), exprs.star(digit)))
        tail = exprs.alt(*options)
    return tail


def _fraction_at_most(exprs: ExprSet, digits: str, non_empty: bool) -> int:
    """Digit strings ``d`` with ``0.d <= 0.digits`` (at least one digit when ``non_empty``)."""
    digit = _digits(exprs, "0", "9")
    if not digits:
        return exprs.plus(exprs.literal(b"0")) if non_empty else exprs.star(exprs.literal(b"0"))
    tail = exprs.star(exprs.literal(b"0"))  # past the last digit of the bound: only zeros
    for index in range(len(digits) - 1, -1, -1):
        d = digits[index]
        options = [exprs.concat(exprs.literal(d.encode()), tail)]
        if d != "0":
            options.append(exprs.concat(_digits(exprs, "0", chr(ord(d) - 1)), exprs.star(digit)))
        if index > 0 or not non_empty:
            options.append(exprs.literal(b""))  # the string may stop here: the rest reads as zeros
        tail = exprs.alt(*options)
    return tail


def multiple_of(exprs: ExprSet, divisor: int) -> int:
    """Spellings ``-?(0|[1-9][0-9]*)`` of the integers divisible by ``divisor`` (> 0).

    Divisibility by ``2^a 5^b`` is read off the last ``max(a, b)`` digits
    (``_last_digits_divisible``); the rest, ``m``, by the remainder automaton (state r, digit d: ``(10 r + d) mod m``)
    turned into an expression by eliminating its states (Arden's rule); the two intersect.
    ``ValueError`` when ``m`` exceeds ``Limits.modulus``."""
    twos = fives = 0
    m = divisor
    while m % 2 == 0:
        m //= 2
        twos += 1
    while m % 5 == 0:
        m //= 5
        fives += 1
    if m > active().modulus:
        raise ValueError(f"divisibility by {m} needs an automaton of {m} states (at most {active().modulus})")
    digit = _digits(exprs, "0", "9")
    magnitude = exprs.alt(exprs.literal(b"0"), exprs.concat(_digits(exprs, "1", "9"), exprs.star(digit)))
    parts = [magnitude]
    if twos or fives:
        parts.append(_last_digits_divisible(exprs, twos, fives))
    if m > 1:
        parts.append(_remainder(exprs, m, 0))
    body = exprs.both(*parts) if len(parts) > 1 else parts[0]
    # "-0" is never spelled (as for every integer lexeme)
    return exprs.alt(body, exprs.concat(exprs.literal(b"-"), exprs.difference(body, exprs.literal(b"0"))))


def _last_digits_divisible(exprs: ExprSet, twos: int, fives: int) -> int:
    """Digit strings (leading zeros allowed, but the one-digit-or-more spelling of a number is
    what ``multiple_of`` intersects this with) whose value ``2^a 5^b`` divides: since
    ``10^t`` is a multiple for ``t = max(a, b)``, the last ``t`` digits decide.

    Built right to left as the digits are weighed: after the ``j`` lowest digits, the state is
    their value ``s`` mod ``B = 2^a 5^b``; the higher digits add multiples of ``10^j``, so only
    states divisible by ``g_j = gcd(10^j, B)`` can still end at 0. Level ``j`` holds at most
    ``min(10^j, B) / g_j`` states (``Z(j, s)``: the ``j``-digit strings reaching ``s``), about
    ``2^(0.7 a)`` in all for ``2^a`` rather than the ``5^a`` endings a table of them lists.
    ``ValueError`` past ``Limits.last_digit_states``, before anything is built."""
    block = 2 ** twos * 5 ** fives
    tail = max(twos, fives)
    gcds = [math.gcd(10 ** j, block) for j in range(tail + 1)]
    if sum(min(10 ** j, block) // gcds[j] for j in range(tail + 1)) > active().last_digit_states:
        raise ValueError(f"divisibility by 2^{twos}·5^{fives} reads the last {tail} digits through more than "
                         f"{active().last_digit_states:,} states")
    digit_bytes = [exprs.byteset(1 << (0x30 + d)) for d in range(10)]
    level: dict[int, int] = {0: EPSILON}
    shorter = []  # numbers of fewer than `tail` digits: first digit 1-9, value a multiple
    for j in range(tail):
        weight = 10 ** j
        grown: dict[int, list[int]] = {}
        leading: list[int] = []
        for s, expr in level.items():
            for d in range(10):
                t = (s + d * weight) % block
                if t % gcds[j + 1]:
                    continue
                piece = exprs.concat(digit_bytes[d], expr)
                grown.setdefault(t, []).append(piece)
                if t == 0 and d > 0:
                    leading.append(piece)
        if j + 1 < tail and leading:
            shorter.append(exprs.alt(*leading))
        level = {t: exprs.alt(*pieces) for t, pieces in grown.items()}
    endings = level.get(0, NOTHING)
    return exprs.alt(exprs.concat(exprs.star(_digits(exprs, "0", "9")), endings), exprs.literal(b"0"), *shorter)


def dyadic(value: float) -> tuple[int, int] | None:
    """``(m, k)`` with ``value == m / 2**k``, ``m`` odd where ``k > 0`` (None when the double's
    denominator exceeds ``2**active().divisor_fraction_bits``: ``0.1`` is ``3602879701896397 / 2**55``)."""
    exact = Fraction(value)
    k = exact.denominator.bit_length() - 1
    if k > active().divisor_fraction_bits:
        return None
    return exact.numerator, k


def fractional_multiple_of(exprs: ExprSet, m: int, k: int, fraction: bool = True) -> int:
    """Fixed-point spellings of the multiples of ``m / 2**k`` (``k`` >= 1, ``m`` odd, at most
    ``Limits.modulus``) that ``jsonschema``'s float division calls multiples: every such decimal
    ``x`` with ``x * 2**k`` below ``2**53`` is a double exactly, so ``x / d`` is the exact, integral
    quotient. ``x * 2**k = I * 2**k + j`` for integer part ``I`` and a fraction ``j / 2**k`` (one of
    ``2**k`` finite decimals), so ``x`` is a multiple when ``I`` lies in the residue class
    ``-j / 2**k`` mod ``m`` (a remainder automaton). ``fraction=False``: integer spellings only.
    ``ValueError`` past the limits."""
    if m > active().modulus:
        raise ValueError(f"divisibility by {m} needs an automaton of {m} states (at most {active().modulus})")
    if k < 1 or k > active().divisor_fraction_bits:
        raise ValueError(f"a divisor with {k} binary fraction digits (1 to {active().divisor_fraction_bits})")
    digits = math.floor((53 - k) * math.log10(2))  # integer digits: x * 2**k stays below 2**53
    digit = _digits(exprs, "0", "9")
    magnitude = exprs.alt(exprs.literal(b"0"), exprs.concat(_digits(exprs, "1", "9"), exprs.repeat(digit, 0, digits - 1)))
    inverse = pow(2 ** k, -1, m) if m > 1 else 0
    zeros = exprs.star(exprs.literal(b"0"))
    parts = []
    for j in range(2 ** k if fraction else 1):
        residue = (-j * inverse) % m if m > 1 else 0
        whole = magnitude if m == 1 else exprs.both(magnitude, _remainder(exprs, m, residue))
        decimals = str(j * 5 ** k).zfill(k).rstrip("0")  # j / 2**k has at most k decimal digits
        if not fraction:
            tail = EPSILON
        elif decimals:
            tail = exprs.concat(exprs.literal(b"." + decimals.encode()), zeros)
        else:
            tail = exprs.optional(exprs.concat(exprs.literal(b"."), exprs.plus(exprs.literal(b"0"))))
        parts.append(exprs.concat(whole, tail))
    return exprs.concat(exprs.optional(exprs.literal(b"-")), exprs.alt(*parts))


def _remainder(exprs: ExprSet, m: int, residue: int) -> int:
    """Digit strings whose value is ``residue`` mod ``m`` (leading zeros allowed; the empty string
    excluded): X_r, the strings that take remainder r to ``residue``, solved by Arden's rule."""
    # X_r = [r == residue] ε | Σ_d d · X_(10r+d mod m): coefficients per state, and the constant
    coefficient: list[dict[int, int]] = []
    constant: list[int] = []
    for r in range(m):
        row: dict[int, list[int]] = {}
        for d in range(10):
            row.setdefault((10 * r + d) % m, []).append(d)
        coefficient.append({s: exprs.byteset(sum(1 << (0x30 + d) for d in ds)) for s, ds in row.items()})
        constant.append(EPSILON if r == residue else NOTHING)
    for k in range(m - 1, -1, -1):  # eliminate X_k from every equation before it
        loop = exprs.star(coefficient[k].pop(k, NOTHING))
        for i in range(k):
            through = coefficient[i].pop(k, None)
            if through is None:
                continue
            lead = exprs.concat(through, loop)
            for j, c in coefficient[k].items():
                coefficient[i][j] = exprs.alt(coefficient[i].get(j, NOTHING), exprs.concat(lead, c))
            constant[i] = exprs.alt(constant[i], exprs.concat(lead, constant[k]))
        # back-substitution is not needed: X_0 alone is asked for, and it is solved last
        coefficient[k] = {j: exprs.concat(loop, c) for j, c in coefficient[k].items()}
        constant[k] = exprs.concat(loop, constant[k])
    return exprs.without_empty(constant[0])
