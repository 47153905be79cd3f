"""What sync remembers between rounds, shared by every process of one clone.

`.git/memoryui/sync.json` (replaced atomically under `sync-state.lock`) holds the times of the
last fetch, push and round, the last error (masked), the branch, the open conflicts and
the newest entries left out of the remote's commits (refuse.py).
`.git/memoryui/sync-arrived` lists, one per line, every commit that arrived from the remote
(appended after each integration), so history and activity can mark them cheaply.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_write
from ..journaled import append_line
from ..locks import ProcessLock

STATE_FILE = "sync.json"
ARRIVED_FILE = "sync-arrived"
REFUSED_KEPT = 50  # the newest entries left out, for the Sync page


@dataclass
class SyncConflict:
    """A file both sides changed that could not merge: ours is kept until a curator decides."""

    path: str
    base: str | None  # blob shas; None where the file is absent on that side
    ours: str | None
    theirs: str | None
    theirs_commit: str  # the newest remote commit that changed it
    since: float  # when it was first detected


@dataclass
class RefusedEntry:
    """An entry of a remote commit memoryui left out of its tree (never checked out)."""

    path: str
    reason: str
    object: str  # the id of what was refused
    commit: str  # the remote commit that brought it (the remote tip when git cannot say)
    at: float  # when it was left out


@dataclass
class State:
    branch: str | None = None
    remote: str = ""  # the masked URL the state belongs to
    last_fetch: float | None = None
    last_push: float | None = None
    last_round: float | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    remote_tip: str | None = None
    bootstrapped: str = ""  # the masked URL bootstrap last checked against
    conflicts: dict[str, SyncConflict] = field(default_factory=dict)
    refused: list[RefusedEntry] = field(default_factory=list)  # newest first

    def to_json(self) -> str:
        d = asdict(self)
        d["conflicts"] = {p: asdict(c) for p, c in self.conflicts.items()}
        return json.dumps(d, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> State:
        d: dict[str, Any] = json.loads(text)
        conflicts = {p: SyncConflict(**c) for p, c in (d.pop("conflicts", None) or {}).items()}
        refused = [RefusedEntry(**r) for r in (d.pop("refused", None) or [])]
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known, conflicts=conflicts, refused=refused)

    def add_refused(self, entries: list[RefusedEntry]) -> None:
        """Record entries left out, newest first; one record per path and object."""
        seen = {(e.path, e.object) for e in entries}
        self.refused = [*entries, *(e for e in self.refused if (e.path, e.object) not in seen)]
        del self.refused[REFUSED_KEPT:]


class StateFile:
    """Read-modify-write of the state, safe across threads and processes."""

    def __init__(self, state_dir: Path):
        self.path = state_dir / STATE_FILE
        self.lock = ProcessLock(state_dir / "sync-state.lock")

    def read(self) -> State:
        try:
            return State.from_json(self.path.read_text())
        except FileNotFoundError:
            return State()
        except (ValueError, TypeError, KeyError):
            return State()  # a damaged file is rebuilt by the next round

    def stamp(self) -> tuple[int, int, int]:
        """Changes whenever the file is replaced (for caches)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return (0, 0, 0)
        return (st.st_mtime_ns, st.st_ino, st.st_size)

    def update(self, fn: Callable[[State], None]) -> State:
        with self.lock:
            state = self.read()
            fn(state)
            atomic_write(self.path, state.to_json().encode())
            return state


class ArrivedLog:
    """The append-only list of commits that came from the remote, read incrementally."""

    def __init__(self, state_dir: Path):
        self.path = state_dir / ARRIVED_FILE
        self._shas: set[str] = set()
        self._offset = 0
        self._ino = 0
        self._lock = threading.Lock()

    def add(self, shas: Iterable[str]) -> None:
        data = "".join(f"{s}\n" for s in shas)
        if data:
            append_line(self.path, data.encode())

    def all(self) -> set[str]:
        with self._lock:
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                self._shas, self._offset, self._ino = set(), 0, 0
                return self._shas
            if st.st_ino != self._ino or st.st_size < self._offset:
                self._shas, self._offset, self._ino = set(), 0, st.st_ino
            if st.st_size > self._offset:
                with open(self.path, "rb") as fh:
                    fh.seek(self._offset)
                    data = fh.read()
                cut = data.rfind(b"\n") + 1  # a line being appended right now waits
                self._shas.update(x for x in data[:cut].decode().split("\n") if len(x) == 40)
                self._offset += cut
            return self._shas
