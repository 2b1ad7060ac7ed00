"""Bytes in, viable-prefix answers out: the lexer and the parser joined.

A recognizer state is ``(lex, parse, fresh)``: the lexer state of the lexeme being read, the
parse of the lexemes before it, and whether no byte of the current lexeme has been read yet.
A byte either extends the current lexeme (the lexer steps) or, when the lexer cannot take it,
ends the lexeme there (maximal munch) and starts the next one: the parse scans the lexemes that
matched, and the byte is offered to the lexer started on what that parse expects next.

A lexeme that nothing can extend (a lexer state with no outgoing byte: ``{``, ``,``, a closed
string) ends at once: the step returns the fresh state after it rather than the closed lexer
state. Both describe the same futures; the fresh form is shared by every lexeme and parse that
leads to the same expectation, so its mask comes from the per-lexer-state cache instead of a
boundary walk per parse.

Viable means completable: a state ``step`` returns always has some completion that the
recognizer accepts, because the lexer has no dead states, every lexeme it starts is one the parse
expects, and the rewritten grammar has only productive symbols. (Maximal munch is the one caveat,
for grammars where a lexeme can be followed by text that would extend it; the front ends keep
such lexemes apart.)
"""

from __future__ import annotations

from typing import Iterable, Union

from ..limits import check_deadline
from ..ir.grammar import Grammar
from .lexer import DEAD, Lexer
from .parser import ParseState
from .parser_compiled import CompiledParser, new_parser

State = tuple[int, ParseState, bool]

#: Whether a compiled parse state's lexer start is looked up by its origins key
#: (``ParseState.origins_key``); tests turn it off to compare with ``Lexer.start``.
_STARTS_BY_KEY = True
#: Tests only: 1 builds the origins keys leaving the last origin out (a deliberately broken key).
_ORIGINS_MUTATION = 0


class Recognizer:
    """Lexer and parser of one grammar; vocabulary-independent, shared by every matcher."""

    def __init__(self, grammar: Grammar, max_size: int | None = None) -> None:
        self.grammar = grammar
        self.exprs = grammar.exprs
        self.lexer = Lexer(grammar.exprs, grammar.lexeme_exprs, grammar.guards)
        self.parser = new_parser(grammar, max_size)
        #: whether parse states give their expected lexemes' origins as a key (the compiled
        #: parser: ``ParseState.origins_key``), so a new lexer start is one dict lookup
        self._starts_by_key = _STARTS_BY_KEY and isinstance(self.parser, CompiledParser)
        if self._starts_by_key:
            self.parser.set_origins(self.lexer.origin_of, _ORIGINS_MUTATION)
        check_deadline()
        self.initial: State = self.boundary(self.parser.initial)
        check_deadline()

    def lexer_start(self, parse: ParseState) -> int:
        """The lexer state that begins the lexeme after ``parse`` (cached on the parse state: its
        parser is this recognizer's own)."""
        found = parse.lexer_start
        if found is None:
            found = parse.lexer_start = self.lexer.start_key(parse.origins_key) if self._starts_by_key \
                else self.lexer.start(parse.expected)
        return found

    def boundary(self, parse: ParseState) -> State:
        return (self.lexer_start(parse), parse, True)

    def restart(self, lex: int, parse: ParseState) -> tuple[ParseState | None, int]:
        """Where the lexeme ends if it ends in lexer state ``lex`` (begun after ``parse``): the
        parse once it is read and the lexer state that begins the next lexeme; ``(None, DEAD)``
        when no lexeme matches there or the parse cannot take it."""
        matched = self.lexer.accepting[lex]
        after = parse.scan(matched) if matched else None
        return (None, DEAD) if after is None else (after, self.lexer_start(after))

    def step(self, state: State, byte: int) -> State | None:
        """The state after ``byte``, or None when no completion can follow."""
        lex, parse, fresh = state
        if lex == DEAD:
            return None
        lexer = self.lexer
        nxt = lexer.step(lex, byte)
        if nxt == DEAD:
            if fresh:  # no byte read yet: a fresh lexer state never matches (lexemes are never empty)
                return None
            parse, restart = self.restart(lex, parse)  # type: ignore[assignment]
            nxt = DEAD if restart == DEAD else lexer.step(restart, byte)
            if nxt == DEAD:
                return None
        if lexer.closed[nxt]:
            after = parse.scan(lexer.accepting[nxt])
            return None if after is None else (self.lexer_start(after), after, True)
        return (nxt, parse, False)

    def feed(self, state: State | None, data: Iterable[int]) -> State | None:
        for byte in data:
            if state is None:
                return None
            state = self.step(state, byte)
        return state

    def finish(self, state: State) -> ParseState | None:
        """The parse once the current lexeme ends here (the state itself when none is open)."""
        lex, parse, fresh = state
        return parse if fresh else self.restart(lex, parse)[0]

    def is_accepting(self, state: State) -> bool:
        """Whether the bytes read so far form a complete sentence: ``finish`` without the lexer
        start after the lexeme, which telling does not need (a mask asks this on every miss)."""
        lex, parse, fresh = state
        if fresh:
            return parse.accepting
        matched = self.lexer.accepting[lex]
        after = parse.scan(matched) if matched else None
        return after is not None and after.accepting

    def accepts(self, data: Union[bytes, bytearray]) -> bool:
        state = self.feed(self.initial, data)
        return state is not None and self.is_accepting(state)

    def accepts_prefix(self, data: Union[bytes, bytearray]) -> bool:
        return self.feed(self.initial, data) is not None
