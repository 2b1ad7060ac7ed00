"""``Vocabulary.from_hf``: Hugging Face tokenizers, exact to the byte, on real tokenizers.

* Gemma 3 270M (the embedded default model): the ``transformers`` tokenizer converted from the
  model's GGUF, against ``Vocabulary.from_gguf`` of the same file and against the tokenizer's own
  ``decode`` (every ordinary token alone, and real multilingual sentences it encodes).
* Byte-level BPE (GPT-2) and SentencePiece (Llama-2, Phi-3): tokenizers converted by
  ``transformers`` from the vocabulary-only GGUF files, against ``from_gguf`` and llama.cpp's own
  tokenization pairs.
* Decoder semantics on small tokenizers built in memory with ``tokenizers``.

Mismatch classes with ``from_gguf`` are asserted exactly (never hidden): tokens that llama.cpp
types USER_DEFINED (or UNKNOWN, for its ``[PADn]`` placeholders) are special for ``from_gguf`` but
non-special added tokens of the converted HF tokenizer, hence ordinary for ``from_hf`` — same bytes.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest

pytestmark = pytest.mark.slow

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach a model hub
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

from helpers import gemma_hf_vocab, gemma_model_path, gemma_tokenizer, require  # noqa: E402

tokenizers = require("tokenizers", "transformers")
transformers = require("transformers", "transformers")

import grammar_decode as gd  # noqa: E402
from grammar_decode.vocab.gguf import read_metadata  # noqa: E402
from tools.vocab_files import vocab_path  # noqa: E402

_USER_DEFINED, _UNKNOWN, _CONTROL, _BYTE = 4, 2, 3, 6

SENTENCES = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "  two leading spaces,\ttabs\tand\nnewlines\n\n\nand a trailing space ",
    "Äpfel über Straße — ça coûte 12,50 € ; ¿qué tal? ½ ∑ ≠ ∞",
    "Привет, мир! Ελληνικά. עברית. العربية. हिन्दी. ไทย.",
    "中文句子，日本語の文章、한국어 문장。",
    "emoji: 🦙 👍🏽 👨‍👩‍👧 🇫🇷 ✨\U0001F9EC and a ZWJ",
    '{"name": "Ada", "age": 36, "tags": ["x", "y"], "ok": true}\n',
    "code:\n    def f(x):\n        return x ** 2  # squared\n",
]


@functools.lru_cache(maxsize=None)
def vocab_file_tokenizer(name: str):
    path = vocab_path(name)
    return transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


# -- helpers -------------------------------------------------------------------------------------


def _mismatches(hf: gd.Vocabulary, gguf: gd.Vocabulary, types: np.ndarray) -> dict[str, object]:
    """Every way the two vocabularies differ, by class."""
    n = min(len(hf), len(gguf))
    ho, go = hf.ordinary_mask()[:n], gguf.ordinary_mask()[:n]
    both = np.flatnonzero(ho & go)
    only_hf = np.flatnonzero(ho & ~go)
    return {
        "bytes_differ": [int(i) for i in both if hf.token_bytes(i) != gguf.token_bytes(i)],
        "only_gguf_ordinary": np.flatnonzero(~ho & go).tolist(),
        "only_hf_ordinary_types": sorted(set(types[only_hf].tolist())),
        "only_hf_ordinary_bytes_differ": [int(i) for i in only_hf if hf.token_bytes(i) != gguf.token_bytes(i)],
        "only_hf_ordinary": only_hf.tolist(),
    }


def _check_sentences(tokenizer, vocab: gd.Vocabulary, texts: list[str], prefix: str = "") -> int:
    """Concatenated token bytes == the text (SentencePiece tokenizers with a dummy prefix may add
    one leading space) and == ``tokenizer.decode`` (which drops that space from the start of the
    whole text: a sequence-level step, not a token's bytes). Returns the number of texts checked."""
    special = set(vocab.special_token_ids) | set(vocab.eos_token_ids)
    checked = 0
    for text in texts:
        ids = tokenizer.encode(text, add_special_tokens=False)
        if any(i in special for i in ids):
            continue  # the text spells a special token; not a question for token bytes
        data = vocab.decode(ids).decode("utf-8")
        decoded = tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)
        if not prefix:
            assert data == text == decoded, (text, ids, data, decoded)
        else:
            assert data in (text, prefix + text), (text, ids, data)
            assert decoded in (data, data[len(prefix):]), (text, ids, data, decoded)
        checked += 1
    return checked


def _inp_texts(name: str) -> list[str]:
    path = vocab_path(name)
    return path.with_name(path.name + ".inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")


def _pairs(name: str) -> list[tuple[str, list[int]]]:
    path = vocab_path(name)
    lines = path.with_name(path.name + ".out").read_text(encoding="utf-8").split("\n")
    return [(text, [int(x) for x in line.split()]) for text, line in zip(_inp_texts(name), lines)]


# -- Gemma 3 270M: the embedded default model ------------------------------------------------------


