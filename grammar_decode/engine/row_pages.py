"""The memory under the lexer's dense table: zero pages of its own, huge pages only where a
compile has laid them ahead of the states.

The table (``LexemeDFA.dense``) is 256 MiB of address space, written a 1 KiB row at a time as
states are made. Where the first write into memory happens decides what it costs:

* NumPy advises transparent huge pages for every array of 4 MiB or more. On such a table the first
  row written into each 2 MiB makes the kernel clear a whole huge page inside that one cell:
  4-5 ms on a virtual machine that backs guest memory on first touch, the largest single mask
  measured (docs/compiled-core.md, sixteenth round).
* On 4 KiB pages that clearing is spread, one fault every four states, but the walks, which read
  rows all over the table, then miss the TLB more: cold masks took ~5 % longer.

So the table is mapped with huge pages off, and ``RowPages.prepare`` (called when a grammar is
compiled: ``LexemeDFA.prepare_rows``) turns them on for the next whole 2 MiB regions past the
states made so far and faults them in there: the clearing moves to compile time, and the rows
most masks read lie on huge pages. States a run of masks makes past the prepared regions land on
4 KiB pages, as before. Where the OS has no such advice (not Linux), the table is a plain private
mapping; so is it where the kernel refuses the advice (built without transparent huge pages:
``EINVAL``), and no region is prepared then.
"""

from __future__ import annotations

import mmap

import numpy as np

#: The size of a transparent huge page on x86-64 and most arm64 kernels; on others the advice is
#: still valid and the regions are merely aligned to 2 MiB.
HUGE_PAGE = 2 << 20
_PRIVATE = getattr(mmap, "MAP_PRIVATE", None)
_ANONYMOUS = getattr(mmap, "MAP_ANONYMOUS", None)
_NO_HUGE = getattr(mmap, "MADV_NOHUGEPAGE", None)
_HUGE = getattr(mmap, "MADV_HUGEPAGE", None)


class RowPages:
    """``count`` int32 zeros on a private anonymous mapping of their own (zero pages until
    written; the mapping goes with the last array that views it), huge pages off until
    ``prepare`` turns them on ahead of use. ``array`` is the writable view. Not locked: the
    caller holds the DFA's lock around ``prepare`` and the writes of new states' rows."""

    def __init__(self, count: int) -> None:
        nbytes = max(1, 4 * count)
        if _PRIVATE is not None and _ANONYMOUS is not None:
            # private, not mmap's default shared mapping: a forked child writes its own copy
            self._region = mmap.mmap(-1, nbytes, flags=_PRIVATE | _ANONYMOUS)
        else:
            self._region = mmap.mmap(-1, nbytes)
        #: whether the kernel takes huge-page advice (not where it was built without them)
        self.advised = _NO_HUGE is not None and _HUGE is not None and _advise(self._region, _NO_HUGE)
        self.array: np.ndarray = np.frombuffer(self._region, dtype=np.int32, count=count)
        start = self.array.ctypes.data
        #: the offset of the first 2 MiB-aligned address in the mapping
        self._aligned = -start % HUGE_PAGE
        #: offsets below this are used or prepared; regions are prepared from here on
        self._frontier = self._aligned
        self.prepared = 0

    def prepare(self, used_bytes: int, ahead_bytes: int) -> int:
        """Turn huge pages on for, and fault in, the whole 2 MiB regions that lie past the first
        ``used_bytes`` and start before ``used_bytes + ahead_bytes`` (regions prepared before are
        not again; a region a row below ``used_bytes`` was written into is left on small pages).
        Costs one huge page's clearing per region prepared (milliseconds on a virtual machine);
        nothing where the OS has no such advice. Returns the number of regions prepared now."""
        if not self.advised:
            return 0
        size = len(self._region)
        first = self._aligned  # the first region no row was written into
        if used_bytes > first:
            first += -(-(used_bytes - first) // HUGE_PAGE) * HUGE_PAGE
        frontier = max(self._frontier, first)
        made = 0
        while frontier < used_bytes + ahead_bytes and frontier + HUGE_PAGE <= size:
            if not _advise(self._region, _HUGE, frontier, HUGE_PAGE):
                self.advised = False
                break
            self.array[frontier // 4] = 0  # a row not made yet: the write only faults the page in
            frontier += HUGE_PAGE
            made += 1
        self._frontier = frontier
        self.prepared += made
        return made


def _advise(region: mmap.mmap, advice: int, *span: int) -> bool:
    """``region.madvise(advice, *span)``; False where the kernel refuses it (``OSError``)."""
    try:
        region.madvise(advice, *span)
    except OSError:
        return False
    return True
