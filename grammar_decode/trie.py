"""Prefix trie over a vocabulary, stored as flat arrays in depth-first order.

Node 0 is the root (the empty prefix). For node ``i >= 1``: ``byte[i]`` is the byte on the edge
from its parent, ``depth[i]`` its distance from the root, ``end[i]`` the index just past its
subtree. A walk is one loop over node indices; rejecting a byte skips the subtree with
``i = end[i]``. Tokens that share a prefix share its nodes, and tokens with identical bytes share
one node. Built once per vocabulary, O(total token bytes).
"""

from __future__ import annotations

import re
import numpy as np


class TokenTrie:
    """Flat DFS trie over a subset of a vocabulary's tokens.

    Attributes:
        byte, depth, end: per-node tuples (indexing them from Python is faster than indexing
            numpy arrays; unlike lists, tuples of ints stop being traversed by the garbage
            collector, which would otherwise walk 1.8 million slots on Gemma 3 at every full
            collection).
        token_node: numpy int array, for each token id the node spelling it (0 if not in the trie).
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
        # CSR index node -> token ids spelled exactly there, so a mask is built from the allowed
        # nodes alone (cost proportional to them, not to the trie or the vocabulary).
        members_ids = np.flatnonzero(members)
        by_node = members_ids[np.argsort(token_node[members_ids], kind="stable")]
        counts = np.bincount(token_node[members_ids], minlength=len(byte))
        self.node_token_start = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self.node_token_ids = by_node.astype(np.int64)

    def __len__(self) -> int:
        return len(self.byte)

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


# One or more characters that may stand unescaped inside a JSON string, as whole UTF-8 sequences:
# printable ASCII but '"' and '\\', or a well-formed multi-byte character (no surrogates).
_PLAIN_STRING = re.compile(
    rb"(?:[\x20\x21\x23-\x5B\x5D-\x7F]|[\xC2-\xDF][\x80-\xBF]|\xE0[\xA0-\xBF][\x80-\xBF]"
    rb"|[\xE1-\xEC\xEE\xEF][\x80-\xBF]{2}|\xED[\x80-\x9F][\x80-\xBF]|\xF0[\x90-\xBF][\x80-\xBF]{2}"
    rb"|[\xF1-\xF3][\x80-\xBF]{3}|\xF4[\x80-\x8F][\x80-\xBF]{2})+"
)


class StringSlice:
    """The tokens that are entirely plain string content, precomputed once per vocabulary.

    In a lexer state that loops on plain text (inside an unconstrained JSON string, between
    characters), every such token is allowed and leads back to that very state, so a mask there is
    ``plain`` plus a walk over the small trie of the remaining tokens (those with a quote, a
    backslash, a control byte or a partial UTF-8 character); see ``masking/slices.py``. On GPT-2, 49,722 of 50,257 tokens are plain (the rest trie has 637
    nodes); on Gemma 3, 254,292 of 262,144 (2,288 nodes).
    """

    def __init__(self, tokens: "tuple[bytes, ...] | list[bytes]", ordinary: np.ndarray) -> None:
        plain = np.array([bool(t) and _PLAIN_STRING.fullmatch(t) is not None for t in tokens], dtype=bool)
        self.plain = plain & ordinary
        self.plain.flags.writeable = False
        self.rest = TokenTrie(tokens, ordinary & ~self.plain)
        #: characters (code points) of each plain token; 0 elsewhere
        chars = np.zeros(len(tokens), dtype=np.int32)
        for token_id in np.flatnonzero(self.plain).tolist():
            chars[token_id] = len(tokens[token_id].decode("utf-8"))
        chars.flags.writeable = False
        self.chars = chars
        self.longest = int(chars.max(initial=0))
        self._up_to: dict[int, np.ndarray] = {}

    def up_to(self, count: int) -> np.ndarray:
        """The plain tokens of at most ``count`` characters (read-only; cached per count). O(V)
        the first time."""
        count = min(count, self.longest)
        found = self._up_to.get(count)
        if found is None:
            found = self.plain & (self.chars <= count) if count < self.longest else self.plain
            found.flags.writeable = False
            self._up_to[count] = found
        return found