def test_gemma_from_hf_equals_from_gguf_on_ordinary_tokens() -> None:
    path = gemma_model_path()
    hf = gemma_hf_vocab()
    gguf = gd.Vocabulary.from_gguf(path)
    types = np.asarray(read_metadata(path)["tokenizer.ggml.token_type"])
    assert len(hf) == len(gguf) == 262144
    # <eos>, <end_of_turn> and </s>: the ends of generation llama.cpp recognises
    assert hf.eos_token_ids == gguf.eos_token_ids == (1, 106, 212)
    diff = _mismatches(hf, gguf, types)
    assert diff["bytes_differ"] == [], "same id, different bytes"
    assert diff["only_gguf_ordinary"] == [] and diff["only_hf_ordinary"] == []
    # the USER_DEFINED tokens ("\n" runs, space runs, HTML tags) are ordinary text in both
    user_defined = np.flatnonzero(types == _USER_DEFINED).tolist()
    assert len(user_defined) == 165 and all(hf.ordinary_mask()[i] for i in user_defined if i != 212)
    assert hf.token_bytes(107) == b"\n" and hf.token_bytes(108) == b"\n\n" and hf.token_bytes(138) == b"  "
    # special ids: llama.cpp's CONTROL tokens (pad, eos, bos, unk, mask, <unusedN>, ...) and </s>
    assert list(hf.special_token_ids) == sorted(np.flatnonzero(types == _CONTROL).tolist() + [212])
    # SentencePiece: "▁" is a space, <0xNN> is one byte
    assert all(hf.token_bytes(i) == bytes([i - 238]) for i in np.flatnonzero(types == _BYTE))
    assert not any("\u2581".encode() in t for t in hf.tokens)


def test_gemma_every_ordinary_token_decodes_alone_to_its_bytes() -> None:
    tokenizer, vocab = gemma_tokenizer(), gemma_hf_vocab()
    ids = np.flatnonzero(vocab.ordinary_mask()).tolist()
    decoded = tokenizer.batch_decode([[i] for i in ids], skip_special_tokens=False,
                                     clean_up_tokenization_spaces=False)
    not_utf8 = []
    for token_id, text in zip(ids, decoded):
        data = vocab.token_bytes(token_id)
        try:
            assert data.decode("utf-8") == text, (token_id, data, text)
        except UnicodeDecodeError:  # a lone byte of a multi-byte character: decode shows U+FFFD
            assert text == "\ufffd", (token_id, data, text)
            not_utf8.append(token_id)
    # exactly the byte-fallback tokens <0x80>..<0xFF>
    assert [vocab.token_bytes(i)[0] for i in not_utf8] == list(range(0x80, 0x100))


def test_gemma_sentences_concatenate_to_the_text_and_to_decode() -> None:
    tokenizer, vocab = gemma_tokenizer(), gemma_hf_vocab()
    texts = SENTENCES + [t for t in _inp_texts("gemma-4") if t]
    assert _check_sentences(tokenizer, vocab, texts) == len(texts)
    # the newline tokens the tokenizer really uses are ordinary in from_hf
    ids = tokenizer.encode("a\nb\n\nc", add_special_tokens=False)
    assert 107 in ids and 108 in ids
    assert vocab.decode(ids) == b"a\nb\n\nc"


# -- vocabulary files converted by transformers --------------------------------------------------

# name: (mismatch ids only ordinary for from_hf (count), their llama.cpp types, prefix space)
VOCAB_FILES = {
    "gpt-2": (0, [], ""),
    "llama-spm": (0, [], " "),
    "phi-3": (53, [_UNKNOWN], " "),  # "[PAD32011]".. placeholders: UNKNOWN for llama.cpp
    "llama-bpe": (0, [], ""),
    "qwen2": (0, [], ""),
}


@pytest.mark.parametrize("name", list(VOCAB_FILES))
def test_vocab_files_from_hf_equal_from_gguf_and_llama_cpp_pairs(name: str) -> None:
    count, classes, prefix = VOCAB_FILES[name]
    tokenizer = vocab_file_tokenizer(name)
    hf = gd.Vocabulary.from_hf(tokenizer)
    gguf = gd.Vocabulary.from_gguf(vocab_path(name))
    types = np.asarray(read_metadata(vocab_path(name))["tokenizer.ggml.token_type"])
    # the Llama-3 conversion adds <|endoftext|> (an end of generation) past the GGUF's ids
    assert tuple(i for i in hf.eos_token_ids if i < len(gguf)) == gguf.eos_token_ids
    assert len(hf) >= len(gguf)
    assert all(i in hf.special_token_ids for i in range(len(gguf), len(hf))), "ids past the GGUF are special"
    diff = _mismatches(hf, gguf, types)
    assert diff["bytes_differ"] == [] and diff["only_gguf_ordinary"] == []
    assert diff["only_hf_ordinary_bytes_differ"] == []
    assert len(diff["only_hf_ordinary"]) == count and diff["only_hf_ordinary_types"] == classes
    # llama.cpp's own tokenizations of the .inp texts spell the texts with from_hf's bytes too
    for text, ids in _pairs(name):
        assert hf.decode(ids) == ((prefix + text).encode("utf-8") if text else b""), (text, ids)
    # and the HF tokenizer's own tokenizations, against its decode
    texts = SENTENCES + [t for t in _inp_texts(name) if t]
    assert _check_sentences(tokenizer, hf, texts, prefix) >= len(texts) - 2


