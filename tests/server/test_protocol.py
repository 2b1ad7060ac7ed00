"""Request bodies read strictly (``server/protocol.py``): what is honoured becomes a ``Job``, what
is not is a 400 naming the field. No model is loaded here."""

from __future__ import annotations

from typing import Any

import pytest

from grammar_decode.server.protocol import RequestError, chat_request, completion_request

USER = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def test_a_full_chat_request_is_read() -> None:
    job = chat_request({"model": "m", "messages": USER + [{"role": "assistant", "content": [{"type": "text",
                                                                                            "text": "a"}]}],
                        "max_completion_tokens": 7, "temperature": 0, "top_p": 0.5, "seed": -1, "n": 2,
                        "stream": True, "stream_options": {"include_usage": True}, "user": "u", "metadata": {},
                        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {},
                                                                                   "strict": True}}})
    assert job.sampling.max_tokens == 7 and job.sampling.temperature == 0 and job.sampling.top_p == 0.5
    assert job.sampling.n == 2 and job.sampling.seed == 2 ** 64 - 1 and job.stream and job.include_usage
    assert job.constraint == ("json_schema", ({}, True)) and job.messages[1]["content"] == "a"


@pytest.mark.parametrize("extra, constraint", [
    ({"response_format": {"type": "text"}}, None),
    ({"response_format": {"type": "json_object"}}, ("json_schema", ({"type": "object"}, False))),
    ({"structured_outputs": {"json": '{"type": "integer"}'}}, ("json_schema", ({"type": "integer"}, False))),
    ({"structured_outputs": {"regex": "a+"}}, ("regex", "a+")),
    ({"structured_outputs": {"choice": ["a", "b"]}}, ("choice", ("a", "b"))),
    ({"structured_outputs": {"grammar": "start: \"a\""}}, ("grammar", "start: \"a\"")),
])
def test_every_structured_output_field_is_read(extra: dict[str, Any], constraint: Any) -> None:
    assert chat_request({"messages": USER, **extra}).constraint == constraint


def test_tools_and_choices_are_read() -> None:
    custom = {"type": "custom", "custom": {"name": "c", "format": {"type": "grammar",
                                                                   "grammar": {"syntax": "regex", "definition": "a"}}}}
    job = chat_request({"messages": USER, "tools": [TOOL, custom], "tool_choice": {"type": "custom",
                                                                                   "custom": {"name": "c"}},
                        "parallel_tool_calls": False})
    assert job.tool_choice == "c" and not job.parallel_tool_calls
    assert job.tools[1].syntax == "regex" and job.tools[0].parameters == {"type": "object"}
    assert chat_request({"messages": USER, "tools": [TOOL]}).tool_choice == "auto"


@pytest.mark.parametrize("body, param, words", [
    ({"messages": USER, "logprobs": True}, "logprobs", "not supported"),
    ({"messages": USER, "top_logprobs": 2}, "logprobs", "not supported"),
    ({"messages": USER, "frequency_penalty": 0.5}, "frequency_penalty", "only 0"),
    ({"messages": USER, "logit_bias": {"1": 5}}, "logit_bias", "not supported"),
    ({"messages": USER, "guided_json": {}}, "guided_json", "structured_outputs"),
    ({"messages": USER, "functions": []}, "functions", "unsupported parameter"),
    ({"messages": USER, "structured_outputs": {"json_object": True}}, "structured_outputs.json_object",
     "not supported"),
    ({"messages": USER, "structured_outputs": {"regex": "a", "choice": ["a"]}}, "structured_outputs", "exactly one"),
    ({"messages": USER, "response_format": {"type": "grammar"}}, "response_format.type", "not supported"),
    ({"messages": USER, "response_format": {"type": "json_schema"}}, "response_format.json_schema", "schema"),
    ({"messages": USER, "response_format": {"type": "json_object"}, "structured_outputs": {"regex": "a"}},
     "structured_outputs", "not both"),
    ({"messages": USER, "response_format": {"type": "json_object"}, "stop": "}"}, "stop", "cut"),
    ({"messages": USER, "tools": [TOOL], "stop": "x"}, "stop", "tool call"),
    ({"messages": USER, "tools": [TOOL], "response_format": {"type": "json_object"}}, "response_format", "both"),
    ({"messages": USER, "tool_choice": "auto"}, "tool_choice", "needs 'tools'"),
    ({"messages": USER, "tools": [TOOL], "tool_choice": {"type": "function", "function": {"name": "g"}}},
     "tool_choice", "not among"),
    ({"messages": USER, "tools": [TOOL, TOOL]}, "tools", "distinct"),
    ({"messages": USER, "tools": [{"type": "web_search"}]}, "tools[0].type", "function"),
    ({"messages": USER, "temperature": 3}, "temperature", "<= 2"),
    ({"messages": USER, "top_p": 0}, "top_p", "> 0"),
    ({"messages": USER, "max_tokens": 0}, "max_tokens", ">= 1"),
    ({"messages": USER, "n": 9}, "n", "<= 8"),
    ({"messages": USER, "stop": ["a", "b", "c", "d", "e"]}, "stop", "at most 4"),
    ({"messages": USER, "stream_options": {"include_usage": True}}, "stream_options", "stream"),
    ({"messages": []}, "messages", "non-empty"),
    ({"messages": [{"role": "robot", "content": "x"}]}, "messages[0].role", "one of"),
    ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages[0].content", "text parts"),
])
def test_what_is_not_honoured_is_a_400_naming_it(body: dict[str, Any], param: str, words: str) -> None:
    with pytest.raises(RequestError) as caught:
        chat_request(body)
    assert caught.value.status == 400 and caught.value.param == param and words in caught.value.message
    assert caught.value.body()["error"]["param"] == param


def test_completion_requests() -> None:
    job = completion_request({"prompt": ["Once"], "max_tokens": 3, "structured_outputs": {"regex": "[a-z]+"}})
    assert job.prompt == "Once" and job.constraint == ("regex", "[a-z]+") and job.endpoint == "completion"
    for body, param in (({"prompt": ["a", "b"]}, "prompt"), ({"prompt": "a", "echo": True}, "echo"),
                        ({"prompt": "a", "suffix": "z"}, "suffix"), ({"prompt": "a", "messages": USER}, "messages")):
        with pytest.raises(RequestError) as caught:
            completion_request(body)
        assert caught.value.param == param


def test_a_body_that_is_not_an_object() -> None:
    with pytest.raises(RequestError, match="JSON object"):
        chat_request([1, 2])
