"""A ``transformers`` logits processor: grammar-constrained ``model.generate`` (JSON Schema, regex, Lark).

::

    from transformers import LogitsProcessorList
    from grammar_decode.integrations.transformers import TransformersLogitsProcessor

    vocab = gd.Vocabulary.from_hf(tokenizer)
    proc = TransformersLogitsProcessor(grammar, vocab, max_new_tokens=64)   # or [grammar_row0, grammar_row1]
    out = model.generate(**inputs, max_new_tokens=64, logits_processor=LogitsProcessorList([proc]))

One matcher per row of the batch. The first call records the prompt length (``input_ids.shape[1]``;
decoder-only generation pads on the left, so it is the same for every row); each later call
advances every row's matcher by the tokens generated since (``input_ids[row, prompt_len +
consumed:]``). Columns of ``scores`` at or past ``len(vocab)`` (padding of the model's logits) are
always -inf. A row whose matcher has taken EOS allows only EOS (``generate`` pads finished rows;
those pad tokens are not fed to the matcher).

Rows are identified by their history, not only their index: if a row's generated tokens no longer
extend what its matcher consumed (beam search reorders rows), its matcher is taken from the row
whose history it extends, or replayed from the start. Call ``reset()`` (or make a new processor)
before reusing one for another ``generate`` call; a call whose ``input_ids`` is not exactly one
column longer than the previous one, or has a different number of rows, starts over by itself.

Masks are applied by index: per cached recognizer-state mask (the masker's masks are shared,
read-only arrays) and device, a cached tensor of the allowed ids (sparse masks: keep those, -inf
elsewhere) or of the forbidden ids (dense masks, e.g. inside a string: set those to -inf), whichever
is shorter. A step costs one clone of ``scores`` plus O(min(allowed, forbidden)) per row: about
10–30 µs per 262,144-wide row on CPU, against 50–90 µs for a boolean ``masked_fill``/``where``.
"""

from __future__ import annotations

import time
from typing import Any, Sequence, Union

import numpy as np
import torch
from transformers import LogitsProcessor

from ..errors import TokenRejected
from ..grammar import CompiledGrammar
from ..matcher import Matcher
from ..vocab import Vocabulary

#: Most cached mask plans per cache (index tensors; one per distinct mask / (state, tokens left)).
_CACHE_LIMIT = 2048


