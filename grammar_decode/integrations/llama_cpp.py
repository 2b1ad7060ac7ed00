"""llama-cpp-python glue: a vocabulary from a loaded model, a logits processor for
``Llama.create_completion(logits_processor=...)``, and an incremental ``logits_fn`` for
``grammar_decode.generate``.
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

import llama_cpp
import numpy as np

from ..grammar import CompiledGrammar
from ..masking.logits import masked_logits
from ..matcher import Matcher
from ..vocab import Vocabulary


_LOG_CALLBACK: Any = None


def silence_logs() -> None:
    """Drop llama.cpp's log lines from now on, process-wide (``Llama(verbose=False)`` leaves some,
    such as ``llama_kv_cache_iswa: using full-size SWA cache``)."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:
        @llama_cpp.llama_log_callback
        def drop(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
            return None

        _LOG_CALLBACK = drop  # kept alive: llama.cpp holds the pointer
    llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))


class LlamaLogits:
    """``logits_fn`` for ``grammar_decode.generate`` over a ``llama_cpp.Llama``.

    Keeps whatever prefix of the requested ids the model's context already holds (the prompt of
    the previous request, the tokens of this one) and evaluates only the rest, at least the last
    token, whose logits it returns as a float32 view (valid until the next evaluation).
    """

    def __init__(self, llama: "llama_cpp.Llama") -> None:
        self.llama = llama

    def __call__(self, token_ids: Sequence[int]) -> np.ndarray:
        ids = np.asarray(token_ids, dtype=np.intc)
        if len(ids) == 0:
            raise ValueError("LlamaLogits needs at least one token (a BOS or a prompt)")
        held = self.llama.input_ids[: self.llama.n_tokens]
        shared = min(len(held), len(ids))
        differ = np.flatnonzero(held[:shared] != ids[:shared])
        common = int(differ[0]) if len(differ) else shared
        keep = min(common, len(ids) - 1)  # the last token is always evaluated: its logits are needed
        self.llama.n_tokens = keep  # Llama.eval drops the context past n_tokens
        self.llama.eval(ids[keep:].tolist())
        pointer = llama_cpp.llama_get_logits_ith(self.llama.ctx, -1)
        return np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_float)),
                                     shape=(self.llama.n_vocab(),))


class LlamaCppLogitsProcessor:
    """A llama-cpp-python logits processor: ``fn(input_ids, scores) -> scores``.

    llama-cpp-python calls it once per sampled position with the whole context so far. A call
    whose ids extend the previous call's by exactly one token continues the completion (the
    matcher advances by that token); any other call starts a new completion with these ids as
    its prompt, so one processor can serve successive ``create_completion`` calls. Disallowed
    scores become -inf in place. With ``max_tokens``, the closing budget applies
    (``Matcher.budget_mask``): the document is complete by then if
    ``max_tokens >= grammar.min_completion_tokens(vocab)``. Pass the same ``max_tokens`` to
    ``create_completion``, and a context (``n_ctx``) large enough for prompt plus document:
    llama-cpp-python silently shortens ``max_tokens`` to fit its context.
    """

    def __init__(self, grammar: CompiledGrammar, vocab: Vocabulary, max_tokens: int | None = None) -> None:
        self.grammar = grammar
        self.vocab = vocab
        self.max_tokens = max_tokens
        self.matcher: Matcher = grammar.matcher(vocab)
        self._history: np.ndarray | None = None
        self._generated = 0

    def reset(self) -> None:
        """Forget the current completion (the next call starts a new one)."""
        self.matcher.reset()
        self._history = None
        self._generated = 0

    def __call__(self, input_ids: Any, scores: np.ndarray) -> np.ndarray:
        ids = np.asarray(input_ids)
        history = self._history
        if (history is not None and len(ids) == len(history) + 1
                and np.array_equal(ids[:-1], history)):
            self.matcher.advance(int(ids[-1]))
            self._generated += 1
        else:
            self.reset()
        self._history = ids.copy()
        if self.max_tokens is None:
            mask = self.matcher.mask()
        else:
            mask = self.matcher.budget_mask(self.max_tokens - self._generated)
        masked_logits(scores, mask, out=scores)  # in place, one pass
        return scores
