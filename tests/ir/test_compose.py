"""Free text until a trigger, then a constraint (``ir/compose.py``, ``gd.compile_triggered``):
the language, masks against the independent reference, and generation under random logits."""

from __future__ import annotations

import json

import numpy as np
import pytest

import grammar_decode as gd

from helpers import PERSON, assert_grammar_masks_equal_reference, require, validate

CALL = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture(scope="module")
def call() -> gd.CompiledGrammar:
    return gd.compile_json_schema(CALL, whitespace="compact")


def _language(grammar: gd.CompiledGrammar, accepted: list, rejected: list, prefixes: list) -> None:
    for text in accepted:
        assert grammar.accepts(text), text
    for text in rejected:
        assert not grammar.accepts(text), text
    for text in prefixes:
        assert grammar.accepts_prefix(text) and not grammar.accepts(text), text


def test_optional_trigger_language(call: gd.CompiledGrammar) -> None:
    grammar = gd.compile_triggered(call, "<tool_call>", end="</tool_call>")
    _language(
        grammar,
        accepted=["", "hello", "é ✓ <tool", "<tool_call>{\"name\":\"x\"}</tool_call>",
                  "I call <tool_call>{\"name\":\"<tool_call>\"}</tool_call>",  # the trigger inside the constraint
                  "x<<tool_call>{\"name\":\"\"}</tool_call>", "a <tool_cal"],
        rejected=["a <tool_call> b", "<tool_call><tool_call>", "<tool_call>{\"name\":\"x\"}</tool_call> more",
                  "<tool_call>{}</tool_call>", b"\xff", b"a\xc3"],
        prefixes=["<tool_call>", "text <tool_call>{\"na", "<tool_call>{\"name\":\"x\"}</tool"],
    )


def test_required_trigger_language(call: gd.CompiledGrammar) -> None:
    grammar = gd.compile_triggered(call, "</think>", required=True)
    _language(
        grammar,
        accepted=["</think>{\"name\":\"a\"}", "let me think </th </think>{\"name\":\"a\"}"],
        rejected=["{\"name\":\"a\"}", "</think></think>{\"name\":\"a\"}", "</think>{\"name\":\"a\"} "],
        prefixes=["", "thinking", "thinking </think", "x</think>"],
    )


def test_without_free_text_the_trigger_comes_first(call: gd.CompiledGrammar) -> None:
    grammar = gd.compile_triggered(call, "<tool_call>", end="</tool_call>", free_text=False)
    _language(grammar, accepted=["<tool_call>{\"name\":\"x\"}</tool_call>"],
              rejected=["", "a<tool_call>{\"name\":\"x\"}</tool_call>", "{\"name\":\"x\"}"],
              prefixes=["<tool", "<tool_call>{"])


def test_a_trigger_that_overlaps_itself_splits_at_its_first_occurrence() -> None:
    """``aa`` in ``aaa``: the free part is empty and the constraint gets the third ``a``, never the
    free part ``a`` before a trigger that would already have occurred."""
    grammar = gd.compile_triggered(gd.compile_regex("a[0-9]"), "aa")
    _language(grammar, accepted=["aaa1", "baaa1", "b", "a"], rejected=["aa1a", "aaaa1", "aa1"], prefixes=["aa", "aaa"])


def test_a_lark_constraint_keeps_its_ignored_whitespace() -> None:
    require("lark", "lark")
    grammar = gd.compile_triggered(gd.compile_grammar('start: "[" NUMBER ("," NUMBER)* "]"\n'
                                                      "%import common.NUMBER\n%import common.WS\n%ignore WS\n"),
                                   "@", required=True)
    _language(grammar, accepted=["x@[1, 2]", "@[ 1 ]"], rejected=["x@[1,]", "[1]"], prefixes=["x@[1"])


@pytest.mark.parametrize("constraint, trigger, required, prefixes", [
    ("call", "<tool_call>", False, ["", "Hello", "Hello <tool", "Hello <tool_call", "Hello <tool_call>",
                                    "x<tool_call>{\"na", "x<tool_call>{\"name\":\"a\"}"]),
    ("call", "</think>", True, ["", "I think", "I think </", "I think </think>"]),
    ("date", "DATE:", False, ["", "the date is DATE", "DATE:", "DATE:2024-0"]),
])
def test_masks_equal_the_reference(gpt2: gd.Vocabulary, call: gd.CompiledGrammar, constraint: str, trigger: str,
                                   required: bool, prefixes: list[str]) -> None:
    inner = call if constraint == "call" else gd.compile_regex(r"\d{4}-\d{2}-\d{2}")
    grammar = gd.compile_triggered(inner, trigger, required=required, end="!" if constraint == "call" else "")
    assert_grammar_masks_equal_reference(grammar, gpt2, prefixes)


def _uniform_logits(vocab: gd.Vocabulary, seed: int, favour: tuple[int, ...] | list[int] = ()):
    rng = np.random.default_rng(seed)

    def logits_fn(ids):
        logits = rng.uniform(0.0, 1.0, size=len(vocab))
        logits[list(favour)] += 12.0  # the trigger's tokens likely, so that some runs take it
        return logits

    return logits_fn


def test_random_logits_write_free_text_or_a_valid_call(gpt2: gd.Vocabulary) -> None:
    grammar = gd.compile_triggered(gd.compile_json_schema(PERSON), "<call>")
    spelled = gpt2.ids_by_bytes()
    favour = [i for piece in (b"<", b"call", b">") for i in spelled[piece]]
    calls = 0
    for seed in range(6):
        result = gd.generate(_uniform_logits(gpt2, seed, favour), grammar, gpt2, max_tokens=80, seed=seed)
        assert result.stop_reason in ("eos", "complete", "max_tokens"), result
        text = result.data
        assert grammar.accepts_prefix(text)
        if b"<call>" in text and result.stop_reason != "max_tokens":
            calls += 1
            free, _, document = text.partition(b"<call>")
            assert b"<call>" not in free
            validate(PERSON, json.loads(document))
    assert calls  # the favoured pieces spell the trigger in some runs


def test_a_required_trigger_ends_in_time(gpt2: gd.Vocabulary) -> None:
    """The closing budget reaches the trigger and the constraint within the tightest budget."""
    grammar = gd.compile_triggered(gd.compile_json_schema(PERSON), "</think>", required=True)
    budget = grammar.min_completion_tokens(gpt2)
    for seed in range(4):
        result = gd.generate(_uniform_logits(gpt2, seed), grammar, gpt2, max_tokens=budget + 3, seed=seed)
        assert result.stop_reason in ("eos", "complete"), result
        _free, _, document = result.data.partition(b"</think>")
        validate(PERSON, json.loads(document))


@pytest.mark.parametrize("trigger, end, error", [("", "", ValueError), ("\ud800", "", UnicodeEncodeError),
                                                 (b"<t>", "", TypeError), ("<t>", None, TypeError)])
def test_bad_arguments_are_typed_errors(call: gd.CompiledGrammar, trigger, end, error) -> None:
    with pytest.raises(error):
        gd.compile_triggered(call, trigger, end=end)


def test_the_constraint_must_be_compiled() -> None:
    with pytest.raises(TypeError, match="CompiledGrammar"):
        gd.compile_triggered(CALL, "<t>")  # type: ignore[arg-type]
