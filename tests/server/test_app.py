"""``grammar-decode serve`` live on 127.0.0.1, started as a user starts it (a subprocess on the
embedded Gemma 3 270M), driven by the real ``openai`` client: valid structured output, every
tool_choice, streaming, every refusal status, and concurrent clients."""

from __future__ import annotations

import concurrent.futures
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from helpers import REPOSITORY, require, validate

pytestmark = pytest.mark.model

#: the requests in flight the server admits: the concurrency test fills it exactly, the busy test overfills it
QUEUE = 8
BODY_LIMIT = 200_000
SIGNUP = {"type": "object", "properties": {
    "email": {"type": "string", "format": "email", "maxLength": 40},
    "born": {"type": "string", "format": "date"},
    "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["email", "born", "age"], "additionalProperties": False}
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "the weather in a city",
                                            "parameters": {"type": "object", "properties": {
                                                "city": {"type": "string", "maxLength": 30},
                                                "unit": {"enum": ["C", "F"]}},
                                                "required": ["city", "unit"], "additionalProperties": False}}}
ADD = {"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"],
    "additionalProperties": False}}}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]
SUM = 'start: "(" NUMBER ("+" NUMBER)* ")"\n%import common.NUMBER\n'


class Server:
    def __init__(self, process: subprocess.Popen, port: int) -> None:
        self.process, self.port = process, port
        self.base = f"http://127.0.0.1:{port}/v1"

    def client(self) -> Any:
        openai = require("openai")
        return openai.OpenAI(base_url=self.base, api_key="unused", max_retries=0, timeout=300)


def _start(*options: str) -> tuple[Server, list[str]]:
    """A server on a free port, started as a user starts it; its stderr lines as they come."""
    require("uvicorn", "serve")
    process = subprocess.Popen([sys.executable, "-m", "grammar_decode", "serve", "--port", "0", *options],
                               stderr=subprocess.PIPE, text=True, cwd=REPOSITORY)
    lines: list[str] = []
    found: list[int] = []

    def read() -> None:
        for line in process.stderr:  # type: ignore[union-attr]
            lines.append(line)
            match = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
            if match:
                found.append(int(match.group(1)))

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 600
    while not found and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if not found:
        process.kill()
        pytest.fail("the server did not start:\n" + "".join(lines))
    return Server(process, found[0]), lines


def _stop(server: Server) -> None:
    server.process.terminate()
    server.process.wait(30)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    running, lines = _start("--max-queue", str(QUEUE), "--max-body-bytes", str(BODY_LIMIT))
    try:
        yield running
    finally:
        _stop(running)
    assert not [line for line in lines if "llama_" in line], lines  # llama.cpp's log lines stay silent


def _schema_format(schema: dict, strict: bool = False) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": strict}}


@pytest.mark.parametrize("strict", [False, True])
def test_json_schema_output_validates(server: Server, strict: bool) -> None:
    client = server.client()
    reply = client.chat.completions.create(model="gemma", messages=[{"role": "user", "content": "Sign me up."}],
                                           response_format=_schema_format(SIGNUP, strict), max_tokens=80, seed=4, n=2)
    assert len(reply.choices) == 2 and reply.usage.completion_tokens > 0
    for choice in reply.choices:
        assert choice.finish_reason == "stop"
        validate(SIGNUP, json.loads(choice.message.content))


def test_json_object_and_the_closing_budget(server: Server) -> None:
    client = server.client()
    reply = client.chat.completions.create(model="gemma", messages=ASK, response_format={"type": "json_object"},
                                           max_tokens=30, seed=1, temperature=1.5)
    assert reply.choices[0].finish_reason == "stop"
    assert isinstance(json.loads(reply.choices[0].message.content), dict)


@pytest.mark.parametrize("choice", ["required", "named", "auto", "none"])
def test_every_tool_choice(server: Server, choice: str) -> None:
    client = server.client()
    tool_choice: Any = {"type": "function", "function": {"name": "add"}} if choice == "named" else choice
    reply = client.chat.completions.create(model="gemma", messages=ASK, tools=[WEATHER, ADD], tool_choice=tool_choice,
                                           max_tokens=80, seed=3)
    message, finish = reply.choices[0].message, reply.choices[0].finish_reason
    if choice == "none":
        assert not message.tool_calls and finish in ("stop", "length") and message.content
        return
    if choice == "auto" and not message.tool_calls:
        assert finish in ("stop", "length") and "<tool_call>" not in (message.content or "")
        return
    assert finish == "tool_calls" and message.tool_calls
    tools = {"get_weather": WEATHER, "add": ADD}
    for call in message.tool_calls:
        assert call.type == "function" and call.id.startswith("call_")
        validate(tools[call.function.name]["function"]["parameters"], json.loads(call.function.arguments))
        if choice == "named":
            assert call.function.name == "add"


