"""From a request's structured-output fields to one compiled grammar, and from an output back to
tool calls.

Every constraint goes through one ``GrammarCache`` (bounded, keyed by the canonical constraint,
shared by every request): ``response_format`` (``json_schema`` with or without ``strict``,
``json_object``), ``structured_outputs`` (``json``, ``regex``, ``choice``, ``grammar`` as Lark),
and ``tools`` with ``tool_choice``. A request without one is generated under ``FREE_TEXT``
(any UTF-8 text), so every output is text a client can decode.

Tool calls are written in one format whatever the model: ``<tool_call>`` + the call as JSON +
``</tool_call>``, the JSON an object ``{"name": ..., "arguments": {...}}`` whose arguments match
that function's ``parameters`` exactly (an ``anyOf`` over the tools), or, with
``parallel_tool_calls``, a non-empty array of such objects. ``required`` and a named tool: the
output is the call alone; ``auto``: free text, then optionally the call
(``compile_triggered``). A named custom tool's input is a text of its Lark or regex grammar
between the same markers. The models this server ships with have no tool-call format in their
chat template; the prompt then describes the tools and this format (``tool_instructions``).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from ..cache import GrammarCache
from ..errors import GrammarDecodeError
from ..grammar import CompiledGrammar
from ..limits import Limits
from .protocol import Job, RequestError, Tool

TRIGGER, END = "<tool_call>", "</tool_call>"
#: Any UTF-8 text: the constraint of a request without one.
FREE_TEXT = r"(?s).*"


def call_schema(tools: tuple[Tool, ...], parallel: bool) -> dict[str, Any]:
    """The JSON Schema of a call to one of ``tools`` (functions), or of a non-empty array of calls."""
    one = [{"type": "object", "properties": {"name": {"const": tool.name}, "arguments": tool.parameters},
            "required": ["name", "arguments"], "additionalProperties": False} for tool in tools]
    call = one[0] if len(one) == 1 else {"anyOf": one}
    return {"type": "array", "items": call, "minItems": 1} if parallel else call


def constraint_grammar(job: Job, cache: GrammarCache, limits: Limits) -> CompiledGrammar:
    """The grammar a request's output must match (``FREE_TEXT`` without a constraint).

    Raises:
        RequestError: a refused constraint (400 naming the field, with the typed error's message:
            keyword and JSON pointer for a schema).
    """
    field = "response_format"
    try:
        if job.tool_choice not in (None, "none"):
            field = "tools"
            return _tool_grammar(job, cache, limits)
        if job.constraint is None:
            return cache.regex(FREE_TEXT, limits=limits)
        kind, spec = job.constraint
        field = "structured_outputs" if kind != "json_schema" else field
        if kind == "json_schema":
            schema, strict = spec
            return cache.json_schema(schema, whitespace="compact", extra_keys="forbid" if strict else "schema",
                                     limits=limits)
        if kind == "regex":
            return cache.regex(spec, limits=limits)
        if kind == "choice":
            return cache.regex("|".join(re.escape(choice) for choice in spec), limits=limits)
        return cache.grammar(spec, limits=limits)
    except GrammarDecodeError as exc:
        raise RequestError(f"{field}: {exc}", field, code="constraint_refused") from exc
    except ImportError as exc:  # a Lark grammar without the lark package
        raise RequestError(f"{field}: {exc}", field, code="constraint_refused") from exc


def _tool_grammar(job: Job, cache: GrammarCache, limits: Limits) -> CompiledGrammar:
    named = [t for t in job.tools if t.name == job.tool_choice]
    if named and named[0].kind == "custom":
        tool = named[0]
        inner = cache.regex(FREE_TEXT, limits=limits) if tool.syntax is None else \
            cache.regex(tool.definition, limits=limits) if tool.syntax == "regex" else \
            cache.grammar(tool.definition, limits=limits)
        return cache.triggered(inner, TRIGGER, end=END, free_text=False, limits=limits)
    tools = tuple(named) or job.tools
    custom = [t.name for t in tools if t.kind == "custom"]
    if custom:
        raise RequestError(f"custom tool {custom[0]!r} is served only when tool_choice names it", "tools",
                           code="unsupported_parameter")
    calls = cache.json_schema(call_schema(tools, job.parallel_tool_calls and not named), whitespace="compact",
                              extra_keys="forbid" if any(t.strict for t in tools) else "schema", limits=limits)
    if job.tool_choice == "auto":
        return cache.triggered(calls, TRIGGER, end=END, limits=limits)
    return cache.triggered(calls, TRIGGER, end=END, free_text=False, limits=limits)


def tool_calls(text: str, job: Job) -> tuple[str | None, list[dict[str, Any]]]:
    """The content and the tool calls of an output written under ``constraint_grammar(job)``:
    the text before ``<tool_call>`` (None where empty and a call follows) and each call in the
    OpenAI form (``arguments`` as JSON text). No call: the whole text, no calls."""
    if job.tool_choice in (None, "none") or TRIGGER not in text:
        return text, []
    before, _, rest = text.partition(TRIGGER)
    body = rest[: -len(END)] if rest.endswith(END) else rest
    named = [t for t in job.tools if t.name == job.tool_choice]
    if named and named[0].kind == "custom":
        return before or None, [{"id": _call_id(), "type": "custom", "custom": {"name": named[0].name, "input": body}}]
    try:
        value = json.loads(body)
    except ValueError:  # cut short by max_tokens: no call to report
        return text, []
    calls = value if isinstance(value, list) else [value]
    return before or None, [{"id": _call_id(), "type": "function",
                             "function": {"name": call["name"],
                                          "arguments": json.dumps(call["arguments"], ensure_ascii=False,
                                                                  separators=(",", ":"))}} for call in calls]


def _call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]


def tool_instructions(job: Job) -> str:
    """A system text that lists the tools and the call format (for chat templates without tools)."""
    if job.tool_choice in (None, "none"):
        return ""
    lines = ["You can call tools. To call one, write " + TRIGGER +
             ('[{"name": ..., "arguments": {...}}, ...]' if job.parallel_tool_calls else '{"name": ..., "arguments": {...}}')
             + END + "." if not any(t.kind == "custom" for t in job.tools) else
             "To call a tool, write " + TRIGGER + " then its input, then " + END + ".", "Tools:"]
    for tool in job.tools:
        spec = json.dumps(tool.parameters, ensure_ascii=False) if tool.kind == "function" else \
            f"input: {tool.syntax or 'text'} {tool.definition}".rstrip()
        lines.append(f"- {tool.name}: {tool.description} {spec}".replace("  ", " "))
    if job.tool_choice == "required":
        lines.append("Call a tool now.")
    elif job.tool_choice != "auto":
        lines.append(f"Call {job.tool_choice} now.")
    return "\n".join(lines)
