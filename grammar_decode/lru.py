"""A thread-safe recency cache bounded by the bytes its values hold."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, Hashable, TypeVar

V = TypeVar("V")


class ByteBoundedLRU(Generic[V]):
    """Evicts once the values' declared sizes pass ``max_bytes``, least recently used first
    (approximately: the *second-chance* policy). A value larger than the whole budget is not
    cached at all. Thread-safe: writes take a lock, reads do not need one.

    Why second chance rather than a strict LRU: a hit only counts itself (one store into
    ``recent``) instead of relinking the entry, which keeps the hit path of the mask cache at two dict
    operations. Eviction walks from the oldest insertion: an entry hit since it was inserted (or
    last passed over) is moved to the back with its count folded into the total, the first one not
    hit goes. Each entry is passed over at most once per hit, so eviction is O(1) amortised.

    Layout: ``entries`` maps each key to its value (a hot path may read it directly:
    ``value = cache.entries.get(key)``, then count the hit in ``recent`` as ``get`` does);
    the sizes and the hits since the last pass are dicts of ints beside it. No object per entry:
    an entry held as a ``[value, size, hits]`` list was one more object for the cyclic collector
    to visit in every full collection (37,000 of them, a quarter of its references, late in a
    long run).
    """

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must be >= 0")
        self.max_bytes = max_bytes
        self.entries: OrderedDict[Hashable, V] = OrderedDict()
        self._sizes: dict[Hashable, int] = {}
        #: hits per key since it was put or last passed over by eviction (hot paths hold this
        #: very dict: it is never replaced)
        self.recent: dict[Hashable, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()
        self._folded_hits = 0
        self.misses = 0
        self.evictions = 0

    def get(self, key: Hashable, default: object = None) -> V | None:
        # No lock: one dict lookup and one dict store are each atomic under the GIL. (The
        # counters may miss a beat under contention; they are statistics.)
        found = self.entries.get(key, _MISSING)
        if found is _MISSING:
            self.misses += 1
            return default  # type: ignore[return-value]
        recent = self.recent
        recent[key] = recent.get(key, 0) + 1
        return found  # type: ignore[return-value]

    def put(self, key: Hashable, value: V, size: int) -> None:
        if size > self.max_bytes:
            return
        with self._lock:
            items, sizes, recent = self.entries, self._sizes, self.recent
            if key in items:
                del items[key]
                self._bytes -= sizes[key]
                self._folded_hits += recent.pop(key, 0)
            items[key] = value
            sizes[key] = size
            self._bytes += size
            while self._bytes > self.max_bytes:
                oldest, found = items.popitem(last=False)
                hits = recent.pop(oldest, 0)
                if oldest == key or hits:
                    self._folded_hits += hits
                    items[oldest] = found  # a second chance (never evict what was just put), at the back
                    continue
                self._bytes -= sizes.pop(oldest)
                self.evictions += 1
            if len(recent) > 2 * len(items) + 64:
                # a reader that found an entry just before it went counts its hit after: such
                # strays are dropped here, so the dict stays bounded by the entries
                # (in place: hot paths hold this dict)
                for stray in [k for k in list(recent) if k not in items]:
                    self._folded_hits += recent.pop(stray, 0)

    def size_of(self, key: Hashable) -> int | None:
        """The declared size of ``key``'s entry, or None."""
        return self._sizes.get(key)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def hits(self) -> int:
        return self._folded_hits + sum(list(self.recent.values()))

    def info(self) -> dict[str, int]:
        return {"entries": len(self.entries), "bytes": self._bytes, "hits": self.hits, "misses": self.misses,
                "evictions": self.evictions}


_MISSING = object()
