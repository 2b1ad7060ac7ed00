"""The byte-bounded second-chance cache behind every mask cache."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammar_decode.lru import ByteBoundedLRU


def test_evicts_the_oldest_entry_not_used_since() -> None:
    cache: ByteBoundedLRU[str] = ByteBoundedLRU(30)
    for key in "abc":
        cache.put(key, key.upper(), 10)
    assert cache.get("a") == "A"  # a was used: b is the oldest unused entry
    cache.put("d", "D", 10)
    assert cache.get("b") is None
    assert [cache.get(k) for k in "acd"] == ["A", "C", "D"]
    assert cache.info()["evictions"] == 1


def test_unused_entries_go_first_in_insertion_order() -> None:
    cache: ByteBoundedLRU[int] = ByteBoundedLRU(3)
    for key in range(6):
        cache.put(key, key, 1)
    assert sorted(cache.entries) == [3, 4, 5]


def test_the_value_just_put_is_never_the_one_evicted() -> None:
    cache: ByteBoundedLRU[str] = ByteBoundedLRU(10)
    cache.put("a", "A", 5)
    cache.get("a")
    cache.put("b", "B", 10)  # needs all the room: a goes even though it was used
    assert cache.get("b") == "B" and cache.get("a") is None


def test_a_value_larger_than_the_budget_is_not_cached() -> None:
    cache: ByteBoundedLRU[str] = ByteBoundedLRU(10)
    cache.put("big", "x", 11)
    assert len(cache) == 0 and cache.get("big") is None


def test_replacing_a_key_keeps_the_byte_count() -> None:
    cache: ByteBoundedLRU[str] = ByteBoundedLRU(10)
    cache.put("a", "A", 6)
    cache.put("a", "A2", 8)
    assert cache.info()["bytes"] == 8 and cache.get("a") == "A2"


def test_negative_budget_is_refused() -> None:
    with pytest.raises(ValueError):
        ByteBoundedLRU(-1)


def test_hits_and_misses_are_counted_across_evictions() -> None:
    cache: ByteBoundedLRU[int] = ByteBoundedLRU(2)
    cache.put(1, 1, 1)
    cache.get(1)
    cache.get(1)
    cache.get(2)
    cache.put(2, 2, 1)
    cache.put(3, 3, 1)  # passes over 1 (used), evicts 2
    cache.get(1)
    info = cache.info()
    assert (info["hits"], info["misses"], info["evictions"]) == (3, 1, 1)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 50), st.lists(st.tuples(st.booleans(), st.integers(0, 20), st.integers(1, 20)), max_size=200))
def test_bound_and_contents_hold_under_any_sequence(budget: int, operations: list[tuple[bool, int, int]]) -> None:
    cache: ByteBoundedLRU[int] = ByteBoundedLRU(budget)
    truth: dict[int, int] = {}
    for is_put, key, size in operations:
        if is_put:
            cache.put(key, key * 1000 + size, size)
            if size <= budget:
                truth[key] = key * 1000 + size
                assert cache.get(key) == truth[key]  # what was just put is there
        else:
            found = cache.get(key)
            assert found is None or found == truth.get(key)
        info = cache.info()
        assert info["bytes"] <= budget
        assert info["bytes"] == sum(cache.size_of(key) for key in cache.entries)


def test_concurrent_puts_and_gets_keep_the_bound() -> None:
    cache: ByteBoundedLRU[int] = ByteBoundedLRU(100)

    def work(offset: int) -> None:
        for i in range(3000):
            cache.put((offset, i % 97), i, 1 + i % 7)
            cache.get((offset, (i * 7) % 97))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    info = cache.info()
    assert info["bytes"] <= 100
    assert info["bytes"] == sum(cache.size_of(key) for key in cache.entries)


def test_hits_counted_on_the_recent_dict_give_a_second_chance() -> None:
    """A hot path that reads ``entries`` and counts its hit on ``recent`` itself (as the mask
    caches do) keeps the entry through the next eviction; the dict it holds stays the cache's."""
    cache: ByteBoundedLRU[str] = ByteBoundedLRU(2)
    recent = cache.recent
    cache.put("a", "A", 1)
    cache.put("b", "B", 1)
    assert cache.entries.get("a") == "A"
    recent["a"] = recent.get("a", 0) + 1
    cache.put("c", "C", 1)
    assert sorted(cache.entries) == ["a", "c"] and cache.recent is recent and cache.info()["hits"] == 1


def test_stray_hits_of_evicted_entries_do_not_pile_up() -> None:
    cache: ByteBoundedLRU[int] = ByteBoundedLRU(4)
    for key in range(1000):
        cache.recent[("gone", key)] = 1  # hits counted by readers racing an eviction
        cache.put(key, key, 1)
    assert len(cache.recent) <= 2 * len(cache.entries) + 64 and cache.info()["hits"] == 1000
