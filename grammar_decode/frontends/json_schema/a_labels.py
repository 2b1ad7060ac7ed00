"""Host names whose A-labels decode to valid U-labels: the guard of ``format: hostname``.

An A-label is a host label that begins with ``xn--`` (in any case): the ASCII form of an
internationalised label, Punycode (RFC 3492) after the prefix. It is valid only where it decodes
to a U-label that IDNA2008 allows (RFC 5891, 5892, 5893: every code point PVALID or allowed in
its context, the Bidi rule, no leading combining mark, no ``--`` in the third and fourth
positions) and is that U-label's own encoding. Which Punycode texts do is not a regular language,
so the hostname expression admits every A-label of letters, digits and hyphens and this guard
checks each one as the lexer reads it (``ir.grammar.LexemeGuard``). The check is the ``idna``
package's (``idna.decode``, then ``idna.encode`` back to the same label), which agrees with
every A-label case of the JSON-Schema-Test-Suite.

No dead end: while an A-label is being written, the text must have a *witness*, a way to finish
the label as a valid A-label that the expression also allows. The witness of a label ``xn--q``
is the encoding of ``q + é`` (the Punycode of a string begins with its ASCII characters, then a
hyphen, so it extends ``xn--q``); a text is vouched for by itself when valid and by the witness
of every prefix of its label that extends it. So one that was vouched for by a witness ``w`` stays vouched for by ``w`` as the model writes
``w`` on: every prefix along a witness is admitted. Labels a witness cannot reach are refused:
those longer than about 54 characters (a witness adds a hyphen and 3-4 Punycode digits, and a
label holds 63), and an escape (``\\u0061``) after the ``xn--``.

Tags (the guard's state, kept by the lexer beside the expression): ``START`` before the opening
quote, ``END`` after the closing one, ``IDLE`` inside a label that cannot become an A-label,
``("L", text)`` inside a label whose text (lower-cased) is a prefix of ``xn--`` or begins with it,
``("E", before, buffer)`` inside a JSON escape. Without the ``idna`` package no A-label is
admitted (``formats``: the hostname expression then excludes them).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Hashable, Iterable, Iterator

try:
    import idna
except ImportError:  # pragma: no cover - idna is a dependency; without it no A-label is written
    idna = None

START = "start"
END = "end"
IDLE = "idle"
_PREFIX = b"xn--"
_LDH = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")
_SIMPLE_ESCAPES = {ord('"'): ord('"'), ord("\\"): ord("\\"), ord("/"): ord("/"), ord("b"): 8, ord("f"): 12,
                   ord("n"): 10, ord("r"): 13, ord("t"): 9}
_HEX = frozenset(b"0123456789abcdefABCDEF")
_BIT = [1 << byte for byte in range(256)]
#: What ``step`` tells apart where no A-label is begun: the closing quote, an escape, a dot.
_IDLE_SPLITS = (_BIT[0x22], _BIT[0x5C], _BIT[0x2E])
#: The character a witness appends to a label's ASCII part (PVALID, left-to-right: a label of
#: letters, digits, inner hyphens and it is a valid U-label).
_WITNESS_TAIL = "\u00e9"
_UNKNOWN = object()
#: Memo entries per table before it is cleared (each a label and a short byte string).
_MEMO_ENTRIES = 1 << 17


def available() -> bool:
    """Whether A-labels can be checked here (the ``idna`` package is installed)."""
    return idna is not None


def _lower(byte: int) -> int:
    return byte | 0x20 if 0x41 <= byte <= 0x5A else byte


def _relevant(text: bytes) -> bool:
    """Whether a label beginning ``text`` is, or may still become, an A-label."""
    return text.startswith(_PREFIX) or _PREFIX.startswith(text)


class ALabelGuard:
    """The ``LexemeGuard`` of host names (module docstring). One instance serves every grammar:
    its memo tables are written whole, so threads may share it."""

    start: Hashable = START

    def __init__(self) -> None:
        self._valid: dict[bytes, bool] = {}
        self._witness: dict[bytes, bytes | None] = {}
        self._lock = threading.Lock()

    # -- the judgement on one label ------------------------------------------------------------

    def valid(self, label: bytes) -> bool:
        """Whether ``label`` (lower case, beginning ``xn--``) is a valid A-label: it decodes to a
        U-label IDNA2008 allows, whose encoding is ``label`` again."""
        found = self._valid.get(label)
        if found is None:
            found = False
            if idna is not None:
                try:
                    found = idna.encode(idna.decode(label)) == label
                except (idna.IDNAError, UnicodeError, ValueError):
                    found = False
            self._remember(self._valid, label, found)
        return found

    def witness(self, label: bytes) -> bytes | None:
        """The valid A-label that extends ``label`` (lower case, ``xn--q``) by encoding ``q + é``,
        or None where ``q + é`` is no valid U-label. Decided without decoding: letters, digits
        and hyphens and ``é`` are PVALID and left-to-right (no Bidi rule, no context rule, NFC),
        so only the hyphen rules can fail (``q`` begins with one, or holds ``--`` third and
        fourth); the Punycode is ``q``, a hyphen, then the insertion's digits (RFC 3492).
        ``test_a_labels`` checks this against ``idna``. Memoised."""
        found = self._witness.get(label, _UNKNOWN)
        if found is _UNKNOWN:
            ascii_part = label[len(_PREFIX):]
            found = None
            if not ascii_part.startswith(b"-") and ascii_part[2:4] != b"--":
                found = _PREFIX + (ascii_part.decode("ascii") + _WITNESS_TAIL).encode("punycode")
            self._remember(self._witness, label, found)
        return found  # type: ignore[return-value]

    def candidates(self, text: bytes) -> Iterator[bytes]:
        """The ways to finish the A-label begun ``text`` (lower case, beginning ``xn--``) as a
        valid one: the rest of ``witness(r)`` for each prefix ``r`` of ``text`` from ``xn--`` on
        whose witness extends ``text`` (``text``'s own first, the cheapest to vouch with), and
        nothing at all where ``text`` is valid itself. Lazily: a caller stops at the first that
        suits it."""
        own = self.witness(text)
        if own is not None:
            yield own[len(text):]
        for k in range(len(text) - 1, len(_PREFIX) - 1, -1):
            found = self.witness(text[:k])
            if found is not None and found != own and found.startswith(text) and len(found) > len(text):
                yield found[len(text):]
        if self.valid(text):
            yield b""

    def _remember(self, table: dict[bytes, Any], key: bytes, value: Any) -> None:
        with self._lock:
            if len(table) >= _MEMO_ENTRIES:
                table.clear()
            table[key] = value

    # -- the lexer's tags ----------------------------------------------------------------------

    def step(self, tag: Hashable, byte: int) -> Hashable | None:
        if tag == START:
            return ("L", b"") if byte == 0x22 else None
        if tag == END:
            return None
        if isinstance(tag, tuple) and tag[0] == "E":
            _kind, before, buffer = tag
            if not buffer:
                if byte == 0x75:  # \u
                    return ("E", before, b"u")
                decoded = _SIMPLE_ESCAPES.get(byte)
                return None if decoded is None else self._char(before, decoded)
            if byte not in _HEX:
                return None
            buffer += bytes((byte,))
            return ("E", before, buffer) if len(buffer) < 5 else self._char(before, int(buffer[1:], 16))
        if byte == 0x22:  # the closing quote
            return END if self._label_ends(tag) else None
        if byte == 0x5C:  # an escape: refused after an A-label's prefix (the witnesses write none)
            return None if self._in_a_label(tag) else ("E", tag, b"")
        return self._char(tag, byte)

    def splits(self, tag: Hashable) -> tuple[int, ...] | None:
        """Byte sets that ``step`` tells apart at ``tag`` (bytes in the same ones step alike;
        ``LexemeGuard``): outside an A-label the quote, the backslash, the dot and the bytes of the
        next letter of ``xn--`` (either case) where the label may still become one; every other
        byte steps to ``IDLE`` (or to nothing, at the end). None (every byte apart) inside an
        escape or an A-label, whose letters are all remembered."""
        if tag == END:
            return ()
        if tag == START:
            return (_BIT[0x22],)
        if tag == IDLE:
            return _IDLE_SPLITS
        if isinstance(tag, tuple) and tag[0] == "L" and not self._in_a_label(tag):
            nxt = _PREFIX[len(tag[1])]  # a proper prefix of xn--: its next letter keeps it relevant
            return _IDLE_SPLITS + (_BIT[nxt] | _BIT[nxt & ~0x20 if 0x61 <= nxt <= 0x7A else nxt],)
        return None

    def _char(self, tag: Hashable, char: int) -> Hashable | None:
        """The tag after the character ``char`` (a code point) of the host name."""
        if char == 0x2E:  # a dot ends the label
            return ("L", b"") if self._label_ends(tag) else None
        if char < 0x80 and char in _LDH:
            if tag == IDLE:
                return IDLE
            text = tag[1] + bytes((_lower(char),))  # type: ignore[index]
            return ("L", text) if _relevant(text) else IDLE
        return None if self._in_a_label(tag) else IDLE

    @staticmethod
    def _in_a_label(tag: Hashable) -> bool:
        return isinstance(tag, tuple) and tag[0] == "L" and tag[1].startswith(_PREFIX)

    def _label_ends(self, tag: Hashable) -> bool:
        return not self._in_a_label(tag) or self.valid(tag[1])  # type: ignore[index]

    def complete(self, tag: Hashable) -> bool:
        return tag == END

    def completions(self, tag: Hashable) -> Iterable[bytes] | None:
        if not self._in_a_label(tag):
            return None
        return (rest + end for rest in self.candidates(tag[1]) for end in (b".", b'"'))  # type: ignore[index]

    # -- the reference's judgement, from the whole text ----------------------------------------

    def text_ok(self, text: bytes, complete: bool, alive: Callable[[bytes], bool]) -> bool:
        """The tags' judgement read off ``text`` at once: every A-label ended so far is valid and
        written without escapes after its ``xn--``; the one being written has a candidate that
        ``alive`` admits."""
        if not text.startswith(b'"'):
            return False
        chars: list[tuple[int, bool]] = []  # (code point, written as an escape)
        i, n, closed = 1, len(text), False
        while i < n:
            byte = text[i]
            if byte == 0x22:
                closed = True
                if i != n - 1:
                    return False
                break
            if byte == 0x5C:
                if i + 1 >= n:
                    chars.append((-1, True))  # an escape begun
                    break
                code = text[i + 1]
                if code == 0x75:
                    digits = text[i + 2:i + 6]
                    if not all(d in _HEX for d in digits):
                        return False
                    if len(digits) < 4:
                        chars.append((-1, True))
                        break
                    chars.append((int(digits, 16), True))
                    i += 6
                    continue
                if code not in _SIMPLE_ESCAPES:
                    return False
                chars.append((_SIMPLE_ESCAPES[code], True))
                i += 2
                continue
            chars.append((byte, False))
            i += 1
        if complete != closed:
            return False
        labels: list[list[tuple[int, bool]]] = [[]]
        for char in chars:
            if char[0] == 0x2E:
                labels.append([])
            else:
                labels[-1].append(char)
        for index, label in enumerate(labels):
            ended = complete or index < len(labels) - 1
            if len(label) < 4 or not all(0 <= c < 0x80 for c, _e in label[:4]):
                continue
            head = bytes(_lower(c) for c, _e in label[:4])
            if head != _PREFIX:
                continue  # not an A-label (a prefix of one still being written needs nothing)
            rest = label[4:]
            if any(escaped or not (0 <= c < 0x80 and c in _LDH) for c, escaped in rest):
                return False
            word = head + bytes(_lower(c) for c, _e in rest)
            if ended:
                if not self.valid(word):
                    return False
            elif not any(alive(candidate + end) for candidate in self.candidates(word) for end in (b".", b'"')):
                return False
        return True


#: The one guard every hostname lexeme shares.
A_LABELS = ALabelGuard()
