"""Byte-level automaton over the node tree.

A *state* is a tuple of frames, innermost last. A frame is a small tuple of ints whose first item
is the index of the node that owns it; the rest is that node's local position. States are
immutable and hashable, so they are also the mask-cache keys: two states that compare equal must
have identical futures (identical sets of accepted continuations), which every ``_step`` below is
written to preserve.

A step consumes one byte. The innermost frame answers with one of:

* a new frame: the byte was consumed;
* ``_DONE``: the byte was consumed and closed the frame (``"``, ``}``, ``]``, last literal byte);
  the frame is popped;
* ``_POP``: the frame is complete but cannot take this byte (a number followed by ``,``); the
  frame is popped and the byte is offered to the parent;
* ``_Push(frame, child)``: the parent moves to the frame it will be in once the child value is
  complete, and the byte is offered to the child's start frame;
* ``None``: the byte is rejected.

Every state ``step`` returns can still be completed to an accepted document (there are no dead
states), so "the step succeeded" and "the prefix is viable" are the same thing. That is what lets
the masker walk bytes with early exit and what makes ``min_bytes`` finite everywhere.

Whitespace lives only in container frames (between structural tokens), as a run counter bounded by
``max_whitespace``; the top level admits none, so a complete document admits no further byte.
"""

from __future__ import annotations

from typing import Iterable, Union

from .schema import ArrayNode, LiteralsNode, Node, NumberNode, ObjectNode, StringNode

Frame = tuple  # tuple[int, ...]: (node index, local fields...)
State = tuple  # tuple[Frame, ...]: innermost frame last

WHITESPACE = frozenset(b" \t\n\r")

#: Most digits before the fraction, for ``integer`` and ``number``. Twenty digits hold every 64-bit
#: integer, signed or not; the cap keeps every accepted number finite as a double and within
#: Python's 4,300-digit limit for ``json.loads``, and stops a model from spending its budget on
#: an endless run of digits.
INTEGER_DIGITS_MAX = 20

#: Most exponent digits a ``number`` may carry. Two, not three: ``1e999`` is valid JSON syntax but
#: ``float("1e999")`` is ``inf``, which is not a number any consumer wants. With at most two exponent
#: digits (and ``INTEGER_DIGITS_MAX`` before the point), every accepted number is a finite double.
EXPONENT_DIGITS_MAX = 2

_DONE = "done"
_POP = "pop"


class _Push:
    __slots__ = ("frame", "child")

    def __init__(self, frame: Frame, child: int) -> None:
        self.frame = frame
        self.child = child


_Result = Union[Frame, str, _Push, None]


class _Kind:
    """Behaviour of one node: how its frames consume bytes and how far they are from complete."""

    index: int

    def start(self) -> Frame:
        raise NotImplementedError

    def step(self, frame: Frame, byte: int) -> _Result:
        raise NotImplementedError

    def completion(self, frame: Frame) -> bytes:
        """The canonical shortest bytes completing this frame. Canonical means consistent: after
        its first byte, the completion of the new frame(s) is the rest of it. That is what lets a
        shortest tokenization of it serve as the closing budget's measure."""
        raise NotImplementedError

    min_text: bytes  # canonical shortest complete value of this node

    def finishable(self, frame: Frame) -> bool:
        """True when the frame is a complete value that is only waiting for a following byte."""
        return False


class _Document(_Kind):
    """The root frame: (0, 0) before the value, (0, 1) once it has been pushed."""

    def __init__(self, root: int, root_min_text: bytes) -> None:
        self.index = 0
        self.root = root
        self.min_text = root_min_text

    def start(self) -> Frame:
        return (0, 0)

    def step(self, frame: Frame, byte: int) -> _Result:
        if frame[1] == 0:
            return _Push((0, 1), self.root)
        return None  # nothing may follow a complete document, not even whitespace

    def completion(self, frame: Frame) -> bytes:
        return self.min_text if frame[1] == 0 else b""


