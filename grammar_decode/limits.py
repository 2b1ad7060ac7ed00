"""Every cap on what compiling and masking may cost, in one object.

A ``Limits`` is accepted by every ``compile_*`` function (``limits=``); the defaults are what the
library uses when none is given. Each cap bounds time or memory on hostile input: past it, the
compile raises a typed error (``GrammarTooLarge``, ``RegexTooComplex``, ``UnsupportedSchemaError``
naming the keyword, ``CompileTimeout``), never runs on and never silently drops a constraint. A
server sets them per request::

    strict = gd.Limits(compile_seconds=1.0, grammar_size=200_000)
    grammar = gd.compile_json_schema(schema, limits=strict)

How the caps reach the code that enforces them: the compile step makes its ``Limits`` the active
one of the calling thread (a ``contextvars`` variable, so threads and asyncio tasks compiling at once
each see their own) for as long as it runs, and the grammar keeps it for the lazy work done while
masking (lexer states built on demand, completions). ``active()`` is what the enforcing code reads.

The cost of reading: one context-variable lookup; ``check_deadline()`` adds one clock read and is
called once per unit of work (a schema object, a batch of rules or derivative states, an analysis
pass), so ``CompileTimeout`` comes at most one unit late: under 0.1 s on the development machine
for the slowest schemas measured (``docs/limits.md``), plus any garbage collection in between.
"""

from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Iterator

from .errors import CompileTimeout


@dataclass(frozen=True)
class Limits:
    """Caps on compile time and on the size of what a compile builds (defaults in parentheses).

    Attributes:
        compile_seconds: wall-clock limit of one ``compile_*`` call (10 s); None for none.
            Exceeding it raises ``CompileTimeout``. Work done lazily while masking is not counted.
        grammar_size: symbols of the grammar as rewritten for the parser (2,000,000):
            ``GrammarTooLarge``.
        regex_states: derivative states one question about a regular expression may explore
            (emptiness, shortest match; 20,000): ``RegexTooComplex``.
        counted_states: states of the count automaton an intersection of counted repeats is
            decided by exactly (128); past it the derivative search decides, within
            ``regex_states``.
        completion_bytes: longest canonical completion the closing budget follows (65,536 bytes).
        cache_bytes: bytes of one (grammar, vocabulary) pair's mask caches (256 MiB).
        schema_depth: deepest nesting of schema objects read (256): ``SchemaError``.
        schema_refs: ``$ref``s followed while flattening one conjunction (64).
        one_of_branches: ``oneOf`` branches (64; disjointness is proved for every pair).
        one_of_terms: conjunctions a ``oneOf`` of overlapping branches becomes (64).
        complement_terms: conjunctions the values outside an ``anyOf`` become (64).
        all_of_terms: conjunctions one ``allOf`` becomes when several of its branches hold an
            ``anyOf`` (or an ``if``/``then``/``else``, ``oneOf`` or ``not`` rewritten into one):
            the product of their branches, less the conjunctions proved empty (128).
        dependent_schemas: keys with a dependent schema in one object schema (4; each doubles
            the branches).
        object_states: states of one object's key automaton (50,000).
        optional_keys: optional named keys of one object (2,048).
        any_order_keys: named keys of one object under ``property_order="any"`` (12; a state
            per set of keys written).
        key_patterns: ``patternProperties`` patterns of one object (12).
        key_regions: regions the other keys of one object split into (64).
        linear_items: array positions spelled out one by one (64).
        unique_values: distinct values ``uniqueItems`` is compiled over (16).
        unique_states: sets of values written so far under ``uniqueItems`` (2,048).
        modulus: largest odd part (after factors of 2 and 5) of a ``multipleOf`` divisor built
            as a remainder automaton (9).
        last_digit_states: states of the last-digits table of a divisor ``2^a 5^b`` (1,000).
        divisor_fraction_bits: binary fraction digits of a fractional ``multipleOf`` (6).
    """

    compile_seconds: float | None = 10.0
    grammar_size: int = 2_000_000
    regex_states: int = 20_000
    counted_states: int = 128
    completion_bytes: int = 1 << 16
    cache_bytes: int = 256 << 20
    schema_depth: int = 256
    schema_refs: int = 64
    one_of_branches: int = 64
    one_of_terms: int = 64
    complement_terms: int = 64
    all_of_terms: int = 128
    dependent_schemas: int = 4
    object_states: int = 50_000
    optional_keys: int = 2048
    any_order_keys: int = 12
    key_patterns: int = 12
    key_regions: int = 64
    linear_items: int = 64
    unique_values: int = 16
    unique_states: int = 2048
    modulus: int = 9
    last_digit_states: int = 1_000
    divisor_fraction_bits: int = 6

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name == "compile_seconds":
                if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                          or not value > 0):
                    raise ValueError(f"compile_seconds must be a positive number or None, got {value!r}")
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{field.name} must be a non-negative integer, got {value!r}")


DEFAULT_LIMITS = Limits()


class _Active:
    __slots__ = ("limits", "deadline")

    def __init__(self, limits: Limits, deadline: float | None) -> None:
        self.limits = limits
        self.deadline = deadline


_ACTIVE: contextvars.ContextVar[_Active] = contextvars.ContextVar("grammar_decode_limits",
                                                                  default=_Active(DEFAULT_LIMITS, None))


def active() -> Limits:
    """The limits in force in this thread (or task): the compile's, else the defaults."""
    return _ACTIVE.get().limits


@contextmanager
def applied(limits: Limits, timed: bool = False) -> Iterator[None]:
    """Make ``limits`` the active ones for the block; with ``timed``, start its compile clock
    (``check_deadline`` raises once ``compile_seconds`` have passed). A timed block inside another
    keeps the earlier deadline when it comes first."""
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a grammar_decode.Limits, not {type(limits).__name__}")
    outer = _ACTIVE.get()
    deadline = outer.deadline
    if timed and limits.compile_seconds is not None:
        mine = time.monotonic() + limits.compile_seconds
        deadline = mine if deadline is None else min(deadline, mine)
    token = _ACTIVE.set(_Active(limits, deadline))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def check_deadline() -> None:
    """``CompileTimeout`` when the active compile has run past its ``compile_seconds``."""
    state = _ACTIVE.get()
    if state.deadline is not None and time.monotonic() > state.deadline:
        raise CompileTimeout(state.limits.compile_seconds)
