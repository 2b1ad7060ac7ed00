"""A ``transformers`` logits processor: JSON-Schema-constrained ``model.generate``.

::

    from transformers import LogitsProcessorList
    from grammar_decode.integrations.transformers import JSONSchemaLogitsProcessor

    vocab = gd.Vocabulary.from_hf(tokenizer)
    proc = JSONSchemaLogitsProcessor(grammar, vocab, max_new_tokens=64)   # or [grammar_row0, grammar_row1]
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
before reusing one for another ``generate`` call; a call whose ``input_ids`` is not longer than the
previous one, or has a different number of rows, starts over by itself.

Masks are applied from a cache of torch bool tensors, one per cached automaton-state mask and
device (the masker's masks are shared, read-only arrays), so a step costs one ``masked_fill`` over
``(batch, width)`` plus a dict lookup per row.
"""

from __future__ import annotations

import time
from typing import Any, Sequence, Union

import numpy as np
import torch
from transformers import LogitsProcessor

from ..errors import TokenRejected
from ..grammar import CompiledGrammar, Matcher
from ..vocab import Vocabulary

#: Most cached mask tensors (one per distinct state mask and device; 262 KB each for Gemma).
_CACHE_LIMIT = 512


class JSONSchemaLogitsProcessor(LogitsProcessor):
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
        self.vocab = vocab
        self.max_new_tokens = max_new_tokens
        self._eos = np.array(vocab.eos_token_ids, dtype=np.int64)
        self._eos_only = np.zeros(len(vocab), dtype=bool)
        self._eos_only[self._eos] = True
        self._eos_only.flags.writeable = False
        self._tensors: dict[tuple[int, int, str], tuple[np.ndarray, torch.Tensor]] = {}
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

    def _row_mask(self, row: int) -> np.ndarray:
        matcher = self.matchers[row]
        if matcher.terminated:
            return self._eos_only
        if self.max_new_tokens is None:
            return matcher.mask()
        remaining = self.max_new_tokens - len(self._history[row])
        return matcher.budget_mask(remaining)

    def _forbidden(self, mask: np.ndarray, width: int, device: torch.device) -> torch.Tensor:
        """Bool tensor of ``width``: True where the token is NOT allowed (padding columns too).
        Cached for the masker's shared (read-only) masks; built on the fly for one-off masks."""
        key = (id(mask), width, str(device))
        hit = self._tensors.get(key)
        if hit is not None and hit[0] is mask:
            return hit[1]
        forbidden = np.ones(width, dtype=bool)
        n = min(width, len(mask))
        np.logical_not(mask[:n], out=forbidden[:n])
        tensor = torch.from_numpy(forbidden).to(device)
        if not mask.flags.writeable:  # shared cache entries live as long as the masker: cache them
            if len(self._tensors) >= _CACHE_LIMIT:
                self._tensors.clear()
            self._tensors[key] = (mask, tensor)
        return tensor

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        started = time.perf_counter()
        rows, length = int(input_ids.shape[0]), int(input_ids.shape[1])
        if self.prompt_len is None or rows != len(self.matchers) or length <= self._last_len:
            self.reset()
            self._start(input_ids)
        else:
            self._sync(input_ids)
        self._last_len = length
        width = int(scores.shape[-1])
        forbidden = [self._forbidden(self._row_mask(r), width, scores.device) for r in range(rows)]
        block = forbidden[0].unsqueeze(0) if rows == 1 else torch.stack(forbidden)
        out = scores.masked_fill(block, float("-inf"))
        self.mask_seconds += time.perf_counter() - started
        self.calls += 1
        return out

    def __repr__(self) -> str:
        grammars: Any = self._grammar if self._grammar is not None else f"{len(self._grammars or [])} grammars"
        return f"JSONSchemaLogitsProcessor({grammars}, {self.vocab!r}, max_new_tokens={self.max_new_tokens})"