class _Object(_Kind):
    """Frame ``(idx, phase, key_index, ws)``; keys come in schema order. Each key is a literal
    child (its accepted spellings), pushed at its opening quote."""

    START, KEY_START, AFTER_KEY, AFTER_COLON, AFTER_VALUE = range(5)

    def __init__(self, index: int, keys: list[int], key_text: list[bytes], values: list[int],
                 value_text: list[bytes], max_ws: int) -> None:
        self.index = index
        self.keys = keys
        self.values = values
        self.max_ws = max_ws
        n = len(keys)
        # tail[i]: what finishes the object once keys < i are done and their values complete:
        # the comma before key i (if any), the remaining members, and the closing brace.
        tail = [b"}"] * (n + 1)
        for i in range(n - 1, -1, -1):
            tail[i] = b"," + key_text[i] + b":" + value_text[i] + tail[i + 1]
        self.tail = tail
        self.value_text = value_text
        # '{' takes the place of the first key's comma
        self.min_text = b"{}" if n == 0 else b"{" + tail[0][1:]

    def start(self) -> Frame:
        return (self.index, self.START, 0, 0)

    def step(self, frame: Frame, byte: int) -> _Result:
        _, phase, i, ws = frame
        idx = self.index
        if phase == self.START:
            return (idx, self.KEY_START, 0, 0) if byte == 0x7B else None
        if byte in WHITESPACE:
            return (idx, phase, i, ws + 1) if ws < self.max_ws else None
        if phase == self.KEY_START:
            if i == len(self.keys):
                return _DONE if byte == 0x7D else None
            return _Push((idx, self.AFTER_KEY, i, 0), self.keys[i])
        if phase == self.AFTER_KEY:
            return (idx, self.AFTER_COLON, i, 0) if byte == 0x3A else None
        if phase == self.AFTER_COLON:
            return _Push((idx, self.AFTER_VALUE, i, 0), self.values[i])
        # AFTER_VALUE
        if i + 1 == len(self.keys):
            return _DONE if byte == 0x7D else None
        return (idx, self.KEY_START, i + 1, 0) if byte == 0x2C else None

    def completion(self, frame: Frame) -> bytes:
        _, phase, i, _ws = frame
        if phase == self.START:
            return self.min_text
        if phase == self.KEY_START:
            # the comma (or the opening brace) before key i is already written
            return b"}" if i == len(self.keys) else self.tail[i][1:]
        if phase == self.AFTER_KEY:
            return b":" + self.value_text[i] + self.tail[i + 1]
        if phase == self.AFTER_COLON:
            return self.value_text[i] + self.tail[i + 1]
        return self.tail[i + 1]


class _Array(_Kind):
    """Frame ``(idx, phase, count, ws)``; ``count`` = items started so far (clamped, see below)."""

    START, OPEN, AFTER_VALUE, AFTER_COMMA = range(4)

    def __init__(self, index: int, item: int, item_text: bytes, min_items: int, max_items: int | None,
                 max_ws: int) -> None:
        self.index = index
        self.item = item
        self.item_text = item_text
        self.min_items = min_items
        self.max_items = max_items
        self.max_ws = max_ws
        self.min_text = b"[" + b",".join([item_text] * min_items) + b"]"

    def _count_key(self, count: int) -> int:
        # Cache-key clamp. Every clamp in a state key must be justified against every threshold the
        # transitions test. The transitions test `count >= min_items` (may close) and
        # `count < max_items` (may add); `rest` tests `min_items - count`. With max_items set, the
        # count is kept exact (it never exceeds max_items, so the key space stays finite). Without
        # max_items, only thresholds at min_items remain, so every count >= min_items behaves
        # identically and may share one key. Clamping below a threshold (e.g. to 2 when
        # max_items == 3) would merge "2 items, one more allowed" with "3 items, must close".
        if self.max_items is None and count > self.min_items:
            return self.min_items
        return count

    def start(self) -> Frame:
        return (self.index, self.START, 0, 0)

    def step(self, frame: Frame, byte: int) -> _Result:
        _, phase, count, ws = frame
        idx = self.index
        if phase == self.START:
            return (idx, self.OPEN, 0, 0) if byte == 0x5B else None
        if byte in WHITESPACE:
            return (idx, phase, count, ws + 1) if ws < self.max_ws else None
        if phase == self.AFTER_VALUE:
            if byte == 0x5D:
                return _DONE if count >= self.min_items else None
            if byte == 0x2C and (self.max_items is None or count < self.max_items):
                return (idx, self.AFTER_COMMA, count, 0)
            return None
        if phase == self.OPEN and byte == 0x5D:
            return _DONE if self.min_items == 0 else None
        # OPEN or AFTER_COMMA: the byte must start an item. AFTER_COMMA never accepts ']'
        # (no trailing comma): ']' cannot start any value, so the child rejects it.
        if self.max_items == 0:
            return None
        return _Push((idx, self.AFTER_VALUE, self._count_key(count + 1), 0), self.item)

    def _after_value(self, count: int) -> bytes:
        return (b"," + self.item_text) * max(0, self.min_items - count) + b"]"

    def completion(self, frame: Frame) -> bytes:
        _, phase, count, _ws = frame
        if phase == self.START:
            return self.min_text
        if phase == self.OPEN:
            return self.min_text[1:]
        if phase == self.AFTER_COMMA:
            return self.item_text + self._after_value(count + 1)
        return self._after_value(count)


