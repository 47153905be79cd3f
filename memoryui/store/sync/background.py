"""Background rounds: one daemon thread per server process, at most one round at a time.

Each worker's thread tries the clone's sync lock without waiting, so workers never queue
rounds behind each other; a round that ran recently (by any worker, per the state file) is
not repeated before half an interval has passed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..threadnames import named
from .syncer import Syncer

log = logging.getLogger("memoryui.sync")


def start_background(get: Callable[[], Syncer | None], interval: float,
                     stop: threading.Event | None = None) -> threading.Thread | None:
    """Run `get().round()` every `interval` seconds in a daemon thread (None if interval <= 0)."""
    if interval <= 0:
        return None
    stop = stop or threading.Event()

    def loop() -> None:
        while True:
            try:
                syncer = get()
                if syncer is not None:
                    last = syncer.states.read().last_round or 0.0
                    if time.time() - last >= interval / 2:
                        syncer.round(blocking=False)
            except Exception:  # noqa: BLE001 - the thread must outlive any failure
                log.exception("background sync round failed")
            if stop.wait(interval):
                return

    thread = threading.Thread(target=named(loop), name="memoryui-sync", daemon=True)
    thread.stop = stop  # type: ignore[attr-defined]
    thread.start()
    return thread
