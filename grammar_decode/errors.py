"""Exceptions raised by grammar-decode.

Error model: bad input (a schema we cannot honour, a malformed vocabulary file) raises when it is
first seen, before any generation starts; API misuse at run time (feeding a token the mask forbids)
raises ``TokenRejected`` and leaves the matcher unchanged.
"""

from __future__ import annotations


class GrammarDecodeError(Exception):
    """Base class of every error this package raises on purpose."""


class SchemaError(GrammarDecodeError, ValueError):
    """The schema is not valid JSON Schema, or admits no document at all."""

    def __init__(self, message: str, pointer: str = "") -> None:
        self.pointer = pointer
        where = pointer or "/"
        super().__init__(f"{message} (at {where})")


class UnsupportedSchemaError(SchemaError):
    """The schema uses a keyword (or a keyword value) that the compiler cannot enforce.

    Attributes:
        keyword: the offending keyword, e.g. ``"pattern"``.
        pointer: JSON pointer of the schema object holding it, e.g. ``"/properties/name"``.
        detail: why it cannot be enforced there ("" when the keyword is unknown).
    """

    def __init__(self, keyword: str, pointer: str, detail: str = "") -> None:
        self.keyword = keyword
        self.detail = detail
        message = f"unsupported JSON Schema keyword {keyword!r}"
        if detail:
            message += f": {detail}"
        super().__init__(message, pointer)


class SchemaWarning(UserWarning):
    """A schema keyword that no supported draft defines, ignored as the annotation validators
    read it, looks like a misspelling of a keyword that would constrain (``anyof`` for
    ``anyOf``): the schema probably says less than its author meant.

    Attributes:
        keyword: the keyword as written, e.g. ``"additionalPropeties"``.
        pointer: JSON pointer of the schema object holding it.
        resembles: the draft keyword it looks like, e.g. ``"additionalProperties"``.
    """

    def __init__(self, keyword: str, pointer: str, resembles: str) -> None:
        self.keyword = keyword
        self.pointer = pointer
        self.resembles = resembles
        super().__init__(f"ignored unknown JSON Schema keyword {keyword!r} at {pointer or '/'}: did you mean "
                         f"{resembles!r}? (no validator reads {keyword!r}, so it constrains nothing)")


class VocabularyError(GrammarDecodeError, ValueError):
    """A vocabulary could not be read, or is inconsistent."""


class TokenRejected(GrammarDecodeError, ValueError):
    """A token was fed that the grammar does not allow in the matcher's current state."""

    def __init__(self, token_id: int, reason: str) -> None:
        self.token_id = token_id
        super().__init__(f"token {token_id} rejected: {reason}")


class GrammarError(GrammarDecodeError, ValueError):
    """A regular expression or grammar is malformed, or admits no text at all."""


class GrammarAdmitsNothing(GrammarError):
    """A grammar (regex, Lark grammar, compiled schema) admits no text at all.

    Attributes:
        depth_limit: the nesting limit within which nothing is admitted, when texts deeper than
            it would exist (None when the grammar admits nothing however deep).
    """

    def __init__(self, message: str, depth_limit: int | None = None) -> None:
        super().__init__(message)
        self.depth_limit = depth_limit


class GrammarTooLarge(GrammarError):
    """A grammar (or a schema's) grows past a size limit while it is compiled or rewritten."""


class RegexTooComplex(GrammarError):
    """A question about a regular expression (emptiness, shortest match) exceeded its search
    budget: the pattern, bounds and sets it combines are too complex to decide exactly here."""


class UnsupportedRegexError(GrammarError):
    """A regular expression uses a construct that cannot be compiled exactly to a finite
    automaton (lookaround, backreferences, word boundaries, possessive repeats, local case flags).

    Attributes:
        construct: what was refused, e.g. ``"lookahead"``.
        pattern: the pattern it appeared in.
    """

    def __init__(self, construct: str, pattern: str, detail: str = "") -> None:
        self.construct = construct
        self.pattern = pattern
        message = f"unsupported in a regular expression: {construct}"
        if detail:
            message += f" ({detail})"
        super().__init__(f"{message}, in {pattern!r}")


class CompileTimeout(GrammarError):
    """Compiling ran past its wall-clock limit (``Limits.compile_seconds``).

    Attributes:
        seconds: the limit that was exceeded.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        super().__init__(f"compiling took longer than its limit of {seconds:g} s (Limits.compile_seconds)")