class _String(_Kind):
    """Frame ``(idx, phase, a, b)``: UTF-8 and escapes are validated byte by byte.

    Accepts exactly the UTF-8 encoding of JSON strings: no raw control characters, no overlong
    forms, no surrogate code points, no bytes past U+10FFFF; ``\\u`` escapes of surrogates only as
    a high-low pair.
    """

    START, BODY, UTF8, ESC, U_FIRST, U_AFTER_D, U_REST, PAIR_BACKSLASH, PAIR_U, PAIR_D, PAIR_LOW = range(11)

    def __init__(self, index: int) -> None:
        self.index = index
        self.min_text = b'""'

    def start(self) -> Frame:
        return (self.index, self.START, 0, 0)

    def step(self, frame: Frame, byte: int) -> _Result:
        _, phase, a, b = frame
        idx = self.index
        if phase == self.BODY:
            if byte == 0x22:
                return _DONE
            if byte == 0x5C:
                return (idx, self.ESC, 0, 0)
            if 0x20 <= byte < 0x80:
                return frame
            if 0xC2 <= byte <= 0xDF:
                return (idx, self.UTF8, 1, 0x80BF)
            if byte == 0xE0:
                return (idx, self.UTF8, 2, 0xA0BF)
            if byte == 0xED:
                return (idx, self.UTF8, 2, 0x809F)
            if 0xE1 <= byte <= 0xEF:
                return (idx, self.UTF8, 2, 0x80BF)
            if byte == 0xF0:
                return (idx, self.UTF8, 3, 0x90BF)
            if 0xF1 <= byte <= 0xF3:
                return (idx, self.UTF8, 3, 0x80BF)
            if byte == 0xF4:
                return (idx, self.UTF8, 3, 0x808F)
            return None
        if phase == self.UTF8:
            # a = continuation bytes still expected, b = (lo << 8) | hi for the next one
            if not (b >> 8) <= byte <= (b & 0xFF):
                return None
            return (idx, self.BODY, 0, 0) if a == 1 else (idx, self.UTF8, a - 1, 0x80BF)
        if phase == self.START:
            return (idx, self.BODY, 0, 0) if byte == 0x22 else None
        if phase == self.ESC:
            if byte in b'"\\/bfnrt':
                return (idx, self.BODY, 0, 0)
            return (idx, self.U_FIRST, 0, 0) if byte == 0x75 else None
        hex_value = _hex(byte)
        if phase == self.U_FIRST:
            if hex_value is None:
                return None
            return (idx, self.U_AFTER_D, 0, 0) if hex_value == 0xD else (idx, self.U_REST, 3, 0)
        if phase == self.U_AFTER_D:
            if hex_value is None or hex_value >= 0xC:
                return None  # a low surrogate may only follow a high one
            # b = 1: a high surrogate; its low partner must follow
            return (idx, self.U_REST, 2, 1 if hex_value >= 0x8 else 0)
        if phase == self.U_REST:
            if hex_value is None:
                return None
            if a > 1:
                return (idx, self.U_REST, a - 1, b)
            return (idx, self.PAIR_BACKSLASH, 0, 0) if b else (idx, self.BODY, 0, 0)
        if phase == self.PAIR_BACKSLASH:
            return (idx, self.PAIR_U, 0, 0) if byte == 0x5C else None
        if phase == self.PAIR_U:
            return (idx, self.PAIR_D, 0, 0) if byte == 0x75 else None
        if phase == self.PAIR_D:
            return (idx, self.PAIR_LOW, 0, 0) if hex_value == 0xD else None
        # PAIR_LOW
        if hex_value is None or hex_value < 0xC:
            return None
        return (idx, self.U_REST, 2, 0)

    _COMPLETION = {START: b'""', BODY: b'"', ESC: b'""', U_FIRST: b'0000"', U_AFTER_D: b'000"',
                   PAIR_BACKSLASH: b'\\uDC00"', PAIR_U: b'uDC00"', PAIR_D: b'DC00"', PAIR_LOW: b'C00"'}

    def completion(self, frame: Frame) -> bytes:
        _, phase, a, b = frame
        if phase == self.UTF8:
            # the lowest byte allowed next, then the lowest continuation bytes
            return bytes([b >> 8]) + b"\x80" * (a - 1) + b'"'
        if phase == self.U_REST:
            return b"0" * a + (b'\\uDC00"' if b else b'"')
        return self._COMPLETION[phase]


