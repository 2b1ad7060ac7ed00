"""The masked-logits kernel (``masking/_logits.c``) against the numpy reference, entry for entry:
dtypes, widths either side of the mask's, NaN and infinities, in place; deliberately broken
kernels are caught by the same comparison."""

from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grammar_decode as gd
from grammar_decode.kernels import selected
from grammar_decode.masking import logits


def test_the_kernel_is_built_and_used() -> None:
    assert logits._logits is not None, "grammar_decode/masking/_logits.c was not compiled"
    # the module-level choice (this file's fixture turns the kernel on for the comparisons)
    assert selected(logits._logits) or os.environ.get("GRAMMAR_DECODE_WALK") == "python"


@pytest.fixture(autouse=True)
def kernel_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel is what this file tests: on wherever it is built, even where
    ``GRAMMAR_DECODE_WALK=python`` turns it off for everything else."""
    monkeypatch.setattr(logits, "COMPILED", logits._logits is not None)


def _both(values: np.ndarray, mask: np.ndarray) -> tuple[tuple[np.ndarray, int], tuple[np.ndarray, int]]:
    fast = logits.masked_logits(values, mask)
    slow = logits.reference_masked_logits(np.asarray(values), mask, np.empty_like(fast[0]))
    return fast, slow


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("values, mask, expected, live", [
    ([1.0, 2.0, 3.0], [True, False, True], [1.0, -INF, 3.0], 2),
    ([1.0, 2.0, 3.0, 4.0], [True, True], [1.0, 2.0, -INF, -INF], 2),  # padding columns: never allowed
    ([1.0, 2.0], [True, True, True], [1.0, 2.0], 2),  # a mask wider than the logits
    ([NAN, 2.0, NAN], [True, True, False], [-INF, 2.0, -INF], 1),  # NaN says nothing: -inf
    ([INF, -INF, 5.0], [True, True, True], [INF, -INF, 5.0], 2),
    ([1.0, 2.0], [False, False], [-INF, -INF], 0),
    ([], [], [], 0),
])
def test_masked_logits_table(dtype: type, values: list[float], mask: list[bool], expected: list[float],
                             live: int) -> None:
    array, allowed = np.array(values, dtype=dtype), np.array(mask, dtype=bool)
    (fast, fast_live), (slow, slow_live) = _both(array, allowed)
    assert _equal(fast, np.array(expected, dtype=dtype)) and fast_live == live
    assert _equal(slow, fast) and slow_live == live
    assert np.array_equal(array, np.array(values, dtype=dtype), equal_nan=True)  # the input is untouched


def test_in_place_and_other_layouts() -> None:
    rng = np.random.default_rng(3)
    values = rng.standard_normal(1000).astype(np.float32)
    mask = rng.random(1000) < 0.5
    expected = np.where(mask, values, -np.inf).astype(np.float32)
    inplace = values.copy()
    out, live = logits.masked_logits(inplace, mask, out=inplace)
    assert out is inplace and _equal(inplace, expected) and live == int(mask.sum())
    strided = np.repeat(values, 2)[::2]  # not contiguous: the reference path, same result
    assert _equal(logits.masked_logits(strided, mask)[0], expected)
    ints = np.arange(4)  # converted to float32
    assert _equal(logits.masked_logits(ints, np.array([True, False, True, True]))[0],
                  np.array([0, -np.inf, 2, 3], dtype=np.float32))
    assert _equal(gd.apply_mask(values, mask), expected)
    # a ctypes-backed array, as llama.cpp's logits processors get: buffer format "<f"
    cells = (ctypes.c_float * 1000)(*values.tolist())
    scores = np.ctypeslib.as_array(cells)
    assert logits.masked_logits(scores, mask, out=scores)[1] == int(mask.sum()) and _equal(scores, expected)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.floats(width=32), st.just(NAN)), max_size=80),
       st.lists(st.booleans(), max_size=90), st.sampled_from([np.float32, np.float64]))
def test_the_kernel_equals_the_reference(values: list[float], mask: list[bool], dtype: type) -> None:
    (fast, fast_live), (slow, slow_live) = _both(np.array(values, dtype=dtype), np.array(mask, dtype=bool))
    assert _equal(fast, slow) and fast_live == slow_live


@pytest.mark.parametrize("mutation", [1, 2])
def test_a_broken_kernel_is_caught(monkeypatch: pytest.MonkeyPatch, mutation: int) -> None:
    """1 lets the first padding column through, 2 keeps NaN: the comparison above fails on both."""
    monkeypatch.setattr(logits, "_MUTATION", mutation)
    values = np.array([1.0, NAN, 3.0, 4.0, 5.0], dtype=np.float32)
    mask = np.array([True, True, True, False])
    (fast, fast_live), (slow, slow_live) = _both(values, mask)
    assert not (_equal(fast, slow) and fast_live == slow_live)
