"""A thread-safe LRU cache bounded by the bytes its values hold."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

V = TypeVar("V")


class ByteBoundedLRU(Generic[V]):
    """Least-recently-used eviction once the values' declared sizes pass ``max_bytes``. A value
    larger than the whole budget is not cached at all. O(1) per operation; thread-safe (writes
    take a lock, reads do not need one)."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key: Hashable, default: object = None) -> V | None:
        # No lock on reads: each OrderedDict call is atomic under the GIL, and a key evicted
        # between the lookup and the move is simply not moved. (The counters may miss a beat
        # under contention; they are statistics.)
        items = self._items
        found = items.get(key)
        if found is None:
            self.misses += 1
            return default  # type: ignore[return-value]
        try:
            items.move_to_end(key)
        except KeyError:
            pass
        self.hits += 1
        return found[0]

    def put(self, key: Hashable, value: V, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped
                self.evictions += 1

    def __len__(self) -> int:
        return len(self._items)

    def info(self) -> dict[str, int]:
        return {"entries": len(self._items), "bytes": self._bytes, "hits": self.hits, "misses": self.misses,
                "evictions": self.evictions}
