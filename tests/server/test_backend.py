"""The server's sampling and streaming helpers (``server/backend.py``, ``server/app.py``), without
a model: top-p, stop strings held back, the content of an ``auto`` tool choice as it streams."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import require

require("starlette", "serve")

from grammar_decode.server.app import _Content  # noqa: E402
from grammar_decode.server.backend import draw, held_back  # noqa: E402


def test_top_p_keeps_the_smallest_likeliest_set() -> None:
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05], dtype=np.float64))
    rng = np.random.default_rng(0)
    drawn = {draw(logits.copy(), 1.0, 0.75, rng) for _ in range(400)}
    assert drawn == {0, 1}  # 0.5 + 0.3 reaches 0.75; 2 and 3 are never drawn
    assert {draw(logits.copy(), 1.0, 0.5, rng) for _ in range(100)} == {0}
    assert {draw(logits.copy(), 1.0, 1.0, rng) for _ in range(2000)} == {0, 1, 2, 3}
    assert draw(logits.copy(), 0.0, 0.1, rng) == 0  # greedy


def test_top_p_never_draws_a_masked_token() -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=1000)
    logits[::2] = -np.inf
    for _ in range(200):
        assert draw(logits, 0.8, 0.9, rng) % 2 == 1


def test_frequencies_follow_the_renormalised_nucleus() -> None:
    logits = np.log(np.array([0.6, 0.3, 0.1]))
    rng = np.random.default_rng(2)
    counts = np.bincount([draw(logits, 1.0, 0.85, rng) for _ in range(6000)], minlength=3)
    assert counts[2] == 0 and abs(counts[0] / counts[:2].sum() - 2 / 3) < 0.03


@pytest.mark.parametrize("text, stops, held", [
    ("hello wor", ("world",), 3), ("hello", ("world",), 0), ("abc", ("c", "bcd"), 2), ("ab", ("abc",), 2),
    ("x", (), 0),
])
def test_text_that_may_begin_a_stop_string_is_held_back(text: str, stops: tuple[str, ...], held: int) -> None:
    assert held_back(text, stops) == held


def test_auto_tool_content_streams_until_the_trigger() -> None:
    content = _Content()
    pieces = ["Let me", " check <", "tool", "_call>{\"name\"", ":1}"]
    assert [content.feed(p) for p in pieces] == ["Let me", " check ", "", "", ""]
    assert content.finish() == ""
    plain = _Content()
    assert [plain.feed(p) for p in ["a <to", "y"]] == ["a ", "<toy"] and plain.finish() == ""
    held = _Content()
    assert held.feed("end <tool_") == "end " and held.finish() == "<tool_"
