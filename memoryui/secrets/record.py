"""The flagged record: path -> findings in the current text, kept in `.git/memoryui/secrets.json`.

Updated on each write that changes a file (under its own lock across processes; re-scanning
only when the file was flagged or the write added a secret), so the overview can say "N
files contain secrets" without scanning the workspace. `rebuild` scans every file once (a
workspace that has no record yet, `manage.py scan_secrets`).
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from .allow import read_json, write_json
from .detector import Finding


class FlaggedRecord:
    def __init__(self, path: Path, file_lock: AbstractContextManager | None = None):
        self.path = path
        self._lock = threading.Lock()
        self._file_lock = file_lock or nullcontext()  # read-change-save across processes
        self._data: dict[str, list[Finding]] | None = None
        self._stamp: tuple[int, int, int] | None = None

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _load(self) -> dict[str, list[Finding]]:
        """The record, re-read when another process (a gunicorn worker) replaced the file."""
        stamp = self._file_stamp()
        if self._data is None or stamp != self._stamp:
            self._stamp = stamp
            raw = read_json(self.path, {})
            data: dict[str, list[Finding]] = {}
            if isinstance(raw, dict):
                for p, items in raw.items():
                    try:
                        data[str(p)] = [Finding.from_dict(d) for d in items]
                    except (KeyError, TypeError, ValueError):
                        continue
            self._data = data
        return self._data

    def all(self) -> dict[str, list[Finding]]:
        with self._lock:
            return dict(self._load())

    def get(self, path: str) -> list[Finding]:
        with self._lock:
            return list(self._load().get(path, []))

    def has(self, path: str) -> bool:
        with self._lock:
            return path in self._load()

    def count(self) -> int:
        with self._lock:
            return len(self._load())

    def set(self, path: str, findings: list[Finding]) -> None:
        """Record a file's findings (none: the file is clean); saved only when it changed."""
        with self._lock, self._file_lock:
            data = self._load()
            if data.get(path, []) == findings:
                return
            if findings:
                data[path] = list(findings)
            else:
                data.pop(path, None)
            self._save(data)

    def replace(self, data: dict[str, list[Finding]]) -> None:
        with self._lock, self._file_lock:
            self._data = {p: list(f) for p, f in data.items() if f}
            self._save(self._data)

    def _save(self, data: dict[str, list[Finding]]) -> None:
        """Callers hold `_file_lock` (one writer across processes)."""
        write_json(self.path, {p: [f.as_dict() for f in items] for p, items in data.items()})
        self._stamp = self._file_stamp()
