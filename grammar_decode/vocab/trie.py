"""Prefix trie over a vocabulary, stored as flat arrays in depth-first order.

Node 0 is the root (the empty prefix). For node ``i >= 1``: ``byte[i]`` is the byte on the edge
from its parent, ``depth[i]`` its distance from the root, ``end[i]`` the index just past its
subtree. A walk is one loop over node indices; rejecting a byte skips the subtree with
``i = end[i]``. Tokens that share a prefix share its nodes, and tokens with identical bytes share
one node. Built once per vocabulary, O(total token bytes).
"""

from __future__ import annotations

import numpy as np


class TokenTrie:
    """Flat DFS trie over a subset of a vocabulary's tokens.

    Attributes:
        byte, depth, end: per-node tuples (indexing them from Python is faster than indexing
            numpy arrays; unlike lists, tuples of ints stop being traversed by the garbage
            collector, which would otherwise walk 1.8 million slots on Gemma 3 at every full
            collection).
        token_node: numpy int array, for each token id the node spelling it (0 if not in the trie).
        node_token_start, node_token_ids: the tokens spelled at node j are
            ``node_token_ids[node_token_start[j]:node_token_start[j + 1]]`` (int64).
        node_token: int32 per node, the token spelled there where it is one, -1 where none, -2
            where several.
    """

    def __init__(self, tokens: list[bytes], members: np.ndarray) -> None:
        order = sorted((tokens[i], i) for i in np.flatnonzero(members).tolist())
        byte: list[int] = [0]
        depth: list[int] = [0]
        end: list[int] = [0]
        token_node = np.zeros(len(tokens), dtype=np.int64)
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
        self.byte = tuple(byte)
        self.depth = tuple(depth)
        self.end = tuple(end)
        self.token_node = token_node
        self.max_depth = max(depth)
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        # CSR index node -> token ids spelled exactly there, so a mask is built from the allowed
        # nodes alone (cost proportional to them, not to the trie or the vocabulary).
        members_ids = np.flatnonzero(members)
        by_node = members_ids[np.argsort(token_node[members_ids], kind="stable")]
        counts = np.bincount(token_node[members_ids], minlength=len(byte))
        self.node_token_start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.node_token_ids = by_node.astype(np.int64)
        # per node the one token spelled there (-1: none; -2: several, read from the index above):
        # the compiled walk reads one int32 per node instead of two int64 and a loop
        node_token = np.where(counts == 0, -1, -2).astype(np.int32)
        nodes_of = token_node[members_ids]
        single = counts[nodes_of] == 1
        node_token[nodes_of[single]] = members_ids[single]
        node_token.flags.writeable = False
        self.node_token = node_token

    def __len__(self) -> int:
        return len(self.byte)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``byte``, ``depth``, ``end`` as contiguous uint8, int32, int32 arrays (for compiled
        walks), made on first use and kept (~9 bytes per node)."""
        found = self._arrays
        if found is None:
            found = self._arrays = (np.array(self.byte, dtype=np.uint8), np.array(self.depth, dtype=np.int32),
                                    np.array(self.end, dtype=np.int32))
            for array in found:
                array.flags.writeable = False
        return found

    def tokens_at(self, nodes: "list[int] | np.ndarray") -> np.ndarray:
        """Token ids spelled exactly at ``nodes`` (each a node index >= 1). O(len(nodes) + result)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        starts = self.node_token_start[nodes]
        counts = self.node_token_start[nodes + 1] - starts
        total = int(counts.sum())
        if total == 0:
            return np.empty(0, dtype=np.int64)
        # position k of the result reads node_token_ids[starts[j] + (k - first output of j)]
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        return self.node_token_ids[offsets + np.arange(total)]
