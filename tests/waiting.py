"""Waiting for a condition in tests: never a fixed sleep, never a timing assumption.

A wait returns as soon as its condition holds; the deadline only bounds a hang on a busy
machine, and the poll interval is how often the condition is asked, not a pace.
"""

from __future__ import annotations

import time
from collections.abc import Callable

DEADLINE = 120.0


def wait_for(what: str, condition: Callable[[], object], timeout: float = DEADLINE,
             every: float = 0.05) -> None:
    """Poll `condition` until it holds; fail naming `what` at the deadline."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, f"timed out after {timeout:.0f} s waiting for {what}"
        time.sleep(every)
