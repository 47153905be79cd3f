"""Give memory freed by a whole-workspace pass back to the system.

Listing 200k files, grouping them for the overview or indexing them for search allocates
and frees hundreds of MB of temporaries; glibc keeps what was freed inside its heaps, so a
worker's resident size stayed at its peak. `malloc_trim` returns the free pages (about
15 MB after an overview build, 60 MB after a search index build, at 200k files). Elsewhere
than glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import threading

_trim = None
_lock = threading.Lock()


def release() -> None:
    """Return free heap pages to the system (a few ms; after big passes only)."""
    global _trim
    with _lock:
        if _trim is None:
            try:
                _trim = ctypes.CDLL("libc.so.6").malloc_trim
            except (OSError, AttributeError):
                _trim = False
        if _trim:
            _trim(0)