def _hex(byte: int) -> int | None:
    if 0x30 <= byte <= 0x39:
        return byte - 0x30
    if 0x61 <= byte <= 0x66:
        return byte - 0x57
    if 0x41 <= byte <= 0x46:
        return byte - 0x37
    return None


class _Number(_Kind):
    """Frame ``(idx, phase, digits)``: digits of the integer part (phase INT) or of the exponent
    (phase EXP). RFC 8259 number grammar, no leading zeros, both digit runs capped."""

    START, SIGN, ZERO, INT, FRAC0, FRAC, EXP0, EXP_SIGN, EXP = range(9)
    _FINISHABLE = frozenset({ZERO, INT, FRAC, EXP})
    _COMPLETION = {START: b"0", SIGN: b"0", ZERO: b"", INT: b"", FRAC0: b"0", FRAC: b"", EXP0: b"0",
                   EXP_SIGN: b"0", EXP: b""}

    def __init__(self, index: int, integer: bool) -> None:
        self.index = index
        self.integer = integer
        self.min_text = b"0"

    def start(self) -> Frame:
        return (self.index, self.START, 0)

    def step(self, frame: Frame, byte: int) -> _Result:
        _, phase, digits = frame
        idx = self.index
        is_digit = 0x30 <= byte <= 0x39
        if phase in (self.START, self.SIGN):
            if byte == 0x2D and phase == self.START:
                return (idx, self.SIGN, 0)
            if byte == 0x30:
                return (idx, self.ZERO, 0)
            return (idx, self.INT, 1) if is_digit else None
        if phase in (self.ZERO, self.INT):
            if is_digit and phase == self.INT:
                # the digit count is exact in the key: INTEGER_DIGITS_MAX is its only threshold
                return (idx, self.INT, digits + 1) if digits < INTEGER_DIGITS_MAX else None
            if not self.integer:
                if byte == 0x2E:
                    return (idx, self.FRAC0, 0)
                if byte in (0x65, 0x45):
                    return (idx, self.EXP0, 0)
            return _POP
        if phase in (self.FRAC0, self.FRAC):
            if is_digit:
                return (idx, self.FRAC, 0)
            if phase == self.FRAC:
                return (idx, self.EXP0, 0) if byte in (0x65, 0x45) else _POP
            return None
        if phase in (self.EXP0, self.EXP_SIGN):
            if is_digit:
                return (idx, self.EXP, 1)
            return (idx, self.EXP_SIGN, 0) if phase == self.EXP0 and byte in (0x2B, 0x2D) else None
        # EXP: the digit count is part of the key and never clamped below EXPONENT_DIGITS_MAX,
        # the only threshold this transition tests.
        if is_digit:
            return (idx, self.EXP, digits + 1) if digits < EXPONENT_DIGITS_MAX else None
        return _POP

    def completion(self, frame: Frame) -> bytes:
        return self._COMPLETION[frame[1]]

    def finishable(self, frame: Frame) -> bool:
        return frame[1] in self._FINISHABLE


class _Literals(_Kind):
    """Frame ``(idx, trie_node)``: a byte trie over the allowed JSON texts."""

    def __init__(self, index: int, texts: tuple[bytes, ...]) -> None:
        self.index = index
        children: list[dict[int, int]] = [{}]
        terminal = [False]
        for text in texts:
            node = 0
            for byte in text:
                nxt = children[node].get(byte)
                if nxt is None:
                    nxt = len(children)
                    children[node][byte] = nxt
                    children.append({})
                    terminal.append(False)
                node = nxt
            terminal[node] = True
        # shortest way to a terminal; ties broken by the smaller byte, so it is canonical
        suffix = [b""] * len(children)
        for node in range(len(children) - 1, -1, -1):  # children always have larger indices
            if not terminal[node]:
                suffix[node] = min((bytes([b]) + suffix[c] for b, c in children[node].items()),
                                   key=lambda text: (len(text), text))
        self.children = children
        self.terminal = terminal
        self.suffix = suffix
        self.min_text = suffix[0]

    def start(self) -> Frame:
        return (self.index, 0)

    def step(self, frame: Frame, byte: int) -> _Result:
        node = frame[1]
        nxt = self.children[node].get(byte)
        if nxt is not None:
            # closing eagerly when nothing can extend the text keeps one key per future
            return _DONE if self.terminal[nxt] and not self.children[nxt] else (self.index, nxt)
        return _POP if self.terminal[node] else None

    def completion(self, frame: Frame) -> bytes:
        return self.suffix[frame[1]]

    def finishable(self, frame: Frame) -> bool:
        return self.terminal[frame[1]]


