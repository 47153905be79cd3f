"""OS names for memoryui's threads, so `top -H`, `ps -L` and `/proc/<pid>/task/*/comm` say
which thread is the commit tick, the search indexer or a request.

Python 3.11 names its threads only for itself: to the OS every thread of a worker is
"python", and telling the commit tick's CPU from a request's took `py-spy dump`. Each
thread memoryui starts runs its target through `named` (a pool's threads call
`name_os_thread` as their initializer), which gives the OS the thread's Python name without
the "memoryui-" prefix (the kernel keeps 15 bytes: "committer", "search-indexer",
"sync"). Elsewhere than Linux it does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable

PREFIX = "memoryui-"
_PR_SET_NAME = 15  # prctl's option
_LIMIT = 15  # TASK_COMM_LEN less its NUL


def _find_prctl() -> Callable[..., int] | None:
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _find_prctl()


def name_os_thread() -> None:
    """Give the calling thread its Python name, as short as the kernel keeps it."""
    if _prctl is None:
        return
    name = threading.current_thread().name.removeprefix(PREFIX)
    raw = name.encode("ascii", "replace")[:_LIMIT]
    _prctl(_PR_SET_NAME, ctypes.c_char_p(raw), 0, 0, 0)


def named(target: Callable[[], object]) -> Callable[[], None]:
    """`target` for `threading.Thread`, run after the thread is named in the OS."""
    @functools.wraps(target)
    def run() -> None:
        name_os_thread()
        target()
    return run
