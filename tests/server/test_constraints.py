"""From a request's fields to one compiled grammar and back to tool calls
(``server/constraints.py``). No model is loaded here: the grammars are judged by their language."""

from __future__ import annotations

import json

import pytest

import grammar_decode as gd
from grammar_decode.server.constraints import constraint_grammar, tool_calls, tool_instructions
from grammar_decode.server.protocol import RequestError, chat_request

USER = [{"role": "user", "content": "hi"}]
WEATHER = {"type": "function", "function": {"name": "weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}}}
ADD = {"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}
CALL = '{"name":"weather","arguments":{"city":"Paris"}}'


@pytest.fixture(scope="module")
def cache() -> gd.GrammarCache:
    return gd.GrammarCache(32)


def _grammar(cache: gd.GrammarCache, **body: object) -> gd.CompiledGrammar:
    return constraint_grammar(chat_request({"messages": USER, **body}), cache, gd.Limits())


def test_without_a_constraint_any_utf8_text(cache: gd.GrammarCache) -> None:
    grammar = _grammar(cache)
    assert grammar.accepts("") and grammar.accepts("anything { at all ✓") and not grammar.accepts(b"\xff")


@pytest.mark.parametrize("choice, parallel, accepted, rejected", [
    ("required", False, [f"<tool_call>{CALL}</tool_call>"],
     ["", "text", f"x<tool_call>{CALL}</tool_call>", f"<tool_call>[{CALL}]</tool_call>"]),
    ("required", True, [f"<tool_call>[{CALL}]</tool_call>", f'<tool_call>[{CALL},{{"name":"add","arguments":{{"a":1}}}}]</tool_call>'],
     [f"<tool_call>{CALL}</tool_call>", "<tool_call>[]</tool_call>"]),
    ("auto", False, ["", "just text", f"text <tool_call>{CALL}</tool_call>"],
     [f"text <tool_call>{CALL}", '<tool_call>{"name":"weather","arguments":{}}</tool_call>']),
    ({"type": "function", "function": {"name": "add"}}, True, ['<tool_call>{"name":"add","arguments":{"a":2}}</tool_call>'],
     [f"<tool_call>{CALL}</tool_call>", '<tool_call>[{"name":"add","arguments":{"a":2}}]</tool_call>']),
    ("none", True, ["text", f"<tool_call>{CALL}"], [b"\xff"]),
])
def test_tool_choice_grammars(cache: gd.GrammarCache, choice: object, parallel: bool, accepted: list[str],
                              rejected: list[str]) -> None:
    grammar = _grammar(cache, tools=[WEATHER, ADD], tool_choice=choice, parallel_tool_calls=parallel)
    for text in accepted:
        assert grammar.accepts(text), text
    for text in rejected:
        assert not grammar.accepts(text), text


def test_a_named_custom_tool_takes_its_grammar(cache: gd.GrammarCache) -> None:
    custom = {"type": "custom", "custom": {"name": "sql", "format": {"type": "grammar", "grammar": {
        "syntax": "regex", "definition": "SELECT [a-z]+"}}}}
    body = {"tools": [WEATHER, custom], "tool_choice": {"type": "custom", "custom": {"name": "sql"}}}
    grammar = _grammar(cache, **body)
    assert grammar.accepts("<tool_call>SELECT abc</tool_call>") and not grammar.accepts("<tool_call>DROP</tool_call>")
    job = chat_request({"messages": USER, **body})
    assert tool_calls("<tool_call>SELECT abc</tool_call>", job)[1][0]["custom"] == {"name": "sql", "input": "SELECT abc"}
    with pytest.raises(RequestError, match="served only when tool_choice names it"):
        _grammar(cache, tools=[WEATHER, custom], tool_choice="auto")


@pytest.mark.parametrize("body, words", [
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "type": "object", "properties": {"a": {"type": "string", "pattern": "(?<=x)y"}}}}}},
     ["response_format", "pattern", "/properties/a"]),
    ({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nonsense"}}}},
     ["response_format", "type"]),
    ({"structured_outputs": {"regex": "(a"}}, ["structured_outputs"]),
    ({"structured_outputs": {"grammar": "start: undefined_rule"}}, ["structured_outputs"]),
])
def test_refused_constraints_are_400s_with_the_reason(cache: gd.GrammarCache, body: dict, words: list[str]) -> None:
    with pytest.raises(RequestError) as caught:
        _grammar(cache, **body)
    assert caught.value.status == 400 and caught.value.code == "constraint_refused"
    for word in words:
        assert word in caught.value.message


def test_strict_forbids_keys_the_schema_does_not_name(cache: gd.GrammarCache) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    loose = _grammar(cache, response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}})
    strict = _grammar(cache, response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema,
                                                                                     "strict": True}})
    assert loose.accepts('{"a":1,"b":2}') and not strict.accepts('{"a":1,"b":2}') and strict.accepts('{"a":1}')


def test_tool_calls_are_read_back() -> None:
    job = chat_request({"messages": USER, "tools": [WEATHER, ADD], "tool_choice": "auto"})
    content, calls = tool_calls(f"Let me check.<tool_call>{CALL}</tool_call>", job)
    assert content == "Let me check." and calls[0]["function"]["name"] == "weather"
    assert json.loads(calls[0]["function"]["arguments"]) == {"city": "Paris"} and calls[0]["id"].startswith("call_")
    assert tool_calls("no call", job) == ("no call", [])
    assert tool_calls(f"<tool_call>{CALL[:10]}", job)[1] == []  # cut short: no call
    parallel = chat_request({"messages": USER, "tools": [WEATHER, ADD], "tool_choice": "required"})
    content, calls = tool_calls(f'<tool_call>[{CALL},{{"name":"add","arguments":{{"a":1}}}}]</tool_call>', parallel)
    assert content is None and [c["function"]["name"] for c in calls] == ["weather", "add"]
    assert "weather" in tool_instructions(parallel) and "Call a tool now." in tool_instructions(parallel)