def test_a_tool_call_made_in_auto_mode(server: Server) -> None:
    """Across seeds, ``auto`` writes text and, where the model takes the trigger, a valid call."""
    client = server.client()
    for seed in range(6):
        reply = client.chat.completions.create(
            model="gemma", messages=[{"role": "user", "content": "Call get_weather for Paris."}], tools=[WEATHER],
            tool_choice="auto", max_tokens=40, seed=seed, temperature=1.0)
        message, finish = reply.choices[0].message, reply.choices[0].finish_reason
        # which of the two a small base model writes is its choice; each is checked where it comes
        if message.tool_calls:
            assert finish == "tool_calls" and "<tool_call>" not in (message.content or "")
        else:
            assert finish in ("stop", "length") and "<tool_call>" not in message.content
        for call in message.tool_calls or []:
            validate(WEATHER["function"]["parameters"], json.loads(call.function.arguments))


def _streamed(client: Any, **request: Any) -> tuple[str, list, str, Any]:
    content, calls, finish, usage = [], {}, None, None
    for chunk in client.chat.completions.create(stream=True, **request):
        if chunk.usage:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.content:
                content.append(choice.delta.content)
            for call in choice.delta.tool_calls or []:
                entry = calls.setdefault(call.index, {"name": "", "arguments": ""})
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    return "".join(content), [calls[k] for k in sorted(calls)], finish, usage


@pytest.mark.parametrize("kind", ["text", "schema", "tools"])
def test_streaming_equals_the_whole_reply(server: Server, kind: str) -> None:
    client = server.client()
    request: dict[str, Any] = {"model": "gemma", "messages": ASK, "max_tokens": 40, "seed": 7}
    if kind == "schema":
        request["response_format"] = _schema_format(SIGNUP)
        request["max_tokens"] = 80
    elif kind == "tools":
        request.update(tools=[WEATHER, ADD], tool_choice="required", parallel_tool_calls=True)
    content, calls, finish, usage = _streamed(client, stream_options={"include_usage": True}, **request)
    whole = client.chat.completions.create(**request).choices[0]
    assert finish == whole.finish_reason and usage.completion_tokens > 0
    if kind == "tools":
        assert calls == [{"name": c.function.name, "arguments": c.function.arguments} for c in whole.message.tool_calls]
    else:
        assert content == whole.message.content


@pytest.mark.parametrize("outputs, check", [
    ({"json": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}},
     lambda text: all(isinstance(x, int) for x in json.loads(text))),
    ({"regex": r"\d{4}-\d{2}-\d{2}"}, lambda text: re.fullmatch(r"\d{4}-\d{2}-\d{2}", text)),
    ({"choice": ["sunny", "rainy", "windy"]}, lambda text: text in ("sunny", "rainy", "windy")),
    ({"grammar": SUM}, lambda text: require("lark", "lark").Lark(SUM).parse(text) is not None),
])
def test_structured_outputs(server: Server, outputs: dict, check: Any) -> None:
    client = server.client()
    for endpoint in ("chat", "completion"):
        if endpoint == "chat":
            reply = client.chat.completions.create(model="gemma", messages=ASK, max_tokens=40, seed=2,
                                                   extra_body={"structured_outputs": outputs})
            text, finish = reply.choices[0].message.content, reply.choices[0].finish_reason
        else:
            reply = client.completions.create(model="gemma", prompt="Answer: ", max_tokens=40, seed=2,
                                              extra_body={"structured_outputs": outputs})
            text, finish = reply.choices[0].text, reply.choices[0].finish_reason
        assert finish == "stop" and check(text), (endpoint, text)


