"""The vocabulary trie's per-node token index: the CSR lists and the one-token column the compiled
walk reads agree, duplicates (tokens with identical bytes) included."""

from __future__ import annotations

import numpy as np

from grammar_decode.masking import walk
from grammar_decode.vocab.trie import TokenTrie

TOKENS = [b"a", b"ab", b"ab", b"b", b"abc", b"", b"c", b"ab"]


def test_node_token_agrees_with_the_index() -> None:
    members = np.array([len(t) > 0 for t in TOKENS])
    trie = TokenTrie(TOKENS, members)
    for node in range(len(trie)):
        spelled = trie.node_token_ids[trie.node_token_start[node]:trie.node_token_start[node + 1]].tolist()
        expected = -1 if not spelled else (spelled[0] if len(spelled) == 1 else -2)
        assert trie.node_token[node] == expected, node
    assert sorted(trie.tokens_at([int(trie.token_node[1])]).tolist()) == [1, 2, 7]


def test_the_kernel_sets_every_token_of_a_shared_node() -> None:
    """A node spelling several tokens (-2 in node_token) has all of them set in the mask."""
    members = np.array([len(t) > 0 for t in TOKENS])
    trie = TokenTrie(TOKENS, members)
    byte, depth, end = trie.arrays()
    table = np.full(256, -1 + 2, dtype=np.int32)  # one lexer state; DEAD everywhere but a, b
    table[ord("a")] = table[ord("b")] = 0 + 2
    accepts = np.zeros(1, dtype=np.uint8)
    bits = np.zeros(1, dtype=np.uint8)
    nodes, _bounds, _reached = walk._walk.lexeme_part(byte, depth, end, table, accepts, 0, trie.max_depth, None,
                                                      None, bits, trie.node_token_start, trie.node_token_ids,
                                                      trie.node_token, None, None)
    assert nodes is None  # the tokens went into bits
    allowed = [t for t in range(len(TOKENS)) if bits[t >> 3] >> (t & 7) & 1]
    assert allowed == [0, 1, 2, 3, 7]  # a, ab (three times), b; not abc (c is dead), not c