class TransformersLogitsProcessor(LogitsProcessor):
    """Masks ``scores`` so each row can only continue a document of its grammar.

    Args:
        grammars: one ``CompiledGrammar`` for every row, or a sequence with one per prompt. When
            the batch has ``k`` times as many rows as grammars (``num_return_sequences`` or
            ``num_beams`` = ``k``: ``generate`` repeats each prompt ``k`` times in a row), row ``r``
            uses ``grammars[r // k]``.
        vocab: the model's vocabulary (``gd.Vocabulary.from_hf(tokenizer)``); must have an EOS id.
        max_new_tokens: enables the closing budget: the mask is ``matcher.budget_mask(
            max_new_tokens - generated)``, so that with ``max_new_tokens >=
            grammar.min_completion_tokens(vocab)`` (and the same ``max_new_tokens`` given to
            ``generate``) every row ends with a complete document. ``None``: plain masks.

    Attributes:
        mask_seconds: time spent in ``__call__`` (advancing matchers, looking up and applying
            masks), summed over calls; ``calls``: number of calls.
    """

    def __init__(self, grammars: Union[CompiledGrammar, Sequence[CompiledGrammar]], vocab: Vocabulary, *,
                 max_new_tokens: int | None = None) -> None:
        if isinstance(grammars, CompiledGrammar):
            self._grammars: list[CompiledGrammar] | None = None
            self._grammar: CompiledGrammar | None = grammars
        else:
            self._grammars = list(grammars)
            self._grammar = None
            if not self._grammars or not all(isinstance(g, CompiledGrammar) for g in self._grammars):
                raise TypeError("grammars must be a CompiledGrammar or a non-empty sequence of them")
        if not vocab.eos_token_ids:
            raise ValueError("the vocabulary has no EOS id: a finished document could never stop")
        if max_new_tokens is not None and max_new_tokens < 1:
            raise ValueError("max_new_tokens must be >= 1")
        self.vocab = vocab.prepare()  # trie and string slice now, not inside the first step
        self.max_new_tokens = max_new_tokens
        self._eos = np.array(vocab.eos_token_ids, dtype=np.int64)
        self._eos_only = np.zeros(len(vocab), dtype=bool)
        self._eos_only[self._eos] = True
        self._eos_only.flags.writeable = False
        self._plans: dict[tuple[int, int, str], tuple[np.ndarray, tuple[bool, torch.Tensor]]] = {}
        self._row_plans: dict[tuple[Any, ...], tuple[bool, torch.Tensor]] = {}
        self.mask_seconds = 0.0
        self.calls = 0
        self.reset()

    # -- state ---------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the batch (prompt length, matchers, histories); keep the mask tensor cache."""
        self.prompt_len: int | None = None
        self._last_len = 0
        self.matchers: list[Matcher] = []
        self._history: list[list[int]] = []

    def grammar_for(self, row: int, rows: int) -> CompiledGrammar:
        if self._grammar is not None:
            return self._grammar
        assert self._grammars is not None
        n = len(self._grammars)
        if rows % n:
            raise ValueError(f"{rows} rows for {n} grammars: the batch must have k rows per grammar")
        return self._grammars[row // (rows // n)]

    def generated_ids(self, row: int) -> list[int]:
        """The tokens row ``row``'s matcher has consumed (EOS included, later padding not)."""
        return list(self._history[row])

    def _start(self, input_ids: torch.Tensor) -> None:
        rows = int(input_ids.shape[0])
        self.prompt_len = int(input_ids.shape[1])
        self.matchers = [self.grammar_for(r, rows).matcher(self.vocab) for r in range(rows)]
        self._history = [[] for _ in range(rows)]

    def _sync(self, input_ids: torch.Tensor) -> None:
        """Bring every row's matcher up to ``input_ids``."""
        assert self.prompt_len is not None
        generated: list[list[int]] = input_ids[:, self.prompt_len:].tolist()
        if not all(ids[: len(h)] == h for ids, h in zip(generated, self._history)):
            self._regroup(generated)  # rows were reordered (beam search)
        for row, ids in enumerate(generated):
            matcher, history = self.matchers[row], self._history[row]
            for token in ids[len(history):]:
                if matcher.terminated:
                    break  # generate pads finished rows; those tokens are not the document's
                try:
                    matcher.advance(token)
                except TokenRejected as exc:
                    raise TokenRejected(token, f"row {row}, generated token {len(history)}: {exc}") from exc
                history.append(token)

    def _regroup(self, generated: list[list[int]]) -> None:
        """Give each row the matcher of the (old) row whose history its tokens extend the most,
        or a fresh one; copies, so that several rows may descend from one."""
        rows = len(generated)
        matchers: list[Matcher] = []
        histories: list[list[int]] = []
        for row, ids in enumerate(generated):
            grammar = self.grammar_for(row, rows)
            best, best_len = -1, -1
            for other, history in enumerate(self._history):
                if (len(history) > best_len and self.matchers[other].grammar is grammar
                        and ids[: len(history)] == history):
                    best, best_len = other, len(history)
            if best >= 0:
                matchers.append(self.matchers[best].copy())
                histories.append(list(self._history[best]))
            else:
                matchers.append(grammar.matcher(self.vocab))
                histories.append([])
        self.matchers, self._history = matchers, histories

    # -- masks ---------------------------------------------------------------------------------

    def _row_plan(self, row: int, width: int, device: torch.device) -> tuple[bool, torch.Tensor]:
        """The cached plan for row ``row``: keyed by (grammar, recognizer state, tokens left),
        so a warm step touches neither the masker nor numpy."""
        matcher = self.matchers[row]
        remaining = None if self.max_new_tokens is None else self.max_new_tokens - len(self._history[row])
        key: tuple[Any, ...]
        if matcher.terminated:
            key = (None, None, None, width, str(device))
        else:
            key = (matcher.grammar, matcher.state, remaining, width, str(device))
        plan = self._row_plans.get(key)
        if plan is None:
            if matcher.terminated:
                mask, shared = self._eos_only, True
            elif remaining is None:
                mask, shared = matcher.mask(), True
            else:
                mask = matcher.budget_mask(remaining)
                shared = mask is matcher.mask()
            plan = self._plan(mask, width, device, shared)
            if len(self._row_plans) >= _CACHE_LIMIT:
                self._row_plans.clear()
            self._row_plans[key] = plan
        return plan

    def _plan(self, mask: np.ndarray, width: int, device: torch.device, shared: bool) -> tuple[bool, torch.Tensor]:
        """How to apply ``mask`` to a row of ``width`` scores: ``(True, ids)`` = keep only these
        ids (the rest -inf), ``(False, ids)`` = set these ids to -inf — whichever list is shorter
        (padding columns at or past ``len(vocab)`` always count as forbidden). Plans of the
        masker's shared masks are also cached by mask identity (many keys share one mask)."""
        key = (id(mask), width, str(device))
        if shared:
            hit = self._plans.get(key)
            if hit is not None and hit[0] is mask:
                return hit[1]
        n = min(width, len(mask))
        allowed = np.flatnonzero(mask[:n])
        if len(allowed) <= width - len(allowed):
            plan = (True, torch.from_numpy(allowed).to(device))
        else:
            forbidden = np.concatenate([np.flatnonzero(~mask[:n]), np.arange(n, width)])
            plan = (False, torch.from_numpy(forbidden).to(device))
        if shared:  # the masker's cached masks live as long as the masker: pin them
            if len(self._plans) >= _CACHE_LIMIT:
                self._plans.clear()
            self._plans[key] = (mask, plan)
        return plan

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        started = time.perf_counter()
        rows, length = int(input_ids.shape[0]), int(input_ids.shape[1])
        # model.generate adds exactly one column between calls; anything else is a new generation
        if self.prompt_len is None or rows != len(self.matchers) or length != self._last_len + 1:
            self.reset()
            self._start(input_ids)
        else:
            self._sync(input_ids)
        self._last_len = length
        width = int(scores.shape[-1])
        out = scores.clone()
        for row in range(rows):
            keep, ids = self._row_plan(row, width, scores.device)
            target = out[row]
            if keep:
                kept = scores[row].index_select(0, ids)
                target.fill_(float("-inf"))
                target.index_copy_(0, ids, kept)
            else:
                target.index_fill_(0, ids, float("-inf"))
        self.mask_seconds += time.perf_counter() - started
        self.calls += 1
        return out

    def __repr__(self) -> str:
        grammars: Any = self._grammar if self._grammar is not None else f"{len(self._grammars or [])} grammars"
        return f"TransformersLogitsProcessor({grammars}, {self.vocab!r}, max_new_tokens={self.max_new_tokens})"


class TorchLogits:
    """``logits_fn`` for ``grammar_decode.generate`` over a causal LM: feeds only the tokens not
    yet in its cache (``past_key_values``) and returns the last position's logits as float32
    numpy. A history that does not extend the cached one starts over."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self._past: Any = None
        self._fed: list[int] = []

    def forget(self) -> None:
        """Drop the cache: the next call evaluates its whole history."""
        self._past, self._fed = None, []

    def __call__(self, token_ids: Sequence[int]) -> np.ndarray:
        ids = [int(i) for i in token_ids]
        if ids[: len(self._fed)] != self._fed or len(ids) == len(self._fed):
            self._past, self._fed = None, []
        new = ids[len(self._fed):]
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([new]), past_key_values=self._past, use_cache=True)
        self._past, self._fed = out.past_key_values, ids
        return out.logits[0, -1].float().numpy()


def load_gguf_model(path: Any, prompt: str) -> tuple[Vocabulary, list[int], TorchLogits]:
    """Load a local GGUF model and its tokenizer with transformers (CPU, float32), and return
    its vocabulary, the prompt's ids (with BOS as the tokenizer adds it) and a ``logits_fn``."""
    from pathlib import Path

    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(path)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    model.eval()
    extra_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    vocab = Vocabulary.from_hf(tokenizer, eos_token_ids=extra_eos)
    return vocab, list(tokenizer(prompt).input_ids), TorchLogits(model)