class Automaton:
    """The byte automaton of one compiled schema. Vocabulary-independent; shared by all matchers.

    ``step`` is memoised per (state, byte) in ``rows`` — the mask walks call it once per trie node,
    so after warm-up a transition costs one dict lookup.
    """

    def __init__(self, root: Node, max_whitespace: int) -> None:
        self.max_whitespace = max_whitespace
        self.kinds: list[_Kind] = [None]  # type: ignore[list-item]  # slot 0: the document
        root_index = self._build(root)
        self.kinds[0] = _Document(root_index, self.kinds[root_index].min_text)
        self.initial: State = (self.kinds[0].start(),)
        self.rows: dict[State, dict[int, State | None]] = {}
        self._string_kinds = frozenset(k.index for k in self.kinds if isinstance(k, _String))

    def in_plain_string(self, state: State) -> bool:
        """True between characters of an unconstrained string: there, any run of plain string
        characters (no quote, backslash or control byte; whole UTF-8 sequences) leads back to
        this very state."""
        top = state[-1]
        return top[0] in self._string_kinds and top[1] == _String.BODY

    def _build(self, node: Node) -> int:
        index = len(self.kinds)
        self.kinds.append(None)  # type: ignore[arg-type]  # reserve the slot: parents precede children
        kind: _Kind
        if isinstance(node, ObjectNode):
            keys = [self._build(k) for k in node.keys]
            values = [self._build(v) for v in node.values]
            kind = _Object(index, keys, [self.kinds[k].min_text for k in keys], values,
                           [self.kinds[v].min_text for v in values], self.max_whitespace)
        elif isinstance(node, ArrayNode):
            item = self._build(node.item)
            kind = _Array(index, item, self.kinds[item].min_text, node.min_items, node.max_items,
                          self.max_whitespace)
        elif isinstance(node, StringNode):
            kind = _String(index)
        elif isinstance(node, NumberNode):
            kind = _Number(index, node.integer)
        elif isinstance(node, LiteralsNode):
            kind = _Literals(index, node.compact + (node.spaced if self.max_whitespace else ()))
        else:  # pragma: no cover - the schema compiler only produces the nodes above
            raise TypeError(f"unknown node {node!r}")
        self.kinds[index] = kind
        return index

    # -- transitions ---------------------------------------------------------------------------

    def step_uncached(self, state: State, byte: int) -> State | None:
        """The next state after ``byte``, or None if the byte is rejected. Not memoised."""
        kinds = self.kinds
        frames = list(state)
        while frames:
            top = frames[-1]
            result = kinds[top[0]].step(top, byte)
            if result is None:
                return None
            if isinstance(result, tuple):
                frames[-1] = result
                return tuple(frames)
            if result is _DONE:
                frames.pop()
                return tuple(frames)
            if result is _POP:
                frames.pop()
                continue
            frames[-1] = result.frame
            frames.append(kinds[result.child].start())
        return None  # pragma: no cover - the document frame is never popped

    def step(self, state: State, byte: int) -> State | None:
        """Memoised ``step_uncached``: one dict lookup once warm."""
        row = self.rows.get(state)
        if row is None:
            row = self.rows[state] = {}
        try:
            return row[byte]
        except KeyError:
            nxt = row[byte] = self.step_uncached(state, byte)
            return nxt

    def feed(self, state: State | None, data: Iterable[int]) -> State | None:
        """Feed bytes one at a time; None as soon as one is rejected."""
        for byte in data:
            if state is None:
                return None
            state = self.step(state, byte)
        return state

    # -- completion ----------------------------------------------------------------------------

    def is_accepting(self, state: State) -> bool:
        """True if the bytes fed so far form a complete document."""
        if state[0][1] != 1:
            return False
        kinds = self.kinds
        return all(kinds[f[0]].finishable(f) for f in state[1:])

    def min_bytes(self, state: State) -> int:
        """Fewest bytes that turn ``state`` into a complete document: ``len(completion(state))``,
        O(its length).

        Exact: frames complete independently (a parent's remainder does not depend on how its
        child finished), so the sum of per-frame remainders is the length of a shortest completion.
        """
        return len(self.completion(state))

    def completion(self, state: State) -> bytes:
        """The canonical shortest completion of ``state``: ``len(completion(s)) == min_bytes(s)``,
        and after its first byte the completion is the rest of it (so following it, in any
        tokenization, never makes the remaining completion longer). O(its length)."""
        kinds = self.kinds
        return b"".join(kinds[f[0]].completion(f) for f in reversed(state))
