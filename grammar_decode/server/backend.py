"""The model behind the server: one llama.cpp model, its vocabulary, its chat prompt, and the
sampling loop that masks every token with a request's matcher.

One model serves one request at a time (llama.cpp's context is not shared between threads): the
server calls ``Backend.generate`` from a single worker thread. The loop is the library's
``generate`` with what a server needs beside it: ``top_p``, stop strings, a callback per piece of
decoded text (streaming), and a cancel flag read before every token (a client that went away
frees the model at once).
"""

from __future__ import annotations

import codecs
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..generation import any_but, sample, sampling_logits
from ..grammar import CompiledGrammar
from ..vocab import Vocabulary
from .protocol import Sampling

#: finish reasons, as OpenAI names them
STOP, LENGTH = "stop", "length"


@dataclass
class Output:
    """One completion: its text, token ids and why it ended (``stop``: the text is complete or a
    stop string came; ``length``: ``max_tokens`` ran out first)."""

    text: str
    token_ids: list[int]
    finish_reason: str


class Cancelled(Exception):
    """The request's client went away."""


def draw(logits: np.ndarray, temperature: float, top_p: float, rng: np.random.Generator) -> int:
    """A token from logits already masked (-inf outside): greedy at temperature 0, else softmax
    sampling, restricted to the smallest set of the likeliest tokens whose probability reaches
    ``top_p``. O(allowed) plus a sort of the allowed where ``top_p`` < 1."""
    if temperature <= 0 or top_p >= 1.0:
        return sample(logits, temperature, rng)
    candidates = np.flatnonzero(logits > -np.inf)
    values = logits[candidates].astype(np.float64) / temperature
    values -= values.max()
    weights = np.exp(values)
    order = np.argsort(-weights, kind="stable")
    cumulative = np.cumsum(weights[order])
    keep = order[: int(np.searchsorted(cumulative, top_p * cumulative[-1])) + 1]
    kept = weights[keep]
    pick = int(np.searchsorted(np.cumsum(kept), rng.random() * kept.sum(), side="right"))
    return int(candidates[keep[min(pick, len(keep) - 1)]])


