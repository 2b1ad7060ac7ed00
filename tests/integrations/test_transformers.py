"""``TransformersLogitsProcessor``: unit tests on synthetic scores (no model), then ``model.generate``
with the real Gemma 3 270M (Q4_K_M GGUF loaded by transformers on CPU): a batch of two rows with
different schemas, a few greedy tokens each, plain and with the closing budget."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # never reach a model hub
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

from helpers import require  # noqa: E402

torch = require("torch", "transformers")
transformers = require("transformers", "transformers")

import grammar_decode as gd  # noqa: E402
from grammar_decode.integrations.transformers import TransformersLogitsProcessor  # noqa: E402

from helpers import validate  # noqa: E402

ARRAY = {"type": "array", "items": {"type": "integer"}}
BOOLEAN = {"type": "boolean"}
STRING = {"type": "string"}

# a small vocabulary: 0 = EOS, 1 = pad (special); the logits are 3 columns wider (padding)
TOKENS = [b"<eos>", b"<pad>", b"[", b"]", b"1", b"2", b",", b" ", b"t", b"rue", b"true", b"f", b"alse",
          b"12", b'"', b"ab", b"a", b"b"]
PAD_COLUMNS = 3


@pytest.fixture(scope="module")
def small() -> gd.Vocabulary:
    return gd.Vocabulary(TOKENS, eos_token_ids=[0], special_token_ids=[0, 1])


def _ids(*rows: list[int]) -> "torch.Tensor":
    return torch.tensor([list(r) for r in rows], dtype=torch.long)


def _expected(scores: "torch.Tensor", masks: list[np.ndarray]) -> "torch.Tensor":
    """The reference application: ``gd.apply_mask`` row by row."""
    return torch.from_numpy(np.stack([gd.apply_mask(scores[r].numpy(), m) for r, m in enumerate(masks)]))


def _replayed_mask(grammar: gd.CompiledGrammar, vocab: gd.Vocabulary, generated: list[int],
                   budget: int | None = None) -> np.ndarray:
    """What row's mask must be after ``generated``: a fresh matcher, EOS only once terminated."""
    matcher = grammar.matcher(vocab)
    for token in generated:
        if matcher.terminated:
            break
        matcher.advance(token)
    if matcher.terminated:
        only = np.zeros(len(vocab), dtype=bool)
        only[list(vocab.eos_token_ids)] = True
        return only
    return matcher.mask() if budget is None else matcher.budget_mask(budget - len(generated))


# -- unit tests on synthetic scores ----------------------------------------------------------------


def test_batch_rows_with_different_grammars_padding_and_termination(small: gd.Vocabulary) -> None:
    arr, boo = gd.compile_json_schema(ARRAY), gd.compile_json_schema(BOOLEAN)
    proc = TransformersLogitsProcessor([arr, boo], small)
    generator = torch.Generator().manual_seed(0)
    width = len(small) + PAD_COLUMNS
    prompt = [[7, 7, 16], [1, 16, 17]]  # left padding is just prompt to the processor
    steps = [(2, 10), (4, 0), (3, 1), (0, 1)]  # row 0: "[" "1" "]" EOS; row 1: "true" EOS pad pad
    history: list[list[int]] = [[], []]
    ids = _ids(*prompt)
    for step in range(len(steps) + 1):
        scores = torch.randn(2, width, generator=generator)
        before = scores.clone()
        out = proc(ids, scores)
        assert torch.equal(scores, before), "scores are not modified in place"
        masks = [_replayed_mask(g, small, h) for g, h in zip((arr, boo), history)]
        assert torch.equal(out, _expected(scores, masks))
        assert torch.isinf(out[:, len(small):]).all(), "padding columns are always -inf"
        assert proc.prompt_len == 3
        if step == len(steps):
            break
        ids = torch.cat([ids, torch.tensor([steps[step]]).T], dim=1)
        for row in (0, 1):
            history[row].append(steps[step][row])
    assert torch.isfinite(out).nonzero().tolist() == [[0, 0], [1, 0]], "finished rows allow only EOS"
    assert proc.generated_ids(0) == [2, 4, 3, 0] and proc.generated_ids(1) == [10, 0], "pad not fed"
    assert proc.matchers[0].terminated and proc.matchers[1].terminated
    assert proc.calls == 5 and proc.mask_seconds > 0


