"""A reference sampling loop: logits → mask → sample → advance, with a closing budget.

Framework integrations reuse the matcher directly; this loop is what tests and benchmarks drive
with a real or random ``logits_fn``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .errors import TokenRejected
from .grammar import CompiledGrammar
from .masking.logits import masked_logits
from .vocab import Vocabulary

LogitsFn = Callable[[Sequence[int]], np.ndarray]

#: stop reasons
EOS, COMPLETE, MAX_TOKENS, MASK_VIOLATION, NO_LEGAL_TOKEN = (
    "eos", "complete", "max_tokens", "mask_violation", "no_legal_token")


@dataclass
class GenerationResult:
    """What ``generate`` produced.

    ``stop_reason``: ``eos`` (the model chose EOS on a complete document), ``complete`` (the
    document is complete and no token but EOS may follow), ``max_tokens`` (budget exhausted: the
    text is a valid prefix, not a document) or ``mask_violation`` (the sampler picked a token the
    matcher refused) or ``no_legal_token`` (the text is incomplete and the mask allows nothing); the
last two are bugs in this package, or a vocabulary unable to spell what the grammar requires, and
never expected with the vocabularies it ships tests for. ``text`` is ``data`` decoded as
    UTF-8 (with replacement characters only for a truncated ``max_tokens`` prefix).
    ``mask_seconds`` counts computing and applying masks; ``total_seconds`` includes the logits;
    ``prompt_seconds`` is the first ``logits_fn`` call (which processes the prompt).
    """

    text: str
    data: bytes
    token_ids: list[int]
    stop_reason: str
    mask_seconds: float = 0.0
    total_seconds: float = 0.0
    prompt_seconds: float = 0.0
    masks: int = 0


def apply_mask(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Copy of ``logits`` (float dtype kept) with disallowed ids set to -inf. Ids past
    ``len(mask)`` (padding columns of wider logits) are always disallowed; NaN logits count as
    -inf (when nothing allowed is left, ``generate`` samples the allowed ids uniformly). O(W), one
    pass in C for 1-D float32/float64 logits (``masking.logits``)."""
    return masked_logits(logits, mask)[0]


def sample(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """Greedy for temperature 0, else softmax sampling over the entries above -inf (one exp and
    one cumulative sum over them, O(allowed)). ``+inf`` entries, if any, share all the mass."""
    if temperature <= 0:
        return int(np.argmax(logits))
    candidates = np.flatnonzero(logits > -np.inf)
    values = logits[candidates].astype(np.float64)
    certain = np.isposinf(values)
    if certain.any():
        candidates, values = candidates[certain], np.zeros(int(certain.sum()))
    values -= values.max()
    cumulative = np.cumsum(np.exp(values / temperature))
    pick = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return int(candidates[min(pick, len(candidates) - 1)])


def generate(logits_fn: LogitsFn, grammar: CompiledGrammar, vocab: Vocabulary, *, max_tokens: int = 256,
             temperature: float = 1.0, seed: int | None = None, prompt_ids: Sequence[int] = (),
             closing_budget: bool = True) -> GenerationResult:
    """Sample a document token by token under ``grammar``.

    Args:
        logits_fn: maps the token ids so far (prompt included) to 1-D logits of width >= len(vocab).
        max_tokens: most tokens to generate (EOS included).
        closing_budget: narrow the mask near the limit so the document always completes: a token
            is allowed only if the document can still be finished in the tokens left. Guarantee:
            if ``max_tokens >= grammar.min_completion_tokens(vocab)``, the result is a complete
            document, whatever the logits.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be >= 1")
    rng = np.random.default_rng(seed)
    matcher = grammar.matcher(vocab)
    eos = set(vocab.eos_token_ids)
    ids = list(prompt_ids)
    out: list[int] = []
    mask_seconds = 0.0
    prompt_seconds = 0.0
    masks = 0
    stop = MAX_TOKENS
    started = time.perf_counter()
    for produced in range(max_tokens):
        t0 = time.perf_counter()
        if closing_budget:
            mask = matcher.budget_mask(max_tokens - produced)
        else:
            mask = matcher.mask()
        mask_seconds += time.perf_counter() - t0
        masks += 1
        if matcher.is_accepting() and not any_but(mask, eos):
            stop = COMPLETE
            break
        t0 = time.perf_counter()
        logits = np.asarray(logits_fn(ids))
        if produced == 0:
            prompt_seconds = time.perf_counter() - t0
        if logits.ndim != 1 or logits.shape[0] < len(vocab):
            raise ValueError(f"logits_fn returned shape {logits.shape}; expected 1-D of width >= {len(vocab)}")
        t0 = time.perf_counter()
        masked = sampling_logits(logits, mask)
        mask_seconds += time.perf_counter() - t0
        if masked is None:
            stop = NO_LEGAL_TOKEN
            break
        token = sample(masked, temperature, rng)
        try:
            matcher.advance(token)
        except TokenRejected:
            stop = MASK_VIOLATION
            break
        out.append(token)
        ids.append(token)
        if token in eos:
            stop = EOS
            break
    if stop == MAX_TOKENS and matcher.is_accepting():
        stop = COMPLETE  # the budget ran out exactly as the document closed
    data = vocab.decode(out)
    return GenerationResult(
        text=data.decode("utf-8", errors="replace"), data=data, token_ids=out, stop_reason=stop,
        mask_seconds=mask_seconds, total_seconds=time.perf_counter() - started, masks=masks,
        prompt_seconds=prompt_seconds,
    )


def sampling_logits(logits: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
    """``logits`` with the ids ``mask`` forbids at -inf (``masked_logits``); where the model puts
    no weight on any allowed id (all -inf or NaN there), 0 on every allowed id, so that the grammar
    still decides, uniformly; None where ``mask`` allows nothing."""
    masked, live = masked_logits(logits, mask)
    if live:
        return masked
    if not mask.any():
        return None
    return np.where(np.pad(mask, (0, len(masked) - len(mask))), 0.0, -np.inf)


def any_but(mask: np.ndarray, excluded: set[int]) -> bool:
    """Whether ``mask`` allows some id outside ``excluded`` (the EOS ids: a complete text with
    nothing else allowed is finished)."""
    count = int(np.count_nonzero(mask))
    return count > sum(1 for i in excluded if mask[i])
