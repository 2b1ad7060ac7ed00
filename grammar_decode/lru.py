"""A thread-safe recency cache bounded by the bytes its values hold."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

V = TypeVar("V")

#: An entry is ``[value, declared size, hits since it last came up for eviction]``; a hot path may
#: read ``entries`` directly: ``entry = cache.entries.get(key)``, then ``entry[HITS] += 1`` and
#: ``entry[VALUE]`` (what ``get`` does, without its call).
VALUE, SIZE, HITS = 0, 1, 2


class ByteBoundedLRU(Generic[V]):
    """Evicts once the values' declared sizes pass ``max_bytes``, least recently used first
    (approximately: the *second-chance* policy). A value larger than the whole budget is not
    cached at all. Thread-safe: writes take a lock, reads do not need one.

    Why second chance rather than a strict LRU: a hit only counts itself on its entry (one store
    into an object the lookup already touched) instead of relinking the entry, which keeps the
    hit path of the mask cache at one dict lookup. Eviction walks from the oldest insertion: an
    entry hit since it was inserted (or last passed over) is moved to the back with its count
    folded into the total, the first one not hit goes. Each entry is passed over at most once
    per hit, so eviction is O(1) amortised.
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.max_bytes = max_bytes
        self.entries: OrderedDict[Hashable, list] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._folded_hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key: Hashable, default: object = None) -> V | None:
        # No lock: one dict lookup and one list store are each atomic under the GIL. (The
        # counters may miss a beat under contention; they are statistics.)
        entry = self.entries.get(key)
        if entry is None:
            self.misses += 1
            return default  # type: ignore[return-value]
        entry[HITS] += 1
        return entry[VALUE]

    def put(self, key: Hashable, value: V, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            items = self.entries
            old = items.pop(key, None)
            if old is not None:
                self._bytes -= old[SIZE]
                self._folded_hits += old[HITS]
            items[key] = [value, size, 0]
            self._bytes += size
            while self._bytes > self.max_bytes:
                oldest, entry = items.popitem(last=False)
                if oldest == key or entry[HITS]:
                    self._folded_hits += entry[HITS]
                    entry[HITS] = 0
                    items[oldest] = entry  # a second chance (never evict what was just put), at the back
                    continue
                self._bytes -= entry[SIZE]
                self.evictions += 1

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def hits(self) -> int:
        return self._folded_hits + sum(entry[HITS] for entry in list(self.entries.values()))

    def info(self) -> dict[str, int]:
        return {"entries": len(self.entries), "bytes": self._bytes, "hits": self.hits, "misses": self.misses,
                "evictions": self.evictions}