def test_dense_and_sparse_masks_and_wider_or_equal_widths(small: gd.Vocabulary) -> None:
    text = gd.compile_json_schema(STRING)
    for width in (len(small), len(small) + PAD_COLUMNS):
        proc = TransformersLogitsProcessor(text, small)  # one grammar for every row
        scores = torch.randn(3, width)
        out = proc(_ids([5], [5], [5]), scores)  # start: only '"' (a sparse "keep" plan)
        mask = text.matcher(small).mask()
        assert torch.equal(out, _expected(scores, [mask] * 3))
        ids = _ids([5, 14], [5, 14], [5, 14])
        out = proc(ids, scores)  # inside a string: nearly everything (a dense "forbid" plan)
        inside = _replayed_mask(text, small, [14])
        assert inside.sum() > (width - inside.sum())
        assert torch.equal(out, _expected(scores, [inside] * 3))
        assert len(proc.matchers) == 3


def test_rows_per_grammar_and_reordered_rows(small: gd.Vocabulary) -> None:
    arr, boo = gd.compile_json_schema(ARRAY), gd.compile_json_schema(BOOLEAN)
    proc = TransformersLogitsProcessor([arr, boo], small)  # 4 rows: 2 per grammar (num_beams=2)
    grammars = [arr, arr, boo, boo]
    scores = torch.randn(4, len(small))
    proc(_ids([7], [7], [7], [7]), scores)
    proc(_ids([7, 2], [7, 2], [7, 8], [7, 11]), scores)
    proc(_ids([7, 2, 4], [7, 2, 13], [7, 8, 9], [7, 11, 12]), scores)
    # beam search reorders: row 0 continues old row 1, row 1 old row 0; rows 2/3 swap too
    rows = [[2, 13, 6], [2, 4, 3], [11, 12, 0], [8, 9, 0]]
    out = proc(_ids(*[[7] + r for r in rows]), scores)
    masks = [_replayed_mask(g, small, r) for g, r in zip(grammars, rows)]
    assert torch.equal(out, _expected(scores, masks))
    assert [proc.generated_ids(r) for r in range(4)] == rows
    with pytest.raises(ValueError, match="rows per grammar"):
        TransformersLogitsProcessor([arr, boo], small)(_ids([7], [7], [7]), scores[:3])


def test_forbidden_token_raises_and_reset_starts_over(small: gd.Vocabulary) -> None:
    arr = gd.compile_json_schema(ARRAY)
    proc = TransformersLogitsProcessor(arr, small)
    scores = torch.randn(1, len(small))
    proc(_ids([7, 7]), scores)
    with pytest.raises(gd.TokenRejected, match="row 0"):
        proc(_ids([7, 7, 3]), scores)  # "]" cannot start an array document
    proc.reset()
    proc(_ids([7, 7, 7]), scores)
    proc(_ids([7, 7, 7, 2]), scores)
    assert proc.prompt_len == 3 and proc.generated_ids(0) == [2]
    out = proc(_ids([7]), scores)  # a shorter input: a new generate call, starts over by itself
    assert proc.prompt_len == 1 and proc.generated_ids(0) == []
    assert torch.equal(out, _expected(scores, [arr.matcher(small).mask()]))
    with pytest.raises(ValueError, match="EOS"):
        TransformersLogitsProcessor(arr, gd.Vocabulary([b"a"]))
    with pytest.raises(TypeError):
        TransformersLogitsProcessor([], small)


def test_closing_budget_always_completes_under_random_scores(small: gd.Vocabulary) -> None:
    arr, boo = gd.compile_json_schema(ARRAY), gd.compile_json_schema(BOOLEAN)
    budget = max(arr.min_completion_tokens(small), boo.min_completion_tokens(small)) + 3
    for seed in range(20):
        proc = TransformersLogitsProcessor([arr, boo], small, max_new_tokens=budget)
        generator = torch.Generator().manual_seed(seed)
        ids = _ids([7], [7])
        for _ in range(budget):
            scores = torch.randn(2, len(small) + PAD_COLUMNS, generator=generator) * 5
            out = proc(ids, scores)
            generated = ids[:, 1:].tolist()
            masks = [_replayed_mask(g, small, h, budget) for g, h in zip((arr, boo), generated)]
            assert torch.equal(out, _expected(scores, masks))
            nxt = out.argmax(dim=1, keepdim=True)
            done = [proc.matchers[r].terminated for r in (0, 1)]
            nxt[torch.tensor(done)] = 1  # what generate does for finished rows: pad
            ids = torch.cat([ids, nxt], dim=1)
        proc(ids, torch.zeros(2, len(small)))  # feed the last tokens
        for row, grammar in enumerate((arr, boo)):
            assert proc.matchers[row].is_accepting(), (seed, row)
            document = small.decode(proc.generated_ids(row))
            assert grammar.accepts(document)
            validate((ARRAY, BOOLEAN)[row], json.loads(document))


