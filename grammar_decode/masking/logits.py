"""Masked logits: the allowed entries kept, every other one set to -inf, in one pass.

``masked_logits(logits, mask)`` is what ``generate`` and the llama.cpp logits processor apply at
every step: over a 262k vocabulary it runs on every token, cache hit or not, so it is part of the
mask's cost. The C kernel (``_logits.c``, built beside the walks) makes one branch-free pass and
reports how many entries are left above -inf; ``reference_masked_logits`` is the numpy
reference (a full-width fill, a masked copy, a NaN scan), used where the extension is missing,
for dtypes other than float32 and float64, and under ``GRAMMAR_DECODE_WALK=python`` (which selects
the Python paths of every kernel). Tests compare the two entry for entry.
"""

from __future__ import annotations

import numpy as np

from ..kernels import load, selected

_logits = load("grammar_decode.masking._logits", "the compiled masked-logits kernel",
               "masks are applied with numpy")
#: Whether ``masked_logits`` uses the C kernel (see ``kernels``).
COMPILED = selected(_logits)
#: Tests only: a deliberately broken kernel (1: the first padding column let through; 2: NaN kept).
_MUTATION = 0


def masked_logits(logits: np.ndarray, mask: np.ndarray, out: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """``out`` (a new array of ``logits``' float dtype when None; may be ``logits`` itself, to mask
    in place) = ``logits`` where ``mask`` (bool, one per token id) allows and the logit is not NaN,
    -inf elsewhere, ids past ``len(mask)`` included (padding columns). Returns ``out`` and how many
    of its entries are above -inf. Non-float logits are converted to float32. O(W), one pass."""
    logits = np.asarray(logits)
    if not np.issubdtype(logits.dtype, np.floating):
        logits = logits.astype(np.float32)
    if out is None:
        out = np.empty_like(logits)
    if (COMPILED and logits.ndim == 1 and logits.dtype in (np.float32, np.float64) and out.dtype == logits.dtype
            and out.shape == logits.shape and logits.flags.c_contiguous and out.flags.c_contiguous
            and out.flags.writeable and mask.dtype == np.bool_ and mask.ndim == 1 and mask.flags.c_contiguous):
        live = _logits.mask_logits(logits, mask, out, _MUTATION)
        return out, live
    return reference_masked_logits(logits, mask, out)


def reference_masked_logits(logits: np.ndarray, mask: np.ndarray, out: np.ndarray) -> tuple[np.ndarray, int]:
    """``masked_logits`` with numpy (the reference)."""
    source = logits.copy() if np.shares_memory(logits, out) else logits
    out.fill(-np.inf)
    width = min(len(mask), logits.shape[-1])
    np.copyto(out[..., :width], source[..., :width], where=mask[:width])
    nan = np.isnan(out)
    if nan.any():  # NaN says nothing about a token: treat it as -inf
        out[nan] = -np.inf
    return out, int(np.count_nonzero(out > -np.inf))
