"""The OpenAI-compatible request bodies, read strictly: every field is honoured or refused.

``chat_request(body)`` and ``completion_request(body)`` turn a decoded JSON body into a
``Job``; anything this server cannot honour is a ``RequestError`` (HTTP 400) that names the field
(``param``), never a field silently dropped. Fields that carry no constraint and change nothing
here (``user``, ``metadata``, ``store``...) are accepted and ignored, as OpenAI documents them as
bookkeeping. Costs: linear in the body's size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

#: Fields that are bookkeeping, not constraints or sampling: read and ignored.
IGNORED = frozenset({"user", "metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier"})
#: Most completions per request (``n``) and stop strings per request.
MAX_CHOICES = 8
MAX_STOPS = 4
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


class RequestError(Exception):
    """A request this server refuses: HTTP ``status`` (400 unless said), the offending field as
    ``param`` (a dotted path), an OpenAI ``code``."""

    def __init__(self, message: str, param: str | None = None, status: int = 400, code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param, self.status, self.code = message, param, status, code

    def body(self) -> dict[str, Any]:
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class Sampling:
    """How tokens are drawn: ``temperature`` 0 is greedy; ``top_p`` keeps the smallest set of
    allowed tokens whose probability reaches it; ``seed`` makes a run repeatable (choice ``i`` of
    ``n`` uses ``seed + i``)."""

    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    n: int = 1


@dataclass(frozen=True)
class Tool:
    """A tool the model may call: a function with JSON Schema ``parameters``, or a custom tool whose
    input is free text or a text of a Lark or regex ``grammar`` (``syntax``)."""

    name: str
    kind: str  # "function" or "custom"
    description: str = ""
    parameters: Any = None  # function: its JSON Schema
    syntax: str | None = None  # custom: "lark", "regex", or None (free text)
    definition: str = ""
    strict: bool = False


@dataclass
class Job:
    """One request, read: the prompt (``messages`` for chat, ``prompt`` text otherwise), the
    constraint (``constraint``: a kind and its spec, or None), tools, sampling, streaming."""

    endpoint: str  # "chat" or "completion"
    model: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    prompt: str = ""
    sampling: Sampling = Sampling()
    constraint: tuple[str, Any] | None = None  # ("json_schema", (schema, strict)), ("regex", p)...
    tools: tuple[Tool, ...] = ()
    tool_choice: str | None = None  # "none", "auto", "required", or a tool's name
    parallel_tool_calls: bool = True
    stream: bool = False
    include_usage: bool = False


def _number(body: dict[str, Any], name: str, default: float, low: float, high: float, *, open_low: bool = False) -> float:
    value = body.get(name, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise RequestError(f"'{name}' must be a number", name)
    if value < low or value > high or (open_low and value == low):
        raise RequestError(f"'{name}' must be {'>' if open_low else '>='} {low} and <= {high}", name)
    return float(value)


def _integer(body: dict[str, Any], name: str, low: int, high: int | None = None) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{name}' must be an integer", name)
    if value < low or (high is not None and value > high):
        raise RequestError(f"'{name}' must be >= {low}" + (f" and <= {high}" if high is not None else ""), name)
    return value


def _refuse_unsupported(body: dict[str, Any], known: frozenset[str]) -> None:
    for name in body:
        if name not in known and name not in IGNORED:
            hint = (" (structured output here: 'response_format' or 'structured_outputs')"
                    if name.startswith(("guided_", "guided")) else "")
            raise RequestError(f"unsupported parameter '{name}': this server does not honour it{hint}", name,
                               code="unsupported_parameter")
    if body.get("logprobs") or body.get("top_logprobs") is not None:
        raise RequestError("'logprobs' is not supported by this server", "logprobs", code="unsupported_parameter")
    for name in ("frequency_penalty", "presence_penalty"):
        if body.get(name) not in (None, 0, 0.0):
            raise RequestError(f"'{name}' is not supported by this server (only 0)", name, code="unsupported_parameter")
    if body.get("logit_bias"):
        raise RequestError("'logit_bias' is not supported by this server", "logit_bias", code="unsupported_parameter")


def _sampling(body: dict[str, Any]) -> Sampling:
    stop = body.get("stop")
    if stop is None:
        stops: tuple[str, ...] = ()
    elif isinstance(stop, str):
        stops = (stop,)
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop) and len(stop) <= MAX_STOPS:
        stops = tuple(stop)
    else:
        raise RequestError(f"'stop' must be a string or a list of at most {MAX_STOPS} strings", "stop")
    if any(not s for s in stops):
        raise RequestError("'stop' strings must not be empty", "stop")
    max_tokens = _integer(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _integer(body, "max_tokens", 1)
    seed = _integer(body, "seed", -(2 ** 63), 2 ** 63 - 1)
    return Sampling(temperature=_number(body, "temperature", 1.0, 0.0, 2.0),
                    top_p=_number(body, "top_p", 1.0, 0.0, 1.0, open_low=True),
                    seed=None if seed is None else seed % (2 ** 64),
                    max_tokens=max_tokens, stop=stops, n=_integer(body, "n", 1, MAX_CHOICES) or 1)


def _response_format(value: Any) -> tuple[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise RequestError("'response_format' must be an object with a 'type'", "response_format")
    kind = value["type"]
    if kind == "text":
        return None
    if kind == "json_object":
        return ("json_schema", ({"type": "object"}, False))
    if kind == "json_schema":
        spec = value.get("json_schema")
        if not isinstance(spec, dict) or "schema" not in spec:
            raise RequestError("'response_format.json_schema' must be an object with a 'schema'",
                               "response_format.json_schema")
        strict = spec.get("strict") or False
        if not isinstance(strict, bool):
            raise RequestError("'response_format.json_schema.strict' must be a boolean",
                               "response_format.json_schema.strict")
        return ("json_schema", (spec["schema"], strict))
    raise RequestError(f"response_format type {kind!r} is not supported (text, json_object, json_schema)",
                       "response_format.type")


def _structured_outputs(value: Any) -> tuple[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RequestError("'structured_outputs' must be an object", "structured_outputs")
    given = {k: v for k, v in value.items() if v is not None}
    known = {"json", "regex", "choice", "grammar"}
    unknown = sorted(set(given) - known)
    if unknown:
        raise RequestError(f"structured_outputs.{unknown[0]} is not supported (one of json, regex, choice, grammar)",
                           f"structured_outputs.{unknown[0]}", code="unsupported_parameter")
    if len(given) != 1:
        raise RequestError("'structured_outputs' takes exactly one of json, regex, choice, grammar",
                           "structured_outputs")
    (kind, spec), = given.items()
    if kind == "json":
        if isinstance(spec, str):
            try:
                spec = json.loads(spec)
            except ValueError as exc:
                raise RequestError(f"structured_outputs.json is not JSON: {exc}", "structured_outputs.json") from exc
        return ("json_schema", (spec, False))
    if kind == "choice":
        if not isinstance(spec, list) or not spec or not all(isinstance(c, str) for c in spec):
            raise RequestError("structured_outputs.choice must be a non-empty list of strings",
                               "structured_outputs.choice")
        return ("choice", tuple(spec))
    if not isinstance(spec, str):
        raise RequestError(f"structured_outputs.{kind} must be a string", f"structured_outputs.{kind}")
    return (kind, spec)


def _tools(body: dict[str, Any]) -> tuple[Tool, ...]:
    tools = body.get("tools")
    if tools is None:
        return ()
    if not isinstance(tools, list):
        raise RequestError("'tools' must be a list", "tools")
    read: list[Tool] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type") not in ("function", "custom"):
            raise RequestError(f"{where}: a tool is an object of type 'function' or 'custom'", f"{where}.type")
        kind = tool["type"]
        spec = tool.get(kind)
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
            raise RequestError(f"{where}.{kind} must be an object with a 'name'", f"{where}.{kind}.name")
        description = spec.get("description") or ""
        if kind == "function":
            parameters = spec.get("parameters", {"type": "object", "properties": {}})
            read.append(Tool(spec["name"], "function", str(description), parameters, strict=bool(spec.get("strict"))))
            continue
        form = spec.get("format") or {"type": "text"}
        if not isinstance(form, dict) or form.get("type") not in ("text", "grammar"):
            raise RequestError(f"{where}.custom.format must be of type 'text' or 'grammar'", f"{where}.custom.format")
        syntax, definition = None, ""
        if form["type"] == "grammar":
            grammar = form.get("grammar")
            if not isinstance(grammar, dict) or grammar.get("syntax") not in ("lark", "regex") or \
                    not isinstance(grammar.get("definition"), str):
                raise RequestError(f"{where}.custom.format.grammar needs 'syntax' (lark or regex) and a 'definition'",
                                   f"{where}.custom.format.grammar")
            syntax, definition = grammar["syntax"], grammar["definition"]
        read.append(Tool(spec["name"], "custom", str(description), syntax=syntax, definition=definition))
    names = [t.name for t in read]
    if len(set(names)) != len(names):
        raise RequestError("tool names must be distinct", "tools")
    return tuple(read)


def _tool_choice(body: dict[str, Any], tools: tuple[Tool, ...]) -> str | None:
    choice = body.get("tool_choice")
    if not tools:
        if choice not in (None, "none"):
            raise RequestError("'tool_choice' needs 'tools'", "tool_choice")
        return None
    if choice is None:
        return "auto"
    if choice in ("none", "auto", "required"):
        return choice  # type: ignore[no-any-return]
    if isinstance(choice, dict) and choice.get("type") in ("function", "custom"):
        name = (choice.get(choice["type"]) or {}).get("name")
        if name not in {t.name for t in tools}:
            raise RequestError(f"tool_choice names {name!r}, which is not among the tools", "tool_choice")
        return str(name)
    raise RequestError("'tool_choice' must be 'none', 'auto', 'required' or a named tool", "tool_choice")


def _messages(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not value:
        raise RequestError("'messages' must be a non-empty list", "messages")
    read = []
    for index, message in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise RequestError(f"{where}.role must be one of {', '.join(sorted(ROLES))}", f"{where}.role")
        content = message.get("content")
        if isinstance(content, list):  # parts: only text ones can be read here
            texts = []
            for part in content:
                if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                    raise RequestError(f"{where}.content: only text parts are supported", f"{where}.content")
                texts.append(part["text"])
            content = "".join(texts)
        elif content is None:
            content = ""
        elif not isinstance(content, str):
            raise RequestError(f"{where}.content must be a string or a list of text parts", f"{where}.content")
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise RequestError(f"{where}.tool_calls must be a list", f"{where}.tool_calls")
        read.append({"role": message["role"], "content": content, "tool_calls": calls,
                     "name": message.get("name") or "", "tool_call_id": message.get("tool_call_id") or ""})
    return read


_COMMON = frozenset({"model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "seed", "n", "stop",
                     "stream", "stream_options", "response_format", "structured_outputs", "logprobs", "top_logprobs",
                     "frequency_penalty", "presence_penalty", "logit_bias"})
_CHAT = _COMMON | {"messages", "tools", "tool_choice", "parallel_tool_calls"}
_COMPLETION = _COMMON | {"prompt", "echo", "suffix", "best_of"}


def _common(body: Any, known: frozenset[str], endpoint: str) -> Job:
    if not isinstance(body, dict):
        raise RequestError("the body must be a JSON object")
    _refuse_unsupported(body, known)
    stream = body.get("stream") or False
    if not isinstance(stream, bool):
        raise RequestError("'stream' must be a boolean", "stream")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict) or set(options) - {"include_usage"}:
        raise RequestError("'stream_options' supports only 'include_usage'", "stream_options")
    if options and not stream:
        raise RequestError("'stream_options' needs 'stream': true", "stream_options")
    model = body.get("model", "")
    if not isinstance(model, str):
        raise RequestError("'model' must be a string", "model")
    formats = _response_format(body.get("response_format")), _structured_outputs(body.get("structured_outputs"))
    if formats[0] is not None and formats[1] is not None:
        raise RequestError("give one of 'response_format' and 'structured_outputs', not both", "structured_outputs")
    job = Job(endpoint=endpoint, model=model, sampling=_sampling(body), constraint=formats[0] or formats[1],
              stream=stream, include_usage=bool(options.get("include_usage")))
    if job.constraint is not None and job.sampling.stop:
        raise RequestError("'stop' would cut a constrained output short: give it without a structured output", "stop")
    return job


def chat_request(body: Any) -> Job:
    """A ``POST /v1/chat/completions`` body as a ``Job`` (``RequestError`` for what is refused)."""
    job = _common(body, _CHAT, "chat")
    job.messages = _messages(body.get("messages"))
    job.tools = _tools(body)
    job.tool_choice = _tool_choice(body, job.tools)
    parallel = body.get("parallel_tool_calls", True)
    if not isinstance(parallel, bool):
        raise RequestError("'parallel_tool_calls' must be a boolean", "parallel_tool_calls")
    job.parallel_tool_calls = parallel
    if job.tool_choice not in (None, "none") and job.constraint is not None:
        raise RequestError("a tool call and a response format cannot both constrain one output: give "
                           "tool_choice 'none' or no response format", "response_format")
    if job.tool_choice not in (None, "none") and job.sampling.stop:
        raise RequestError("'stop' would cut a tool call short: give it without tools", "stop")
    return job


def completion_request(body: Any) -> Job:
    """A ``POST /v1/completions`` body as a ``Job``."""
    job = _common(body, _COMPLETION, "completion")
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if not isinstance(prompt, str):
        raise RequestError("'prompt' must be a string (one prompt per request)", "prompt")
    for name, default in (("echo", False), ("suffix", None), ("best_of", None)):
        if body.get(name) not in (default, None, 1 if name == "best_of" else default):
            raise RequestError(f"'{name}' is not supported by this server", name, code="unsupported_parameter")
    job.prompt = prompt
    return job