# -- the real model --------------------------------------------------------------------------------

SMALL_OBJECT = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
INTEGERS = {"type": "array", "items": {"type": "integer"}}
PROMPTS = ["A person, as JSON:", "The first prime numbers, as a JSON array:"]
NEW_TOKENS = 8


@pytest.fixture(scope="module")
def gemma():
    """(model, tokenizer, vocab): the Gemma 3 270M GGUF through transformers, once per module."""
    pytest.importorskip("accelerate")
    pytest.importorskip("gguf")
    from helpers import gemma_hf_vocab, gemma_model_path, gemma_tokenizer

    path = gemma_model_path()
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                              dtype=torch.float32)
    model.eval()
    tokenizer = gemma_tokenizer()
    tokenizer.padding_side = "left"
    return model, tokenizer, gemma_hf_vocab()


def _generate(gemma, processor: TransformersLogitsProcessor):
    model, tokenizer, _ = gemma
    batch = tokenizer(PROMPTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = model.generate(**batch, max_new_tokens=NEW_TOKENS, do_sample=False, output_scores=True,
                             return_dict_in_generate=True,
                             logits_processor=transformers.LogitsProcessorList([processor]))
    return out, batch["input_ids"].shape[1]


def _rows(out, prompt_len: int, vocab: gd.Vocabulary) -> list[list[int]]:
    """Each row's generated tokens up to and including EOS (generate pads after it)."""
    rows = []
    eos = set(vocab.eos_token_ids)
    for ids in out.sequences[:, prompt_len:].tolist():
        cut = next((k + 1 for k, t in enumerate(ids) if t in eos), len(ids))
        rows.append(ids[:cut])
    return rows


@pytest.mark.model
def test_real_model_batch_of_two_schemas_masks_every_step(gemma) -> None:
    _, _, vocab = gemma
    grammars = [gd.compile_json_schema(SMALL_OBJECT), gd.compile_json_schema(INTEGERS)]
    proc = TransformersLogitsProcessor(grammars, vocab)
    out, prompt_len = _generate(gemma, proc)
    rows = _rows(out, prompt_len, vocab)
    for row, (grammar, ids) in enumerate(zip(grammars, rows)):
        assert proc.generated_ids(row) == ids[: len(proc.generated_ids(row))]
        for k in range(len(ids)):  # every step: the processed scores are finite exactly on the mask
            scores = out.scores[k][row]
            expected = _replayed_mask(grammar, vocab, ids[:k])
            assert torch.equal(torch.isfinite(scores), torch.from_numpy(expected.copy())), (row, k)
            assert int(scores.argmax()) == ids[k], "greedy picks the best allowed token"
        body = [t for t in ids if t not in vocab.eos_token_ids]
        text = vocab.decode(body)
        for k in range(len(body) + 1):
            assert grammar.accepts_prefix(vocab.decode(body[:k])), (row, k, text)
        if len(body) < len(ids):  # stopped on EOS: a complete document
            assert grammar.accepts(text)
    assert len(rows[0]) > 3 and len(rows[1]) > 3
    assert vocab.decode(rows[0]).startswith(b"{") and vocab.decode(rows[1]).startswith(b"[")


@pytest.mark.model
def test_real_model_closing_budget_completes_and_validates(gemma) -> None:
    _, _, vocab = gemma
    schemas = [SMALL_OBJECT, INTEGERS]
    grammars = [gd.compile_json_schema(s) for s in schemas]
    assert max(g.min_completion_tokens(vocab) for g in grammars) <= NEW_TOKENS
    proc = TransformersLogitsProcessor(grammars, vocab, max_new_tokens=NEW_TOKENS)
    out, prompt_len = _generate(gemma, proc)
    for row, ids in enumerate(_rows(out, prompt_len, vocab)):
        body = [t for t in ids if t not in vocab.eos_token_ids]
        text = vocab.decode(body)
        assert grammars[row].accepts(text), (row, text)
        validate(schemas[row], json.loads(text))
