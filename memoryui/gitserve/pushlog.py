"""Which commits arrived by a push to `/git/workspace.git`, and the host token that pushed.

An append-only file in the clone's state folder (`.git/memoryui/pushed`), one line per
commit: `<sha> <token id> <token name>`. Pushed commits keep their own authors; this is
where the pusher is recorded, and what the activity feed reads to mark them "via git push".
Read incrementally, like the sync's list of arrivals.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from pathlib import Path

from memoryui.store.journaled import append_line

PUSHED_FILE = "pushed"


class PushedLog:
    """sha -> the name of the host token that pushed it."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / PUSHED_FILE
        self._pushers: dict[str, str] = {}
        self._offset = 0
        self._ino = 0
        self._lock = threading.Lock()

    def add(self, shas: Iterable[str], token_id: int, token_name: str) -> None:
        name = " ".join(token_name.split()) or f"token {token_id}"
        data = "".join(f"{s} {token_id} {name}\n" for s in shas)
        if data:
            append_line(self.path, data.encode(), sync=True)

    def pushers(self, shas: Iterable[str]) -> dict[str, str]:
        """The pusher's name for each of these commits that arrived by a push."""
        known = self._read()
        return {s: known[s] for s in shas if s in known}

    def _read(self) -> dict[str, str]:
        with self._lock:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                self._pushers, self._offset, self._ino = {}, 0, 0
                return self._pushers
            if st.st_ino != self._ino or st.st_size < self._offset:
                self._pushers, self._offset, self._ino = {}, 0, st.st_ino
            if st.st_size > self._offset:
                with open(self.path, "rb") as fh:
                    fh.seek(self._offset)
                    data = fh.read()
                cut = data.rfind(b"\n") + 1  # a line being appended right now waits
                for line in data[:cut].decode("utf-8", "replace").splitlines():
                    sha, _, rest = line.partition(" ")
                    if len(sha) == 40:
                        self._pushers[sha] = rest.partition(" ")[2]
                self._offset += cut
            return self._pushers


_logs: dict[Path, PushedLog] = {}


def pushed_by(state_dir: Path, shas: Iterable[str]) -> dict[str, str]:
    """Which of these commits arrived by a push, and who pushed each (one log per clone)."""
    log = _logs.get(state_dir)
    if log is None:
        log = _logs.setdefault(state_dir, PushedLog(state_dir))
    return log.pushers(shas)
