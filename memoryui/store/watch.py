"""Changes made outside memoryui, noticed by the file system (inotify) instead of a walk.

One thread per watched workspace runs `watchfiles` (the Rust `notify` crate) and hands the
changed paths to the tree model, which re-states just those. Hidden names (`.git`, temp
files) are ignored. If the watcher cannot run (no inotify, too many watches, an error),
`alive` turns false and the tree model falls back to `git status` every TREE_TTL seconds.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from .threadnames import named

log = logging.getLogger("memoryui.store")

# watchfiles' `watch` sleeps `step` ms, then takes the GIL to look for changes and for the
# stop flag: at 50 ms that was 20 wakeups a second in every process that watches, a sixth
# of an idle server's CPU. A change is still noticed within about a second.
STEP_MS = 500
DEBOUNCE_MS = 50


class Watcher:
    def __init__(self, root: Path, on_change: Callable[..., None],
                 on_ready: Callable[[], None] | None = None):
        self.root = root
        self.on_change = on_change
        self.on_ready = on_ready  # called once the watches are set up
        self._stop = threading.Event()
        self._ready = threading.Event()
        self.alive = False
        self._thread: threading.Thread | None = None

    def start(self, wait: float = 5.0) -> None:
        """Start watching; returns once the watches are set up (or `wait` seconds passed:
        0 to return at once, when `on_ready` covers what changed before they were)."""
        self.alive = True
        self._thread = threading.Thread(target=named(self._run), name="memoryui-watch", daemon=True)
        self._thread.start()
        self._ready.wait(wait)

    def stop(self) -> None:
        self._stop.set()
        self.alive = False

    def _wanted(self, _change: object, path: str) -> bool:
        rel = self._rel(path)
        return bool(rel) and not any(part.startswith(".") for part in rel.split("/"))

    def _rel(self, path: str) -> str:
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return ""

    def _run(self) -> None:
        try:
            # watchfiles' own engine: `watchfiles.watch` sets its watches up lazily inside a
            # generator, so a caller could not know when changes start to be seen.
            from watchfiles._rust_notify import RustNotify

            with RustNotify([str(self.root)], False, False, 300, True, True) as notify:
                self._ready.set()
                if self.on_ready is not None:
                    self.on_ready()
                while not self._stop.is_set():
                    raw = notify.watch(DEBOUNCE_MS, STEP_MS, 60_000, self._stop)
                    if raw in ("stop", "signal"):
                        return
                    if raw == "timeout":
                        continue
                    paths = {self._rel(p) for _c, p in raw if self._wanted(_c, p)}
                    if paths:
                        self.on_change(*paths)
        except Exception:  # noqa: BLE001 - the tree model falls back to git status
            log.exception("file watcher stopped; falling back to git status checks")
        finally:
            self.alive = False
            self._ready.set()
