"""Cyclic garbage collection paused while a constraint compiles.

A compile allocates hundreds of thousands of small containers (expression nodes, rules, schema
views) and frees few of them until it ends, so CPython's generational collector, triggered every
700 allocations, mostly re-walks live objects: measured on SchemaStore's ``web-types.json`` on the
2-core development machine, 1.17 s with it, 0.87 s with it paused (docs/engine.md). Reference
counting still frees everything acyclic at once; cycles made during the compile wait until it
ends, which bounds them by the compile (``Limits.compile_seconds``).

When the outermost pause ends after more than ``YOUNG_AFTER_PAUSE`` containers were allocated
(net), the young generations are collected there and then, on the compile's clock: a compile's
survivors (the grammar's tables and rules) would otherwise sit in the youngest generation, be
traversed once by the next generation-0 collection and again by a generation-1 collection a few
masks later, which then lands inside a mask. Over every compare task in one process on the
development machine, the generation-1 collections inside masks took up to 13.6 ms before and up to
3.7 ms after (docs/compiled-core.md, "Fifteenth round").

Process-wide and nested safely: the first compile to enter pauses collection (only if it was
enabled), the last to leave turns it back on, so concurrent compiles in several threads and a
caller who disabled the collector on purpose are both respected.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

#: Containers allocated during a pause (net of those freed) past which the young generations are
#: collected when it ends, on the compile's clock (module docstring).
YOUNG_AFTER_PAUSE = 10_000

_lock = threading.Lock()
_depth = 0
_resume = False  # whether the outermost pause found collection enabled


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause ``gc`` for the ``with`` body (see the module docstring)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            if _resume:
                gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                if gc.get_count()[0] > YOUNG_AFTER_PAUSE:
                    gc.collect(1)
                gc.enable()
