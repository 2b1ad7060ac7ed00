"""Prefix trie over a vocabulary, stored as flat arrays in depth-first order.

Node 0 is the root (the empty prefix). For node ``i >= 1``: ``byte[i]`` is the byte on the edge
from its parent, ``depth[i]`` its distance from the root, ``end[i]`` the index just past its
subtree. A walk is one loop over node indices; rejecting a byte skips the subtree with
``i = end[i]``. Tokens that share a prefix share its nodes, and tokens with identical bytes share
one node. Built once per vocabulary, O(total token bytes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .vocab import Vocabulary


class TokenTrie:
    """Flat DFS trie over the ordinary tokens of a vocabulary (special, EOS and empty excluded).

    Attributes:
        byte, depth, end: per-node lists (plain lists: indexing them from Python is faster than
            indexing numpy arrays).
        token_node: numpy int array, for each token id the node spelling it (0 if excluded).
    """

    def __init__(self, vocab: "Vocabulary") -> None:
        ordinary = vocab.ordinary_mask()
        tokens = vocab.tokens
        order = sorted((tokens[i], i) for i in np.flatnonzero(ordinary).tolist())
        byte: list[int] = [0]
        depth: list[int] = [0]
        end: list[int] = [0]
        token_node = np.zeros(len(vocab), dtype=np.int64)
        path: list[int] = [0]  # node index per depth along the current prefix
        previous = b""
        for text, token_id in order:
            common = 0
            limit = min(len(previous), len(text))
            while common < limit and previous[common] == text[common]:
                common += 1
            for node in path[common + 1:]:
                end[node] = len(byte)
            del path[common + 1:]
            for position in range(common, len(text)):
                path.append(len(byte))
                byte.append(text[position])
                depth.append(position + 1)
                end.append(0)
            token_node[token_id] = path[-1]
            previous = text
        for node in path:
            end[node] = len(byte)
        self.byte = byte
        self.depth = depth
        self.end = end
        self.token_node = token_node
        self.max_depth = max(depth)
        self.vocab_size = len(vocab)

    def __len__(self) -> int:
        return len(self.byte)
