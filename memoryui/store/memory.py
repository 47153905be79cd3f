"""Give memory freed by a whole-workspace pass back to the system.

Listing 200k files, grouping them for the overview or indexing them for search allocates
and frees hundreds of MB of temporaries; glibc keeps what was freed inside its heaps, so a
worker's resident size stayed at its peak. `release` (malloc_trim) returns the free pages
after such a pass; `tune` (for servers) keeps blocks of 256 KB and more out of the heaps
altogether: glibc raises its mmap threshold each time such a block is freed, up to 32 MB,
after which the history read's megabyte buffers landed in the heap and their pages stayed
(15 MB of a worker's first start on 200k files). Elsewhere than glibc both do nothing.

In a tuned process `release` also collects once and freezes what is left (`gc.freeze`): the
millions of objects a pass leaves (a tree, a map, an overview) are then never walked by the
collector again, whose full collections otherwise stopped every thread for 100-250 ms at
200k files. Memory they free later is still freed by reference counting.
"""

from __future__ import annotations

import ctypes
import gc
import threading

M_MMAP_THRESHOLD = -3  # mallopt's parameter
MMAP_THRESHOLD = 256 * 1024

_trim = None
_lock = threading.Lock()
_freeze = False  # set by tune(): servers


def tune() -> None:
    """A fixed mmap threshold (which also turns glibc's moving one off); `release` freezes."""
    global _freeze
    _freeze = True
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    except (OSError, AttributeError):
        pass


def trim() -> None:
    """Return free heap pages to the system, without a collection (the pass's objects were
    freed by reference counting; a full collection of a large heap stops every thread)."""
    global _trim
    with _lock:
        if _trim is None:
            try:
                _trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):
                _trim = False
        if _trim:
            _trim(0)


def release() -> None:
    """Return free heap pages to the system (a few ms; after big passes only)."""
    with _lock:
        if _freeze:
            gc.unfreeze()  # what an earlier pass left and has since become garbage goes now
            gc.collect()
            gc.freeze()
    trim()
