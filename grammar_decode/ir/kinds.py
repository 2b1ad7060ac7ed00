"""The kinds of expression nodes and the fixed ids every ``ExprSet`` starts with (shared by the
expression store and its analyses)."""

#: Kinds of nodes.
NOTHING_KIND, EPSILON_KIND, BYTES_KIND, CONCAT_KIND, OR_KIND, AND_KIND, NOT_KIND, REPEAT_KIND, LITERAL_KIND = range(9)

#: Literals at least this long are one ``LITERAL_KIND`` node, ``(data, start)``: the bytes
#: ``data[start:]``, whose derivative is the same ``data`` one byte on (O(1) per byte, where a
#: concatenation of byte sets would rebuild its tail: O(length) per byte, O(length²) per text).
LONG_LITERAL = 16

NOTHING = 0  #: the empty language ∅
EPSILON = 1  #: the language of the empty string only
ANYTHING = 2  #: every byte string (¬∅)

#: Every byte, as a 256-bit set.
ALL_BYTES = (1 << 256) - 1