@pytest.mark.parametrize("request_, status, words", [
    ({"response_format": _schema_format({"type": "object", "properties": {"a": {"pattern": "(?<=x)y"}}})}, 400,
     ["pattern", "/properties/a"]),
    ({"response_format": _schema_format(SIGNUP), "max_tokens": 3}, 400, ["max_tokens 3", "give at least"]),
    ({"logprobs": True}, 400, ["logprobs"]),
    ({"extra_body": {"guided_regex": "a+"}}, 400, ["guided_regex", "structured_outputs"]),
    ({"extra_body": {"structured_outputs": {"regex": "a", "json": {}}}}, 400, ["exactly one"]),
    ({"response_format": {"type": "json_object"}, "stop": ["}"]}, 400, ["stop"]),
    ({"max_tokens": 100_000}, 400, ["context"]),
])
def test_refusals(server: Server, request_: dict, status: int, words: list[str]) -> None:
    openai = require("openai")
    with pytest.raises(openai.APIStatusError) as caught:
        server.client().chat.completions.create(model="gemma", messages=ASK, **request_)
    assert caught.value.status_code == status
    for word in words:
        assert word in caught.value.message


def _post(server: Server, path: str, body: bytes, timeout: float = 120) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    connection.request("POST", "/v1" + path, body=body, headers={"Content-Type": "application/json"})
    return connection.getresponse()


def _get(server: Server, path: str) -> Any:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    connection.request("GET", path)
    return json.loads(connection.getresponse().read())


def test_raw_http_refusals(server: Server) -> None:
    assert _post(server, "/chat/completions", b"{not json").status == 400
    big = json.dumps({"model": "gemma", "messages": [{"role": "user", "content": "x" * BODY_LIMIT}]}).encode()
    assert _post(server, "/chat/completions", big).status == 413
    assert _get(server, "/v1/models")["data"][0]["id"].startswith("gemma")
    assert _get(server, "/health")["status"] == "ok"


def test_busy_and_disconnected_clients_free_their_places(server: Server) -> None:
    """``QUEUE`` streams hold every place: one more request is a 503; once they disconnect, the
    places are free again (each generation stops before its next token)."""
    body = json.dumps({"model": "gemma", "messages": ASK, "max_tokens": 400, "stream": True, "seed": 1}).encode()
    streams = []
    try:
        for _ in range(QUEUE):
            response = _post(server, "/chat/completions", body)
            assert response.status == 200
            streams.append(response)
        busy = _post(server, "/chat/completions", body)
        assert busy.status == 503 and "busy" in json.loads(busy.read())["error"]["message"]
    finally:
        for response in streams:
            response.close()  # the connection goes: the server sees the client leave
    deadline = time.monotonic() + 120
    while _get(server, "/health")["in_flight"] and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _get(server, "/health")["in_flight"] == 0


def test_concurrent_clients(server: Server) -> None:
    """``QUEUE`` clients at once, mixed constraints: every one answered, every output valid."""

    def one(index: int) -> None:
        client = server.client()
        if index % 2:
            reply = client.chat.completions.create(model="gemma", messages=ASK, response_format=_schema_format(SIGNUP),
                                                   max_tokens=80, seed=index)
            validate(SIGNUP, json.loads(reply.choices[0].message.content))
        else:
            reply = client.chat.completions.create(model="gemma", messages=ASK, tools=[WEATHER], tool_choice="required",
                                                   max_tokens=60, seed=index)
            call = reply.choices[0].message.tool_calls[0]
            validate(WEATHER["function"]["parameters"], json.loads(call.function.arguments))

    with concurrent.futures.ThreadPoolExecutor(QUEUE) as pool:
        list(pool.map(one, range(QUEUE)))


def _readme_block(marker: str) -> str:
    text = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- " + marker + r" -->\s*```\w*\n(.*?)```", text, re.S)
    assert match, marker
    return match.group(1)


def test_the_readme_server_examples_run(server: Server, tmp_path: Path) -> None:
    """The README's ``curl`` and ``openai`` examples, run as written against this server's port."""
    port = str(server.port)
    curl = _readme_block("serve-curl").replace("8000", port)
    result = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    json.loads(reply["choices"][0]["message"]["content"])
    script = tmp_path / "client.py"
    script.write_text(_readme_block("serve-openai").replace("8000", port), encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_the_transformers_backend() -> None:
    """The same server on transformers: a schema-valid reply, whole and streamed alike."""
    require("transformers", "transformers")
    running, lines = _start("--backend", "transformers")
    try:
        client = running.client()
        request = {"model": "gemma", "messages": [{"role": "user", "content": "Sign me up."}],
                   "response_format": _schema_format(SIGNUP), "max_tokens": 80, "seed": 5}
        whole = client.chat.completions.create(**request).choices[0]
        assert whole.finish_reason == "stop", lines
        validate(SIGNUP, json.loads(whole.message.content))
        content, _calls, finish, _usage = _streamed(client, **request)
        assert content == whole.message.content and finish == "stop"
    finally:
        _stop(running)
