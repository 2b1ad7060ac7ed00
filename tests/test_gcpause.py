"""The cyclic collector paused while a constraint compiles (``gcpause``): nested pauses, a caller
who disabled the collector, and the young generations collected when a large pause ends."""

from __future__ import annotations

import gc
from typing import Iterator

import pytest

from grammar_decode import gcpause
from grammar_decode.gcpause import YOUNG_AFTER_PAUSE, collection_paused


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generations of the collections that run while the test does."""
    seen: list[int] = []

    def note(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    was_enabled = gc.isenabled()
    gc.enable()
    gc.collect()
    gc.callbacks.append(note)
    try:
        yield seen
    finally:
        gc.callbacks.remove(note)
        if not was_enabled:
            gc.disable()


def test_nested_pauses_resume_collection_once_the_outermost_ends(collections: list[int]) -> None:
    with collection_paused():
        assert not gc.isenabled()
        with collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled() and gcpause._depth == 0


def test_a_caller_who_disabled_the_collector_keeps_it_disabled(collections: list[int]) -> None:
    gc.disable()
    try:
        with collection_paused():
            kept = [[i] for i in range(2 * YOUNG_AFTER_PAUSE)]
        assert not gc.isenabled() and collections == []  # nothing collected on the caller's behalf
    finally:
        gc.enable()
    assert len(kept) == 2 * YOUNG_AFTER_PAUSE


def test_a_large_pause_ends_with_its_survivors_collected_out_of_the_young_generations(
        collections: list[int]) -> None:
    """More than ``YOUNG_AFTER_PAUSE`` containers kept: one generation-1 collection when the pause
    ends, after which the youngest generation is empty and the survivors are in the oldest."""
    with collection_paused():
        kept = [[i] for i in range(2 * YOUNG_AFTER_PAUSE)]
        assert collections == []
    assert collections[:1] == [1]
    assert gc.get_count()[0] < YOUNG_AFTER_PAUSE // 10
    assert gc.is_tracked(kept[-1]) and any(obj is kept for obj in gc.get_objects(2))


def test_a_small_pause_leaves_its_survivors_to_the_collector_as_it_runs(collections: list[int]) -> None:
    with collection_paused():
        kept = [[i] for i in range(YOUNG_AFTER_PAUSE // 10)]
    assert 1 not in collections and len(kept) == YOUNG_AFTER_PAUSE // 10