class Backend:
    """A model for the server: ``generate`` under a grammar, ``tokenize``, ``chat_prompt``
    (``LlamaBackend``, ``TransformersBackend``). ``n_ctx`` is the context (prompt plus completion)
    in tokens; a chat template (Jinja text) comes from the model or ``chat_template``; without
    either, chats are written as a plain ``User:``/``Assistant:`` transcript."""

    model_id: str
    n_ctx: int
    vocab: Vocabulary

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def _logits(self, ids: Sequence[int]) -> np.ndarray:
        """The next token's logits after ``ids`` (the model's context kept where it can)."""
        raise NotImplementedError

    def _fresh(self) -> None:
        """Forget the context kept from the previous request (a seeded request starts afresh)."""

    def _render(self, turns: list[dict[str, str]]) -> str | None:
        """The prompt of ``turns`` through the model's chat template; None without one."""
        return None

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text`` with BOS first where the model wants one and the text lacks it."""
        raise NotImplementedError

    def chat_prompt(self, messages: list[dict[str, Any]], instructions: str = "") -> str:
        """The prompt of a chat: ``messages`` (read by ``protocol``) through the chat template, with
        ``instructions`` (the tools' description) as a system message first. Tool results and
        earlier tool calls become text (``<tool_call>...</tool_call>``), as templates without tools
        have no place for them."""
        turns = [{"role": "system", "content": instructions}] if instructions else []
        for message in messages:
            content = message["content"]
            for call in message["tool_calls"]:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    content += f'<tool_call>{{"name": "{function.get("name", "")}", "arguments": ' \
                               f'{function.get("arguments", "{}")}}}</tool_call>'
            role = message["role"]
            if role == "tool":
                role, content = "user", f"Tool result ({message['tool_call_id'] or message['name']}): {content}"
            elif role == "developer":
                role = "system"
            turns.append({"role": role, "content": content})
        rendered = self._render(turns)
        if rendered is not None:
            return rendered
        lines = []
        for turn in turns:
            name = {"system": "System", "user": "User", "assistant": "Assistant"}[turn["role"]]
            lines.append(f"{name}: {turn['content']}")
        return "\n".join(lines) + "\nAssistant:"

    def generate(self, prompt_ids: Sequence[int], grammar: CompiledGrammar, sampling: Sampling, seed: int | None,
                 max_tokens: int, cancelled: threading.Event, on_text: Callable[[str], None] | None = None) -> Output:
        """One completion of ``prompt_ids`` under ``grammar`` with the closing budget (complete by
        ``max_tokens`` whenever it is at least ``grammar.min_completion_tokens``). With a ``seed``
        the prompt is evaluated afresh (no prefix kept from the previous request), so that the same
        seed gives the same text. Calls
        ``on_text`` with each new piece of decoded text (whole characters only; text that may be
        the start of a stop string is held back until it is not). Hold ``self.lock``.

        Raises:
            Cancelled: ``cancelled`` was set.
        """
        vocab = self.vocab
        if seed is not None:
            # evaluated afresh: a prefix kept from another request and the rest evaluated in a
            # batch of another shape round the logits differently, and a seed would not repeat
            self._fresh()
        matcher = grammar.matcher(vocab)
        eos = set(vocab.eos_token_ids)
        rng = np.random.default_rng(seed)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        ids = list(prompt_ids)
        out: list[int] = []
        text = ""
        sent = 0
        finish = LENGTH
        stops = sampling.stop
        longest = max(map(len, stops), default=0)
        cut = -1
        for produced in range(max_tokens):
            if cancelled.is_set():
                raise Cancelled()
            mask = matcher.budget_mask(max_tokens - produced)
            if matcher.is_accepting() and not any_but(mask, eos):
                finish = STOP
                break
            masked = sampling_logits(self._logits(ids), mask)
            if masked is None:  # a mask that allows nothing before the text is complete: a bug here
                raise RuntimeError("the grammar allows no token here")
            token = draw(masked, sampling.temperature, sampling.top_p, rng)
            matcher.advance(token)  # TokenRejected here would be a bug in the masks
            if token in eos:
                finish = STOP
                break
            out.append(token)
            ids.append(token)
            piece = decoder.decode(vocab.token_bytes(token))
            text += piece
            if stops:  # only the new text and the longest stop's length before it can hold a new stop
                start = max(0, len(text) - len(piece) - longest + 1)
                cut = min((i for i in (text.find(s, start) for s in stops) if i >= 0), default=-1)
                if cut >= 0:
                    text = text[:cut]
                    finish = STOP
                    break
            ready = len(text) - held_back(text, stops)
            if on_text is not None and ready > sent:
                on_text(text[sent:ready])
                sent = ready
        else:
            if matcher.is_accepting():
                finish = STOP  # the budget ran out exactly as the text closed
        if cut < 0:
            text += decoder.decode(b"", final=True)  # a character cut short by max_tokens: U+FFFD
        if on_text is not None and len(text) > sent:
            on_text(text[sent:])
        return Output(text, out, finish)


class LlamaBackend(Backend):
    """A GGUF model through llama.cpp; its log lines silenced unless ``verbose``; the chat template
    is ``chat_template`` or the GGUF's ``tokenizer.chat_template``."""

    def __init__(self, model_path: Path, n_ctx: int = 4096, chat_template: str | None = None,
                 verbose: bool = False) -> None:
        super().__init__()
        import llama_cpp

        from ..integrations.llama_cpp import LlamaLogits, silence_logs

        if not verbose:
            silence_logs()
        path = Path(model_path)
        self.model_id = path.stem
        self.llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, verbose=verbose)
        self.n_ctx = n_ctx
        self.vocab = Vocabulary.from_llama(self.llama).prepare()
        self._llama_logits = LlamaLogits(self.llama)
        template = chat_template if chat_template is not None else self.llama.metadata.get("tokenizer.chat_template")
        self._formatter: Any = None
        if template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            eos, bos = self.llama.token_eos(), self.llama.token_bos()
            self._formatter = Jinja2ChatFormatter(template, self._piece(eos), self._piece(bos))

    def _piece(self, token: int) -> str:
        return self.llama.detokenize([token], special=True).decode("utf-8", errors="replace") if token >= 0 else ""

    def _logits(self, ids: Sequence[int]) -> np.ndarray:
        return np.asarray(self._llama_logits(ids))

    def _fresh(self) -> None:
        self.llama.n_tokens = 0

    def _render(self, turns: list[dict[str, str]]) -> str | None:
        return None if self._formatter is None else str(self._formatter(messages=turns).prompt)

    def tokenize(self, text: str) -> list[int]:
        """Special tokens written in ``text`` are read as such, as chat templates write them."""
        bos = self._piece(self.llama.token_bos())
        return list(self.llama.tokenize(text.encode("utf-8"), add_bos=not (bos and text.startswith(bos)),
                                        special=True))


class TransformersBackend(Backend):
    """A GGUF model through transformers (CPU, float32: ``integrations.transformers``); the chat
    template is ``chat_template`` or the tokenizer's."""

    def __init__(self, model_path: Path, n_ctx: int = 4096, chat_template: str | None = None) -> None:
        super().__init__()
        from ..integrations.transformers import load_gguf_model

        path = Path(model_path)
        self.model_id = path.stem
        self.vocab, _ids, self._torch_logits = load_gguf_model(path, "")
        self.vocab.prepare()
        from transformers import AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        if chat_template is not None:
            self.tokenizer.chat_template = chat_template
        self.n_ctx = n_ctx

    def _logits(self, ids: Sequence[int]) -> np.ndarray:
        return self._torch_logits(ids)

    def _fresh(self) -> None:
        self._torch_logits.forget()

    def _render(self, turns: list[dict[str, str]]) -> str | None:
        if not getattr(self.tokenizer, "chat_template", None):
            return None
        return str(self.tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True))

    def tokenize(self, text: str) -> list[int]:
        bos = self.tokenizer.bos_token
        ids = self.tokenizer(text, add_special_tokens=not (bos and text.startswith(bos))).input_ids
        return [int(i) for i in ids]


def held_back(text: str, stops: tuple[str, ...]) -> int:
    """How many characters at the end of ``text`` may begin one of ``stops`` (and are held back
    from a stream until they do not)."""
    held = 0
    for stop in stops:
        for size in range(min(len(stop) - 1, len(text)), held, -1):
            if text.endswith(stop[:size]):
                held = size
                break
    return held