def test_gpt2_every_token_and_the_raw_tokenizers_object() -> None:
    tokenizer = vocab_file_tokenizer("gpt-2")
    hf = gd.Vocabulary.from_hf(tokenizer)
    decoded = tokenizer.batch_decode([[i] for i in range(50256)], clean_up_tokenization_spaces=False)
    for token_id, text in enumerate(decoded):
        data = hf.token_bytes(token_id)
        assert data.decode("utf-8", errors="replace") == text, (token_id, data, text)
    raw = tokenizer.backend_tokenizer  # a tokenizers.Tokenizer: no EOS of its own
    assert isinstance(raw, tokenizers.Tokenizer)
    plain = gd.Vocabulary.from_hf(raw)
    # no eos_token_id of its own, but <|endoftext|> is named as an end of generation
    assert plain.tokens == hf.tokens and plain.eos_token_ids == (50256,)
    assert gd.Vocabulary.from_hf(raw, eos_token_ids=[50255]).eos_token_ids == (50255, 50256)
    assert plain.special_token_ids == hf.special_token_ids == (50256,)


# -- decoder semantics on small in-memory tokenizers ---------------------------------------------


def _bpe(vocab: dict[str, int], decoder) -> "tokenizers.Tokenizer":
    from tokenizers import Tokenizer, models

    unk = "<unk>" if "<unk>" in vocab else None
    tk = Tokenizer(models.BPE(vocab, [], byte_fallback=True, unk_token=unk))
    tk.decoder = decoder
    return tk


def test_byte_level_added_tokens_outside_the_table_stay_text() -> None:
    from tokenizers import AddedToken, decoders

    tk = _bpe({"a": 0, "Ġa": 1, "Ċ": 2, "Ã©": 3}, decoders.ByteLevel())
    tk.add_tokens([AddedToken("hé llo\n", normalized=False)])  # has chars outside the table
    tk.add_special_tokens(["<|end|>"])
    vocab = gd.Vocabulary.from_hf(tk, eos_token_ids=[5])
    assert list(vocab.tokens) == [b"a", b" a", b"\n", "é".encode(), "hé llo\n".encode(), b"<|end|>"]
    assert vocab.special_token_ids == (5,) and vocab.eos_token_ids == (5,)
    for i in range(5):
        assert tk.decode([i]) == vocab.token_bytes(i).decode("utf-8")


def test_sentencepiece_decoders_replace_fallback_metaspace_and_strip() -> None:
    from tokenizers import decoders

    pieces = {"<unk>": 0, "▁a": 1, "b▁": 2, "<0x41>": 3, "<0xe2>": 4, "<0x82>": 5, "<0xac>": 6, "<0xZZ>": 7}
    chain = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                               decoders.Strip(" ", 1, 0)])
    vocab = gd.Vocabulary.from_hf(_bpe(pieces, chain))
    assert list(vocab.tokens) == [b"<unk>", b" a", b"b ", b"A", b"\xe2", b"\x82", b"\xac", b"<0xZZ>"]
    assert vocab.special_token_ids == (0,), "the model's unknown token is special"
    assert _bpe(pieces, chain).decode([1, 2, 4, 5, 6]) == "ab €"  # Strip after Fuse: sequence level
    meta = gd.Vocabulary.from_hf(_bpe(pieces, decoders.Metaspace()))
    assert meta.token_bytes(1) == b" a" and meta.token_bytes(2) == b"b "
    # Strip before Fuse strips every token
    per_token = gd.Vocabulary.from_hf(_bpe(pieces, decoders.Sequence([decoders.Replace("▁", " "),
                                                                   decoders.Strip(" ", 1, 0)])))
    assert per_token.token_bytes(1) == b"a" and per_token.token_bytes(2) == b"b "


def test_gaps_are_special_and_unsupported_tokenizers_raise() -> None:
    from tokenizers import Tokenizer, decoders, models

    gappy = gd.Vocabulary.from_hf(_bpe({"a": 0, "b": 2}, decoders.ByteLevel()))
    assert list(gappy.tokens) == [b"a", b"", b"b"] and gappy.special_token_ids == (1,)
    wordpiece = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"))
    wordpiece.decoder = decoders.WordPiece()
    with pytest.raises(gd.VocabularyError, match="WordPiece"):
        gd.Vocabulary.from_hf(wordpiece)
    with pytest.raises(gd.VocabularyError, match="no decoder"):
        gd.Vocabulary.from_hf(Tokenizer(models.BPE({"a": 0}, [])))
    with pytest.raises(gd.VocabularyError, match="backend_tokenizer"):
        gd.Vocabulary.from_hf(object())
